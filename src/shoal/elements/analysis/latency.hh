// What FastClick's latency elements share (NumberPacket, CheckNumberPacket,
// RecordTimestamp, TimestampDiff): the packet number written at an offset,
// and tables of 64-bit slots that every worker's copy of an element shares
// (packets numbered on one worker may be timed on another).
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>

#include "shoal/kernels/bytes.hh"

namespace shoal::latency {

inline uint64_t read_number(const uint8_t* at, bool net_order) {
  if (net_order) return k::load_be64(at);
  uint64_t v;
  std::memcpy(&v, at, 8);
  return v;
}
inline void write_number(uint8_t* at, uint64_t v, bool net_order) {
  if (net_order)
    k::store_be64(at, v);
  else
    std::memcpy(at, &v, 8);
}

// Slots 0..limit-1 of 64-bit values, all 0 at first, shared by threads.
// Memory comes 65,536 slots at a time when a slot of a chunk is first
// written (the first `reserve` slots at once), so a table that may grow to
// 2^32 slots costs what is used, and a slot never moves while another
// thread reads it.
class Slots {
 public:
  static constexpr uint64_t kChunk = uint64_t(1) << 16;
  static constexpr uint64_t kMaxLimit = uint64_t(1) << 32;
  Slots(uint64_t limit, uint64_t reserve)
      : limit_(limit < kMaxLimit ? limit : kMaxLimit),
        nchunks_((limit_ + kChunk - 1) / kChunk),
        dir_(new std::atomic<std::atomic<uint64_t>*>[nchunks_]()) {
    for (uint64_t i = 0; i < reserve && i < limit_; i += kChunk) at(i, true);
  }
  ~Slots() {
    for (uint64_t c = 0; c < nchunks_; ++c) delete[] dir_[c].load(std::memory_order_relaxed);
  }
  Slots(const Slots&) = delete;
  Slots& operator=(const Slots&) = delete;
  uint64_t limit() const { return limit_; }
  // Slot i (i < limit()); made with its chunk when `make`, else nullptr
  // while its chunk was never written.
  std::atomic<uint64_t>* at(uint64_t i, bool make) {
    std::atomic<std::atomic<uint64_t>*>& d = dir_[i / kChunk];
    std::atomic<uint64_t>* c = d.load(std::memory_order_acquire);
    if (!c && make) {
      auto* fresh = new std::atomic<uint64_t>[kChunk]();
      if (d.compare_exchange_strong(c, fresh, std::memory_order_acq_rel))
        c = fresh;
      else
        delete[] fresh;  // another thread's came first (c holds it)
    }
    return c ? c + i % kChunk : nullptr;
  }
  uint64_t get(uint64_t i) const {
    std::atomic<uint64_t>* c = dir_[i / kChunk].load(std::memory_order_acquire);
    return c ? c[i % kChunk].load(std::memory_order_relaxed) : 0;
  }

 private:
  uint64_t limit_, nchunks_;
  std::unique_ptr<std::atomic<std::atomic<uint64_t>*>[]> dir_;
};

}  // namespace shoal::latency
