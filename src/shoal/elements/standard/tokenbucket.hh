// The token bucket of Click's rated elements (RatedUnqueue, RatedSplitter and
// their Bandwidth forms), as Click computes it, so a configuration passes
// the same packets: a 32-bit counter of tokens scaled by
// floor(2^32 / capacity), refilled by whole 1 ms ticks at
// floor(RATE * scale / 1000) per tick; it starts full.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include <fmt/format.h>

#include "shoal/core/args.hh"

namespace shoal {

// Whole bytes per second, rounded; a bandwidth past 2^63 (beyond any link,
// or infinite after its unit's scaling) is 2^63 - 1, so that the integer
// arithmetic of the rated elements on it stays defined.
inline uint64_t whole_bytes_per_sec(const Bandwidth& bw) {
  return bw.bytes_per_sec < 9.2e18 ? uint64_t(std::llround(bw.bytes_per_sec)) : uint64_t(INT64_MAX);
}

class TokenBucket {
 public:
  TokenBucket() = default;
  TokenBucket(uint64_t rate, uint64_t capacity) { assign(rate, capacity); }
  // Click's bandwidth elements let a packet go while the bucket holds this
  // many bytes, so a packet larger than the burst still passes (it borrows).
  static constexpr uint64_t kBandwidthThreshold = 131072;
  static constexpr uint64_t kTickNs = 1000000;  // Click's jiffy (CLICK_HZ 1000)

  // RATE tokens per second, at most `capacity` held; starts full.
  void assign(uint64_t rate, uint64_t capacity) {
    rate = std::min<uint64_t>(rate, kMax);
    capacity = std::min<uint64_t>(std::max<uint64_t>(capacity, 1), kMax);
    if (rate) capacity = std::max<uint64_t>(capacity, (rate - 1) / kHz + 1);  // tokens per tick fit
    scale_ = kMax / capacity;
    per_tick_ = rate ? std::max<uint64_t>(1, rate * scale_ / kHz) : 0;
    until_full_ = per_tick_ ? (kMax - 1) / per_tick_ + 1 : UINT64_MAX;
    rate_ = rate;
    tokens_ = kMax;
    primed_ = false;
  }
  // Click's unlimited (true: every token at once) or idle (false: never
  // refills) bucket, both of the largest capacity.
  void assign(bool unlimited) {
    rate_ = unlimited ? kMax : 0;
    scale_ = 1;
    per_tick_ = unlimited ? kMax : 0;
    until_full_ = unlimited ? 1 : UINT64_MAX;
    tokens_ = kMax;
    primed_ = false;
  }
  static constexpr uint64_t max_tokens = UINT32_MAX;
  void set_full() { tokens_ = kMax; }
  void clear() { tokens_ = 0; }
  bool full() const { return tokens_ == kMax; }
  bool empty() const { return tokens_ < scale_; }
  // Click's jiffy-based refill and wait: at tick `tick` (1 ms each), and
  // the ticks from the last refill until contains(t) holds. As Click's, a
  // refill at an earlier tick adds nothing and moves the time point back
  // (refill() on packet times keeps the latest instead).
  void refill_tick(uint64_t tick) {
    if (primed_ && tick < tick_) {
      tick_ = tick;
      return;
    }
    refill(tick * kTickNs);
  }
  uint64_t ticks_until_contains(uint64_t t) const {
    uint64_t at = when_contains(t);
    return at == 0 || at == UINT64_MAX ? at : at / kTickNs - tick_;
  }
  uint64_t rate() const { return rate_; }
  uint64_t capacity() const { return kMax / scale_; }
  uint64_t size() const { return tokens_ / scale_; }
  // Adds what RATE gave in the whole ticks since the last refill.
  void refill(uint64_t now_ns) {
    uint64_t tick = now_ns / kTickNs;
    if (primed_ && tick > tick_) {
      uint64_t diff = tick - tick_;
      tokens_ = diff >= until_full_ ? kMax : std::min(kMax, tokens_ + diff * per_tick_);
    }
    if (!primed_ || tick > tick_) tick_ = tick;
    primed_ = true;
  }
  bool contains(uint64_t t) const { return t <= capacity() && t * scale_ <= tokens_; }
  void remove(uint64_t t) {
    uint64_t f = t <= capacity() ? t * scale_ : kMax;
    tokens_ = f <= tokens_ ? tokens_ - f : 0;
  }
  bool remove_if(uint64_t t) {
    if (!contains(t)) return false;
    tokens_ -= t * scale_;
    return true;
  }
  // When contains(t) will hold, at the refill tick (absolute ns); 0 when it
  // holds now, UINT64_MAX when it never will.
  uint64_t when_contains(uint64_t t) const {
    if (contains(t)) return 0;
    if (t > capacity() || per_tick_ == 0) return UINT64_MAX;
    uint64_t ticks = (t * scale_ - tokens_ - 1) / per_tick_ + 1;
    return (tick_ + ticks) * kTickNs;
  }

  // Click's arguments: RATE (tokens per second; with `bandwidth`, bytes per
  // second, "200Bps", "10Mbps"), and the burst as BURST_DURATION (default
  // 20 ms of RATE) or as BURST_SIZE (BURST_BYTES for bandwidth), at least 1.
  // Bandwidth buckets hold the threshold on top of the burst.
  void configure(Args& a, bool bandwidth) {
    Duration dur{20'000'000};
    uint64_t tokens = 0, rate = 0;
    const char* size_kw = bandwidth ? "BURST_BYTES" : "BURST_SIZE";
    bool have_dur = a.has("BURST_DURATION"), have_size = a.has(size_kw);
    if (bandwidth) {
      Bandwidth bw{};
      a.read_mp("RATE", bw);
      rate = whole_bytes_per_sec(bw);
    } else {
      a.read_mp("RATE", rate);
    }
    a.read("BURST_DURATION", dur).read(size_kw, tokens);
    if (have_dur && have_size) a.fail(fmt::format("give at most one of BURST_DURATION and {}", size_kw));
    if (!have_size) tokens = uint64_t((unsigned __int128)rate * (dur.ns / 1000000) / 1000);  // Click: whole ms
    if (bandwidth) tokens += kBandwidthThreshold;
    assign(rate, tokens ? tokens : 1);
  }

 private:
  static constexpr uint64_t kMax = UINT32_MAX;  // Click's 32-bit token counter, scaled
  static constexpr uint64_t kHz = 1000;
  uint64_t rate_ = 0, scale_ = 1, per_tick_ = 0, until_full_ = UINT64_MAX, tokens_ = kMax, tick_ = 0;
  bool primed_ = false;
};

}  // namespace shoal
