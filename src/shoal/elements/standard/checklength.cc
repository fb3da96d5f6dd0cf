// CheckLength: splits off packets longer than a length.

#include "shoal/elements/common.hh"

namespace shoal {

class CheckLength : public PacketElement<CheckLength> {
 public:
  void configure(Args& a) override {
    a.read_mp("LENGTH", n_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("too-long"); }
  int process(Packet* p) {
    if (p->length() <= n_) return 0;
    return noutputs() > 1 ? 1 : drop_code(r_);
  }

 private:
  uint32_t n_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(
    CheckLength, .name = "CheckLength", .ports = "1/1-2", .processing = "a/ah",
    .summary = "splits off packets longer than a length",
    .description =
        "Packets of at most LENGTH bytes leave on output 0; longer ones on output 1 if it "
        "exists, else they are dropped ('too-long').",
    .args = {{"LENGTH", "unsigned", "the largest length for output 0"}},
    .example =
        "rt6[1] -> cl :: CheckLength(1500) -> out; cl[1] -> ICMP6Error(fd00::1, packettoobig, MTU 1500) -> rt6;");

}  // namespace shoal
