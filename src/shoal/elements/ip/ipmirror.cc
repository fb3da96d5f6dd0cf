// IPMirror: swaps a packet's IP addresses (and ports, and TCP sequence and
// acknowledgement numbers), as Click's.
#include <algorithm>
#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class IPMirror : public PacketElement<IPMirror> {
 public:
  void configure(Args& a) override {
    a.read_p("DST_ANNO", dst_anno_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("no-ip-header"); }
  int process(Packet* p) {
    uint32_t hl;
    uint8_t* ip = ip_header(p, &hl);
    if (!ip) return drop_code(r_);
    std::swap_ranges(ip + 12, ip + 16, ip + 16);
    const uint64_t l4 = uint64_t(p->network_header_offset()) + hl;
    const bool first = (k::load_be16(ip + 6) & 0x1fff) == 0;
    if (first && (ip[9] == 6 || ip[9] == 17) && l4 + 8 <= p->length()) {
      uint8_t* t = p->data() + l4;
      std::swap_ranges(t, t + 2, t + 2);  // the ports (checksums stay right: the words only move)
      if (ip[9] == 6 && l4 + 12 <= p->length()) std::swap_ranges(t + 4, t + 8, t + 8);
    }
    if (dst_anno_) std::memcpy(p->anno().dst_ip, ip + 16, 4);
    return 0;
  }

 private:
  bool dst_anno_ = true;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(IPMirror, .name = "IPMirror", .ports = "1/1", .processing = "a/a",
              .summary = "swaps IP source and destination",
              .description =
                  "Click's IPMirror: swaps the source and destination addresses of the IP header (network header "
                  "annotation), and in first fragments of TCP and UDP the ports, and in TCP the sequence and "
                  "acknowledgement numbers. The checksums stay right (words only move). DST_IP is set to the new "
                  "destination unless DST_ANNO is false. A packet without an IP header is dropped "
                  "('no-ip-header').",
              .args = {{"DST_ANNO", "boolean", "set DST_IP to the new destination (default true)"}},
              .example = "FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> IPMirror -> EtherMirror...;");

}  // namespace shoal
