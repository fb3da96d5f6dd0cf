// What a NIC or the kernel leaves undone in frames captured from a Linux
// interface: checksums the sender offloaded (TP_STATUS_CSUMNOTREADY) and
// TCP super-packets from GSO/TSO or GRO, larger than the link's MTU. A
// router that forwards such frames must finish them in software.
#pragma once
#include <cstdint>
#include <functional>

namespace shoal::io {

// Fills in the TCP or UDP checksum of an Ethernet frame (IPv4 or IPv6,
// optionally VLAN-tagged). False when the frame is not TCP/UDP or is cut.
bool finish_l4_checksum(uint8_t* frame, uint32_t len);

// When `frame` is a TCP segment whose IP packet exceeds `mtu`, or carries
// more than `mss` payload bytes (the sender's segment size, when the kernel
// says it; 0: unknown), cuts it into segments of at most that size
// (sequence numbers, IP IDs, lengths, flags, checksums fixed) and calls
// emit(bytes, len) for each; returns the number emitted, or 0 when the frame
// is not such a segment (nothing emitted).
uint32_t segment_tcp(const uint8_t* frame, uint32_t len, uint32_t mtu, uint32_t mss,
                     const std::function<bool(const uint8_t*, uint32_t)>& emit);

}  // namespace shoal::io
