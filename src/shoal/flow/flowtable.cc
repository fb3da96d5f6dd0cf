#include "shoal/flow/flowtable.hh"

#include <fmt/format.h>

#include <arpa/inet.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace shoal::flow {

namespace {
constexpr uint64_t kSec = 1'000'000'000ull;

}  // namespace

const char* release_name(Release r) {
  switch (r) {
    case Release::Expired: return "expired";
    case Release::Evicted: return "evicted";
    case Release::Reopened: return "reopened";
    case Release::End: return "end";
    case Release::Reset: return "reset";
  }
  return "?";
}

const char* const Timeouts::kArgNames[k::kFlowClasses] = {"TCP_SYN_SENT_TIMEOUT",
                                                          "TCP_SYN_RECV_TIMEOUT",
                                                          "TCP_ESTABLISHED_TIMEOUT",
                                                          "TCP_FIN_WAIT_TIMEOUT",
                                                          "TCP_CLOSE_WAIT_TIMEOUT",
                                                          "TCP_LAST_ACK_TIMEOUT",
                                                          "TCP_TIME_WAIT_TIMEOUT",
                                                          "TCP_CLOSE_TIMEOUT",
                                                          "UDP_TIMEOUT",
                                                          "UDP_STREAM_TIMEOUT",
                                                          "ICMP_TIMEOUT",
                                                          "GENERIC_TIMEOUT",
                                                          "TCP_MAX_RETRANS_TIMEOUT",
                                                          "TCP_UNACKNOWLEDGED_TIMEOUT"};

// nf_conntrack's defaults (Documentation/networking/nf_conntrack-sysctl.rst)
Timeouts::Timeouts() {
  const uint64_t s[k::kFlowClasses] = {120, 60, 432000, 120, 60, 30, 120, 10, 30, 120, 30, 600, 300, 300};
  for (int i = 0; i < k::kFlowClasses; ++i) ns[i] = s[i] * kSec;
}

FlowTable::Mapping::~Mapping() {
  if (p) munmap(p, n);
}

void FlowTable::Mapping::map(size_t bytes) {
  if (p) munmap(p, n);
  p = nullptr;
  n = bytes ? bytes : 1;
  void* m = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::invalid_argument(fmt::format("cannot map {} bytes for the flow table", n));
  p = m;
  // Large tables are looked up at random: huge pages spare a TLB miss per
  // lookup (advice only; the kernel may decline). The memory is then
  // touched here, at initialization, as DPDK takes its memory up front: the
  // page faults and zeroing (a quarter of a second per GB) are not paid by
  // the first packets, and the table's memory is committed from the start.
  if (n >= (size_t(2) << 20)) madvise(p, n, MADV_HUGEPAGE);
  madvise(p, n, MADV_POPULATE_WRITE);
}

uint32_t FlowTable::reserve(uint32_t bytes, uint32_t align, const std::string& owner) {
  if (initialized()) throw std::logic_error("flow state reserved after the flow table was built");
  if (align == 0 || (align & (align - 1))) align = 8;
  uint32_t off = (state_bytes_ + align - 1) & ~(align - 1);
  state_bytes_ = off + bytes;
  owners_.push_back(std::to_string(off) + "+" + std::to_string(bytes) + " " + owner);
  return off;
}

