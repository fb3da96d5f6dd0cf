// Shared pieces of element code: pull-side tasks that sleep on an upstream
// notifier, and the base of packet sources (push or pull, LIMIT, STOP, ACTIVE).
#pragma once
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "shoal/core/element.hh"
#include "shoal/core/worker.hh"

namespace shoal {

// The nearest element of class T upstream of e's input `port`, following
// every input of the elements in between (breadth first), or nullptr.
// Stateful elements find the flow layer's elements this way.
template <class T>
T* find_upstream(Element* e, int port = 0) {
  std::vector<Element*> todo{e->input(port).e}, seen;
  for (size_t i = 0; i < todo.size(); ++i) {
    Element* u = todo[i];
    if (!u || std::find(seen.begin(), seen.end(), u) != seen.end()) continue;
    seen.push_back(u);
    if (auto* t = dynamic_cast<T*>(u)) return t;
    for (int j = 0; j < u->ninputs(); ++j) todo.push_back(u->input(j).e);
  }
  return nullptr;
}

// An element whose pull outputs have empty-notifiers of their own
// (Suppressor: output i's follows input i's), which upstream_notifier asks
// for the output it reaches; nullptr: that output has none.
class OutputNotifiers {
 public:
  virtual ~OutputNotifiers() = default;
  virtual Notifier* output_notifier(int port) = 0;
};

// The notifier of the nearest upstream element that has one, following pull
// inputs through single-input elements (Click's NotifierSignal search).
Notifier* upstream_notifier(Element* e, int port = 0);
// The notifiers upstream of every input of e (upstream_notifier), into
// `ups`, with e listening to each and `combined` listing them as its parts
// (Click's combined signal); false, and nothing registered, when an input
// has none.
bool listen_to_inputs(Element* e, std::vector<Notifier*>& ups, Notifier& combined);
// The full-notifier of the nearest downstream element that has one (a
// Queue), following push outputs through single-output elements.
Notifier* downstream_full_notifier(Element* e, int port = 0);

// A task that pulls from input 0 and hands each batch to consume(); sleeps on
// the upstream notifier when it is known to be empty.
class PullTask {
 public:
  void init(Element* e, uint32_t burst);
  // Returns the pulled batch of up to `max` packets (0: the burst), or
  // nullptr, possibly putting the task to sleep.
  PacketBatch* pull(uint32_t max = 0);

 private:
  Element* e_ = nullptr;
  Notifier* n_ = nullptr;
  uint32_t burst_ = 32;
};

// State shared by the copies of one element across workers (route tables,
// ARP caches): one T per (runtime, element name), made by the first copy to
// ask; `first` says whether this call made it. shared_state_named: one T per
// (runtime, key), for state several elements share (a rewriter's table).
template <class T>
std::shared_ptr<T> shared_state_named(Element* e, const std::string& key, bool* first = nullptr) {
  static std::mutex mu;
  static std::map<std::pair<const void*, std::string>, std::weak_ptr<T>> all;
  std::lock_guard<std::mutex> g(mu);
  auto& w = all[{&e->worker().runtime(), key}];
  auto t = w.lock();
  if (first) *first = !t;
  if (!t) w = t = std::make_shared<T>();
  return t;
}
template <class T>
std::shared_ptr<T> shared_state(Element* e, bool* first = nullptr) {
  return shared_state_named<T>(e, e->name(), first);
}

// The non-empty lines of a text file that are not '#' comments, with their
// line numbers (route files and the like). Fails the arguments when the
// file cannot be read.
std::vector<std::pair<size_t, std::string>> read_config_lines(Args& a, const char* what, const std::string& file);

// The element that `name` in self's arguments means: looked up from self's
// own compound outwards, as Click resolves element arguments; nullptr when
// there is none.
Element* find_element_from(Element& self, const std::string& name);

// An element's output rebuilt in order when packets are replaced or added
// (reassembly, decapsulation): live packets of `in` before slot i are moved
// out first (take_before), then new ones added; a batch that fills is pushed
// at once. finish() moves the rest of `in`, recycles it, pushes what is left.
class OrderedOutput {
 public:
  OrderedOutput(Element& e, PacketBatch* in, int port = 0) : e_(e), in_(in), port_(port) {}
  void take_before(uint32_t slot) {
    for (; next_ < slot; ++next_)
      if (in_->is_live(next_)) {
        add(in_->at(next_));
        in_->kill(next_);
      }
  }
  // Slot `slot` is dealt with by the caller (killed, or kept for take_before).
  void skip(uint32_t slot) { next_ = slot + 1; }
  void add(Packet* p) {
    if (!out_) {
      out_ = e_.new_batch();
      out_->anno = in_->anno;
    } else if (out_->full()) {
      e_.output_push(port_, out_);
      out_ = e_.new_batch();
      out_->anno = in_->anno;
    }
    out_->append(p);
  }
  void finish() {
    take_before(in_->slots());
    e_.recycle(in_);
    if (!out_) return;
    if (out_->empty())
      e_.recycle(out_);
    else
      e_.output_push(port_, out_);
  }

