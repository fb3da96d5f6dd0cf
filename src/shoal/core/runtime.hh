// Runtime: the workers, their routers and threads; stop requests; handler
// access aggregated across workers; the accounting identity.
#pragma once
#include <array>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <typeindex>
#include <vector>

#include "shoal/core/graph.hh"
#include "shoal/core/worker.hh"

namespace shoal {

struct RunOptions {
  int threads = 1;
  double duration_s = 0;  // 0: until stopped or quiescent
  PoolConfig pool;
  uint32_t batch_capacity = 256;
  bool pin = true;
  // Run-time errors printed as Click prints them (no "shoal: error: ").
  bool click_messages = false;
  // Click's task placement: an element that runs on one worker (a source,
  // a Script) runs on worker 0 unless StaticThreadSched says otherwise;
  // by default a single-flow source runs on the worker its flow hashes to.
  bool click_placement = false;
};

struct Accounting {
  uint64_t received = 0, created = 0, sent = 0, dropped = 0, held = 0;
  bool balanced() const { return received + created == sent + dropped + held; }
};

class Runtime {
 public:
  Runtime(const Program& prog, RunOptions opt);
  ~Runtime();

  bool configure(Diagnostics& diag);  // all workers' routers
  bool initialize(Diagnostics& diag);
  void run();  // blocks until stopped
  void cleanup();

  int nworkers() const { return int(workers_.size()); }
  Worker& worker(int i) { return *workers_[size_t(i)]; }
  Router& router(int i) { return *routers_[size_t(i)]; }
  const Program& program() const { return prog_; }
  const RunOptions& options() const { return opt_; }

  // "elem.handler" (or a global handler: "stop", "threads", "version").
  // Values are aggregated over workers by the handler's rule.
  // A parameter (Click's "elem.handler PARAM") goes to handlers that take
  // one; other handlers refuse it.
  bool read_handler(const std::string& path, std::string& out, std::string& err, const std::string& param = "");
  // Runs the write on every worker (on its own thread while running). A
  // caller that is not a worker (calling_worker -1) waits for the writes,
  // up to two seconds, and gets their first error.
  bool write_handler(const std::string& path, const std::string& value, std::string& err, int calling_worker = -1);

  // A stop event: with a DriverManager present it is handed to it, else the
  // runtime stops. An element's request counts once all its copies asked.
  void element_stop_request(int element_index);
  void stop_event();
  void stop_now() { stop_.store(true, std::memory_order_release); }
  bool stopping() const { return stop_.load(std::memory_order_acquire); }
  uint64_t take_stop_event();  // DriverManager: consume a pending event
  // Signals that Scripts of TYPE SIGNAL take (Click's): the run's signal
  // thread posts them, bumping the signal's generation, instead of acting
  // on them itself (a taken SIGINT repeated at once still stops the run).
  void take_signal(int sig) { taken_signals_.fetch_or(uint64_t(1) << (sig & 63)); }
  bool signal_taken(int sig) const { return taken_signals_.load() >> (sig & 63) & 1; }
  void post_signal(int sig) { signal_gen_[sig & 63].fetch_add(1); }
  uint64_t signal_generation(int sig) const { return signal_gen_[sig & 63].load(); }
  void set_driver_manager() { driver_manager_ = true; }
  void note_quiescent(bool q);
  // Simulated time moves to the earliest time the workers wait for, once
  // every one of them waits (Worker::sim_want).
  void advance_simulated();

  Accounting accounting() const;

