// CheckTCPHeader: checks the TCP header of IPv4 packets, as Click's.
#include "shoal/elements/ip/checkl4header.hh"

namespace shoal {

class CheckTCPHeader : public CheckL4Header<CheckTCPHeader, 3> {
 public:
  static constexpr const char* kProto = "TCP";
  static constexpr const char* kReasons[] = {"not-tcp", "bad-length", "bad-tcp-checksum"};
  static constexpr const char* kReasonTexts[] = {"not TCP", "bad packet length", "bad TCP checksum"};
  int check(Packet* p) {
    L4View v;
    int r = l4_view(p, 6, v);
    if (r < 0) return 0;
    uint32_t off = r ? (v.l4[12] >> 4) * 4u : 0;
    if (r == 0 || v.len < 20 || off < 20 || off > v.len) return 1;
    if (checksum_ && k::csum_fold(k::csum_partial(v.l4, v.len, k::ipv4_pseudo_sum(v.ip + 12, v.ip + 16, 6, v.len))))
      return 2;
    p->set_transport_header(uint32_t(v.l4 - p->data()));
    return -1;
  }
};
SHOAL_ELEMENT(CheckTCPHeader, .name = "CheckTCPHeader", .ports = "1/1-2", .processing = "a/ah",
              .summary = "checks the TCP header of IPv4 packets",
              .description =
                  "Passes TCP packets (first fragments) whose header is whole (offset 20 bytes or more, within IP's "
                  "length, which the packet holds) and whose checksum verifies (CHECKSUM false skips that). Others go "
                  "to output 1 if there is one, else are dropped: 'not-tcp', 'bad-length', 'bad-tcp-checksum'. "
                  "VERBOSE true says why (the first ten). Expects the IP header annotation (CheckIPHeader).",
              .args = {{"CHECKSUM", "boolean", "verify checksums (default true)"},
                       {"VERBOSE", "boolean", "report failures on standard error"},
                       {"DETAILS", "boolean", "accepted (drop_details is always there)"}},
              .handlers = {{"count", "r", "packets passed"},
                           {"drops", "r", "packets that failed"},
                           {"drop_details", "r", "failures by reason"}},
              .example = "... -> CheckIPHeader -> IPClassifier(tcp, -) -> CheckTCPHeader -> ...");

}  // namespace shoal
