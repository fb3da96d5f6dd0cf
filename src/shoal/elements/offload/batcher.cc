// Batcher: collects packets into offload aggregates.

#include "shoal/elements/common.hh"

namespace shoal {

class Batcher : public Element {
 public:
  void configure(Args& a) override {
    Duration t{100000};
    a.read_p("BATCH", batch_).read_p("TIMEOUT", t);
    a.complete();
    if (batch_ == 0 || batch_ > 1u << 20) a.fail("BATCH: 1 to 1048576 packets");
    timeout_ns_ = t.ns;
  }
  void initialize() override { timer_.owner = this; }
  void push(int, PacketBatch* b) override {
    b->for_each([&](uint32_t, Packet* p) {
      if (!open_) {
        open_ = worker().batches(batch_).get();
        open_->anno = b->anno;
        open_->anno.arrival_ns = worker().now_ns();
        worker().schedule(timer_, worker().now_ns() + timeout_ns_);
      }
      open_->append(p);
      if (open_->full()) flush(false);
    });
    recycle(b);
  }
  void run_timer(Timer&) override { flush(true); }
  bool drain() override {
    if (open_) flush(true);
    return false;
  }
  bool settle() override { return drain(); }
  size_t packets_held() const override { return open_ ? open_->live() : 0; }
  bool holds_batches() const override { return true; }
  uint64_t oldest_flow_epoch() const override { return open_ ? open_->anno.flow_epoch : 0; }  // (its first batch's)
  void cleanup() override {
    if (open_) free_packets(*this, open_), open_ = nullptr;
  }
  void add_handlers() override {
    add_stat_handler("full", full_);
    add_stat_handler("timeouts", timeouts_);
  }

 private:
  void flush(bool timeout) {
    worker().unschedule(timer_);
    if (!open_) return;
    (timeout ? timeouts_ : full_).add();
    PacketBatch* b = open_;
    open_ = nullptr;
    output_push(0, b);
  }
  uint32_t batch_ = 4096;
  uint64_t timeout_ns_ = 0;
  PacketBatch* open_ = nullptr;
  Timer timer_;
  Stat full_, timeouts_;
};
SHOAL_ELEMENT(Batcher, .name = "Batcher", .ports = "1/1", .processing = "h/h",
              .summary = "collects packets into offload aggregates",
              .description =
                  "Gathers the packets of incoming batches into one aggregate of BATCH packets and "
                  "pushes it on when full, or TIMEOUT after its first packet arrived. Aggregates are "
                  "larger than ordinary batches: the output goes to HostToDevice.",
              .args = {{"BATCH", "unsigned", "packets per aggregate (default 4096)"},
                       {"TIMEOUT", "time", "longest wait for a partial aggregate (default 100us)"}},
              .handlers = {{"full", "r", "aggregates sent full"}, {"timeouts", "r", "aggregates sent by TIMEOUT"}},
              .example = "FromDump(in.pcap) -> CheckIPHeader(14) -> Batcher(4096, 100us) -> HostToDevice -> ...;");

}  // namespace shoal
