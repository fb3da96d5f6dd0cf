// The per-packet view of an offloaded aggregate, shared by the host and the
// device: what a step kernel reads (ROI bytes, annotations) and what it
// leaves for the host (a verdict and predicate bits). Plain pointers into
// one buffer, so the same SHOAL_HD step runs over device memory (CUDA), the
// host backend's "device" memory, or host staging (the CPU fallback).
#pragma once
#include "shoal/kernels/hd.hh"

namespace shoal::k {

constexpr uint32_t kAbsent = 0xffffffffu;  // a range the packet does not have

struct AggView {
  uint32_t n = 0;  // packets
  uint32_t nranges = 0;
  uint32_t* verdict = nullptr;     // 0: still in the chain; else see verdict_*()
  uint32_t* pred = nullptr;        // predicate bits (nullptr when no step uses them)
  uint8_t* data = nullptr;         // ROI bytes, packed
  const uint32_t* roff = nullptr;  // [r * n + i]: offset in data of range r's first byte, kAbsent when missing
  const uint32_t* rlen = nullptr;  // [r * n + i]: bytes of range r present
  const uint32_t* plen = nullptr;  // packet lengths (nullptr when no step needs them)
  uint8_t* dst_ip = nullptr;       // DST_IP annotations, 4 bytes each (nullptr when unused)
  uint8_t* dst_ip6 = nullptr;      // DST_IP6 annotations, 16 bytes each
  // The resizable whole-packet range (NBA's "whole packet with size delta"),
  // when a step declared one: its index, and per packet the bytes pushed in
  // front so far (negative: pulled), the current length, and the room the
  // packet has in front and behind (what its host buffer can take).
  uint32_t rs_range = kAbsent;
  int32_t* rs_head = nullptr;
  uint32_t* rs_len = nullptr;
  const uint32_t* rs_hroom = nullptr;
  const uint32_t* rs_troom = nullptr;
  // GASPP's packet scheduling: when set, the aggregate's packets sorted by
  // protocol and length (n entries); thread t of a launch works on packet
  // order[t], so a warp's threads run the same code over similar lengths.
  // Results stay indexed by packet, in the aggregate's order.
  const uint32_t* order = nullptr;
  // Per-flow steps (GPUNFV's flow actors; Plan::add_flow_state): the
  // aggregate's packets grouped by flow, each flow's packets in arrival
  // order. Run r (one thread: Launch::run_flows) is packets
  // forder[fruns[r]] .. forder[fruns[r + 1] - 1]; runs below nflows are
  // flows, whose state record (fstride bytes, every flow step's state at
  // its offset) is at fstate + r * fstride and whose flow hash is fhash[r];
  // the last runs hold packets without a flow. fdir: each packet's direction
  // (bit 0: 0 from the connection's originator), with kFlowDirInvalid
  // (kernels/flowstate.hh) for a TCP segment outside its window.
  uint32_t nruns = 0, nflows = 0, fstride = 0;
  const uint32_t* fruns = nullptr;
  const uint32_t* forder = nullptr;
  const uint32_t* fhash = nullptr;
  const uint8_t* fdir = nullptr;
  uint8_t* fstate = nullptr;
};

// Flow run r's state for a step whose state lies at `off` in the record.
SHOAL_HD uint8_t* flow_state(const AggView& a, uint32_t r, uint32_t off) {
  return r < a.nflows ? a.fstate + size_t(r) * a.fstride + off : nullptr;
}

// How one step of a chain treats its packets.
struct StepCtl {
  uint32_t step = 0;        // position in the chain
  uint32_t pred_check = 0;  // skip packets with none of these predicate bits (0: all packets)
  uint32_t set_pred = 0;    // 1: an output port p sets predicate bit p instead of leaving the chain
  uint32_t pred_skip = 0;   // skip packets with any of these predicate bits
};

// Verdict word: (step + 1) << 16 | code. code bit 15 set: dropped, low 15
// bits the element's drop reason; else low 8 bits the output port the packet
// left the chain on and bits 8-14 an element-defined detail.
SHOAL_HD uint32_t verdict_step(uint32_t v) { return (v >> 16) - 1; }
SHOAL_HD bool verdict_dropped(uint32_t v) { return (v & 0x8000) != 0; }
SHOAL_HD uint32_t verdict_reason(uint32_t v) { return v & 0x7fff; }
SHOAL_HD uint32_t verdict_port(uint32_t v) { return v & 0xff; }
SHOAL_HD uint32_t verdict_detail(uint32_t v) { return (v >> 8) & 0x7f; }

// Whether step `c` works on packet i: not left the chain, predicate set,
// no skip bit set.
SHOAL_HD bool step_enter(const AggView& a, const StepCtl& c, uint32_t i) {
  return a.verdict[i] == 0 && (c.pred_check == 0 || (a.pred[i] & c.pred_check) != 0) &&
         (c.pred_skip == 0 || (a.pred[i] & c.pred_skip) == 0);
}

// Records what an element's per-packet function returned: an output port,
// or -1 - reason for a drop (Element::drop_code). Port 0 continues along
// the chain; other ports leave it (or set a predicate bit with set_pred).
SHOAL_HD void step_result(const AggView& a, const StepCtl& c, uint32_t i, int r, uint32_t detail = 0) {
  uint32_t tag = (c.step + 1) << 16;
  if (r < 0) {
    a.verdict[i] = tag | 0x8000u | (uint32_t(-1 - r) & 0x7fff);
  } else if (c.set_pred) {
    a.pred[i] |= 1u << (uint32_t(r) & 31);
  } else if (r != 0) {
    a.verdict[i] = tag | ((detail & 0x7f) << 8) | (uint32_t(r) & 0xff);
  }
}

// Range r of packet i, or nullptr when the packet lacks it (or has fewer
// than `need` bytes of it).
SHOAL_HD uint8_t* range_ptr(const AggView& a, uint32_t r, uint32_t i, uint32_t need = 1) {
  uint32_t o = a.roff[r * a.n + i];
  if (o == kAbsent || a.rlen[r * a.n + i] < need) return nullptr;
  return a.data + o;
}
SHOAL_HD uint32_t range_len(const AggView& a, uint32_t r, uint32_t i) {
  return a.roff[r * a.n + i] == kAbsent ? 0 : a.rlen[r * a.n + i];
}

// The resizable whole packet (see AggView::rs_*): its current first byte
// and length. Every other range of the packet keeps its address when the
// packet grows or shrinks at either end.
SHOAL_HD uint8_t* whole_data(const AggView& a, uint32_t i) {
  uint32_t o = a.roff[a.rs_range * a.n + i];
  return o == kAbsent ? nullptr : a.data + o - a.rs_head[i];
}
SHOAL_HD uint32_t whole_len(const AggView& a, uint32_t i) { return a.rs_len[i]; }
// Click's push/put (nullptr when the packet lacks the room) and pull/take
// (clamped to the length) on the resizable whole packet.
SHOAL_HD uint8_t* whole_push(const AggView& a, uint32_t i, uint32_t k) {
  if (a.roff[a.rs_range * a.n + i] == kAbsent || int64_t(a.rs_head[i]) + k > int64_t(a.rs_hroom[i])) return nullptr;
  a.rs_head[i] += int32_t(k);
  a.rs_len[i] += k;
  return whole_data(a, i);
}
SHOAL_HD void whole_pull(const AggView& a, uint32_t i, uint32_t k) {
  if (k > a.rs_len[i]) k = a.rs_len[i];
  a.rs_head[i] -= int32_t(k);
  a.rs_len[i] -= k;
}
SHOAL_HD uint8_t* whole_put(const AggView& a, uint32_t i, uint32_t k) {
  uint8_t* d = whole_data(a, i);
  // the end may reach the original end plus the tail room
  if (!d || int64_t(a.rs_len[i]) + k - a.rs_head[i] > int64_t(a.rlen[a.rs_range * a.n + i]) + a.rs_troom[i])
    return nullptr;
  uint8_t* end = d + a.rs_len[i];
  a.rs_len[i] += k;
  return end;
}
SHOAL_HD void whole_take(const AggView& a, uint32_t i, uint32_t k) { a.rs_len[i] -= k > a.rs_len[i] ? a.rs_len[i] : k; }

}  // namespace shoal::k
