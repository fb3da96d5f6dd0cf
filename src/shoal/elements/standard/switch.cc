// Switch (RoundRobinSwitch): sends all packets to one output, settable at run
// time.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

// ---------------------------------------------------------------- Switch
class Switch : public PacketElement<Switch> {
 public:
  void configure(Args& a) override {
    a.read_p("OUTPUT", out_);
    a.complete();
  }
  void initialize() override {
    r_ = add_drop_reason("switched-off");
    if (out_ >= noutputs())
      throw std::runtime_error(fmt::format("OUTPUT {} out of range (0 to {})", out_, noutputs() - 1));
  }
  int process(Packet*) { return out_ < 0 ? drop_code(r_) : out_; }
  void add_handlers() override {
    add_read_handler("switch", [this] { return std::to_string(out_); });
    add_write_handler("switch", [this](const std::string& v) {
      int64_t o;
      if (!parse_int(trim(v), o) || o < -1 || o >= noutputs()) throw std::runtime_error("output out of range");
      out_ = int(o);
    });
  }

 private:
  int out_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Switch, .name = "Switch", .ports = "1/-", .processing = "h/h",
              .summary = "sends all packets to one output, settable at run time",
              .description =
                  "Every packet leaves on output OUTPUT; -1 drops them (reason 'switched-off'). The "
                  "'switch' handler changes the output while running.",
              .args = {{"OUTPUT", "integer", "the output, or -1 (default 0)"}},
              .handlers = {{"switch", "rw", "the current output"}},
              .example = "s :: Switch(0); s[0] -> a; s[1] -> b;  // write s.switch 1");

// ---------------------------------------------------------------- RoundRobinSwitch
class RoundRobinSwitch : public PacketElement<RoundRobinSwitch> {
 public:
  int process(Packet*) {
    int o = next_;
    if (++next_ >= noutputs()) next_ = 0;
    return o;
  }

 private:
  int next_ = 0;
};
SHOAL_ELEMENT(RoundRobinSwitch, .name = "RoundRobinSwitch", .ports = "1/1-", .processing = "h/h",
              .summary = "sends packets to its outputs in turn",
              .description = "Packet i leaves on output i mod the number of outputs (per worker).", .args = {},
              .handlers = {}, .example = "rr :: RoundRobinSwitch; rr[0] -> q0; rr[1] -> q1;");

}  // namespace shoal
