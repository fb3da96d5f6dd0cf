// Step kernel EspInStep (see kernels/step.hh).
#pragma once
#include "shoal/kernels/esp.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

// IPsecInbound on the device: the host checked each packet up to the replay
// window (an EspInJob in a pre-function block); the device checks the ICV
// (GCM's tag too) before anything is decrypted and decrypts the text in
// place. A packet whose ICV does not match is dropped untouched; the host
// takes the others apart at completion. Packets the host decided otherwise
// get its result.
struct EspInStep {
  struct Params {
    AggView a;
    StepCtl c;
    const uint8_t* jobs;  // EspInJob per packet
    uint8_t* epoch;       // per packet: 1 when seq + 2^32 authenticated
    const EspKeys* keys;  // per SA
    const uint32_t* te0;  // AES's table
    int32_t r_integrity;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    EspInJob j;
    __builtin_memcpy(&j, p.jobs + sizeof(EspInJob) * i, sizeof j);
    if (j.trim) whole_take(p.a, i, j.trim);  // link-layer padding (not for kEspHost: the host's path trims)
    if (j.action != kEspOpen) return step_result(p.a, p.c, i, j.action == kEspHost ? 0 : j.action);
    uint8_t* d = whole_data(p.a, i);
    if (!d) return step_result(p.a, p.c, i, -1 - p.r_integrity);
    const EspKeys& k = p.keys[j.sa];
    if (esp_open(p.te0, k, d + j.hdr, j.text_len, j.seq)) return step_result(p.a, p.c, i, 0);
    if (j.try_next_epoch && esp_open(p.te0, k, d + j.hdr, j.text_len, j.seq + (uint64_t(1) << 32))) {
      p.epoch[i] = 1;
      return step_result(p.a, p.c, i, 0);
    }
    step_result(p.a, p.c, i, -1 - p.r_integrity);
  }
};
SHOAL_STEP(EspInStep)

}  // namespace shoal::k
