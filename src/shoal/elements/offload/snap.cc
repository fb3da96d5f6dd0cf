// Snap's offload elements (Sun and Ricci, ANCS 2013, sections 3.2-3.8):
//   Batcher -> HostToDevice -> device elements -> DeviceToHost ->
//   CompletionQueue -> Debatcher [-> Dispatcher]
// and NBA's balancer (OffloadBalancer), which marks batches for the device
// so that ordinary offloadable elements run them there.
#include <fmt/format.h>

#include <algorithm>
#include <deque>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"
#include "shoal/offload/chain.hh"
#include "shoal/offload/services.hh"

namespace shoal {

namespace {
offload::Aggregate* agg_of(PacketBatch* b) { return static_cast<offload::Aggregate*>(b->anno.offload); }

void free_packets(Element& e, PacketBatch* b) {
  b->for_each([&](uint32_t, Packet* p) { e.worker().pool().free(p); });
  e.recycle(b);
}
}  // namespace

// ---------------------------------------------------------------- Batcher
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
  size_t packets_held() const override { return open_ ? open_->live() : 0; }
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

// ---------------------------------------------------------------- HostToDevice
class HostToDevice : public Element {
 public:
  void configure(Args& a) override {
    a.read("INFLIGHT", inflight_).read("SLICE", slice_);
    a.complete();
    if (inflight_ == 0 || inflight_ > 1024) a.fail("INFLIGHT: 1 to 1024 aggregates");
  }
  void initialize() override {
    std::vector<offload::Offloadable*> steps;
    Element* e = this;
    for (;;) {
      Element* next = e->output(0).e;
      if (next->class_name() == "DeviceToHost") break;
      auto* o = dynamic_cast<offload::Offloadable*>(next);
      if (!o || o->offload_joins_chains())
        throw std::runtime_error(fmt::format(
            "{} ({}) follows HostToDevice before a DeviceToHost: only device elements (GPUIPLookup, GPUIP6Lookup, "
            "GPUCheckIPHeader, GPUDecIPTTL) belong there",
            next->name(), next->class_name()));
      if (steps.size() >= 32) throw std::runtime_error("more than 32 device elements before DeviceToHost");
      o->offload_set_step(int(steps.size()));
      steps.push_back(o);
      e = next;
    }
    std::string err;
    offload::Services& sv = offload::services(worker().runtime());
    auto d = sv.device(err);
    if (!d && sv.claim_device_report())
      fmt::print(stderr, "shoal: {}: no device ({}); aggregates run on the CPU (counted in 'cpu_fault')\n", name(),
                 err);
    chain_ = std::make_unique<offload::Chain>(*this, std::move(d), std::move(steps), inflight_, stats_, !slice_);
    if (!chain_->error().empty()) throw std::runtime_error(chain_->error());
  }
  void push(int, PacketBatch* b) override {
    offload::Aggregate* a = chain_->begin(b, true);
    b->anno.offload = a;
    output_push(0, b);
  }
  void add_handlers() override {
    offload::add_chain_handlers(*this, stats_, "", [this] { return chain_.get(); });
    add_read_handler("device", [this] { return offload::services(worker().runtime()).device_detail(); });
  }

