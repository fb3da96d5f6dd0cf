// SetTimestampDelta: timestamps relative to the first one seen.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class SetTimestampDelta : public PacketElement<SetTimestampDelta> {
 public:
  void process(Packet* p) {
    if (!have_) have_ = true, first_ = p->timestamp_ns();
    p->set_timestamp_ns(p->timestamp_ns() - first_);  // earlier ones wrap below zero, printed signed
  }
  void add_handlers() override {
    add_read_handler("first", [this] {
      return have_ ? fmt::format("{}.{:09}", first_ / 1000000000, first_ % 1000000000) : std::string();
    });
    add_write_handler("reset", [this](const std::string&) { have_ = false; });
  }

 private:
  bool have_ = false;
  uint64_t first_ = 0;
};
SHOAL_ELEMENT(SetTimestampDelta, .name = "SetTimestampDelta", .ports = "1/1", .processing = "a/a",
              .summary = "makes timestamps relative to the first one seen",
              .description =
                  "Click's SetTimestampDelta: each packet's timestamp becomes its difference from the "
                  "first timestamp this element saw (per worker).",
              .args = {}, .handlers = {{"first", "r", "the first timestamp seen"}, {"reset", "w", "forget it"}},
              .example = "FromDump(in.pcap) -> SetTimestampDelta -> ToIPSummaryDump(-, FIELDS timestamp);");

}  // namespace shoal
