// IPv6 longest-prefix match by binary search on prefix lengths (Waldvogel,
// Varghese, Turner, Plattner, SIGCOMM 1997; NBA §4.1). One hash table per
// distinct prefix length holds the prefixes of that length and "markers"
// that steer the search towards longer lengths; every entry carries its
// best matching prefix (bmp), so a search that fails further on still knows
// its answer. A lookup costs about log2(distinct lengths) probes: 7 at most.
// The tables are flat arrays (open addressing), so the same SHOAL_HD lookup
// runs on the CPU, the host backend and a GPU.
#pragma once
#include "shoal/kernels/hd.hh"

namespace shoal::k {

struct Lpm6Slot {
  uint64_t hi, lo;  // the address masked to the table's length; lo high bit first
  int32_t bmp;      // best matching prefix's next hop, -1: none
  uint32_t used;    // 0: empty slot
};

struct Lpm6View {
  uint32_t nlens = 0;  // distinct prefix lengths, ascending, /0 excluded
  const uint8_t* lens = nullptr;
  const uint32_t* base = nullptr;  // first slot of each length's table
  const uint32_t* mask = nullptr;  // slots - 1 per table (a power of two minus one)
  const Lpm6Slot* slots = nullptr;
  int32_t dflt = -1;  // the /0 route's next hop
};

SHOAL_HD uint64_t lpm6_hash(uint64_t hi, uint64_t lo, uint32_t len) {
  uint64_t h = hi * 0x9e3779b97f4a7c15ull ^ (lo + len) * 0xc2b2ae3d27d4eb4full;
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  return h ^ (h >> 32);
}

SHOAL_HD void lpm6_mask(uint64_t hi, uint64_t lo, uint32_t len, uint64_t& mh, uint64_t& ml) {
  mh = len == 0 ? 0 : len >= 64 ? hi : hi & (~0ull << (64 - len));
  ml = len <= 64 ? 0 : len >= 128 ? lo : lo & (~0ull << (128 - len));
}

// Where the search for (hi, lo) in the table of length index i starts
// (its home slot), with the masked address to compare.
SHOAL_HD uint32_t lpm6_home(const Lpm6View& t, uint32_t i, uint64_t hi, uint64_t lo, uint64_t& mh, uint64_t& ml) {
  uint32_t len = t.lens[i];
  lpm6_mask(hi, lo, len, mh, ml);
  return t.base[i] + (uint32_t(lpm6_hash(mh, ml, len)) & t.mask[i]);
}

// Probes the table of length index i from its home slot; the slot or nullptr.
SHOAL_HD const Lpm6Slot* lpm6_probe_from(const Lpm6View& t, uint32_t i, uint32_t home, uint64_t mh, uint64_t ml) {
  uint32_t m = t.mask[i], b = t.base[i];
  for (uint32_t j = home - b;; j = (j + 1) & m) {
    const Lpm6Slot& e = t.slots[b + j];
    if (!e.used) return nullptr;
    if (e.hi == mh && e.lo == ml) return &e;
  }
}

SHOAL_HD const Lpm6Slot* lpm6_probe(const Lpm6View& t, uint32_t i, uint64_t hi, uint64_t lo) {
  uint64_t mh, ml;
  uint32_t home = lpm6_home(t, i, hi, lo, mh, ml);
  return lpm6_probe_from(t, i, home, mh, ml);
}

// The next hop for an address given as two big-endian halves, or -1.
SHOAL_HD int32_t lpm6_lookup(const Lpm6View& t, uint64_t hi, uint64_t lo) {
  int32_t best = t.dflt;
  int32_t a = 0, b = int32_t(t.nlens) - 1;
  while (a <= b) {
    int32_t mid = (a + b) / 2;
    const Lpm6Slot* e = lpm6_probe(t, uint32_t(mid), hi, lo);
    if (e) {
      if (e->bmp >= 0) best = e->bmp;
      a = mid + 1;
    } else {
      b = mid - 1;
    }
  }
  return best;
}

// n lookups in lock-step, for the CPU: each round finds every unfinished
// search's next home slot and prefetches it, then probes them all, so the
// cache misses of a batch overlap instead of adding up along each search.
inline void lpm6_lookup_batch(const Lpm6View& t, uint32_t n, const uint64_t* hi, const uint64_t* lo, int32_t* out) {
  constexpr uint32_t kGroup = 64;
  int32_t a[kGroup], b[kGroup];
  uint32_t home[kGroup];
  uint64_t mh[kGroup], ml[kGroup];
  for (uint32_t g = 0; g < n; g += kGroup) {
    uint32_t m = n - g < kGroup ? n - g : kGroup;
    for (uint32_t i = 0; i < m; ++i) a[i] = 0, b[i] = int32_t(t.nlens) - 1, out[g + i] = t.dflt;
    for (bool more = t.nlens > 0; more;) {
      for (uint32_t i = 0; i < m; ++i) {
        if (a[i] > b[i]) continue;
        uint32_t mid = uint32_t(a[i] + b[i]) / 2;
        home[i] = lpm6_home(t, mid, hi[g + i], lo[g + i], mh[i], ml[i]);
        __builtin_prefetch(t.slots + home[i]);
      }
      more = false;
      for (uint32_t i = 0; i < m; ++i) {
        if (a[i] > b[i]) continue;
        int32_t mid = (a[i] + b[i]) / 2;
        const Lpm6Slot* e = lpm6_probe_from(t, uint32_t(mid), home[i], mh[i], ml[i]);
        if (e) {
          if (e->bmp >= 0) out[g + i] = e->bmp;
          a[i] = mid + 1;
        } else {
          b[i] = mid - 1;
        }
        more |= a[i] <= b[i];
      }
    }
  }
}

}  // namespace shoal::k
