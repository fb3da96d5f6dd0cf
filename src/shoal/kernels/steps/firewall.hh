// Step kernel FirewallStep (see kernels/step.hh): Firewall on a device, one
// thread per flow (Launch::run_flows) taking the flow's packets in order
// against the flow's FwState, as the CPU element does packet by packet.
#pragma once
#include "shoal/kernels/firewall.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

constexpr int kFwNoFlow = 4;  // a packet the flow layer gave no flow

struct FirewallStep {
  struct Params {
    AggView a;
    StepCtl c;
    FwRules rules;
    uint32_t range;   // the IP header's first kFwHeaderBytes bytes
    uint32_t state;   // the FwState's offset in the flow record
    int32_t code[5];  // per FwResult and kFwNoFlow: the step's result (0, a port, or a drop code)
    uint32_t* out;    // per packet: result + 1, and (rule + 2) << 8 when the rules were evaluated
  };
  static SHOAL_HD void run(const Params& p, uint32_t r) {
    auto* st = reinterpret_cast<FwState*>(flow_state(p.a, r, p.state));
    for (uint32_t j = p.a.fruns[r], e = p.a.fruns[r + 1]; j < e; ++j) {
      const uint32_t i = p.a.forder[j];
      if (!step_enter(p.a, p.c, i)) continue;
      int res = kFwNoFlow;
      bool evaluated = false;
      if (st) {
        const uint32_t len = range_len(p.a, p.range, i);
        const FwPacket fp = fw_packet(len ? range_ptr(p.a, p.range, i) : nullptr, len, p.a.fdir[i]);
        res = fw_process(p.rules, *st, fp, evaluated);
      }
      p.out[i] = uint32_t(res + 1) | (evaluated ? uint32_t(st->rule + 2) << 8 : 0u);
      step_result(p.a, p.c, i, p.code[res]);
    }
  }
};
SHOAL_STEP(FirewallStep)

}  // namespace shoal::k
