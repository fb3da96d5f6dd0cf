// Synthetic traffic: per-flow Ethernet/IPv4|IPv6/UDP|TCP|ICMP frames with
// fixed or IMIX sizes. Used by FastUDPFlows and `shoal gen`. Packet i belongs
// to flow (i / flowsize) % flows and carries i in its first payload bytes.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace shoal::io {

enum class Proto { UDP, TCP, ICMP, MIX };

struct TrafficSpec {
  uint32_t length = 64;  // frame bytes (no FCS); ignored with imix
  bool imix = false;     // 7:4:1 of 64, 570 and 1518 bytes
  uint32_t flows = 1;
  uint32_t flowsize = 1;  // consecutive packets per flow before the next
  Proto proto = Proto::UDP;
  bool ipv6 = false;
  std::array<uint8_t, 6> src_mac{0x02, 0, 0, 0, 0, 0x01}, dst_mac{0x02, 0, 0, 0, 0, 0x02};
  std::array<uint8_t, 4> src_ip{10, 0, 0, 1}, dst_ip{10, 1, 0, 1};
  std::array<uint8_t, 16> src_ip6{0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  std::array<uint8_t, 16> dst_ip6{0xfd, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  uint8_t ttl = 64;
  bool random_dst = false;  // each flow's destination from random_dst4/6 instead of dst_ip(6)
};

// Per-flow pseudo-random unicast destinations (deterministic in the flow
// number): IPv4 in 1.0.0.0-223.255.255.255, IPv6 in 2000::/3 (upper 64 bits
// random, lower 64 bits the flow number). Benchmarks build route tables
// covering exactly these addresses.
uint32_t random_dst4(uint32_t flow);
void random_dst6(uint32_t flow, uint8_t out[16]);

class TrafficGen {
 public:
  explicit TrafficGen(const TrafficSpec& spec);
  // Smallest frame the spec can make (headers up to L4 plus 8 bytes of sequence).
  static uint32_t min_length(const TrafficSpec& spec);
  uint32_t flow_of(uint64_t i) const {
    uint64_t k = spec_.flowsize == 1 ? i : i / spec_.flowsize;
    return uint32_t(spec_.flows == 1 ? 0 : k % spec_.flows);
  }
  uint32_t length_of(uint64_t i) const {
    uint32_t len = spec_.imix ? kImix[i % 12] : spec_.length;
    return len > min_len_ ? len : min_len_;
  }
  uint32_t max_length() const;
  // Writes packet i (length_of(i) bytes) to out: a copy of the prebuilt frame
  // of its flow and length, then the per-packet fields (sequence numbers) with
  // an incremental checksum update (RFC 1624). Without prebuilt frames (too
  // many flows for the memory bound) it builds the frame from scratch.
  void build(uint64_t i, uint8_t* out) const { build(i, flow_of(i), out); }
  // The same, for a caller that already knows packet i's flow.
  void build(uint64_t i, uint32_t flow, uint8_t* out) const;
  // The from-scratch path, for tests to compare against.
  void build_slow(uint64_t i, uint8_t* out) const;
  // The flow hash of flow f (as the worker dispatch computes it).
  uint32_t flow_hash(uint32_t f) const { return hashes_[f]; }
  const TrafficSpec& spec() const { return spec_; }

 private:
  Proto proto_of(uint32_t f) const;
  void headers(uint32_t f, uint32_t len, uint8_t* out) const;
  // Frame of flow f, len bytes, packet index i; with_seq false leaves the
  // per-packet fields zero (the prebuilt frames).
  void fill(uint32_t f, uint32_t len, uint64_t i, bool with_seq, uint8_t* out) const;
  uint32_t length_index(uint64_t i) const { return lengths_.size() == 1 ? 0 : length_slot_[i % 12]; }
  static constexpr uint32_t kImix[12] = {64, 570, 64, 64, 570, 64, 1518, 64, 570, 64, 570, 64};  // 7:4:1
  TrafficSpec spec_;
  uint32_t min_len_ = 0;
  uint8_t length_slot_[12] = {};  // IMIX position -> index in lengths_
  std::vector<uint32_t> hashes_;
  std::vector<uint32_t> lengths_;  // distinct frame lengths
  std::vector<uint8_t> frames_;    // prebuilt: flow-major, one per length
  std::vector<uint64_t> frame_off_;
};

bool parse_proto(const std::string& s, Proto& p);

}  // namespace shoal::io
