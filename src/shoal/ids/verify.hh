// Snort's content/pcre verification over a payload, shared by
// payload_matches() and the engine (which answers some pcres from its
// prefilters): items_from() matches a rule's items from item k on,
// backtracking over earlier contents' occurrences within a budget.
#pragma once
#include <algorithm>
#include <cstring>

#include "shoal/ids/engine.hh"

namespace shoal::ids {

constexpr int kBacktrackBudget = 20000;

// The first occurrence of c at or after `from` that fits in [from, hi).
inline int64_t find_content(const Content& c, const uint8_t* s, int64_t from, int64_t hi) {
  const auto* pat = reinterpret_cast<const uint8_t*>(c.bytes.data());
  const int64_t m = int64_t(c.bytes.size());
  for (int64_t i = from; i + m <= hi; ++i) {
    if (c.nocase) {
      if (fold(s[i]) != fold(pat[0])) continue;
      int64_t j = 1;
      while (j < m && fold(s[i + j]) == fold(pat[j])) ++j;
      if (j == m) return i;
    } else {
      const void* q = std::memchr(s + i, pat[0], size_t(hi - m - i + 1));
      if (!q) return -1;
      i = static_cast<const uint8_t*>(q) - s;
      if (std::memcmp(s + i, pat, size_t(m)) == 0) return i;
    }
  }
  return -1;
}

// exists(k): for pcre item k, 1 or 0 when something other than PCRE2
// already knows whether it matches somewhere in the payload (the item is
// not relative and nothing after it uses its end), -1 to ask PCRE2.
template <class Exists>
bool items_from(const Rule& r, size_t k, const uint8_t* s, uint32_t n, int64_t prev_end, int& budget, Exists& exists) {
  // the end of the rule, or of the run of items in one buffer
  if (k == r.items.size() || (k > 0 && r.items[k].buf != r.items[k - 1].buf)) return true;
  if (--budget < 0) return false;  // pathological backtracking: no match (as Snort's limits)
  const Item& it = r.items[k];
  if (it.is_pcre) {
    int known = exists(k);
    size_t end = size_t(std::max<int64_t>(0, prev_end));  // unused when known: nothing reads it
    bool m;
    if (known >= 0) {
      m = known != 0;
    } else {
      size_t start = it.pcre.relative ? size_t(std::max<int64_t>(0, prev_end)) : 0;
      m = start <= n && pcre_match(it.pcre, s, n, start, end);
    }
    if (it.pcre.neg) return !m && items_from(r, k + 1, s, n, prev_end, budget, exists);
    return m && items_from(r, k + 1, s, n, int64_t(end), budget, exists);
  }
  const Content& c = it.content;
  int64_t lo, hi;
  if (c.relative()) {
    lo = prev_end + c.distance;
    hi = c.has_within ? lo + c.within : int64_t(n);
  } else {
    lo = c.has_offset ? c.offset : 0;
    hi = c.has_depth ? lo + c.depth : int64_t(n);
  }
  lo = std::max<int64_t>(lo, 0);
  hi = std::min<int64_t>(hi, n);
  if (c.neg) return find_content(c, s, lo, hi) < 0 && items_from(r, k + 1, s, n, prev_end, budget, exists);
  for (int64_t pos = find_content(c, s, lo, hi); pos >= 0; pos = find_content(c, s, pos + 1, hi)) {
    if (items_from(r, k + 1, s, n, pos + int64_t(c.bytes.size()), budget, exists)) return true;
    if (budget < 0) return false;
  }
  return false;
}

}  // namespace shoal::ids
