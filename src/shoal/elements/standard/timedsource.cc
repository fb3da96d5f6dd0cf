// TimedSource: one packet every INTERVAL, on a timer.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class TimedSource : public Element {
 public:
  void configure(Args& a) override {
    DataString d;
    d.bytes = "Random bullshit in a packet, at least 64 bytes long. Well, now it is.";  // Click's default
    a.read_p("INTERVAL", interval_)
        .read_p("DATA", d)
        .read("LIMIT", limit_)
        .read("ACTIVE", active_)
        .read("STOP", stop_)
        .read("HEADROOM", headroom_);
    a.complete();
    if (interval_.ns == 0) a.fail("INTERVAL must be positive");
    data_ = d.bytes;
  }
  void initialize() override {
    timer_.owner = this;
    // Copies of the graph on other workers stay idle (one source, one
    // stream) and agree to the stop at once.
    if (!on_home_thread()) {
      if (stop_ && limit_ >= 0) request_stop();
      return;
    }
    if (active_) worker().schedule(timer_, worker().now_ns() + interval_.ns);
  }
  // Each expiry emits one packet and sets the next one INTERVAL after this
  // one (no drift); after LIMIT, the next expiry stops the run if STOP.
  void run_timer(Timer&) override {
    if (!active_) return;
    if (limit_ >= 0 && count_.get() >= uint64_t(limit_)) {
      if (stop_) request_stop();
      return;
    }
    Packet* p = worker().pool().make(reinterpret_cast<const uint8_t*>(data_.data()), uint32_t(data_.size()));
    uint64_t next = timer_.expiry_ns + interval_.ns;
    if (p) {
      p->set_timestamp_ns(realtime_ns());
      received(1);
      count_.add();
      PacketBatch* b = new_batch();
      b->append(p);
      output_push(0, b);
    }
    worker().schedule(timer_, next);
  }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_read_handler("interval", [this] { return fmt::format("{:.6f}s", interval_.seconds()); });
    add_write_handler("interval", [this](const std::string& v) {
      Duration d;
      if (!parse_duration(trim(v), d) || d.ns == 0) throw std::runtime_error("expected a positive interval");
      interval_ = d;
    });
    add_write_handler("data", [this](const std::string& v) {
      DataString d;
      if (!parse_data(trim(v), d)) throw std::runtime_error("expected a data string");
      data_ = d.bytes;
    });
    add_read_handler("active", [this] { return std::string(active_ ? "true" : "false"); });
    add_write_handler("active", [this](const std::string& v) {
      bool on;
      if (!parse_bool(trim(v), on)) throw std::runtime_error("expected true or false");
      if (on && !active_ && on_home_thread() && !timer_.scheduled)
        worker().schedule(timer_, worker().now_ns() + interval_.ns);
      active_ = on;
    });
    add_write_handler("reset", [this](const std::string&) { count_.set(0); });
  }

 private:
  Duration interval_{500'000'000};
  std::string data_;
  int64_t limit_ = -1, headroom_ = 0;
  bool active_ = true, stop_ = false;
  Timer timer_;
  Stat count_;
};
SHOAL_ELEMENT(TimedSource, .name = "TimedSource", .ports = "0/1", .processing = "h/h",
              .summary = "emits a packet every INTERVAL",
              .description =
                  "Click's TimedSource: a copy of DATA every INTERVAL (the first one INTERVAL after start), "
                  "stamped with the current time, LIMIT in all (-1: no limit); with STOP the run stops one "
                  "INTERVAL after the last. One stream whatever the number of workers.",
              .args = {{"INTERVAL", "time", "time between packets (default 0.5 s)"},
                       {"DATA", "data string", "packet contents"},
                       {"LIMIT", "integer", "packets to emit (default -1: no limit)"},
                       {"ACTIVE", "boolean", "emit when true (default true)"},
                       {"STOP", "boolean", "stop the run after LIMIT (default false)"},
                       {"HEADROOM", "unsigned", "accepted (packets always have headroom)"}},
              .handlers = {{"count", "r", "packets emitted"},
                           {"interval", "rw", "INTERVAL"},
                           {"data", "w", "new packet contents"},
                           {"active", "rw", "emitting or paused"},
                           {"reset", "w", "count from 0 again (and so LIMIT)"}},
              .example = "TimedSource(0.1, \"hello\", LIMIT 10, STOP true) -> Print -> Discard;");

}  // namespace shoal
