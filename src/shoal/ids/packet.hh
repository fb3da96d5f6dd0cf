// The IPv4 or IPv6 packet as the rules see it: addresses, protocol, ports
// and payload.
#pragma once
#include <cstdint>

#include "shoal/ids/rules.hh"

namespace shoal::ids {

// What the rules look at in a packet.
struct PacketInfo {
  Addr src, dst;
  uint8_t proto = 0;
  bool has_ports = false;
  uint16_t sport = 0, dport = 0;
  const uint8_t* payload = nullptr;  // after the TCP/UDP/ICMP header (IP payload otherwise)
  uint32_t plen = 0;
  // The packet's flow, when a flow layer tracks it (FlowIPManager).
  bool has_flow = false;
  bool established = false;      // TCP: the handshake completed; others: both directions seen
  uint8_t dir = 0;               // 0: to the server (from the originator), 1: to the client
  uint64_t* flowbits = nullptr;  // the flow's bits (kMaxFlowbits), or null
};

// Parses an IPv4 or IPv6 packet starting at ip; false when it is not one
// (too short, bad version, truncated headers).
bool parse_packet(const uint8_t* ip, uint32_t len, PacketInfo& out);

}  // namespace shoal::ids
