// DropBroadcasts: drops packets that arrived as link-level broadcasts.

#include "shoal/elements/common.hh"

namespace shoal {

class DropBroadcasts : public PacketElement<DropBroadcasts> {
 public:
  void initialize() override { r_ = add_drop_reason("link-broadcast"); }
  int process(Packet* p) {
    uint8_t t = p->anno().packet_type;
    bool bcast = t == Anno::kBroadcast || t == Anno::kMulticast;
    if (!bcast && p->has_mac_header()) bcast = (p->mac_header()[0] & 1) != 0;
    return bcast ? drop_code(r_) : 0;
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(DropBroadcasts, .name = "DropBroadcasts", .ports = "1/1", .processing = "a/a",
              .summary = "drops packets that arrived as link-level broadcasts",
              .description =
                  "Drops ('link-broadcast') packets that arrived as link-level broadcast or multicast: "
                  "the packet type annotation (set by FromDevice) says so, or the Ethernet header the "
                  "MAC annotation points at has a group destination. A router must not forward them "
                  "(RFC 1812 5.3.4).",
              .example = "rt[1] -> DropBroadcasts -> DecIPTTL -> ...;");

}  // namespace shoal
