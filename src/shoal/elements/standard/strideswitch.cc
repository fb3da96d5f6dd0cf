// StrideSwitch: sends packets to its outputs in proportion to their tickets
// (stride scheduling), as Click's.
#include "shoal/elements/common.hh"
#include "shoal/elements/standard/stride.hh"

namespace shoal {

class StrideSwitch : public PacketElement<StrideSwitch> {
 public:
  void configure(Args& a) override { t_.configure(a, noutputs(), "output"); }
  void initialize() override { r_ = add_drop_reason("no-tickets"); }
  void add_handlers() override {
    t_.add_handlers(*this, [] {});
  }
  // Each packet to the output with the smallest pass, which then strides.
  int process(Packet*) {
    if (t_.by_pass().empty()) return drop_code(r_);
    const int o = t_.by_pass().front();
    t_.stride_first(1);
    return o;
  }

 private:
  StrideTickets t_;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(StrideSwitch, .name = "StrideSwitch", .ports = "1/1-", .processing = "h/h",
              .summary = "sends packets to outputs in proportion to their tickets",
              .description =
                  "Click's StrideSwitch: stride scheduling over the outputs. Output i holds TICKETS_i tickets (at "
                  "most 32768; 0 takes it out) and strides 65536/TICKETS_i each time it gets a packet; each packet "
                  "goes to the output with the smallest pass, so output i gets a share proportional to its tickets, "
                  "evenly spread. With no output holding tickets, packets are dropped ('no-tickets').",
              .args = {{"TICKETS...", "integer", "tickets of each output, one argument per output"}},
              .handlers = {{"ticketsN", "rw", "output N's tickets"}, {"config", "r", "every output's tickets"}},
              .example = "src -> s :: StrideSwitch(3, 1); s[0] -> a; s[1] -> b;");

}  // namespace shoal
