#include "shoal/offload/element.hh"

#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <mutex>

#include "shoal/offload/services.hh"

namespace shoal::offload {

namespace {
constexpr size_t kMaxPorts = 256;  // verdict ports are 8 bits
}

void NbaOffload::init(Element& self, Offloadable& me) {
  self_ = &self;
  me_ = &me;
  timer_.owner = &self;
  self.add_task();
  self.set_task_active(false);
}

void NbaOffload::add_handlers(Element& self) {
  add_chain_handlers(self, stats_, "offload_", [this] { return chain_.get(); });
  self.add_read_handler("offload_batch_target", [this, &self] {
    return std::to_string(sizer_ ? sizer_->target() : services(self.worker().runtime()).options.batches);
  });
  self.add_read_handler("offload_sizer", [this] {
    return sizer_ ? fmt::format("target {} batches, grown {}, shrunk {}\n", sizer_->target(), sizer_->grows(),
                                sizer_->shrinks())
                  : std::string("fixed\n");
  });
  self.add_stat_handler("offload_low_rate_cpu", low_rate_cpu_);
  self.add_read_handler("offload_sizer_history", [this] {
    std::string out;
    for (const SizerPoint& p : sizer_history_)
      out += fmt::format("{:.3f} {} {}\n", double(p.ns) / 1e6, p.target, p.packets);
    return out;
  });
}

void NbaOffload::note_sizer(uint64_t now, uint32_t packets) {
  if (!sizer_t0_) sizer_t0_ = now;
  sizer_packets_ += packets;
  const uint64_t t = now - sizer_t0_;
  if (sizer_history_.size() >= kSizerHistory) return;
  if (!sizer_history_.empty() && sizer_history_.back().target == sizer_->target() &&
      t < sizer_history_.back().ns + 1000000)
    return;
  sizer_history_.push_back({t, sizer_->target(), sizer_packets_});
}

bool NbaOffload::drain() {
  if (!self_) return false;
  if (open_) launch_open();
  run_task();
  return !fifo_.empty() || !waiting_.empty();
}

void NbaOffload::add_generations(PacketBatch* b, std::vector<uint32_t>& to) const {
  FlowStateStore* st = chain_->plan().flow_store();
  b->for_each([&](uint32_t, Packet* p) {
    uint32_t id = p->anno().flow;
    to.push_back(id ? st->flow_generation(id) : 0);
  });
}

void NbaOffload::start(PacketBatch* b, bool device, std::vector<uint32_t>&& gens, uint64_t formed_ns, bool its_turn) {
  // (with resident flow state, a device aggregate may overlap those in
  // flight: Chain::can_overlap)
  if (!its_turn && serial() && (!waiting_.empty() || (!fifo_.empty() && !(device && chain_->can_overlap(b, gens))))) {
    waiting_packets_ += b->live();
    waiting_.push_back({b, device, std::move(gens), formed_ns});
    if (waiting_.size() > kMaxWaiting && !fifo_.empty()) {
      // back-pressure: the worker waits for the aggregate in flight
      chain_->wait(*fifo_.front());
      run_task();
    }
    self_->set_task_active(true);
    return;
  }
  if (serial()) chain_->set_flow_generations(std::move(gens));
  Aggregate* a = chain_->begin(b, device);
  a->formed_ns = formed_ns;
  chain_->run(*a);
  fifo_packets_ += a->n;
  fifo_.push_back(a);
  self_->set_task_active(true);
}

// The chain: this element, then each offloadable element reached through
// output 0, as long as there is one.
bool NbaOffload::build_chain() {
  if (chain_tried_) return chain_ != nullptr;
  chain_tried_ = true;
  std::vector<Offloadable*> steps{me_};
  for (Element* e = self_; e->noutputs() > 0 && steps.size() < 32;) {
    Element* next = e->output(0).e;
    auto* o = dynamic_cast<Offloadable*>(next);
    if (!o || !o->offload_joins_chains() || std::find(steps.begin(), steps.end(), o) != steps.end()) break;
    if (steps.back()->offload_ends_chain()) break;  // stale offsets, or verdicts not yet known
    steps.push_back(o);
    e = next;
  }
  Services& sv = services(self_->worker().runtime());
  std::string err;
  auto d = sv.device(err);
  if (!d && sv.claim_device_report())
    fmt::print(stderr,
               "shoal: {}: no device ({}); batches for the device run on the CPU (counted in "
               "'offload_cpu_fault')\n",
               self_->name(), err);
  chain_ = std::make_unique<Chain>(*self_, std::move(d), std::move(steps), sv.options.inflight, stats_);
  chain_->set_schedule(sv.options.schedule);
  chain_->set_flow_resident(sv.options.flow_resident);
  if (sv.options.adaptive) {
    BatchSizer::Config c;
    c.max = std::max(1u, sv.options.batches);
    c.latency_us = sv.options.latency_us;
    c.cpu_below = sv.options.cpu_below;
    sizer_ = std::make_unique<BatchSizer>(c);
  }
  return true;
}

bool NbaOffload::take(int port, PacketBatch* b) {
  if (!self_) return false;
  bool to_device = b->anno.device >= 0;
  if (to_device) build_chain();
  if (to_device && !chain_->device_usable()) {  // the CPU function, counted
    stats_.cpu_fault.add();
    stats_.fault_packets.add(b->live());
    to_device = false;
  }
  if (!to_device) {
    if (fifo_.empty() && !open_ && waiting_.empty()) return false;  // nothing to wait for
    // Behind aggregates in flight: the chain runs it now, on the host, and
    // it waits its turn to leave. Running it now keeps the elements' host
    // state (pre functions: IP IDs, sequence numbers) in arrival order.
    // (A chain with per-flow state runs it at its turn instead: start().)
    (void)port;
    if (open_) launch_open();
    std::vector<uint32_t> gens;
    if (serial()) add_generations(b, gens);
    start(b, false, std::move(gens), self_->worker().now_ns());
    return true;
  }
  Worker& w = self_->worker();
  const Options& o = services(w.runtime()).options;
  uint32_t cap = std::max(1u, o.batches) * w.batches().batch_capacity();
  if (open_ && open_->slots() + b->live() > open_->capacity()) launch_open();
  if (!open_) {
    open_ = w.batches(cap).get();
    open_->anno = b->anno;
    open_batches_ = 0;
    open_formed_ns_ = w.now_ns();
    w.schedule(timer_, open_formed_ns_ + uint64_t(o.timeout_us) * 1000);
  }
  if (serial()) add_generations(b, open_gens_);
  b->for_each([&](uint32_t, Packet* p) { open_->append(p); });
  self_->recycle(b);
  if (++open_batches_ >= (sizer_ ? sizer_->target() : o.batches) || open_->full()) launch_open();
  return true;
}

void NbaOffload::launch_open(bool timed_out) {
  self_->worker().unschedule(timer_);
  PacketBatch* b = open_;
  open_ = nullptr;
  std::vector<uint32_t> gens;
  gens.swap(open_gens_);
  bool device = true;
  if (sizer_) {
    if (timed_out && sizer_->to_cpu(b->live())) {
      device = false;  // a trickle: the device's fixed latency buys nothing
      low_rate_cpu_.add();
    } else {
      const Options& o = services(self_->worker().runtime()).options;
      sizer_->launched(serial() ? chain_->in_flight() > 0 : chain_->in_flight() >= std::max(1u, o.inflight));
    }
  }
  start(b, device, std::move(gens), open_formed_ns_);
}

void NbaOffload::run_timer() {
  if (open_) launch_open(true);
}

bool NbaOffload::run_task() {
  bool did = false;
  for (;;) {
    while (!fifo_.empty()) {
      Aggregate* a = fifo_.front();
      if (!chain_->ready(*a)) break;
      fifo_.pop_front();
      fifo_packets_ -= a->n;
      if (sizer_) {
        const uint64_t now = self_->worker().now_ns();
        if (a->on_device && a->formed_ns) sizer_->completed((now - a->formed_ns) / 1000);
        sizer_->delivered(a->n, now);
        note_sizer(now, a->n);
      }
      chain_->complete(*a);
      deliver(*a);
      did = true;
    }
    if (waiting_.empty()) break;
    if (!fifo_.empty() &&
        !(waiting_.front().device && chain_->can_overlap(waiting_.front().batch, waiting_.front().gens)))
      break;
    Waiting w = std::move(waiting_.front());  // (a serial chain's next aggregate: its turn now)
    waiting_.pop_front();
    waiting_packets_ -= w.batch->live();
    start(w.batch, w.device, std::move(w.gens), w.formed_ns, true);
  }
  self_->set_task_active(!fifo_.empty() || !waiting_.empty());
  return did;
}

// Every packet leaves from the element and port where it left the chain
// (or the last element's output 0), dropped ones counted by their element.
// Each step's output 0 (the chain's link) counts the packets that went on.
void NbaOffload::deliver(Aggregate& a) {
  const auto& steps = chain_->steps();
  PacketBatch* agg = a.batch;
  out_.assign(steps.size() * kMaxPorts, nullptr);
  left_at_.assign(steps.size(), 0);
  for (uint32_t i = 0; i < a.n; ++i) {
    Packet* p = agg->at(i);
    uint32_t v = a.verdict(i);
    size_t s = steps.size() - 1;
    uint32_t port = 0;
    if (v) s = k::verdict_step(v);
    ++left_at_[s];
    if (v) {
      if (k::verdict_dropped(v)) {
        steps[s]->offload_element().drop(p, uint16_t(k::verdict_reason(v)));
        continue;
      }
      port = k::verdict_port(v);
    }
    Element& e = steps[s]->offload_element();
    PacketBatch*& slot = out_[s * kMaxPorts + port];
    if (!slot) {
      slot = e.new_batch();
      slot->anno = agg->anno;
      slot->anno.offload = nullptr;
    }
    slot->append(p);
    if (slot->full()) {
      PacketBatch* full = slot;
      slot = nullptr;
      e.output_push(int(port), full);
    }
  }
  PacketBatch* big = chain_->release(a);
  self_->recycle(big);
  uint64_t went_on = a.n;
  for (size_t s = 0; s + 1 < steps.size(); ++s) {
    went_on -= left_at_[s];
    steps[s]->offload_element().count_output(0, went_on);
  }
  for (size_t x = 0; x < out_.size(); ++x)
    if (out_[x]) {
      PacketBatch* b = out_[x];
      out_[x] = nullptr;
      steps[x / kMaxPorts]->offload_element().output_push(int(x % kMaxPorts), b);
    }
}

uint64_t NbaOffload::oldest_flow_epoch() const {
  uint64_t o = 0;
  auto see = [&](const PacketBatch* b) {
    if (b && b->anno.flow_epoch && (!o || b->anno.flow_epoch < o)) o = b->anno.flow_epoch;
  };
  if (!fifo_.empty()) see(fifo_.front()->batch);  // (in arrival order: the front is the oldest)
  if (!waiting_.empty()) see(waiting_.front().batch);
  see(open_);
  return o;
}

size_t NbaOffload::held() const { return fifo_packets_ + waiting_packets_ + (open_ ? open_->live() : 0); }

void NbaOffload::cleanup() {
  if (!self_) return;
  auto free_batch = [&](PacketBatch* b) {
    b->for_each([&](uint32_t, Packet* p) { self_->worker().pool().free(p); });
    self_->recycle(b);
  };
  if (open_) free_batch(open_), open_ = nullptr;
  open_gens_.clear();
  for (Waiting& w : waiting_) free_batch(w.batch);
  waiting_.clear();
  waiting_packets_ = 0;
  for (Aggregate* a : fifo_) {
    chain_->wait(*a);
    free_batch(chain_->release(*a));
  }
  fifo_.clear();
  fifo_packets_ = 0;
  chain_.reset();
}

ElementInfo gpu_form_info(const ElementInfo& cpu, const GpuForm& g, Element* (*make)()) {
  // The registry keeps string_views: the generated texts live as long as the program.
  static std::deque<std::string> texts;
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  auto keep = [&](std::string s) -> std::string_view { return texts.emplace_back(std::move(s)); };
  ElementInfo i;
  i.name = g.name;
  i.ports = "1/1";
  i.processing = "h/h";
  i.summary = g.summary.empty() ? keep(fmt::format("{} on the device (Snap form)", cpu.name)) : g.summary;
  std::string d(g.description);
  if (!d.empty()) d += " ";
  d += fmt::format(
      "{} sits between HostToDevice and DeviceToHost (Snap's form): the device runs {}'s own step "
      "function on the byte ranges it declares, and its drops and host work are counted when the "
      "aggregate completes. With PRED n, only packets with predicate bit n are processed.",
      g.name, cpu.name);
  if (g.skip)
    d += " With SKIP n, packets with bit n pass it by on the device; those whose bit an earlier element's host part "
         "clears are processed on the host, in order, when the aggregate completes.";
  i.description = keep(std::move(d));
  for (const ArgDoc& a : cpu.args) {
    auto o = std::find_if(g.args.begin(), g.args.end(), [&](const ArgDoc& x) { return x.name == a.name; });
    i.args.push_back(o != g.args.end() ? *o : a);
  }
  for (const ArgDoc& a : g.args)
    if (std::none_of(cpu.args.begin(), cpu.args.end(), [&](const ArgDoc& x) { return x.name == a.name; }))
      i.args.push_back(a);
  i.args.push_back({"PRED", "0-31", "process only packets with this predicate bit"});
  if (g.skip)
    i.args.push_back({"SKIP", "0-31",
                      "pass packets with this predicate bit by; those whose bit an earlier element's host part "
                      "clears are processed on the host at completion"});
  // The NBA chain's handlers exist only on the CPU form.
  for (const HandlerDoc& h : cpu.handlers)
    if (h.name != "offload_chain" && h.name != "offload_packets") i.handlers.push_back(h);
  i.example = g.example;
  i.make = make;
  return i;
}

}  // namespace shoal::offload
