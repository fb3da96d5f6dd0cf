// TimedUnqueue, Burster and TimedSink: pull at most BURST packets (TimedSink:
// one) every INTERVAL, as Click's.
#include <fmt/format.h>

#include <algorithm>

#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

// The pulling: a task that pulls when INTERVAL has passed since the last
// pull that found packets, sleeps on a timer until then, and sleeps on the
// upstream notifier while the input is empty (a packet that arrives after a
// quiet spell goes at once, as in Click).
template <bool Sink>
class TimedPull : public Element {
 public:
  void configure(Args& a) override {
    interval_ = Duration{Sink ? 500000000ull : 0};
    int64_t burst = default_burst_;
    if (Sink)
      a.read_p("INTERVAL", interval_);
    else
      a.read_mp("INTERVAL", interval_).read_p("BURST", burst);
    a.complete();
    if (interval_.ns == 0) a.fail("INTERVAL must be positive");
    if (burst < 1) a.fail("BURST must be at least 1");
    burst_ = uint32_t(std::min<int64_t>(burst, 1 << 20));
  }
  void initialize() override {
    if (Sink) r_ = add_drop_reason("discard");
    add_task();
    timer_.owner = this;
    up_ = upstream_notifier(this);
    if (up_) up_->listeners.push_back(this);
  }
  bool run_task() override {
    const uint64_t now = worker().now_ns();
    if (pulled_ && now < next_) {
      set_task_active(false);
      worker().schedule(timer_, next_);
      return false;
    }
    // Up to BURST packets (a pull may bring fewer: one at a time under `shoal click`)
    uint32_t got = 0;
    while (got < burst_) {
      PacketBatch* b = input_pull(0, burst_ - got);
      if (!b || b->empty()) {
        if (b) recycle(b);
        break;
      }
      got += b->live();
      count_.add(b->live());
      if (Sink)
        drop_all(b, r_);
      else
        output_push(0, b);
    }
    if (!got) {
      if (up_ && !up_->active) set_task_active(false);  // the queue wakes us
      return false;
    }
    pulled_ = true;
    next_ = now + interval_.ns;
    return true;
  }
  void run_timer(Timer&) override { set_task_active(true); }
  void wake_task() override {
    if (!timer_.scheduled) set_task_active(true);
  }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_read_handler("interval", [this] { return fmt::format("{:.6f}", interval_.seconds()); });
    add_write_handler("interval", [this](const std::string& v) {
      Duration d;
      if (!parse_duration(trim(v), d) || d.ns == 0) throw std::runtime_error("expected a positive interval");
      interval_ = d;
    });
    if (!Sink) add_read_handler("burst", [this] { return std::to_string(burst_); });
  }

 protected:
  int64_t default_burst_ = 1;  // (Burster's is 8)

 private:
  Duration interval_;
  uint32_t burst_ = 1;
  bool pulled_ = false;
  uint64_t next_ = 0;
  uint16_t r_ = 0;
  Notifier* up_ = nullptr;
  Timer timer_;
  Stat count_;
};

using TimedUnqueue = TimedPull<false>;
SHOAL_ELEMENT(TimedUnqueue, .name = "TimedUnqueue", .ports = "1/1", .processing = "l/h",
              .summary = "pulls at most BURST packets every INTERVAL and pushes them",
              .description =
                  "Click's TimedUnqueue: pulls up to BURST packets from its input at most once every INTERVAL, and "
                  "pushes them out. While its input is empty it sleeps; a packet arriving after INTERVAL has "
                  "passed goes at once.",
              .args = {{"INTERVAL", "duration", "the time between pulls, mandatory"},
                       {"BURST", "unsigned", "packets per pull (default 1)"}},
              .handlers = {{"count", "r", "packets pulled"},
                           {"interval", "rw", "INTERVAL in seconds"},
                           {"burst", "r", "BURST"}},
              .example = "src -> Queue -> TimedUnqueue(10ms, 4) -> ...;");

// Click's Burster: TimedUnqueue with a BURST of 8 unless told.
class Burster : public TimedUnqueue {
 public:
  Burster() { default_burst_ = 8; }
};
SHOAL_ELEMENT(Burster, .name = "Burster", .ports = "1/1", .processing = "l/h",
              .summary = "pulls at most BURST (8) packets every INTERVAL and pushes them",
              .description = "Click's Burster: TimedUnqueue with a default BURST of 8 (see TimedUnqueue).",
              .args = {{"INTERVAL", "duration", "the time between pulls, mandatory"},
                       {"BURST", "unsigned", "packets per pull (default 8)"}},
              .handlers = {{"count", "r", "packets pulled"},
                           {"interval", "rw", "INTERVAL in seconds"},
                           {"burst", "r", "BURST"}},
              .example = "src -> Queue -> Burster(10ms) -> ...;");

using TimedSink = TimedPull<true>;
SHOAL_ELEMENT(TimedSink, .name = "TimedSink", .ports = "1/0", .processing = "l/",
              .summary = "pulls and drops one packet every INTERVAL",
              .description =
                  "Click's TimedSink: pulls one packet from its input at most once every INTERVAL and "
                  "discards it (counted, reason 'discard').",
              .args = {{"INTERVAL", "duration", "the time between pulls (default 500 ms)"}},
              .handlers = {{"count", "r", "packets pulled"}, {"interval", "rw", "INTERVAL in seconds"}},
              .example = "src -> Queue -> TimedSink(100ms);");

}  // namespace shoal
