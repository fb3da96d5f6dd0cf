#include "shoal/routing/lpm6_build.hh"

#include <algorithm>
#include <map>
#include <unordered_map>

namespace shoal::k {

namespace {
struct Key {
  uint64_t hi, lo;
  bool operator==(const Key& o) const { return hi == o.hi && lo == o.lo; }
};
struct KeyHash {
  size_t operator()(const Key& k) const { return size_t(lpm6_hash(k.hi, k.lo, 0)); }
};
struct Entry {
  int32_t nexthop = -1;  // >= 0: a real prefix of this length
  int32_t bmp = -1;
};
}  // namespace

void Lpm6Table::build(const std::vector<Prefix6>& routes) {
  lens_.clear();
  base_.clear();
  mask_.clear();
  slots_.clear();
  dflt_ = -1;
  markers_ = 0;
  // Real prefixes by length (the last duplicate wins).
  std::map<uint8_t, std::unordered_map<Key, Entry, KeyHash>> by_len;
  for (auto& r : routes) {
    if (r.len == 0) {
      dflt_ = r.nexthop;
      continue;
    }
    by_len[r.len][Key{r.hi, r.lo}].nexthop = r.nexthop;
  }
  for (auto& [len, m] : by_len) lens_.push_back(len);
  const int32_t n = int32_t(lens_.size());
  std::vector<std::unordered_map<Key, Entry, KeyHash>*> tab;
  tab.reserve(by_len.size());
  for (auto& [len, m] : by_len) tab.push_back(&m);
  // Markers: on the search path to each prefix's length, every length the
  // search visits and must continue past gets a marker.
  std::vector<std::pair<int32_t, Key>> add;
  for (int32_t i = 0; i < n; ++i)
    for (auto& [key, e] : *tab[size_t(i)]) {
      int32_t a = 0, b = n - 1;
      while (a <= b) {
        int32_t mid = (a + b) / 2;
        if (mid == i) break;
        if (mid < i) {
          uint64_t mh, ml;
          lpm6_mask(key.hi, key.lo, lens_[size_t(mid)], mh, ml);
          add.push_back({mid, Key{mh, ml}});
          a = mid + 1;
        } else {
          b = mid - 1;
        }
      }
    }
  for (auto& [i, key] : add) {
    auto [it, fresh] = tab[size_t(i)]->try_emplace(key);
    markers_ += fresh;
  }
  // Each entry's best matching prefix: the longest real prefix of length at
  // most the entry's that covers it.
  for (int32_t i = 0; i < n; ++i)
    for (auto& [key, e] : *tab[size_t(i)]) {
      e.bmp = dflt_;
      for (int32_t j = i; j >= 0; --j) {
        uint64_t mh, ml;
        lpm6_mask(key.hi, key.lo, lens_[size_t(j)], mh, ml);
        auto it = tab[size_t(j)]->find(Key{mh, ml});
        if (it != tab[size_t(j)]->end() && it->second.nexthop >= 0) {
          e.bmp = it->second.nexthop;
          break;
        }
      }
    }
  // Flat open-addressing tables, at most half full.
  for (int32_t i = 0; i < n; ++i) {
    size_t want = std::max<size_t>(8, tab[size_t(i)]->size() * 2);
    size_t cap = 8;
    while (cap < want) cap <<= 1;
    base_.push_back(uint32_t(slots_.size()));
    mask_.push_back(uint32_t(cap - 1));
    slots_.resize(slots_.size() + cap, Lpm6Slot{0, 0, -1, 0});
    Lpm6Slot* s = slots_.data() + base_.back();
    for (auto& [key, e] : *tab[size_t(i)]) {
      uint32_t j = uint32_t(lpm6_hash(key.hi, key.lo, lens_[size_t(i)])) & uint32_t(cap - 1);
      while (s[j].used) j = (j + 1) & uint32_t(cap - 1);
      s[j] = Lpm6Slot{key.hi, key.lo, e.bmp, 1};
    }
  }
}

int32_t lpm6_linear(const std::vector<Prefix6>& routes, uint64_t hi, uint64_t lo) {
  int32_t best = -1, best_len = -1;
  for (auto& r : routes) {
    uint64_t mh, ml;
    lpm6_mask(hi, lo, r.len, mh, ml);
    if (mh == r.hi && ml == r.lo && int32_t(r.len) >= best_len) best = r.nexthop, best_len = r.len;
  }
  return best;
}

}  // namespace shoal::k
