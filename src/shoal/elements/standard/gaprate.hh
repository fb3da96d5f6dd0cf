// Click's GapRate (Shaper, BandwidthShaper): lets a count through at RATE
// per second with few bursts: within each second, what may have gone by
// now (the second's elapsed share of RATE) against what went. As Click
// computes it, in fixed point (a gap of 2^43 / RATE microseconds), so a
// configuration shapes the same.
#pragma once
#include <cstdint>

namespace shoal {

class GapRate {
 public:
  static constexpr unsigned kShift = 43;
  static constexpr uint64_t kMaxRate = 1000000ULL << kShift;

  void set_rate(uint64_t r, uint64_t now_ns) {
    if (r > kMaxRate) r = kMaxRate;
    if (r == rate_) return;
    rate_ = r;
    ugap_ = r == 0 ? kMaxRate + 1 : kMaxRate / r;
    if (sec_ >= 0 && r != 0) count_ = int64_t((usec(now_ns) << kShift) / ugap_);
  }
  uint64_t rate() const { return rate_; }
  void reset() { sec_ = -1; }
  // Whether one more may go at now_ns.
  bool need_update(uint64_t now_ns) {
    const uint64_t us = usec(now_ns), need = (us << kShift) / ugap_;
    const int64_t sec = int64_t(now_ns / 1000000000);
    if (sec_ < 0) {  // (after a reset one may go at once, unless RATE is 0)
      sec_ = sec;
      count_ = int64_t(need + (((us << kShift) - need * ugap_) > ugap_ / 2));
    } else if (sec > sec_) {
      sec_ = sec;
      if (count_ > 0) count_ -= int64_t(rate_);
    }
    return int64_t(need) >= count_;
  }
  // How many may go at once at now_ns (after need_update(now_ns) held).
  uint64_t allowed(uint64_t now_ns) const { return (usec(now_ns) << kShift) / ugap_ - uint64_t(count_) + 1; }
  void update_with(int64_t n) { count_ += n; }
  // When need_update will next hold (ns on the same clock); 0 when unknown
  // (no rate or not started).
  uint64_t expiry_ns() const {
    if (sec_ < 0 || rate_ == 0) return 0;
    if (count_ < 0) return uint64_t(sec_) * 1000000000;
    uint64_t sec = uint64_t(sec_), count = uint64_t(count_);
    if (count >= rate_) sec += count / rate_, count %= rate_;
    return sec * 1000000000 + ((count * ugap_) >> kShift) * 1000;
  }

 private:
  static uint64_t usec(uint64_t ns) { return ns / 1000 % 1000000; }
  uint64_t ugap_ = kMaxRate + 1, rate_ = 0;
  int64_t count_ = 0, sec_ = -1;
};

}  // namespace shoal
