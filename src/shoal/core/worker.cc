#include "shoal/core/worker.hh"

#include <poll.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>

#include "shoal/core/element.hh"
#include "shoal/core/runtime.hh"

namespace shoal {

BatchPool& Worker::batches(uint32_t capacity) {
  if (capacity == batches_.batch_capacity()) return batches_;
  for (auto& p : other_batches_)
    if (p->batch_capacity() == capacity) return *p;
  other_batches_.push_back(std::make_unique<BatchPool>(capacity));
  return *other_batches_.back();
}

namespace {
uint64_t clock_ns(clockid_t id) {
  timespec ts;
  clock_gettime(id, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

// The process's clock (Click's): real, warped (Click's timewarp: time runs
// `factor` times as fast), or simulated (Click's --simtime: time stands
// still while there is work and jumps to the next timer when there is none).
struct Clock {
  std::atomic<int> mode{0};  // 0 real, 1 warped, 2 simulated
  std::mutex mu;             // warp parameters
  double factor = 1;
  uint64_t real_base = 0, virt_base = 0;
  std::atomic<uint64_t> sim{0};
  std::atomic<uint64_t> wall_offset{0};  // realtime - monotonic when the clock left real time
} g_clock;

uint64_t warped_now() {
  std::lock_guard<std::mutex> g(g_clock.mu);
  return g_clock.virt_base + uint64_t(double(clock_ns(CLOCK_MONOTONIC) - g_clock.real_base) * g_clock.factor);
}
}  // namespace

uint64_t monotonic_ns() {
  switch (g_clock.mode.load(std::memory_order_relaxed)) {
    case 1: return warped_now();
    case 2: return g_clock.sim.load(std::memory_order_acquire);
    default: return clock_ns(CLOCK_MONOTONIC);
  }
}

uint64_t realtime_ns() {
  if (g_clock.mode.load(std::memory_order_relaxed) == 0) return clock_ns(CLOCK_REALTIME);
  return monotonic_ns() + g_clock.wall_offset.load(std::memory_order_relaxed);
}

void set_time_warp(double factor) {
  uint64_t now = monotonic_ns();
  if (g_clock.mode.load() == 0) g_clock.wall_offset.store(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC));
  if (g_clock.mode.load() == 2) return;  // simulated time has no speed
  std::lock_guard<std::mutex> g(g_clock.mu);
  g_clock.factor = factor;
  g_clock.real_base = clock_ns(CLOCK_MONOTONIC);
  g_clock.virt_base = now;
  g_clock.mode.store(factor == 1 && now == g_clock.real_base ? 0 : 1);
}

void set_simulated_time(bool on, uint64_t start_ns) {
  if (on) {
    // Click's: both clocks start at START (default 1000000000 s, 2001-09-09),
    // so runs repeat exactly and whole-second timers fall on tick boundaries.
    g_clock.wall_offset.store(0);
    g_clock.sim.store(start_ns);
    g_clock.mode.store(2);
  } else {
    g_clock.mode.store(0);
  }
}

bool simulated_time() { return g_clock.mode.load(std::memory_order_relaxed) == 2; }

void advance_simulated_time(uint64_t to) {
  uint64_t cur = g_clock.sim.load(std::memory_order_acquire);
  while (cur < to && !g_clock.sim.compare_exchange_weak(cur, to, std::memory_order_acq_rel)) {}
}

void Notifier::wake() {
  active = true;
  for (Element* e : listeners) e->wake_task();
}

Worker::Worker(int id, int nworkers, Runtime* rt, const PoolConfig& pool, uint32_t batch_capacity)
    : id_(id), n_(nworkers), rt_(rt), pool_(pool), batches_(batch_capacity) {
  refresh_now();
}

Worker::~Worker() {
  if (epfd_ >= 0) ::close(epfd_);
}

bool Worker::add_select(int fd, Element* e) {
  if (epfd_ < 0 && (epfd_ = ::epoll_create1(EPOLL_CLOEXEC)) < 0) return false;
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.fd = fd;
  // (A descriptor closed while watched left epoll by itself: its number may
  // come back as a new one.)
  if (::epoll_ctl(epfd_, EPOLL_CTL_ADD, fd, &ev) < 0 &&
      (errno != EEXIST || ::epoll_ctl(epfd_, EPOLL_CTL_MOD, fd, &ev) < 0))
    return false;
  selects_[fd] = e;
  return true;
}

void Worker::remove_select(int fd, Element* e) {
  auto it = selects_.find(fd);
  if (it == selects_.end() || it->second != e) return;
  selects_.erase(it);
  if (epfd_ >= 0) ::epoll_ctl(epfd_, EPOLL_CTL_DEL, fd, nullptr);  // (gone already if fd was closed)
}

// ppoll on the epoll descriptor gives a nanosecond timeout; the events are
// then collected without waiting.
void Worker::idle_wait(uint64_t ns) {
  if (selects_.empty()) {
    std::this_thread::sleep_for(std::chrono::nanoseconds(ns));
    return;
  }
  pollfd pfd{epfd_, POLLIN, 0};
  timespec ts{time_t(ns / 1000000000u), long(ns % 1000000000u)};
  if (::ppoll(&pfd, 1, &ts, nullptr) > 0) poll_selects();
}

void Worker::poll_selects() {
  epoll_event evs[32];
  int n = ::epoll_wait(epfd_, evs, 32, 0);
  for (int i = 0; i < n; ++i)
    if (auto it = selects_.find(evs[i].data.fd); it != selects_.end()) it->second->selected(it->first);
}

int Worker::add_task(Element* e) {
  tasks_.push_back({e, true});
  return int(tasks_.size() - 1);
}

void Worker::schedule(Timer& t, uint64_t when_ns) {
  if (!t.scheduled && !t.background) ++live_timers_;
  t.scheduled = true;
  t.expiry_ns = when_ns;
  ++t.generation;
  timers_.push({when_ns, timer_seq_++, t.generation, &t});
}

void Worker::unschedule(Timer& t) {
  if (t.scheduled && !t.background) --live_timers_;
  t.scheduled = false;
  ++t.generation;
}

bool Worker::run_timers() {
  // At most this many firings per loop iteration: a timer that reschedules
  // itself for now cannot keep the worker from its stop check and mailbox.
  for (int fired = 0; !timers_.empty(); ++fired) {
    const TimerEntry& top = timers_.top();
    Timer* t = top.t;
    if (!t->scheduled || top.gen != t->generation) {
      timers_.pop();
      continue;
    }
    if (top.when > now_) break;
    if (fired == 4096) return true;
    timers_.pop();
    t->scheduled = false;
    if (!t->background) --live_timers_;
    t->owner->run_timer(*t);
  }
  return false;
}

void Worker::post(std::function<void()> f) {
  {
    std::lock_guard<std::mutex> g(mbox_mu_);
    mbox_.push_back(std::move(f));
  }
  mbox_pending_.store(true, std::memory_order_release);
  // Pending mail means work: leave quiescence so the runtime cannot stop first.
  if (quiescent_.exchange(false, std::memory_order_acq_rel)) rt_->note_quiescent(false);
}

bool Worker::drain_mailbox() {
  if (!mbox_pending_.load(std::memory_order_acquire)) return false;
  std::vector<std::function<void()>> work;
  {
    std::lock_guard<std::mutex> g(mbox_mu_);
    work.swap(mbox_);
    mbox_pending_.store(false, std::memory_order_relaxed);
  }
  for (auto& f : work) f();
  return !work.empty();
}

void Worker::run() {
  unsigned idle = 0;
  uint64_t selects_polled = 0;
  while (!rt_->stopping()) {
    refresh_now();
    // A busy worker never waits in idle_wait: it looks at its watched
    // descriptors every 10 us instead, so their tasks wake all the same.
    if (!selects_.empty() && now_ - selects_polled >= 10000) {
      selects_polled = now_;
      poll_selects();
    }
    bool work = drain_mailbox();
    work |= run_timers();
    bool any_active = false;
    for (size_t i = 0; i < tasks_.size(); ++i) {
      if (!tasks_[i].active) continue;
      any_active = true;
      // Stride scheduling by tickets: each pass earns a task its tickets,
      // and each run costs the default; with the default, one run a pass.
      // A task waiting for its turn that had work keeps the worker busy.
      uint32_t credit = std::min<uint32_t>(tasks_[i].credit + tasks_[i].e->tickets(), 64 * Element::kDefaultTickets);
      if (credit < Element::kDefaultTickets) {
        tasks_[i].credit = credit;
        work |= tasks_[i].last_work;
        continue;
      }
      bool did;
      do {
        credit -= Element::kDefaultTickets;
        did = tasks_[i].e->run_task();  // (may add tasks: no reference into tasks_ is held)
        work |= did;
      } while (did && credit >= Element::kDefaultTickets && tasks_[i].active && !rt_->stopping());
      tasks_[i].last_work = did;
      tasks_[i].credit = did ? credit : std::min(credit, Element::kDefaultTickets);  // no saving up while idle
    }
    if (work) {
      idle = 0;
      if (simulated_time()) sim_want_.store(0, std::memory_order_release);
      if (quiescent_.exchange(false, std::memory_order_acq_rel)) rt_->note_quiescent(false);
      continue;
    }
    bool nothing_left = !any_active && live_timers_ == 0 && !mail_pending() && selects_.empty();
    for (auto& t : tasks_) nothing_left &= !t.active;  // a notifier may have woken one during the loop
    if (nothing_left) {
      if (!quiescent_.exchange(true, std::memory_order_acq_rel)) rt_->note_quiescent(true);
    } else if (quiescent_.exchange(false, std::memory_order_acq_rel)) {
      rt_->note_quiescent(false);
    }
    if (++idle < 64) continue;
    // Simulated time: nothing to do now, so time jumps to the next timer
    // (or on by 100 us for a task that waits for time to pass).
    if (simulated_time()) {
      uint64_t want = UINT64_MAX;
      if (!timers_.empty() && timers_.top().when > now_)
        want = timers_.top().when;
      else if (any_active || !timers_.empty())
        want = now_ + 100000;
      sim_want_.store(want, std::memory_order_release);
      rt_->advance_simulated();
      if (!nothing_left) {
        idle = 0;
        continue;
      }
    }
    // Idle: sleep until the next timer or a watched descriptor, at most
    // 1 ms, so stops, mailbox messages and rate-limited sources stay
    // responsive.
    uint64_t wait = 1000000;
    if (!timers_.empty() && timers_.top().when > now_) wait = std::min<uint64_t>(wait, timers_.top().when - now_);
    if (any_active) wait = std::min<uint64_t>(wait, 20000);
    idle_wait(wait);
  }
  // Work already handed to a device completes and goes on, so a stop does
  // not strand packets in flight (bounded: a wedged device cannot hang us).
  uint64_t until = monotonic_ns() + 2000000000ull;
  bool swap = false;
  for (bool more = true; more && monotonic_ns() < until;) {
    refresh_now();
    more = false;
    // For a hot swap only what is in flight settles: the rest is the new
    // configuration's to take (Runtime::run).
    swap = rt_->swap_pending();
    if (swap) rt_->note_settled();
    for (size_t i = 0; i < router_->size(); ++i)
      more |= swap ? router_->element(i)->settle() : router_->element(i)->drain();
  }
  if (!swap) finish_router(*router_, until, [this] { refresh_now(); });
}

// Then the state that ends with the run ends (Element::end_at_stop), each
// time followed by what it set going draining (bounded by `until`, but
// end_at_stop() runs whatever the bound: flows' records are not lost to a
// wedged device).
void finish_router(Router& r, uint64_t until, const std::function<void()>& tick) {
  for (bool did = true; did;) {
    did = false;
    for (size_t i = 0; i < r.size(); ++i) did |= r.element(i)->end_at_stop();
    for (bool more = did; more && monotonic_ns() < until;) {
      tick();
      more = false;
      for (size_t i = 0; i < r.size(); ++i) more |= r.element(i)->drain();
    }
  }
}

}  // namespace shoal
