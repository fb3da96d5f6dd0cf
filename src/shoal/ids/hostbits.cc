#include "shoal/ids/hostbits.hh"

#include <algorithm>
#include <cstring>

namespace shoal::ids {

bool HostBits::Key::operator==(const Key& o) const {
  return std::memcmp(a, o.a, sizeof a) == 0 && std::memcmp(b, o.b, sizeof b) == 0;
}

size_t HostBits::KeyHash::operator()(const Key& k) const {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  for (uint8_t x : k.a) h = (h ^ x) * 0x100000001b3ull;
  for (uint8_t x : k.b) h = (h ^ x) * 0x100000001b3ull;
  return size_t(h ^ (h >> 29));
}

namespace {

void put(uint8_t* out, const Addr& a) {
  out[0] = a.v6 ? 6 : 4;  // (an IPv4 host and the IPv6 address of the same bytes are two hosts)
  std::memcpy(out + 1, a.b, 16);
}

}  // namespace

size_t HostBits::keys(const Hostbit& h, const PacketInfo& p, Key out[2]) const {
  out[0] = out[1] = Key{};
  switch (h.track) {
    case Hostbit::Src: put(out[0].a, p.src); return 1;
    case Hostbit::Dst: put(out[0].a, p.dst); return 1;
    case Hostbit::Both:
      put(out[0].a, p.src);
      put(out[1].a, p.dst);
      return 2;
    case Hostbit::Pair: {  // either way: the lower address first
      Key k{};
      put(k.a, p.src);
      put(k.b, p.dst);
      if (std::memcmp(k.a, k.b, sizeof k.a) > 0) std::swap(k.a, k.b);
      out[0] = k;
      return 1;
    }
  }
  return 0;
}

bool HostBits::is_set(const Key& k, uint16_t id, uint64_t now_ns) const {
  auto it = map_.find(k);
  if (it == map_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [&](const Bit& b) { return b.id == id && b.until_ns > now_ns; });
}

bool HostBits::check(const Rule& r, const PacketInfo& p, uint64_t now_ns) const {
  std::lock_guard<std::mutex> g(mu_);
  for (const Hostbit& h : r.hostbits) {
    if (!h.check()) continue;
    Key k[2];
    size_t n = keys(h, p, k);
    bool any = false;
    for (size_t i = 0; i < n; ++i) any |= is_set(k[i], h.id, now_ns);
    if (any != (h.cmd == Hostbit::IsSet)) return false;  // (both: set on either host; not set on neither)
  }
  return true;
}

void HostBits::sweep(uint64_t now_ns) {
  for (auto it = map_.begin(); it != map_.end();) {
    std::erase_if(it->second, [&](const Bit& b) { return b.until_ns <= now_ns; });
    it = it->second.empty() ? map_.erase(it) : std::next(it);
  }
}

void HostBits::apply(const Rule& r, const PacketInfo& p, uint64_t now_ns) {
  std::lock_guard<std::mutex> g(mu_);
  for (const Hostbit& h : r.hostbits) {
    if (h.check()) continue;
    Key k[2];
    size_t n = keys(h, p, k);
    for (size_t i = 0; i < n; ++i) {
      const bool on = is_set(k[i], h.id, now_ns);
      const bool want = h.cmd == Hostbit::Set || (h.cmd == Hostbit::Toggle && !on);
      auto it = map_.find(k[i]);
      if (!want) {
        if (it != map_.end()) std::erase_if(it->second, [&](const Bit& b) { return b.id == h.id; });
        continue;
      }
      if (it == map_.end()) {
        if (map_.size() >= cap_) sweep(now_ns);
        if (map_.size() >= cap_) {
          untracked.add();
          continue;
        }
        it = map_.emplace(k[i], std::vector<Bit>{}).first;
      }
      const uint64_t until = now_ns + uint64_t(h.expire) * 1000000000ull;
      auto b = std::find_if(it->second.begin(), it->second.end(), [&](const Bit& x) { return x.id == h.id; });
      if (b != it->second.end())
        b->until_ns = std::max(b->until_ns, until);  // (set again: its expiry moves on; never back, for a
                                                     // worker whose packets are a little older)
      else
        it->second.push_back({h.id, until});
    }
  }
}

}  // namespace shoal::ids
