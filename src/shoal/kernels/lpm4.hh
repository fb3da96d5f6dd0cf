// IPv4 longest-prefix match with DIR-24-8 (Gupta et al.; NBA §4.1, DPDK
// lib/lpm): one 2^24-entry table indexed by the top 24 bits of the address,
// and 256-entry groups for the /25-/32 prefixes under a /24. The lookup is a
// SHOAL_HD function over plain arrays, so the CPU element, the host backend
// and a CUDA kernel share it. Building lives in routing/lpm4_build.hh (host only).
#pragma once
#include "shoal/kernels/hd.hh"

namespace shoal::k {

// tbl24 entry: bit 15 set -> bits 0-14 index a tbl8 group; else bits 0-14
// are the next-hop index + 1 (0 = no route). Next hops, not routes, are
// numbered: a million prefixes share a few next hops.
constexpr uint16_t kLpmGroupBit = 0x8000;
constexpr uint16_t kLpmNoRoute = 0;

struct Lpm4View {
  const uint16_t* tbl24 = nullptr;  // 1 << 24 entries
  const uint16_t* tbl8 = nullptr;   // groups of 256 (next hop + 1, 0 = none)
};

// The next-hop index for a host-order address, or -1 when no prefix matches.
SHOAL_HD int32_t lpm4_lookup(const Lpm4View& t, uint32_t addr) {
  uint16_t e = t.tbl24[addr >> 8];
  if (e & kLpmGroupBit) e = t.tbl8[(uint32_t(e & 0x7fff) << 8) | (addr & 0xff)];
  return int32_t(e) - 1;
}

}  // namespace shoal::k