bool FlowTable::take(FlowTable& old, std::string& why) {
  if (!initialized() || !old.initialized()) return why = "a table was not built", false;
  if (cap_ != old.cap_ || mask_ != old.mask_ || frags_.size() != old.frags_.size())
    return why = fmt::format("its capacity changed ({} flows, now {})", old.cap_, cap_), false;
  if (owners_ != old.owners_ || state_bytes_ != old.state_bytes_)
    return why =
               "the elements that keep state in it (or their configurations) differ, or one keeps state that "
               "cannot move (streams, IDS state)",
           false;
  if (apps_ != old.apps_) return why = "its application protocol names changed", false;
  old.settle(UINT64_MAX);  // (the old graph is done: its held releases run, with its hooks)
  auto swap_map = [](Mapping& a, Mapping& b) {
    std::swap(a.p, b.p);
    std::swap(a.n, b.n);
  };
  swap_map(flow_mem_, old.flow_mem_);
  swap_map(state_mem_, old.state_mem_);
  swap_map(slot_mem_, old.slot_mem_);
  std::swap(flows_, old.flows_);
  std::swap(state_, old.state_);
  std::swap(slots_, old.slots_);
  std::swap(live_, old.live_);
  std::swap(free_, old.free_);
  std::swap(ended_, old.ended_);
  std::swap(ended_tail_, old.ended_tail_);
  std::swap(deferred_, old.deferred_);
  std::swap(held_, old.held_);
  std::swap(epoch_, old.epoch_);
  std::swap(fresh_, old.fresh_);
  std::swap(head_, old.head_);
  std::swap(tail_, old.tail_);
  std::swap(frags_, old.frags_);
  for (Stat Counters::*m : {&Counters::lookups, &Counters::inserts, &Counters::expired, &Counters::evicted,
                            &Counters::reopened, &Counters::reset, &Counters::no_flow, &Counters::frag_orphans,
                            &Counters::icmp_errors, &Counters::live, &Counters::tcp_ignored, &Counters::tcp_seq_over,
                            &Counters::tcp_ack_over, &Counters::tcp_bad_rst, &Counters::tcp_bad_state}) {
    uint64_t v = (old.c_.*m).get();
    (old.c_.*m).set((c_.*m).get());
    (c_.*m).set(v);
  }
  return true;
}

size_t FlowTable::bytes_per_flow(uint32_t state_bytes) {
  // the entry, its state, and two index slots (the index is at most half full)
  return sizeof(Flow) + state_bytes + 2 * sizeof(uint64_t);
}

size_t FlowTable::memory_bytes() const {
  return size_t(entries_) * (sizeof(Flow) + state_bytes_) + (mask_ + 1) * sizeof(uint64_t) +
         frags_.size() * sizeof(FragSlot);
}

void FlowTable::init(const Config& c) {
  cfg_ = c;
  if (cfg_.async_oneside) cfg_.tcp_window = false;
  if (cfg_.tcp_window) win_off_ = reserve(sizeof(k::TcpWindow), 4, "FlowTable TCP windows");
  state_bytes_ = (state_bytes_ + 7) & ~7u;
  uint64_t cap = c.capacity;
  if (c.memory) {
    uint64_t fit = c.memory / bytes_per_flow(state_bytes_);
    if (fit == 0)
      throw std::invalid_argument(
          fmt::format("MEMORY {} bytes holds no flow (each takes {} bytes)", c.memory, bytes_per_flow(state_bytes_)));
    // the flows and their spare entries fit
    uint64_t most = fit >= 5 * kSpare ? fit - kSpare : std::max<uint64_t>(1, fit * 4 / 5);
    if (most < cap) cap = most;
  }
  if (cap == 0) throw std::invalid_argument("CAPACITY must be at least 1");
  if (cap > (1u << 30)) throw std::invalid_argument("CAPACITY is at most 2^30 flows");
  cap_ = uint32_t(cap);
  entries_ = cap_ + spare(cap_);
  flow_mem_.map(size_t(entries_) * sizeof(Flow));
  state_mem_.map(size_t(entries_) * state_bytes_);
  flows_ = flow_mem_.get<Flow>();
  state_ = state_mem_.get<uint8_t>();
  size_t n = 16;
  while (n < size_t(cap_) * 2) n <<= 1;
  slot_mem_.map(n * sizeof(uint64_t));
  slots_ = slot_mem_.get<uint64_t>();
  mask_ = n - 1;
  uint32_t fs = 1;
  while (fs < c.frag_slots) fs <<= 1;
  frags_.assign(fs, FragSlot{});
  free_ = 0;
  ended_ = ended_tail_ = 0;
  fresh_ = 0;
  live_ = 0;
}

uint32_t FlowTable::find(const k::ConnKey& key) const {
  if (!cap_) return 0;
  size_t slot;
  return lookup(key, k::conn_hash(key), slot);
}

