// Step kernel SetIPDSCPStep (see kernels/step.hh).
#pragma once
#include "shoal/kernels/checksum.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

// SetIPDSCP: the DSCP (the upper six bits of the ToS byte, IP+1) set and the
// header checksum (IP+10) updated incrementally (RFC 1624). The device gets
// the first header word and the checksum word, and writes both back.
struct SetIPDSCPStep {
  struct Params {
    AggView a;
    StepCtl c;
    uint32_t word_range, csum_range;
    uint8_t dscp;
    int32_t r_nohdr;
  };
  // The element's per-packet work, on the CPU and the device alike: `word`
  // is IP+0 (version/IHL and ToS; nullptr: no IP header), `csum` IP+10.
  // 0, or -1 - the drop reason.
  static SHOAL_HD int32_t apply(uint8_t* word, uint8_t* csum, uint8_t dscp, int32_t r_nohdr) {
    if (!word || !csum) return -1 - r_nohdr;
    uint16_t old = load_be16(word);
    word[1] = uint8_t(dscp << 2 | (word[1] & 3));
    store_be16(csum, csum_update16(load_be16(csum), old, load_be16(word)));
    return 0;
  }
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    step_result(p.a, p.c, i,
                apply(range_ptr(p.a, p.word_range, i, 2), range_ptr(p.a, p.csum_range, i, 2), p.dscp, p.r_nohdr));
  }
};
SHOAL_STEP(SetIPDSCPStep)

}  // namespace shoal::k
