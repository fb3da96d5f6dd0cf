// Click's RateEWMA: an exponentially weighted moving average of a count per
// 1 ms epoch (Click's jiffy), alpha 1/16, fixed point with 10 fractional
// bits, as Click computes it, so Meter and BandwidthMeter switch at the
// same packets as Click's.
#pragma once
#include <atomic>
#include <cstdint>

namespace shoal {

class RateEWMA {
 public:
  static constexpr unsigned kScale = 10, kStability = 4;
  static constexpr uint64_t kEpochNs = 1000000, kEpochsPerSec = 1000;
  // Counts `delta` at time now_ns (epochs that passed first fold in what
  // the last one counted, and zeros for the empty ones).
  void update(int64_t delta, uint64_t now_ns) {
    uint64_t e = now_ns / kEpochNs;
    if (!started_) {
      epoch_ = e, started_ = true;
    } else if (e > epoch_) {
      fold(current_);
      uint64_t empty = e - epoch_ - 1;
      if (empty >= 100)
        avg_ = 0;  // (Click's shortcut: a hundred empty epochs leave nothing)
      else
        for (; empty > 0; --empty) fold(0);
      current_ = 0;
      epoch_ = e;
    }
    current_ += delta;
  }
  // The average per second at now_ns, as update(0, now_ns) would leave it,
  // from a copy published by another thread (publish()): a handler's read
  // while the worker counts.
  struct Published {
    std::atomic<int64_t> avg{0}, current{0};
    std::atomic<uint64_t> epoch{0};
    std::atomic<bool> started{false};
  };
  void publish(Published& p) const {
    p.avg.store(avg_, std::memory_order_relaxed);
    p.current.store(current_, std::memory_order_relaxed);
    p.epoch.store(epoch_, std::memory_order_relaxed);
    p.started.store(started_, std::memory_order_relaxed);
  }
  static double per_second_at(const Published& p, uint64_t now_ns) {
    RateEWMA r;
    r.avg_ = p.avg.load(std::memory_order_relaxed);
    r.current_ = p.current.load(std::memory_order_relaxed);
    r.epoch_ = p.epoch.load(std::memory_order_relaxed);
    r.started_ = p.started.load(std::memory_order_relaxed);
    if (r.started_) r.update(0, now_ns);
    return r.per_second();
  }
  // The average per epoch, scaled by 2^kScale.
  int64_t scaled_average() const { return avg_; }
  // The average per second.
  double per_second() const { return double(avg_) * double(kEpochsPerSec) / double(1u << kScale); }
  // A rate per second as the scaled per-epoch value scaled_average() is
  // compared with.
  static uint64_t scaled_threshold(uint64_t per_sec) { return (per_sec << kScale) / kEpochsPerSec; }

 private:
  void fold(int64_t x) {
    int64_t xs = x * (int64_t(1) << kScale) + (int64_t(1) << (kStability - 1));
    avg_ += (xs - avg_) >> kStability;
  }
  int64_t avg_ = 0, current_ = 0;
  uint64_t epoch_ = 0;
  bool started_ = false;
};

}  // namespace shoal