void FlowTable::unlink(uint32_t id) {
  Flow& f = flows_[id - 1];
  if (f.prev)
    flows_[f.prev - 1].next = f.next;
  else
    head_[f.cls] = f.next;
  if (f.next)
    flows_[f.next - 1].prev = f.prev;
  else
    tail_[f.cls] = f.prev;
  f.prev = f.next = 0;
}

void FlowTable::link_tail(uint32_t id, uint8_t cls) {
  Flow& f = flows_[id - 1];
  f.cls = cls;
  f.next = 0;
  f.prev = tail_[cls];
  if (tail_[cls])
    flows_[tail_[cls] - 1].next = id;
  else
    head_[cls] = id;
  tail_[cls] = id;
}

// Linear probing's deletion without tombstones: later entries of the same
// probe run move back into the hole.
void FlowTable::erase_slot(size_t hole) {
  size_t i = hole;
  for (;;) {
    i = (i + 1) & mask_;
    uint64_t s = slots_[i];
    if (s == 0) break;
    size_t home = uint32_t(s >> 32) & mask_;
    // s may move to the hole when its home is not in (hole, i]
    bool stays = hole <= i ? (home > hole && home <= i) : (home > hole || home <= i);
    if (!stays) {
      slots_[hole] = s;
      hole = i;
    }
  }
  slots_[hole] = 0;
}

void FlowTable::release(uint32_t id, Release why) {
  Flow& f = flows_[id - 1];
  // (held: while batches after the flow layer may hold its packets, or
  // inside a track, as below; a flow that ends at an expiry or a flush
  // with nothing held goes at once, as without hold)
  const bool held = hold_ && (tracking_ || epoch_ > done_);
  if (held)
    held_.push_back({epoch_, id, why, uint32_t(f.flags)});
  else if (tracking_)
    deferred_.push_back({id, why, f.flags});
  else
    for (auto& fn : release_) fn(id, f, why);
  size_t slot;
  if (lookup(f.key, f.hash, slot) == id) erase_slot(slot);
  unlink(id);
  f.flags = 0;
  if (!held) {
    f.next = ended_;
    ended_ = id;
    if (!ended_tail_) ended_tail_ = id;
  }
  --live_;
  c_.live.set(live_);
  switch (why) {
    case Release::Expired: c_.expired.add(); break;
    case Release::Evicted: c_.evicted.add(); break;
    case Release::Reopened: c_.reopened.add(); break;
    case Release::End: break;
    case Release::Reset: c_.reset.add(); break;
  }
}

// The hooks of the flows that ended inside a track, in the order they
// ended (their entries are not reused before).
void FlowTable::run_deferred() {
  std::vector<Deferred> d;
  d.swap(deferred_);
  for (const Deferred& e : d) {
    Flow& f = flows_[e.id - 1];
    f.flags = e.flags;
    for (auto& fn : release_) fn(e.id, f, e.why);
    f.flags = 0;
  }
}

void FlowTable::settle(uint64_t done) {
  done_ = done;
  while (!held_.empty() && held_.front().epoch <= done) settle_one();
}

// The oldest held release: its hooks (they see the flow's flags at its end,
// as when they run at once), then its entry free.
void FlowTable::settle_one() {
  const Held h = held_.front();
  held_.pop_front();
  Flow& f = flows_[h.id - 1];
  f.flags = decltype(f.flags)(h.flags);
  for (auto& fn : release_) fn(h.id, f, h.why);
  f.flags = 0;
  f.next = free_;
  free_ = h.id;
}

// The flow nearest its expiry: among list heads (each list's oldest), the
// smallest last-seen time plus the list's timeout.
uint32_t FlowTable::victim() const {
  uint32_t best = 0;
  uint64_t when = UINT64_MAX;
  for (int c = 0; c < k::kFlowClasses; ++c) {
    uint32_t id = head_[c];
    if (!id) continue;
    uint64_t d = flows_[id - 1].last_ns + cfg_.timeouts.ns[c];
    if (d < when) when = d, best = id;
  }
  return best;
}

