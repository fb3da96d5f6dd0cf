// Step kernels EspInStep, EspOpenChunkStep, EspOpenCheckStep and
// EspOpenCryptChunkStep (see kernels/step.hh).
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
    // nonzero: GCM and CTR packets are opened by EspOpenChunkStep,
    // EspOpenCheckStep and EspOpenCryptChunkStep (the work split among
    // threads)
    uint32_t split;
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
    if (p.split && esp_split_suite(k.suite)) return;  // (the split steps' packet)
    if (esp_open(p.te0, k, d + j.hdr, j.text_len, j.seq)) return step_result(p.a, p.c, i, 0);
    if (j.try_next_epoch && esp_open(p.te0, k, d + j.hdr, j.text_len, j.seq + (uint64_t(1) << 32))) {
      p.epoch[i] = 1;
      return step_result(p.a, p.c, i, 0);
    }
    step_result(p.a, p.c, i, -1 - p.r_integrity);
  }
};
SHOAL_STEP(EspInStep)

// A packet EspInStep left to the split steps: its keys, ESP header and
// text, and the host's job.
struct EspLaidIn {
  const EspKeys* k;
  uint8_t* esp;
  EspInJob j;
};
SHOAL_HD bool esp_laid_in(const EspInStep::Params& p, uint32_t i, EspLaidIn& o) {
  if (!p.split || !step_enter(p.a, p.c, i)) return false;
  __builtin_memcpy(&o.j, p.jobs + sizeof(EspInJob) * i, sizeof o.j);
  if (o.j.action != kEspOpen) return false;
  o.k = &p.keys[o.j.sa];
  if (!esp_split_suite(o.k->suite)) return false;
  uint8_t* d = whole_data(p.a, i);
  if (!d) return false;
  o.esp = d + o.j.hdr;
  return true;
}

// GHASH over GCM packets' ciphertext, `per` threads each (esp_open_chunk):
// thread t takes chunk t % per of the packet at position t / per.
struct EspOpenChunkStep {
  struct Params {
    EspInStep::Params in;
    uint32_t* acc;  // 4 words per packet, zero before
    uint32_t per;
  };
  static SHOAL_HD void run(const Params& p, uint32_t t) {
    uint32_t i = t / p.per;
    if (p.in.a.order) i = p.in.a.order[i];
    EspLaidIn o;
    if (!esp_laid_in(p.in, i, o) || o.k->suite != kEspGcm) return;
    const uint32_t chunks = esp_chunks(*o.k, o.j.text_len);  // (more than per only if the host counted short)
    for (uint32_t c = t % p.per; c < chunks; c += p.per)
      esp_open_chunk(p.in.te0, *o.k, o.esp, o.j.text_len, o.j.seq, c, p.acc + 4 * i);
  }
};
SHOAL_STEP(EspOpenChunkStep)

// Then, per packet: the ICV compared (ESN: with the next epoch's high half
// too), and a packet that does not match dropped untouched.
struct EspOpenCheckStep {
  struct Params {
    EspInStep::Params in;
    const uint32_t* acc;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    EspLaidIn o;
    if (!esp_laid_in(p.in, i, o)) return;
    const uint32_t* acc = p.acc + 4 * i;
    if (esp_open_check(p.in.te0, *o.k, o.esp, o.j.text_len, o.j.seq, acc, false)) return;
    if (o.j.try_next_epoch && esp_open_check(p.in.te0, *o.k, o.esp, o.j.text_len, o.j.seq, acc, true)) {
      p.in.epoch[i] = 1;
      return;
    }
    step_result(p.in.a, p.in.c, i, -1 - p.in.r_integrity);
  }
};
SHOAL_STEP(EspOpenCheckStep)

// Then the packets that matched decrypted in place, `per` threads each
// (esp_open_crypt_chunk).
struct EspOpenCryptChunkStep {
  struct Params {
    EspInStep::Params in;
    uint32_t per;
  };
  static SHOAL_HD void run(const Params& p, uint32_t t) {
    uint32_t i = t / p.per;
    if (p.in.a.order) i = p.in.a.order[i];
    EspLaidIn o;
    if (!esp_laid_in(p.in, i, o)) return;
    const uint32_t chunks = esp_chunks(*o.k, o.j.text_len);
    for (uint32_t c = t % p.per; c < chunks; c += p.per) esp_open_crypt_chunk(p.in.te0, *o.k, o.esp, o.j.text_len, c);
  }
};
SHOAL_STEP(EspOpenCryptChunkStep)

}  // namespace shoal::k
