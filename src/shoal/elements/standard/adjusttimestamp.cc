// AdjustTimestamp: adds a signed interval to packets' timestamps, as Click's.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

// "+1.5", "-1", "0.25": a signed number of seconds, to nanoseconds.
inline bool parse_signed_seconds(std::string_view s, int64_t& ns) {
  bool neg = !s.empty() && s[0] == '-';
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  uint64_t u;
  if (!parse_timestamp(s, u) || u > uint64_t(INT64_MAX)) return false;
  ns = neg ? -int64_t(u) : int64_t(u);
  return true;
}

class AdjustTimestamp : public PacketElement<AdjustTimestamp> {
 public:
  void configure(Args& a) override {
    std::string delta;
    a.read_mp("DELTA", delta).read("ALL", all_);
    a.complete();
    if (!parse_signed_seconds(trim(delta), delta_ns_))
      a.fail(fmt::format("DELTA expects a signed time in seconds, got '{}'", delta));
  }
  void process(Packet* p) {
    // A zero timestamp means "none" and stays, unless ALL; the arithmetic
    // wraps, so a timestamp before 1970 reads back as negative.
    if (all_ || p->timestamp_ns()) p->set_timestamp_ns(p->timestamp_ns() + uint64_t(delta_ns_));
  }

 private:
  int64_t delta_ns_ = 0;
  bool all_ = false;
};
SHOAL_ELEMENT(AdjustTimestamp, .name = "AdjustTimestamp", .ports = "1/1", .processing = "a/a",
              .summary = "adds a signed interval to packets' timestamps",
              .description =
                  "Adds DELTA seconds (negative to subtract; nanosecond precision) to each packet's timestamp "
                  "annotation. Zero timestamps are left alone unless ALL is true. A result before zero is kept "
                  "as a negative timestamp (ToIPSummaryDump prints it with a '-').",
              .args = {{"DELTA", "signed seconds", "the adjustment, mandatory"},
                       {"ALL", "boolean", "adjust zero timestamps too (default false)"}},
              .handlers = {}, .example = "FromDump(in.pcap) -> AdjustTimestamp(-3600) -> ToDump(out.pcap);",
              .forwards_all = true);

}  // namespace shoal
