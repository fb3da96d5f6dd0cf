// Element: the unit of a Shoal graph. Ports, Click processing codes, argument
// configuration, handlers, drop reasons, and the batch data path with NBA-style
// branch handling. Per-packet elements derive from PacketElement<D> below.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "shoal/core/args.hh"
#include "shoal/core/batch.hh"
#include "shoal/core/stat.hh"
#include "shoal/core/worker.hh"

namespace shoal {

class Element;
class Router;
class Worker;
struct Timer;

enum class Proc : uint8_t { Push, Pull, Agnostic };

struct ArgDoc {
  std::string_view name, type, desc;
};
struct HandlerDoc {
  std::string_view name, mode, desc;
};

// Static description of an element class: the registry, `shoal elements` and
// graph validation all read it.
struct ElementInfo {
  std::string_view name;
  std::string_view ports;       // Click port counts: "1/1", "0/1", "1/1-2", "-/-", "1/="
  std::string_view processing;  // Click processing: "a/a", "h/h", "l/l", "h/l", "a/ah"
  std::string_view summary;
  std::string_view description;
  std::vector<ArgDoc> args;
  std::vector<HandlerDoc> handlers;
  std::string_view example;
  // The element reads $NAME in its own arguments (Script's variables), so
  // an undefined configuration variable there is not an error.
  bool own_variables = false;
  // Click's flow code "x/y": no packet goes from an input to an output, so
  // agnostic inputs and outputs resolve to push or pull apart (Idle).
  bool independent_ports = false;
  // Every packet pushed in leaves on output 0, unchanged in what decides a
  // path (Null, Counter, Paint...): a push cycle of only such elements can
  // never end (Router::check_push_cycles).
  bool forwards_all = false;
  // Configured before every other element (AddressInfo, PortInfo: the
  // names they define are then seen by the others' arguments).
  bool configure_first = false;
  Element* (*make)();
};

struct PortRange {
  uint32_t lo = 0, hi = 0;  // hi = UINT32_MAX: unbounded
  bool same_as_inputs = false;
};
bool parse_port_counts(std::string_view spec, PortRange& in, PortRange& out);
Proc port_processing(std::string_view spec, bool output, uint32_t port);

class Registry {
 public:
  static Registry& instance();
  void add(const ElementInfo* info);
  const ElementInfo* find(std::string_view name) const;
  std::vector<const ElementInfo*> all() const;  // sorted by name

 private:
  std::vector<const ElementInfo*> infos_;
};

struct Registrar {
  explicit Registrar(const ElementInfo* i) { Registry::instance().add(i); }
};

enum class Agg : uint8_t { Sum, First, Max, Concat };  // Concat: every worker's text, in worker order

struct Handler {
  std::string name;
  std::function<std::string()> read;              // empty: not readable
  std::function<void(const std::string&)> write;  // empty: not writable; throws on bad input
  Agg agg = Agg::First;
  bool numeric = false;
  // Click's read handlers with parameters ("ar.lookup 1.0.0.1", "s.run ARGS"):
  // called on worker 0's copy; when set, `read` calls it with no parameter.
  std::function<std::string(const std::string&)> read_param;
  // Click's private handler: the configuration's own Scripts may call it,
  // clients outside the router (ControlSocket) may not see it.
  bool hidden = false;
};

class Element {
 public:
  struct PortRef {
    Element* e = nullptr;
    int port = -1;
  };
  struct DropReason {
    std::string name;
    Stat count;
    bool loss = false;  // see is_loss_reason
  };
  // A drop reason that means Shoal could not carry the packet (a full pool,
  // queue or ring, a failed write, a cycle, a missing device) rather than a
  // decision of the configuration or the protocol (Discard, a filter, a
  // checksum, an expired TTL). Statistics report the two apart.
  static bool is_loss_reason(std::string_view reason);

  Element() = default;
  virtual ~Element() = default;
  Element(const Element&) = delete;
  Element& operator=(const Element&) = delete;

  const ElementInfo& info() const { return *info_; }
  std::string_view class_name() const { return info_->name; }
  const std::string& name() const { return name_; }
  const std::string& config_string() const { return config_; }
  int index() const { return index_; }
  int ninputs() const { return int(inputs_.size()); }
  int noutputs() const { return int(outputs_.size()); }
  Proc input_proc(int i) const { return in_proc_[size_t(i)]; }
  Proc output_proc(int i) const { return out_proc_[size_t(i)]; }
  const PortRef& input(int i) const { return inputs_[size_t(i)]; }
  const PortRef& output(int i) const { return outputs_[size_t(i)]; }
  Worker& worker() const { return *worker_; }
  Router& router() const { return *router_; }

