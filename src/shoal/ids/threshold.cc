#include "shoal/ids/threshold.hh"

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
    it = now_ns - it->second.start_ns > longest ? map_.erase(it) : std::next(it);
}

bool ThresholdState::allow(const Rule& rule, uint32_t r, const PacketInfo& p, uint64_t flow, uint64_t now_ns) {
  const Threshold& t = rule.threshold;
  if (t.type == Threshold::None) return true;
  Key k{};
  k.rule = r;
  switch (t.track) {
    case Threshold::BySrc: std::memcpy(k.a, p.src.b, 16); break;
    case Threshold::ByDst: std::memcpy(k.a, p.dst.b, 16); break;
    case Threshold::ByBoth:
      std::memcpy(k.a, p.src.b, 16);
      std::memcpy(k.b, p.dst.b, 16);
      break;
    case Threshold::ByRule: break;
    case Threshold::ByFlow: k.flow = flow; break;
  }
  if (t.seconds > max_seconds_) max_seconds_ = t.seconds;
  auto it = map_.find(k);
  if (it == map_.end()) {
    if (map_.size() >= cap_) sweep(now_ns);
    if (map_.size() >= cap_) {
      untracked.add();
      return true;
    }
    it = map_.emplace(k, Entry{now_ns, 0}).first;
  }
  Entry& e = it->second;
  if (now_ns - e.start_ns >= uint64_t(t.seconds) * 1000000000ull) e = Entry{now_ns, 0};  // a new window
  ++e.count;
  switch (t.type) {
    case Threshold::Limit: return e.count <= t.count;  // the first `count` of each window
    case Threshold::EveryNth:
      if (e.count < t.count) return false;
      e.count = 0;  // every count-th within the window
      return true;
    case Threshold::Both: return e.count == t.count;            // once a window, at the count-th
    case Threshold::DetectionFilter: return e.count > t.count;  // past the count, every one
    case Threshold::None: break;
  }
  return true;
}

}  // namespace shoal::ids
