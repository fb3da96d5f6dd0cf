// One adaptive split for every worker (NBA §3.4): a HillClimber fed the
// throughput of all the workers' copies of a balancer together, whose share
// every copy applies.
//
//   NBA keeps one offloading fraction for the system, measured on the
//   system's throughput, and waits for every worker to apply a new fraction
//   before the next observation. Climbers per worker measure each worker's
//   own rate instead, and a device shared by the workers couples those
//   rates: a worker that sends more to a busy device gains itself (its host
//   work falls) and slows every other worker a little, so each climbs past
//   the share that is best for all (a tragedy of the commons: with 16 workers
//   on an H200 the large IDS ended at a share of 0.85 where all-CPU was
//   best). The fixed splits bench-scale compares with move every worker
//   together: that curve is the one climbed here.
//
//   Each worker publishes, per batch, its packets out so far and its batch
//   fill (relaxed stores to its own cache line). Once an epoch's end has
//   passed, each worker closes it at its next batch (the p99 of its device
//   batches, from its own samples); the worker that closes it last, or any
//   worker once an eighth of the interval more has passed (an idle worker
//   must not stall the others), takes the lock without waiting for it, sums
//   every worker's packets since the last update over the time since, and
//   gives the climber that rate, the mean fill and the highest p99. The new
//   share is one atomic the workers read at their next decision.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "shoal/offload/balance.hh"

namespace shoal::offload {

// A climber's decisions as the handlers read them (written by the thread
// that updates the climber, read by any).
struct ClimberStats {
  std::atomic<double> share{1}, ceiling{1}, rate{0}, band{0};
  std::atomic<int64_t> p99{-1};
  std::atomic<uint8_t> state{0};
  std::atomic<uint64_t> epochs{0}, turns{0}, over{0}, sweeps{0}, changes{0}, waits{0}, ramp_sweeps{0};
  void publish(const HillClimber& c, double share_now, double last_rate, int64_t last_p99) {
    share = share_now, ceiling = c.ceiling(), rate = last_rate, p99 = last_p99;
    state = uint8_t(c.state());
    epochs = c.epochs(), turns = c.turns(), over = c.over_bound(), sweeps = c.sweeps();
    band = c.band(), changes = c.changes(), waits = c.waits(), ramp_sweeps = c.ramp_sweeps();
  }
};

class SharedClimber {
 public:
  SharedClimber(const BalanceParams& p, double start, uint32_t workers, uint64_t interval_ns)
      : params_(p), climber_(p, start), slots_(std::max(1u, workers)), base_(slots_.size()), interval_ns_(interval_ns) {
    share_.store(climber_.share(), std::memory_order_relaxed);
    stats_.publish(climber_, climber_.share(), 0, -1);
  }

  double share() const { return share_.load(std::memory_order_relaxed); }
  const ClimberStats& stats() const { return stats_; }
  uint32_t workers() const { return uint32_t(slots_.size()); }
  uint64_t updates() const { return updates_.load(std::memory_order_relaxed); }
  // Packets counted in the epochs that ended.
  uint64_t counted() const { return counted_.load(std::memory_order_relaxed); }

