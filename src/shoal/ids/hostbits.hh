// hostbits and xbits at run time: named bits kept per host (track ip_src or
// ip_dst) or per pair of hosts (ip_pair), each until it expires (packet
// time), as Suricata's. One table per IDSMatcher, shared by its workers'
// copies as Suricata's host table is by its threads (a host's flows may go
// to any worker); each check or change takes its lock, and only rules with
// hostbits or xbits make one. Memory is bounded: at most
// `capacity` hosts and pairs, expired bits swept when full, then a new host
// is not tracked (counted, and its bits read as not set).
#pragma once
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "shoal/core/stat.hh"
#include "shoal/ids/packet.hh"
#include "shoal/ids/rules.hh"

namespace shoal::ids {

class HostBits {
 public:
  explicit HostBits(size_t capacity = 65536) : cap_(capacity) {}
  // Whether rule r's isset / isnotset hold for packet p at now_ns.
  bool check(const Rule& r, const PacketInfo& p, uint64_t now_ns) const;
  // Rule r's set / unset / toggle, once it matched.
  void apply(const Rule& r, const PacketInfo& p, uint64_t now_ns);
  size_t size() const {
    std::lock_guard<std::mutex> g(mu_);
    return map_.size();
  }
  Stat untracked;  // sets not kept because the table was full

 private:
  struct Key {
    uint8_t a[17], b[17];  // family (4 or 6) then the address; b: the pair's other host (zero for one host)
    bool operator==(const Key& o) const;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Bit {
    uint16_t id;
    uint64_t until_ns;
  };
  // The hosts (or pair) a bit of track t names on p: one, or two for `both`.
  size_t keys(const Hostbit& h, const PacketInfo& p, Key out[2]) const;
  bool is_set(const Key& k, uint16_t id, uint64_t now_ns) const;
  void sweep(uint64_t now_ns);
  mutable std::mutex mu_;
  size_t cap_;
  std::unordered_map<Key, std::vector<Bit>, KeyHash> map_;
};

}  // namespace shoal::ids
