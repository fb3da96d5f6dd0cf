// SetIPECN: sets the ECN field of IPv4 packets, as Click's.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

class SetIPECN : public PacketElement<SetIPECN> {
 public:
  void configure(Args& a) override {
    std::string v;
    a.read_mp("ECN", v);
    a.complete();
    if (!parse(v, ecn_)) a.fail(fmt::format("ECN '{}': 0-3, no, ect1 or ECT(1), ect2 or ECT(0), ce or CE", v));
  }
  void initialize() override { r_nohdr_ = add_drop_reason("no-ip-header"); }
  void add_handlers() override {
    add_read_handler("ecn", [this] { return std::to_string(ecn_); });
  }
  int process(Packet* p) {
    uint8_t* ip = ip_header20(p);
    if (!ip) return drop_code(r_nohdr_);
    const uint16_t old = k::load_be16(ip);
    ip[1] = uint8_t((ip[1] & ~3) | ecn_);
    k::store_be16(ip + 10, k::csum_update16(k::load_be16(ip + 10), old, k::load_be16(ip)));  // RFC 1624
    return 0;
  }

 private:
  static bool parse(const std::string& v, uint8_t& out) {
    static const std::pair<const char*, uint8_t> kWords[] = {{"no", 0},     {"ect1", 1}, {"ECT(1)", 1}, {"ect2", 2},
                                                             {"ECT(0)", 2}, {"ce", 3},   {"CE", 3}};
    for (const auto& [w, n] : kWords)
      if (v == w) return out = n, true;
    if (v.size() == 1 && v[0] >= '0' && v[0] <= '3') return out = uint8_t(v[0] - '0'), true;
    return false;
  }
  uint8_t ecn_ = 0;
  uint16_t r_nohdr_ = 0;
};
SHOAL_ELEMENT(SetIPECN, .name = "SetIPECN", .ports = "1/1", .processing = "a/a",
              .summary = "sets IP packets' ECN field",
              .description =
                  "Click's SetIPECN: sets the ECN field (the low 2 bits of the TOS byte) of the IPv4 header at the "
                  "network header annotation to ECN and updates the checksum incrementally. ECN is 0-3 or a "
                  "word: no (0), ect1 or ECT(1) (1), ect2 or ECT(0) (2), ce or CE (3). A packet without an IP "
                  "header is dropped ('no-ip-header').",
              .args = {{"ECN", "0-3 or word", "the ECN value, mandatory"}},
              .handlers = {{"ecn", "r", "ECN as a number"}},
              .example = "... -> CheckIPHeader -> SetIPECN(ECT(0)) -> ...;");

}  // namespace shoal
