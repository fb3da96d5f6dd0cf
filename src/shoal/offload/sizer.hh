// GPUNFV's dynamic batch sizing (Zhang et al., APNet 2017, section 3.5),
// and past it. GPUNFV grows the batch until the CPU no longer waits for the
// GPU, and only grows it. This sizer, per offloading element:
//   grows     the aggregate (in batches, up to the configured most) each
//             time one is ready while the device is still busy with the one
//             before: the CPU would wait, and a larger aggregate amortises
//             the device's fixed costs (copies, launches) over more packets;
//   shrinks   it by half when an aggregate took longer than the latency
//             bound (from its first batch's arrival to its completion), and
//             does not grow again for a while; and slowly, by an eighth,
//             after a run of aggregates that found the device idle (a
//             smaller one then costs nothing and waits less);
//   falls back to the CPU at low rates: an aggregate sent by the timeout
//             with fewer packets than `cpu_below` runs on the CPU (a nearly
//             empty launch costs the device's whole fixed latency).
// Pure logic (no clock, no device), so it is tested on its own.
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
  static constexpr uint32_t kIdleRun = 16;  // idle launches before a slow shrink
  static constexpr uint32_t kHold = 8;      // launches without growth after a latency shrink

  explicit BatchSizer(const Config& c) : c_(c) {
    c_.min = std::max(1u, c_.min);
    c_.max = std::max(c_.min, c_.max);
    target_ = c_.min;
  }
  uint32_t target() const { return target_; }
  uint64_t grows() const { return grows_; }
  uint64_t shrinks() const { return shrinks_; }

  // An aggregate is launched; `device_busy`: the one before has not completed.
  void launched(bool device_busy) {
    if (hold_) --hold_;
    if (device_busy) {
      idle_ = 0;
      if (!hold_ && target_ < c_.max) {
        target_ = std::min(c_.max, target_ + std::max(1u, target_ / 2));
        ++grows_;
      }
    } else if (++idle_ >= kIdleRun) {
      idle_ = 0;
      if (target_ > c_.min) {
        target_ = std::max(c_.min, target_ - std::max(1u, target_ / 8));
        ++shrinks_;
      }
    }
  }
  // An aggregate completed `latency_us` after its first batch arrived.
  void completed(uint64_t latency_us) {
    if (!c_.latency_us || latency_us <= c_.latency_us) return;
    hold_ = kHold;
    if (target_ > c_.min) {
      target_ = std::max(c_.min, target_ / 2);
      ++shrinks_;
    }
  }
  // Whether an aggregate of `packets` that the timeout sent should run on the CPU.
  bool to_cpu(uint32_t packets) const { return packets < c_.cpu_below; }

 private:
  Config c_;
  uint32_t target_ = 1, idle_ = 0, hold_ = 0;
  uint64_t grows_ = 0, shrinks_ = 0;
};

}  // namespace shoal::offload
