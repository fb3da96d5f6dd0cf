// Suricata's decoder events (the `decode-event` rule keyword): anomalies of
// a packet's IP and transport headers, found by walking them as Suricata's
// decoder does (IPv4 options, IPv6 extension headers, TCP options, UDP and
// ICMP lengths). Fragment overlaps are the reassembler's to report
// (IPReassembler marks the fragment); everything else is read from the
// packet's bytes.
#pragma once
#include <cstdint>
#include <string_view>

namespace shoal::ids {

enum DecodeEvent : uint8_t {
  kIpv4PktTooSmall,
  kIpv4HlenTooSmall,
  kIpv4IplenSmallerThanHlen,
  kIpv4TruncPkt,
  kIpv4OptInvalid,
  kIpv4OptInvalidLen,
  kIpv4OptMalformed,
  kIpv4OptPadRequired,
  kIpv4OptEolRequired,
  kIpv4OptDuplicate,
  kIpv4Icmpv6,
  kIpv4FragPktTooLarge,
  kIpv4FragOverlap,
  kIpv6PktTooSmall,
  kIpv6TruncPkt,
  kIpv6TruncExthdr,
  kIpv6ExthdrDuplFh,
  kIpv6ExthdrUselessFh,
  kIpv6ExthdrDuplRh,
  kIpv6ExthdrDuplHh,
  kIpv6ExthdrDuplDh,
  kIpv6ExthdrDuplAh,
  kIpv6ExthdrInvalidOptlen,
  kIpv6ExthdrRhType0,
  kIpv6ExthdrZeroLenPadn,
  kIpv6ExthdrAhResNotNull,
  kIpv6FhNonZeroResField,
  kIpv6DataAfterNoneHeader,
  kIpv6UnknownNextHeader,
  kIpv6Icmpv4,
  kIpv6HopoptsUnknownOpt,
  kIpv6HopoptsOnlyPadding,
  kIpv6DstoptsUnknownOpt,
  kIpv6DstoptsOnlyPadding,
  kIpv6FragPktTooLarge,
  kIpv6FragOverlap,
  kIpv6FragInvalidLength,
  kIpv4InIpv6PktTooSmall,
  kIpv4InIpv6WrongIpVer,
  kIpv6InIpv6PktTooSmall,
  kIpv6InIpv6WrongIpVer,
  kTcpPktTooSmall,
  kTcpHlenTooSmall,
  kTcpInvalidOptlen,
  kTcpOptInvalidLen,
  kTcpOptDuplicate,
  kUdpPktTooSmall,
  kUdpHlenTooSmall,
  kUdpHlenInvalid,
  kUdpLenInvalid,
  kIcmpv4PktTooSmall,
  kIcmpv6PktTooSmall,
  kDecodeEventCount
};
static_assert(kDecodeEventCount <= 64, "a packet's events are a 64-bit mask");

constexpr uint64_t event_bit(DecodeEvent e) { return uint64_t(1) << e; }
// Events that make Suricata's decoder give up on the network layer (the
// packet then has no addresses) or on the transport (no ports, no payload,
// no flow).
constexpr uint64_t kL3Invalid = event_bit(kIpv4PktTooSmall) | event_bit(kIpv4HlenTooSmall) |
                                event_bit(kIpv4IplenSmallerThanHlen) | event_bit(kIpv4TruncPkt) |
                                event_bit(kIpv6PktTooSmall) | event_bit(kIpv6TruncPkt);
constexpr uint64_t kL4Invalid = event_bit(kTcpPktTooSmall) | event_bit(kTcpHlenTooSmall) |
                                event_bit(kTcpInvalidOptlen) | event_bit(kUdpPktTooSmall) |
                                event_bit(kUdpHlenTooSmall) | event_bit(kUdpHlenInvalid) | event_bit(kUdpLenInvalid);

// Events Suricata's decoder raises as invalid (ENGINE_SET_INVALID_EVENT):
// the packet counts as decoder.invalid.
constexpr uint64_t kPacketInvalid =
    kL3Invalid | kL4Invalid | event_bit(kIpv4OptInvalidLen) | event_bit(kIpv4OptMalformed) | event_bit(kIpv4Icmpv6) |
    event_bit(kIpv6TruncExthdr) | event_bit(kIcmpv4PktTooSmall) | event_bit(kIcmpv6PktTooSmall);

// The keyword's name of an event ("ipv4.trunc_pkt"), and back.
const char* decode_event_name(DecodeEvent e);
bool find_decode_event(std::string_view name, DecodeEvent& out);

// The events of the packet whose IP header starts at ip (len bytes captured
// from there).
// counts (kDecodeEventCount entries, zeroed by the caller), when given:
// how many times each event occurred (Suricata raises some more than once).
uint64_t decode_events(const uint8_t* ip, uint32_t len, uint8_t* counts = nullptr);

}  // namespace shoal::ids
