// QuitWatcher: Click's QuitWatcher, which stops the router once one of the
// elements it names is no longer scheduled (checked every 10 ms).
#include <fmt/format.h>

#include <stdexcept>
#include <vector>

#include "shoal/core/runtime.hh"
#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class QuitWatcher : public Element {
 public:
  void configure(Args& a) override {
    Args::note_keyword("ELEMENT");
    for (ArgItem& it : a.items())
      if (!trim(it.text).empty()) names_.emplace_back(trim(it.text));
    a.items().clear();
    a.complete();
    if (names_.empty()) a.fail("name at least one element to watch");
  }
  void initialize() override {
    for (const std::string& n : names_) {
      Element* e = find_element_from(*this, n);
      if (!e) throw std::runtime_error(fmt::format("no element named '{}'", n));
      watched_.push_back(e);
    }
    timer_.owner = this;
    timer_.background = true;  // (watching does not keep a finished run going)
    worker().schedule(timer_, worker().now_ns() + kPeriodNs);
  }
  // Each watched element's home worker watches it (its other copies may
  // never run a task: a source's packets are made on one worker); home
  // workers are known once every element has initialized.
  void run_timer(Timer&) override {
    bool any = false;
    for (Element* e : watched_) {
      if (e->home_thread() != worker().id()) continue;
      any = true;
      if (e->find_handler("scheduled") == nullptr) {
        run_error(fmt::format("'{}' has no task to watch (no 'scheduled' handler)", e->name()));
        return;
      }
      if (!e->task_active()) {
        worker().runtime().stop_event();
        return;
      }
    }
    if (any) worker().schedule(timer_, worker().now_ns() + kPeriodNs);
  }

 private:
  static constexpr uint64_t kPeriodNs = 10'000'000;
  std::vector<std::string> names_;
  std::vector<Element*> watched_;
  Timer timer_;
};
SHOAL_ELEMENT(QuitWatcher, .name = "QuitWatcher", .ports = "0/0", .processing = "a/a",
              .summary = "stops the router once one of some elements is no longer scheduled",
              .description =
                  "Every 10 ms, checks whether each ELEMENT's task is still scheduled (its 'scheduled' handler), on "
                  "the worker that runs it; when one is not, stops the router (as Script's stop: a DriverManager "
                  "decides what follows). Naming an element that has no task is a run-time error, reported once; "
                  "the watch then ends.",
              .args = {{"ELEMENT", "element name", "an element to watch (one per argument)"}},
              .example =
                  "f :: FromDump(trace.pcap) -> ... -> q :: Queue -> u :: Unqueue -> Discard;\n"
                  "QuitWatcher(u);");

}  // namespace shoal
