// SetTCPChecksum: sets the TCP checksum of IPv4 packets, as Click's.
#include "shoal/elements/ip/setl4checksum.hh"

namespace shoal {

class SetTCPChecksum : public SetL4Checksum<SetTCPChecksum> {
 public:
  static constexpr uint8_t kProto = 6;
  static constexpr const char* kNotMine = "not-tcp";
  void configure(Args& a) override {
    a.read_p("FIXOFF", fixoff_);
    a.complete();
  }
  bool set(const uint8_t* ip, uint8_t* tcp, uint32_t len) {
    if (len < 20) return false;
    if (fixoff_) {  // a data offset that points outside the segment is set to its bounds
      uint32_t off = uint32_t(tcp[12] >> 4) * 4;
      if (off < 20)
        tcp[12] = uint8_t((tcp[12] & 0x0f) | (5 << 4));
      else if (off > len)
        tcp[12] = uint8_t((tcp[12] & 0x0f) | ((len / 4) << 4));
    }
    tcp[16] = tcp[17] = 0;
    k::store_be16(tcp + 16, k::csum_fold(k::csum_partial(tcp, len, k::ipv4_pseudo_sum(ip + 12, ip + 16, 6, len))));
    return true;
  }

 private:
  bool fixoff_ = false;
};
SHOAL_ELEMENT(SetTCPChecksum, .name = "SetTCPChecksum", .ports = "1/1-2", .processing = "a/ah",
              .summary = "sets the TCP checksum of IPv4 packets",
              .description =
                  "Computes the TCP checksum of each packet (the IP header at the network header annotation; the "
                  "segment is IP's length less its header, with IPv4's pseudo-header) and sets it; sets the "
                  "transport header annotation. With FIXOFF, a data offset below 5 words is set to 5 and one past "
                  "the segment to the segment's length first. A packet that is not TCP, a fragment (its sum would "
                  "need the whole datagram), or one whose IP length or segment is short goes to output 1 when "
                  "there is one, else is dropped: 'not-tcp', 'fragment', 'bad-length'.",
              .args = {{"FIXOFF", "boolean", "repair a data offset out of bounds first (default false)"}},
              .example = "... -> StoreData(40, \\<0102>) -> SetTCPChecksum -> ...");

}  // namespace shoal
