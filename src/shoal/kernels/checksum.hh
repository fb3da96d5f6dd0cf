// Internet checksum (RFC 1071) with incremental update (RFC 1624).
#pragma once
#include "shoal/kernels/bytes.hh"

namespace shoal::k {

// One's-complement sum of `len` bytes folded into 32 bits (not complemented).
SHOAL_HD uint32_t csum_partial(const uint8_t* p, uint32_t len, uint32_t sum = 0) {
  while (len > 1) {
    sum += load_be16(p);
    p += 2;
    len -= 2;
  }
  if (len) sum += uint32_t(p[0]) << 8;
  return sum;
}

SHOAL_HD uint16_t csum_fold(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return uint16_t(~sum & 0xffff);
}

// Checksum of a buffer, as stored in a header field (big-endian value).
SHOAL_HD uint16_t ip_checksum(const uint8_t* p, uint32_t len) { return csum_fold(csum_partial(p, len)); }

// Sets an IPv4 header's checksum (hl bytes, a multiple of 4) from 32-bit
// words summed in host order (RFC 1071 2(B): the byte order of the sum
// does not matter when it is stored the same way): five additions for the
// usual 20 bytes instead of ten 16-bit loads and shifts.
SHOAL_HD void set_ipv4_header_checksum(uint8_t* ip, uint32_t hl) {
  ip[10] = ip[11] = 0;
  uint64_t sum = 0;
  for (uint32_t i = 0; i < hl; i += 4) {
    uint32_t w;
    __builtin_memcpy(&w, ip + i, 4);
    sum += w;
  }
  sum = (sum & 0xffffffffu) + (sum >> 32);
  sum = (sum & 0xffffffffu) + (sum >> 32);
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  uint16_t c = uint16_t(~sum);
  __builtin_memcpy(ip + 10, &c, 2);
}

// Whether an IPv4 header of hl bytes (a multiple of 4) carries a valid
// checksum: its one's complement sum is 0xffff. The sum runs over 32-bit
// words in host order (RFC 1071 2(B): byte order does not change this
// test), so the common 20-byte header is five additions. hl >= 20.
SHOAL_HD bool ipv4_header_checksum_ok(const uint8_t* ip, uint32_t hl) {
  // Words loaded whole (memcpy: the header need not be aligned), the
  // 20-byte case unrolled; the compiler had kept byte loads and shifts.
  auto word = [ip](uint32_t i) {
    uint32_t w;
    __builtin_memcpy(&w, ip + i, 4);
    return uint64_t(w);
  };
  uint64_t sum = word(0) + word(4) + word(8) + word(12) + word(16);
  for (uint32_t i = 20; i + 4 <= hl; i += 4) sum += word(i);
  sum = (sum & 0xffffffffu) + (sum >> 32);
  sum = (sum & 0xffffffffu) + (sum >> 32);
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return sum == 0xffff;
}

// RFC 1624 eqn. 3: new checksum after a 16-bit field changes from `from` to `to`.
SHOAL_HD uint16_t csum_update16(uint16_t check, uint16_t from, uint16_t to) {
  uint32_t sum = uint32_t(uint16_t(~check)) + uint16_t(~from) + to;
  sum = (sum & 0xffff) + (sum >> 16);
  sum = (sum & 0xffff) + (sum >> 16);
  return uint16_t(~sum);
}

// Pseudo-header sum for TCP/UDP over IPv4 (addresses as big-endian bytes).
SHOAL_HD uint32_t ipv4_pseudo_sum(const uint8_t* src4, const uint8_t* dst4, uint8_t proto, uint32_t l4len) {
  uint32_t s = csum_partial(src4, 4);
  s = csum_partial(dst4, 4, s);
  return s + proto + (l4len & 0xffff) + (l4len >> 16);
}

SHOAL_HD uint32_t ipv6_pseudo_sum(const uint8_t* src16, const uint8_t* dst16, uint8_t proto, uint32_t l4len) {
  uint32_t s = csum_partial(src16, 16);
  s = csum_partial(dst16, 16, s);
  return s + proto + (l4len & 0xffff) + (l4len >> 16);
}

// Sets the IPv4 source (off 12) or destination (off 16) address of the
// packet whose IPv4 header is at ip (len bytes from it) to addr (host
// order), and updates the header checksum and the TCP or UDP checksum
// incrementally (RFC 1624; a UDP checksum of 0, none, stays 0). Later
// fragments carry no transport header; a transport header cut short is
// left alone.
SHOAL_HD void ip4_set_addr(uint8_t* ip, uint32_t len, uint32_t off, uint32_t addr) {
  uint16_t from[2] = {load_be16(ip + off), load_be16(ip + off + 2)};
  uint16_t to[2] = {uint16_t(addr >> 16), uint16_t(addr)};
  store_be32(ip + off, addr);
  uint16_t c = load_be16(ip + 10);
  for (int i = 0; i < 2; ++i) c = csum_update16(c, from[i], to[i]);
  store_be16(ip + 10, c);
  uint32_t hl = uint32_t(ip[0] & 0x0f) * 4;
  if ((load_be16(ip + 6) & 0x1fff) != 0) return;
  uint32_t at = ip[9] == 6 ? 16 : ip[9] == 17 ? 6 : 0;
  if (!at || len < hl + at + 2) return;
  uint8_t* ck = ip + hl + at;
  uint16_t t = load_be16(ck);
  if (ip[9] == 17 && t == 0) return;
  for (int i = 0; i < 2; ++i) t = csum_update16(t, from[i], to[i]);
  if (ip[9] == 17 && t == 0) t = 0xffff;
  store_be16(ck, t);
}

}  // namespace shoal::k
