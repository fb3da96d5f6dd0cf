// SetIP6DSCP: sets the Differentiated Services Code Point of IPv6 packets,
// as Click's.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/dscp.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class SetIP6DSCP : public PacketElement<SetIP6DSCP> {
 public:
  void configure(Args& a) override { dscp_ = read_dscp_arg(a); }
  void initialize() override { r_nohdr_ = add_drop_reason("no-ip6-header"); }
  void add_handlers() override { add_dscp_handler(*this, dscp_); }
  int process(Packet* p) {
    uint8_t* ip6 = ip6_header(p);
    if (!ip6) return drop_code(r_nohdr_);
    // the traffic class is bits 4-11 of the first word; DSCP its upper six, ECN kept
    const uint32_t w = k::load_be32(ip6);
    k::store_be32(ip6, (w & ~(uint32_t(0x3f) << 22)) | uint32_t(dscp_) << 22);
    return 0;
  }

 private:
  uint8_t dscp_ = 0;
  uint16_t r_nohdr_ = 0;
};
SHOAL_ELEMENT(SetIP6DSCP, .name = "SetIP6DSCP", .ports = "1/1", .processing = "a/a",
              .summary = "sets IPv6 packets' DSCP field",
              .description =
                  "Click's SetIP6DSCP: sets the Differentiated Services Code Point (the upper six bits of the "
                  "traffic class) of the IPv6 header at the network header annotation to DSCP, keeping the ECN "
                  "bits and the flow label. A packet without an IPv6 header is dropped ('no-ip6-header').",
              .args = {{"DSCP", "unsigned", "0-63, mandatory"}}, .handlers = {{"dscp", "rw", "DSCP"}},
              .example = "... -> CheckIP6Header -> SetIP6DSCP(46) -> ...;");

}  // namespace shoal
