// StaticPullSwitch: pulls from one fixed input.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class StaticPullSwitch : public Element {
 public:
  void configure(Args& a) override {
    a.read_mp("INPUT", in_);
    a.complete();
    if (in_ >= ninputs()) a.fail(fmt::format("INPUT {} out of range (below 0, or 0 to {})", in_, ninputs() - 1));
  }
  PacketBatch* pull(int, uint32_t max) override { return in_ < 0 ? nullptr : input_pull(int(in_), max); }
  // Its one input's empty notifier (none: asleep for ever), so the puller
  // sleeps while that input is empty.
  Notifier* notifier() override {
    if (in_ < 0) return never_.sleep(), &never_;
    return upstream_notifier(this, int(in_));
  }

 private:
  int64_t in_ = 0;
  Notifier never_;
};
SHOAL_ELEMENT(StaticPullSwitch, .name = "StaticPullSwitch", .ports = "-/1", .processing = "l/l",
              .summary = "pulls from one fixed input",
              .description =
                  "Click's StaticPullSwitch: a pull on the output pulls from input INPUT; a negative "
                  "INPUT gives nothing. Unlike PullSwitch, the input cannot change while running, so the element "
                  "pulling from it sleeps while that input is empty (its notifier).",
              .args = {{"INPUT", "integer", "the input, or negative for none, mandatory"}},
              .example = "a :: Queue -> [0]s :: StaticPullSwitch(1); b :: Queue -> [1]s; s -> Unqueue -> out;");

}  // namespace shoal
