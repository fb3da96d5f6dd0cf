// The flow table as a device keeps it (GASPP §4: the connection table lives
// in device memory and kernels update it): open addressing with linear
// probing over 64-bit slots (hash << 32 | id), the flows in an entry array,
// lock-free insertion (an entry is taken from the free list or claimed with
// an atomic add, its key written, then published into a slot with a
// compare-and-swap). The same functions run in CUDA kernels and, with the
// compiler's atomics, on the host backend's threads.
//
// A batch takes three launches and a sort, so the result does not depend on
// which thread wins a race: (1) find or insert each packet's flow; (2) a
// stable sort of the packets by flow (CUB on CUDA) puts each flow's packets
// in arrival order; (3) one thread per flow walks its packets in that order
// through what the CPU table does to a flow (FlowTable::track_hashed): the
// originator, each packet's direction, conntrack's TCP states (k::tcp_track;
// a SYN on a closed connection reopens it in place), with window tracking
// conntrack's checks of each segment and its shorter timeouts
// (k::tcp_conn_segment and k::tcp_conn_settle, the CPU table's own code; a
// reset before any reply ends the flow, and a later packet of the tuple in
// the batch starts a new one in the same entry), the per-direction counters
// and flags, the last time and the timeout class. Flow ids depend on the
// race; everything else equals the CPU table's.
//
// Expiry (dev_flow_expire): one thread per entry compares its last time plus
// its class's timeout with the time given, as the CPU table's lists do
// (exact; GASPP marks and sweeps with one timeout, so a flow lives one to two
// of it); a packet that finds its flow past the timeout starts a new one in
// the entry (the walk), as the CPU table's lookup does. An expired flow's
// slot becomes a tombstone (lookups pass it, inserts do not reuse it, so no
// probe run is ever cut) and its entry goes on the free list; once
// tombstones fill a quarter of the slots the index is rebuilt from the live
// entries.
#pragma once
#include "shoal/kernels/atomic.hh"
#include "shoal/kernels/flowhash.hh"
#include "shoal/kernels/flowkey.hh"
#include "shoal/kernels/flowstate.hh"
#include "shoal/kernels/tcpwindow.hh"

