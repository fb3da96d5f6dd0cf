#include "shoal/ids/threshold.hh"

#include <algorithm>
#include <cstring>

namespace shoal::ids {

bool ThresholdState::Key::operator==(const Key& o) const {
  return rule == o.rule && flow == o.flow && std::memcmp(a, o.a, 16) == 0 && std::memcmp(b, o.b, 16) == 0;
}

size_t ThresholdState::KeyHash::operator()(const Key& k) const {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ k.rule ^ (k.flow * 0xff51afd7ed558ccdull);
  for (int i = 0; i < 16; i += 8) {
    uint64_t x, y;
    std::memcpy(&x, k.a + i, 8);
    std::memcpy(&y, k.b + i, 8);
    h = (h ^ x) * 0xc4ceb9fe1a85ec53ull;
    h = (h ^ y) * 0xc4ceb9fe1a85ec53ull;
  }
  return size_t(h ^ (h >> 31));
}

void ThresholdState::sweep(uint64_t now_ns) {
  uint64_t longest = uint64_t(max_seconds_) * 1000000000ull;
  for (auto it = map_.begin(); it != map_.end();)
    it = past(now_ns, it->second.start_ns, longest + 1) ? map_.erase(it) : std::next(it);
  for (auto it = rate_.begin(); it != rate_.end();)
    it = past(now_ns, it->second.start_ns, longest + 1) && it->second.until_ns <= now_ns ? rate_.erase(it)
                                                                                         : std::next(it);
}

ThresholdState::Key ThresholdState::key(Threshold::Track track, uint32_t r, const PacketInfo& p, uint64_t flow) const {
  Key k{};
  k.rule = r;
  switch (track) {
    case Threshold::BySrc: std::memcpy(k.a, p.src.b, 16); break;
    case Threshold::ByDst: std::memcpy(k.a, p.dst.b, 16); break;
    case Threshold::ByBoth: {  // the pair of hosts, either way (Suricata's IP pair)
      bool swap = std::memcmp(p.src.b, p.dst.b, 16) > 0;
      std::memcpy(k.a, (swap ? p.dst : p.src).b, 16);
      std::memcpy(k.b, (swap ? p.src : p.dst).b, 16);
      break;
    }
    case Threshold::ByRule: break;
    case Threshold::ByFlow: k.flow = flow; break;
  }
  return k;
}

ThresholdState::Entry* ThresholdState::entry(std::unordered_map<Key, Entry, KeyHash>& m, const Key& k,
                                             uint64_t now_ns) {
  auto it = m.find(k);
  if (it != m.end()) return &it->second;
  if (map_.size() + rate_.size() >= cap_) sweep(now_ns);
  if (map_.size() + rate_.size() >= cap_) {
    untracked.add();
    return nullptr;
  }
  return &m.emplace(k, Entry{now_ns, 0, 0}).first->second;
}

bool ThresholdState::allow(const Rule& rule, uint32_t r, const PacketInfo& p, uint64_t flow, uint64_t now_ns) {
  const Threshold& t = rule.threshold;
  if (t.type == Threshold::None) return true;
  std::lock_guard<std::mutex> g(mu_);
  if (t.seconds > max_seconds_) max_seconds_ = t.seconds;
  Entry* ep = entry(map_, key(t.track, r, p, flow), now_ns);
  if (!ep) return true;
  Entry& e = *ep;
  if (t.type == Threshold::Backoff) {  // the count-th match, then every multiplier times as many
    if (!e.next) e.next = t.count;
    if (++e.count != e.next) return false;
    e.next = e.next > (uint64_t(1) << 40) ? UINT64_MAX : e.next * t.multiplier;
    return true;
  }
  if (past(now_ns, e.start_ns, uint64_t(t.seconds) * 1000000000ull)) e = Entry{now_ns, 0};  // a new window
  ++e.count;
  switch (t.type) {
    case Threshold::Limit: return e.count <= t.count;  // the first `count` of each window
    case Threshold::EveryNth:
      if (e.count < t.count) return false;
      e.count = 0;  // every count-th within the window
      return true;
    case Threshold::Both: return e.count == t.count;            // once a window, at the count-th
    case Threshold::DetectionFilter: return e.count > t.count;  // past the count, every one
    case Threshold::None:
    case Threshold::Backoff: break;
  }
  return true;
}

const std::string& ThresholdState::action(const Rule& rule, uint32_t r, const PacketInfo& p, uint64_t flow,
                                          uint64_t now_ns) {
  if (!rule.has_rate) return rule.action;
  const RateFilter& f = rule.rate;
  std::lock_guard<std::mutex> g(mu_);
  max_seconds_ = std::max(max_seconds_, std::max(f.seconds, f.timeout));
  Entry* e = entry(rate_, key(f.track, r, p, flow), now_ns);
  if (!e) return rule.action;
  if (e->until_ns > now_ns) return f.new_action;  // the filter holds
  if (past(now_ns, e->start_ns, uint64_t(f.seconds) * 1000000000ull)) *e = Entry{now_ns, 0, 0};
  if (++e->count <= f.count) return rule.action;
  e->until_ns = now_ns + uint64_t(f.timeout) * 1000000000ull;  // past the rate: the new action, for the timeout
  return f.new_action;
}

bool ThresholdState::suppressed(const Rule& rule, const PacketInfo& p) {
  for (const Suppress& s : rule.suppress) {
    switch (s.track) {
      case Suppress::All: return true;
      case Suppress::BySrc:
        if (s.addrs.match(p.src)) return true;
        break;
      case Suppress::ByDst:
        if (s.addrs.match(p.dst)) return true;
        break;
      case Suppress::ByEither:
        if (s.addrs.match(p.src) || s.addrs.match(p.dst)) return true;
        break;
    }
  }
  return false;
}

}  // namespace shoal::ids
