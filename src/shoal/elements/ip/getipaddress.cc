// GetIPAddress (SetIPAddress): sets the destination IP annotation from packet
// data.

#include <cstring>
#include "shoal/elements/common.hh"

namespace shoal {

// ---------------------------------------------------------------- GetIPAddress
class GetIPAddress : public PacketElement<GetIPAddress> {
 public:
  void configure(Args& a) override {
    std::string what, ip;
    a.read_p("OFFSET", what).read("IP", ip);  // Click's GetIPAddress(IP src|dst) form too
    a.complete();
    if (!ip.empty()) {
      if (!what.empty()) a.fail("OFFSET and IP conflict");
      if (ip != "src" && ip != "dst") a.fail("IP must be 'src' or 'dst'");
      what = ip;
    }
    if (what.empty()) a.fail("missing mandatory OFFSET argument");
    if (what == "src" || what == "dst") {
      net_ = true;
      off_ = what == "src" ? 12 : 16;
    } else {
      uint64_t v;
      if (!parse_uint(what, v) || v > 65535) a.fail("OFFSET must be a byte offset, 'src' or 'dst'");
      off_ = uint32_t(v);
    }
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    const uint8_t* base = p->data();
    uint64_t end = off_ + 4;
    if (net_) {
      if (!p->has_network_header() || p->network_header_offset() < 0) return drop_code(r_);
      base = p->network_header();
      end += uint64_t(p->network_header_offset());
    }
    if (end > p->length()) return drop_code(r_);
    std::memcpy(p->anno().dst_ip, base + off_, 4);
    return 0;
  }

 private:
  uint32_t off_ = 16;
  bool net_ = false;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(GetIPAddress, .name = "GetIPAddress", .ports = "1/1", .processing = "a/a",
              .summary = "sets the destination IP annotation from packet data",
              .description =
                  "Copies 4 bytes at OFFSET of the packet into the DST_IP annotation. OFFSET 'src' or "
                  "'dst' reads the source or destination of the IP header (network header annotation). "
                  "Packets too short: dropped ('too-short').",
              .args = {{"OFFSET", "unsigned | src | dst", "where the address is (16: an IP header's destination)"},
                       {"IP", "src | dst", "the IP header's source or destination (instead of OFFSET)"}},
              .example = "Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt :: DirectIPLookup(...);");

// ---------------------------------------------------------------- SetIPAddress
class SetIPAddress : public PacketElement<SetIPAddress> {
 public:
  void configure(Args& a) override {
    IPv4Addr x;
    a.read_mp("IPADDR", x);
    a.complete();
    std::memcpy(addr_, x.b.data(), 4);
  }
  void process(Packet* p) { std::memcpy(p->anno().dst_ip, addr_, 4); }

 private:
  uint8_t addr_[4] = {};
};
SHOAL_ELEMENT(SetIPAddress, .name = "SetIPAddress", .ports = "1/1", .processing = "a/a",
              .summary = "sets the destination IP annotation",
              .description = "Sets every packet's DST_IP annotation to IPADDR (the next hop ARPQuerier resolves).",
              .args = {{"IPADDR", "IPv4 address", "the address"}},
              .example = "... -> SetIPAddress(10.0.0.1) -> arpq :: ARPQuerier(10.0.0.2, eth0);");

}  // namespace shoal
