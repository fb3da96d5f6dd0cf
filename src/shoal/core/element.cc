#include "shoal/core/element.hh"

#include <fmt/format.h>
#include <memory>

#include <algorithm>
#include <stdexcept>

#include "shoal/core/graph.hh"
#include "shoal/core/runtime.hh"
#include "shoal/core/worker.hh"

namespace shoal {

Registry& Registry::instance() {
  static Registry r;
  return r;
}

void Registry::add(const ElementInfo* info) { infos_.push_back(info); }

const ElementInfo* Registry::find(std::string_view name) const {
  for (auto* i : infos_)
    if (i->name == name) return i;
  return nullptr;
}

std::vector<const ElementInfo*> Registry::all() const {
  auto v = infos_;
  std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->name < b->name; });
  return v;
}

namespace {
bool parse_side(std::string_view s, PortRange& r) {
  if (s == "-") {
    r = {0, UINT32_MAX, false};
    return true;
  }
  size_t dash = s.find('-');
  uint64_t lo, hi;
  if (dash == std::string_view::npos) {
    if (!parse_uint(s, lo)) return false;
    r = {uint32_t(lo), uint32_t(lo), false};
    return true;
  }
  if (!parse_uint(s.substr(0, dash), lo)) return false;
  if (dash + 1 == s.size()) {
    r = {uint32_t(lo), UINT32_MAX, false};
    return true;
  }
  if (!parse_uint(s.substr(dash + 1), hi)) return false;
  r = {uint32_t(lo), uint32_t(hi), false};
  return true;
}
}  // namespace

bool parse_port_counts(std::string_view spec, PortRange& in, PortRange& out) {
  size_t slash = spec.find('/');
  if (slash == std::string_view::npos) return false;
  if (!parse_side(spec.substr(0, slash), in)) return false;
  std::string_view o = spec.substr(slash + 1);
  if (o == "=") {
    out = in;
    out.same_as_inputs = true;
    return true;
  }
  return parse_side(o, out);
}

Proc port_processing(std::string_view spec, bool output, uint32_t port) {
  size_t slash = spec.find('/');
  std::string_view s = output ? spec.substr(slash + 1) : spec.substr(0, slash);
  if (s.empty()) return Proc::Agnostic;
  char c = s[std::min<size_t>(port, s.size() - 1)];
  return c == 'h' ? Proc::Push : c == 'l' ? Proc::Pull : Proc::Agnostic;
}

void Element::push(int port, PacketBatch* b) {
  drop_all(b, add_drop_reason("push-not-supported"));
  (void)port;
}

PacketBatch* Element::pull(int, uint32_t) { return nullptr; }

void Element::run_timer(Timer&) {}

uint16_t Element::add_drop_reason(std::string_view reason) {
  for (size_t i = 0; i < drops_.size(); ++i)
    if (drops_[i].name == reason) return uint16_t(i);
  drops_.emplace_back();
  drops_.back().name = std::string(reason);
  drops_.back().loss = is_loss_reason(reason);
  return uint16_t(drops_.size() - 1);
}

void Element::carry_drops_from(const Element& old) {
  for (const DropReason& d : old.drops_)
    if (uint64_t n = d.count.get()) drops_[add_drop_reason(d.name)].count.add(n);
}

bool Element::is_loss_reason(std::string_view r) {
  static constexpr std::string_view kLoss[] = {"pool-exhausted",     "no-headroom",  "queue-full", "tx-ring-full",
                                               "write-error",        "push-loop",    "too-large",  "no-such-output",
                                               "push-not-supported", "not-on-device"};
  for (auto l : kLoss)
    if (r == l) return true;
  return false;
}

void Element::drop(Packet* p, uint16_t reason) {
  drops_[reason].count.add();
  worker_->dropped.add();
  worker_->pool().free(p);
}

void Element::drop_all(PacketBatch* b, uint16_t reason) {
  uint32_t n = b->live();
  b->for_each([&](uint32_t, Packet* p) { worker_->pool().free(p); });
  drops_[reason].count.add(n);
  worker_->dropped.add(n);
  worker_->batches(b->capacity()).put(b);
}

