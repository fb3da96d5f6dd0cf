// TCP stream reassembly, per direction of a connection: the bytes each side
// sent, delivered in order, once, to a sink (stream offsets count from the
// first byte after the SYN).
//
// - In-order data is delivered at once, without a copy. Out-of-order data is
//   buffered (copied) up to a per-direction cap and a cap over all streams of
//   the Reassembler; past a cap, the oldest hole is given up: reported as a
//   gap (offset, length) and the stream goes on from the buffered data.
// - Overlaps are resolved by a policy: "first" keeps the bytes that came
//   first, "last" the bytes that came last, and Suricata's target-based
//   policies (its host-os-policy names: bsd, linux, old-linux, solaris,
//   windows...; Novak and Sturges, "Target-Based TCP Stream Reassembly")
//   decide by where the new segment starts and ends against each earlier
//   segment it overlaps (overlap_new_wins()): a byte takes the new data
//   when every earlier segment holding it gives way. A direction may have
//   its own policy (its receiver's), set before its first segment.
// - Data already delivered is not delivered again: a retransmission of it
//   is counted and dropped, but where the policy gives it the bytes (the
//   last 16 segments delivered are remembered for the target-based ones),
//   the sink is told (stream_overwrite), so that a sink still holding
//   those bytes uninspected (an IDS waiting for their acknowledgement, as
//   Suricata's stream buffer does) sees what the receiver will.
// - Sequence numbers wrap: offsets are 64-bit, unwrapped against the next
//   expected byte.
// - SYN gives the initial sequence number (data on a SYN is stream data);
//   without one, the first data segment picks the stream up (midstream) or,
//   if that is off, the direction is not reassembled. Data past a FIN, or
//   after a RST, is dropped and counted.
// - finish() ends a stream: holes left become gaps and the rest is delivered.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "shoal/core/stat.hh"

namespace shoal::flow {

// Default: a direction's, the reassembler's (StreamConfig::policy).
// BsdRight and OldSolaris are Suricata's names for Bsd and Solaris.
enum class Overlap : uint8_t {
  Default,
  First,
  Last,
  Bsd,
  Linux,
  OldLinux,
  Solaris,
  Hpux10,
  Hpux11,
  Irix,
  Macos,
  Windows,
  Vista,
  Windows2k3
};
// Suricata's names (first, last, bsd, bsd-right, linux, old-linux,
// solaris, old-solaris, hpux10, hpux11, irix, macos, windows, vista,
// windows2k3); false for any other.
bool parse_overlap(const std::string& name, Overlap& out);
const char* overlap_name(Overlap p);
// Whether the new segment [lo, hi) wins, under policy p, the bytes it
// shares with the earlier segment [olo, ohi) (they overlap), as Suricata's
// stream engine decides in IDS mode. First: never; Last: always.
bool overlap_new_wins(Overlap p, uint64_t lo, uint64_t hi, uint64_t olo, uint64_t ohi);

// Suricata's host-os-policy: the policy of the hosts of each address
// range; a direction takes its receiver's (the longest prefix holding it).
class HostPolicies {
 public:
  // "ADDR" or "ADDR/LEN", IPv4 or IPv6; false (err says why) if not one.
  bool add(const std::string& net, Overlap p, std::string& err);
  // Overlap::Default where no range holds addr (16 bytes for IPv6, 4 for IPv4).
  Overlap lookup(bool v6, const uint8_t* addr) const;
  bool empty() const { return nets_.empty(); }

