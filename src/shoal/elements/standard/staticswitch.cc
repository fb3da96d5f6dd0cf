// StaticSwitch: every packet to the output chosen at configuration.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class StaticSwitch : public PacketElement<StaticSwitch> {
 public:
  void configure(Args& a) override {
    a.read_mp("OUTPUT", out_);
    a.complete();
    if (out_ < -1 || out_ >= noutputs()) a.fail(fmt::format("OUTPUT {} out of range (-1 to {})", out_, noutputs() - 1));
  }
  void initialize() override { r_ = add_drop_reason("switched-off"); }
  int process(Packet*) { return out_ < 0 ? drop_code(r_) : int(out_); }

 private:
  int64_t out_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(StaticSwitch, .name = "StaticSwitch", .ports = "1/-", .processing = "h/h",
              .summary = "sends every packet to one output, fixed at configuration",
              .description =
                  "Click's StaticSwitch: packets leave on output OUTPUT; -1 drops them "
                  "('switched-off'). Unlike Switch it has no handler to change the output.",
              .args = {{"OUTPUT", "integer", "the output, or -1"}}, .handlers = {},
              .example = "s :: StaticSwitch(1); s[0] -> a; s[1] -> b;");

}  // namespace shoal
