// SetUDPChecksum: sets the UDP checksum of IPv4 packets, as Click's.
#include "shoal/elements/ip/setl4checksum.hh"

namespace shoal {

class SetUDPChecksum : public SetL4Checksum<SetUDPChecksum> {
 public:
  static constexpr uint8_t kProto = 17;
  static constexpr const char* kNotMine = "not-udp";
  bool set(const uint8_t* ip, uint8_t* udp, uint32_t len) {
    if (len < 8) return false;
    uint32_t ulen = k::load_be16(udp + 4);
    if (ulen < 8 || ulen > len) return false;
    udp[6] = udp[7] = 0;
    uint16_t sum = k::csum_fold(k::csum_partial(udp, ulen, k::ipv4_pseudo_sum(ip + 12, ip + 16, 17, ulen)));
    k::store_be16(udp + 6, sum ? sum : 0xffff);  // RFC 768: a sum of 0 goes as all ones (0 means none)
    return true;
  }
};
SHOAL_ELEMENT(SetUDPChecksum, .name = "SetUDPChecksum", .ports = "1/1-2", .processing = "a/ah",
              .summary = "sets the UDP checksum of IPv4 packets",
              .description =
                  "Computes the UDP checksum of each packet over the UDP length (the IP header at the network "
                  "header annotation, with IPv4's pseudo-header) and sets it, a sum of 0 as 0xFFFF (RFC 768); sets "
                  "the transport header annotation. A packet that is not UDP, a fragment, or one whose UDP length "
                  "is below 8 or past IP's length (or the packet) goes to output 1 when there is one, else is "
                  "dropped: 'not-udp', 'fragment', 'bad-length'.",
              .example = "... -> StoreData(28, ABCD) -> SetUDPChecksum -> ...");

}  // namespace shoal
