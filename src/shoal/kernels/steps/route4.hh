// Step kernel Route4Step (see kernels/step.hh).
#pragma once
#include "shoal/kernels/ipfwd.hh"
#include "shoal/kernels/lpm4.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

// DirectIPLookup: DIR-24-8 on the DST_IP annotation.
struct Route4Step {
  struct Params {
    AggView a;
    StepCtl c;
    Lpm4View t;
    const NextHop4* nh;
    int32_t noutputs, r_noroute, r_discard;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    uint8_t* d = p.a.dst_ip + 4 * i;
    int32_t nh = lpm4_lookup(p.t, load_be32(d));
    step_result(p.a, p.c, i, route4_apply(nh, p.nh, d, p.noutputs, p.r_noroute, p.r_discard));
  }
};
SHOAL_STEP(Route4Step)

}  // namespace shoal::k