 private:
  struct Net {
    bool v6;
    uint8_t len;
    uint8_t b[16];
    Overlap p;
  };
  std::vector<Net> nets_;  // longest first
};

struct StreamConfig {
  Overlap policy = Overlap::First;
  uint32_t dir_cap = 1u << 20;     // out-of-order bytes buffered per direction
  uint64_t total_cap = 64u << 20;  // out-of-order bytes buffered over all streams
  bool midstream = true;
  // Bytes delivered kept per direction (up to its receiver's
  // acknowledgement, acknowledged()), for normalize(); 0: none.
  uint32_t keep = 0;
};

// What the reassembler saw, as Suricata's stream events count it.
// Written by the reassembler's worker, read by any thread (handlers).
struct StreamCounters {
  Stat segments;        // segments with payload
  Stat delivered;       // bytes delivered in order
  Stat out_of_order;    // segments that arrived ahead of a hole
  Stat retransmitted;   // segments (or parts) already delivered
  Stat overlaps;        // buffered data overlapped by a later segment
  Stat overlap_differ;  // ... with different bytes
  Stat overwritten;     // delivered bytes a retransmission won by the policy (the sink told)
  Stat untracked;       // segments a target-based policy did not remember (over 16 + held/64 a direction)
  Stat normalized;      // segments whose bytes normalize() set to the stream's
  Stat normalized_bytes;
  Stat gaps, gap_bytes;
  Stat buffer_full;   // holes given up because a cap was reached
  Stat after_fin;     // segments with data past the FIN
  Stat after_rst;     // segments with data after a RST
  Stat no_handshake;  // data dropped: no SYN and midstream off
  Stat syn_data;      // SYNs that carried data
  Stat buffered;      // out-of-order bytes held now
  Stat buffered_peak;
};

// Where the stream goes.
class StreamSink {
 public:
  virtual ~StreamSink() = default;
  virtual void stream_data(uint32_t flow, uint8_t dir, uint64_t offset, const uint8_t* data, uint32_t len) = 0;
  virtual void stream_gap(uint32_t flow, uint8_t dir, uint64_t offset, uint64_t len) = 0;
  // The direction ended (FIN reached, RST, or the flow ended).
  virtual void stream_end(uint32_t flow, uint8_t dir) {}
  // Bytes already delivered at [offset, offset+len) that a retransmission
  // won by the overlap policy (they may be the same bytes): a sink that
  // still holds them uninspected takes them; others ignore it.
  virtual void stream_overwrite(uint32_t flow, uint8_t dir, uint64_t offset, const uint8_t* data, uint32_t len) {}
};

// Delivered segments a target-based policy remembers per direction.
constexpr uint32_t kKeptSegments = 16;

struct DirStream {
  bool init = false, fin = false, rst = false, ended = false;
  Overlap policy = Overlap::Default;             // this direction's (its receiver's); Default: the reassembler's
  uint32_t base = 0;                             // sequence number of stream offset 0
  uint64_t next = 0;                             // next offset to deliver
  uint64_t fin_off = 0;                          // offset of the FIN (valid when fin)
  uint64_t held = 0;                             // bytes in ooo
  std::map<uint64_t, std::vector<uint8_t>> ooo;  // non-overlapping, keyed by offset
  // What only some streams need (allocated on first use):
  struct Extra {
    // target-based policies: the segments [start, end) with bytes held
    // (by start), and the last kKeptSegments delivered (a ring)
    std::set<std::pair<uint64_t, uint64_t>> held;
    uint32_t held_max = 0;  // the longest of them
    std::pair<uint64_t, uint64_t> recent[kKeptSegments];
    uint8_t nrecent = 0, at = 0;
    // StreamConfig::keep: the last bytes delivered, up to the stream's next
    std::string kept;
  };
  std::unique_ptr<Extra> x;
  Extra& extra() {
    if (!x) x = std::make_unique<Extra>();
    return *x;
  }
  // Suricata's streaming buffer regions (its flow records' ts/tc_max_regions):
  // the most stretches of memory the direction's data took at once. The
  // stream's own region holds its next bytes; held data further than the
  // region gap (256 KiB) from it and from other held data takes another.
  uint16_t max_regions = 1;
  // BatchReassembler's: the last batch with this direction, its index there
  uint64_t batch = 0;
  uint32_t group = 0;
};

struct Stream {
  DirStream d[2];
  uint64_t rst_batch = 0;  // BatchReassembler's: the last batch with a RST
};

class BatchReassembler;

class Reassembler {
 public:
  explicit Reassembler(const StreamConfig& c = {}) : cfg_(c) {}
  void configure(const StreamConfig& c) { cfg_ = c; }  // before the first segment
  void set_sink(StreamSink* s) { sink_ = s; }
  const StreamConfig& config() const { return cfg_; }
  const StreamCounters& counters() const { return c_; }
  // The policy direction d follows.
  Overlap policy(const DirStream& d) const { return d.policy == Overlap::Default ? cfg_.policy : d.policy; }
  // Whether it decides by segments (not first or last).
  bool target_based(const DirStream& d) const {
    Overlap p = policy(d);
    return p != Overlap::First && p != Overlap::Last;
  }
  static constexpr uint32_t kKeptSegments = flow::kKeptSegments;

