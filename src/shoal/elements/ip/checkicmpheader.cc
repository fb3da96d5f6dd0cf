// CheckICMPHeader: checks the ICMP header of IPv4 packets, as Click's.
#include "shoal/elements/ip/checkl4header.hh"

namespace shoal {

class CheckICMPHeader : public CheckL4Header<CheckICMPHeader, 3> {
 public:
  static constexpr const char* kProto = "ICMP";
  static constexpr const char* kReasons[] = {"not-icmp", "bad-length", "bad-icmp-checksum"};
  static constexpr const char* kReasonTexts[] = {"not ICMP", "bad packet length", "bad ICMP checksum"};
  int check(Packet* p) {
    L4View v;
    int r = l4_view(p, 1, v);
    if (r < 0) return 0;
    if (r == 0 || v.len < 8) return 1;
    switch (v.l4[0]) {
      case 3:   // unreachable
      case 4:   // source quench
      case 5:   // redirect
      case 11:  // time exceeded
      case 12:  // parameter problem: the quoted IP header and 64 bits of its data
        if (v.len < 8 + 28) return 1;
        break;
      case 13:
      case 14:  // timestamp: exactly 12 more bytes
        if (v.len != 20) return 1;
        break;
      case 15:
      case 16:  // information request: no more bytes
        if (v.len != 8) return 1;
        break;
      default: break;
    }
    if (checksum_ && k::ip_checksum(v.l4, v.len) != 0) return 2;
    p->set_transport_header(uint32_t(v.l4 - p->data()));
    return -1;
  }
};
SHOAL_ELEMENT(CheckICMPHeader, .name = "CheckICMPHeader", .ports = "1/1-2", .processing = "a/ah",
              .summary = "checks the ICMP header of IPv4 packets",
              .description =
                  "Passes ICMP packets (first fragments) whose message is whole (8 bytes, and what the type needs: "
                  "the quoted header of errors, the exact size of timestamp and information messages, within IP's "
                  "length, which the packet holds) and whose checksum verifies (CHECKSUM false skips that). Others "
                  "go to output 1 if there is one, else are dropped: 'not-icmp', 'bad-length', "
                  "'bad-icmp-checksum'. VERBOSE true says why (the first ten).",
              .args = {{"CHECKSUM", "boolean", "verify checksums (default true)"},
                       {"VERBOSE", "boolean", "report failures on standard error"},
                       {"DETAILS", "boolean", "accepted (drop_details is always there)"}},
              .handlers = {{"count", "r", "packets passed"},
                           {"drops", "r", "packets that failed"},
                           {"drop_details", "r", "failures by reason"}},
              .example = "... -> CheckIPHeader -> IPClassifier(icmp, -) -> CheckICMPHeader -> ...");

}  // namespace shoal
