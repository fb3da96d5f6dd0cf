#include "shoal/core/runtime.hh"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <condition_variable>

#include "shoal/core/version.hh"

namespace shoal {

Runtime::Runtime(const Program& prog, RunOptions opt) : prog_(prog), opt_(opt) {
  if (opt_.threads < 1) opt_.threads = 1;
  for (int i = 0; i < opt_.threads; ++i) {
    workers_.push_back(std::make_unique<Worker>(i, opt_.threads, this, opt_.pool, opt_.batch_capacity));
    routers_.push_back(std::make_unique<Router>(prog_, *workers_.back()));
    workers_.back()->set_router(routers_.back().get());
  }
}

Runtime::~Runtime() = default;

bool Runtime::configure(Diagnostics& diag) {
  // Worker 0 reports configuration errors; the others would repeat them.
  if (!routers_[0]->configure(diag)) return false;
  for (size_t i = 1; i < routers_.size(); ++i) {
    Diagnostics quiet;
    if (!routers_[i]->configure(quiet)) {
      diag.error({}, "configuration differs between workers:\n" + quiet.text());
      return false;
    }
  }
  return true;
}

bool Runtime::initialize(Diagnostics& diag) {
  for (auto& r : routers_) {
    if (!r->initialize(diag)) return false;
  }
  return true;
}

void Runtime::run() {
  start_ns_ = monotonic_ns();
  std::vector<std::thread> threads;
  unsigned ncpu = std::max(1u, std::thread::hardware_concurrency());
  for (size_t i = 0; i < workers_.size(); ++i) {
    threads.emplace_back([this, i, ncpu] {
      if (opt_.pin && workers_.size() > 1) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(i % ncpu, &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
      }
      workers_[i]->run();
    });
  }
  if (!origin_ns_) origin_ns_ = start_ns_;
  if (opt_.duration_s > 0) {
    uint64_t deadline = origin_ns_ + uint64_t(opt_.duration_s * 1e9);
    while (!stopping() && monotonic_ns() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    stop_now();
  }
  for (auto& t : threads) t.join();
  end_ns_ = monotonic_ns();
  // A hot swap: the new configuration's elements take this one's state
  // (queued packets, counts, tables) before anything here ends; then what
  // they left ends as a stop ends it (drain: flows flushed and their
  // records written). The workers only settled (Worker::run), also when a
  // swap was being built as the run stopped and then failed. A swap built
  // after this point is refused (swap_to): nothing would take the state.
  {
    std::lock_guard<std::mutex> g(next_mu_);
    finished_ = true;
    if (next_) next_->take_state_from(*this);
  }
  if (settled_.load()) {
    uint64_t until = monotonic_ns() + 2000000000ull;
    for (bool more = true; more && monotonic_ns() < until;) {
      more = false;
      for (auto& r : routers_)
        for (size_t i = 0; i < r->size(); ++i) more |= r->element(i)->drain();
    }
    for (auto& r : routers_) finish_router(*r, until, [] {});
  }
  // Stop hooks run on the (now idle) calling thread, in worker order.
  for (auto& r : routers_)
    for (size_t i = 0; i < r->size(); ++i) r->element(i)->on_stop();
}

void Runtime::cleanup() {
  for (auto& r : routers_) r->cleanup();
}

uint64_t Runtime::elapsed_ns() const {
  if (!start_ns_) return 0;
  return (end_ns_ ? end_ns_ : monotonic_ns()) - (origin_ns_ ? origin_ns_ : start_ns_);
}

void Runtime::element_stop_request(int element_index) {
  bool fire = false;
  {
    std::lock_guard<std::mutex> g(stop_mu_);
    fire = ++stop_requests_[element_index] == nworkers();
    if (fire) stop_requests_[element_index] = 0;
  }
  if (fire) stop_event();
}

void Runtime::stop_event() {
  if (driver_manager_)
    stop_events_.fetch_add(1, std::memory_order_acq_rel);
  else
    stop_now();
}

uint64_t Runtime::take_stop_event() {
  uint64_t n = stop_events_.load(std::memory_order_acquire);
  while (n && !stop_events_.compare_exchange_weak(n, n - 1, std::memory_order_acq_rel)) {}
  return n;
}

void Runtime::note_quiescent(bool q) {
  int n = quiescent_.fetch_add(q ? 1 : -1, std::memory_order_acq_rel) + (q ? 1 : -1);
  if (!q || n != nworkers()) return;
  // Every worker is idle for good, unless one has mail not yet read.
  for (auto& w : workers_)
    if (w->mail_pending()) return;
  stop_now();
}

Accounting Runtime::accounting() const {
  Accounting a = before_;
  for (size_t i = 0; i < workers_.size(); ++i) {
    auto& w = *workers_[i];
    a.received += w.received.get();
    a.created += w.created.get();
    a.sent += w.sent.get();
    a.dropped += w.dropped.get();
    a.held += routers_[i]->packets_held();
  }
  return a;
}

void Runtime::report_error(const std::string& msg, bool fail) {
  {
    std::lock_guard<std::mutex> g(err_mu_);
    if (std::find(errors_.begin(), errors_.end(), msg) != errors_.end()) return;
    if (fail) errors_.push_back(msg);
  }
  if (fail) failed_.store(true, std::memory_order_release);
  if (opt_.click_messages)
    fmt::print(stderr, "{}\n", msg);
  else
    fmt::print(stderr, "shoal: {}: {}\n", fail ? "error" : "warning", msg);
}

std::vector<std::string> Runtime::errors() const {
  std::lock_guard<std::mutex> g(err_mu_);
  return errors_;
}

namespace {
bool split_path(const std::string& path, std::string& elem, std::string& h) {
  size_t dot = path.rfind('.');
  if (dot == std::string::npos) return false;
  elem = path.substr(0, dot);
  h = path.substr(dot + 1);
  return true;
}
}  // namespace

const Handler* Runtime::lookup(const std::string& ename, const std::string& hname, bool write, std::string& err) {
  Element* e0 = routers_[0]->find(ename);
  if (!e0) {
    err = fmt::format("no element named '{}'", ename);
    return nullptr;
  }
  const Handler* h = e0->find_handler(hname);
  if (!h || !(write ? bool(h->write) : bool(h->read))) {
    err = fmt::format("'{}' has no {} handler '{}'", ename, write ? "write" : "read", hname);
    return nullptr;
  }
  return h;
}

bool Runtime::read_handler(const std::string& path, std::string& out, std::string& err, const std::string& param) {
  std::string ename, hname;
  if (!split_path(path, ename, hname)) {
    if (path == "version") return out = kVersion, true;
    if (path == "threads") return out = std::to_string(nworkers()), true;
    if (path == "stopping") return out = stopping() ? "true" : "false", true;
    // Click's list: the number of elements, then their names, one a line;
    // classes: the element classes in use.
    if (path == "list" || path == "classes") {
      Router& r = *routers_[0];
      std::vector<std::string> v;
      for (size_t i = 0; i < r.size(); ++i)
        v.push_back(path == "list" ? r.element(i)->name() : std::string(r.element(i)->class_name()));
      if (path == "classes") {
        std::sort(v.begin(), v.end());
        v.erase(std::unique(v.begin(), v.end()), v.end());
      }
      out = path == "list" ? std::to_string(v.size()) + "\n" : "";
      for (auto& x : v) out += x + "\n";
      return true;
    }
    err = fmt::format("no global read handler '{}'", path);
    return false;
  }
  const Handler* h0 = lookup(ename, hname, false, err);
  if (!h0) return false;
  NameScopeGuard names(&routers_[0]->names(), name_scope(ename));
  if (h0->read_param) {
    try {
      out = h0->read_param(param);
      return true;
    } catch (const std::exception& e) {
      err = e.what();
      return false;
    }
  }
  if (!param.empty()) {
    err = fmt::format("'{}' does not take parameters", path);
    return false;
  }
  if (h0->agg == Agg::First || nworkers() == 1) {
    out = h0->read();
    return true;
  }
  if (h0->agg == Agg::Concat) {
    out.clear();
    for (auto& r : routers_) out += r->find(ename)->find_handler(hname)->read();
    return true;
  }
  double acc = 0;
  bool integral = true;
  for (auto& r : routers_) {
    const Handler* h = r->find(ename)->find_handler(hname);
    std::string v = h->read();
    double x = 0;
    if (!parse_double(v, x)) {
      out = h0->read();
      return true;
    }
    integral &= v.find_first_of(".eE") == std::string::npos;
    acc = h0->agg == Agg::Sum ? acc + x : std::max(acc, x);
  }
  out = integral ? fmt::format("{}", uint64_t(acc)) : fmt::format("{:.6g}", acc);
  return true;
}

bool Runtime::write_handler(const std::string& path, const std::string& value, std::string& err, int calling_worker) {
  std::string ename, hname;
  if (!split_path(path, ename, hname)) {
    if (path == "stop") return stop_now(), true;
    if (path == "hotconfig" && builder_) return swap_to([&](std::string& e) { return builder_(value, e); }, err);
    if (path == "reload" && reloader_) return swap_to(reloader_, err);
    if (path == "timewarp") {  // Click's: time runs this many times as fast
      double f;
      if (!parse_double(trim(value), f) || !(f > 0)) {
        err = "timewarp expects a positive number";
        return false;
      }
      set_time_warp(f);
      return true;
    }
    err = fmt::format("no global write handler '{}'", path);
    return false;
  }
  if (!lookup(ename, hname, true, err)) return false;
  bool running = start_ns_ && !end_ns_;
  // A caller outside the workers (the dashboard, a signal) waits for the
  // writes it hands to them, and hears their errors; a worker does not (two
  // workers writing each other's copies would wait on each other).
  struct Done {
    std::mutex mu;
    std::condition_variable cv;
    int left = 0;
    std::string err;
  };
  auto done = calling_worker < 0 && running ? std::make_shared<Done>() : nullptr;
  for (int i = 0; i < nworkers(); ++i) {
    Element* e = routers_[size_t(i)]->find(ename);
    auto write = e->find_handler(hname)->write;
    // The handler sees the names (AddressInfo, PortInfo) its element sees.
    const NameDB* names = &routers_[size_t(i)]->names();
    std::function<void(const std::string&)> fn = [write, names, scope = name_scope(ename)](const std::string& v) {
      NameScopeGuard g(names, scope);
      write(v);
    };
    if (!running || i == calling_worker) {
      try {
        fn(value);
      } catch (const std::exception& x) {
        err = fmt::format("{}.{}: {}", ename, hname, x.what());
        return false;
      }
    } else {
      // Another thread owns this copy: hand the write to it.
      if (done) {
        std::lock_guard<std::mutex> g(done->mu);
        ++done->left;
      }
      workers_[size_t(i)]->post([fn, value, ename, hname, done] {
        std::string why;
        try {
          fn(value);
        } catch (const std::exception& x) {
          why = fmt::format("{}.{}: {}", ename, hname, x.what());
          if (!done) fmt::print(stderr, "shoal: write {}\n", why);
        }
        if (done) {
          std::lock_guard<std::mutex> g(done->mu);
          if (done->err.empty()) done->err = why;
          if (--done->left == 0) done->cv.notify_all();
        }
      });
    }
  }
  if (done) {
    std::unique_lock<std::mutex> g(done->mu);
    // (a worker that does not come to it within the wait still runs it later)
    done->cv.wait_for(g, std::chrono::seconds(2), [&] { return done->left == 0; });
    if (!done->err.empty()) {
      err = done->err;
      return false;
    }
  }
  return true;
}

bool Runtime::swap_to(const std::function<std::unique_ptr<Runtime>(std::string&)>& build, std::string& err) {
  bool idle = false;
  if (!swap_pending_.compare_exchange_strong(idle, true, std::memory_order_acq_rel)) {
    err = "a hot swap is already under way";
    return false;
  }
  std::unique_ptr<Runtime> next = stopping() ? nullptr : build(err);
  if (!next) {
    if (err.empty()) err = "the router is stopping";
    swap_pending_.store(false, std::memory_order_release);
    return false;
  }
  {
    std::lock_guard<std::mutex> g(next_mu_);
    if (finished_) {
      err = "the router stopped before the new configuration was ready";
      next->cleanup();
      swap_pending_.store(false, std::memory_order_release);
      return false;
    }
    next_ = std::move(next);
  }
  stop_now();
  return true;
}

std::unique_ptr<Runtime> Runtime::take_next() {
  std::lock_guard<std::mutex> g(next_mu_);
  return std::move(next_);
}

void Runtime::take_state_from(Runtime& old) {
  for (size_t w = 0; w < routers_.size(); ++w) {
    Router& r = *routers_[w];
    Router* o = w < old.routers_.size() ? old.routers_[w].get() : nullptr;
    for (size_t i = 0; i < r.size(); ++i) {
      Element* e = r.element(i);
      Element* before = o ? o->find(e->name()) : nullptr;
      if (before && before->class_name() != e->class_name()) before = nullptr;
      if (before) e->carry_drops_from(*before);
      e->hot_swapped(before);
    }
  }
  replacement_ = false;
  replacing_ = nullptr;
}

void Runtime::continue_from(const Runtime& old) {
  Accounting o = old.accounting();  // the old one's and those it replaced
  before_ = o;
  before_.dropped += o.held;
  before_.held = 0;
  swap_dropped_ = old.swap_dropped_ + o.held;
  swaps_ = old.swaps_ + 1;
  origin_ns_ = old.origin_ns_ ? old.origin_ns_ : old.start_ns_;
}

void Runtime::advance_simulated() {
  uint64_t to = UINT64_MAX;
  for (auto& w : workers_) {
    uint64_t want = w->sim_want();
    if (want == 0) return;  // this one works: time stands still
    to = std::min(to, want);
  }
  if (to != UINT64_MAX) advance_simulated_time(to);
}

}  // namespace shoal
