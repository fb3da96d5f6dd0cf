// FlowTable: the flow layer's connection table, one per worker (flows stay on
// one worker: FromDump and FromDevice spread them with a symmetric hash).
//
// One lookup per packet gives a flow handle. Both directions of a connection
// share the flow and the packet's direction is known (0: the originator's,
// the first packet's). Every stateful element on the path reserves bytes of
// per-flow state before the table is built and reads them by handle.
//
// Bounded: CAPACITY flows, allocated once; nothing grows with traffic.
// Expiry is exact and costs O(1) per packet: flows sit on one list per timeout
// class (a TCP state, UDP, ICMP, other), in the order they were last seen, so
// the head of each list is the next to expire there; expire(now) looks only
// at list heads, and a packet that finds a flow past its timeout ends it and
// starts a new one (so which flow a packet joins does not depend on when an
// expiry pass ran: once a batch, at its first packet). A full table evicts the flow nearest its expiry (among flows
// with the same timeout, the oldest idle), so a flood of half-open
// connections (SYN_SENT, two minutes) evicts itself before an established
// connection (five days) goes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shoal/core/stat.hh"
#include "shoal/kernels/flowkey.hh"
#include "shoal/kernels/flowstate.hh"
#include "shoal/kernels/tcpwindow.hh"

namespace shoal::flow {

// Why a flow left the table.
// Reset: with window tracking, a TCP connection a reset ended before any
// reply came (conntrack removes it at once: a refused connection, a scan's
// probe).
enum class Release : uint8_t { Expired, Evicted, Reopened, End, Reset };
const char* release_name(Release r);

// One entry: two cache lines, plain data (the table is zero-filled memory).
// The first line is what a lookup and the expiry lists touch.
struct alignas(64) Flow {
  k::ConnKey key;  // canonical
  uint64_t last_ns;
  uint64_t queued_ns;   // when it last moved to its list's tail
  uint32_t prev, next;  // the class list (0: none; ids are 1-based)
  // second line
  uint64_t first_ns;
  uint64_t pkts[2], bytes[2];  // per direction: 0 originator, 1 responder (IP bytes)
  uint32_t hash;
  uint32_t gen;  // bumps each time a flow takes the entry (an ended flow keeps it until its entry is reused)
  k::TcpTrack tcp;
  uint8_t orig_dir;      // canonical direction of the originator
  uint8_t cls;           // timeout class (k::FlowClass)
  uint8_t flags;         // kLive, kMidstream, kEstablished, kJustEstablished
  uint8_t tcp_flags[2];  // every TCP flag seen per direction
  uint16_t app;          // application protocol (FlowTable::app_name), 0: not known
  // kEstablished: the TCP connection reached ESTABLISHED (it stays set
  // through the close, as Suricata's "established" does); kJustEstablished:
  // the last packet tracked is the one that completed the handshake (not
  // set for a connection picked up midstream: established from its first
  // packet here, from its second in Suricata)
  static constexpr uint8_t kLive = 1, kMidstream = 2, kEstablished = 4, kJustEstablished = 8;
};
static_assert(sizeof(Flow) == 128, "a flow entry is two cache lines");

// Per-packet facts (Anno::flow_facts): the flow's condition right after the
// packet, which later packets of the same batch may change.
constexpr uint8_t kFactEstablished = 1;  // TCP: the handshake completed; others: both directions seen
constexpr uint8_t kFactFirstInDir = 2;   // the flow's first packet in this packet's direction
// TCP: the handshake had completed before this packet (the packet that
// completes it is not yet "established" to Suricata's flow keyword: its flow
// engine reads the session's state before the stream engine sees the packet);
// others: as kFactEstablished
constexpr uint8_t kFactEstablishedBefore = 4;
// TCP window tracking (Config::tcp_window): the segment is outside the
// connection's window (conntrack's INVALID); it moved nothing
constexpr uint8_t kFactInvalid = k::kFlowFactInvalid;
// TCP: the connection was picked up without its handshake (Flow::kMidstream
// as of this packet: a flow that ends later in the batch has its flags
// cleared by the time the elements after the flow layer see the packet)
constexpr uint8_t kFactMidstream = 16;

struct Timeouts {
  uint64_t ns[k::kFlowClasses];
  Timeouts();                                           // Linux conntrack's defaults
  static const char* const kArgNames[k::kFlowClasses];  // TCP_ESTABLISHED_TIMEOUT...
};

struct Config {
  uint32_t capacity = 65536;
  uint64_t memory = 0;  // bytes; 0: no cap beyond capacity
  Timeouts timeouts;
  bool midstream = true;  // pick up TCP connections without their handshake
  // a capture of one side of a TCP connection (asymmetric routing): its
  // handshake completes without the other side's packets (Suricata's
  // stream.async-oneside)
  bool async_oneside = false;
  // A flow moves to its expiry list's tail at most once per granularity
  // (or when its class changes), so a busy flow costs no list work on most
  // packets; an idle flow may then end up to this much after its timeout
  // (a packet after the timeout starts a new flow all the same).
  // 0: every packet moves it, and expiry is exact.
  uint64_t granularity_ns = 1'000'000'000;
  uint32_t frag_slots = 4096;
  // Track each TCP connection as conntrack does (k::tcp_conntrack: its
  // state table and sequence and acknowledgement windows; 64 bytes of state
  // per flow): a segment outside them does not move the connection's state
  // (a forged reset does not close it) and gets kFactInvalid. Needs the
  // packets' IP headers (track_batch's `ips`). Not with async_oneside (one
  // side's capture has no windows to check).
  bool tcp_window = false;
};

// Written by the table's worker, read by any thread (handlers).
struct Counters {
  Stat lookups, inserts, expired, evicted, reopened;
  Stat reset;         // TCP connections a reset ended before any reply (Release::Reset)
  Stat no_flow;       // packets that got no flow (not IP, truncated, fragment of an unknown datagram)
  Stat frag_orphans;  // later fragments whose first fragment was not seen (or has expired)
  Stat icmp_errors;   // ICMP errors mapped to the connection they quote
  // TCP window tracking: segments outside the window that pass (a
  // retransmission of acknowledged data, an overly delayed ACK), and the
  // invalid ones by reason
  Stat tcp_ignored, tcp_seq_over, tcp_ack_over, tcp_bad_rst, tcp_bad_state;
  Stat live;  // flows in the table
  // Held releases (FlowTable::hold): entries a new flow needed before the
  // batches holding the ended flow's packets were done
  Stat reused_early;
};

class FlowTable {
 public:
  using ReleaseFn = std::function<void(uint32_t id, const Flow& f, Release why)>;
  FlowTable() = default;
  FlowTable(const FlowTable&) = delete;
  FlowTable& operator=(const FlowTable&) = delete;