  // ---- lifecycle -------------------------------------------------------
  virtual void configure(Args& args) { args.complete(); }
  virtual void initialize() {}  // after ports are connected; may throw
  // Elements initialize in declaration order within a phase, phases in
  // increasing order (Click's configure_phase, for initialize): one that
  // reads what other elements set up when they initialize (their loaded
  // tables) takes a later phase.
  virtual int initialize_phase() const { return 0; }
  virtual void cleanup() {}  // at exit, on the worker thread
  virtual void add_handlers() {}
  // Hooks for base classes that add a capability to an element (the offload
  // layer's OffloadableElement): the router calls them around the element's
  // own configure(), initialize() and add_handlers(), so element code never
  // has to remember to. Element classes themselves do not override them.
  virtual void framework_configure(Args&) {}  // before configure()
  virtual void framework_initialize() {}      // after initialize()
  virtual void framework_handlers() {}        // after add_handlers()

  // ---- data path -------------------------------------------------------
  // push() owns the batch it receives. pull() returns a batch or nullptr.
  virtual void push(int port, PacketBatch* b);
  virtual PacketBatch* pull(int port, uint32_t max);
  virtual bool run_task() { return false; }  // true when it did work
  virtual void run_timer(Timer& t);
  // Packets stored inside the element (queues), for the accounting identity.
  virtual size_t packets_held() const { return 0; }
  // Elements that hold batches for later (offload aggregates, a Batcher's
  // open one) and whose packets' flow state is used then: the flow layer's
  // epoch stamped on the oldest batch held (BatchAnno::flow_epoch; 0 when
  // none). A FlowIPManager upstream keeps ended flows' entries and release
  // hooks until that batch is done (flow::FlowTable::hold).
  virtual bool holds_batches() const { return false; }
  virtual uint64_t oldest_flow_epoch() const { return 0; }
  // Queues return a signal other elements can wait on (see Unqueue).
  virtual struct Notifier* notifier() { return nullptr; }
  // Click's full-notifier: active while the element (a Queue) has room, so
  // pushing sources upstream sleep while it is full.
  virtual struct Notifier* full_notifier() { return nullptr; }
  // A notifier says packets are available again: resume the task, unless
  // the element was switched off (ACTIVE false).
  virtual void wake_task() { set_task_active(true); }
  // A descriptor the element watches (Worker::add_select) is readable.
  virtual void selected(int fd) { wake_task(); }
  // At a stop, before on_stop: push on what the element holds that needs no
  // new input to finish (offload aggregates in flight); true while some
  // remains. The worker calls it until every element says false (2 s at
  // most), then end_at_stop().
  virtual bool drain() { return false; }
  // Mid-run (a driver script took a stop event): push on asynchronous work
  // that needs no new input to finish (offload aggregates), and nothing
  // else; true while some remains. drain() is for the final stop (state
  // that ends with the run ends in end_at_stop(), after it).
  virtual bool settle() { return false; }
  // At a stop, once no element has anything more to drain (or the drain's
  // bound passed): end the state that ends with the run, as the flow layer
  // flushing its table, so elements downstream see each flow end after its
  // last packet, offloaded ones included. True when it did something (the
  // worker drains again, then asks again): once per element and stop.
  virtual bool end_at_stop() { return false; }
  // Called on the worker when the router is stopping (flush files etc.).
  virtual void on_stop() {}
  // Hot swap (Click's hotconfig): called on each element of the new
  // configuration, on the driver's thread, after the old one stopped and
  // before the new one runs; `old` is the old configuration's element of
  // the same name and class (its state is the element's to take), or null.
  virtual void hot_swapped(Element* old) {}

