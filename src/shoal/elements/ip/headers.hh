// The IPv4 and IPv6 headers of a packet, found through its network header
// annotation, for the elements of ip/ and ip6/.
#pragma once
#include <cstdint>

#include "shoal/core/packet.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

// The IPv4 header when the annotation is set and the header is whole (its
// length field at least 20 and within the packet); nullptr otherwise.
inline uint8_t* ip_header(Packet* p, uint32_t* hl_out = nullptr) {
  if (!p->has_network_header()) return nullptr;
  int64_t off = p->network_header_offset();
  if (off < 0 || uint64_t(off) + 20 > p->length()) return nullptr;
  uint8_t* ip = p->network_header();
  uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
  if (hl < 20 || uint64_t(off) + hl > p->length()) return nullptr;
  if (hl_out) *hl_out = hl;
  return ip;
}

// The first 20 bytes at the network header annotation, when the packet has
// them (the fixed IPv4 header, whatever its length field says).
inline uint8_t* ip_header20(Packet* p) {
  if (!p->has_network_header()) return nullptr;
  int64_t off = p->network_header_offset();
  return off >= 0 && uint64_t(off) + 20 <= p->length() ? p->network_header() : nullptr;
}

inline void set_ip_checksum(uint8_t* ip, uint32_t hl) {
  ip[10] = ip[11] = 0;
  k::store_be16(ip + 10, k::ip_checksum(ip, hl));
}

// The IPv6 header when the annotation is set and 40 bytes are there.
inline uint8_t* ip6_header(Packet* p) {
  if (!p->has_network_header()) return nullptr;
  int64_t off = p->network_header_offset();
  if (off < 0 || uint64_t(off) + 40 > p->length()) return nullptr;
  return p->network_header();
}

inline bool is_zero16(const uint8_t* a) {
  for (int i = 0; i < 16; ++i)
    if (a[i]) return false;
  return true;
}

}  // namespace shoal
