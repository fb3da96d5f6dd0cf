// Unqueue: pulls packets and pushes them on.

#include "shoal/elements/common.hh"

namespace shoal {

class Unqueue : public Element {
 public:
  void configure(Args& a) override {
    a.read_p("BURST", burst_).read("LIMIT", limit_).read("ACTIVE", active_);
    a.complete();
    if (burst_ == 0) a.fail("BURST must be at least 1");
  }
  void initialize() override {
    add_task();
    set_task_active(active_);
    pt_.init(this, burst_);
  }
  bool run_task() override {
    if (limit_ >= 0 && count_.get() >= uint64_t(limit_)) {
      set_task_active(false);
      return false;
    }
    PacketBatch* b = pt_.pull();
    if (!b) return false;
    count_.add(b->live());
    output_push(0, b);
    return true;
  }
  void wake_task() override {
    if (active_) set_task_active(true);
  }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_write_handler("active", [this](const std::string& v) {
      bool on;
      if (!parse_bool(trim(v), on)) throw std::runtime_error("expected true or false");
      active_ = on;
      set_task_active(on);
    });
    add_read_handler("active", [this] { return active_ ? "true" : "false"; });
    // Click's reset: the count starts again from 0 (and with it LIMIT).
    add_write_handler("reset", [this](const std::string&) {
      count_.set(0);
      if (active_) set_task_active(true);
    });
    add_read_handler("limit", [this] { return std::to_string(limit_); });
    add_write_handler("limit", [this](const std::string& v) {
      int64_t l;
      if (!parse_int(trim(v), l)) throw std::runtime_error("expected an integer");
      limit_ = l;
      if (active_) set_task_active(true);
    });
  }

 private:
  uint32_t burst_ = 32;
  int64_t limit_ = -1;
  bool active_ = true;
  Stat count_;
  PullTask pt_;
};
SHOAL_ELEMENT(Unqueue, .name = "Unqueue", .ports = "1/1", .processing = "l/h",
              .summary = "pulls packets and pushes them on",
              .description =
                  "A task that pulls up to BURST packets at a time from its input and pushes them to its "
                  "output. It sleeps while the upstream queue is empty. Click's default BURST is 1; "
                  "Shoal's is 32, a batch.",
              .args = {{"BURST", "unsigned", "packets per pull (default 32)"},
                       {"LIMIT", "integer", "stop after this many packets (default unlimited)"},
                       {"ACTIVE", "boolean", "run when true (default true)"}},
              .handlers = {{"count", "r", "packets moved"},
                           {"active", "rw", "run or pause"},
                           {"reset", "w", "count from 0 again (and so LIMIT)"},
                           {"limit", "rw", "LIMIT"}},
              .example = "q :: Queue -> Unqueue(BURST 64) -> ToDump(out.pcap);");

}  // namespace shoal