  // Before init(): reserve `bytes` of per-flow state (zeroed when a flow
  // starts); returns its offset in the flow's state block. `owner` names
  // what the bytes mean (its element and configuration): a hot swap
  // carries the table only to one whose reservations are the same.
  uint32_t reserve(uint32_t bytes, uint32_t align = 8, const std::string& owner = "");
  // Hot swap: takes `old`'s flows with their state, index, expiry lists,
  // fragments and counters (old is left empty: its release callbacks see
  // nothing), when both tables were built alike: the same capacity, the
  // same state reservations and application names. Otherwise false, with
  // why, and nothing moves. Timeouts are this table's from now on.
  bool take(FlowTable& old, std::string& why);
  // Called (in registration order) for each flow as it leaves the table,
  // before its state is reused. A flow that ends inside track() or
  // track_batch() (a SYN reopened its tuple, a full table evicted it, a
  // reset before any reply) is seen go after the packets tracked before its
  // end went on through the elements after the flow layer: at the next
  // track, expire() or flush() (a TCP stream then has all its segments
  // before it is finished).
  void on_release(ReleaseFn f) { release_.push_back(std::move(f)); }
  // Called for an ended flow's entry just before a new flow takes it (its
  // state is then the ended flow's last: what elements still holding its
  // packets wrote into it after the release included).
  using ReuseFn = std::function<void(uint32_t id, const Flow& f)>;
  void on_reuse(ReuseFn f) { reuse_.push_back(std::move(f)); }
  // Elements after the flow layer hold batches for later (an offload
  // aggregate in flight, a Batcher's open aggregate) and use their packets'
  // flow state then. With hold(true), a flow that ends inside a track, or
  // at an expiry while batches are held, is stamped with the epoch (the
  // number of tracks so far, as of its end), and its release hooks and the
  // reuse of its entry wait until settle() says every batch up to that
  // epoch is done (one that ends at an expiry or a flush with nothing held
  // goes at once, as without hold): a
  // record written then counts the held packets, and their state is not a
  // new flow's. Without it, the next track settles the ones before (the
  // packets of a batch go through the elements after the flow layer before
  // the next batch comes). An entry a new flow needs before its time (more
  // ended flows held than spare entries) is taken early, its hooks run
  // then, counted in reused_early.
  void hold(bool on) { hold_ = on; }
  bool held() const { return hold_; }
  uint64_t epoch() const { return epoch_; }
  // Held releases stamped at or before `done` run their hooks and free their
  // entries, in the order the flows ended.
  void settle(uint64_t done);
  // Allocates the table; throws std::invalid_argument when the memory cap
  // leaves room for no flow. The effective capacity is capacity().
  void init(const Config& c);
  bool initialized() const { return cap_ != 0; }

