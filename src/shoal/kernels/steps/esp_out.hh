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
    // nonzero: GCM and CTR packets are laid out but sealed by
    // EspSealChunkStep and EspSealEndStep (the work split among threads)
    uint32_t split;
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
    const bool later = p.split && esp_split_suite(k.suite);
    if (later)
      store_be64(esp + 8, j.seq);  // the IV (esp_seal's)
    else
      esp_seal(p.te0, k, esp, text, j.seq);
    const uint32_t total = whole_len(p.a, i);
    esp_outer_header(start, j.outer, k.tun_src, k.tun_dst, j.tos, j.ttl, j.ip_id, total, udp ? 17 : 50);
    if (udp && !later) esp_udp_header(start, outer, k.encap_sport, k.encap_dport, total);
    step_result(p.a, p.c, i, 0);
  }
};
SHOAL_STEP(EspOutStep)

// A packet EspOutStep laid out for the split steps: where its ESP header
// is, and its text's bytes.
struct EspLaidOut {
  const EspKeys* k;
  uint8_t* start;
  uint8_t* esp;
  uint32_t outer, text, total;
  uint64_t seq;
};
SHOAL_HD bool esp_laid_out(const EspOutStep::Params& p, uint32_t i, EspLaidOut& o) {
  if (!p.split || !step_enter(p.a, p.c, i)) return false;
  EspJob j;
  __builtin_memcpy(&j, p.jobs + sizeof(EspJob) * i, sizeof j);
  if (j.action != kEspSeal) return false;
  o.k = &p.keys[j.sa];
  if (!esp_split_suite(o.k->suite)) return false;
  o.outer = j.outer == 4 ? 20 : j.outer == 6 ? 40 : j.hdr;
  const uint32_t at = o.outer + (o.k->encap ? 8 : 0);
  o.start = whole_data(p.a, i);
  o.total = whole_len(p.a, i);
  if (!o.start || o.total < at + 16 + o.k->icv_len) return false;
  o.esp = o.start + at;
  o.text = o.total - at - 16 - o.k->icv_len;
  o.seq = j.seq;
  return true;
}

// EspOutStep's GCM and CTR packets, `per` threads each (esp_seal_chunk):
// thread t takes chunk t % per of the packet at position t / per.
struct EspSealChunkStep {
  struct Params {
    EspOutStep::Params o;
    uint32_t* acc;  // 4 words per packet, zero before
    uint32_t per;
  };
  static SHOAL_HD void run(const Params& p, uint32_t t) {
    uint32_t i = t / p.per;
    if (p.o.a.order) i = p.o.a.order[i];
    EspLaidOut o;
    if (!esp_laid_out(p.o, i, o)) return;
    const uint32_t chunks = esp_chunks(*o.k, o.text);  // (more than per only if the host counted short)
    for (uint32_t c = t % p.per; c < chunks; c += p.per)
      esp_seal_chunk(p.o.te0, *o.k, o.esp, o.text, o.seq, c, p.acc + 4 * i);
  }
};
SHOAL_STEP(EspSealChunkStep)

// Then, per packet: the ICV, and ESP in UDP's header (its IPv6 checksum
// covers the sealed packet).
struct EspSealEndStep {
  struct Params {
    EspOutStep::Params o;
    const uint32_t* acc;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    EspLaidOut o;
    if (!esp_laid_out(p.o, i, o)) return;
    esp_seal_end(p.o.te0, *o.k, o.esp, o.text, o.seq, p.acc + 4 * i);
    if (o.k->encap) esp_udp_header(o.start, o.outer, o.k->encap_sport, o.k->encap_dport, o.total);
  }
};
SHOAL_STEP(EspSealEndStep)

}  // namespace shoal::k
