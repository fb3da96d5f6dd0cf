#include "shoal/ids/tags.hh"

#include <algorithm>
#include <cstring>

namespace shoal::ids {

namespace {
constexpr uint64_t kIdleNs = 600ull * 1000000000ull;  // a tag no packet met for 10 minutes may be swept
}

bool TagState::HostKey::operator==(const HostKey& o) const { return std::memcmp(a, o.a, sizeof a) == 0; }

size_t TagState::HostHash::operator()(const HostKey& k) const {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t x : k.a) h = (h ^ x) * 0x100000001b3ull;
  return size_t(h ^ (h >> 29));
}

TagState::HostKey TagState::host(const Addr& a) {
  HostKey k{};
  k.a[0] = a.v6 ? 6 : 4;
  std::memcpy(k.a + 1, a.b, 16);
  return k;
}

bool TagState::count(std::vector<Active>& v, uint32_t bytes, uint64_t now_ns) {
  bool any = false;
  std::erase_if(v, [&](Active& t) {
    bool in = false, more = false;
    switch (t.metric) {
      case Tag::Packets:
        in = t.left > 0, t.left -= in;
        more = t.left > 0;
        break;
      case Tag::Bytes:
        in = t.left > 0, t.left -= std::min<uint64_t>(t.left, bytes);
        more = t.left > 0;
        break;
      case Tag::Seconds: in = more = now_ns <= t.until_ns; break;
    }
    any |= in;
    t.last_ns = std::max(t.last_ns, now_ns);
    return !more;
  });
  return any;
}

bool TagState::tagged(const PacketInfo& p, uint64_t flow, uint32_t bytes, uint64_t now_ns) {
  if (live_.load(std::memory_order_relaxed) == 0) return false;
  std::lock_guard<std::mutex> g(mu_);
  bool any = false;
  if (flow)
    if (auto it = sessions_.find(flow); it != sessions_.end()) {
      any |= count(it->second, bytes, now_ns);
      if (it->second.empty()) sessions_.erase(it);
    }
  if (!p.no_l3)
    for (const Addr* a : {&p.src, &p.dst}) {
      if (a == &p.dst && std::memcmp(p.src.b, p.dst.b, 16) == 0 && p.src.v6 == p.dst.v6) break;  // (one host)
      if (auto it = hosts_.find(host(*a)); it != hosts_.end()) {
        any |= count(it->second, bytes, now_ns);
        if (it->second.empty()) hosts_.erase(it);
      }
    }
  live_.store(live(), std::memory_order_relaxed);
  return any;
}

void TagState::sweep(uint64_t now_ns) {
  auto idle = [&](const Active& t) {
    return now_ns > t.last_ns && now_ns - t.last_ns > kIdleNs && (t.metric != Tag::Seconds || now_ns > t.until_ns);
  };
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    std::erase_if(it->second, idle);
    it = it->second.empty() ? sessions_.erase(it) : std::next(it);
  }
  for (auto it = hosts_.begin(); it != hosts_.end();) {
    std::erase_if(it->second, idle);
    it = it->second.empty() ? hosts_.erase(it) : std::next(it);
  }
}

bool TagState::room(uint64_t now_ns) {
  if (live() >= cap_) sweep(now_ns);
  if (live() < cap_) return true;
  untracked.add();
  return false;
}

void TagState::start(const Rule& r, const PacketInfo& p, uint64_t flow, uint64_t now_ns) {
  std::lock_guard<std::mutex> g(mu_);
  for (const Tag& t : r.tags) {
    std::vector<Active>* v = nullptr;
    if (t.scope == Tag::Session) {
      if (!flow) continue;  // (no session to tag)
      auto it = sessions_.find(flow);
      if (it == sessions_.end() && !room(now_ns)) continue;
      v = &sessions_[flow];
    } else {
      if (p.no_l3) continue;
      HostKey k = host(t.dst ? p.dst : p.src);
      auto it = hosts_.find(k);
      if (it == hosts_.end() && !room(now_ns)) continue;
      v = &hosts_[k];
    }
    Active a{r.sid, r.gid, t.metric, t.count, now_ns + uint64_t(t.count) * 1000000000ull, now_ns};
    auto same = std::find_if(v->begin(), v->end(),
                             [&](const Active& x) { return x.sid == r.sid && x.gid == r.gid && x.metric == t.metric; });
    if (same != v->end())
      *same = a;  // (the rule alerted again: its tag starts over)
    else
      v->push_back(a);
  }
  live_.store(live(), std::memory_order_relaxed);
}

}  // namespace shoal::ids
