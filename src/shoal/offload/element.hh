// Offloadable elements in both forms.
//
// NBA's declarative form: an ordinary element (DirectIPLookup, DecIPTTL...)
// that receives a batch a balancer marked for the device (anno.device >= 0)
// does not process it itself. It aggregates such batches (up to
// offload_batches, or until offload_timeout_us), runs itself and the
// offloadable elements that follow it on output 0 as one device chain (so
// their data stays on the device between them), and when the aggregate
// completes sends every packet out of the element and port where it left
// the chain. Batches for the CPU that arrive while aggregates are in flight
// run through the chain at once, on the host, and wait behind them, so
// nothing is reordered and host state advances in arrival order.
//
// Snap's form: the same class registered under a GPU name (GPUIPLookup...)
// sits between HostToDevice and DeviceToHost; its push() queues its step on
// the batch's aggregate. Output ports become predicate bits.
#pragma once
#include <deque>
#include <functional>
#include <memory>

#include "shoal/core/element.hh"
#include "shoal/core/worker.hh"
#include "shoal/offload/chain.hh"
#include "shoal/offload/sizer.hh"

namespace shoal::offload {

class NbaOffload {
 public:
  // At initialize(): the element, and itself as a step.
  void init(Element& self, Offloadable& me);
  // True when the batch was taken (for the device, or to wait its turn).
  bool take(int port, PacketBatch* b);
  bool run_task();
  void run_timer();
  size_t held() const;
  // The flow layer's epoch of the oldest batch held (Element::oldest_flow_epoch).
  uint64_t oldest_flow_epoch() const;
  void cleanup();
  Chain* chain() const { return chain_.get(); }
  void add_handlers(Element& self);
  // At a stop: sends the open aggregate, releases what completed; true
  // while aggregates are still in flight.
  bool drain();

 private:
  bool build_chain();
  void launch_open(bool timed_out = false);
  void deliver(Aggregate& a);
  // A chain with per-flow state (Plan::add_flow_state) packs an aggregate
  // (device or CPU) with the state its flows have then: only when the one
  // before has completed and written its state back, unless both are on the
  // device with the state resident there (Chain::can_overlap: the device
  // passes it from one to the next). Aggregates wait here meanwhile; with
  // more than kMaxWaiting waiting, the worker waits for the device
  // (back-pressure).
  bool serial() const { return chain_ && chain_->plan().flow_store() != nullptr; }
  void start(PacketBatch* b, bool device, std::vector<uint32_t>&& gens, uint64_t formed_ns, bool its_turn = false);
  // The generation of each of b's packets' flows, now (FlowStateStore).
  void add_generations(PacketBatch* b, std::vector<uint32_t>& to) const;
  struct Waiting {
    PacketBatch* batch;
    bool device;
    std::vector<uint32_t> gens;
    uint64_t formed_ns;
  };
  std::unique_ptr<BatchSizer> sizer_;  // with Options::adaptive
  // The sizer over time (GPUNFV's Figures 5 and 6): at completions, at
  // most one a millisecond and whenever the target changed.
  struct SizerPoint {
    uint64_t ns;       // since the first aggregate
    uint32_t target;   // batches
    uint64_t packets;  // completed so far
  };
  static constexpr size_t kSizerHistory = 20000;
  std::vector<SizerPoint> sizer_history_;
  uint64_t sizer_t0_ = 0, sizer_packets_ = 0;
  void note_sizer(uint64_t now, uint32_t packets);
  uint64_t open_formed_ns_ = 0;      // when the open aggregate's first batch came
  Stat low_rate_cpu_;                // timed-out aggregates the sizer sent to the CPU
  std::vector<uint32_t> open_gens_;  // the open aggregate's packets' flow generations
  static constexpr size_t kMaxWaiting = 4;
  std::deque<Waiting> waiting_;
  size_t waiting_packets_ = 0;

  Element* self_ = nullptr;
  Offloadable* me_ = nullptr;
  std::unique_ptr<Chain> chain_;
  ChainStats stats_;
  bool chain_tried_ = false;
  PacketBatch* open_ = nullptr;  // the aggregate being filled
  uint32_t open_batches_ = 0;
  std::deque<Aggregate*> fifo_;  // in arrival order: device aggregates, and CPU ones behind them
  size_t fifo_packets_ = 0;
  Timer timer_;
  std::vector<PacketBatch*> out_;  // deliver() scratch: (step, port) -> batch
  std::vector<uint64_t> left_at_;  // deliver() scratch: packets that left the chain at each step
};

// Mixes the offload machinery into a per-packet element class. Base is the
// element's CPU implementation (a PacketElement<D> or a class derived from
// one); `snap` is set by the GPU-named registrations.
template <class Base>
class OffloadableElement : public Base, public Offloadable {
 public:
  Element& offload_element() override { return *this; }
  bool offload_joins_chains() const override { return !gpu_form_; }
  void offload_set_step(int i) override { snap_step = i; }
  void push(int port, PacketBatch* b) override {
    if (gpu_form_) return gpu_form_push(b);
    if (nba_.take(port, b)) return;
    cpu_push(port, b);
  }
  // The CPU path for a batch (the element's own batch processing).
  virtual void cpu_push(int port, PacketBatch* b) { Base::push(port, b); }
  bool run_task() override { return nba_.run_task(); }
  void run_timer(Timer&) override { nba_.run_timer(); }
  size_t packets_held() const override { return nba_.held(); }
  bool holds_batches() const override { return !gpu_form_; }
  uint64_t oldest_flow_epoch() const override { return nba_.oldest_flow_epoch(); }
  bool drain() override { return nba_.drain(); }
  bool settle() override { return nba_.drain(); }
  void cleanup() override {
    nba_.cleanup();
    Base::cleanup();
  }
  // Set by HostToDevice: this element's place in its chain (Snap form).
  int snap_step = -1;
  bool snap() const { return gpu_form_; }

