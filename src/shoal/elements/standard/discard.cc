// Discard: drops every packet, counting them.

#include "shoal/elements/common.hh"

namespace shoal {

class Discard : public Element {
 public:
  void configure(Args& a) override {
    a.read("BURST", burst_).read("ACTIVE", active_);
    a.complete();
  }
  void initialize() override {
    r_ = add_drop_reason("discard");
    if (input_proc(0) == Proc::Pull) {
      add_task();
      set_task_active(active_);
      pt_.init(this, burst_);
    }
  }
  void push(int, PacketBatch* b) override {
    count_.add(b->live());
    drop_all(b, r_);
  }
  bool run_task() override {
    PacketBatch* b = pt_.pull();
    if (!b) return false;
    push(0, b);
    return true;
  }
  void wake_task() override {
    if (active_) set_task_active(true);
  }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_write_handler("reset_counts", [this](const std::string&) { count_.set(0); });
    add_read_handler("active", [this] { return active_ ? "true" : "false"; });
    add_write_handler("active", [this](const std::string& v) {
      bool on;
      if (!parse_bool(trim(v), on)) throw std::runtime_error("expected true or false");
      active_ = on;
      if (input_proc(0) == Proc::Pull) set_task_active(on);
    });
  }

 private:
  Stat count_;
  uint16_t r_ = 0;
  uint32_t burst_ = 32;
  bool active_ = true;
  PullTask pt_;
};
SHOAL_ELEMENT(Discard, .name = "Discard", .ports = "1/0", .processing = "a/",
              .summary = "drops every packet, counting them",
              .description =
                  "Frees every packet it receives; each is counted as a drop with reason 'discard'. "
                  "On a pull input it runs a task that pulls continuously.",
              .args = {{"BURST", "unsigned", "packets per pull in pull mode (default 32)"},
                       {"ACTIVE", "boolean", "pull when true (default true)"}},
              .handlers = {{"count", "r", "packets discarded"},
                           {"reset_counts", "w", "zero the count"},
                           {"active", "rw", "pull when true (pull input only)"}},
              .example = "FastUDPFlows(LIMIT 1000) -> Discard;");

}  // namespace shoal
