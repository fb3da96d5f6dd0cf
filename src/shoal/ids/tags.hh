// tag at run time: once a rule with tag alerts, the packets that follow of
// its session (tag:session) or of a host (tag:host, the packet's source or
// destination, either way) for a count of packets, bytes or seconds;
// Suricata logs them as EVE `packet` records. Memory is bounded: at most
// `capacity` sessions and hosts, tags idle for 10 minutes of packet time
// swept when full, then a new tag is not kept (counted). One per
// IDSMatcher, shared by its workers' copies (a tagged host's flows may go to
// any worker): a packet takes the lock only while some tag is live.
#pragma once
#include <atomic>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "shoal/core/stat.hh"
#include "shoal/ids/packet.hh"
#include "shoal/ids/rules.hh"

namespace shoal::ids {

class TagState {
 public:
  explicit TagState(size_t capacity = 65536) : cap_(capacity) {}
  // Whether packet p (`bytes` long, of flow `flow`, 0: none) is tagged; its
  // tags count it.
  bool tagged(const PacketInfo& p, uint64_t flow, uint32_t bytes, uint64_t now_ns);
  // Rule r alerted on p: its tags start (after this packet).
  void start(const Rule& r, const PacketInfo& p, uint64_t flow, uint64_t now_ns);
  size_t size() const {
    std::lock_guard<std::mutex> g(mu_);
    return live();
  }
  Stat untracked;  // tags not kept because the table was full

 private:
  struct Active {
    uint32_t sid, gid;  // the rule's (a rule's tag started again restarts)
    Tag::Metric metric;
    uint64_t left;      // packets or bytes still tagged (Seconds: unused)
    uint64_t until_ns;  // Seconds: tagged until then
    uint64_t last_ns;   // the last packet tagged (or the start)
  };
  struct HostKey {
    uint8_t a[17];  // family (4 or 6) then the address
    bool operator==(const HostKey& o) const;
  };
  struct HostHash {
    size_t operator()(const HostKey& k) const;
  };
  static HostKey host(const Addr& a);
  // Counts p against tags; false once none is left. Exhausted tags go.
  static bool count(std::vector<Active>& v, uint32_t bytes, uint64_t now_ns);
  size_t live() const { return sessions_.size() + hosts_.size(); }
  bool room(uint64_t now_ns);
  void sweep(uint64_t now_ns);
  mutable std::mutex mu_;
  std::atomic<size_t> live_{0};  // live(), as last left under the lock: read without it
  size_t cap_;
  std::unordered_map<uint64_t, std::vector<Active>> sessions_;
  std::unordered_map<HostKey, std::vector<Active>, HostHash> hosts_;
};

}  // namespace shoal::ids
