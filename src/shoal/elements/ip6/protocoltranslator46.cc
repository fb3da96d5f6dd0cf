// ProtocolTranslator46: Click's IPv4 -> IPv6 translator, as SIIT (RFC 7915).
#include "shoal/elements/ip6/protocoltranslator.hh"

namespace shoal {

class ProtocolTranslator46 : public ProtocolTranslator<ProtocolTranslator46> {
 public:
  int process(Packet* p) {
    return replace(p, [&](const uint8_t* in, uint32_t len, uint8_t* out, const char*& why) {
      return siit::ip4to6(in, len, pfx_, out, why);
    });
  }
};
SHOAL_ELEMENT(
    ProtocolTranslator46, .name = "ProtocolTranslator46", .ports = "1/1", .processing = "a/a",
    .summary = "translates IPv4 packets to IPv6 (stateless, RFC 7915)",
    .description =
        "Translates each IPv4 packet (from its network header) to IPv6, as RFC 7915's stateless translator "
        "(SIIT): addresses become PREFIX plus the IPv4 address (Click's IPv4-mapped ::ffff:a.b.c.d by default), "
        "TOS the traffic class, TTL the hop limit; a fragment gets a Fragment header; TCP and UDP checksums are "
        "adjusted for the new pseudo-header (a UDP datagram without a checksum gets one; a fragment of one is "
        "dropped, 'udp-no-checksum-fragment'); ICMP becomes ICMPv6 (echo, and errors with the packet in error "
        "translated too, by RFC 7915's type and code mapping; others are dropped, 'icmp-untranslatable'). IPv4 "
        "options are not carried. The packet leaves as IPv6 from its first byte, with the network and transport "
        "header annotations set. Malformed packets are dropped ('not-ipv4', 'bad-header', 'bad-length', "
        "'bad-icmp', 'icmp-bad-inner', 'icmp-fragment').",
    .args = {{"PREFIX", "IPv6 /96 prefix",
              "where IPv4 addresses are embedded (default ::ffff:0:0/96; NAT64's "
              "well-known prefix is 64:ff9b::/96)"}},
    .example = "FromIPSummaryDump(v4.txt) -> ProtocolTranslator46(PREFIX 64:ff9b::/96) -> IP6Print -> Discard;");

}  // namespace shoal
