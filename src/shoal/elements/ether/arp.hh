// What ARPQuerier and ARPResponder share: the layout of an ARP packet for
// IPv4 over Ethernet.
#pragma once
#include <cstdint>

#include "shoal/kernels/bytes.hh"

namespace shoal {

constexpr uint32_t kArpLen = 42;  // Ethernet + ARP for IPv4 over Ethernet

inline bool is_arp_ipv4(const uint8_t* d, uint32_t len) {
  return len >= kArpLen && k::load_be16(d + 12) == 0x0806 && k::load_be16(d + 14) == 1 &&
         k::load_be16(d + 16) == 0x0800 && d[18] == 6 && d[19] == 4;
}

}  // namespace shoal