  // Hot swap (Click's `hotconfig` write handler, `shoal click -R`): the
  // builder makes a configured and initialized runtime from a new
  // configuration's text, or says why not (the old one runs on). Writing
  // hotconfig stops this runtime with the new one pending; the driver takes
  // it (take_next), lets it take this one's state and runs it.
  using Builder = std::function<std::unique_ptr<Runtime>(const std::string& text, std::string& err)>;
  void set_hotswap(Builder b) { builder_ = std::move(b); }
  bool hotswap_enabled() const { return bool(builder_); }
  // Reload (`shoal run`: SIGHUP, the global 'reload' write handler, `shoal
  // ctl reload`): the same swap, to the configuration file read again.
  using Reloader = std::function<std::unique_ptr<Runtime>(std::string& err)>;
  void set_reload(Reloader r) { reloader_ = std::move(r); }
  bool reload_enabled() const { return bool(reloader_); }
  // Builds the next runtime and stops this one for the swap; false with
  // err (this one runs on) when it cannot be built or a swap is under way.
  bool swap_to(const std::function<std::unique_ptr<Runtime>(std::string&)>& build, std::string& err);
  // Swaps this runtime ended (it and those it replaced took part in the
  // run): its accounting counts theirs.
  uint32_t swaps() const { return swaps_; }
  // Packets the replaced runtimes held that no new element took: counted
  // as dropped (they are freed with the old graph).
  uint64_t swap_dropped() const { return swap_dropped_; }
  std::unique_ptr<Runtime> take_next();
  bool swap_pending() const { return swap_pending_.load(std::memory_order_acquire); }
  // A worker stopped for a swap: it only settled, and the rest of its
  // ending (drain) runs after the swap (run()).
  void note_settled() { settled_.store(true); }
  // The new runtime was built to replace a running one (elements that
  // would hold what the old one holds, a listening socket, wait for it).
  // `old`: the runtime it replaces, still running (its elements' settings
  // may be read, as a FromDevice does to take over the old socket).
  void set_replacement(Runtime* old) {
    replacing_ = old;
    replacement_ = old != nullptr;
  }
  bool replacement() const { return replacement_; }
  Runtime* replacing() const { return replacing_; }
  // Calls each new element's hot_swapped() with its old counterpart (same
  // name and class, same worker), then ends this runtime's replacement
  // state. The old runtime's run() calls it, once its workers stopped.
  void take_state_from(Runtime& old);
  // After the old one ended: its accounting becomes part of this one's
  // (what it still held is dropped), and a --duration counts from the
  // first start.
  void continue_from(const Runtime& old);
  // The program this runtime runs, kept alive with it.
  void own_program(std::shared_ptr<const Program> p) { owned_prog_ = std::move(p); }

  // A run-time error (a write that failed, a capture that could not be
  // read): printed once per distinct message, however many workers report
  // it; the run then ends with a failure status.
  // fail false: said, but not a failure of the run (a Script giving up on
  // a loop, as Click reports it without changing the exit status).
  void report_error(const std::string& msg, bool fail = true);
  std::vector<std::string> errors() const;
  bool failed() const { return failed_.load(std::memory_order_acquire); }

  // State an upper layer keeps per runtime (the offload layer's settings
  // and device: offload/services.hh): one T, made at the first call.
  template <class T>
  T& extension() {
    std::lock_guard<std::mutex> g(ext_mu_);
    auto& p = ext_[std::type_index(typeid(T))];
    if (!p) p = std::make_shared<T>();
    return *static_cast<T*>(p.get());
  }

 private:
  // Worker 0's copy of the element and handler "elem.handler" names, with
  // the read (or write) side present; else nullptr and err.
  const Handler* lookup(const std::string& ename, const std::string& hname, bool write, std::string& err);

 public:
  uint64_t elapsed_ns() const;

 private:
  const Program& prog_;
  RunOptions opt_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::unique_ptr<Router>> routers_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> stop_events_{0};
  std::atomic<uint64_t> taken_signals_{0};
  std::array<std::atomic<uint64_t>, 64> signal_gen_{};
  std::atomic<int> quiescent_{0};
  bool driver_manager_ = false;
  std::mutex stop_mu_;
  std::mutex ext_mu_;
  std::map<std::type_index, std::shared_ptr<void>> ext_;
  std::map<int, int> stop_requests_;
  mutable std::mutex err_mu_;
  std::vector<std::string> errors_;
  std::atomic<bool> failed_{false};
  uint64_t start_ns_ = 0, end_ns_ = 0;
  uint64_t origin_ns_ = 0;  // the first runtime's start (hot swaps)
  Accounting before_;       // the runtimes this one replaced
  uint32_t swaps_ = 0;
  uint64_t swap_dropped_ = 0;
  Builder builder_;
  Reloader reloader_;
  std::mutex next_mu_;
  std::unique_ptr<Runtime> next_;
  std::atomic<bool> swap_pending_{false};
  std::atomic<bool> settled_{false};
  bool finished_ = false;  // run() returned its workers (under next_mu_)
  bool replacement_ = false;
  Runtime* replacing_ = nullptr;
  std::shared_ptr<const Program> owned_prog_;
};

}  // namespace shoal