  // Set by the GPU-form registration (SHOAL_OFFLOADABLE_ELEMENT) on the
  // objects it makes.
  void set_gpu_form() { gpu_form_ = true; }

  // The framework hooks: the router calls them around the element's own
  // configure(), initialize() and add_handlers().
  // Before configure(): the GPU forms read PRED (Snap's CHK_ANNO, the
  // predicate bit a packet needs to be processed) and SKIP (a bit that
  // makes the step pass a packet by; a later step's host part may clear it,
  // and then the chain runs this step for that packet on the host).
  void framework_configure(Args& a) override {
    if (!gpu_form_) return;
    int64_t bit = -1, skip = -1;
    a.read("PRED", bit);
    if (offload_has_host_packet())
      a.read("SKIP", skip);
    else
      for (const ArgItem& it : a.items())
        if (it.keyword == "SKIP") a.fail(it, "SKIP: this element cannot run a skipped packet on the host");
    if (bit > 31) a.fail("PRED: a predicate bit is 0-31");
    if (skip > 31) a.fail("SKIP: a predicate bit is 0-31");
    if (bit >= 0) pred_check_ = 1u << bit;
    if (skip >= 0) pred_skip_ = 1u << skip;
  }
  void framework_initialize() override {
    r_not_on_device_ = this->add_drop_reason("not-on-device");
    if (!gpu_form_) nba_.init(*this, *this);
  }
  void framework_handlers() override {
    if (!gpu_form_) nba_.add_handlers(*this);
  }

 protected:
  // The step's control word: predicate check, and, for elements whose
  // outputs are routes (lookups) in Snap's form, output p as predicate bit p.
  void offload_ctl(Launch& L, bool ports_as_predicates = false) {
    L.ctl.pred_check = pred_check_;
    L.ctl.pred_skip = pred_skip_;
    L.ctl.set_pred = gpu_form_ && ports_as_predicates ? 1 : 0;
    sets_pred_ = L.ctl.set_pred != 0;
  }
  // Whether the step uses predicate bits (for offload_declare).
  bool offload_uses_pred(bool ports_as_predicates = false) const {
    return (gpu_form_ && ports_as_predicates) || pred_check_ || pred_skip_;
  }
  uint32_t offload_pred_check() const override { return pred_check_; }
  uint32_t offload_pred_skip() const override { return pred_skip_; }
  bool offload_sets_predicates() const override { return sets_pred_; }
  bool gpu_form_ = false;

 private:
  void gpu_form_push(PacketBatch* b) {
    auto* a = static_cast<Aggregate*>(b->anno.offload);
    if (!a || snap_step < 0) return this->drop_all(b, r_not_on_device_);  // not after a HostToDevice
    a->chain->step(*a, size_t(snap_step));
    this->output_push(0, b);
  }
  NbaOffload nba_;
  uint16_t r_not_on_device_ = 0;
  uint32_t pred_check_ = 0, pred_skip_ = 0;
  bool sets_pred_ = false;
};

// What an offloadable element's GPU (Snap) form changes in its CPU form's
// documentation; the rest (ports, processing, PRED and SKIP, the generic
// description) is generated by gpu_form_info().
struct GpuForm {
  std::string_view name;
  std::string_view summary;      // empty: the CPU summary, "on the device (Snap form)"
  std::string_view description;  // what the device form does; the generic part is appended
  std::vector<ArgDoc> args;      // arguments it adds, or CPU arguments documented differently (same name)
  std::string_view example;
  bool skip = false;  // SKIP: it runs a skipped packet on the host (offload_host_packet)
};
ElementInfo gpu_form_info(const ElementInfo& cpu, const GpuForm& g, Element* (*make)());

}  // namespace shoal::offload

// Registers an offloadable element class CLS under its CPU name (the
// ElementInfo fields after GPU) and its GPU form under GPU's name, the same
// class with set_gpu_form(). GPU is SHOAL_GPU_FORM(.name = "GPU...", ...).
#define SHOAL_GPU_FORM(...) (::shoal::offload::GpuForm{__VA_ARGS__})
#define SHOAL_OFFLOADABLE_ELEMENT(CLS, GPU, ...)                                                  \
  SHOAL_ELEMENT(CLS, __VA_ARGS__);                                                                \
  static const ::shoal::ElementInfo SHOAL_CONCAT(kGpuInfo_, CLS) =                                \
      ::shoal::offload::gpu_form_info(SHOAL_CONCAT(kInfo_, CLS), GPU, []() -> ::shoal::Element* { \
        auto* e = new CLS();                                                                      \
        e->set_gpu_form();                                                                        \
        return e;                                                                                 \
      });                                                                                         \
  static ::shoal::Registrar SHOAL_CONCAT(kGpuReg_, CLS)(&SHOAL_CONCAT(kGpuInfo_, CLS))
