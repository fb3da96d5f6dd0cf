// Step kernel RateLimitStep (see kernels/step.hh): FlowRateLimiter on a
// device, one thread per flow (Launch::run_flows) taking the flow's packets
// in order against the flow's token bucket.
#pragma once
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"
#include "shoal/kernels/tokenbucket.hh"

namespace shoal::k {

struct RateLimitStep {
  struct Params {
    AggView a;
    StepCtl c;
    TokenRate rate;
    uint32_t state;      // the TokenBucket's offset in the flow record
    uint32_t bytes;      // 1: a token a byte (the packet's length); 0: a token a packet
    const uint64_t* ts;  // per packet: its time (ns)
    int32_t limited;     // the result for a packet over the rate: output 1, or a drop code
    int32_t no_flow;     // the drop code for a packet without a flow
  };
  static SHOAL_HD void run(const Params& p, uint32_t r) {
    auto* tb = reinterpret_cast<TokenBucket*>(flow_state(p.a, r, p.state));
    for (uint32_t j = p.a.fruns[r], e = p.a.fruns[r + 1]; j < e; ++j) {
      const uint32_t i = p.a.forder[j];
      if (!step_enter(p.a, p.c, i)) continue;
      if (!tb)
        step_result(p.a, p.c, i, p.no_flow);
      else if (!tb_take(*tb, p.rate, p.ts[i], p.bytes ? p.a.plen[i] : 1))
        step_result(p.a, p.c, i, p.limited);
    }
  }
};
SHOAL_STEP(RateLimitStep)

}  // namespace shoal::k
