// Shared by the shoal subcommands.
#pragma once
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "shoal/config/config.hh"
#include "shoal/core/runtime.hh"
#include "shoal/offload/services.hh"

namespace shoal::tool {

// Seconds since t (the benchmarks' timing).
inline double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// What `shoal run` (and `shoal click`) runs, and how.
struct RunArgs {
  std::string file;
  std::vector<std::string> words;  // NAME=value
  std::string text, text_name;     // a configuration given as text (text_name non-empty), not a file
  int threads = 1;
  double duration = 0;
  std::string stats;
  std::string stats_out;
  double stats_interval = 0;
  std::string device = "auto";
  uint32_t batch = 256, pool = 8192;
  bool quiet = false;
  bool init_only = false;       // configure and initialize, then exit (Click's -q)
  bool click_messages = false;  // run-time errors as Click prints them
  bool simtime = false;         // Click's --simtime: simulated time (one worker)
  double simtime_start = 1e9;   // ... from this many seconds (Click's default)
  bool hotswap = false;         // the global 'hotconfig' handler installs a new configuration (Click's -R)
  std::string hot_suffix;       // text added to every configuration (the -p/-u ControlSockets)
  uint32_t device_delay_us = 0, host_threads = 0;
  double device_faults = 0;
  std::string metrics;              // --metrics [ADDR:]PORT: Prometheus' /metrics while the run lasts
  std::string web;                  // --web [ADDR:]PORT: the live dashboard
  bool web_writes = false;          // --web-writes: the dashboard may write handlers
  std::optional<std::string> dpdk;  // --dpdk "EAL ARGS": DPDK's EAL arguments (replacing the defaults)
  uint32_t offload_batches = 32, offload_timeout_us = 200, offload_inflight = 8;
  bool offload_schedule = false;
  bool offload_adaptive = false;  // GPUNFV's dynamic aggregate size (offload::BatchSizer)
  uint32_t offload_latency_us = 0, offload_cpu_below = 0;
  bool offload_flow_serial = false;  // per-flow state not resident on the device (offload::Options::flow_resident)
  // Called after the run (or after initialization with init_only), before
  // cleanup; a non-zero result is the exit status.
  std::function<int(Runtime&)> at_exit;
  // Called once initialized, before the run; false ends it with status 1.
  std::function<bool(Runtime&)> at_init;
};
int cmd_run(const RunArgs& ra);
int cmd_click(int argc, char** argv, bool flatten = false);
int cmd_click_flatten(int argc, char** argv);  // click-flatten: -q -o -
int cmd_click_buildtool(int argc, char** argv);
int cmd_ids(int argc, char** argv);
int cmd_ctl(int argc, char** argv);  // a ControlSocket client

// Splits NAME=value words off the positional arguments.
bool parse_defines(const std::vector<std::string>& words, config::Defines& defs, std::string& err);
// All read handlers (except structural ones) of every element, drops by
// reason, and the accounting identity.
nlohmann::json stats_json(Runtime& rt);
// The handlers statistics show: not the structural ones, not those that take
// parameters, an element's offload_* ones only when it offloads in this run.
bool shown_handler(Runtime& rt, Element* e, const Handler& hd);
// Prometheus' text format (0.0.4) of the run's statistics (`--metrics`).
std::string prometheus_text(Runtime& rt);
// An HTTP server (cpp-httplib) on its own thread while a run lasts.
class HttpServer {
 public:
  ~HttpServer();
  // `where`: ADDR:PORT or PORT (127.0.0.1; 0: any free port); `routes` adds
  // the handlers to the httplib::Server it is given. False with err (naming
  // `option`) when it cannot listen.
  bool start(const std::string& where, const char* option, const std::function<void(void*)>& routes, std::string& err);
  void stop();
  int port() const { return port_; }
  const std::string& host() const { return host_; }

