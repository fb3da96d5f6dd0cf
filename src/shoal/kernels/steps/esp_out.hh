// Step kernel EspOutStep (see kernels/step.hh).
#pragma once
#include "shoal/kernels/esp.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

// IPsecOutbound on the device (NBA's IPsec gateway): the host decided each
// packet's policy, SA and sequence number (an EspJob in a pre-function
// block); the device lays the resizable whole packet out as ESP (padding,
// trailer, headers), seals it (AES-CTR or AES-CBC with HMAC, or AES-GCM) and writes the
// IP header in front (and ESP in UDP's header behind it for such SAs). Packets the host decided otherwise get its
// result.
struct EspOutStep {
  struct Params {
    AggView a;
    StepCtl c;
    const uint8_t* jobs;  // EspJob per packet
    const EspKeys* keys;  // per SA
    const uint32_t* te0;  // AES's table
    int32_t r_room;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) return;
    EspJob j;
    __builtin_memcpy(&j, p.jobs + sizeof(EspJob) * i, sizeof j);
    if (j.trim) whole_take(p.a, i, j.trim);  // (packets that pass in the clear too, as on the CPU)
    if (j.action != kEspSeal) return step_result(p.a, p.c, i, j.action == kEspHost ? 0 : j.action);
    const EspKeys& k = p.keys[j.sa];
    const uint32_t inner = whole_len(p.a, i) - j.hdr, text = inner + j.pad + 2;
    const uint32_t outer = j.outer == 4 ? 20 : j.outer == 6 ? 40 : j.hdr;
    const uint32_t udp = k.encap ? 8 : 0;  // ESP in UDP (RFC 3948)
    const uint32_t front = (j.outer ? outer : 0) + udp + 8 + k.iv_len;
    if (!whole_put(p.a, i, j.pad + 2u + k.icv_len)) return step_result(p.a, p.c, i, -1 - p.r_room);
    uint8_t* start = whole_push(p.a, i, front);
    if (!start) return step_result(p.a, p.c, i, -1 - p.r_room);
    uint8_t* esp = esp_layout(start, front, j.hdr, outer + udp, k.iv_len, inner, j.pad, j.nh, k.spi, uint32_t(j.seq));
    esp_seal(p.te0, k, esp, text, j.seq);
    const uint32_t total = whole_len(p.a, i);
    esp_outer_header(start, j.outer, k.tun_src, k.tun_dst, j.tos, j.ttl, j.ip_id, total, udp ? 17 : 50);
    if (udp) esp_udp_header(start, outer, k.encap_sport, k.encap_dport, total);
    step_result(p.a, p.c, i, 0);
  }
};
SHOAL_STEP(EspOutStep)

}  // namespace shoal::k
