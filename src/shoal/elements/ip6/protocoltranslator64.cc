// ProtocolTranslator64: Click's IPv6 -> IPv4 translator, as SIIT (RFC 7915).
#include "shoal/elements/ip6/protocoltranslator.hh"

namespace shoal {

class ProtocolTranslator64 : public ProtocolTranslator<ProtocolTranslator64> {
 public:
  int process(Packet* p) {
    return replace(p, [&](const uint8_t* in, uint32_t len, uint8_t* out, const char*& why) {
      return siit::ip6to4(in, len, pfx_, out, id_, why);
    });
  }

 private:
  uint16_t id_ = 1;  // identifications of the datagrams that may be fragmented later
};
SHOAL_ELEMENT(
    ProtocolTranslator64, .name = "ProtocolTranslator64", .ports = "1/1", .processing = "a/a",
    .summary = "translates IPv6 packets to IPv4 (stateless, RFC 7915)",
    .description =
        "Translates each IPv6 packet (from its network header) to IPv4, as RFC 7915's stateless translator "
        "(SIIT): both addresses must lie in PREFIX (Click's IPv4-mapped ::ffff:0:0/96 by default), whose low 32 "
        "bits they become ('address-not-mapped' otherwise); the traffic class becomes TOS, the hop limit TTL; "
        "hop-by-hop and destination options and a spent routing header are skipped ('routing-segments-left' when "
        "not spent); a Fragment header gives the IPv4 fragment fields; otherwise DF is set above 1260 bytes and "
        "smaller datagrams get an identification. TCP and UDP checksums are adjusted for the new pseudo-header; "
        "ICMPv6 becomes ICMP (echo, and errors with the packet in error translated too; others, Neighbor "
        "Discovery and MLD included, are dropped as 'icmp-untranslatable'). The packet leaves as IPv4 from its "
        "first byte, with the network and transport header annotations set.",
    .args = {{"PREFIX", "IPv6 /96 prefix", "where IPv4 addresses are embedded (default ::ffff:0:0/96)"}},
    .example = "FromDump(v6.pcap) -> Strip(14) -> ProtocolTranslator64 -> CheckIPHeader -> IPPrint -> Discard;");

}  // namespace shoal