uint32_t FlowTable::insert(const k::ParsedKey& pk, uint32_t hash, uint64_t now) {
  if (live_ == cap_) {
    uint32_t v = victim();
    if (!v) return 0;  // cannot happen: every live flow is on a list
    release(v, Release::Evicted);
  }
  uint32_t id;
  if (!free_ && fresh_ == entries_) reuse_ended();       // (a batch larger than the spare entries)
  if (!free_ && fresh_ == entries_ && !held_.empty()) {  // (more ended flows held than spare entries)
    c_.reused_early.add();
    settle_one();
  }
  const bool reused = free_ != 0;  // (an entry that held a flow)
  if (reused) {
    id = free_;
    free_ = flows_[id - 1].next;
  } else {
    id = ++fresh_;
  }
  Flow& f = flows_[id - 1];
  if (reused)
    for (auto& fn : reuse_) fn(id, f);
  uint32_t gen = f.gen;
  f = Flow{};
  f.gen = gen + 1;
  f.key = pk.key;
  f.hash = hash;
  f.first_ns = f.last_ns = now;
  f.orig_dir = cfg_.midstream || cfg_.async_oneside ? k::originator_dir(pk) : pk.dir;
  f.flags = Flow::kLive;  // track() links it to its class's list
  if (state_bytes_) std::memset(state(id), 0, state_bytes_);
  size_t slot;
  lookup(pk.key, hash, slot);  // the empty slot that ends the key's probe run
  slots_[slot] = (uint64_t(hash) << 32) | id;
  ++live_;
  c_.live.set(live_);
  c_.inserts.add();
  return id;
}

FlowTable::FragSlot& FlowTable::frag_slot(const k::ConnKey& key, uint32_t frag_id) {
  k::ConnKey fk{};
  for (int i = 0; i < 4; ++i) fk.a[i] = key.a[i], fk.b[i] = key.b[i];
  fk.proto = key.proto;
  fk.family = key.family;
  fk.vlan = key.vlan;
  return frags_[k::conn_hash(fk, frag_id) & (frags_.size() - 1)];
}

// A later fragment: the flow its first fragment opened, when that was seen.
uint32_t FlowTable::frag_lookup(const k::ParsedKey& pk, uint64_t now) {
  FragSlot& s = frag_slot(pk.key, pk.frag_id);
  bool same = s.flow && s.frag_id == pk.frag_id && s.proto == pk.key.proto && s.family == pk.key.family &&
              s.vlan == pk.key.vlan && now <= s.until_ns && std::memcmp(s.a, pk.key.a, 16) == 0 &&
              std::memcmp(s.b, pk.key.b, 16) == 0;
  if (!same || flows_[s.flow - 1].gen != s.gen || !(flows_[s.flow - 1].flags & Flow::kLive)) return 0;
  return s.flow;
}

namespace {
// k::tcp_conn_segment and k::tcp_conntrack each with the window check
// inlined into one call: without them track_hashed and continue_train,
// inlined into track_batch's loop, called the check's parts apart (10 to
// 20 ns a segment more in bench-flow's window rows).
[[gnu::flatten]] int conn_check(k::TcpWindow& w, uint8_t state, const k::TcpSeg& seg, uint8_t dir, uint8_t& next) {
  return k::tcp_conntrack(w, state, seg, dir, next);
}
[[gnu::flatten]] bool conn_segment(k::TcpWindow& w, k::TcpTrack& t, const k::TcpSeg& seg, uint8_t flags, uint8_t dir,
                                   bool mid, bool async, int& verdict, uint8_t& next) {
  return k::tcp_conn_segment(w, t, seg, flags, dir, mid, async, verdict, next);
}
}  // namespace

bool FlowTable::window_verdict(int verdict, uint8_t& fact) {
  switch (verdict) {
    case k::kWinAccept: return true;
    case k::kWinIgnore: c_.tcp_ignored.add(); return false;
    case k::kWinSeqOver: c_.tcp_seq_over.add(); break;
    case k::kWinAckOver: c_.tcp_ack_over.add(); break;
    case k::kWinBadRst: c_.tcp_bad_rst.add(); break;
    default: c_.tcp_bad_state.add(); break;
  }
  fact = kFactInvalid;
  return false;
}

