// DNS's names for numbers (RFC 1035 and the IANA registry), as Suricata
// writes them in EVE and reads them in rules.
#pragma once
#include <cstdint>
#include <string>

namespace shoal::ids {

// "A", "AAAA", "CNAME", ...; the number as text for others.
std::string dns_rrtype_name(uint16_t type);
// The type for a name ("A", "mx"; case-insensitive), or -1.
int dns_rrtype_value(const std::string& name);
// "NOERROR", "NXDOMAIN", ...; the number as text for others.
std::string dns_rcode_name(uint8_t rcode);

}  // namespace shoal::ids
