// SetTimestamp: sets the timestamp annotation.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class SetTimestamp : public PacketElement<SetTimestamp> {
 public:
  void configure(Args& a) override {
    std::string t;
    a.read_p("TIMESTAMP", t);
    a.complete();
    if (!t.empty()) {
      if (!parse_timestamp(t, fixed_)) a.fail(fmt::format("TIMESTAMP expects SECONDS[.FRACTION], got '{}'", t));
      has_fixed_ = true;
    }
  }
  void process(Packet* p) { p->set_timestamp_ns(has_fixed_ ? fixed_ : realtime_ns()); }

 private:
  uint64_t fixed_ = 0;
  bool has_fixed_ = false;
};
SHOAL_ELEMENT(SetTimestamp, .name = "SetTimestamp", .ports = "1/1", .processing = "a/a",
              .summary = "sets the timestamp annotation",
              .description =
                  "Sets each packet's timestamp to the current wall-clock time, or to TIMESTAMP "
                  "(seconds since the epoch, fractional) when given.",
              .args = {{"TIMESTAMP", "real", "fixed timestamp in seconds"}}, .handlers = {},
              .example = "InfiniteSource(LIMIT 5) -> SetTimestamp -> ToDump(out.pcap);", .forwards_all = true);

}  // namespace shoal
