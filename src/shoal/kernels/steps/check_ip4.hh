// Step kernel CheckIP4Step (see kernels/step.hh).
#pragma once
#include "shoal/kernels/ipfwd.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

// CheckIPHeader: the header tests (checksum included) on the IP header
// range (at most 60 bytes from OFFSET); good packets' destination goes to
// the DST_IP annotation block for later steps. Bad ones leave on port 1
// (detail: the reason index) or are dropped.
struct CheckIP4Step {
  struct Params {
    AggView a;
    StepCtl c;
    uint32_t range, offset;
    const uint32_t* badsrc;
    uint32_t nbad;
    int32_t checksum, two_outputs;
    int32_t reasons[7];
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    uint32_t plen = p.a.plen[i];
    uint32_t avail = plen > p.offset ? plen - p.offset : 0;
    const uint8_t* ip = avail ? range_ptr(p.a, p.range, i) : nullptr;
    int bad = ip ? ipv4_check(ip, avail, p.checksum != 0, p.badsrc, p.nbad) : 0;
    if (bad < 0) {
      if (p.a.dst_ip)
        for (int j = 0; j < 4; ++j) p.a.dst_ip[4 * i + j] = ip[16 + j];
      step_result(p.a, p.c, i, 0);
    } else if (p.two_outputs) {
      step_result(p.a, p.c, i, 1, uint32_t(bad));
    } else {
      step_result(p.a, p.c, i, -1 - p.reasons[bad]);
    }
  }
};
SHOAL_STEP(CheckIP4Step)

}  // namespace shoal::k
