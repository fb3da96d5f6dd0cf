// DelayUnqueue: pulls packets and pushes each on no earlier than DELAY after
// its timestamp (Click's).
#include <fmt/format.h>

#include <deque>

#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class DelayUnqueue : public Element {
 public:
  void configure(Args& a) override {
    Duration d;
    a.read_mp("DELAY", d);
    a.complete();
    delay_ns_ = d.ns;
  }
  void initialize() override {
    add_task();
    pt_.init(this, 1);
    timer_.owner = this;
  }
  // A packet without a timestamp (its seconds 0, as Click tests) is stamped
  // now; it leaves when the clock reaches its timestamp plus DELAY, which
  // becomes its timestamp. Packets leave in the order they came.
  bool run_task() override {
    bool worked = false;
    PacketBatch* out = nullptr;
    for (;;) {
      if (held_.empty()) {
        PacketBatch* b = pt_.pull();
        if (!b) break;
        b->for_each([&](uint32_t, Packet* p) {
          uint64_t ts = p->timestamp_ns();
          if (ts < 1000000000ull) ts = realtime_ns();
          p->set_timestamp_ns(ts + delay_ns_);
          held_.push_back(p);
        });
        b->clear();
        recycle(b);
      }
      const uint64_t now = realtime_ns();
      while (!held_.empty() && held_.front()->timestamp_ns() <= now) {
        if (!out) out = new_batch();
        out->append(held_.front());
        held_.pop_front();
        if (out->full()) output_push(0, out), out = nullptr, worked = true;
      }
      if (!held_.empty()) {
        // Sleep until the first one is due (on the worker's clock).
        set_task_active(false);
        worker().schedule(timer_, worker().now_ns() + (held_.front()->timestamp_ns() - now));
        break;
      }
    }
    if (out) output_push(0, out), worked = true;
    return worked;
  }
  void run_timer(Timer&) override { set_task_active(true); }
  void wake_task() override {
    if (!timer_.scheduled) set_task_active(true);
  }
  size_t packets_held() const override { return held_.size(); }
  void cleanup() override {
    for (Packet* p : held_) worker().pool().free(p);
    held_.clear();
  }
  void add_handlers() override {
    add_read_handler("delay", [this] { return fmt::format("{:.6f}s", double(delay_ns_) / 1e9); });
    add_read_handler("size", [this] { return std::to_string(held_.size()); });
  }

 private:
  uint64_t delay_ns_ = 0;
  std::deque<Packet*> held_;
  PullTask pt_;
  Timer timer_;
};
SHOAL_ELEMENT(DelayUnqueue, .name = "DelayUnqueue", .ports = "1/1", .processing = "l/h",
              .summary = "pulls packets and pushes each on DELAY after its timestamp",
              .description =
                  "Click's DelayUnqueue: a packet pulled from the input leaves no earlier than its timestamp "
                  "plus DELAY (a packet without a timestamp is stamped when pulled), with that time as its new "
                  "timestamp. Packets leave in the order they came; while one waits, the next is not pulled.",
              .args = {{"DELAY", "time", "how long after its timestamp a packet may leave"}},
              .handlers = {{"delay", "r", "DELAY"}, {"size", "r", "packets held"}},
              .example = "Queue -> DelayUnqueue(30ms) -> ARPResponder(10.0.0.1 00:11:22:33:44:55) -> ...;");

}  // namespace shoal
