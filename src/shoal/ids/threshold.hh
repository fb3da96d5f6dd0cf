// threshold and detection_filter at run time: which matches of a rule become
// alerts, counted per tracked key over time windows (packet time). One per
// IDSMatcher, shared by its workers' copies as Suricata's threshold table is
// by its threads (a host's matches count once whichever worker its flows
// went to); each call takes the table's lock, and only matches of rules with
// a threshold, a detection_filter or a rate_filter call. A worker's packet
// a little older than the window another's started counts in that window.
// Memory is bounded: at most `capacity` keys; when full, expired
// windows are dropped first, then the key is not tracked (counted).
#pragma once
#include <cstdint>
#include <mutex>
#include <unordered_map>

#include "shoal/core/stat.hh"
#include "shoal/ids/packet.hh"
#include "shoal/ids/rules.hh"

namespace shoal::ids {

class ThresholdState {
 public:
  explicit ThresholdState(size_t capacity = 65536) : cap_(capacity) {}
  // Whether this match of rule `rule` (index r) alerts. flow: the packet's
  // flow id (0: none) for track by_flow.
  bool allow(const Rule& rule, uint32_t r, const PacketInfo& p, uint64_t flow, uint64_t now_ns);
  // The action of this match of rule `rule` after its rate_filter: the
  // rule's own, or the filter's new action while it holds.
  const std::string& action(const Rule& rule, uint32_t r, const PacketInfo& p, uint64_t flow, uint64_t now_ns);
  // Whether a suppress entry of the rule covers this packet.
  static bool suppressed(const Rule& rule, const PacketInfo& p);
  size_t size() const {
    std::lock_guard<std::mutex> g(mu_);
    return map_.size();
  }
  Stat untracked;  // matches not tracked because the table was full (they alert)

 private:
  struct Key {
    uint32_t rule;
    uint8_t a[16], b[16];
    uint64_t flow;
    bool operator==(const Key& o) const;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Entry {
    uint64_t start_ns = 0;
    uint32_t count = 0;
    uint64_t until_ns = 0;  // rate_filter: the new action holds until then
    uint64_t next = 0;      // backoff: the match number that alerts next
  };
  Key key(Threshold::Track track, uint32_t r, const PacketInfo& p, uint64_t flow) const;
  Entry* entry(std::unordered_map<Key, Entry, KeyHash>& m, const Key& k, uint64_t now_ns);
  void sweep(uint64_t now_ns);
  // Whether now_ns is past the window that started at start_ns.
  static bool past(uint64_t now_ns, uint64_t start_ns, uint64_t window_ns) {
    return now_ns >= start_ns && now_ns - start_ns >= window_ns;
  }
  mutable std::mutex mu_;
  size_t cap_;
  std::unordered_map<Key, Entry, KeyHash> map_, rate_;
  uint32_t max_seconds_ = 0;
};

}  // namespace shoal::ids