  // Worker w's batch at `now` (ns): its packets out so far (sent or
  // dropped, cumulative) and the batch's fill (0..1). `p99` gives the p99 of
  // the worker's device batches since it last closed an epoch (< 0: none),
  // and is called at most once an epoch. True when this call ended an epoch
  // (the share may have changed).
  template <class P99>
  bool observe(uint32_t w, uint64_t now, uint64_t out, double fill, P99&& p99) {
    Slot& s = slots_[w];
    s.out.store(out, std::memory_order_relaxed);
    s.batches.store(s.batches.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    s.fill.store(s.fill.load(std::memory_order_relaxed) + fill, std::memory_order_relaxed);
    // (the epoch before its end: an update stores the end, then the epoch,
    // so an epoch read here never comes with an older end; read the other
    // way, a worker late past the grace could end the next epoch at its start)
    const uint64_t e = epoch_.load(std::memory_order_acquire);
    const uint64_t end = end_ns_.load(std::memory_order_acquire);
    if (end == 0) return begin(now);  // (the first batch of all)
    if (now < end) return false;
    if (s.closed.load(std::memory_order_relaxed) != e) {
      s.p99.store(p99(), std::memory_order_relaxed);
      s.closed.store(e, std::memory_order_release);
    }
    if (!all_closed(e) && now < end + interval_ns_ / 8) return false;
    return update(e, now);
  }

  // The `fraction` handler: the share now; climbing resumes from it.
  void set(double f) {
    std::lock_guard<std::mutex> l(mu_);
    climber_ = HillClimber(params_, f, false);
    share_.store(climber_.share(), std::memory_order_relaxed);
    stats_.publish(climber_, climber_.share(), stats_.rate.load(), stats_.p99.load());
  }

 private:
  struct alignas(64) Slot {
    std::atomic<uint64_t> out{0}, batches{0}, closed{0};
    std::atomic<double> fill{0};
    std::atomic<int64_t> p99{-1};
  };
  struct Base {  // a worker's counts at the epoch's start (under mu_)
    uint64_t out = 0, batches = 0;
    double fill = 0;
  };
  bool all_closed(uint64_t e) const {
    for (const Slot& s : slots_)
      if (s.closed.load(std::memory_order_acquire) != e) return false;
    return true;
  }
  void take_bases() {
    for (size_t w = 0; w < slots_.size(); ++w)
      base_[w] = {slots_[w].out.load(std::memory_order_relaxed), slots_[w].batches.load(std::memory_order_relaxed),
                  slots_[w].fill.load(std::memory_order_relaxed)};
  }
  bool begin(uint64_t now) {
    std::unique_lock<std::mutex> l(mu_, std::try_to_lock);
    if (!l.owns_lock() || end_ns_.load(std::memory_order_relaxed) != 0) return false;
    take_bases();
    start_ns_ = now;
    end_ns_.store(now + epoch_ns(), std::memory_order_release);
    return false;
  }
  bool update(uint64_t e, uint64_t now) {
    std::unique_lock<std::mutex> l(mu_, std::try_to_lock);
    if (!l.owns_lock() || epoch_.load(std::memory_order_relaxed) != e) return false;  // (another worker did)
    uint64_t out = 0, batches = 0;
    double fill = 0;
    int64_t p99 = -1;
    for (size_t w = 0; w < slots_.size(); ++w) {  // (each count read once: what it holds now starts the next epoch)
      const Slot& s = slots_[w];
      const Base now_w{s.out.load(std::memory_order_relaxed), s.batches.load(std::memory_order_relaxed),
                       s.fill.load(std::memory_order_relaxed)};
      out += now_w.out - base_[w].out;
      batches += now_w.batches - base_[w].batches;
      fill += now_w.fill - base_[w].fill;
      base_[w] = now_w;
      if (s.closed.load(std::memory_order_acquire) == e) p99 = std::max(p99, s.p99.load(std::memory_order_relaxed));
    }
    const double secs = double(std::max<uint64_t>(1, now - start_ns_)) / 1e9, rate = double(out) / secs;
    const double share = climber_.update(rate, batches ? fill / double(batches) : 1, double(p99));
    start_ns_ = now;
    share_.store(share, std::memory_order_relaxed);
    stats_.publish(climber_, share, rate, p99);
    updates_.fetch_add(1, std::memory_order_relaxed);
    counted_.fetch_add(out, std::memory_order_relaxed);
    end_ns_.store(now + epoch_ns(), std::memory_order_release);
    epoch_.store(e + 1, std::memory_order_release);
    return true;
  }
  uint64_t epoch_ns() const { return climber_.epoch_ns(interval_ns_); }

  BalanceParams params_;
  std::mutex mu_;
  HillClimber climber_;  // (under mu_)
  std::vector<Slot> slots_;
  std::vector<Base> base_;  // (under mu_)
  uint64_t start_ns_ = 0;   // (under mu_)
  uint64_t interval_ns_;
  std::atomic<uint64_t> end_ns_{0}, epoch_{1}, updates_{0}, counted_{0};
  std::atomic<double> share_{1};
  ClimberStats stats_;
};

}  // namespace shoal::offload
