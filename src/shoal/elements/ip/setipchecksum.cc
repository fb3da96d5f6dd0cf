// SetIPChecksum: recomputes the IPv4 header checksum.

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class SetIPChecksum : public PacketElement<SetIPChecksum> {
 public:
  void initialize() override { r_ = add_drop_reason("no-ip-header"); }
  int process(Packet* p) {
    uint32_t hl;
    uint8_t* ip = ip_header(p, &hl);
    if (!ip) return drop_code(r_);
    set_ip_checksum(ip, hl);
    return 0;
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(SetIPChecksum, .name = "SetIPChecksum", .ports = "1/1", .processing = "a/a",
              .summary = "recomputes the IPv4 header checksum",
              .description =
                  "Recomputes the checksum of the IP header (network header annotation). Packets "
                  "without a whole IP header: dropped ('no-ip-header').",
              .example = "... -> MarkIPHeader -> SetIPChecksum -> ...;");

}  // namespace shoal