  // One packet, whose parsed key is `pk` and IP length `ip_len`, at time
  // `now` (ns; packet time). Returns the flow id (1-based; 0: no flow) and
  // sets `dir` (0 from the originator).
  // `ip`: the packet's IP header (`ip_len` bytes of it captured), which TCP
  // window tracking reads; nullptr: segments are not checked.
  uint32_t track(const k::ParsedKey& pk, uint32_t ip_len, uint64_t now, uint8_t& dir, const uint8_t* ip = nullptr);
  // A batch of packets, the way a vector processor does it: every key's
  // hash and index slot first (prefetched), then the entries the slots
  // name (prefetched), then each packet. Same results as track() on each.
  // `facts` (optional) gets each packet's kFact* bits; `ips` (optional) the
  // packets' IP headers, for TCP window tracking.
  void track_batch(const k::ParsedKey* pk, const uint32_t* ip_len, const uint64_t* now, uint32_t n, uint32_t* ids,
                   uint8_t* dirs, uint8_t* facts = nullptr, const uint8_t* const* ips = nullptr);
  static bool established(const Flow& f) {
    return f.key.proto == 6 ? (f.flags & Flow::kEstablished) != 0 : f.pkts[0] && f.pkts[1];
  }
  // Lookup only (no insert, no update): the id of `key`, or 0.
  uint32_t find(const k::ConnKey& key) const;
  // Expires every flow whose timeout has passed at `now`.
  void expire(uint64_t now);
  // Releases every flow (reason End), oldest first within each class.
  void flush();

  Flow& flow(uint32_t id) { return flows_[id - 1]; }
  const Flow& flow(uint32_t id) const { return flows_[id - 1]; }
  uint8_t* state(uint32_t id) { return state_ + size_t(id - 1) * state_bytes_; }
  uint64_t timeout_ns(const Flow& f) const { return cfg_.timeouts.ns[f.cls]; }
  // Whether f's timeout has passed at `now` (expire() ends it; a packet
  // that finds it starts a new flow).
  bool expired_at(const Flow& f, uint64_t now) const { return f.last_ns + cfg_.timeouts.ns[f.cls] <= now; }
  // A TCP flow's window state (Config::tcp_window), or nullptr.
  k::TcpWindow* tcp_window(uint32_t id) {
    return cfg_.tcp_window ? reinterpret_cast<k::TcpWindow*>(state(id) + win_off_) : nullptr;
  }

  uint32_t capacity() const { return cap_; }
  uint32_t entries() const { return entries_; }  // ids are 1..entries()
  uint32_t size() const { return live_; }
  uint32_t state_bytes() const { return state_bytes_; }
  size_t memory_bytes() const;  // what init() allocated
  static size_t bytes_per_flow(uint32_t state_bytes);
  const Counters& counters() const { return c_; }
  // Application protocol names for Flow::app (L7 classification registers
  // them at configure time): the id of a name, made on first use (1-based).
  uint16_t app_id(const std::string& name);
  const std::string& app_name(uint16_t id) const;
  const Config& config() const { return cfg_; }
  // Every live flow, oldest first within each class (for `flows` handlers).
  template <class F>
  void for_each(F&& f) const {
    for (int c = 0; c < k::kFlowClasses; ++c)
      for (uint32_t id = head_[c]; id; id = flows_[id - 1].next) f(id, flows_[id - 1]);
  }

 private:
  struct FragSlot {
    uint32_t a[4], b[4];
    uint32_t frag_id;
    uint32_t flow, gen;
    uint8_t proto, family;
    uint16_t vlan;
    uint64_t until_ns;
  };
  static bool hashable(const k::ParsedKey& pk) {
    return pk.kind == k::KeyKind::Conn || pk.kind == k::KeyKind::FirstFrag;
  }
  // `known`: the key's flow id when the caller knows it (the packet before,
  // of the same connection, got it), which spares the index lookup.
  // `ip` (nullable) for window tracking; `fact` gets kFactInvalid when the
  // segment is outside its window.
  uint32_t track_hashed(const k::ParsedKey& pk, uint32_t hash, uint32_t ip_len, uint64_t now, uint8_t& dir,
                        uint32_t known, const uint8_t* ip, uint8_t& fact);
  // A flow track_hashed found a reset ended before any reply (window
  // tracking): its caller releases it (Release::Reset) once the packet's
  // facts are taken; the packet keeps the id, whose state stays readable
  // until the next batch (ended_).
  uint32_t kill_ = 0;
  // A window check's verdict (k::tcp_conntrack's) counted: false when the
  // segment must not move the connection's state, with kFactInvalid in
  // `fact` when it is invalid.
  bool window_verdict(int verdict, uint8_t& fact);
  uint32_t continue_train(const k::ParsedKey* pk, const uint32_t* ip_len, const uint64_t* now, uint32_t n, uint32_t i,
                          uint32_t* ids, uint8_t* dirs, uint8_t* facts, uint8_t fact, const uint8_t* const* ips);
  // The packets of a train (pk and the packet before it of one connection):
  // the second needs no hash and no lookup of its own.
  static bool same_conn(const k::ParsedKey& x, const k::ParsedKey& y) {
    return x.kind == k::KeyKind::Conn && y.kind == k::KeyKind::Conn && !x.icmp_error && !y.icmp_error && x.key == y.key;
  }
  uint32_t lookup(const k::ConnKey& key, uint32_t hash, size_t& slot) const {
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      uint64_t s = slots_[i];
      if (s == 0) {
        slot = i;
        return 0;
      }
      if (uint32_t(s >> 32) == hash && flows_[uint32_t(s) - 1].key == key) {
        slot = i;
        return uint32_t(s);
      }
    }
  }
  uint32_t insert(const k::ParsedKey& pk, uint32_t hash, uint64_t now);
  void release(uint32_t id, Release why);
  void unlink(uint32_t id);
  void link_tail(uint32_t id, uint8_t cls);
  void erase_slot(size_t slot);
  uint32_t victim() const;
  FragSlot& frag_slot(const k::ConnKey& key, uint32_t frag_id);
  uint32_t frag_lookup(const k::ParsedKey& pk, uint64_t now);

