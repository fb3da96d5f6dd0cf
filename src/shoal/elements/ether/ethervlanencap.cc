// EtherVLANEncap: puts packets behind an 802.1Q Ethernet header, as Click's.
#include <fmt/format.h>

#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/elements/ether/etherheader.hh"
#include "shoal/elements/ether/vlanargs.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class EtherVLANEncap : public PacketElement<EtherVLANEncap> {
 public:
  void configure(Args& a) override {
    uint32_t type = 0;
    VlanArgs v;
    a.read_mp("ETHERTYPE", type).read_mp("SRC", src_).read_mp("DST", dst_);
    v.read(a);
    a.complete();
    if (type > 0xffff) a.fail("ETHERTYPE must fit 16 bits");
    v.finish(a);
    tci_ = v.tci, native_ = v.native, use_anno_ = v.use_anno;
    type_ = uint16_t(type);
  }
  void initialize() override { r_room_ = add_drop_reason("no-headroom"); }
  // The VLAN ID NATIVE_VLAN goes out in a plain Ethernet header.
  int process(Packet* p) {
    uint16_t tci = use_anno_ ? p->anno().vlan_tci : tci_;
    if (int(tci & 0xfff) == native_) return push_ether_header(p, dst_, src_, type_) ? 0 : drop_code(r_room_);
    uint8_t* h = p->push(18);
    if (!h) return drop_code(r_room_);
    std::memcpy(h, dst_.b.data(), 6);
    std::memcpy(h + 6, src_.b.data(), 6);
    k::store_be16(h + 12, 0x8100);
    k::store_be16(h + 14, tci);
    k::store_be16(h + 16, type_);
    p->set_mac_header(0);
    return 0;
  }
  void add_handlers() override {
    add_read_handler("config", [this] {
      std::string s =
          fmt::format("{}, {}, {}", format_ether_click(src_.b.data()), format_ether_click(dst_.b.data()), type_);
      s += use_anno_ ? ", ANNO" : fmt::format(", VLAN_ID {}, VLAN_PCP {}", tci_ & 0xfff, tci_ >> 13);
      if (native_ != 0) s += fmt::format(", NATIVE_VLAN {}", native_);
      return s;
    });
    ether_handler("src", src_);
    ether_handler("dst", dst_);
    number_handler(
        "ethertype", 0xffff, [this] { return int64_t(type_); }, [this](int64_t v) { type_ = uint16_t(v); });
    add_read_handler("vlan_tci", [this] { return use_anno_ ? std::string("ANNO") : std::to_string(tci_); });
    add_write_handler("vlan_tci", [this](const std::string& v) {
      std::string_view t = trim(v);
      int64_t n;
      if (t == "ANNO") {
        use_anno_ = true;
        return;
      }
      if (!parse_int(t, n) || n < 0 || n > 0xffff) throw std::runtime_error("VLAN_TCI must be ANNO or 0-65535");
      tci_ = uint16_t(n), use_anno_ = false;
    });
    number_handler(
        "vlan_id", 0xfff, [this] { return int64_t(tci_ & 0xfff); },
        [this](int64_t v) { tci_ = uint16_t((tci_ & 0xf000) | v), use_anno_ = false; });
    number_handler(
        "vlan_pcp", 7, [this] { return int64_t(tci_ >> 13); },
        [this](int64_t v) { tci_ = uint16_t((tci_ & 0x1fff) | (v << 13)); });
    add_read_handler("native_vlan", [this] { return std::to_string(native_); });
    add_write_handler("native_vlan", [this](const std::string& v) {
      int64_t n;
      if (!parse_int(trim(v), n) || n < -1 || n > 0xfff) throw std::runtime_error("NATIVE_VLAN must be -1-4095");
      native_ = int(n);
    });
  }

 private:
  void ether_handler(const char* name, EtherAddr& e) {
    add_read_handler(name, [&e] { return format_ether_click(e.b.data()); });
    add_write_handler(name, [&e](const std::string& v) {
      EtherAddr x;
      if (!parse_ether(trim(v), x)) throw std::runtime_error("expected an Ethernet address");
      e = x;
    });
  }
  template <class Get, class Set>
  void number_handler(const char* name, int64_t max, Get get, Set set) {
    add_read_handler(name, [get] { return std::to_string(get()); });
    add_write_handler(name, [name, max, set](const std::string& v) {
      int64_t n;
      if (!parse_int(trim(v), n) || n < 0 || n > max) throw std::runtime_error(fmt::format("bad {}", name));
      set(n);
    });
  }
  EtherAddr src_, dst_;
  uint16_t type_ = 0, tci_ = 0, r_room_ = 0;
  int native_ = 0;
  bool use_anno_ = false;
};
SHOAL_ELEMENT(EtherVLANEncap, .name = "EtherVLANEncap", .ports = "1/1", .processing = "a/a",
              .summary = "puts packets behind an 802.1Q VLAN Ethernet header",
              .description =
                  "Click's EtherVLANEncap: pushes an 18-byte 802.1Q header (DST, SRC, type 0x8100, the tag control "
                  "information, then ETHERTYPE). The TCI is VLAN_TCI, or VLAN_ID with VLAN_PCP in its top three "
                  "bits, or, with VLAN_TCI ANNO, each packet's VLAN annotation. A packet whose VLAN ID is "
                  "NATIVE_VLAN (default 0; -1: none) gets a plain 14-byte Ethernet header instead. Packets "
                  "without the headroom are dropped ('no-headroom'). To tag frames that already have an Ethernet "
                  "header, use VLANEncap.",
              .args = {{"ETHERTYPE", "unsigned", "the encapsulated protocol, mandatory"},
                       {"SRC", "Ethernet address", "mandatory"},
                       {"DST", "Ethernet address", "mandatory"},
                       {"VLAN_TCI", "ANNO or 0-65535", "the tag control information"},
                       {"VLAN_PCP", "0-7", "priority code point (default 0)"},
                       {"VLAN_ID", "0-4095", "VLAN ID, when VLAN_TCI is not given"},
                       {"NATIVE_VLAN", "-1-4095", "VLAN sent untagged (default 0)"}},
              .handlers = {{"config", "r", "the settings, as Click prints them"},
                           {"src", "rw", "SRC"},
                           {"dst", "rw", "DST"},
                           {"ethertype", "rw", "ETHERTYPE"},
                           {"vlan_tci", "rw", "the TCI (or ANNO)"},
                           {"vlan_id", "rw", "the VLAN ID"},
                           {"vlan_pcp", "rw", "the priority code point"},
                           {"native_vlan", "rw", "NATIVE_VLAN"}},
              .example = "... -> EtherVLANEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2, VLAN_ID 10) -> ToDump(out.pcap);");

}  // namespace shoal
