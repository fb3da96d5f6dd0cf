// DecIP6HLIM: decrements the IPv6 hop limit.

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class DecIP6HLIM : public PacketElement<DecIP6HLIM> {
 public:
  void initialize() override {
    r_expired_ = add_drop_reason("hlim-expired");
    r_nohdr_ = add_drop_reason("no-ip-header");
  }
  int process(Packet* p) {
    uint8_t* ip = ip6_header(p);
    if (!ip) return drop_code(r_nohdr_);
    if (ip[7] <= 1) {
      expired_.add();
      return noutputs() > 1 ? 1 : drop_code(r_expired_);
    }
    --ip[7];
    return 0;
  }
  void add_handlers() override { add_stat_handler("expired", expired_); }

 private:
  uint16_t r_expired_ = 0, r_nohdr_ = 0;
  Stat expired_;
};
SHOAL_ELEMENT(DecIP6HLIM, .name = "DecIP6HLIM", .ports = "1/1-2", .processing = "a/ah",
              .summary = "decrements the IPv6 hop limit",
              .description =
                  "Decrements the hop limit of the IPv6 header (network header annotation). Packets "
                  "whose hop limit is 1 or 0 leave on output 1 if it exists (for ICMP6Error), else are "
                  "dropped ('hlim-expired').",
              .handlers = {{"expired", "r", "packets whose hop limit expired"}},
              .example = "rt[1] -> dh :: DecIP6HLIM -> ...; dh[1] -> ICMP6Error(fd00:1::1, timeexceeded) -> rt;");

}  // namespace shoal
