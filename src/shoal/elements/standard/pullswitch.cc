// PullSwitch: pulls from one input, settable at run time. When every input
// has an empty-notifier upstream, it has one too, active while the chosen
// input's is, so the task pulling from it sleeps while that input is empty
// (and a graph whose queues drain ends).
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
  PacketBatch* pull(int, uint32_t max) override {
    PacketBatch* b = in_ < 0 ? nullptr : input_pull(int(in_), max);
    if ((!b || b->empty()) && resolve() && (in_ < 0 || !ups_[size_t(in_)]->active)) n_.sleep();
    return b;
  }
  Notifier* notifier() override { return resolve() ? &n_ : nullptr; }
  // An input's notifier woke (perhaps not the chosen one's: the puller then
  // finds nothing and sleeps again).
  void wake_task() override { n_.wake(); }
  void add_handlers() override {
    add_read_handler("switch", [this] { return std::to_string(in_); });
    add_write_handler("switch", [this](const std::string& v) {
      int64_t i;
      if (!parse_int(trim(v), i) || i < -1 || i >= ninputs()) throw std::runtime_error("input out of range");
      in_ = i;
      if (resolve()) n_.wake();  // the new input may have packets
    });
  }

 private:
  // Finds the inputs' notifiers once (the graph is fixed by then); false
  // when some input has none, so the puller polls.
  bool resolve() {
    if (resolved_) return combined_;
    resolved_ = true;
    return combined_ = listen_to_inputs(this, ups_, n_);
  }
  int64_t in_ = 0;
  bool resolved_ = false, combined_ = false;
  std::vector<Notifier*> ups_;
  Notifier n_;
};
SHOAL_ELEMENT(PullSwitch, .name = "PullSwitch", .ports = "-/1", .processing = "l/l",
              .summary = "pulls from one input, settable at run time",
              .description =
                  "Click's PullSwitch: a pull on the output pulls from input INPUT; -1 gives nothing. "
                  "The 'switch' handler changes the input while running. When every input has an "
                  "empty-notifier upstream (a queue), PullSwitch has one too, active while the chosen input's "
                  "is: the task pulling from it sleeps while that input is empty, as Click's.",
              .args = {{"INPUT", "integer", "the input, or -1 (default 0)"}},
              .handlers = {{"switch", "rw", "the current input"}},
              .example = "a :: Queue -> [0]ps :: PullSwitch(0); b :: Queue -> [1]ps; ps -> Unqueue -> out;");

}  // namespace shoal