// (Inlined into track_batch's loop: a call per packet, its spills and
// reloads, cost more than the lookup of a flow in cache.)
[[gnu::always_inline]] inline uint32_t FlowTable::track_hashed(const k::ParsedKey& pk, uint32_t hash, uint32_t ip_len,
                                                               uint64_t now, uint8_t& dir, uint32_t known,
                                                               const uint8_t* ip, uint8_t& fact) {
  bool fresh = false;
  // With window tracking, as conntrack: a segment it does not accept (or a
  // SYN sent again before any reply) renews nothing; one it accepts leaves
  // the connection in the timeout class it chooses (win_cls).
  bool renew = true;
  int win_cls = -1;
  uint32_t id;
  if (pk.kind == k::KeyKind::Frag) {
    id = frag_lookup(pk, now);
    if (!id) {
      c_.frag_orphans.add();
      c_.no_flow.add();
      return 0;
    }
    Flow& f = flows_[id - 1];
    dir = pk.dir == f.orig_dir ? 0 : 1;  // both endpoints' order is the flow's (ports are not compared)
  } else if (pk.kind == k::KeyKind::Conn || pk.kind == k::KeyKind::FirstFrag) {
    size_t slot;
    id = known ? known : lookup(pk.key, hash, slot);
    // A flow whose timeout passed before this packet has ended, whether or
    // not an expiry pass came since (they come once a batch): the packet
    // starts a new one (Suricata's flow lookup does the same), so where a
    // batch begins does not change which flow a packet joins.
    if (id && expired_at(flows_[id - 1], now)) {
      release(id, Release::Expired);
      id = 0;
    }
    if (pk.icmp_error) {
      c_.icmp_errors.add();
      if (!id) {  // an error about a connection not tracked: no flow of its own
        c_.no_flow.add();
        return 0;
      }
    }
    if (!id) {
      id = insert(pk, hash, now);
      if (!id) {
        c_.no_flow.add();
        return 0;
      }
      fresh = true;
    }
    Flow& f = flows_[id - 1];
    dir = pk.dir == f.orig_dir ? 0 : 1;
    if (f.key.proto == 6 && !pk.icmp_error && pk.l4_off) {
      bool fresh_flow = f.pkts[0] + f.pkts[1] == 0;
      // window tracking: a whole segment (not a fragment's piece)
      k::TcpSeg seg;
      const bool checked =
          cfg_.tcp_window && ip && pk.kind == k::KeyKind::Conn && k::tcp_segment(ip, ip_len, pk.l4_off, seg);
      // conntrack's SEEN_REPLY before this segment (its own counts after its tracking)
      bool replied = checked && tcp_window(id)->seen_reply;
      // a SYN on an ended connection's tuple opens a new one (with window
      // tracking, when conntrack would: see k::tcp_ct_reopens)
      bool reopen;
      uint8_t next = k::kCtKeep;  // with window tracking, conntrack's next state
      const uint8_t old_state = f.tcp.state;
      if (checked) {
        int verdict;
        reopen = conn_segment(*tcp_window(id), f.tcp, seg, pk.tcp_flags, dir, cfg_.midstream, cfg_.async_oneside,
                              verdict, next);
        if (!reopen) renew = window_verdict(verdict, fact);
      } else {
        reopen = k::tcp_track(f.tcp, pk.tcp_flags, dir, cfg_.midstream, cfg_.async_oneside);
      }
      if (reopen) {  // the old flow goes first
        release(id, Release::Reopened);
        id = insert(pk, hash, now);
        if (!id) {
          c_.no_flow.add();
          return 0;
        }
        fresh = true;
        dir = 0;
        replied = false;
        if (checked) {
          window_verdict(k::tcp_conn_first(*tcp_window(id), flows_[id - 1].tcp, seg, pk.tcp_flags, cfg_.midstream,
                                           cfg_.async_oneside),
                         fact);
        } else {
          k::tcp_track(flows_[id - 1].tcp, pk.tcp_flags, 0, cfg_.midstream, cfg_.async_oneside);
        }
        fresh_flow = true;
      }
      Flow& g = flows_[id - 1];
      if (fresh_flow && (pk.tcp_flags & (k::kTcpSyn | k::kTcpAck)) != k::kTcpSyn)
        g.flags |= Flow::kMidstream;  // (a SYN-ACK first too)
      g.flags &= uint8_t(~Flow::kJustEstablished);
      if (g.tcp.state == k::kTcpEstablished && !(g.flags & Flow::kEstablished))
        g.flags |= Flow::kEstablished | (g.flags & Flow::kMidstream ? 0 : Flow::kJustEstablished);
      g.tcp_flags[dir] |= pk.tcp_flags;
      if (checked &&
          k::tcp_conn_settle(*tcp_window(id), g.tcp, old_state, seg.index, dir, replied, reopen, fact & kFactInvalid,
                             next, g.last_ns + cfg_.timeouts.ns[g.cls], now, cfg_.timeouts.ns, renew, win_cls))
        kill_ = id;
    }
    if (pk.kind == k::KeyKind::FirstFrag) {
      FragSlot& s = frag_slot(pk.key, pk.frag_id);
      std::memcpy(s.a, pk.key.a, 16);
      std::memcpy(s.b, pk.key.b, 16);
      s.frag_id = pk.frag_id;
      s.proto = pk.key.proto;
      s.family = pk.key.family;
      s.vlan = pk.key.vlan;
      s.flow = id;
      s.gen = flows_[id - 1].gen;
      s.until_ns = now + 30 * kSec;  // the IP reassembly timeout
    }
  } else {
    c_.no_flow.add();
    return 0;
  }
  Flow& f = flows_[id - 1];
  if (renew && now > f.last_ns) f.last_ns = now;
  ++f.pkts[dir];
  f.bytes[dir] += ip_len;
  uint8_t cls = win_cls >= 0     ? uint8_t(win_cls)
                : renew || fresh ? k::flow_class(f.key.proto, f.tcp, f.pkts[1] != 0)
                                 : f.cls;
  if (fresh) {
    link_tail(id, cls);
    f.queued_ns = now;
  } else if (renew && (cls != f.cls || now - f.queued_ns >= cfg_.granularity_ns)) {
    unlink(id);
    link_tail(id, cls);
    f.queued_ns = now;
  }
  return id;
}

