// VLANDecap: removes an 802.1Q tag from Ethernet frames, as Click's.
#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"

#include <cstring>

namespace shoal {

class VLANDecap : public PacketElement<VLANDecap> {
 public:
  void configure(Args& a) override {
    uint32_t type = 0x8100;
    a.read_p("ANNO", anno_).read("ETHERTYPE", type);
    a.complete();
    if (type > 0xffff) a.fail("ETHERTYPE must fit 16 bits");
    type_ = uint16_t(type);
  }
  void initialize() override { r_short_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    if (p->length() < 14) return drop_code(r_short_);
    uint16_t tci = 0;
    uint8_t* h = p->data();
    if (p->length() >= 18 && k::load_be16(h + 12) == type_) {
      tci = k::load_be16(h + 14);
      std::memmove(h + 4, h, 12);
      p->pull(4);
    }
    p->set_mac_header(0);
    if (anno_) p->anno().vlan_tci = tci;
    return 0;
  }

 private:
  uint16_t type_ = 0x8100, r_short_ = 0;
  bool anno_ = true;
};
SHOAL_ELEMENT(VLANDecap, .name = "VLANDecap", .ports = "1/1", .processing = "a/a",
              .summary = "removes an 802.1Q VLAN tag from Ethernet frames",
              .description =
                  "When the frame's type is ETHERTYPE (default 0x8100), removes the 4-byte tag and, with ANNO "
                  "true (the default), stores its tag control information in the VLAN annotation; untagged "
                  "frames pass unchanged with annotation 0. Frames shorter than an Ethernet header are "
                  "dropped ('too-short').",
              .args = {{"ANNO", "boolean", "set the VLAN annotation (default true)"},
                       {"ETHERTYPE", "unsigned", "tag protocol removed (default 0x8100)"}},
              .handlers = {}, .example = "FromDevice(eth0) -> VLANDecap -> Classifier(12/0800, -) ...");

}  // namespace shoal
