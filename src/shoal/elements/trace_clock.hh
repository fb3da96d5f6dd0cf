// TraceClock: a capture's time on each worker, the latest timestamp its
// reader (FromDump) has read, the worker's own packets and those it left to
// the others. Every worker reads the whole file, so at the end each knows
// the trace's last time, whichever worker had the last packet: the flow
// layer ends the flows whose timeout had passed by then as timed out at a
// stop on every worker alike (one worker or several give the same records).
// One per runtime; each worker writes and reads its own slot only.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>

#include "shoal/elements/common.hh"

namespace shoal {

class TraceClock {
 public:
  static std::shared_ptr<TraceClock> of(Element* e) { return shared_state_named<TraceClock>(e, "trace-clock"); }
  // (a worker past the slots keeps no trace time: its flows end as 'end')
  void advance(int worker, uint64_t ns) {
    if (worker >= 0 && worker < kSlots && ns > slot_[worker].ns.load(std::memory_order_relaxed))
      slot_[worker].ns.store(ns, std::memory_order_relaxed);
  }
  uint64_t get(int worker) const {
    return worker >= 0 && worker < kSlots ? slot_[worker].ns.load(std::memory_order_relaxed) : 0;
  }

 private:
  static constexpr int kSlots = 1024;
  struct alignas(64) Slot {
    std::atomic<uint64_t> ns{0};
  };
  std::unique_ptr<Slot[]> slot_ = std::make_unique<Slot[]>(kSlots);
};

}  // namespace shoal