 private:
  Element& e_;
  PacketBatch* in_;
  PacketBatch* out_ = nullptr;
  int port_;
  uint32_t next_ = 0;
};

// Frees every live packet of b to the worker's pool (packets already
// counted elsewhere: an offload aggregate's at exit) and recycles b.
inline void free_packets(Element& e, PacketBatch* b) {
  b->for_each([&](uint32_t, Packet* p) { e.worker().pool().free(p); });
  e.recycle(b);
}

// Click's timestamp as its Print elements show it: seconds with six
// decimals, nine when the time has nanoseconds.
std::string click_timestamp(uint64_t ns);

// Where the Click print elements (Print, IPPrint, ARPPrint) write their
// lines: OUTFILE when given (opened at initialize, a failed write is a run
// error), else standard error.
class LineOutput {
 public:
  void open(const std::string& path);               // throws when it cannot be opened; "" is standard error
  void write(Element& e, const std::string& line);  // line without its newline
  void close();
  ~LineOutput() { close(); }

 private:
  std::string path_;
  FILE* f_ = nullptr;
};

class SourceElement : public Element {
 public:
  void initialize() override;
  bool run_task() override;
  PacketBatch* pull(int port, uint32_t max) override;
  Notifier* notifier() override { return rate_limited() ? nullptr : &notifier_; }
  void add_handlers() override;
  // The downstream queue has room again (or the source was reset).
  void wake_task() override {
    if (active_ && !done_ && output_proc(0) == Proc::Push) set_task_active(true);
  }

 protected:
  // Reads LIMIT, BURST, ACTIVE, STOP (call from configure()).
  void read_source_args(Args& args, uint32_t default_burst = 32);
  // Appends up to `max` packets to b. Sets `done` when no packet will ever
  // come again. Returning 0 without `done` means "not now" (rate, pool).
  virtual uint32_t produce(PacketBatch* b, uint32_t max, bool& done) = 0;
  virtual bool rate_limited() const { return false; }
  // A packet is not due before `when_ns` (TIMING): the task sleeps until
  // then on a timer, so simulated time jumps straight there.
  void sleep_until(uint64_t when_ns);
  void run_timer(Timer& t) override;
  // Packets this worker may still emit under LIMIT (UINT64_MAX: unlimited).
  uint64_t remaining() const {
    return limit_ < 0 ? UINT64_MAX : uint64_t(limit_) - std::min<uint64_t>(uint64_t(limit_), emitted_.get());
  }
  // This worker's share of a LIMIT over all workers, when the source splits
  // its traffic by flow (FastUDPFlows decides per flow, not by count).
  int64_t limit_ = -1;
  // Click's END_CALL: a write handler ("elem.handler VALUE") called when
  // LIMIT is reached, by the copy that emits (end_call_owner_).
  std::string end_call_;
  bool end_call_owner_ = true;
  uint32_t burst_ = 32;
  bool active_ = true;
  bool stop_ = false;
  bool done_ = false;
  Stat emitted_;

 private:
  PacketBatch* fill(uint32_t max);
  void finish();
  Notifier notifier_;
  Notifier* full_ = nullptr;  // the downstream queue's full-notifier (push mode)
  Timer due_;
};

}  // namespace shoal
