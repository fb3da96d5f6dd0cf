// DelayShaper: a pull element that lets a packet go no earlier than DELAY
// after its timestamp.
#include "shoal/elements/common.hh"

namespace shoal {

class DelayShaper : public Element {
 public:
  void configure(Args& a) override {
    Duration d;
    a.read_mp("DELAY", d);
    a.complete();
    delay_ns_ = d.ns;
  }
  void initialize() override {
    timer_.owner = this;
    // Timestamps are wall-clock time; timers run on the worker's clock.
    clock_offset_ = int64_t(realtime_ns()) - int64_t(worker().now_ns());
  }
  // One packet a pull, as Click's: the held packet once its time has come,
  // else nothing, with a timer to wake the puller then.
  PacketBatch* pull(int, uint32_t) override {
    resolve();
    if (!held_) {
      PacketBatch* b = input_pull(0, 1);
      if (b && b->empty()) recycle(b), b = nullptr;
      if (!b) {
        if (up_ && !up_->active) notifier_.sleep();
        return nullptr;
      }
      held_ = b;
    }
    Packet* p = nullptr;  // the batch's one packet (its time decides for any others)
    held_->for_each([&](uint32_t, Packet* q) {
      if (!p) p = q;
    });
    int64_t due = int64_t(p->timestamp_ns() + delay_ns_) - clock_offset_;  // on the worker's clock
    int64_t now = int64_t(worker().now_ns());
    if (due <= now) {
      p->set_timestamp_ns(uint64_t(now + clock_offset_));
      PacketBatch* out = held_;
      held_ = nullptr;
      return out;
    }
    if (!timer_.scheduled) worker().schedule(timer_, uint64_t(due));
    notifier_.sleep();
    return nullptr;
  }
  Notifier* notifier() override { return &notifier_; }
  void run_timer(Timer&) override { notifier_.wake(); }  // the held packet is due
  void wake_task() override { notifier_.wake(); }        // the input has packets again
  size_t packets_held() const override { return held_ ? held_->live() : 0; }
  void cleanup() override {
    if (held_) {
      held_->for_each([&](uint32_t, Packet* q) { worker().pool().free(q); });
      held_->clear();
      recycle(held_);
      held_ = nullptr;
    }
  }
  void add_handlers() override {
    add_read_handler("delay", [this] { return click_timestamp(delay_ns_); });
  }

 private:
  // Listens to the input's notifier, if it has one, so a puller asleep on
  // ours wakes when packets come.
  void resolve() {
    if (resolved_) return;
    resolved_ = true;
    up_ = upstream_notifier(this, 0);
    if (up_) up_->listeners.push_back(this);
  }
  uint64_t delay_ns_ = 0;
  int64_t clock_offset_ = 0;
  PacketBatch* held_ = nullptr;
  Timer timer_;
  Notifier notifier_;
  Notifier* up_ = nullptr;
  bool resolved_ = false;
};
SHOAL_ELEMENT(DelayShaper, .name = "DelayShaper", .ports = "1/1", .processing = "l/l",
              .summary = "pulls packets and lets each go no earlier than DELAY after its timestamp",
              .description =
                  "Click's DelayShaper: a packet whose timestamp is T leaves no earlier than T + DELAY; "
                  "its timestamp is then set to the time it leaves. It holds one packet while it waits "
                  "(counted as held) and has an empty-notifier, so the element pulling from it sleeps "
                  "until that packet is due or its input has packets again.",
              .args = {{"DELAY", "duration", "the delay, mandatory"}}, .handlers = {{"delay", "r", "the delay"}},
              .example = "src -> SetTimestamp -> q :: Queue -> DelayShaper(50ms) -> Unqueue -> dst;");

}  // namespace shoal
