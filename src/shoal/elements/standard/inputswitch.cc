// InputSwitch: passes packets from one input, chosen by a handler; drops the rest.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class InputSwitch : public Element {
 public:
  void configure(Args& a) override {
    a.read_p("INPUT", in_);
    a.complete();
    if (in_ < -1 || in_ >= ninputs()) a.fail(fmt::format("INPUT {} out of range (-1 to {})", in_, ninputs() - 1));
  }
  void initialize() override { r_ = add_drop_reason("switched-off"); }
  void push(int port, PacketBatch* b) override {
    if (port == in_)
      output_push(0, b);
    else
      drop_all(b, r_);
  }
  void add_handlers() override {
    add_read_handler("switch", [this] { return std::to_string(in_); });
    add_write_handler("switch", [this](const std::string& v) {
      int64_t k = 0;
      if (!parse_int(trim(v), k) || k < -1 || k >= ninputs())
        throw std::runtime_error(fmt::format("expected an input from -1 to {}", ninputs() - 1));
      in_ = k;
    });
  }

 private:
  int64_t in_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(InputSwitch, .name = "InputSwitch", .ports = "-/1", .processing = "h/h",
              .summary = "passes packets from one input, chosen by a handler, and drops the others",
              .description =
                  "Click's InputSwitch: packets arriving on input INPUT leave on output 0; packets on "
                  "any other input are dropped ('switched-off'). INPUT -1 drops everything. The "
                  "'switch' handler reads and changes the input.",
              .args = {{"INPUT", "integer", "the input that passes (default 0), or -1"}},
              .handlers = {{"switch", "rw", "the input that passes"}},
              .example = "a -> [0] s :: InputSwitch(0); b -> [1] s; s -> Discard;");

}  // namespace shoal
