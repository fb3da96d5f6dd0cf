// TimeSortedSched: merges its inputs in timestamp order.
#include <utility>

#include "shoal/core/runtime.hh"
#include "shoal/elements/standard/pullscheduler.hh"

namespace shoal {

class TimeSortedSched : public PullScheduler<TimeSortedSched> {
 public:
  void configure(Args& a) override {
    a.read("STOP", stop_);
    a.complete();
  }
  void initialize() override { heads_.assign(size_t(ninputs()), nullptr); }
  // The packet with the earliest timestamp among each input's next one
  // (inputs that have none now are passed over, as in Click).
  PacketBatch* next() {
    int best = -1;
    for (int i = 0; i < ninputs(); ++i) {
      if (!heads_[size_t(i)]) heads_[size_t(i)] = pull_one(i);
      PacketBatch* h = heads_[size_t(i)];
      if (h && (best < 0 || first(h)->timestamp_ns() < first(heads_[size_t(best)])->timestamp_ns())) best = i;
    }
    if (best < 0) {
      // Nothing anywhere, and nothing coming (every input's notifier
      // asleep): with STOP, one stop event until packets flow again.
      if (stop_ && !stop_sent_ && all_asleep()) {
        stop_sent_ = true;
        worker().runtime().stop_event();
      }
      return nullptr;
    }
    stop_sent_ = false;
    return std::exchange(heads_[size_t(best)], nullptr);
  }
  size_t packets_held() const override {
    size_t n = 0;
    for (PacketBatch* h : heads_) n += h ? h->live() : 0;
    return n;
  }
  void cleanup() override {
    for (PacketBatch*& h : heads_)
      if (h) {
        h->for_each([&](uint32_t, Packet* p) { worker().pool().free(p); });
        h->clear();
        recycle(h);
        h = nullptr;
      }
  }

 private:
  static Packet* first(PacketBatch* b) {
    Packet* f = nullptr;
    b->for_each([&](uint32_t, Packet* p) {
      if (!f) f = p;
    });
    return f;
  }
  bool all_asleep() {
    for (int i = 0; i < ninputs(); ++i) {
      Notifier* n = upstream_notifier(this, i);
      if (!n || n->active) return false;
    }
    return true;
  }
  bool stop_ = false, stop_sent_ = false;
  std::vector<PacketBatch*> heads_;
};
SHOAL_ELEMENT(TimeSortedSched, .name = "TimeSortedSched", .ports = "1-/1", .processing = "l/l",
              .summary = "merges its inputs in timestamp order",
              .description =
                  "Click's TimeSortedSched: each packet pulled is the earliest (by timestamp annotation) of the "
                  "next packets of the inputs that have one now; the others wait in the element, one per input. "
                  "When the inputs are sorted and all have packets, the output is sorted. With STOP true, a stop "
                  "event goes out (to a DriverManager, else the run stops) when no input has a packet and every "
                  "input's notifier says none will come, once until packets flow again.",
              .args = {{"STOP", "boolean", "send a stop event when the inputs run dry (default false)"}},
              .handlers = {},
              .example =
                  "FromDump(a.pcap) -> [0]tss :: TimeSortedSched(STOP true);\n"
                  "FromDump(b.pcap) -> [1]tss; tss -> ToDump(merged.pcap);");

}  // namespace shoal
