// PolicyIndex: the security policy database's tuple space search (sadb.hh).
#include <algorithm>
#include <bit>
#include <climits>
#include <map>
#include <tuple>

#include "shoal/crypto/sadb.hh"

namespace shoal::crypto {
namespace {

// The first `len` bits of 16 bytes (network order), as two words loaded
// from them in the machine's order.
void prefix_mask(uint8_t len, uint64_t m[2]) {
  auto word = [](int bits) -> uint64_t {  // the first `bits` (0..64) bits of 8 bytes
    if (bits <= 0) return 0;
    if (bits >= 64) return ~0ull;
    return __builtin_bswap64(~0ull << (64 - bits));
  };
  m[0] = word(len);
  m[1] = word(int(len) - 64);
}

void load(const Addr& a, uint64_t w[2]) { __builtin_memcpy(w, a.b.data(), 16); }

}  // namespace

// Independent products (they overlap in the pipeline), xor'ed: the top
// bits of each depend on every bit of its word, and a table takes the top
// bits.
uint64_t PolicyIndex::hash(const Key& k) {
  return (k.src[0] * 0x9e3779b97f4a7c15ull) ^ (k.src[1] * 0xbf58476d1ce4e5b9ull) ^ (k.dst[0] * 0x94d049bb133111ebull) ^
         (k.dst[1] * 0xd6e8feb86659fd93ull) ^ ((uint64_t(k.ports) << 8 | k.proto) * 0xff51afd7ed558ccdull);
}

PolicyIndex::Key PolicyIndex::Group::key_of(const Selector& s) const {
  Key k;
  uint64_t a[2], b[2];
  load(s.src, a);
  load(s.dst, b);
  k.src[0] = a[0] & smask[0], k.src[1] = a[1] & smask[1];
  k.dst[0] = b[0] & dmask[0], k.dst[1] = b[1] & dmask[1];
  k.ports = (uint32_t(s.sport) << 16 | s.dport) & port_mask;
  k.proto = s.proto & proto_mask;
  return k;
}

int32_t PolicyIndex::Group::find(const Key& k) const {
  if (shift == 64) {  // a few policies: compared in turn
    for (const auto& [key, idx] : slots)
      if (key == k) return idx;
    return -1;
  }
  size_t mask = slots.size() - 1;
  for (size_t i = hash(k) >> shift;; i = (i + 1) & mask) {
    const auto& [key, idx] = slots[i];
    if (idx < 0) return -1;
    if (key == k) return idx;
  }
}

void PolicyIndex::Group::insert(const Key& k, int32_t idx) {
  if (shift == 64) {
    for (const auto& [key, at] : slots)
      if (key == k) return;  // an earlier policy with this selector: it wins whenever this one would match
    slots.emplace_back(k, idx);
    return;
  }
  size_t mask = slots.size() - 1;
  for (size_t i = hash(k) >> shift;; i = (i + 1) & mask) {
    auto& [key, at] = slots[i];
    if (at < 0) {
      key = k, at = idx;
      return;
    }
    if (key == k) return;  // an earlier policy with this selector: it wins whenever this one would match
  }
}

void PolicyIndex::build(const std::vector<Policy>& ps) {
  for (auto& g : by_dir_) g.clear();
  // The masks of each direction, and the policies of each mask in order.
  using Mask = std::tuple<uint8_t, uint8_t, uint8_t, uint8_t, uint32_t, uint32_t>;  // sfam slen dfam dlen ports proto
  std::map<Mask, std::vector<int32_t>> masks[3];
  for (size_t i = 0; i < ps.size(); ++i) {
    const Policy& p = ps[i];
    // a value outside its mask never matches (as the scan compares them)
    if ((p.sport & ~p.sport_mask) || (p.dport & ~p.dport_mask)) continue;
    // a prefix of neither family selects every address, whatever its length
    uint8_t slen = p.src.a.family ? p.src.len : 0, dlen = p.dst.a.family ? p.dst.len : 0;
    Mask m{p.src.a.family,      slen, p.dst.a.family, dlen, uint32_t(p.sport_mask) << 16 | p.dport_mask,
           p.proto ? 0xffu : 0u};
    masks[size_t(p.dir)][m].push_back(int32_t(i));
  }
  for (size_t d = 0; d < 3; ++d) {
    for (auto& [m, idx] : masks[d]) {
      Group g;
      auto [sfam, slen, dfam, dlen, port_mask, proto_mask] = m;
      g.sfam = sfam, g.dfam = dfam;
      prefix_mask(slen, g.smask);
      prefix_mask(dlen, g.dmask);
      g.port_mask = port_mask, g.proto_mask = proto_mask;
      g.first = idx.front();
      if (idx.size() <= kSmall) {
        g.shift = 64;
      } else {
        size_t n = std::bit_ceil(idx.size() * 2);
        g.slots.assign(n, {Key{}, -1});
        g.shift = 64 - std::countr_zero(n);
      }
      for (int32_t i : idx) {
        const Policy& p = ps[size_t(i)];
        Key k;
        uint64_t a[2], b[2];
        load(p.src.a, a);
        load(p.dst.a, b);
        k.src[0] = a[0] & g.smask[0], k.src[1] = a[1] & g.smask[1];
        k.dst[0] = b[0] & g.dmask[0], k.dst[1] = b[1] & g.dmask[1];
        k.ports = uint32_t(p.sport) << 16 | p.dport;
        k.proto = p.proto;
        g.insert(k, i);  // (in order: the first of equal keys stays)
      }
      by_dir_[d].push_back(std::move(g));
    }
    std::sort(by_dir_[d].begin(), by_dir_[d].end(), [](const Group& a, const Group& b) { return a.first < b.first; });
  }
}

int32_t PolicyIndex::match(Dir dir, const Selector& s) const {
  int32_t best = INT32_MAX;
  for (const Group& g : by_dir_[size_t(dir)]) {
    if (g.first >= best) break;  // (the groups in the order of their first policy)
    if ((g.sfam && g.sfam != s.src.family) || (g.dfam && g.dfam != s.dst.family)) continue;
    int32_t i = g.find(g.key_of(s));
    if (i >= 0 && i < best) best = i;
  }
  return best == INT32_MAX ? -1 : best;
}

}  // namespace shoal::crypto
