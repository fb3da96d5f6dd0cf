// CheckUDPHeader: checks the UDP header of IPv4 packets, as Click's.
#include "shoal/elements/ip/checkl4header.hh"

namespace shoal {

class CheckUDPHeader : public CheckL4Header<CheckUDPHeader, 3> {
 public:
  static constexpr const char* kProto = "UDP";
  static constexpr const char* kReasons[] = {"not-udp", "bad-length", "bad-udp-checksum"};
  static constexpr const char* kReasonTexts[] = {"not UDP", "bad packet length", "bad UDP checksum"};
  int check(Packet* p) {
    L4View v;
    int r = l4_view(p, 17, v);
    if (r < 0) return 0;
    if (r == 0 || v.len < 8) return 1;
    uint32_t ulen = k::load_be16(v.l4 + 4);
    if (ulen < 8 || ulen > v.len) return 1;
    // A zero checksum means none was computed (RFC 768).
    if (checksum_ && k::load_be16(v.l4 + 6) &&
        k::csum_fold(k::csum_partial(v.l4, ulen, k::ipv4_pseudo_sum(v.ip + 12, v.ip + 16, 17, ulen))))
      return 2;
    p->set_transport_header(uint32_t(v.l4 - p->data()));
    return -1;
  }
};
SHOAL_ELEMENT(CheckUDPHeader, .name = "CheckUDPHeader", .ports = "1/1-2", .processing = "a/ah",
              .summary = "checks the UDP header of IPv4 packets",
              .description =
                  "Passes UDP packets (first fragments) whose header is whole, whose UDP length is at least 8 and "
                  "within IP's length (which the packet holds), and whose checksum, when not zero, verifies (CHECKSUM "
                  "false skips that). Others go to output 1 if there is one, else are dropped: 'not-udp', "
                  "'bad-length', 'bad-udp-checksum'. VERBOSE true says why (the first ten).",
              .args = {{"CHECKSUM", "boolean", "verify checksums (default true)"},
                       {"VERBOSE", "boolean", "report failures on standard error"},
                       {"DETAILS", "boolean", "accepted (drop_details is always there)"}},
              .handlers = {{"count", "r", "packets passed"},
                           {"drops", "r", "packets that failed"},
                           {"drop_details", "r", "failures by reason"}},
              .example = "... -> CheckIPHeader -> IPClassifier(udp, -) -> CheckUDPHeader -> ...");

}  // namespace shoal
