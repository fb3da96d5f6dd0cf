// Step kernel Route6Step (see kernels/step.hh).
#pragma once
#include "shoal/kernels/ipfwd.hh"
#include "shoal/kernels/lpm6.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

// LookupIP6Route: binary search on prefix lengths on the DST_IP6 annotation.
struct Route6Step {
  struct Params {
    AggView a;
    StepCtl c;
    Lpm6View t;
    const NextHop6* nh;
    int32_t noutputs, r_noroute, r_discard;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    uint8_t* d = p.a.dst_ip6 + 16 * i;
    int32_t nh = lpm6_lookup(p.t, load_be64(d), load_be64(d + 8));
    step_result(p.a, p.c, i, route6_apply(nh, p.nh, d, p.noutputs, p.r_noroute, p.r_discard));
  }
};
SHOAL_STEP(Route6Step)

}  // namespace shoal::k
