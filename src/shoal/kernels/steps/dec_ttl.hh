// Step kernel DecTTLStep (see kernels/step.hh).
#pragma once
#include "shoal/kernels/ipfwd.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

// DecIPTTL: the TTL/checksum word (IP+8, written) and, without MULTICAST,
// the destination's first byte (IP+16, read).
struct DecTTLStep {
  struct Params {
    AggView a;
    StepCtl c;
    uint32_t word_range, dst_range;
    int32_t multicast, two_outputs, r_expired, r_nohdr;
  };
  // DecIPTTL's decision for one packet, on the CPU and the device alike:
  // the TTL/checksum word at IP+8 (nullptr: no IP header) and the
  // destination's first byte. 0 passes (TTL decremented), 1 expired with
  // two outputs, else -1 - the drop reason.
  static SHOAL_HD int32_t decide(uint8_t* word, uint8_t dst0, bool multicast, bool two_outputs, int32_t r_expired,
                                 int32_t r_nohdr) {
    if (!word) return -1 - r_nohdr;
    if (dec_ttl(word, dst0, multicast) == 0) return 0;
    return two_outputs ? 1 : -1 - r_expired;
  }
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    uint8_t* w = range_ptr(p.a, p.word_range, i, 4);
    uint8_t dst0 = w && !p.multicast ? *range_ptr(p.a, p.dst_range, i) : 0;
    step_result(p.a, p.c, i, decide(w, dst0, p.multicast != 0, p.two_outputs != 0, p.r_expired, p.r_nohdr));
  }
};
SHOAL_STEP(DecTTLStep)

}  // namespace shoal::k
