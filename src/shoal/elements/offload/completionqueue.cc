// CompletionQueue: releases completed aggregates in arrival order.
#include <fmt/format.h>
#include <algorithm>
#include <deque>

#include "shoal/elements/common.hh"
#include "shoal/offload/chain.hh"

namespace shoal {

class CompletionQueue : public Element {
 public:
  void configure(Args& a) override {
    a.read_p("ORDERED", ordered_);
    a.complete();
  }
  void initialize() override {
    if (output(0).e->class_name() != "Debatcher")
      throw std::runtime_error(
          fmt::format("{}'s output goes to {}: it must go to a Debatcher (aggregates are larger "
                      "than batches)",
                      name(), output(0).e->name()));
    r_ = add_drop_reason("not-on-device");
    add_task();
    set_task_active(false);
  }
  void push(int, PacketBatch* b) override {
    if (!offload::aggregate_of(b)) return drop_all(b, r_);
    held_ += b->live();
    q_.push_back(b);
    high_.set(std::max<uint64_t>(high_.get(), q_.size()));
    set_task_active(true);
  }
  bool run_task() override {
    bool did = false;
    if (ordered_) {
      while (!q_.empty() && offload::aggregate_of(q_.front())->chain->ready(*offload::aggregate_of(q_.front()))) {
        PacketBatch* b = q_.front();
        q_.pop_front();
        release(b);
        did = true;
      }
    } else {
      for (size_t i = 0; i < q_.size();) {
        PacketBatch* b = q_[i];
        if (!offload::aggregate_of(b)->chain->ready(*offload::aggregate_of(b))) {
          ++i;
          continue;
        }
        q_.erase(q_.begin() + long(i));
        release(b);
        did = true;
      }
    }
    set_task_active(!q_.empty());
    return did;
  }
  size_t packets_held() const override { return held_; }
  // (the aggregates' host work, flow state included, is done as they leave)
  bool holds_batches() const override { return true; }
  uint64_t oldest_flow_epoch() const override {
    uint64_t o = 0;
    for (const PacketBatch* b : q_)
      if (b->anno.flow_epoch && (!o || b->anno.flow_epoch < o)) o = b->anno.flow_epoch;
    return o;
  }
  bool drain() override {
    run_task();
    return !q_.empty();
  }
  bool settle() override { return drain(); }
  void cleanup() override {
    for (PacketBatch* b : q_) {
      offload::Aggregate* a = offload::aggregate_of(b);
      a->chain->wait(*a);
      a->chain->release(*a);
      b->anno.offload = nullptr;
      free_packets(*this, b);
    }
    q_.clear();
    held_ = 0;
  }
  void add_handlers() override {
    add_read_handler(
        "length", [this] { return std::to_string(q_.size()); }, Agg::Sum, true);
    add_read_handler(
        "highwater_length", [this] { return std::to_string(high_.get()); }, Agg::Max, true);
    add_read_handler("latency", [this] { return latency(); });
  }

 private:
  // The aggregate's results go into its packets; packets a device element
  // dropped are counted by that element; the rest go on.
  void release(PacketBatch* b) {
    offload::Aggregate* a = offload::aggregate_of(b);
    offload::Chain& c = *a->chain;
    held_ -= b->live();
    c.complete(*a);
    for (uint32_t i = 0; i < a->n; ++i) {
      uint32_t v = a->verdict(i);
      if (v && k::verdict_dropped(v)) {
        c.steps()[k::verdict_step(v)]->offload_element().drop(b->at(i), uint16_t(k::verdict_reason(v)));
        b->kill(i);
      }
    }
    c.release(*a);
    b->anno.offload = nullptr;
    // Latency of the aggregate's oldest packet: Batcher opened it then.
    if (b->anno.arrival_ns && lat_.size() < (1u << 20)) lat_.push_back(worker().now_ns() - b->anno.arrival_ns);
    output_push(0, b);
  }
  std::string latency() const {
    if (lat_.empty()) return "-";
    std::vector<uint64_t> v = lat_;
    std::sort(v.begin(), v.end());
    auto q = [&](double f) { return double(v[std::min(v.size() - 1, size_t(f * double(v.size())))]) / 1e3; };
    return fmt::format("{:.1f} {:.1f} {:.1f}", q(0.5), q(0.99), q(0.999));
  }
  std::vector<uint64_t> lat_;
  bool ordered_ = true;
  std::deque<PacketBatch*> q_;
  size_t held_ = 0;
  Stat high_;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(CompletionQueue, .name = "CompletionQueue", .ports = "1/1", .processing = "h/h",
              .summary = "releases completed aggregates in arrival order",
              .description =
                  "Holds aggregates until their device work completed (polled, never waited for) and releases "
                  "them in the order they arrived, so packets leave in order whatever order the device finishes "
                  "in (Snap's GPUCompletionQueue). With ORDERED false, each aggregate leaves as soon as it is "
                  "done. On release the written bytes and annotations go back into the packets and packets that "
                  "a device element dropped are counted by that element. The output goes to a Debatcher.",
              .args = {{"ORDERED", "boolean", "keep arrival order (default true)"}},
              .handlers = {{"length", "r", "aggregates waiting"},
                           {"highwater_length", "r", "most waiting at once"},
                           {"latency", "r",
                            "p50 p99 p99.9 in microseconds from an aggregate's first packet "
                            "reaching the Batcher to its release"}},
              .example = "... -> DeviceToHost -> CompletionQueue -> Debatcher -> ...;");

}  // namespace shoal
