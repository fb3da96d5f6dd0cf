// Step kernel FlowLBStep (see kernels/step.hh): FlowIPLoadBalancer on a
// device, one thread per flow (Launch::run_flows) taking the flow's packets
// in order against the flow's LbState.
#pragma once
#include "shoal/kernels/flowlb.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

struct FlowLBStep {
  struct Params {
    AggView a;
    StepCtl c;
    LbSet set;
    uint32_t range;   // the IP header's first 80 bytes, written
    uint32_t state;   // the LbState's offset in the flow record
    int32_t code[3];  // 0, and the drop codes for kLbNotIPv4 and kLbNoBackend
    int32_t no_flow;  // the drop code for a packet without a flow
    uint32_t* out;    // per packet: lb_process's note, bit 31 set when the packet was seen
  };
  static SHOAL_HD void run(const Params& p, uint32_t r) {
    auto* st = reinterpret_cast<LbState*>(flow_state(p.a, r, p.state));
    for (uint32_t j = p.a.fruns[r], e = p.a.fruns[r + 1]; j < e; ++j) {
      const uint32_t i = p.a.forder[j];
      if (!step_enter(p.a, p.c, i)) continue;
      if (!st) {
        step_result(p.a, p.c, i, p.no_flow);
        continue;
      }
      const uint32_t len = range_len(p.a, p.range, i);
      uint32_t note = 0;
      int res = lb_process(p.set, *st, len ? range_ptr(p.a, p.range, i) : nullptr, len, uint8_t(p.a.fdir[i] & 1),
                           p.a.fhash[r], nullptr, note);
      p.out[i] = note | 0x80000000u;
      step_result(p.a, p.c, i, p.code[res]);
    }
  }
};
SHOAL_STEP(FlowLBStep)

}  // namespace shoal::k
