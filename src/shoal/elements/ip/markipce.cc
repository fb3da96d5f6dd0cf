// MarkIPCE: sets the ECN field to Congestion Experienced (RFC 3168).
#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

class MarkIPCE : public PacketElement<MarkIPCE> {
 public:
  void configure(Args& a) override {
    a.read_p("FORCE", force_);
    a.complete();
  }
  void initialize() override {
    r_notect_ = add_drop_reason("not-ect");
    r_nohdr_ = add_drop_reason("no-ip-header");
  }
  int process(Packet* p) {
    uint8_t* ip = ip_header20(p);
    if (!ip) return drop_code(r_nohdr_);
    const uint8_t ecn = ip[1] & 3;
    if (ecn == 0 && !force_) return drop_code(r_notect_);  // a sender that cannot hear of congestion
    if (ecn != 3) {
      // the checksum updated for the changed word (RFC 1624)
      const uint16_t old = k::load_be16(ip);
      ip[1] |= 3;
      k::store_be16(ip + 10, k::csum_update16(k::load_be16(ip + 10), old, k::load_be16(ip)));
      marked_.add();
    }
    return 0;
  }
  void add_handlers() override { add_stat_handler("marked", marked_); }

 private:
  bool force_ = false;
  uint16_t r_notect_ = 0, r_nohdr_ = 0;
  Stat marked_;
};
SHOAL_ELEMENT(MarkIPCE, .name = "MarkIPCE", .ports = "1/1", .processing = "a/a",
              .summary = "sets IP packets' ECN field to Congestion Experienced",
              .description =
                  "Click's MarkIPCE: sets the ECN field of the IP header (network header annotation) to CE (3) and "
                  "updates the checksum incrementally (RFC 1624). A packet whose ECN field is 0 (its sender is not "
                  "ECN-capable) is dropped ('not-ect') unless FORCE is true. A packet without an IP header is "
                  "dropped ('no-ip-header').",
              .args = {{"FORCE", "boolean", "mark packets that are not ECN-capable too (default false)"}},
              .handlers = {{"marked", "r", "packets whose ECN field changed to CE"}},
              .example = "q :: Queue -> RED(5, 50, 0.02) ... ; ... -> MarkIPCE -> ...;");

}  // namespace shoal