 private:
  uint32_t inflight_ = 8;
  bool slice_ = true;
  offload::ChainStats stats_;
  std::unique_ptr<offload::Chain> chain_;  // outlives cleanup(): CompletionQueue drains into it
};
SHOAL_ELEMENT(HostToDevice, .name = "HostToDevice", .ports = "1/1", .processing = "h/h",
              .summary = "starts an aggregate's copy to the device",
              .description =
                  "Takes an aggregate from a Batcher, packs the byte ranges (ROIs) and annotations the device "
                  "elements up to the next DeviceToHost declared (their union, computed at set-up; overlapping "
                  "and adjacent ranges of a packet merged) into pinned memory and queues the copy on the "
                  "aggregate's own stream, then passes the aggregate on without waiting. At most INFLIGHT "
                  "aggregates are on the device at once; more, or a device that failed, run the same step "
                  "functions on the CPU (counted). Handlers report bytes moved each way and the ROI union.",
              .args = {{"INFLIGHT", "unsigned", "aggregates on the device at once (default 8)"},
                       {"SLICE", "boolean",
                        "copy only the ROI union (default true); false copies whole packets "
                        "both ways, the baseline slicing saves against"}},
              .handlers = {{"aggregates", "r", "aggregates completed"},
                           {"packets", "r", "packets in them"},
                           {"device_aggregates", "r", "aggregates that ran on the device"},
                           {"cpu_busy", "r", "aggregates run on the CPU because INFLIGHT were in flight"},
                           {"cpu_fault", "r", "aggregates run on the CPU after a device failure or with no device"},
                           {"fault_packets", "r", "packets in those"},
                           {"h2d_bytes", "r", "bytes copied to the device"},
                           {"d2h_bytes", "r", "bytes copied back"},
                           {"roi_bytes", "r", "packet bytes packed (the ROI union)"},
                           {"host_steps", "r",
                            "steps run on the host for packets a step skipped (SKIP) whose bit a later host part "
                            "cleared"},
                           {"inflight_max", "r", "most aggregates in flight at once"},
                           {"chain", "r", "the device elements and the ROI union"},
                           {"last_error", "r", "the last device error"},
                           {"device", "r", "the device backend in use"}},
              .example =
                  "Batcher(4096) -> HostToDevice -> GPUIPLookup(...) -> DeviceToHost -> CompletionQueue -> "
                  "Debatcher -> Dispatcher(0, 1);");

// ---------------------------------------------------------------- DeviceToHost
class DeviceToHost : public Element {
 public:
  void initialize() override { r_ = add_drop_reason("not-on-device"); }
  void push(int, PacketBatch* b) override {
    offload::Aggregate* a = agg_of(b);
    if (!a) return drop_all(b, r_);
    a->chain->end(*a);
    output_push(0, b);
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(DeviceToHost, .name = "DeviceToHost", .ports = "1/1", .processing = "h/h",
              .summary = "queues an aggregate's copy back to the host",
              .description =
                  "Queues, on the aggregate's stream, the copy back of what the device elements wrote "
                  "(verdicts, predicate bits, written annotations and written ranges only) and a "
                  "completion mark, then passes the aggregate on to a CompletionQueue without waiting.",
              .example = "... -> GPUIPLookup(...) -> DeviceToHost -> CompletionQueue -> Debatcher -> ...;");

// ---------------------------------------------------------------- CompletionQueue
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
    if (!agg_of(b)) return drop_all(b, r_);
    held_ += b->live();
    q_.push_back(b);
    high_.set(std::max<uint64_t>(high_.get(), q_.size()));
    set_task_active(true);
  }
  bool run_task() override {
    bool did = false;
    if (ordered_) {
      while (!q_.empty() && agg_of(q_.front())->chain->ready(*agg_of(q_.front()))) {
        PacketBatch* b = q_.front();
        q_.pop_front();
        release(b);
        did = true;
      }
    } else {
      for (size_t i = 0; i < q_.size();) {
        PacketBatch* b = q_[i];
        if (!agg_of(b)->chain->ready(*agg_of(b))) {
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
  bool drain() override {
    run_task();
    return !q_.empty();
  }
  void cleanup() override {
    for (PacketBatch* b : q_) {
      offload::Aggregate* a = agg_of(b);
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
    offload::Aggregate* a = agg_of(b);
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

// ---------------------------------------------------------------- Debatcher
class Debatcher : public Element {
 public:
  void configure(Args& a) override {
    a.read_p("BATCH", batch_);
    a.complete();
  }
  void initialize() override {
    uint32_t cap = worker().batches().batch_capacity();
    if (batch_ == 0 || batch_ > cap) batch_ = cap;
  }
  void push(int, PacketBatch* b) override {
    PacketBatch* out = nullptr;
    b->for_each([&](uint32_t, Packet* p) {
      if (!out) {
        out = new_batch();
        out->anno = b->anno;
        out->anno.offload = nullptr;
      }
      out->append(p);
      if (out->slots() == batch_) {
        output_push(0, out);
        out = nullptr;
      }
    });
    recycle(b);
    if (out) output_push(0, out);
  }

 private:
  uint32_t batch_ = 0;
};
SHOAL_ELEMENT(Debatcher, .name = "Debatcher", .ports = "1/1", .processing = "h/h",
              .summary = "splits aggregates back into batches",
              .description =
                  "Splits each aggregate into batches of at most BATCH packets (default and most: the "
                  "runtime's batch size), in order.",
              .args = {{"BATCH", "unsigned", "packets per batch"}},
              .example = "... -> CompletionQueue -> Debatcher -> Dispatcher(0, 1);");

// ---------------------------------------------------------------- Dispatcher
class Dispatcher : public PacketElement<Dispatcher> {
 public:
  void configure(Args& a) override {
    for (ArgItem* it : a.rest_positional()) {
      std::string v(trim(it->text));
      uint64_t bit;
      if (v == "-") {
        masks_.push_back(~0u);
      } else if (parse_uint(v, bit) && bit < 32) {
        masks_.push_back(1u << bit);
      } else {
        a.fail(*it, "a predicate bit 0-31, or '-' for any packet");
      }
    }
    a.complete();
  }
  void initialize() override {
    if (masks_.empty())
      for (int i = 0; i < noutputs() && i < 32; ++i) masks_.push_back(1u << i);
    if (int(masks_.size()) != noutputs())
      throw std::runtime_error(fmt::format("{} arguments but {} outputs", masks_.size(), noutputs()));
    r_ = add_drop_reason("no-predicate");
  }
  int process(Packet* p) {
    uint32_t pr = p->anno().predicates;
    for (size_t i = 0; i < masks_.size(); ++i)
      if (pr & masks_[i]) {
        p->anno().predicates = 0;
        return int(i);
      }
    return drop_code(r_);
  }

 private:
  std::vector<uint32_t> masks_;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Dispatcher, .name = "Dispatcher", .ports = "1/-", .processing = "a/a",
              .summary = "sends packets to outputs by predicate bits",
              .description =
                  "Snap's Dispatcher: output i takes the packets whose predicate bit BIT_i is set (the "
                  "first matching argument wins; '-' matches every packet). Without arguments, output i "
                  "takes predicate bit i. The predicate bits are cleared on the way out. Packets with "
                  "no matching bit are dropped ('no-predicate').",
              .args = {{"BIT...", "0-31 or -", "the predicate bit of each output"}},
              .example = "... -> Debatcher -> d :: Dispatcher(0, 1); d[0] -> q0; d[1] -> q1;");

// ---------------------------------------------------------------- OffloadBalancer
class OffloadBalancer : public Element {
 public:
  void configure(Args& a) override {
    a.read_p("FRACTION", fraction_);
    a.complete();
    if (!(fraction_ >= 0 && fraction_ <= 1)) a.fail("FRACTION: 0 to 1");
  }
  void push(int, PacketBatch* b) override {
    // Error diffusion: exactly FRACTION of the batches, evenly spread.
    acc_ += fraction_;
    if (acc_ >= 1 - 1e-9) {
      acc_ -= 1;
      b->anno.device = 0;
      to_device_.add();
    } else {
      b->anno.device = -1;
      to_cpu_.add();
    }
    output_push(0, b);
  }
  void add_handlers() override {
    add_read_handler("fraction", [this] { return fmt::format("{}", fraction_); });
    add_write_handler("fraction", [this](const std::string& v) {
      double f;
      if (!parse_double(trim(v), f) || !(f >= 0 && f <= 1)) throw std::runtime_error("FRACTION: 0 to 1");
      fraction_ = f;
    });
    add_stat_handler("to_device", to_device_);
    add_stat_handler("to_cpu", to_cpu_);
  }

 private:
  double fraction_ = 1, acc_ = 0;
  Stat to_device_, to_cpu_;
};
SHOAL_ELEMENT(OffloadBalancer, .name = "OffloadBalancer", .ports = "1/1", .processing = "a/a",
              .summary = "picks the device for each batch (fixed fraction)",
              .description =
                  "NBA's load balancer with a fixed split: FRACTION of the batches (spread evenly) are marked for "
                  "the device, the rest for the CPU. Offloadable elements downstream (DirectIPLookup, "
                  "LookupIP6Route, CheckIPHeader, DecIPTTL) run marked batches on the device: they aggregate "
                  "them, copy only what they declared, run the chain of consecutive offloadable elements there and "
                  "release the results in order. The mark stays on the batch.",
              .args = {{"FRACTION", "0-1", "share of batches for the device (default 1)"}},
              .handlers = {{"fraction", "rw", "the share"},
                           {"to_device", "r", "batches marked for the device"},
                           {"to_cpu", "r", "batches left on the CPU"}},
              .example = "FromDump(in.pcap) -> CheckIPHeader(14) -> OffloadBalancer(1) -> rt :: DirectIPLookup(...);");

}  // namespace shoal