uint32_t FlowTable::track(const k::ParsedKey& pk, uint32_t ip_len, uint64_t now, uint8_t& dir, const uint8_t* ip) {
  c_.lookups.add();
  reuse_ended();
  ++epoch_;
  uint8_t fact = 0;
  tracking_ = true;
  uint32_t id = track_hashed(pk, hashable(pk) ? k::conn_hash(pk.key) : 0, ip_len, now, dir, 0, ip, fact);
  if (kill_) release(std::exchange(kill_, 0), Release::Reset);
  tracking_ = false;
  return id;
}

// The rest of a train after packet i, while nothing but the flow's counters
// would change: packets in i's direction of a flow other than TCP, or of an
// established TCP connection (no SYN, FIN or RST; not the packet after the
// one that completed the handshake). Such a packet's class, state and facts
// are the packet before's (less kFactFirstInDir), so the counters add up
// in registers and are written once; a list move a granularity later is
// made at the packet that is due one, as track_hashed would. The caller
// checked that packet i got a flow and packet i + 1 continues its train.
// Returns the next packet for track_hashed.
[[gnu::always_inline]] inline uint32_t FlowTable::continue_train(const k::ParsedKey* pk, const uint32_t* ip_len,
                                                                 const uint64_t* now, uint32_t n, uint32_t i,
                                                                 uint32_t* ids, uint8_t* dirs, uint8_t* facts,
                                                                 uint8_t fact, const uint8_t* const* ips) {
  uint32_t j = i + 1;
  uint32_t id = ids[i];
  Flow& f = flows_[id - 1];
  const bool tcp = f.key.proto == 6;
  if (tcp && (f.tcp.state != k::kTcpEstablished || (f.flags & Flow::kJustEstablished))) return j;
  // With window tracking each segment is checked, but an established
  // connection's ACK moves no state whatever the window says (conntrack:
  // ESTABLISHED stays), so the train goes on with its verdict as a fact.
  const bool window = tcp && cfg_.tcp_window && ips;
  const uint8_t d = dirs[i], kdir = pk[i].dir;
  const uint8_t later = uint8_t(fact & ~(kFactFirstInDir | kFactInvalid));
  const uint8_t stop = k::kTcpSyn | k::kTcpFin | k::kTcpRst;
  uint64_t pkts = 0, bytes = 0, last = f.last_ns;
  uint8_t flags = 0;
  for (; j < n && trains_[j] && pk[j].dir == kdir && !(tcp && ((pk[j].tcp_flags & stop) || !pk[j].l4_off)) &&
         last + cfg_.timeouts.ns[f.cls] > now[j];  // (a flow timed out: track_hashed ends it)
       ++j) {
    uint8_t wf = 0;
    bool renew = true;
    uint8_t cls = f.cls;
    if (window) {
      k::TcpSeg seg;
      if (!k::tcp_segment(ips[j], ip_len[j], pk[j].l4_off, seg)) break;  // (track_hashed takes it)
      uint8_t next;
      renew = window_verdict(conn_check(*tcp_window(id), f.tcp.state, seg, d, next), wf);
      k::TcpWindow& w = *tcp_window(id);
      if (renew) {  // (unacknowledged data, retransmissions and zero windows move the class)
        cls = k::tcp_timeout_class(w, f.tcp.state, seg.index, w.seen_reply != 0, cfg_.timeouts.ns);
        if (w.seen_reply) w.assured = 1;  // (ESTABLISHED stays ESTABLISHED)
      }
      if (d == 1 && !(wf & kFactInvalid)) w.seen_reply = 1;
    }
    ids[j] = id;
    dirs[j] = d;
    if (facts) facts[j] = uint8_t(later | wf);
    ++pkts;
    bytes += ip_len[j];
    flags |= pk[j].tcp_flags;
    if (renew && now[j] > last) last = now[j];
    if (renew && (cls != f.cls || now[j] - f.queued_ns >= cfg_.granularity_ns)) {
      unlink(id);
      link_tail(id, cls);
      f.queued_ns = now[j];
    }
  }
  f.last_ns = last;
  f.pkts[d] += pkts;
  f.bytes[d] += bytes;
  if (tcp) f.tcp_flags[d] |= flags;
  return j;
}

