// An Ethernet header put in front of a packet, for EtherEncap and EnsureEther.
#pragma once
#include <cstring>

#include "shoal/core/args.hh"
#include "shoal/core/packet.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

// DST, SRC and TYPE prepended, the MAC annotation on them; false when the
// packet has no headroom for them.
inline bool push_ether_header(Packet* p, const EtherAddr& dst, const EtherAddr& src, uint16_t type) {
  uint8_t* h = p->push(14);
  if (!h) return false;
  std::memcpy(h, dst.b.data(), 6);
  std::memcpy(h + 6, src.b.data(), 6);
  k::store_be16(h + 12, type);
  p->set_mac_header(0);
  return true;
}

}  // namespace shoal
