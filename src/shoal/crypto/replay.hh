// ESP's anti-replay window (RFC 4303 §3.4.3 and Appendix A): a bitmap of the
// last W sequence numbers below the highest one authenticated, 32-bit or
// extended (64-bit, of which only the low half travels: the high half is
// inferred as Appendix A2.2 says).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

namespace shoal::crypto {

class ReplayWindow {
 public:
  static constexpr uint32_t kMaxWindow = 1u << 16;

  // W = 0: no replay check (Linux's replay-window 0), sequence numbers still
  // inferred for ESN.
  explicit ReplayWindow(uint32_t w = 1024) : w_(std::min(w, kMaxWindow)), bits_((w_ + 63) / 64 + 1, 0) {}

  uint32_t size() const { return w_; }
  uint64_t top() const { return top_; }

  // The full sequence number a packet carrying `low` stands for: with ESN,
  // the high half that puts it in or just above the window (RFC 4303
  // A2.2); without, `low` itself.
  uint64_t infer(uint32_t low, bool esn) const {
    if (!esn) return low;
    uint32_t tl = uint32_t(top_), th = uint32_t(top_ >> 32);
    uint32_t w = std::max<uint32_t>(w_, 1);
    if (tl >= w - 1) {  // the window does not span a wrap of the low half
      if (low >= tl - (w - 1)) return (uint64_t(th) << 32) | low;
      return (uint64_t(th + 1) << 32) | low;  // above: the low half wrapped
    }
    if (low >= tl - (w - 1)) return (th ? uint64_t(th - 1) << 32 : 0) | low;  // below: before the wrap
    return (uint64_t(th) << 32) | low;
  }

  // Whether `seq` may be accepted (not 0 without ESN, not seen, not below
  // the window). Called before the ICV check; update() after it.
  bool check(uint64_t seq, bool esn) const {
    if (!esn && seq == 0) return false;
    if (w_ == 0 || seq > top_) return true;
    uint64_t back = top_ - seq;
    if (back >= w_) return false;
    return !test(seq);
  }
  // Records `seq` as received (its ICV verified).
  void update(uint64_t seq) {
    if (seq > top_) {
      uint64_t shift = seq - top_;
      if (shift >= uint64_t(w_) + 64)
        std::fill(bits_.begin(), bits_.end(), 0);
      else
        for (uint64_t s = top_ + 1; s <= seq; ++s) clear(s);
      top_ = seq;
    }
    if (w_) set(seq);
  }

 private:
  size_t nbits() const { return bits_.size() * 64; }
  bool test(uint64_t s) const { return (bits_[(s % nbits()) / 64] >> (s % 64)) & 1; }
  void set(uint64_t s) { bits_[(s % nbits()) / 64] |= uint64_t(1) << (s % 64); }
  void clear(uint64_t s) { bits_[(s % nbits()) / 64] &= ~(uint64_t(1) << (s % 64)); }

  uint32_t w_;
  uint64_t top_ = 0;  // the highest sequence number authenticated
  std::vector<uint64_t> bits_;
};

}  // namespace shoal::crypto
