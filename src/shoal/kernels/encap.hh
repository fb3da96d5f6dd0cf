// Encapsulation headers written in place in front of a payload, shared by
// the CPU elements and their device steps.
#pragma once
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal::k {

struct UdpIpEncapCfg {
  uint8_t src[4], dst[4];
  uint16_t sport, dport;
  uint8_t tos, ttl;
  uint8_t df, checksum;
};

constexpr uint32_t kUdpIpHeaders = 28;

// h: 28 bytes in front of a payload of `payload` bytes (payload + 28 <=
// 65535). Writes the IPv4 header (ID `id`, checksum) and the UDP header
// (with the checksum over pseudo-header, header and payload when
// cfg.checksum; a computed 0 is sent as 0xffff, RFC 768).
SHOAL_HD void udpip_encap(uint8_t* h, uint32_t payload, const UdpIpEncapCfg& c, uint16_t id) {
  uint32_t total = payload + kUdpIpHeaders;
  h[0] = 0x45;
  h[1] = c.tos;
  store_be16(h + 2, uint16_t(total));
  store_be16(h + 4, id);
  store_be16(h + 6, c.df ? 0x4000 : 0);
  h[8] = c.ttl;
  h[9] = 17;
  store_be16(h + 10, 0);
  for (int j = 0; j < 4; ++j) h[12 + j] = c.src[j], h[16 + j] = c.dst[j];
  store_be16(h + 10, ip_checksum(h, 20));
  uint8_t* u = h + 20;
  store_be16(u, c.sport);
  store_be16(u + 2, c.dport);
  store_be16(u + 4, uint16_t(payload + 8));
  store_be16(u + 6, 0);
  if (c.checksum) {
    uint32_t s = ipv4_pseudo_sum(c.src, c.dst, 17, payload + 8);
    uint16_t sum = csum_fold(csum_partial(u, payload + 8, s));
    store_be16(u + 6, sum == 0 ? 0xffff : sum);
  }
}

}  // namespace shoal::k
