#include "shoal/core/graph.hh"

#include <fmt/format.h>

#include <algorithm>

#include "shoal/core/runtime.hh"
#include "shoal/core/worker.hh"

namespace shoal {

int Program::find(const std::string& name) const {
  for (size_t i = 0; i < elements.size(); ++i)
    if (elements[i].name == name) return int(i);
  return -1;
}

namespace {
std::string describe(const ProgramElement& e) { return fmt::format("'{}' :: {}", e.name, e.info->name); }
std::string count_text(const PortRange& r, const char* what) {
  if (r.hi == 0) return fmt::format("no {}s", what);
  const char* s = r.hi == 1 ? "" : "s";
  if (r.lo == r.hi) return fmt::format("{} {}{}", r.lo, what, s);
  return fmt::format("{} to {} {}{}", r.lo, r.hi, what, s);
}
const char* proc_name(Proc p) { return p == Proc::Push ? "push" : p == Proc::Pull ? "pull" : "agnostic"; }
}  // namespace

bool Program::validate(Diagnostics& diag) {
  size_t before = diag.error_count();
  // Port counts: ports used by connections.
  for (auto& e : elements) e.ninputs = e.noutputs = 0;
  for (auto& c : conns) {
    auto& f = elements[size_t(c.from)];
    auto& t = elements[size_t(c.to)];
    f.noutputs = std::max(f.noutputs, uint32_t(c.from_port) + 1);
    t.ninputs = std::max(t.ninputs, uint32_t(c.to_port) + 1);
  }
  std::vector<PortRange> in_r(elements.size()), out_r(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    auto& e = elements[i];
    if (!parse_port_counts(e.info->ports, in_r[i], out_r[i])) {
      diag.error(e.loc, fmt::format("{}: bad port specification '{}' (internal error)", describe(e), e.info->ports));
      continue;
    }
    // Raise counts to the declared minimum; "=" outputs follow the inputs.
    e.ninputs = std::max(e.ninputs, in_r[i].lo);
    if (out_r[i].same_as_inputs) {
      uint32_t n = std::max(e.ninputs, e.noutputs);
      e.ninputs = e.noutputs = n;
    } else {
      e.noutputs = std::max(e.noutputs, out_r[i].lo);
    }
  }
  for (auto& c : conns) {
    size_t fi = size_t(c.from), ti = size_t(c.to);
    auto& f = elements[fi];
    auto& t = elements[ti];
    if (out_r[fi].hi != UINT32_MAX && uint32_t(c.from_port) >= out_r[fi].hi)
      diag.error(c.loc, fmt::format("{} has no output {} ({} takes {})", describe(f), c.from_port, f.info->name,
                                    count_text(out_r[fi], "output")));
    if (in_r[ti].hi != UINT32_MAX && uint32_t(c.to_port) >= in_r[ti].hi)
      diag.error(c.loc, fmt::format("{} has no input {} ({} takes {})", describe(t), c.to_port, t.info->name,
                                    count_text(in_r[ti], "input")));
  }
  if (diag.error_count() != before) return false;

  // Processing: agnostic ports of an element resolve together (Click's x/x).
  for (auto& e : elements) {
    e.in_proc.resize(e.ninputs);
    e.out_proc.resize(e.noutputs);
    for (uint32_t p = 0; p < e.ninputs; ++p) e.in_proc[p] = port_processing(e.info->processing, false, p);
    for (uint32_t p = 0; p < e.noutputs; ++p) e.out_proc[p] = port_processing(e.info->processing, true, p);
  }
  // Per element (per side for independent_ports): -1 none, 0 push, 1 pull, 2 conflict.
  std::vector<int> forced(2 * elements.size(), -1);
  std::vector<const ProgramConn*> why(2 * elements.size(), nullptr);
  auto slot = [&](size_t idx, bool out) { return 2 * idx + (out && elements[idx].info->independent_ports ? 1 : 0); };
  bool changed = true;
  auto force = [&](size_t idx, bool out, Proc p, const ProgramConn& c) {
    size_t s = slot(idx, out);
    int want = p == Proc::Push ? 0 : 1;
    if (forced[s] == want) return;
    if (forced[s] >= 0) {
      diag.error(c.loc, fmt::format("{} is agnostic but connected both as push and as pull", describe(elements[idx])));
      if (why[s])
        diag.note(why[s]->loc,
                  fmt::format("'{}' was made {} here", elements[idx].name, forced[s] == 0 ? "push" : "pull"));
      forced[s] = 2;
      return;
    }
    if (forced[s] == 2) return;
    forced[s] = want;
    why[s] = &c;
    bool indep = elements[idx].info->independent_ports;
    if (!indep || !out)
      for (auto& x : elements[idx].in_proc)
        if (x == Proc::Agnostic) x = p;
    if (!indep || out)
      for (auto& x : elements[idx].out_proc)
        if (x == Proc::Agnostic) x = p;
    changed = true;
  };
  // Element-level agnostic markers: remember which ports were agnostic.
  std::vector<std::vector<bool>> ag_in(elements.size()), ag_out(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    for (auto x : elements[i].in_proc) ag_in[i].push_back(x == Proc::Agnostic);
    for (auto x : elements[i].out_proc) ag_out[i].push_back(x == Proc::Agnostic);
  }
  while (changed) {
    changed = false;
    for (auto& c : conns) {
      Proc o = elements[size_t(c.from)].out_proc[size_t(c.from_port)];
      Proc in = elements[size_t(c.to)].in_proc[size_t(c.to_port)];
      if (o != Proc::Agnostic && ag_in[size_t(c.to)][size_t(c.to_port)] && forced[slot(size_t(c.to), false)] != 2 &&
          (in == Proc::Agnostic || in != o))
        force(size_t(c.to), false, o, c);
      in = elements[size_t(c.to)].in_proc[size_t(c.to_port)];
      if (in != Proc::Agnostic && ag_out[size_t(c.from)][size_t(c.from_port)] &&
          forced[slot(size_t(c.from), true)] != 2 && (o == Proc::Agnostic || o != in))
        force(size_t(c.from), true, in, c);
    }
  }
  for (auto& e : elements) {
    for (auto& x : e.in_proc)
      if (x == Proc::Agnostic) x = Proc::Push;
    for (auto& x : e.out_proc)
      if (x == Proc::Agnostic) x = Proc::Push;
  }
  if (diag.error_count() != before) return false;

  // Connection rules.
  std::vector<std::vector<int>> out_uses(elements.size()), in_uses(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    out_uses[i].assign(elements[i].noutputs, 0);
    in_uses[i].assign(elements[i].ninputs, 0);
  }
  for (auto& c : conns) {
    auto& f = elements[size_t(c.from)];
    auto& t = elements[size_t(c.to)];
    Proc o = f.out_proc[size_t(c.from_port)], in = t.in_proc[size_t(c.to_port)];
    if (o != in) {
      diag.error(c.loc,
                 fmt::format("{} output {} is {}, but {} input {} is {}{}", describe(f), c.from_port, proc_name(o),
                             describe(t), c.to_port, proc_name(in),
                             o == Proc::Push ? " (put a Queue between them)" : " (put an Unqueue between them)"));
      continue;
    }
    // Click's words where Click's are asked for (shoal click).
    auto click_name = [](const ProgramElement& e) { return fmt::format("'{} :: {}'", e.name, e.info->name); };
    if (o == Proc::Push && ++out_uses[size_t(c.from)][size_t(c.from_port)] == 2) {
      if (diag.click_style)
        diag.error(f.loc, fmt::format("illegal reuse of {} push output {}", click_name(f), c.from_port));
      else
        diag.error(c.loc, fmt::format("{} push output {} is connected more than once", describe(f), c.from_port));
    }
    if (in == Proc::Pull && ++in_uses[size_t(c.to)][size_t(c.to_port)] == 2) {
      if (diag.click_style)
        diag.error(t.loc, fmt::format("illegal reuse of {} pull input {}", click_name(t), c.to_port));
      else
        diag.error(c.loc, fmt::format("{} pull input {} is connected more than once", describe(t), c.to_port));
    }
  }
  std::vector<std::vector<bool>> in_conn(elements.size()), out_conn(elements.size());
  for (size_t i = 0; i < elements.size(); ++i) {
    in_conn[i].assign(elements[i].ninputs, false);
    out_conn[i].assign(elements[i].noutputs, false);
  }
  for (auto& c : conns) {
    out_conn[size_t(c.from)][size_t(c.from_port)] = true;
    in_conn[size_t(c.to)][size_t(c.to_port)] = true;
  }
  for (size_t i = 0; i < elements.size(); ++i) {
    auto& e = elements[i];
    const char* unused = diag.click_style ? "'{} :: {}' {} {} unused" : "'{}' :: {} {} {} is not connected";
    for (uint32_t p = 0; p < e.ninputs; ++p)
      if (!in_conn[i][p]) diag.error(e.loc, fmt::format(fmt::runtime(unused), e.name, e.info->name, "input", p));
    for (uint32_t p = 0; p < e.noutputs; ++p)
      if (!out_conn[i][p]) diag.error(e.loc, fmt::format(fmt::runtime(unused), e.name, e.info->name, "output", p));
  }
  return diag.error_count() == before;
}

Router::Router(const Program& prog, Worker& w) : prog_(prog), worker_(w) {}

Router::~Router() = default;

bool Router::configure(Diagnostics& diag) {
  size_t before = diag.error_count();
  for (size_t i = 0; i < prog_.elements.size(); ++i) {
    const auto& pe = prog_.elements[i];
    std::unique_ptr<Element> e(pe.info->make());
    e->info_ = pe.info;
    e->name_ = pe.name;
    e->config_ = pe.config;
    e->loc_ = pe.loc;
    e->index_ = int(i);
    e->router_ = this;
    e->worker_ = &worker_;
    e->inputs_.resize(pe.ninputs);
    e->outputs_.resize(pe.noutputs);
    e->in_proc_ = pe.in_proc;
    e->out_proc_ = pe.out_proc;
    e->out_count_.resize(pe.noutputs);
    e->port_counts_.assign(pe.noutputs, 0);
    e->port_first_.assign(pe.noutputs, 0);
    e->port_out_.assign(pe.noutputs, nullptr);
    by_name_[pe.name] = e.get();
    elements_.push_back(std::move(e));
  }
  for (auto& c : prog_.conns) {
    Element* f = elements_[size_t(c.from)].get();
    Element* t = elements_[size_t(c.to)].get();
    f->outputs_[size_t(c.from_port)] = {t, c.to_port};
    t->inputs_[size_t(c.to_port)] = {f, c.from_port};
  }
  // Elements that define names first (Click's configure phases), then the
  // rest, each seeing the names of its compound and those outside it.
  std::vector<size_t> order;
  for (size_t i = 0; i < elements_.size(); ++i)
    if (prog_.elements[i].info->configure_first) order.push_back(i);
  for (size_t i = 0; i < elements_.size(); ++i)
    if (!prog_.elements[i].info->configure_first) order.push_back(i);
  for (size_t i : order) {
    Element* e = elements_[i].get();
    const auto& pe = prog_.elements[i];
    NameScopeGuard names(&names_, name_scope(pe.name));
    try {
      Args args(split_args(pe.config, pe.config_loc), pe.loc, e->name());
      e->framework_configure(args);
      e->configure(args);
    } catch (const ConfigError& err) {
      diag.element_error(err.loc(), pe.loc, e->name(), e->class_name(), err.what());
    } catch (const std::exception& err) {
      diag.element_error(pe.loc, pe.loc, e->name(), e->class_name(), err.what());
    }
  }
  if (diag.error_count() == before) check_push_cycles(diag);
  return diag.error_count() == before;
}

// A push cycle that no packet can leave: every element on it forwards every
// packet on its one push output (ElementInfo::forwards_all: Null, Counter,
// Paint...), so each packet that enters goes round forever. (Drop reasons
// cannot decide it here: many elements register theirs at initialize.) Cycles through a Queue (a pull connection) are
// fine, and so are cycles with an element that can end the loop (an IP router's ICMPError feeding its route lookup;
// DecIPTTL ends that one); the worker's depth bound catches those at run time if they do loop.
void Router::check_push_cycles(Diagnostics& diag) {
  auto sealed = [](const Element* e) {
    return e->info().forwards_all && e->noutputs() == 1 && e->output(0).e && e->output_proc(0) == Proc::Push;
  };
  std::vector<int> state(elements_.size(), 0);  // 0 new, 1 on the current walk, 2 done
  for (size_t i = 0; i < elements_.size(); ++i) {
    std::vector<Element*> walk;
    Element* e = elements_[i].get();
    while (e && state[size_t(e->index())] == 0 && sealed(e)) {
      state[size_t(e->index())] = 1;
      walk.push_back(e);
      e = e->output(0).e;
    }
    if (e && state[size_t(e->index())] == 1) {
      auto at = std::find(walk.begin(), walk.end(), e);
      std::string path;
      for (auto it = at; it != walk.end(); ++it) path += (*it)->name() + " -> ";
      path += e->name();
      diag.error(e->loc_, fmt::format("push cycle with no Queue: {}; every element on it forwards every packet, so "
                                      "every packet that enters would go round forever (put a Queue in the cycle)",
                                      path));
    }
    for (Element* w : walk) state[size_t(w->index())] = 2;
  }
}

bool Router::initialize(Diagnostics& diag) {
  size_t before = diag.error_count();
  std::vector<Element*> order;
  for (auto& e : elements_) order.push_back(e.get());
  std::stable_sort(order.begin(), order.end(),
                   [](const Element* a, const Element* b) { return a->initialize_phase() < b->initialize_phase(); });
  for (Element* e : order) {
    try {
      e->add_default_handlers();
      e->initialize();
      e->framework_initialize();
      e->add_handlers();
      e->framework_handlers();
      // Click's 'scheduled' handler, for elements that run a task.
      if (e->task_ >= 0 && !e->find_handler("scheduled"))
        e->add_read_handler("scheduled", [el = e] { return el->task_active() ? "true" : "false"; });
      // ... and 'tickets' (Click's stride scheduling share; ScheduleInfo sets it).
      if (e->task_ >= 0 && !e->find_handler("tickets")) {
        e->add_read_handler("tickets", [el = e] { return std::to_string(el->tickets()); });
        e->add_write_handler("tickets", [el = e](const std::string& v) {
          uint64_t t;
          if (!parse_uint(trim(v), t) || t < 1 || t > Element::kMaxTickets)
            throw std::runtime_error(fmt::format("tickets: expected 1 to {}, got '{}'", Element::kMaxTickets, v));
          el->set_tickets(uint32_t(t));
        });
      }
      // ... and 'home_thread': the worker that runs it (every worker runs a
      // copy; one copy does the work of a single-flow source or a Script)
      if (e->task_ >= 0 && !e->find_handler("home_thread"))
        e->add_read_handler("home_thread", [el = e] { return std::to_string(el->home_thread()); });
    } catch (const ConfigError& err) {
      diag.element_error(err.loc(), e->loc_, e->name(), e->class_name(), err.what(), true);
    } catch (const std::exception& err) {
      diag.element_error(e->loc_, e->loc_, e->name(), e->class_name(), err.what(), true);
    }
  }
  return diag.error_count() == before;
}

void Router::cleanup() {
  for (auto& e : elements_) e->cleanup();
}

Element* Router::find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

size_t Router::packets_held() const {
  size_t n = 0;
  for (auto& e : elements_) n += e->packets_held();
  return n;
}

}  // namespace shoal
