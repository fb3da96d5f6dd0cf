// HostToDevice (DeviceToHost): starts an aggregate's copy to the device.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/offload/chain.hh"
#include "shoal/offload/services.hh"

namespace shoal {

// ---------------------------------------------------------------- HostToDevice
class HostToDevice : public Element {
 public:
  void configure(Args& a) override {
    a.read("INFLIGHT", inflight_).read("SLICE", slice_).read("SCHEDULE", schedule_).read("ZERO_COPY", zero_copy_);
    a.complete();
    if (inflight_ == 0 || inflight_ > 1024) a.fail("INFLIGHT: 1 to 1024 aggregates");
  }
  // After the device elements it chains: they declare what their kernels
  // read once their own tables are loaded (an IDS's stream and pcre steps).
  int initialize_phase() const override { return 1; }
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
    chain_->set_schedule(schedule_ || offload::services(worker().runtime()).options.schedule);
    chain_->set_zero_copy(zero_copy_);
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
  uint32_t inflight_ = 8, zero_copy_ = 0;
  bool slice_ = true, schedule_ = false;
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
                        "both ways, the baseline slicing saves against"},
                       {"SCHEDULE", "boolean",
                        "sort each aggregate's packets by protocol and length for the kernels' threads, GASPP's "
                        "packet scheduling (default false, or run --offload-schedule); results keep the "
                        "aggregate's order"},
                       {"ZERO_COPY", "bytes",
                        "aggregates that need at most this many bytes per packet both ways are not copied: the "
                        "kernels read and write them in pinned host memory over the bus (default 0: always copy)"}},
              .handlers = {{"aggregates", "r", "aggregates completed"},
                           {"packets", "r", "packets in them"},
                           {"device_aggregates", "r", "aggregates that ran on the device"},
                           {"device_packets", "r", "packets in them"},
                           {"cpu_busy", "r", "aggregates run on the CPU because INFLIGHT were in flight"},
                           {"cpu_fault", "r", "aggregates run on the CPU after a device failure or with no device"},
                           {"fault_packets", "r", "packets in those"},
                           {"h2d_bytes", "r",
                            "bytes copied to the device (zero-copy aggregates: the bytes their kernels can reach)"},
                           {"reordered", "r", "aggregates SCHEDULE put in another order"},
                           {"d2h_bytes", "r", "bytes copied back"},
                           {"roi_bytes", "r", "packet bytes packed (the ROI union)"},
                           {"host_steps", "r",
                            "steps run on the host for packets a step skipped (SKIP) whose bit a later host part "
                            "cleared"},
                           {"inflight_max", "r", "most aggregates in flight at once"},
                           {"pack_ns", "r", "host nanoseconds packing aggregates and queueing their copies"},
                           {"launch_ns", "r", "host nanoseconds queueing the steps (running them, on the CPU)"},
                           {"zero_copy", "r", "device aggregates read and written in host memory (ZERO_COPY)"},
                           {"ring_launches", "r",
                            "launches the device's persistent kernel took from its ring, no driver call (CUDA with "
                            "SHOAL_CUDA_PERSISTENT; all chains on the device)"},
                           {"complete_ns", "r",
                            "host nanoseconds completing aggregates (bytes back into packets, the steps' host parts)"},
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
    offload::Aggregate* a = offload::aggregate_of(b);
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

}  // namespace shoal
