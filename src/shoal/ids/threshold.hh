// threshold and detection_filter at run time: which matches of a rule become
// alerts, counted per tracked key over time windows (packet time). One per
// worker. Memory is bounded: at most `capacity` keys; when full, expired
// windows are dropped first, then the key is not tracked (counted).
#pragma once
#include <cstdint>
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
  size_t size() const { return map_.size(); }
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
  };
  void sweep(uint64_t now_ns);
  size_t cap_;
  std::unordered_map<Key, Entry, KeyHash> map_;
  uint32_t max_seconds_ = 0;
};

}  // namespace shoal::ids
