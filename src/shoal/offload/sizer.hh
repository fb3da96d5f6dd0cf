// GPUNFV's dynamic batch sizing (Zhang et al., APNet 2017, section 3.5),
// and past it. GPUNFV grows the batch until the CPU no longer waits for the
// GPU, and only grows it. This sizer, per offloading element:
//   ramps up  as GPUNFV does, at the start: the aggregate (in batches, up to
//             the configured most) grows each time one is ready while the
//             device is still busy with the one before (the CPU would wait);
//             the ramp ends at the first launch that finds the device idle;
//   climbs    then on the element's throughput (packets delivered per unit
//             of time, an epoch of at least 8 aggregates and 5 ms at a
//             time): it tries a larger or a smaller
//             aggregate, keeps the change when the next epoch but one (the
//             one between still finishes aggregates of the old size) is no
//             slower, and turns back otherwise, waiting longer before each
//             new try in that direction (1, 2, 4 .. 64 epochs). "The device
//             is idle" is not the criterion past the ramp: a fast device
//             (a GPU) is idle at every size, and a small aggregate then
//             costs the host its fixed costs (launches, copies, completion)
//             on fewer packets (measured on an H200: the idle rule settled
//             at 5 batches, 0.63x the CPU chain, where 64 made 1.24x). On
//             a flat top it drifts to the smaller size, which waits less:
//             a smaller one is kept unless it is slower (by 1%), a larger
//             one only when it is faster (by 3%);
//   shrinks   it by half when an aggregate took longer than the latency
//             bound (from its first batch's arrival to its completion),
//             caps the climb there, and raises the cap again a step at a
//             time after epochs within the bound;
//   falls back to the CPU at low rates: an aggregate sent by the timeout
//             with fewer packets than `cpu_below` runs on the CPU (a nearly
//             empty launch costs the device's whole fixed latency).
// Pure logic (the caller passes the times), so it is tested on its own.
#pragma once
#include <algorithm>
#include <cstdint>

namespace shoal::offload {

class BatchSizer {
 public:
  struct Config {
    uint32_t min = 1, max = 32;  // batches per aggregate
    uint32_t latency_us = 0;     // bound (0: none)
    uint32_t cpu_below = 0;      // packets (0: never to the CPU)
  };
  static constexpr uint32_t kHold = 8;             // launches without growth after a latency shrink
  static constexpr uint32_t kEpochAggregates = 8;  // an epoch: at least this many aggregates
  static constexpr uint64_t kEpochNs = 5'000'000;  // ... and this long
  static constexpr double kNoise = 0.03;           // a larger size is kept when this much faster
  static constexpr double kSlack = 0.01;           // a smaller one unless this much slower
  static constexpr uint32_t kMaxBackoff = 64;      // epochs
  static constexpr uint32_t kRelax = 10;           // epochs within the bound before the cap rises

  explicit BatchSizer(const Config& c) : c_(c) {
    c_.min = std::max(1u, c_.min);
    c_.max = std::max(c_.min, c_.max);
    target_ = c_.min;
    cap_ = c_.max;
  }
  uint32_t target() const { return target_; }
  uint64_t grows() const { return grows_; }
  uint64_t shrinks() const { return shrinks_; }
  uint64_t epochs() const { return epochs_; }
  bool ramping() const { return ramp_; }

  // An aggregate is launched; `device_busy`: the one before has not completed.
  void launched(bool device_busy) {
    if (hold_) --hold_;
    if (!ramp_) return;
    if (!device_busy) {
      ramp_ = false;
      return;
    }
    if (!hold_ && target_ < cap_) set(std::min(cap_, target_ + std::max(1u, target_ / 2)));
  }
  // An aggregate completed `latency_us` after its first batch arrived.
  void completed(uint64_t latency_us) {
    if (!c_.latency_us || latency_us <= c_.latency_us) return;
    hold_ = kHold;
    over_ = true;
    within_ = 0;
    if (target_ > c_.min) set(std::max(c_.min, target_ / 2));
    cap_ = target_;
    probe_ = settle_ = false;  // (what the epoch measures is the overrun's)
  }
  // `packets` were delivered at `now_ns` (an aggregate completed): the
  // throughput the climb compares, an epoch at a time.
  void delivered(uint32_t packets, uint64_t now_ns) {
    if (!t0_) {
      t0_ = now_ns;
      return;
    }
    n_ += packets;
    if (++aggs_ < kEpochAggregates || now_ns - t0_ < kEpochNs) return;
    const double rate = double(n_) / double(now_ns - t0_);
    t0_ = now_ns, n_ = 0, aggs_ = 0;
    epoch(rate);
  }
  // Whether an aggregate of `packets` that the timeout sent should run on the CPU.
  bool to_cpu(uint32_t packets) const { return packets < c_.cpu_below; }

 private:
  void set(uint32_t t) {
    if (t > target_) ++grows_;
    if (t < target_) ++shrinks_;
    target_ = t;
  }
  void epoch(double rate) {
    ++epochs_;
    if (c_.latency_us) {
      if (over_) {
        over_ = false;
        return;
      }
      if (cap_ < c_.max && ++within_ >= kRelax) cap_ = std::min(c_.max, cap_ + std::max(1u, cap_ / 2)), within_ = 0;
    }
    if (ramp_) return;
    if (settle_) {  // the epoch after a change: aggregates of the old size still finish in it
      settle_ = false;
      return;
    }
    if (probe_) {
      probe_ = false;
      const bool grew = target_ > before_target_;
      // (a smaller size may cost a little, not the noise band: steps that
      // each lose less than the noise would walk down a slope)
      const bool keep = grew ? rate > before_rate_ * (1 + kNoise) : rate >= before_rate_ * (1 - kSlack);
      if (!keep) {
        set(before_target_);
        back_[grew] = std::min(kMaxBackoff, back_[grew] ? 2 * back_[grew] : 1);
        wait_[grew] = back_[grew];
        dir_ = grew ? -1 : 1;
        settle_ = true;
        return;
      }
      back_[grew] = 0;
    }
    // the next try: this direction unless it waits (or is at its end), else the other
    const int first = dir_;
    for (int k = 0; k < 2; ++k, dir_ = -dir_) {
      const bool up = dir_ > 0;
      const uint32_t next = up ? std::min(cap_, target_ + std::max(1u, target_ / 2))
                               : std::max(c_.min, target_ - std::max(1u, target_ / 3));
      if (next == target_) continue;
      if (wait_[up]) {
        --wait_[up];
        continue;
      }
      before_target_ = target_;
      before_rate_ = rate;
      set(next);
      probe_ = settle_ = true;
      return;
    }
    dir_ = first;
  }

  Config c_;
  uint32_t target_ = 1, cap_ = 1, hold_ = 0, within_ = 0;
  bool ramp_ = true, over_ = false, probe_ = false, settle_ = false;
  int dir_ = 1;
  uint32_t before_target_ = 0;
  double before_rate_ = 0;
  uint32_t back_[2] = {}, wait_[2] = {};  // per direction (0: down, 1: up): the backoff and the epochs left of it
  uint64_t t0_ = 0, n_ = 0;
  uint32_t aggs_ = 0;
  uint64_t grows_ = 0, shrinks_ = 0, epochs_ = 0;
};

}  // namespace shoal::offload
