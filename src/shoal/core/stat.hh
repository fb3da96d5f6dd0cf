// A counter written by one worker and read by any thread (handlers, status
// line). Relaxed load+store, no locked read-modify-write on the fast path.
#pragma once
#include <atomic>
#include <cstdint>

namespace shoal {

class Stat {
 public:
  void add(uint64_t n = 1) { v_.store(v_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed); }
  uint64_t get() const { return v_.load(std::memory_order_relaxed); }
  void set(uint64_t n) { v_.store(n, std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> v_{0};
};

}  // namespace shoal
