// Step kernels FlowFindStep, FlowOrigStep, FlowCountStep (see
// kernels/step.hh and kernels/flowtable_dev.hh): the flow layer's lookup on
// a device, over a batch of Ethernet frames, in three passes.
#pragma once
#include "shoal/kernels/flowhash.hh"
#include "shoal/kernels/flowtable_dev.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

struct FlowBatchParams {
  const uint8_t* frames;
  const uint32_t* offsets;
  const uint32_t* lens;
  DevFlowView t;
  unsigned long long seq_base;  // sequence number of packet 0
  uint32_t* ids;                // per packet: the flow (1-based; 0: none)
  uint8_t* cdir;                // per packet: its canonical direction (bit 0), its originator's (bit 1)
  uint8_t* dirs;                // per packet: 0 from the originator, 1 from the responder
  uint32_t* ip_len;             // per packet: IP bytes
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
    p.ip_len[i] = len;
    if (!ip) return;
    KeyKind kind = parse_conn_key(ip, len, pk);
    // later fragments and ICMP errors need the CPU table's other paths
    if ((kind != KeyKind::Conn && kind != KeyKind::FirstFrag) || pk.icmp_error) return;
    p.cdir[i] = uint8_t(pk.dir | originator_dir(pk) << 1);  // the packet's way, and its originator's were it first
    p.ids[i] = dev_flow_find_or_insert(p.t, pk.key, conn_hash(pk.key), p.seq_base + i);
  }
};
SHOAL_STEP(FlowFindStep)

struct FlowOrigStep {
  using Params = FlowBatchParams;
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    uint32_t id = p.ids[i];
    if (id && p.t.flows[id - 1].first_seq == p.seq_base + i) p.t.flows[id - 1].orig_dir = p.cdir[i] >> 1;
  }
};
SHOAL_STEP(FlowOrigStep)

struct FlowCountStep {
  using Params = FlowBatchParams;
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    uint32_t id = p.ids[i];
    if (!id) return;
    DevFlow& f = p.t.flows[id - 1];
    uint8_t d = (p.cdir[i] & 1) == f.orig_dir ? 0 : 1;
    p.dirs[i] = d;
    atomic_add64(&f.pkts[d], 1);
    atomic_add64(&f.bytes[d], p.ip_len[i]);
  }
};
SHOAL_STEP(FlowCountStep)

}  // namespace shoal::k