namespace shoal::k {

struct DevFlow {
  ConnKey key;
  unsigned long long first_ns, last_ns;
  unsigned long long pkts[2], bytes[2];  // per direction: 0 originator, 1 responder (IP bytes)
  TcpTrack tcp;
  uint8_t orig_dir;  // canonical direction of the originator
  uint8_t cls;       // timeout class (FlowClass)
  uint8_t flags;     // kDevMidstream, kDevEstablished, kDevJustEstablished (as flow::Flow's)
  uint8_t status;    // kDevFree, kDevLive, kDevOrphan
  uint8_t tcp_flags[2];
  uint8_t pad[6];
};
static_assert(sizeof(DevFlow) == 104, "a device flow is 104 bytes");
constexpr uint8_t kDevMidstream = 2, kDevEstablished = 4, kDevJustEstablished = 8;
// An entry is free (on the free list, or never used), holds a live flow, or
// was claimed by a thread that lost the race to publish its key (reclaimed
// by the next expiry pass).
constexpr uint8_t kDevFree = 0, kDevLive = 1, kDevOrphan = 2;
constexpr unsigned long long kDevTomb = ~0ull;  // a slot whose flow expired

// Counters the kernels keep (device memory).
struct DevFlowCounters {
  uint32_t used;      // entries ever claimed (may pass capacity: then full)
  uint32_t full;      // packets that found no room
  uint32_t free_n;    // entries on the free list (as int32: below 0 after pops that found it empty)
  uint32_t tombs;     // tombstones in the index
  uint32_t live;      // flows in the table
  uint32_t inserts;   // flows started
  uint32_t expired;   // flows ended by their timeout
  uint32_t reopened;  // TCP connections a SYN reopened
  // with window tracking: segments conntrack ignored, found past the
  // receiver's window, acknowledging the unsent, resets out of place,
  // segments the state does not allow; connections a reset before any
  // reply ended
  uint32_t tcp_ignored, tcp_seq_over, tcp_ack_over, tcp_bad_rst, tcp_bad_state;
  uint32_t reset;
  uint32_t evicted;  // flows a full table evicted (dev_flow_evict)
};

struct DevFlowView {
  unsigned long long* slots = nullptr;  // mask + 1 of them; 0: empty
  DevFlow* flows = nullptr;             // capacity of them
  uint32_t* free_ids = nullptr;         // the free list (capacity entries)
  DevFlowCounters* c = nullptr;
  TcpWindow* win = nullptr;  // per entry, with window tracking (else nullptr)
  uint32_t mask = 0, capacity = 0;
};

SHOAL_HD unsigned long long atomic_cas64(unsigned long long* p, unsigned long long expect, unsigned long long want) {
#if defined(__CUDA_ARCH__)
  return atomicCAS(p, expect, want);
#else
  __atomic_compare_exchange_n(p, &expect, want, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return expect;
#endif
}
SHOAL_HD unsigned long long atomic_load64(const unsigned long long* p) {
#if defined(__CUDA_ARCH__)
  return *(volatile const unsigned long long*)p;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}
// Makes an entry's key visible before the slot that names it. On the host
// the publishing CAS has release order (and lookups load slots with
// acquire), which is all that is needed.
SHOAL_HD void publish_fence() {
#if defined(__CUDA_ARCH__)
  __threadfence();
#endif
}

// An entry for a new flow: from the free list, else never used; 0 when the
// table is full.
SHOAL_HD uint32_t dev_flow_claim(const DevFlowView& t) {
  uint32_t had = atomic_add32(&t.c->free_n, ~0u);  // (-1; dev_flow_fix undoes what found the list empty)
  if (int32_t(had) > 0) return t.free_ids[had - 1] + 1;
  uint32_t e = atomic_add32(&t.c->used, 1);
  if (e >= t.capacity) return 0;
  return e + 1;
}

// The flow of `key` (1-based id), inserting it when absent; 0 when the table
// is full. A new entry is live with its key and nothing else: the walk that
// follows gives it its first packet.
SHOAL_HD uint32_t dev_flow_find_or_insert(const DevFlowView& t, const ConnKey& key, uint32_t hash) {
  uint32_t mine = 0;  // an entry claimed and filled, not yet published
  uint32_t i = hash & t.mask;
  for (uint32_t probes = 0; probes <= t.mask; ++probes, i = (i + 1) & t.mask) {
    unsigned long long s = atomic_load64(&t.slots[i]);
    while (s == 0) {
      if (!mine) {
        mine = dev_flow_claim(t);
        if (!mine) {
          atomic_add32(&t.c->full, 1);
          return 0;
        }
        DevFlow& f = t.flows[mine - 1];
        f = DevFlow{};
        f.key = key;
        f.status = kDevLive;
        if (t.win) t.win[mine - 1] = TcpWindow{};
        publish_fence();  // the key is visible before the slot that names it
      }
      unsigned long long want = (static_cast<unsigned long long>(hash) << 32) | mine;
      unsigned long long was = atomic_cas64(&t.slots[i], 0ull, want);
      if (was == 0) {
        atomic_add32(&t.c->live, 1);
        atomic_add32(&t.c->inserts, 1);
        return mine;
      }
      s = was;  // another thread took the slot: look at what it put there
    }
    if (s != kDevTomb && uint32_t(s >> 32) == hash && t.flows[uint32_t(s) - 1].key == key) {
      if (mine) t.flows[mine - 1].status = kDevOrphan;  // (the next expiry pass frees it)
      return uint32_t(s);
    }
  }
  if (mine) t.flows[mine - 1].status = kDevOrphan;
  atomic_add32(&t.c->full, 1);
  return 0;
}

// After a batch's lookups (one thread): the free list's count back from
// below zero, the claims past capacity undone.
SHOAL_HD void dev_flow_fix(const DevFlowView& t) {
  if (int32_t(t.c->free_n) < 0) t.c->free_n = 0;
  if (t.c->used > t.capacity) t.c->used = t.capacity;
}

// Configuration the walk and expiry read.
struct DevFlowConfig {
  uint64_t timeout_ns[kFlowClasses];
  uint8_t midstream, async_oneside;
};

// Per packet, what the walk needs from the lookup: bit 0 the packet's
// canonical direction, bit 1 its originator's were it the flow's first, bit
// 2 a TCP header was found (its flags in tcp_flags), bit 3 the packet is
// whole (not a first fragment: its segment can be checked).
constexpr uint8_t kDevPktDir = 1, kDevPktOrig = 2, kDevPktTcp = 4, kDevPktWhole = 8;
// What the walk tells of a packet: bit 0 its direction, kDevOutInvalid its
// segment was invalid (flow::kFactInvalid), kDevOutEnd it ended its flow (a
// reset before any reply).
constexpr uint8_t kDevOutInvalid = 2, kDevOutEnd = 4;

// A window check's verdict counted (FlowTable::window_verdict): false when
// the segment must not move the connection, kDevOutInvalid in `out` when
// it is invalid.
SHOAL_HD bool dev_window_verdict(const DevFlowView& t, int verdict, uint8_t& out) {
  uint32_t* c;
  switch (verdict) {
    case kWinAccept: return true;
    case kWinIgnore: atomic_add32(&t.c->tcp_ignored, 1); return false;
    case kWinSeqOver: c = &t.c->tcp_seq_over; break;
    case kWinAckOver: c = &t.c->tcp_ack_over; break;
    case kWinBadRst: c = &t.c->tcp_bad_rst; break;
    default: c = &t.c->tcp_bad_state; break;
  }
  atomic_add32(c, 1);
  out |= kDevOutInvalid;
  return false;
}

// Entry e starts a new flow of its key (a reopened connection, or the
// packet after a reset ended the last one): nothing of the old one stays.
SHOAL_HD void dev_flow_restart(const DevFlowView& t, const DevFlowConfig& cfg, uint32_t e, uint8_t pkt,
                               unsigned long long now) {
  DevFlow& f = t.flows[e];
  ConnKey key = f.key;
  f = DevFlow{};
  f.key = key;
  f.status = kDevLive;
  f.orig_dir = cfg.midstream || cfg.async_oneside ? uint8_t((pkt & kDevPktOrig) >> 1) : uint8_t(pkt & kDevPktDir);
  f.first_ns = f.last_ns = now;
  if (t.win) t.win[e] = TcpWindow{};
  atomic_add32(&t.c->inserts, 1);
}

// One packet through entry e's flow, as FlowTable::track_hashed: returns
// its direction and kDevOut* bits. The flow's packets come in arrival
// order. `seg`: the packet's TCP segment when windows are tracked and it
// is whole (else nullptr).
SHOAL_HD uint8_t dev_flow_packet(const DevFlowView& t, const DevFlowConfig& cfg, uint32_t e, uint8_t pkt,
                                 uint8_t tcp_flags, uint32_t ip_len, unsigned long long now, const TcpSeg* seg) {
  DevFlow& f = t.flows[e];
  bool fresh = f.pkts[0] + f.pkts[1] == 0;
  if (!fresh && f.last_ns + cfg.timeout_ns[f.cls] <= now) {  // timed out since the last expiry pass: a new flow
    dev_flow_restart(t, cfg, e, pkt, now);
    atomic_add32(&t.c->expired, 1);
    fresh = true;
  }
  if (fresh) {  // its first packet
    f.orig_dir = cfg.midstream || cfg.async_oneside ? uint8_t((pkt & kDevPktOrig) >> 1) : uint8_t(pkt & kDevPktDir);
    f.first_ns = f.last_ns = now;
  }
  uint8_t dir = (pkt & kDevPktDir) == f.orig_dir ? 0 : 1;
  uint8_t out = 0;
  // with window tracking, as conntrack: a segment it does not accept
  // renews nothing; one it accepts leaves the class it chooses (win_cls)
  bool renew = true;
  int win_cls = -1;
  if (f.key.proto == 6 && (pkt & kDevPktTcp)) {
    TcpWindow* w = seg ? &t.win[e] : nullptr;
    bool replied = w && w->seen_reply;  // conntrack's SEEN_REPLY before this segment
    uint8_t next = kCtKeep;
    const uint8_t old_state = f.tcp.state;
    bool reopen;
    if (w) {
      int verdict;
      reopen = tcp_conn_segment(*w, f.tcp, *seg, tcp_flags, dir, cfg.midstream, cfg.async_oneside, verdict, next);
      if (!reopen) renew = dev_window_verdict(t, verdict, out);
    } else {
      reopen = tcp_track(f.tcp, tcp_flags, dir, cfg.midstream, cfg.async_oneside);
    }
    if (reopen) {  // a SYN reopens an ended connection: a new flow in the same entry
      dev_flow_restart(t, cfg, e, pkt, now);
      atomic_add32(&t.c->reopened, 1);
      dir = 0;
      replied = false;
      fresh = true;
      if (w)
        dev_window_verdict(t, tcp_conn_first(*w, f.tcp, *seg, tcp_flags, cfg.midstream, cfg.async_oneside), out);
      else
        tcp_track(f.tcp, tcp_flags, 0, cfg.midstream, cfg.async_oneside);
    }
    if (fresh && (tcp_flags & (kTcpSyn | kTcpAck)) != kTcpSyn) f.flags |= kDevMidstream;
    f.flags &= uint8_t(~kDevJustEstablished);
    if (f.tcp.state == kTcpEstablished && !(f.flags & kDevEstablished))
      f.flags |= kDevEstablished | (f.flags & kDevMidstream ? 0 : kDevJustEstablished);
    f.tcp_flags[dir] |= tcp_flags;
    if (w && tcp_conn_settle(*w, f.tcp, old_state, seg->index, dir, replied, reopen, out & kDevOutInvalid, next,
                             f.last_ns + cfg.timeout_ns[f.cls], now, cfg.timeout_ns, renew, win_cls))
      out |= kDevOutEnd;
  }
  if (renew && now > f.last_ns) f.last_ns = now;
  ++f.pkts[dir];
  f.bytes[dir] += ip_len;
  if (win_cls >= 0)
    f.cls = uint8_t(win_cls);
  else if (renew || fresh)
    f.cls = flow_class(f.key.proto, f.tcp, f.pkts[1] != 0);
  return uint8_t(out | dir);
}

// Entry e's flow leaves the table: its slot becomes a tombstone, the entry
// goes on the free list.
SHOAL_HD void dev_flow_remove(const DevFlowView& t, uint32_t e) {
  uint32_t i = conn_hash(t.flows[e].key) & t.mask;
  for (uint32_t probes = 0; probes <= t.mask; ++probes, i = (i + 1) & t.mask)
    if (t.slots[i] != kDevTomb && uint32_t(t.slots[i]) == e + 1) {
      t.slots[i] = kDevTomb;  // (each thread writes its own flow's slot)
      break;
    }
  t.flows[e].status = kDevFree;
  t.free_ids[atomic_add32(&t.c->free_n, 1)] = e;
  atomic_add32(&t.c->tombs, 1);
  atomic_add32(&t.c->live, ~0u);
}

// Entry e at time `now`: a live flow past its class's timeout leaves the
// index (its slot a tombstone) and its entry goes on the free list, as does
// an orphan. Returns whether it expired.
SHOAL_HD bool dev_flow_expire(const DevFlowView& t, const DevFlowConfig& cfg, uint32_t e, unsigned long long now) {
  DevFlow& f = t.flows[e];
  if (f.status == kDevOrphan) {
    f.status = kDevFree;
    t.free_ids[atomic_add32(&t.c->free_n, 1)] = e;
    return false;
  }
  if (f.status != kDevLive || f.last_ns + cfg.timeout_ns[f.cls] > now) return false;
  dev_flow_remove(t, e);
  atomic_add32(&t.c->expired, 1);
  return true;
}

// Entry e's place in eviction order: the CPU table's (nearest its expiry
// first; among flows of one timeout, the oldest idle), orphans before any
// flow, free entries after all.
SHOAL_HD unsigned long long dev_flow_evict_key(const DevFlowView& t, const DevFlowConfig& cfg, uint32_t e) {
  const DevFlow& f = t.flows[e];
  if (f.status == kDevOrphan) return 0;
  if (f.status != kDevLive) return ~0ull;
  const unsigned long long at = f.last_ns + cfg.timeout_ns[f.cls];
  return at < f.last_ns || at == ~0ull ? ~0ull - 1 : at;  // (saturated: still before the free entries)
}

// Entry e makes room: a live flow is evicted (its slot a tombstone, counted),
// an orphan freed; a free entry stays as it is.
SHOAL_HD void dev_flow_evict(const DevFlowView& t, uint32_t e) {
  DevFlow& f = t.flows[e];
  if (f.status == kDevOrphan) {
    f.status = kDevFree;
    t.free_ids[atomic_add32(&t.c->free_n, 1)] = e;
  } else if (f.status == kDevLive) {
    dev_flow_remove(t, e);
    atomic_add32(&t.c->evicted, 1);
  }
}

// Entry e back into an emptied index (the rebuild that clears tombstones).
SHOAL_HD void dev_flow_reinsert(const DevFlowView& t, uint32_t e) {
  if (t.flows[e].status != kDevLive) return;
  uint32_t hash = conn_hash(t.flows[e].key);
  unsigned long long want = (static_cast<unsigned long long>(hash) << 32) | (e + 1);
  for (uint32_t i = hash & t.mask, probes = 0; probes <= t.mask; ++probes, i = (i + 1) & t.mask)
    if (atomic_cas64(&t.slots[i], 0ull, want) == 0) return;
}

}  // namespace shoal::k
