// Worker: one pinned thread running its own copy of the graph in a
// run-to-completion loop over tasks, timers and a mailbox for handler writes.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <queue>
#include <vector>

#include "shoal/core/batch.hh"
#include "shoal/core/packet.hh"
#include "shoal/core/stat.hh"

namespace shoal {

class Element;
class Router;
class Runtime;

struct Timer {
  Element* owner = nullptr;
  int id = 0;               // the element's own tag for this timer
  uint64_t expiry_ns = 0;   // monotonic
  uint64_t generation = 0;  // bumps on (re)schedule and unschedule
  bool scheduled = false;
  // A background timer does not keep a run going: a worker whose sources
  // are done and whose other timers have fired stops with it pending
  // (housekeeping such as flow expiry on the wall clock).
  bool background = false;
};

// Click's notifier: `active` says whether the upstream may have packets;
// listeners (pulling tasks) sleep while it is false and are woken by wake().
struct Notifier {
  bool active = true;
  // Click's signal bookkeeping, for NotifierDebug: a registered signal's
  // kind ("empty", "full") and its number in the router (Click packs 32 to
  // a word); a combined signal lists what it combines.
  const char* kind = nullptr;
  int signal = -1;
  std::vector<const Notifier*> parts;
  // A full-notifier's free space (packets the queue takes before dropping),
  // so a source never pushes a burst that would overflow it.
  uint32_t room = UINT32_MAX;
  std::vector<Element*> listeners;
  void wake();
  void sleep() { active = false; }
};

// The process's clock, which Click's timewarp and --simtime change.
uint64_t monotonic_ns();
uint64_t realtime_ns();
void set_time_warp(double factor);  // time runs `factor` times as fast
// Time moves only when the workers are idle, from START (Click's --simtime).
void set_simulated_time(bool on, uint64_t start_ns = 1000000000ull * 1000000000ull);
bool simulated_time();
void advance_simulated_time(uint64_t to_ns);

class Worker {
 public:
  Worker(int id, int nworkers, Runtime* rt, const PoolConfig& pool, uint32_t batch_capacity);
  ~Worker();

  int id() const { return id_; }
  int nworkers() const { return n_; }
  Runtime& runtime() const { return *rt_; }
  Router& router() const { return *router_; }
  void set_router(Router* r) { router_ = r; }
  PacketPool& pool() { return pool_; }
  BatchPool& batches() { return batches_; }
  // Batches of another capacity (offload aggregates), pooled per capacity.
  BatchPool& batches(uint32_t capacity);

  // Time, refreshed once per loop iteration.
  uint64_t now_ns() const { return now_; }
  void refresh_now() { now_ = monotonic_ns(); }

  int add_task(Element* e);
  void set_task_active(int task, bool on) { tasks_[size_t(task)].active = on; }
  bool task_active(int task) const { return tasks_[size_t(task)].active; }
  void schedule(Timer& t, uint64_t when_ns);
  void unschedule(Timer& t);

  // Click's add_select: while the worker has nothing to do it waits on
  // these descriptors (and its next timer) instead of polling them, and
  // while it is busy it looks at them every 10 us; one that is readable
  // calls its element's selected() (which wakes its task). A descriptor watched keeps the worker from counting as idle
  // for good. False when it cannot be watched (the element then polls). remove_select forgets fd only if e is the
  // element watching it.
  bool add_select(int fd, Element* e);
  void remove_select(int fd, Element* e);
  size_t selects() const { return selects_.size(); }

  // Runs f on this worker's thread at its next loop iteration.
  void post(std::function<void()> f);
  void run();  // until the runtime stops
  bool quiescent() const { return quiescent_.load(std::memory_order_acquire); }
  // Simulated time: the time this worker waits for while idle (its next
  // timer; UINT64_MAX: nothing), 0 while it works. Time jumps only when
  // every worker waits, to the earliest of their times.
  uint64_t sim_want() const { return sim_want_.load(std::memory_order_acquire); }
  bool mail_pending() const { return mbox_pending_.load(std::memory_order_acquire); }

  // How deep pushes and pulls nest right now (Element::output_push).
  static constexpr uint32_t kMaxDepth = 1000;
  uint32_t depth = 0;

  // Accounting (every packet: received + created = sent + dropped + held).
  Stat received, created, sent, dropped;

 private:
  struct Task {
    Element* e;
    bool active;
    uint32_t credit = 0;     // tickets earned, not yet spent (a run costs kDefaultTickets)
    bool last_work = false;  // what its last run returned
  };
  struct TimerEntry {
    uint64_t when, seq, gen;  // timers due at once fire in the order they were scheduled
    Timer* t;
    bool operator>(const TimerEntry& o) const { return when != o.when ? when > o.when : seq > o.seq; }
  };
  bool run_timers();  // true when due timers remain (a bound was hit)
  bool drain_mailbox();
  // Sleeps up to ns, or until a watched descriptor is readable (and then
  // calls the elements watching the ready ones).
  void idle_wait(uint64_t ns);
  // Calls the elements whose watched descriptors are readable now.
  void poll_selects();

  int id_, n_;
  Runtime* rt_;
  Router* router_ = nullptr;
  PacketPool pool_;
  BatchPool batches_;
  std::vector<std::unique_ptr<BatchPool>> other_batches_;
  uint64_t now_ = 0;
  std::vector<Task> tasks_;
  std::priority_queue<TimerEntry, std::vector<TimerEntry>, std::greater<>> timers_;
  size_t live_timers_ = 0;
  uint64_t timer_seq_ = 0;
  std::mutex mbox_mu_;
  std::vector<std::function<void()>> mbox_;
  std::atomic<bool> mbox_pending_{false};
  std::atomic<bool> quiescent_{false};
  std::atomic<uint64_t> sim_want_{0};
  int epfd_ = -1;  // epoll instance for add_select (made on first use)
  std::map<int, Element*> selects_;
};

// At a stop, after the drain: each element's end_at_stop() (the flow layer's
// flush), then what that set going drains, until none has more to finish.
void finish_router(Router& r, uint64_t until, const std::function<void()>& tick);

}  // namespace shoal
