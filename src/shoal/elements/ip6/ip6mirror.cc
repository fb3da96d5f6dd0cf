// IP6Mirror: swaps a packet's IPv6 addresses and TCP/UDP ports, as Click's.
#include <algorithm>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class IP6Mirror : public PacketElement<IP6Mirror> {
 public:
  void initialize() override { r_ = add_drop_reason("no-ip6-header"); }
  int process(Packet* p) {
    uint8_t* ip = ip6_header(p);
    if (!ip) return drop_code(r_);
    std::swap_ranges(ip + 8, ip + 24, ip + 24);
    const uint64_t t = uint64_t(p->network_header_offset()) + 40;
    if ((ip[6] == 6 || ip[6] == 17) && t + 4 <= p->length()) {  // ports right after the header
      uint8_t* l4 = p->data() + t;
      std::swap_ranges(l4, l4 + 2, l4 + 2);
    }
    return 0;
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(IP6Mirror, .name = "IP6Mirror", .ports = "1/1", .processing = "a/a",
              .summary = "swaps IPv6 source and destination",
              .description =
                  "Click's IP6Mirror: swaps the source and destination addresses of the IPv6 header "
                  "(network header annotation), and the ports of a TCP or UDP header that follows it "
                  "directly. The checksums stay right (words only move). A packet without an IPv6 header "
                  "is dropped ('no-ip6-header').",
              .example = "... -> CheckIP6Header(14) -> IP6Mirror -> EtherMirror -> ...;");

}  // namespace shoal
