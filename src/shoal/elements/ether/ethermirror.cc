// EtherMirror: swaps a packet's Ethernet source and destination addresses.
#include <cstring>

#include "shoal/elements/common.hh"

namespace shoal {

class EtherMirror : public PacketElement<EtherMirror> {
 public:
  void configure(Args& a) override { a.complete(); }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    if (p->length() < 14) return drop_code(r_);
    uint8_t t[6];
    uint8_t* h = p->data();
    std::memcpy(t, h, 6);
    std::memcpy(h, h + 6, 6);
    std::memcpy(h + 6, t, 6);
    return 0;
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(
    EtherMirror, .name = "EtherMirror", .ports = "1/1", .processing = "a/a",
    .summary = "swaps Ethernet source and destination",
    .description =
        "Click's EtherMirror: exchanges the destination and source addresses of the Ethernet header "
        "at the start of each packet, so a reply built from a request goes back to its sender. A "
        "packet shorter than an Ethernet header is dropped ('too-short').",
    .args = {}, .handlers = {},
    .example = "c[1] -> Strip(14) -> CheckIPHeader -> ICMPPingResponder -> Unstrip(14) -> EtherMirror -> out;");

}  // namespace shoal
