// PullSwitch: pulls from one input, settable at run time.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class PullSwitch : public Element {
 public:
  void configure(Args& a) override {
    a.read_p("INPUT", in_);
    a.complete();
    if (in_ < -1 || in_ >= ninputs()) a.fail(fmt::format("INPUT {} out of range (-1 to {})", in_, ninputs() - 1));
  }
  PacketBatch* pull(int, uint32_t max) override { return in_ < 0 ? nullptr : input_pull(int(in_), max); }
  void add_handlers() override {
    add_read_handler("switch", [this] { return std::to_string(in_); });
    add_write_handler("switch", [this](const std::string& v) {
      int64_t i;
      if (!parse_int(trim(v), i) || i < -1 || i >= ninputs()) throw std::runtime_error("input out of range");
      in_ = i;
    });
  }

 private:
  int64_t in_ = 0;
};
SHOAL_ELEMENT(PullSwitch, .name = "PullSwitch", .ports = "-/1", .processing = "l/l",
              .summary = "pulls from one input, settable at run time",
              .description =
                  "Click's PullSwitch: a pull on the output pulls from input INPUT; -1 gives nothing. "
                  "The 'switch' handler changes the input while running.",
              .args = {{"INPUT", "integer", "the input, or -1 (default 0)"}},
              .handlers = {{"switch", "rw", "the current input"}},
              .example = "a :: Queue -> [0]ps :: PullSwitch(0); b :: Queue -> [1]ps; ps -> Unqueue -> out;");

}  // namespace shoal