  // ---- helpers for element code ----------------------------------------
  // Both bound how deep pushes (pulls) nest on a worker: a batch that has
  // gone through Worker::kMaxDepth connections in one call chain is caught
  // in a cycle; it is dropped ('push-loop') and the run fails, instead of
  // spinning or overflowing the stack.
  void output_push(int port, PacketBatch* b) {
    const PortRef& o = outputs_[size_t(port)];
    out_count_[size_t(port)].add(b->live());
    if (worker_->depth >= Worker::kMaxDepth) return push_too_deep(b);
    ++worker_->depth;
    o.e->push(o.port, b);
    --worker_->depth;
  }
  PacketBatch* input_pull(int port, uint32_t max) {
    const PortRef& i = inputs_[size_t(port)];
    if (worker_->depth >= Worker::kMaxDepth) return pull_too_deep();
    ++worker_->depth;
    PacketBatch* b = i.e->pull(i.port, max);
    --worker_->depth;
    if (b) i.e->out_count_[size_t(i.port)].add(b->live());
    return b;
  }
  uint16_t add_drop_reason(std::string_view reason);
  // Hot swap: the old configuration's element's drops, by reason, go on
  // being counted here.
  void carry_drops_from(const Element& old);
  void drop(Packet* p, uint16_t reason);
  void drop_all(PacketBatch* b, uint16_t reason);
  // A drop of a packet that has no buffer (already counted as received).
  void count_dropped(uint16_t reason, uint64_t n = 1);
  // A packet that was never made (a copy the pool could not supply): counted
  // as created and dropped, so the accounting still balances.
  void count_lost(uint16_t reason, uint64_t n = 1);  // drops every live packet and recycles b
  void sent(Packet* p);                              // a sink delivered p: counted, freed
  // A run-time error (Runtime::report_error, prefixed with the element as
  // Click names it, "NAME :: CLASS: "): the run goes on and, unless fail is
  // false, ends with a failure status.
  void run_error(const std::string& msg, bool fail = true);
  void received(uint64_t n = 1);  // packets entering the graph at a source
  void created(uint64_t n = 1);   // packets made inside the graph (copies)
  PacketBatch* new_batch();
  void recycle(PacketBatch* b);  // b must hold no live packet
  static constexpr int drop_code(uint16_t reason) { return -1 - int(reason); }
  // Sends each live packet to the port in its result slot; negative results
  // are drops by reason. The batch object goes to the port most packets take
  // (NBA's branch prediction); the minority is split out. With keep_port >= 0
  // (pull mode) packets for that port stay in the returned batch.
  PacketBatch* dispatch(PacketBatch* b, int keep_port = -1);

  void add_read_handler(std::string name, std::function<std::string()> f, Agg agg = Agg::First, bool numeric = false);
  void add_stat_handler(std::string name, const Stat& s);  // numeric, summed over workers
  // A read handler that takes a parameter (worker 0's copy answers).
  void add_read_param_handler(const std::string& name, std::function<std::string(const std::string&)> f);
  void add_write_handler(std::string name, std::function<void(const std::string&)> f);
  const std::vector<Handler>& handlers() const { return handlers_; }
  const Handler* find_handler(std::string_view name) const;
  void set_handler_private(std::string_view name);  // see Handler::hidden
  // Gives n a signal number of this router (Click's new_notifier_signal).
  void register_signal(Notifier& n, const char* kind);
  const std::deque<DropReason>& drop_reasons() const { return drops_; }
  // Packets that left by an output port, pushed or pulled (this copy's).
  uint64_t output_count(int port) const { return out_count_[size_t(port)].get(); }
  // Packets that crossed an output port without a push: an offload chain ran
  // this element and the next on the device in one go.
  void count_output(int port, uint64_t n) { out_count_[size_t(port)].add(n); }

  // Schedulable elements register a task; it runs while active.
  void add_task();
  void set_task_active(bool on);
  bool task_active() const;
  // The worker whose copy of this element runs its work when only one copy
  // does (a source of one flow, a Script): StaticThreadSched's preference,
  // else what the element chose; worker 0 if neither; -1: no worker (Click's
  // home thread, as its handler reports it).
  int home_thread() const { return home_thread_ == kUnset ? 0 : home_thread_; }
  bool home_thread_set() const { return home_thread_ != kUnset; }
  void set_home_thread(int t) { home_thread_ = t; }
  bool on_home_thread() const;
  // Click's stride scheduling: a task with twice the tickets runs twice as
  // often as another on its worker (ScheduleInfo; the 'tickets' handler).
  static constexpr uint32_t kDefaultTickets = 1024, kMaxTickets = 32768;
  uint32_t tickets() const { return tickets_; }
  void set_tickets(uint32_t t) { tickets_ = t < 1 ? 1 : t > kMaxTickets ? kMaxTickets : t; }
  // A stop request (Click's STOP true): honoured once every worker's copy asks.
  void request_stop();

