// RecordTimestamp's table, which TimestampDiff reads (its RECORDER).
#pragma once
#include <memory>

#include "shoal/elements/analysis/latency.hh"

namespace shoal::latency {

// One RecordTimestamp's times, shared by every worker's copy and by the
// TimestampDiff elements that name it: slot i holds the time packet i
// passed (sampled: packet i*SAMPLE), 0 before, kTaken once read.
struct Recorded {
  static constexpr uint64_t kTaken = ~uint64_t(0);
  std::unique_ptr<Slots> times;  // made by the first copy's initialize
  uint64_t sample = 1;
  std::atomic<uint64_t> next{0};  // without OFFSET: the next slot, in arrival order
  std::atomic<uint64_t> recorded{0}, out_of_range{0};
  // The time recorded for packet `number`, taken (a second read gets 0);
  // 0 when none was recorded.
  uint64_t take(uint64_t number) {
    if (sample > 1) number /= sample;
    if (!times || number >= times->limit()) return 0;
    std::atomic<uint64_t>* s = times->at(number, false);
    if (!s) return 0;
    const uint64_t t = s->exchange(kTaken, std::memory_order_acq_rel);
    return t == kTaken ? 0 : t;
  }
};

// The key of a RecordTimestamp's table among the runtime's shared state.
inline std::string recorded_key(const std::string& element) { return "record-timestamp:" + element; }

}  // namespace shoal::latency
