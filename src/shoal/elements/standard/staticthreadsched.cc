// StaticThreadSched: Click's static placement of elements on threads. Each
// argument is "ELEMENT THREAD": the element (or every element of the
// compound of that name) does its single-copy work (a source's packets, a
// Script's instructions) on that worker. Shoal runs a copy of the graph on
// every worker, so elements that work on the packets they are given (queues,
// pulls) run on every worker regardless; the placement chooses where the
// packets are made. Later StaticThreadSched elements override earlier ones.
#include <fmt/format.h>

#include "shoal/core/graph.hh"
#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class StaticThreadSched : public Element {
 public:
  void configure(Args& a) override {
    const int n = worker().nworkers();
    const std::string scope = name_scope(name());
    for (ArgItem& it : a.items()) {
      if (it.text.empty()) continue;
      auto words = split_words(it.text);
      int64_t t = 0;
      if (words.size() != 2 || !parse_int(words[1], t))
        a.fail(it, fmt::format("expected 'ELEMENT THREAD', got '{}'", it.text));
      int thread = int(std::clamp<int64_t>(t, -2, INT32_MAX));
      if (thread < -1 || thread >= n) {
        if (worker().id() == 0)
          fmt::print(stderr, "{}: warning: thread preference {} out of range (threads 0 to {})\n", name(), t, n - 1);
        thread = thread < 0 ? -1 : 0;
      }
      if (!place(scope, std::string(words[0]), thread))
        a.fail(it, fmt::format("'{}' does not name an element", words[0]));
    }
    a.items().clear();
    a.complete();
  }

 private:
  // The element NAME as seen from this element's compound (innermost scope
  // first), else every element inside the compound NAME.
  bool place(std::string scope, const std::string& ename, int thread) {
    for (;;) {
      if (Element* e = router().find(scope + ename)) {
        e->set_home_thread(thread);
        return true;
      }
      if (scope.empty()) break;
      scope.pop_back();
      size_t slash = scope.rfind('/');
      scope = slash == std::string::npos ? "" : scope.substr(0, slash + 1);
    }
    const std::string prefix = name_scope(name()) + ename + "/";
    bool any = false;
    for (size_t i = 0; i < router().size(); ++i)
      if (Element* e = router().element(i); e->name().starts_with(prefix)) e->set_home_thread(thread), any = true;
    return any;
  }
};
SHOAL_ELEMENT(StaticThreadSched, .name = "StaticThreadSched", .ports = "0/0", .processing = "a/a",
              .summary = "places elements' work on chosen worker threads",
              .description =
                  "Each argument is 'ELEMENT THREAD': the element, or every element inside the compound of that "
                  "name, does its single-copy work on worker THREAD (a source makes its packets there, a Script "
                  "runs there); its 'home_thread' handler says where. Names are looked up from the compound the "
                  "StaticThreadSched is in, outwards. Shoal runs a copy of the graph on every worker, so elements "
                  "that process the packets they are given run on every worker; the placement decides where "
                  "packets are made. A thread out of range is a warning and means 0 (-1: no worker). Later "
                  "StaticThreadSched elements override earlier ones. Unplaced sources run on the worker their "
                  "flow hashes to (under `shoal click`, on worker 0, as Click places them).",
              .args = {{"ELEMENT THREAD", "element name and integer", "one placement per argument"}}, .handlers = {},
              .example = "StaticThreadSched(src0 0, src1 1);  // shoal run --threads 2");

}  // namespace shoal