void Element::count_dropped(uint16_t reason, uint64_t n) {
  drops_[reason].count.add(n);
  worker_->dropped.add(n);
}

void Element::count_lost(uint16_t reason, uint64_t n) {
  worker_->created.add(n);
  count_dropped(reason, n);
}

void Element::sent(Packet* p) {
  worker_->sent.add();
  worker_->pool().free(p);
}

void Element::push_too_deep(PacketBatch* b) {
  drop_all(b, add_drop_reason("push-loop"));
  run_error(
      fmt::format("packets went through {} push connections in one call chain, so they go round a cycle; "
                  "dropped as 'push-loop' (put a Queue in the cycle, or let an element on it end the loop)",
                  Worker::kMaxDepth));
}

PacketBatch* Element::pull_too_deep() {
  run_error(
      fmt::format("a pull went through {} connections in one call chain, so it goes round a cycle; it "
                  "returns nothing",
                  Worker::kMaxDepth));
  return nullptr;
}

void Element::run_error(const std::string& msg, bool fail) {
  worker_->runtime().report_error(fmt::format("{} :: {}: {}", name(), class_name(), msg), fail);
}

void Element::received(uint64_t n) { worker_->received.add(n); }
void Element::created(uint64_t n) { worker_->created.add(n); }

PacketBatch* Element::new_batch() {
  PacketBatch* b = worker_->batches().get();
  b->anno.arrival_ns = worker_->now_ns();
  return b;
}

void Element::recycle(PacketBatch* b) { worker_->batches(b->capacity()).put(b); }

PacketBatch* Element::dispatch(PacketBatch* b, int keep_port) {
  const int nout = noutputs();
  // Per-port counts in a buffer sized once at configuration: no allocation here.
  uint32_t* counts = port_counts_.data();
  std::fill(port_counts_.begin(), port_counts_.end(), 0u);
  int16_t* res = b->results();
  uint32_t* first = port_first_.data();
  b->for_each([&](uint32_t i, Packet* p) {
    int r = res[i];
    if (r < 0) {
      drop(p, uint16_t(-1 - r));
      b->kill(i);
    } else if (r >= nout) {
      if (r_no_port_ == UINT16_MAX) r_no_port_ = add_drop_reason("no-such-output");
      drop(p, r_no_port_);
      b->kill(i);
    } else {
      if (counts[r]++ == 0) first[r] = i;
    }
  });
  int major = keep_port;
  if (major < 0) {
    major = 0;
    for (int q = 1; q < nout; ++q)
      if (counts[q] > counts[major]) major = q;
  }
  PacketBatch** out = port_out_.data();
  for (int q = 0; q < nout; ++q) {
    out[q] = nullptr;
    if (q == major || counts[q] == 0) continue;
    PacketBatch* nb = new_batch();
    nb->anno = b->anno;
    b->for_each([&](uint32_t i, Packet* p) {
      if (res[i] != q) return;
      nb->append(p);
      b->kill(i);
    });
    out[q] = nb;
  }
  if (keep_port < 0 && !b->empty()) {
    if (b->slots() >= 2 * b->live()) b->compact();
    out[major] = b;
  } else if (keep_port < 0) {
    recycle(b);
  }
  // Each output's batch in the order its first packet arrived, so a packet
  // that came first is pushed first whichever way it went (Click's order
  // for a batch that splits one packet per output). The batches are taken
  // out of the scratch before any push: a push may come back here.
  struct Out {
    uint32_t first;
    int port;
    PacketBatch* b;
  };
  Out local[16];
  std::vector<Out> heap;
  Out* list = local;
  size_t n = 0;
  for (int q = 0; q < nout; ++q) {
    if (!out[q]) continue;
    if (n == 16 && list == local) {
      heap.assign(local, local + 16);
      list = nullptr;
    }
    Out o{first[q], q, out[q]};
    out[q] = nullptr;
    if (list)
      list[n] = o;
    else
      heap.push_back(o);
    ++n;
  }
  if (!list) list = heap.data();
  std::sort(list, list + n, [](const Out& x, const Out& y) { return x.first < y.first; });
  for (size_t i = 0; i < n; ++i) output_push(list[i].port, list[i].b);
  return keep_port >= 0 ? b : nullptr;  // counted by the puller (input_pull)
}