 private:
  friend class Router;
  void add_default_handlers();
  void push_too_deep(PacketBatch* b);
  PacketBatch* pull_too_deep();
  const ElementInfo* info_ = nullptr;
  std::string name_, config_;
  Loc loc_;
  int index_ = -1;
  Router* router_ = nullptr;
  Worker* worker_ = nullptr;
  int task_ = -1;
  static constexpr int kUnset = -2;
  int home_thread_ = kUnset;
  uint32_t tickets_ = kDefaultTickets;
  std::vector<PortRef> inputs_, outputs_;
  std::vector<Proc> in_proc_, out_proc_;
  std::deque<Stat> out_count_;
  std::vector<uint32_t> port_counts_;   // dispatch() scratch, one per output
  std::vector<uint32_t> port_first_;    // ... the slot of each output's first packet
  std::vector<PacketBatch*> port_out_;  // ... each output's batch, pushed in order of port_first_
  std::deque<DropReason> drops_;
  std::vector<Handler> handlers_;
  uint16_t r_no_port_ = UINT16_MAX;
};

// Per-packet elements: D implements one of
//   void process(Packet*)          always to output 0, never drops
//   int  process(Packet*)          an output port, or drop_code(reason)
//   int  process(int port, Packet*) the same, knowing the input port
// and optionally `void begin_batch(PacketBatch*)` and `bool
// finish_batch(PacketBatch*)` around each batch's loop (finish_batch may
// rewrite results, saying so by returning true).
// The loop is inlined (no virtual call per packet); branches go through
// dispatch() only when the batch actually diverges.
template <class D>
class PacketElement : public Element {
 public:
  void push(int port, PacketBatch* b) override {
    int r = run(port, b);
    if (r >= 0)
      output_push(r, b);
    else
      dispatch(b);
  }
  PacketBatch* pull(int port, uint32_t max) override {
    PacketBatch* b = input_pull(port, max);
    if (!b) return nullptr;
    int r = run(port, b);
    if (r == 0) return b;
    b = dispatch(b, 0);
    if (b->empty()) {
      recycle(b);
      return nullptr;
    }
    return b;
  }

 private:
  // Processes the batch; returns the common port if every packet took it, or
  // -1 when results diverge (or any packet dropped).
  int run(int port, PacketBatch* b) {
    D* d = static_cast<D*>(this);
    if constexpr (std::is_void_v<decltype(call(d, port, nullptr))>) {
      b->for_each([&](uint32_t, Packet* p) { call(d, port, p); });
      return 0;
    } else {
      int first = INT32_MIN;
      bool uniform = true;
      if constexpr (requires { d->begin_batch(b); }) d->begin_batch(b);
      b->for_each([&](uint32_t i, Packet* p) {
        int r = call(d, port, p);
        b->result(i) = int16_t(r);
        if (first == INT32_MIN) first = r;
        uniform &= (r == first);
      });
      // Work queued per packet and completed per batch (a crypto library's
      // multi-buffer jobs): true when it changed any packet's result.
      if constexpr (requires { d->finish_batch(b); })
        if (d->finish_batch(b)) uniform = false;
      if (first == INT32_MIN) return 0;
      return uniform && first >= 0 && first < noutputs() ? first : -1;
    }
  }
  static auto call(D* d, int port, Packet* p) {
    if constexpr (requires { d->process(port, p); })
      return d->process(port, p);
    else
      return d->process(p);
  }
};

#define SHOAL_CONCAT2(a, b) a##b
#define SHOAL_CONCAT(a, b) SHOAL_CONCAT2(a, b)
// Registers element class CLS with the ElementInfo expression INFO; CLS must
// have `static const ElementInfo& info_ref()` or use this macro's definition.
#define SHOAL_ELEMENT(CLS, ...)                                      \
  static const ::shoal::ElementInfo SHOAL_CONCAT(kInfo_, CLS) = [] { \
    ::shoal::ElementInfo i{__VA_ARGS__};                             \
    i.make = []() -> ::shoal::Element* { return new CLS(); };        \
    return i;                                                        \
  }();                                                               \
  static ::shoal::Registrar SHOAL_CONCAT(kReg_, CLS)(&SHOAL_CONCAT(kInfo_, CLS))

}  // namespace shoal
