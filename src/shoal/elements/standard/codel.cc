// CoDel: Controlled Delay active queue management (Nichols and Jacobson;
// RFC 8289), FastClick's element, pulled behind the queue it controls.
#include <fmt/format.h>

#include <cmath>

#include "shoal/core/runtime.hh"
#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/standard/queue.hh"

namespace shoal {

class CoDel : public Element {
 public:
  void configure(Args& a) override {
    // FastClick's: TARGET and INTERVAL in milliseconds (a bare number), or
    // durations with units
    std::string target = "5", interval = "100";
    a.read_p("TARGET", target).read_p("INTERVAL", interval).read("QUEUES", queue_name_);
    a.complete();
    target_ = ms_or_duration(a, "TARGET", target);
    interval_ = ms_or_duration(a, "INTERVAL", interval);
    if (interval_ == 0) a.fail("INTERVAL must be positive");
  }
  void initialize() override {
    r_ = add_drop_reason("codel");
    if (!queue_name_.empty()) {
      queue_ = dynamic_cast<Queue*>(router().find(queue_name_));
      if (!queue_) throw std::runtime_error(fmt::format("QUEUES: '{}' is not a queue", queue_name_));
    } else if (ninputs() && input_proc(0) == Proc::Pull) {
      queue_ = dynamic_cast<Queue*>(input(0).e);  // (the queue right before it; else its length is not used)
    }
  }
  PacketBatch* pull(int, uint32_t max) override {
    PacketBatch* out = nullptr;
    while (!out || (out->slots() < max && !out->full())) {
      Packet* p = dequeue();
      if (!p) break;
      if (!out) out = new_batch();
      out->append(p);
    }
    return out;
  }
  void add_handlers() override {
    add_read_handler("dropping", [this] { return std::string(dropping_ ? "true" : "false"); });
    add_read_handler("count", [this] { return std::to_string(count_); });
    add_read_handler("target", [this] { return fmt::format("{:.6f}", double(target_) / 1e9); });
    add_read_handler("interval", [this] { return fmt::format("{:.6f}", double(interval_) / 1e9); });
  }

 private:
  uint64_t ms_or_duration(Args& a, const char* what, const std::string& v) {
    uint64_t ms;
    if (parse_uint(v, ms)) return ms * 1000000;
    Duration d;
    if (!parse_duration(v, d)) a.fail(fmt::format("{} '{}': milliseconds or a duration", what, v));
    return d.ns;
  }
  // One packet from the queue with RFC 8289's verdict: whether the sojourn
  // time (now less the timestamp SetTimestamp gave it at the queue) has
  // stayed above TARGET for an INTERVAL.
  Packet* pull_one(uint64_t now, bool& ok_to_drop) {
    ok_to_drop = false;
    PacketBatch* b = input_pull(0, 1);
    if (!b || b->empty()) {
      if (b) recycle(b);
      first_above_ = 0;
      return nullptr;
    }
    Packet* p = b->at(0);
    b->clear();
    recycle(b);
    const uint64_t ts = p->timestamp_ns(), sojourn = now > ts ? now - ts : 0;
    if (sojourn < target_ || (queue_ && queue_->size() <= 1)) {  // (a packet or less standing: not a queue)
      first_above_ = 0;
    } else if (first_above_ == 0) {
      first_above_ = now + interval_;
    } else if (now >= first_above_) {
      ok_to_drop = true;
    }
    return p;
  }
  uint64_t control_law(uint64_t t) const { return t + uint64_t(double(interval_) / std::sqrt(double(count_))); }
  void drop_one(Packet* p) {
    PacketBatch* b = new_batch();
    b->append(p);
    drop_all(b, r_);
  }
  // RFC 8289's dequeue.
  Packet* dequeue() {
    const uint64_t now = realtime_ns();
    bool ok;
    Packet* p = pull_one(now, ok);
    if (dropping_) {
      if (!ok) dropping_ = false;
      while (p && dropping_ && now >= drop_next_) {
        drop_one(p);
        ++count_;
        p = pull_one(now, ok);
        if (!ok)
          dropping_ = false;
        else
          drop_next_ = control_law(drop_next_);
      }
    } else if (p && ok) {
      drop_one(p);
      p = pull_one(now, ok);
      dropping_ = true;
      // recently dropping: start from the rate it had reached
      const uint32_t delta = count_ - last_count_;
      count_ = delta > 1 && int64_t(now - drop_next_) < int64_t(16 * interval_) ? delta : 1;
      drop_next_ = control_law(now);
      last_count_ = count_;
    }
    return p;
  }

  uint64_t target_ = 5000000, interval_ = 100000000;
  std::string queue_name_;
  Queue* queue_ = nullptr;
  bool dropping_ = false;
  uint64_t first_above_ = 0, drop_next_ = 0;
  uint32_t count_ = 0, last_count_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(CoDel, .name = "CoDel", .ports = "1/1", .processing = "l/l",
              .summary = "drops packets that waited too long in the queue (CoDel, RFC 8289)",
              .description =
                  "FastClick's CoDel: Controlled Delay (Nichols and Jacobson; RFC 8289) behind a queue. Each "
                  "packet's sojourn time is now less its timestamp, which SetTimestamp sets just before the queue. "
                  "Once the sojourn time has stayed above TARGET for INTERVAL, CoDel drops ('codel') at intervals "
                  "of INTERVAL/sqrt(count), more often the longer the delay stays, until a packet comes out below "
                  "TARGET (or the queue holds a packet or less: QUEUES, else the queue right before it).",
              .args = {{"TARGET", "ms|duration", "the sojourn time to keep (default 5 ms)"},
                       {"INTERVAL", "ms|duration", "the window over which it must be exceeded (default 100 ms)"},
                       {"QUEUES", "name", "the queue whose length is checked (default: the one before it)"}},
              .handlers = {{"dropping", "r", "in the dropping state"},
                           {"count", "r", "drops in this dropping state"},
                           {"target", "r", "TARGET in seconds"},
                           {"interval", "r", "INTERVAL in seconds"}},
              .example = "src -> SetTimestamp -> Queue(1000) -> CoDel(5, 100) -> LinkUnqueue(1ms, 10Mbps) -> ...;");

}  // namespace shoal
