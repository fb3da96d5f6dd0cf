// ESP's anti-replay window (RFC 4303 §3.4.3 and Appendix A): a bitmap of the
// last W sequence numbers below the highest one authenticated, 32-bit or
// extended (64-bit, of which only the low half travels: the high half is
// inferred as Appendix A2.2 says).
#pragma once
#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <memory>

namespace shoal::crypto {

class ReplayWindow {
 public:
  static constexpr uint32_t kMaxWindow = 1u << 16;

  // W = 0: no replay check (Linux's replay-window 0), sequence numbers still
  // inferred for ESN. The bitmap: a power of two of words (a mask, not a
  // division, on every packet), at least one word more than the window (the
  // word the top is in).
  explicit ReplayWindow(uint32_t w = 1024)
      : w_(std::min(w, kMaxWindow)),
        words_(std::bit_ceil(size_t(w_ + 63) / 64 + 1)),
        mask_(words_ * 64 - 1),
        bits_(new std::atomic<uint64_t>[words_]) {
    for (size_t i = 0; i < words_; ++i) bits_[i].store(0, std::memory_order_relaxed);
  }

  // Concurrency: update() is called by one thread at a time (the SA's lock
  // held); infer() and check() may be called without it, as the receiver's
  // check before the ICV's is (RFC 4303 3.4.3: a replay is refused before
  // it costs a decryption): they may then miss a number being recorded at
  // that moment (the check after the ICV's, under the lock, refuses it) but
  // never refuse one not yet seen. The top is published after the bits a
  // shift cleared (release), so a reader who sees it sees them cleared.
  uint32_t size() const { return w_; }
  uint64_t top() const { return top_.load(std::memory_order_acquire); }

  // The full sequence number a packet carrying `low` stands for: with ESN,
  // the high half that puts it in or just above the window (RFC 4303
  // A2.2); without, `low` itself.
  uint64_t infer(uint32_t low, bool esn) const {
    if (!esn) return low;
    const uint64_t top = this->top();
    uint32_t tl = uint32_t(top), th = uint32_t(top >> 32);
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
    const uint64_t top = this->top();
    if (w_ == 0 || seq > top) return true;
    uint64_t back = top - seq;
    if (back >= w_) return false;
    return !test(seq);
  }
  // Records `seq` as received (its ICV verified).
  void update(uint64_t seq) {
    const uint64_t top = top_.load(std::memory_order_relaxed);
    if (seq > top) {
      uint64_t shift = seq - top;
      if (shift >= uint64_t(w_) + 64)
        for (size_t i = 0; i < words_; ++i) bits_[i].store(0, std::memory_order_relaxed);
      else
        for (uint64_t s = top + 1; s <= seq; ++s) clear(s);
      top_.store(seq, std::memory_order_release);
    }
    if (w_) set(seq);
  }

 private:
  std::atomic<uint64_t>& word(uint64_t s) const { return bits_[(s & mask_) / 64]; }
  bool test(uint64_t s) const { return (word(s).load(std::memory_order_relaxed) >> (s % 64)) & 1; }
  // (the writer is alone: a load and a store, not a read-modify-write)
  void set(uint64_t s) {
    auto& w = word(s);
    w.store(w.load(std::memory_order_relaxed) | uint64_t(1) << (s % 64), std::memory_order_relaxed);
  }
  void clear(uint64_t s) {
    auto& w = word(s);
    w.store(w.load(std::memory_order_relaxed) & ~(uint64_t(1) << (s % 64)), std::memory_order_relaxed);
  }

  uint32_t w_;
  size_t words_;
  uint64_t mask_;                 // the bitmap's bits, less one
  std::atomic<uint64_t> top_{0};  // the highest sequence number authenticated
  std::unique_ptr<std::atomic<uint64_t>[]> bits_;
};

}  // namespace shoal::crypto