  Config cfg_;
  uint32_t cap_ = 0, live_ = 0, state_bytes_ = 0;
  // Entries: CAPACITY flows, and spare ones so that a batch of up to kSpare
  // packets never reuses the entry of a flow that ended in it (ended_).
  static constexpr uint32_t kSpare = 256;
  static uint32_t spare(uint32_t cap) { return cap / 4 < kSpare ? cap / 4 : kSpare; }
  uint32_t entries_ = 0;
  uint32_t win_off_ = 0;  // the TcpWindow's offset in the state block
  // Anonymous mappings: zero pages, touched only when used.
  struct Mapping {
    void* p = nullptr;
    size_t n = 0;
    Mapping() = default;
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    ~Mapping();
    void map(size_t bytes);
    template <class T>
    T* get() const {
      return static_cast<T*>(p);
    }
  };
  Mapping flow_mem_, state_mem_, slot_mem_;
  Flow* flows_ = nullptr;
  uint8_t* state_ = nullptr;
  uint64_t* slots_ = nullptr;     // the index: hash << 32 | id; 0: empty
  std::vector<uint32_t> hashes_;  // track_batch scratch
  std::vector<uint8_t> trains_;   // track_batch scratch: 1 when a packet continues the one before
  size_t mask_ = 0;
  uint32_t free_ = 0;  // free list through Flow::next
  // Ids released since the batch began (a list through Flow::next, and its
  // tail): reused only from the next batch on, while the free list or fresh
  // entries last, so the packets of a batch tracked before their flow ended
  // (a reopen, an eviction) still name its state when the elements after
  // the flow layer take them.
  uint32_t ended_ = 0, ended_tail_ = 0;
  // hold(true): releases waiting for their epoch to be done, in order
  struct Held {
    uint64_t epoch;
    uint32_t id;
    Release why;
    uint32_t flags;  // the flow's at its end, for its hooks
  };
  bool hold_ = false;
  uint64_t epoch_ = 0, done_ = 0;  // tracks so far; settle()'s last: every batch up to it is done
  std::deque<Held> held_;
  void settle_one();
  // Releases inside a track (tracking_): their hooks wait (run_deferred),
  // and see the flow's flags at its end.
  bool tracking_ = false;
  struct Deferred {
    uint32_t id;
    Release why;
    uint8_t flags;
  };
  std::vector<Deferred> deferred_;
  void run_deferred();
  void reuse_ended() {
    if (!deferred_.empty()) run_deferred();
    if (!ended_) return;
    flows_[ended_tail_ - 1].next = free_;
    free_ = ended_;
    ended_ = ended_tail_ = 0;
  }
  uint32_t fresh_ = 0;  // entries never used yet start here (ids fresh_+1..entries_)
  uint32_t head_[k::kFlowClasses] = {}, tail_[k::kFlowClasses] = {};
  std::vector<FragSlot> frags_;
  std::vector<ReleaseFn> release_;
  std::vector<ReuseFn> reuse_;
  std::vector<std::string> apps_;
  std::vector<std::string> owners_;  // per reservation: "offset+bytes owner"
  Counters c_;
};

// "tcp 10.0.0.1:1234 > 10.0.0.2:80": the key as the originator sent it.
std::string flow_tuple(const Flow& f);
const char* tcp_state_name(uint8_t state);  // conntrack's names: SYN_SENT .. CLOSE, SYN_SENT2, NONE

}  // namespace shoal::flow
