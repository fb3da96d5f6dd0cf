// Step kernel ClassifyStep (see kernels/step.hh).
#pragma once
#include "shoal/kernels/classify.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

// SDNClassifier: the frame's first kClsKeyBytes bytes (from OFFSET), the
// trees' first match; the rule's output, or a drop.
struct ClassifyStep {
  struct Params {
    AggView a;
    StepCtl c;
    ClsView t;
    uint32_t range;
    int32_t nomatch, r_runt, r_badip, r_nomatch;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    uint32_t len = range_len(p.a, p.range, i);
    const uint8_t* f = len ? range_ptr(p.a, p.range, i) : nullptr;
    bool missed;
    int r = cls_classify(p.t, f, len, p.nomatch, p.r_runt, p.r_badip, p.r_nomatch, missed);
    step_result(p.a, p.c, i, r, missed ? 1u : 0u);  // (the detail reaches the host when the frame leaves)
  }
};
SHOAL_STEP(ClassifyStep)

}  // namespace shoal::k
