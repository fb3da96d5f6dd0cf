#include "shoal/routing/lpm4_build.hh"

#include <algorithm>
#include <cstring>
#include <new>
#include <numeric>

#include <sys/mman.h>

namespace shoal::k {

namespace {
constexpr size_t kTbl24Bytes = sizeof(uint16_t) << 24;
}

void Lpm4Table::Unmap::operator()(uint16_t* p) const { munmap(p, kTbl24Bytes); }

namespace {
// kTbl24Bytes on a 2 MiB boundary (over-map, trim both ends), huge pages
// requested before the first touch. Anonymous memory comes zeroed.
uint16_t* map_tbl24() {
  constexpr size_t kHuge = size_t(2) << 20;
  size_t len = kTbl24Bytes + kHuge;
  void* m = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  auto* base = static_cast<uint8_t*>(m);
  uintptr_t a = reinterpret_cast<uintptr_t>(m), b = (a + kHuge - 1) & ~(kHuge - 1);
  uint8_t* t = base + (b - a);  // the 2 MiB-aligned start
  if (t > base) munmap(base, size_t(t - base));
  if (t + kTbl24Bytes < base + len) munmap(t + kTbl24Bytes, size_t(base + len - t - kTbl24Bytes));
  madvise(t, kTbl24Bytes, MADV_HUGEPAGE);
  return reinterpret_cast<uint16_t*>(t);
}
}  // namespace

bool Lpm4Table::build(const std::vector<Prefix4>& routes, std::string& err) {
  for (auto& r : routes)
    if (r.nexthop >= kMaxNexthops) {
      err = "too many next hops for DIR-24-8 (at most 32766 distinct gateway and output pairs)";
      return false;
    }
  // Insert shorter prefixes first; a longer one overwrites what it covers.
  std::vector<uint32_t> order(routes.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return routes[a].len < routes[b].len; });
  tbl24_.reset(map_tbl24());
  tbl8_.clear();
  for (uint32_t ri : order) {
    const Prefix4& p = routes[ri];
    uint16_t value = uint16_t(p.nexthop + 1);
    uint32_t addr = p.addr & prefix_mask(p.len);
    if (p.len <= 24) {
      // Groups are only made for /25-/32, which sort after every /0-/24, so
      // no entry here points to a group yet.
      uint32_t first = addr >> 8, count = 1u << (24 - p.len);
      std::fill(tbl24_.get() + first, tbl24_.get() + first + count, value);
    } else {
      uint16_t& e = tbl24_[addr >> 8];
      if (!(e & kLpmGroupBit)) {
        size_t group = tbl8_.size() / 256;
        if (group >= kMaxGroups) {
          err = "too many prefixes longer than /24 (at most 32768 /24 blocks hold them)";
          return false;
        }
        tbl8_.resize(tbl8_.size() + 256, e);  // inherit the /24's route
        e = uint16_t(kLpmGroupBit | group);
      }
      uint16_t* g = &tbl8_[size_t(e & 0x7fff) << 8];
      uint32_t first = addr & 0xff, count = 1u << (32 - p.len);
      std::fill(g + first, g + first + count, value);
    }
  }
  return true;
}

}  // namespace shoal::k
