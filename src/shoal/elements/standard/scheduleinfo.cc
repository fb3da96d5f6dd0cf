// ScheduleInfo: Click's scheduling parameters. Each argument is "ELEMENT
// PARAM", a real number: ELEMENT's task gets PARAM times the default tickets
// (elements/standard: the worker runs a task with twice the tickets twice
// as often). A ScheduleInfo inside a compound names that compound's
// components; an outer one names a compound to scale every component's
// parameter, or a component by its full name to override it (Click's rules).
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "shoal/core/graph.hh"
#include "shoal/core/names.hh"
#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class ScheduleInfo : public Element {
 public:
  void configure(Args& a) override {
    for (ArgItem& it : a.items()) {
      if (trim(it.text).empty()) continue;
      auto words = split_words(it.text);
      double v = 0;
      if (words.size() != 2 || !parse_double(words[1], v) || !(v > 0))
        a.fail(it, fmt::format("expected 'ELEMENT PARAM' with PARAM a positive number, got '{}'", it.text));
      params_[std::string(words[0])] = v;
    }
    a.items().clear();
    a.complete();
  }

  void initialize() override {
    // Every ScheduleInfo of the router, by the scope it speaks for; each
    // sets the same tickets (the first one to initialize does the work).
    std::map<std::string, std::vector<const ScheduleInfo*>> by_scope;
    for (size_t i = 0; i < router().size(); ++i)
      if (auto* s = dynamic_cast<const ScheduleInfo*>(router().element(i)))
        by_scope[name_scope(s->name())].push_back(s);
    if (first_of(by_scope) != this) return;
    for (const auto& [scope, infos] : by_scope)
      for (const ScheduleInfo* s : infos)
        for (const auto& [ename, v] : s->params_) {
          const std::string full = scope + ename, prefix = full + "/";
          bool any = false;
          for (size_t i = 0; i < router().size() && !any; ++i)
            any = router().element(i)->name() == full || router().element(i)->name().starts_with(prefix);
          if (!any && worker().id() == 0) fmt::print(stderr, "{}: warning: no element named '{}'\n", s->name(), full);
        }
    for (size_t i = 0; i < router().size(); ++i) {
      Element* e = router().element(i);
      double p = param(by_scope, "", e->name());
      if (p != 1.0) e->set_tickets(uint32_t(std::lround(std::min(p * Element::kDefaultTickets, 1e9))));
    }
  }

 private:
  using Scopes = std::map<std::string, std::vector<const ScheduleInfo*>>;
  static const ScheduleInfo* first_of(const Scopes& s) {
    const ScheduleInfo* first = nullptr;
    for (const auto& [scope, infos] : s)
      for (const ScheduleInfo* i : infos)
        if (!first || i->index() < first->index()) first = i;
    return first;
  }
  // What the ScheduleInfos of `scope` say of `name` (the last one wins).
  static const double* lookup(const Scopes& s, const std::string& scope, const std::string& name) {
    auto it = s.find(scope);
    if (it == s.end()) return nullptr;
    const double* v = nullptr;
    for (const ScheduleInfo* i : it->second)
      if (auto p = i->params_.find(name); p != i->params_.end()) v = &p->second;
    return v;
  }
  // Click's ScheduleInfo::query: the name itself in the outer scope, else the
  // compound's factor times the parameter inside the compound.
  static double param(const Scopes& s, const std::string& scope, const std::string& rest) {
    if (const double* v = lookup(s, scope, rest)) return *v;
    size_t slash = rest.find('/');
    if (slash == std::string::npos) return 1.0;
    std::string head = rest.substr(0, slash);
    const double* f = lookup(s, scope, head);
    return (f ? *f : 1.0) * param(s, scope + head + "/", rest.substr(slash + 1));
  }

  std::map<std::string, double> params_;
};
SHOAL_ELEMENT(ScheduleInfo, .name = "ScheduleInfo", .ports = "0/0", .processing = "a/a",
              .summary = "sets how often elements' tasks run, relative to each other",
              .description =
                  "Each argument is 'ELEMENT PARAM', PARAM a positive real number (default 1): ELEMENT's task gets "
                  "PARAM times the default tickets (1024, at most 32768), and a worker runs a task with twice the "
                  "tickets twice as often as another (Click's stride scheduling; an element's 'tickets' handler "
                  "reads and writes them). A ScheduleInfo inside a compound names that compound's components; an "
                  "outer one names the compound to scale all of them, or a component by its full name ('c/i') to "
                  "override it. A name that matches no element is a warning.",
              .args = {{"ELEMENT PARAM", "element name and real number", "one parameter per argument"}}, .handlers = {},
              .example = "ScheduleInfo(fast 2, slow 0.5);  // fast runs 4 times as often as slow");

}  // namespace shoal