void FlowTable::track_batch(const k::ParsedKey* pk, const uint32_t* ip_len, const uint64_t* now, uint32_t n,
                            uint32_t* ids, uint8_t* dirs, uint8_t* facts, const uint8_t* const* ips) {
  reuse_ended();
  ++epoch_;
  tracking_ = true;
  if (hashes_.size() < n) hashes_.resize(n), trains_.resize(n);
  c_.lookups.add(n);
  // A packet of the same connection as the packet before it (a train: a TCP
  // window's burst, a video frame) takes that packet's hash, and below its
  // flow id: after a packet is tracked, its key's index slot names the id
  // it got (found, inserted, or inserted again after a reopen), so the
  // lookup would find the same one.
  for (uint32_t i = 0; i < n; ++i) {
    if (i && same_conn(pk[i], pk[i - 1])) {
      hashes_[i] = hashes_[i - 1];
      trains_[i] = 1;
      continue;
    }
    trains_[i] = 0;
    uint32_t h = hashable(pk[i]) ? k::conn_hash(pk[i].key) : 0;
    hashes_[i] = h;
    __builtin_prefetch(&slots_[h & mask_]);
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (trains_[i]) continue;
    uint64_t s = slots_[hashes_[i] & mask_];
    if (s && uint32_t(s >> 32) == hashes_[i]) {
      const Flow* f = &flows_[uint32_t(s) - 1];
      __builtin_prefetch(f);
      __builtin_prefetch(reinterpret_cast<const char*>(f) + 64);
      if (cfg_.tcp_window && pk[i].key.proto == 6) __builtin_prefetch(state(uint32_t(s)) + win_off_);
    }
  }
  for (uint32_t i = 0; i < n;) {
    uint8_t fact = 0;
    ids[i] = track_hashed(pk[i], hashes_[i], ip_len[i], now[i], dirs[i], trains_[i] ? ids[i - 1] : 0,
                          ips ? ips[i] : nullptr, fact);
    if (facts && ids[i]) {
      const Flow& f = flows_[ids[i] - 1];
      bool est = established(f);
      fact |= uint8_t((est ? kFactEstablished : 0) | (f.pkts[dirs[i]] == 1 ? kFactFirstInDir : 0) |
                      (est && !(f.flags & Flow::kJustEstablished) ? kFactEstablishedBefore : 0) |
                      (f.flags & Flow::kMidstream ? kFactMidstream : 0));
    }
    if (facts) facts[i] = fact;
    if (kill_) {  // (the packets after it start a new flow)
      release(std::exchange(kill_, 0), Release::Reset);
      if (i + 1 < n) trains_[i + 1] = 0;
    }
    if (i + 1 < n && trains_[i + 1] && ids[i])
      i = continue_train(pk, ip_len, now, n, i, ids, dirs, facts, fact, ips);
    else
      ++i;
  }
  tracking_ = false;
}

