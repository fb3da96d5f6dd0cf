// StripEtherVLANHeader: removes an Ethernet header, tagged or not, keeping
// the VLAN in the annotation, as Click's.
#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class StripEtherVLANHeader : public PacketElement<StripEtherVLANHeader> {
 public:
  void configure(Args& a) override {
    a.read_p("NATIVE_VLAN", native_);
    a.complete();
    if (native_ > 0xfff) a.fail("bad NATIVE_VLAN");
  }
  void initialize() override {
    r_short_ = add_drop_reason("too-short");
    r_untagged_ = add_drop_reason("not-tagged");
  }
  // An 802.1Q frame loses its 18 bytes and gives its TCI to the annotation;
  // another loses 14 and gets NATIVE_VLAN, or (NATIVE_VLAN negative) leaves
  // on output 1.
  int process(Packet* p) {
    if (p->length() < 14) return drop_code(r_short_);
    if (k::load_be16(p->data() + 12) == 0x8100) {
      if (p->length() < 18) return drop_code(r_short_);
      p->anno().vlan_tci = k::load_be16(p->data() + 14);
      p->pull(18);
    } else if (native_ >= 0) {
      p->anno().vlan_tci = uint16_t(native_);
      p->pull(14);
    } else {
      return noutputs() > 1 ? 1 : drop_code(r_untagged_);
    }
    p->set_network_header(0);
    return 0;
  }

 private:
  int64_t native_ = 0;
  uint16_t r_short_ = 0, r_untagged_ = 0;
};
SHOAL_ELEMENT(StripEtherVLANHeader, .name = "StripEtherVLANHeader", .ports = "1/1-2", .processing = "a/ah",
              .summary = "strips an Ethernet header, 802.1Q or not, keeping the VLAN in the annotation",
              .description =
                  "Click's StripEtherVLANHeader. A frame of type 0x8100 loses its 18-byte 802.1Q header and its "
                  "tag control information goes to the VLAN annotation; another loses its 14-byte Ethernet header "
                  "and gets NATIVE_VLAN (default 0) as its annotation, or, when NATIVE_VLAN is negative, leaves "
                  "unchanged on output 1 (dropped, 'not-tagged', when there is none). The network header "
                  "annotation is set where the header ended. Frames too short for their header are dropped "
                  "('too-short').",
              .args = {{"NATIVE_VLAN", "integer", "the annotation for untagged frames; negative: reject them"}},
              .handlers = {},
              .example = "FromDevice(eth0) -> s :: StripEtherVLANHeader(-1) -> CheckIPHeader -> ...; s[1] -> Discard;");

}  // namespace shoal
