// TimestampAccum: Click's TimestampAccum, the time since each packet's
// timestamp annotation, summed (with the count, least and most) over every
// worker's copy.
#include <fmt/format.h>

#include <atomic>
#include <cstdint>

#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

namespace {
struct TimestampAccumState {
  std::atomic<uint64_t> count{0}, total_ns{0}, min_ns{UINT64_MAX}, max_ns{0};
  void reset() { count = 0, total_ns = 0, min_ns = UINT64_MAX, max_ns = 0; }
};
std::string accum_seconds(uint64_t ns) { return fmt::format("{}.{:09}", ns / 1000000000, ns % 1000000000); }
}  // namespace

class TimestampAccum : public PacketElement<TimestampAccum> {
 public:
  void initialize() override { acc_ = shared_state<TimestampAccumState>(this); }
  void begin_batch(PacketBatch*) {
    now_ = realtime_ns();
    n_ = total_ = max_ = 0;
    min_ = UINT64_MAX;
  }
  int process(Packet* p) {
    uint64_t t = p->timestamp_ns(), d = now_ > t ? now_ - t : 0;
    ++n_, total_ += d;
    min_ = std::min(min_, d), max_ = std::max(max_, d);
    return 0;
  }
  bool finish_batch(PacketBatch*) {
    if (!n_) return false;
    acc_->count += n_;
    acc_->total_ns += total_;
    for (uint64_t m = acc_->min_ns.load(); min_ < m && !acc_->min_ns.compare_exchange_weak(m, min_);) {}
    for (uint64_t m = acc_->max_ns.load(); max_ > m && !acc_->max_ns.compare_exchange_weak(m, max_);) {}
    return false;  // (no result changed)
  }
  void add_handlers() override {
    add_read_handler(
        "count", [this] { return std::to_string(acc_->count.load()); }, Agg::First, true);
    add_read_handler("time", [this] { return accum_seconds(acc_->total_ns.load()); });
    add_read_handler("min", [this] { return acc_->count ? accum_seconds(acc_->min_ns.load()) : std::string("0"); });
    add_read_handler("max", [this] { return accum_seconds(acc_->max_ns.load()); });
    add_read_handler("average_time", [this] {
      uint64_t n = acc_->count.load();
      return n ? accum_seconds(acc_->total_ns.load() / n) : std::string("0");
    });
    add_write_handler("reset_counts", [this](const std::string&) {
      if (worker().id() == 0) acc_->reset();
    });
  }

 private:
  std::shared_ptr<TimestampAccumState> acc_;
  uint64_t now_ = 0, n_ = 0, total_ = 0, min_ = 0, max_ = 0;
};
SHOAL_ELEMENT(
    TimestampAccum, .name = "TimestampAccum", .ports = "1/1", .processing = "a/a",
    .summary = "sums the time since each packet's timestamp",
    .description =
        "For each packet, measures the time from its timestamp annotation to now (the wall clock, as "
        "timestamps are; a timestamp in the future counts 0), and keeps the count, total, least and "
        "most over every worker's copy.",
    .handlers = {{"count", "r", "packets measured"},
                 {"time", "r", "the total time, in seconds"},
                 {"min", "r", "the least time, in seconds"},
                 {"max", "r", "the most time, in seconds"},
                 {"average_time", "r", "time / count, in seconds"},
                 {"reset_counts", "w", "set everything back to zero"}},
    .example = "FromDevice(eth0) -> Queue -> Unqueue -> ta :: TimestampAccum -> Discard;  // ta.average_time");

}  // namespace shoal
