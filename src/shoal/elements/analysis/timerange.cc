// TimeRange: the smallest range of time that holds the packets' timestamps.
#include <algorithm>

#include "shoal/elements/common.hh"

namespace shoal {

class TimeRange : public PacketElement<TimeRange> {
 public:
  void configure(Args& a) override {
    a.read("SIMPLE", simple_);
    a.complete();
  }
  void process(Packet* p) {
    const int64_t t = int64_t(p->timestamp_ns());
    if (!any_) {
      first_ = last_ = t, any_ = true;
    } else if (simple_) {
      last_ = t;
    } else {
      first_ = std::min(first_, t), last_ = std::max(last_, t);
    }
  }
  void add_handlers() override {
    add_read_handler("first", [this] { return stamp(first_); });
    add_read_handler("last", [this] { return stamp(last_); });
    add_read_handler("range", [this] { return stamp(first_) + " " + stamp(last_); });
    add_read_handler("interval", [this] { return stamp(last_ - first_); });
    add_write_handler("reset", [this](const std::string&) { any_ = false, first_ = last_ = 0; });
  }

 private:
  // Click's timestamp text ("0.000000" before any packet; SIMPLE's interval
  // can be negative when time went back).
  std::string stamp(int64_t ns) const {
    if (!any_) return "0.000000";
    return ns < 0 ? "-" + click_timestamp(uint64_t(-ns)) : click_timestamp(uint64_t(ns));
  }

  bool simple_ = false, any_ = false;
  int64_t first_ = 0, last_ = 0;
};
SHOAL_ELEMENT(TimeRange, .name = "TimeRange", .ports = "1/1", .processing = "a/a",
              .summary = "records the range of the packets' timestamps",
              .description =
                  "Click's TimeRange: packets pass unchanged while the smallest range holding their "
                  "timestamps is kept. With SIMPLE true the timestamps are taken to rise (the first and "
                  "the latest). (Each worker's copy sees its own packets.)",
              .args = {{"SIMPLE", "boolean", "timestamps only rise (default false)"}},
              .handlers = {{"first", "r", "the earliest timestamp (0.000000 before any packet)"},
                           {"last", "r", "the latest timestamp"},
                           {"range", "r", "the earliest and the latest, separated by a space"},
                           {"interval", "r", "the latest less the earliest, in seconds"},
                           {"reset", "w", "forgets the range"}},
              .example =
                  "FromDump(trace.pcap, STOP true) -> tr :: TimeRange -> Discard; "
                  "DriverManager(wait, print tr.range);");

}  // namespace shoal
