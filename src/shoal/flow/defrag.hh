// IPv4 and IPv6 fragment reassembly (RFC 791, RFC 8200 4.5), as an IDS must
// do it: overlaps resolved by a target-based policy, memory and time bounded.
//
// Fragments are keyed by addresses, protocol (IPv4) and identification.
// Their data are copied and held until the datagram is whole: its first
// fragment (offset 0) and its last (no more-fragments flag) are there and
// every byte between is covered. Overlapping data is resolved per byte by
// the policy, Suricata's names:
//   first  the byte that came first stays
//   last   the byte that came last wins
//   bsd    a later fragment wins where it starts before the earlier one
//          (Suricata's default)
//   linux  a later fragment wins where it starts at or before the earlier one
// Bounds: at most `memcap` bytes of fragment data over all datagrams (past
// it, the oldest datagram is given up), `max_frags` fragments per datagram,
// a datagram at most 65,535 bytes, and `timeout` since a datagram's first
// fragment (then it is given up). Each give-up is counted.
#pragma once
#include <cstdint>
#include <list>
#include <string>
#include <unordered_map>
#include <vector>

#include "shoal/core/stat.hh"

namespace shoal::flow {

enum class DefragPolicy : uint8_t { First, Last, Bsd, Linux };
bool parse_defrag_policy(const std::string& name, DefragPolicy& out);

struct DefragConfig {
  uint64_t memcap = 16u << 20;
  uint64_t timeout_ns = 60ull * 1000000000ull;
  uint32_t max_frags = 1024;
  DefragPolicy policy = DefragPolicy::Bsd;
};

struct DefragCounters {
  Stat fragments;    // fragments taken in
  Stat reassembled;  // datagrams made whole
  Stat overlaps;     // fragments that overlapped data already held
  Stat timeouts;     // datagrams given up after the timeout
  Stat evicted;      // datagrams given up for memory
  Stat too_many;     // datagrams given up at max_frags
  Stat invalid;      // fragments that cannot be (past 65,535 bytes, a non-last one not a multiple of 8, cut short)
  Stat held_bytes;   // fragment data held now
};

class Defragmenter {
 public:
  enum Result : uint8_t { NotFragment, Held, Done, Invalid };
  explicit Defragmenter(const DefragConfig& cfg = {}) : cfg_(cfg) {}
  // Before the first fragment.
  void configure(const DefragConfig& cfg) { cfg_ = cfg; }
  // ip: an IPv4 or IPv6 packet of len bytes. Done: `out` holds the whole
  // datagram from its IP header on (checksummed, the fragment fields
  // cleared; IPv6 without its Fragment header).
  Result add(const uint8_t* ip, uint32_t len, uint64_t now_ns, std::vector<uint8_t>& out);
  // Gives up datagrams older than the timeout.
  void expire(uint64_t now_ns);
  size_t pending() const { return map_.size(); }
  const DefragCounters& counters() const { return c_; }
  const DefragConfig& config() const { return cfg_; }

 private:
  struct Key {
    uint8_t family, proto;
    uint32_t id;
    uint8_t src[16], dst[16];
    bool operator==(const Key& o) const;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const;
  };
  struct Frag {
    uint32_t off, end;  // payload bytes [off, end)
    std::vector<uint8_t> data;
  };
  struct Datagram {
    uint64_t first_ns = 0;
    std::vector<Frag> frags;    // in arrival order
    std::vector<uint8_t> head;  // the offset-0 fragment's header (IPv6: the unfragmentable part)
    uint32_t next_at = 0;       // IPv6: where in head the next-header field that named the Fragment header is
    uint8_t next = 0;           // IPv6: the Fragment header's next header
    bool have_first = false, have_last = false;
    uint32_t total = 0;  // payload length, once the last fragment is here
    uint64_t bytes = 0;
    std::list<Key>::iterator age;
  };
  void drop(std::unordered_map<Key, Datagram, KeyHash>::iterator it);
  bool whole(const Datagram& d) const;
  void build(const Key& k, Datagram& d, std::vector<uint8_t>& out);

  DefragConfig cfg_;
  DefragCounters c_;
  std::unordered_map<Key, Datagram, KeyHash> map_;
  std::list<Key> ages_;  // oldest first
  uint64_t bytes_ = 0;
};

}  // namespace shoal::flow