void FlowTable::expire(uint64_t now) {
  if (!deferred_.empty()) run_deferred();
  for (int c = 0; c < k::kFlowClasses; ++c) {
    while (head_[c]) {
      uint32_t id = head_[c];
      if (!expired_at(flows_[id - 1], now)) break;
      release(id, Release::Expired);
    }
  }
}

void FlowTable::flush() {
  if (!deferred_.empty()) run_deferred();
  if (hold_) settle(UINT64_MAX);  // (at a stop: what was held is done; the flows below go at once)
  for (int c = 0; c < k::kFlowClasses; ++c)
    while (head_[c]) release(head_[c], Release::End);
}

uint16_t FlowTable::app_id(const std::string& name) {
  auto it = std::find(apps_.begin(), apps_.end(), name);
  if (it != apps_.end()) return uint16_t(it - apps_.begin() + 1);
  if (apps_.size() >= 65535) throw std::invalid_argument("too many application protocol names");
  apps_.push_back(name);
  return uint16_t(apps_.size());
}

const std::string& FlowTable::app_name(uint16_t id) const {
  static const std::string none = "-";
  return id && id <= apps_.size() ? apps_[id - 1] : none;
}

const char* tcp_state_name(uint8_t s) {
  static const char* const n[] = {"NONE",       "SYN_SENT", "SYN_RECV",  "ESTABLISHED", "FIN_WAIT",
                                  "CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE",       "SYN_SENT2"};
  return s < std::size(n) ? n[s] : "?";
}

namespace {
std::string endpoint(const uint32_t* a, uint8_t family) {
  char buf[INET6_ADDRSTRLEN];
  if (family == 4) {
    uint32_t be = htonl(a[0]);
    inet_ntop(AF_INET, &be, buf, sizeof buf);
  } else {
    uint32_t be[4];
    for (int i = 0; i < 4; ++i) be[i] = htonl(a[i]);
    inet_ntop(AF_INET6, be, buf, sizeof buf);
  }
  return buf;
}
}  // namespace

std::string flow_tuple(const Flow& f) {
  const k::ConnKey& k = f.key;
  bool ab = f.orig_dir == 0;
  const uint32_t* src = ab ? k.a : k.b;
  const uint32_t* dst = ab ? k.b : k.a;
  uint16_t sp = ab ? k.pa : k.pb, dp = ab ? k.pb : k.pa;
  const char* proto = k.proto == 6    ? "tcp"
                      : k.proto == 17 ? "udp"
                      : k.proto == 1  ? "icmp"
                      : k.proto == 58 ? "icmp6"
                                      : nullptr;
  std::string p = proto ? proto : fmt::format("proto{}", k.proto);
  std::string s = endpoint(src, k.family), d = endpoint(dst, k.family);
  if (k.family == 6) s = "[" + s + "]", d = "[" + d + "]";
  return fmt::format("{} {}:{} > {}:{}", p, s, sp, d, dp);
}

}  // namespace shoal::flow