void Element::add_read_handler(std::string name, std::function<std::string()> f, Agg agg, bool numeric) {
  for (auto& h : handlers_)
    if (h.name == name) {
      h.read = std::move(f);
      h.read_param = nullptr;  // a plain read handler replaces one with parameters
      h.agg = agg;
      h.numeric = numeric;
      return;
    }
  handlers_.push_back(Handler{std::move(name), std::move(f), {}, agg, numeric});
}

void Element::add_read_param_handler(const std::string& name, std::function<std::string(const std::string&)> f) {
  auto fn = std::make_shared<std::function<std::string(const std::string&)>>(std::move(f));
  add_read_handler(name, [fn] { return (*fn)(""); });
  for (auto& h : handlers_)
    if (h.name == name) h.read_param = [fn](const std::string& v) { return (*fn)(v); };
}

void Element::add_stat_handler(std::string name, const Stat& s) {
  add_read_handler(
      std::move(name), [&s] { return std::to_string(s.get()); }, Agg::Sum, true);
}

void Element::add_write_handler(std::string name, std::function<void(const std::string&)> f) {
  for (auto& h : handlers_)
    if (h.name == name) {
      h.write = std::move(f);
      return;
    }
  handlers_.push_back(Handler{std::move(name), {}, std::move(f), Agg::First, false});
}

const Handler* Element::find_handler(std::string_view name) const {
  for (auto& h : handlers_)
    if (h.name == name) return &h;
  return nullptr;
}

void Element::register_signal(Notifier& n, const char* kind) {
  n.kind = kind;
  n.signal = router_->new_signal();
}

void Element::set_handler_private(std::string_view name) {
  for (auto& h : handlers_)
    if (h.name == name) h.hidden = true;
}

void Element::add_default_handlers() {
  add_read_handler("name", [this] { return name_; });
  add_read_handler("class", [this] { return std::string(info_->name); });
  add_read_handler("config", [this] { return config_; });
  add_read_handler("ports", [this] {
    std::string s = fmt::format("{} input{}\n", inputs_.size(), inputs_.size() == 1 ? "" : "s");
    for (size_t i = 0; i < inputs_.size(); ++i)
      s += fmt::format("{}\t{}[{}]\n", in_proc_[i] == Proc::Push ? "push" : "pull", inputs_[i].e->name(),
                       inputs_[i].port);
    s += fmt::format("{} output{}\n", outputs_.size(), outputs_.size() == 1 ? "" : "s");
    for (size_t i = 0; i < outputs_.size(); ++i)
      s += fmt::format("{}\t[{}]{}\n", out_proc_[i] == Proc::Push ? "push" : "pull", outputs_[i].port,
                       outputs_[i].e->name());
    return s;
  });
  add_read_handler("handlers", [this] {
    std::string s;
    for (auto& h : handlers_) s += fmt::format("{}\t{}{}\n", h.name, h.read ? "r" : "", h.write ? "w" : "");
    return s;
  });
  add_read_handler(
      "drops",
      [this] {
        uint64_t n = 0;
        for (auto& d : drops_) n += d.count.get();
        return std::to_string(n);
      },
      Agg::Sum, true);
}

void Element::add_task() { task_ = worker_->add_task(this); }
void Element::set_task_active(bool on) {
  if (task_ >= 0) worker_->set_task_active(task_, on);
}
bool Element::on_home_thread() const {
  int t = home_thread();
  return t >= 0 && worker_->id() == t % worker_->nworkers();
}
bool Element::task_active() const { return task_ >= 0 && worker_->task_active(task_); }
void Element::request_stop() { worker_->runtime().element_stop_request(index_); }

}  // namespace shoal
