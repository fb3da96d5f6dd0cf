// Click's random numbers. Click draws from the C library's random(), seeded
// by srandom() (RandomSeed), and picks in a range with click_random(low,
// high); elements that choose at random (the rewriters' port ranges) use
// the same generator and the same arithmetic, so a configuration with
// RandomSeed(S) draws exactly what Click draws. Each worker has its own
// generator (seeded S + worker, so worker 0 matches Click); the sequence is
// glibc's additive feedback generator (TYPE_3), reimplemented so it is per
// worker and independent of anything else in the process calling random().
#pragma once
#include <array>
#include <cstdint>
#include <deque>
#include <mutex>

#include "shoal/core/runtime.hh"

namespace shoal {

class ClickRandom {
 public:
  explicit ClickRandom(uint32_t seed = 1) { srandom(seed); }
  // glibc's srandom_r: 31 words from a Lehmer generator, then 310 drawn
  // and dropped.
  void srandom(uint32_t seed) {
    std::array<int32_t, 31> r{};
    r[0] = int32_t(seed ? seed : 1);
    for (int i = 1; i < 31; ++i) {
      int64_t hi = r[i - 1] / 127773, lo = r[i - 1] % 127773;
      int64_t w = 16807 * lo - 2836 * hi;
      if (w < 0) w += 2147483647;
      r[i] = int32_t(w);
    }
    for (int i = 0; i < 31; ++i) s_[i] = uint32_t(r[i]);
    f_ = 3, b_ = 0;
    for (int i = 0; i < 310; ++i) random();
  }
  // random(): 0 .. 2^31 - 1
  uint32_t random() {
    s_[f_] += s_[b_];
    uint32_t out = s_[f_] >> 1;
    f_ = f_ == 30 ? 0 : f_ + 1;
    b_ = b_ == 30 ? 0 : b_ + 1;
    return out;
  }
  // click_random(low, high): low..high inclusive, uniform (rejection).
  uint32_t range(uint32_t low, uint32_t high) {
    constexpr uint32_t kMax = 0x7fffffffu;  // CLICK_RAND_MAX
    if (low >= high) return low;
    uint32_t r;
    if (high - low > kMax) {
      while ((r = (random() << 17) ^ (random() >> 14)) > high - low) {}
      return r + low;
    }
    if (high == low + 1) return low + ((random() >> 14) & 1);
    uint32_t count = (kMax + 1u) / (high - low + 1), max = count * (high - low + 1);
    while ((r = random()) >= max) {}
    return r / count + low;
  }

 private:
  std::array<uint32_t, 31> s_{};
  int f_ = 3, b_ = 0;
};

// The runtime's generators, one per worker (made on first use; an element
// keeps the pointer it got at initialize).
class ClickRandoms {
 public:
  ClickRandom& of(int worker) {
    std::lock_guard<std::mutex> g(mu_);
    while (int(w_.size()) <= worker) w_.emplace_back(uint32_t(1 + w_.size()));
    return w_[size_t(worker)];
  }

 private:
  std::mutex mu_;
  std::deque<ClickRandom> w_;  // (a deque: growing never moves them)
};

inline ClickRandom& click_random_of(Runtime& rt, int worker) { return rt.extension<ClickRandoms>().of(worker); }

}  // namespace shoal
