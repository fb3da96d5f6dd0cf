// Per-packet IPv4/IPv6 forwarding functions, written once: the CPU elements
// (CheckIPHeader, DecIPTTL, DirectIPLookup, LookupIP6Route) call them on the
// packet, the offload steps (kernels/steps/) call them on ROI bytes in device or
// host memory. Results follow Element conventions: an output port, or
// -1 - reason for a drop, with reasons numbered as the element adds them.
#pragma once
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal::k {

struct NextHop4 {
  uint32_t gw;  // host order; 0 = none
  int32_t port;
};
struct NextHop6 {
  uint8_t gw[16];  // all zero: none
  int32_t port;
};

// Route outcome for next hop `nh` (-1: no route): the gateway, if any,
// replaces the DST_IP annotation; the port must be a connected output.
// reason_noroute/reason_discard: the element's drop reasons.
SHOAL_HD int route4_apply(int32_t nh, const NextHop4* nhs, uint8_t* dst_ip, int noutputs, int reason_noroute,
                          int reason_discard) {
  if (nh < 0) return -1 - reason_noroute;
  const NextHop4& h = nhs[nh];
  if (h.gw) store_be32(dst_ip, h.gw);
  if (h.port < 0 || h.port >= noutputs) return -1 - reason_discard;
  return h.port;
}

SHOAL_HD int route6_apply(int32_t nh, const NextHop6* nhs, uint8_t* dst_ip6, int noutputs, int reason_noroute,
                          int reason_discard) {
  if (nh < 0) return -1 - reason_noroute;
  const NextHop6& h = nhs[nh];
  bool zero = true;
  for (int j = 0; j < 16; ++j) zero &= h.gw[j] == 0;
  if (!zero)
    for (int j = 0; j < 16; ++j) dst_ip6[j] = h.gw[j];
  if (h.port < 0 || h.port >= noutputs) return -1 - reason_discard;
  return h.port;
}

// CheckIPHeader's tests on the IPv4 header at `ip`: `avail` bytes of the
// packet from the header on, of which `have` (at least min(avail, 60)) are
// readable at ip. -1: good; else Click's reason index: 0 tiny-packet,
// 1 bad-ip-version, 2 bad-ip-header-length, 3 bad-ip-length,
// 4 bad-ip-checksum, 5 bad-source-address, 6 bad-ip-options.
SHOAL_HD int ipv4_check(const uint8_t* ip, uint32_t avail, bool checksum, const uint32_t* badsrc, uint32_t nbad) {
  if (avail < 20) return 0;
  if ((ip[0] >> 4) != 4) return 1;
  uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
  if (hl < 20 || hl > avail) return 2;
  uint32_t len = load_be16(ip + 2);
  if (len < hl || len > avail) return 3;
  if (checksum && !ipv4_header_checksum_ok(ip, hl)) return 4;
  uint32_t src = load_be32(ip + 12);
  // Broadcast and multicast sources are never valid (RFC 1812 5.3.7).
  if (src == 0xffffffffu || (src >> 28) == 0xe) return 5;
  for (uint32_t b = 0; b < nbad; ++b)
    if (src == badsrc[b]) return 5;
  // Options: each must fit the header (types 0 and 1 are one byte).
  for (uint32_t o = 20; o < hl;) {
    uint8_t t = ip[o];
    if (t == 0) break;
    if (t == 1) {
      ++o;
      continue;
    }
    if (o + 1 >= hl || ip[o + 1] < 2 || o + ip[o + 1] > hl) return 6;
    o += ip[o + 1];
  }
  return -1;
}

// DecIPTTL on the TTL/protocol/checksum word (IP header bytes 8-11) given the
// destination's first byte: 0 passed (decremented, or multicast left alone
// when `multicast` is false), 1 expired (TTL 0 or 1, unchanged).
SHOAL_HD int dec_ttl(uint8_t* ttl_word, uint8_t dst0, bool multicast) {
  if (!multicast && (dst0 >> 4) == 0xe) return 0;
  if (ttl_word[0] <= 1) return 1;
  uint16_t old = load_be16(ttl_word);
  --ttl_word[0];
  store_be16(ttl_word + 2, csum_update16(load_be16(ttl_word + 2), old, load_be16(ttl_word)));
  return 0;
}

}  // namespace shoal::k