  // One TCP segment of `flow` in direction `dir`. True when its data is
  // the stream's (delivered, held, or a retransmission of what it has):
  // false for no data, a RST's, or data before the stream began.
  bool segment(Stream& s, uint32_t flow, uint8_t dir, uint32_t seq, uint8_t flags, const uint8_t* data, uint32_t len);
  // A direction's handshake began again with another SYN (initial sequence
  // number isn): the stream starts after it, if it has no data yet.
  // False when it has.
  bool restart(Stream& s, uint8_t dir, uint32_t isn);
  // The connection ended: each direction's holes become gaps, and what was
  // buffered is delivered.
  void finish(Stream& s, uint32_t flow);
  // An inline IPS's normalization (Suricata's stream.inline): the bytes of
  // a segment (as segment() takes it, before it) that the stream already
  // has, held or delivered and kept, are set to the stream's, so that what
  // goes on to the receiver is what was inspected. The number of bytes
  // that changed.
  uint32_t normalize(Stream& s, uint8_t dir, uint32_t seq, uint8_t flags, uint8_t* data, uint32_t len);
  // The held (out-of-order) data of d that runs without a hole up to
  // stream offset `end` (a held byte at end - 1), at most `max` bytes of it:
  // copied to `out`, and its start returned (end, with `out` empty, when no
  // held byte is at end - 1). An inline IPS inspects it on the segment that
  // ends it, as Suricata's inline raw reassembly does.
  static uint64_t held_run(const DirStream& d, uint64_t end, uint32_t max, std::string& out);
  // Direction dir's receiver acknowledged the stream up to `offset`: the
  // bytes kept before it may go (they do once they are half of them).
  void acknowledged(Stream& s, uint8_t dir, uint64_t offset);

 private:
  friend class BatchReassembler;  // places whole batches (batch_reassembly.hh)
  // Where [lo, hi) takes the new data, as ranges (in order, disjoint).
  using Ranges = std::vector<std::pair<uint64_t, uint64_t>>;
  void new_wins(const DirStream& d, uint64_t lo, uint64_t hi, Ranges& out);
  void insert(DirStream& d, uint64_t off, const uint8_t* data, uint32_t len, const Ranges& wins);
  // The part [off, off+len) of a segment that was delivered already.
  void redelivered(DirStream& d, uint32_t flow, uint8_t dir, uint64_t off, const uint8_t* data, uint32_t len,
                   const Ranges& wins);
  void note_segment(DirStream& d, uint64_t lo, uint64_t hi);
  void drain(DirStream& d, uint32_t flow, uint8_t dir);
  void skip_hole(DirStream& d, uint32_t flow, uint8_t dir);
  void deliver(DirStream& d, uint32_t flow, uint8_t dir, const uint8_t* data, uint32_t len);
  void end(DirStream& d, uint32_t flow, uint8_t dir);
  void drop_held(DirStream& d, uint64_t n);
  static void count_regions(DirStream& d);
  StreamConfig cfg_;
  StreamSink* sink_ = nullptr;
  StreamCounters c_;
  Ranges wins_, keep_, ovl_;  // (scratch: new_wins())
};

}  // namespace shoal::flow
