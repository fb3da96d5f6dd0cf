// RatedUnqueue and BandwidthRatedUnqueue: pull packets at a rate (packets or
// bytes per second) through a token bucket, and push them on.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/standard/tokenbucket.hh"

namespace shoal {

template <bool Bandwidth>
class RatedUnqueueT : public Element {
 public:
  void configure(Args& a) override {
    int64_t burst = Bandwidth ? 1 : 32;
    a.read("BURST", burst).read("ACTIVE", active_);
    tb_.configure(a, Bandwidth);
    a.complete();
    if (burst < 1) a.fail("BURST must be at least 1");
    burst_ = uint32_t(std::min<int64_t>(burst, 1 << 20));
  }
  void initialize() override {
    add_task();
    set_task_active(active_);
    timer_.owner = this;
    up_ = upstream_notifier(this);
    if (up_) up_->listeners.push_back(this);
  }
  bool run_task() override {
    if (!active_) return false;
    uint64_t now = worker().now_ns();
    tb_.refill(now);
    uint64_t need = Bandwidth ? TokenBucket::kBandwidthThreshold : 1;
    if (!tb_.contains(need)) {
      // Asleep until the bucket holds enough.
      uint64_t when = tb_.when_contains(need);
      set_task_active(false);
      if (when != UINT64_MAX) worker().schedule(timer_, std::max(when, now));
      return false;
    }
    uint32_t max = Bandwidth ? burst_ : uint32_t(std::min<uint64_t>(burst_, tb_.size()));
    PacketBatch* b = input_pull(0, max);
    if (!b || b->empty()) {
      if (b) recycle(b);
      if (up_ && !up_->active) set_task_active(false);  // the queue wakes us
      return false;
    }
    uint64_t used = 0;
    b->for_each([&](uint32_t, Packet* p) { used += Bandwidth ? p->length() : 1; });
    tb_.remove(used);
    count_.add(b->live());
    output_push(0, b);
    return true;
  }
  void run_timer(Timer&) override {
    if (active_) set_task_active(true);
  }
  void wake_task() override {
    if (active_ && !timer_.scheduled) set_task_active(true);
  }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_read_handler("rate", [this] { return rate_text(); });
    add_read_handler("config", [this] { return rate_text(); });
    add_read_handler("active", [this] { return std::string(active_ ? "true" : "false"); });
    add_write_handler("active", [this](const std::string& v) {
      if (!parse_bool(trim(v), active_)) throw std::runtime_error("active expects true or false");
      set_task_active(active_);
    });
  }

 private:
  std::string rate_text() const { return Bandwidth ? fmt::format("{}Bps", tb_.rate()) : std::to_string(tb_.rate()); }
  TokenBucket tb_;
  uint32_t burst_ = 32;
  bool active_ = true;
  Notifier* up_ = nullptr;
  Timer timer_;
  Stat count_;
};

using RatedUnqueue = RatedUnqueueT<false>;
using BandwidthRatedUnqueue = RatedUnqueueT<true>;

SHOAL_ELEMENT(RatedUnqueue, .name = "RatedUnqueue", .ports = "1/1", .processing = "l/h",
              .summary = "pulls packets at a given rate and pushes them on",
              .description =
                  "Click's RatedUnqueue: a task that pulls from its input at most RATE packets per second "
                  "through a token bucket that starts full and holds BURST_DURATION of RATE (or BURST_SIZE "
                  "packets), at most BURST per pull. It sleeps while the bucket is empty (until a timer says "
                  "it has a token) and while the upstream queue is empty.",
              .args = {{"RATE", "unsigned", "packets per second"},
                       {"BURST_DURATION", "time", "bucket size as a time at RATE (default 20 ms)"},
                       {"BURST_SIZE", "unsigned", "bucket size in packets"},
                       {"BURST", "unsigned", "packets per pull at most (default 32)"},
                       {"ACTIVE", "boolean", "run when true (default true)"}},
              .handlers = {{"count", "r", "packets moved"},
                           {"rate", "r", "RATE"},
                           {"config", "r", "RATE"},
                           {"active", "rw", "run or pause"}},
              .example = "q :: Queue -> RatedUnqueue(1000) -> ToDump(out.pcap);");

SHOAL_ELEMENT(BandwidthRatedUnqueue, .name = "BandwidthRatedUnqueue", .ports = "1/1", .processing = "l/h",
              .summary = "pulls packets at a given bandwidth and pushes them on",
              .description =
                  "Click's BandwidthRatedUnqueue: RatedUnqueue counting bytes. RATE is a bandwidth (\"200Bps\", "
                  "\"10Mbps\"); the bucket holds BURST_DURATION of RATE (or BURST_BYTES) plus 131072 bytes, and "
                  "a packet goes while at least 131072 are left, so a packet larger than the burst still "
                  "passes and the bucket runs into debt for it. One packet per pull unless BURST says more.",
              .args = {{"RATE", "bandwidth", "bytes per second (Bps, kbps, Mbps, ...)"},
                       {"BURST_DURATION", "time", "bucket size as a time at RATE (default 20 ms)"},
                       {"BURST_BYTES", "unsigned", "bucket size in bytes"},
                       {"BURST", "unsigned", "packets per pull at most (default 1)"},
                       {"ACTIVE", "boolean", "run when true (default true)"}},
              .handlers = {{"count", "r", "packets moved"},
                           {"rate", "r", "RATE"},
                           {"config", "r", "RATE"},
                           {"active", "rw", "run or pause"}},
              .example = "q :: Queue -> BandwidthRatedUnqueue(10Mbps) -> ToDump(out.pcap);");

}  // namespace shoal
