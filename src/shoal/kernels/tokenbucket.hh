// A token bucket (host+device) kept in a flow's state: `rate` tokens a
// second up to `burst`, one token per packet or per byte. Tokens are kept
// in token-nanoseconds so no fraction of a token is lost between packets.
#pragma once
#include "shoal/kernels/hd.hh"

namespace shoal::k {

struct TokenBucket {
  uint64_t credit;   // tokens x 1e9
  uint64_t last_ns;  // the last refill (0: a new bucket, full)
};

struct TokenRate {
  uint64_t rate = 1;   // tokens a second (> 0)
  uint64_t burst = 1;  // bucket size in tokens (> 0, at most 1.8e10)
};

// Refills the bucket to `now` and takes `cost` tokens when it holds them:
// true when the packet conforms. Time that goes back refills nothing.
SHOAL_HD bool tb_take(TokenBucket& b, const TokenRate& r, uint64_t now, uint64_t cost) {
  const uint64_t full = r.burst * 1000000000ull;
  if (b.last_ns == 0) {
    b.credit = full;
  } else if (now > b.last_ns) {
    uint64_t dt = now - b.last_ns;
    uint64_t room = full - b.credit;
    // dt * rate overflows only when it is far past what fills the bucket
    b.credit = dt >= room / r.rate + 1 ? full : b.credit + dt * r.rate;
    if (b.credit > full) b.credit = full;
  }
  if (now > b.last_ns) b.last_ns = now;
  uint64_t need = cost * 1000000000ull;
  if (b.credit < need) return false;
  b.credit -= need;
  return true;
}

}  // namespace shoal::k
