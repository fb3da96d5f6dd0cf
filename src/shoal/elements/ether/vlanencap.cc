// VLANEncap: adds an 802.1Q (or 802.1ad) tag to Ethernet frames, as Click's.
#include <fmt/format.h>

#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/elements/ether/vlanargs.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class VLANEncap : public PacketElement<VLANEncap> {
 public:
  void configure(Args& a) override {
    uint32_t type = 0x8100;
    VlanArgs v;
    v.read(a);
    a.read("ETHERTYPE", type);
    a.complete();
    v.finish(a);
    if (type > 0xffff) a.fail("ETHERTYPE must fit 16 bits");
    tci_ = v.tci, native_ = v.native, use_anno_ = v.use_anno;
    type_ = uint16_t(type);
  }
  void initialize() override {
    r_short_ = add_drop_reason("too-short");
    r_room_ = add_drop_reason("no-headroom");
  }
  int process(Packet* p) {
    uint16_t tci = use_anno_ ? p->anno().vlan_tci : tci_;
    if (p->length() < 14) return drop_code(r_short_);
    if (int(tci & 0xfff) == native_) {
      p->set_mac_header(0);
      return 0;
    }
    uint8_t* h = p->push(4);
    if (!h) return drop_code(r_room_);
    std::memmove(h, h + 4, 12);
    k::store_be16(h + 12, type_);
    k::store_be16(h + 14, tci);
    p->set_mac_header(0);
    return 0;
  }

 private:
  uint16_t tci_ = 0, type_ = 0x8100, r_short_ = 0, r_room_ = 0;
  int native_ = 0;
  bool use_anno_ = false;
};
SHOAL_ELEMENT(VLANEncap, .name = "VLANEncap", .ports = "1/1", .processing = "a/a",
              .summary = "adds an 802.1Q VLAN tag to Ethernet frames",
              .description =
                  "Inserts a 4-byte tag (ETHERTYPE, then the tag control information) after the Ethernet "
                  "addresses. The TCI is VLAN_TCI, or VLAN_ID with VLAN_PCP in its top three bits, or, with "
                  "VLAN_TCI ANNO, each packet's VLAN annotation (set by VLANDecap or SetVLANAnno). Frames whose "
                  "VLAN ID is NATIVE_VLAN (default 0) go out untagged; NATIVE_VLAN -1 tags them all. Frames "
                  "shorter than an Ethernet header are dropped ('too-short'), and so are those without 4 bytes "
                  "of headroom ('no-headroom').",
              .args = {{"VLAN_TCI", "ANNO or 0-65535", "the tag control information"},
                       {"VLAN_PCP", "0-7", "priority code point (default 0)"},
                       {"VLAN_ID", "0-4095", "VLAN ID, when VLAN_TCI is not given"},
                       {"NATIVE_VLAN", "-1-4095", "VLAN sent untagged (default 0)"},
                       {"ETHERTYPE", "unsigned", "tag protocol (default 0x8100; 0x88a8 for 802.1ad)"}},
              .handlers = {}, .example = "... -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> VLANEncap(10) -> ...");

}  // namespace shoal
