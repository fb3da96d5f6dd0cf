// Step kernels FlowFindStep, FlowFixStep, FlowWalkStep, FlowExpireStep,
// FlowEvictKeyStep, FlowEvictStep and FlowReinsertStep (see kernels/step.hh and kernels/flowtable_dev.hh): the
// flow layer's table on a device, over a batch of Ethernet frames.
#pragma once
#include "shoal/kernels/flowhash.hh"
#include "shoal/kernels/flowtable_dev.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

struct FlowBatchParams {
  const uint8_t* frames;
  const uint32_t* offsets;
  const uint32_t* lens;
  const unsigned long long* nows;  // per packet: its time (ns)
  DevFlowView t;
  DevFlowConfig cfg;
  uint32_t* ids;                 // per packet: the flow (1-based; 0: none)
  uint8_t* pkt;                  // per packet: kDevPktDir, kDevPktOrig, kDevPktTcp
  uint8_t* tcp_flags;            // per packet
  uint8_t* dirs;                 // per packet: 0 from the originator, 1 from the responder
  uint8_t* facts;                // per packet: kFlowFactInvalid when its segment was (window tracking)
  uint16_t* l4_off;              // per packet: its TCP header's offset in the IP packet
  uint32_t* ip_len;              // per packet: IP bytes
  unsigned long long* sort_key;  // per packet: its flow, to sort by
  uint32_t* sort_val;            // per packet: its index
  const unsigned long long* sorted_key;
  const uint32_t* sorted_val;  // the packets by flow, each flow's in arrival order
  uint32_t n;                  // packets in the batch
  unsigned long long now;      // FlowExpireStep: the time
};

// The IP header of an Ethernet frame (VLAN tags skipped), or nullptr.
SHOAL_HD const uint8_t* frame_ip(const uint8_t* f, uint32_t len, uint32_t& iplen) {
  if (len < 14) return nullptr;
  uint32_t off = 12;
  uint16_t type = load_be16(f + off);
  while ((type == kEthVLAN || type == kEthQinQ) && off + 6 <= len) {
    off += 4;
    type = load_be16(f + off);
  }
  if (type != kEthIPv4 && type != kEthIPv6) return nullptr;
  iplen = len - off - 2;
  return f + off + 2;
}

struct FlowFindStep {
  using Params = FlowBatchParams;
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    uint32_t len = 0;
    const uint8_t* ip = frame_ip(p.frames + p.offsets[i], p.lens[i], len);
    ParsedKey pk;
    p.ids[i] = 0;
    p.dirs[i] = 0;
    p.facts[i] = 0;
    p.ip_len[i] = len;
    p.sort_key[i] = 0;
    p.sort_val[i] = i;
    if (!ip) return;
    KeyKind kind = parse_conn_key(ip, len, pk);
    // later fragments and ICMP errors need the CPU table's other paths
    if ((kind != KeyKind::Conn && kind != KeyKind::FirstFrag) || pk.icmp_error) return;
    p.pkt[i] = uint8_t(pk.dir | originator_dir(pk) << 1 | (pk.l4_off ? kDevPktTcp : 0) |
                       (kind == KeyKind::Conn ? kDevPktWhole : 0));
    p.l4_off[i] = uint16_t(pk.l4_off);
    p.tcp_flags[i] = pk.tcp_flags;
    uint32_t id = dev_flow_find_or_insert(p.t, pk.key, conn_hash(pk.key));
    p.ids[i] = id;
    p.sort_key[i] = id;
  }
};
SHOAL_STEP(FlowFindStep)

// One thread: the counters the lookups left below zero or past capacity.
struct FlowFixStep {
  using Params = FlowBatchParams;
  static SHOAL_HD void run(const Params& p, uint32_t) { dev_flow_fix(p.t); }
};
SHOAL_STEP(FlowFixStep)

// Over the packets sorted by flow: the thread at the head of a flow's run
// walks its packets in arrival order (dev_flow_packet). A flow a reset
// ended before any reply (window tracking) leaves the table, or, when
// more packets of its tuple follow in the batch, the next starts a new flow
// in its entry (the CPU table inserts one).
struct FlowWalkStep {
  using Params = FlowBatchParams;
  static SHOAL_HD void run(const Params& p, uint32_t j) {
    unsigned long long id = p.sorted_key[j];
    if (!id || (j > 0 && p.sorted_key[j - 1] == id)) return;
    const uint32_t e = uint32_t(id - 1);
    bool ended = false;
    for (uint32_t q = j; q < p.n && p.sorted_key[q] == id; ++q) {
      uint32_t i = p.sorted_val[q];
      const unsigned long long now = p.nows ? p.nows[i] : 0;
      if (ended) {
        dev_flow_restart(p.t, p.cfg, e, p.pkt[i], now);  // (one flow out, one in: as many live)
        ended = false;
      }
      TcpSeg seg;
      const TcpSeg* sp = nullptr;
      if (p.t.win && (p.pkt[i] & (kDevPktTcp | kDevPktWhole)) == (kDevPktTcp | kDevPktWhole)) {
        uint32_t len = 0;
        const uint8_t* ip = frame_ip(p.frames + p.offsets[i], p.lens[i], len);
        if (tcp_segment(ip, len, p.l4_off[i], seg)) sp = &seg;
      }
      const uint8_t out = dev_flow_packet(p.t, p.cfg, e, p.pkt[i], p.tcp_flags[i], p.ip_len[i], now, sp);
      p.dirs[i] = out & 1;
      if (out & kDevOutInvalid) p.facts[i] = kFlowFactInvalid;
      if (out & kDevOutEnd) {
        ended = true;
        atomic_add32(&p.t.c->reset, 1);
      }
    }
    if (ended) dev_flow_remove(p.t, e);
  }
};
SHOAL_STEP(FlowWalkStep)

// Over the entries: expiry at p.now (dev_flow_expire).
struct FlowExpireStep {
  using Params = FlowBatchParams;
  static SHOAL_HD void run(const Params& p, uint32_t e) { dev_flow_expire(p.t, p.cfg, e, p.now); }
};
SHOAL_STEP(FlowExpireStep)

// Over the claimed entries: each one's eviction order and index, to sort
// (dev_flow_evict_key).
struct FlowEvictKeyStep {
  using Params = FlowBatchParams;
  static SHOAL_HD void run(const Params& p, uint32_t e) {
    p.sort_key[e] = dev_flow_evict_key(p.t, p.cfg, e);
    p.sort_val[e] = e;
  }
};
SHOAL_STEP(FlowEvictKeyStep)

// Over the first entries in eviction order: each makes room (dev_flow_evict).
struct FlowEvictStep {
  using Params = FlowBatchParams;
  static SHOAL_HD void run(const Params& p, uint32_t i) { dev_flow_evict(p.t, p.sorted_val[i]); }
};
SHOAL_STEP(FlowEvictStep)

// Over the entries, into an emptied index (dev_flow_reinsert).
struct FlowReinsertStep {
  using Params = FlowBatchParams;
  static SHOAL_HD void run(const Params& p, uint32_t e) { dev_flow_reinsert(p.t, e); }
};
SHOAL_STEP(FlowReinsertStep)

}  // namespace shoal::k