 private:
  std::shared_ptr<void> server_;  // httplib::Server
  std::thread thread_;
  int port_ = 0;
  std::string host_;
};
// --metrics: Prometheus' /metrics. `rt` gives the runtime running now (a
// reload replaces it).
bool start_metrics(HttpServer& s, const std::string& where, const std::function<Runtime&()>& rt, std::string& err);
// --web: the live dashboard (web.cc); handler writes only with `writes`.
bool start_web(HttpServer& s, const std::string& where, const std::function<Runtime&()>& rt, bool writes,
               std::string& err);
// The graph as the dashboard draws it: elements placed in columns (sources
// left, sinks right: the longest path from a source, cycles broken where a
// depth-first walk meets them) and rows (ordered by their neighbours'
// rows), and the connections.
nlohmann::json graph_json(Runtime& rt);
// running: counters read while packets move (the gap is "in flight").
std::string accounting_line(const Accounting& a, Runtime& rt, bool running = false);
// Writes text to path ("-": standard output), checking every write and the
// close; false with err (the file and the OS reason) otherwise.
bool write_file(const std::string& path, const std::string& text, std::string& err);
int cmd_bench(int argc, char** argv);
int cmd_bench_ids(int argc, char** argv);
// For benchmark records: a shell command's output, the CPU's name, and the
// pinned host-to-device bandwidth of a CUDA device (0 without one).
std::string sh(const char* cmd);
std::string cpu_model();
// Pinned host-to-device copy rate of the CUDA device (0 without one); `name`
// gets the device's description.
double pcie_h2d_bandwidth(std::string* name = nullptr);
// The "device" entry of a benchmark record: the CUDA device, or kind "none".
nlohmann::json cuda_device_record();
// A benchmark's JSON record: its name, the machine, commit (and whether the
// tree was dirty), version, date, and an empty "results" array.
nlohmann::json bench_record(const char* name);
// Writes a benchmark's JSON to `out` (its folder made; nothing when empty);
// false, with the reason on standard error, when it cannot.
bool write_bench_json(const std::string& out, const nlohmann::json& j);
// A configuration's packets per second: the packets its Counter "c" saw
// over its elapsed run time (offload: on the CUDA device, with a larger
// pool and aggregates); -1 with err when it does not run or balance.
double graph_pps(const std::string& text, bool offload, uint64_t& packets, std::string& err);
// graph_run with these offload options (nullptr: no offloading).
double graph_run_with(const std::string& text, const offload::Options* offload, const std::vector<std::string>& read,
                      std::map<std::string, std::string>* got, uint64_t& packets, std::string& err,
                      uint32_t pool = 65536);
// The same on a chosen device ("" none, host, cuda, auto), reading the
// handlers `read` into `got` after the run.
double graph_run(const std::string& text, const std::string& device, const std::vector<std::string>& read,
                 std::map<std::string, std::string>* got, uint64_t& packets, std::string& err);
int cmd_bench_classify(int argc, char** argv);
int cmd_bench_flow(int argc, char** argv);
int cmd_bench_nf(int argc, char** argv);
// Configuration load and configure time against the number of inline routes.
void bench_config_load(const std::vector<size_t>& sizes, nlohmann::json& j);
int cmd_bench_snap(int argc, char** argv);
int cmd_bench_scale(int argc, char** argv);
int cmd_bench_ipsec(int argc, char** argv);

// Snap's applications (bench-snap, bench-scale): configurations with
// {src} (the packet source), {sink}, {acl} (the SDN rules), {ids} (the
// examples' IDS folder); the offloaded form (Snap's) also {batch} and
// {slice}, and {r0} {r1} for the router's ports.
struct SnapApp {
  const char* name;
  const char* cpu;
  const char* offload;  // nullptr: CPU only
  bool in_snap = true;  // one of Snap's Figure 8 applications
};
const std::vector<SnapApp>& snap_apps();
constexpr uint32_t kSnapFlows = 1024;
// Frame i of Snap's trace (size bytes, TCP to port 80 from flow
// i % kSnapFlows, every 100th payload with "<script"); returns size.
uint32_t snap_frame(uint64_t i, uint32_t size, uint8_t* f);
// The routes of Snap's routers ({r0}, {r1}: the ports), for the traffic above.
#define SHOAL_SNAP_ROUTES "10.0.0.64/26 10.0.0.126 {r1}, 10.0.0.0/24 {r0}, 0.0.0.0/0 10.0.0.254 {r1}"
// Replaces each {name} in t by its value.
std::string fill(std::string t, const std::map<std::string, std::string>& v);

// bench-ids' made-up rule sets and traffic: n distinct web-attack-like
// contents, their rules (alert tcp any any -> any 80, content, nocase), and
// HTTP-like requests padded to frame_len, a fraction `frac` of them holding
// one of the contents.
std::vector<std::string> make_ids_contents(size_t n, std::mt19937& rng);
// With pcre_share > 0, that share of the rules (every 1/share-th) also
// has a yes/no pcre after its content (a parameter of a query: letters, '='
// and digits), as web-attack rules often do.
std::string ids_rule_text(const std::vector<std::string>& contents, double pcre_share = 0);
struct IdsTraffic {
  std::vector<std::vector<uint8_t>> frames;
  uint64_t bytes = 0;
  uint32_t planted = 0;
};
// HTTP-like requests to port 80; with to_client, that share of the packets
// come from port 80 to the client instead (the same bytes).
IdsTraffic make_ids_traffic(const std::vector<std::string>& contents, uint32_t frame_len, double frac, size_t count,
                            std::mt19937& rng, double to_client = 0);

}  // namespace shoal::tool
