// shoal bench-scale: many workers feeding one device. Snap's applications
// (the trivial forwarder, the IPv4 router, the SDN forwarder, the DPI and
// IDS routers) and a large IDS (made-up web-attack rules, 1% of packets
// matching) at several packet sizes, for 1..N workers, on the CPU and
// offloaded, from memory: each worker preloads its flows' share of a trace
// (FromDump -> ReplayUnqueue) and replays it for --seconds, so reading the
// file is not measured. Per row: Mpps and Gbps (packets over the longest
// worker's replay time), the share of the forwarder with as many workers
// (Snap's headline: the IDS router at 90%), the offloaded row against the
// CPU row, bytes over the bus per packet and the bus use against a bare
// pinned copy loop in the same run, the share of the workers' time spent
// packing, queueing and completing aggregates (the rest is the graph and
// idle), aggregate latency percentiles (Snap form) and, on CUDA, the
// device's utilisation as NVML samples it. JSON to --out.
#include <dlfcn.h>
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "common.hh"
#include "shoal/classbench/classbench.hh"
#include "shoal/config/config.hh"
#include "shoal/ids/engine.hh"
#include "shoal/io/pcap.hh"
#include "shoal/offload/balance.hh"
#include "shoal/offload/services.hh"

namespace shoal::tool {

namespace {

using clk = std::chrono::steady_clock;

// The device's kernel-busy share (NVML's utilization.gpu), sampled every
// 50 ms on a thread while a run lasts; loaded at run time so the program
// needs no NVML to start. Without it (no driver, host backend) no figure.
class GpuUtilSampler {
 public:
  GpuUtilSampler() {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) return;
    init_ = reinterpret_cast<int (*)()>(dlsym(lib_, "nvmlInit_v2"));
    handle_ = reinterpret_cast<int (*)(unsigned, void**)>(dlsym(lib_, "nvmlDeviceGetHandleByIndex_v2"));
    util_ = reinterpret_cast<int (*)(void*, unsigned*)>(dlsym(lib_, "nvmlDeviceGetUtilizationRates"));
    if (!init_ || !handle_ || !util_ || init_() != 0 || handle_(0, &dev_) != 0) dev_ = nullptr;
  }
  ~GpuUtilSampler() {
    stop();
    if (lib_) dlclose(lib_);
  }
  bool usable() const { return dev_ != nullptr; }
  void start() {
    if (!dev_) return;
    samples_.clear();
    run_ = true;
    th_ = std::thread([this] {
      while (run_) {
        unsigned u[2] = {0, 0};  // nvmlUtilization_t: gpu, memory (percent)
        if (util_(dev_, u) == 0) samples_.push_back({clk::now(), u[0]});
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    });
  }
  void stop() {
    run_ = false;
    if (th_.joinable()) th_.join();
  }
  // Mean of the samples taken in [from, to]; -1 without any.
  double mean(clk::time_point from, clk::time_point to) const {
    double s = 0;
    int n = 0;
    for (const auto& x : samples_)
      if (x.t >= from && x.t <= to) s += x.v, ++n;
    return n ? s / n : -1;
  }

 private:
  struct Sample {
    clk::time_point t;
    unsigned v;
  };
  void* lib_ = nullptr;
  void* dev_ = nullptr;
  int (*init_)() = nullptr;
  int (*handle_)(unsigned, void**) = nullptr;
  int (*util_)(void*, unsigned*) = nullptr;
  std::vector<Sample> samples_;
  std::atomic<bool> run_{false};
  std::thread th_;
};

// The adaptive balancer's climber (offload/balance.hh) replayed on a curve
// measured here (the fixed splits' rates, linear between them): the mean
// rate over `epochs` in percent of the curve's best, with multiplicative
// noise (normal, `noise` of the rate) and each move's interval mixing the
// two shares, over 20 seeds. What the controller achieves on this machine's
// curve without its noise, its workers' coupling or a device's warm-up.
double model_alb(const std::vector<std::pair<double, double>>& curve, int epochs, double noise) {
  auto at = [&](double w) {
    for (size_t i = 0; i + 1 < curve.size(); ++i)
      if (w <= curve[i + 1].first + 1e-12)
        return curve[i].second +
               (w - curve[i].first) / (curve[i + 1].first - curve[i].first) * (curve[i + 1].second - curve[i].second);
    return curve.back().second;
  };
  double top = 0, sum = 0;
  for (int k = 0; k <= 100; ++k) top = std::max(top, at(k / 100.0));
  if (top <= 0) return 0;
  for (int seed = 0; seed < 20; ++seed) {
    std::mt19937 rng(uint32_t(seed) * 7 + 1);
    std::normal_distribution<double> g(0, noise);
    offload::BalanceParams bp;
    offload::HillClimber h(bp, 0.5);
    double s = h.share(), prev = s, got = 0, t = 0, w = 1;
    while (t < epochs) {
      const double r = (at(s) + at(prev)) / 2;
      got += r * w, t += w;
      prev = s;
      s = h.update(r * std::max(0.0, 1 + g(rng)), 1.0, -1);
      w = h.settling() ? 0.25 : 1;  // (OffloadBalancer's settling intervals are a quarter long)
    }
    sum += got / t / top;
  }
  return 100 * sum / 20;
}

struct Point {
  double pps = -1, replay_s = 0, gpu_util = -1;
  double settled_pps = -1;          // with a settle time: the packets per second after it
  std::map<std::string, double> h;  // handler values read after the run
  std::string latency;
};

// Runs one configuration with `threads` workers (device "" for none) and
// reads its counters: packets are c.count (+ x.count), time r.time.
uint32_t g_device_delay_us = 0;  // --device-delay-us (the host backend's injected delay)

Point run_scale(const std::string& text, int threads, const std::string& device, uint32_t batches,
                const std::vector<std::string>& handlers, GpuUtilSampler* util, std::string& err, double settle_s = 0) {
  Point pt;
  Program prog;
  Diagnostics diag;
  if (!config::load_string("bench-scale", text, {}, prog, diag)) return err = diag.text(), pt;
  RunOptions opt;
  opt.threads = threads;
  opt.duration_s = 300;
  opt.pool.count = 65536;
  offload::Options oo;
  if (!device.empty()) {
    oo.device.kind = device;
    oo.device.delay_us = g_device_delay_us;
    oo.batches = batches;
  }
  Runtime rt(prog, opt);
  offload::set_options(rt, oo);
  if (!rt.configure(diag) || !rt.initialize(diag)) return err = diag.text(), pt;
  auto num = [&](const std::string& h) {
    std::string v, e;
    return rt.read_handler(h, v, e) ? std::strtod(v.c_str(), nullptr) : -1.0;
  };
  auto count = [&] { return std::max(0.0, num("c.count")) + std::max(0.0, num("x.count")); };
  // With a settle time, the packets counted then (read while the graph runs,
  // as a user's handler read is), so an adaptive mode's exploration at the
  // start is told apart from where it settles.
  std::atomic<bool> running{true};
  double settled_packets = -1;
  clk::time_point settled_at;
  std::thread settle;
  if (util) util->start();
  clk::time_point start = clk::now();
  if (settle_s > 0)
    settle = std::thread([&] {
      const auto until = start + std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(settle_s));
      while (running.load() && clk::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      if (!running.load()) return;
      settled_packets = count();
      settled_at = clk::now();
    });
  rt.run();
  clk::time_point end = clk::now();
  running = false;
  if (settle.joinable()) settle.join();
  if (util) util->stop();
  double packets = count();
  if (settled_packets >= 0 && end > settled_at)
    pt.settled_pps = (packets - settled_packets) / std::chrono::duration<double>(end - settled_at).count();
  pt.replay_s = num("r.time");
  for (const std::string& h : handlers)
    if (double v = num(h); v >= 0) pt.h[h] = v;
  if (std::string v, e; rt.read_handler("cq.latency", v, e)) pt.latency = v;
  bool balanced = rt.accounting().balanced();
  rt.cleanup();
  if (!balanced) return err = "accounting does not balance", pt;
  if (pt.replay_s <= 0) return err = "the replay did not run", pt;
  pt.pps = packets / pt.replay_s;
  if (util) {  // the replay's samples, less its first 100 ms (the pipeline filling)
    auto span = std::chrono::duration_cast<clk::duration>(std::chrono::duration<double>(pt.replay_s - 0.1));
    pt.gpu_util = util->mean(end - span, end);
  }
  return pt;
}

bool write_pcap(const std::string& path, uint64_t n, const std::function<uint32_t(uint64_t, uint8_t*)>& frame,
                std::string& err) {
  io::PcapWriter w;
  if (!w.open(path, 1, 65535, true, err)) return false;
  std::vector<uint8_t> buf(65536);
  for (uint64_t i = 0; i < n; ++i) {
    uint32_t len = frame(i, buf.data());
    w.write(buf.data(), len, len, 1700000000000000000ull + i * 1000);
  }
  if (!w.close()) return err = w.error(), false;
  return true;
}

}  // namespace

int cmd_bench_scale(int argc, char** argv) {
  CLI::App app{
      "shoal bench-scale: applications x packet sizes x workers, CPU vs offloaded, from memory: Mpps, Gbps, "
      "share of the forwarder, bytes over the bus, the workers' time per offload stage, device utilisation"};
  std::string out = "bench-scale.json", device = "auto", data = "examples/data";
  std::vector<uint32_t> sizes = {64, 512, 1518};
  std::vector<int> threads = {1, 2};
  std::vector<std::string> only;
  uint64_t packets = 200000, mbytes = 128;
  uint32_t batch = 1024, ids_rules = 10000, seconds = 1;
  double ids_match = 0.01;
  std::vector<uint32_t> ids_chunks = {128};
  uint32_t zero_copy = 0;
  bool alb = false;
  std::vector<double> fractions = {0, 0.25, 0.5, 0.75, 1};
  double alb_latency = 0;
  bool alb_per_worker = false;
  std::string alb_interval = "20ms";
  double settle = 1;
  app.add_option("--out", out, "JSON results");
  app.add_option("--device", device, "device for the offloaded rows: auto, cuda, host (default auto)");
  app.add_option("--threads", threads, "worker counts (default 1 2)");
  app.add_option("--sizes", sizes, "frame sizes (default 64 512 1518)");
  app.add_option("--app", only,
                 "applications: forward router sdn-forwarder dpi-router ids-router ids, and with --alb ipsec and "
                 "ipsec-in (default all)");
  std::string ipsec_suite = "ctr-sha1";
  app.add_option("--ipsec-suite", ipsec_suite,
                 "--alb's IPsec gateway: ctr-sha1 (NBA's AES-128-CTR with HMAC-SHA1-96, the default) or gcm "
                 "(AES-128-GCM)");
  app.add_option("--batch", batch, "packets per aggregate of the offloaded rows (default 1024)");
  app.add_option("--seconds", seconds, "replay time per row, whole seconds (default 1)");
  app.add_option("--packets", packets, "frames in each trace (fewer for large frames: see --mbytes)");
  app.add_option("--mbytes", mbytes, "trace size cap in MiB");
  app.add_option("--ids-rules", ids_rules, "rules of the large IDS (default 10000)");
  app.add_option("--ids-match", ids_match, "share of its packets holding a rule's content (default 0.01)");
  app.add_option("--ids-chunk", ids_chunks,
                 "the large IDS's offloaded rows for each SCAN_CHUNK (bytes per device thread; 0: a thread per "
                 "packet; default 128)");
  app.add_option("--zero-copy", zero_copy,
                 "also the Snap forms with HostToDevice's ZERO_COPY at this many bytes per packet (rows offload-zc)");
  app.add_option("--data", data, "the examples' data folder (rules)");
  app.add_flag("--alb", alb,
               "NBA's evaluation instead: the IPv4 router, the SDN forwarder, the large IDS and the IPsec gateway "
               "(IPsecOutbound, --ipsec-suite; and IPsecInbound on the sealed trace, ipsec-in) in NBA's form, at each "
               "fixed --fraction and with OffloadBalancer's adaptive mode (and its latency bound with "
               "--alb-latency), the adaptive rows against the best fixed split");
  app.add_option("--fraction", fractions, "--alb: the fixed splits swept (default 0 0.25 0.5 0.75 1)");
  app.add_option("--alb-latency", alb_latency, "--alb: also the adaptive mode with this p99 bound (microseconds)");
  app.add_flag("--alb-per-worker", alb_per_worker,
               "--alb: also the adaptive mode with a climber per worker (SHARED false: row alb-own), against the "
               "default's one climber on every worker's rate");
  app.add_option("--alb-interval", alb_interval, "--alb: the adaptive mode's INTERVAL (default 20ms)");
  app.add_option("--settle,--alb-settle", settle,
                 "also each row's rate after this many seconds (when shorter than --seconds): a device's start "
                 "in a new graph (its tables, buffers, first aggregates), and with --alb the adaptive mode's "
                 "exploration, told apart from where it settles (default 1)");
  app.add_option("--device-delay-us", g_device_delay_us,
                 "host backend: each device operation first waits up to this long (a slower device)");
  CLI11_PARSE(app, argc, argv);
  if (seconds < 1) return fmt::print(stderr, "bench-scale: --seconds must be at least 1\n"), 1;
  if (ipsec_suite != "ctr-sha1" && ipsec_suite != "gcm")
    return fmt::print(stderr, "bench-scale: --ipsec-suite {}: ctr-sha1 or gcm\n", ipsec_suite), 1;

  nlohmann::json j = bench_record("scale");
  j["device"] = cuda_device_record();
  if (device == "auto") device = j["device"]["kind"] == "cuda" ? "cuda" : "host";
  double bus = j["device"].value("pcie_h2d_bytes_per_sec", 0.0);
  j["offload_device"] = device;
  j["settings"] = {{"packets", packets},
                   {"mbytes", mbytes},
                   {"sizes", sizes},
                   {"threads", threads},
                   {"batch", batch},
                   {"seconds", seconds},
                   {"ids_rules", ids_rules},
                   {"ids_match", ids_match},
                   {"zero_copy", zero_copy},
                   {"persistent", std::getenv("SHOAL_CUDA_PERSISTENT") ? std::getenv("SHOAL_CUDA_PERSISTENT") : "0"}};
  std::string dir = std::filesystem::temp_directory_path() / ("shoal-bench-scale-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string err;
  std::string ids = std::filesystem::absolute(data + "/ids").string();
  if (!std::filesystem::exists(ids + "/local.rules")) {
    fmt::print(stderr, "bench-scale: no {}/local.rules (run from the repository, or give --data)\n", ids);
    return 1;
  }
  auto wants = [&](const char* n) { return only.empty() || std::find(only.begin(), only.end(), n) != only.end(); };
  // The SDN forwarder's access list, as bench-snap's.
  std::string acl = dir + "/acl1k.rules";
  {
    classify::GenSpec g;
    g.flavor = classify::Flavor::Acl;
    g.rules = 1000;
    g.seed = 1;
    g.ports = 4;
    g.catch_all = true;
    std::ofstream o(acl);
    for (const auto& r : classify::generate(g)) o << classify::unparse_rule(r) << "\n";
  }
  // The large IDS: made-up web-attack contents, one rule each.
  std::mt19937 rng(7);
  std::vector<std::string> contents;
  std::string big_rules = dir + "/web.rules";
  if (wants("ids")) {
    contents = make_ids_contents(ids_rules, rng);
    std::ofstream(big_rules) << ids_rule_text(contents);
  }
  // The IPsec gateway's SAs: the trace's traffic (203.0.113.0/24 to
  // 10.0.0.0/16) sealed into one tunnel, as NBA's gateway does.
  std::string sad = dir + "/gateway.sad";
  if (alb && wants("ipsec"))
    std::ofstream(sad) << fmt::format(
        "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x1001 reqid 1 mode tunnel flag esn {}\n"
        "ip xfrm policy add src 203.0.113.0/24 dst 10.0.0.0/16 dir out tmpl src 192.0.2.1 dst 192.0.2.2 proto esp "
        "reqid 1 mode tunnel\n",
        ipsec_suite == "gcm" ? "aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128"
                             : "enc 'rfc3686(ctr(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 auth-trunc "
                               "'hmac(sha1)' 0x000102030405060708090a0b0c0d0e0f10111213 96");
  // The inbound gateway (--alb's ipsec-in): the same suite without ESN and
  // with the anti-replay check off (`replay-window 0`, as on Linux), since
  // the replay sends each packet again; its ESP trace is sealed by
  // IPsecOutbound from the plain one.
  std::string sad_in = dir + "/gateway-in.sad";
  if (alb && wants("ipsec-in"))
    std::ofstream(sad_in) << fmt::format(
        "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x1002 reqid 2 mode tunnel replay-window 0 {}\n"
        "ip xfrm policy add src 203.0.113.0/24 dst 10.0.0.0/16 dir out tmpl src 192.0.2.1 dst 192.0.2.2 proto esp "
        "reqid 2 mode tunnel\n"
        "ip xfrm policy add src 203.0.113.0/24 dst 10.0.0.0/16 dir in tmpl src 192.0.2.1 dst 192.0.2.2 proto esp "
        "reqid 2 mode tunnel\n",
        ipsec_suite == "gcm" ? "aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128"
                             : "enc 'rfc3686(ctr(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 auth-trunc "
                               "'hmac(sha1)' 0x000102030405060708090a0b0c0d0e0f10111213 96");
  GpuUtilSampler sampler;
  GpuUtilSampler* util = device == "cuda" && sampler.usable() ? &sampler : nullptr;
  fmt::print("shoal bench-scale on {} ({} cores); offloaded rows on {}; bare pinned copy {:.1f} GB/s\n", cpu_model(),
             std::thread::hardware_concurrency(),
             device == "cuda" ? j["device"].value("detail", "cuda") : "the host backend (machinery, not speed)",
             bus / 1e9);
  const double settle_s = settle < double(seconds) ? settle : 0;
  fmt::print("{:<13} {:>5} {:>3} {:<11} {:>8} {:>7} {:>6} {:>6} {:>13} {:>7} {:>5} {:>17} {:>5} {:>18}\n", "app",
             "bytes", "wk", "mode", "Mpps", "Gbps", "vsfwd", "vscpu",
             settle_s > 0 ? fmt::format("after {:g}s", settle_s) : "-", "B/pkt", "bus", "pack/launch/done", "gpu",
             "lat p50/p99 us");
  const std::vector<std::string> h_snap = {"h.packets",           "h.h2d_bytes",      "h.d2h_bytes", "h.pack_ns",
                                           "h.launch_ns",         "h.complete_ns",    "h.cpu_busy",  "h.aggregates",
                                           "h.device_aggregates", "h.device_packets", "h.zero_copy", "h.ring_launches"};
  const std::vector<std::string> h_nba = {
      "i.offload_packets",           "i.offload_h2d_bytes",      "i.offload_d2h_bytes",    "i.offload_pack_ns",
      "i.offload_launch_ns",         "i.offload_complete_ns",    "i.offload_cpu_busy",     "i.offload_aggregates",
      "i.offload_device_aggregates", "i.offload_device_packets", "i.offload_ring_launches"};
  // The traces of one frame size: Snap's flows, and the large IDS's traffic.
  auto make_traces = [&](uint32_t size, const std::string& pcap, const std::string& ids_pcap) {
    uint64_t n = std::max<uint64_t>(1, std::min<uint64_t>(packets, (mbytes << 20) / size));
    if (!write_pcap(
            pcap, n, [&](uint64_t i, uint8_t* f) { return snap_frame(i, size, f); }, err))
      return false;
    if (!wants("ids")) return true;
    IdsTraffic t = make_ids_traffic(contents, size, ids_match, size_t(std::min<uint64_t>(n, 100000)), rng);
    return write_pcap(
        ids_pcap, t.frames.size(),
        [&](uint64_t i, uint8_t* f) {
          std::copy(t.frames[i].begin(), t.frames[i].end(), f);
          return uint32_t(t.frames[i].size());
        },
        err);
  };
  std::map<std::pair<uint32_t, int>, double> fwd, fwd_settled;  // (size, workers) -> the forwarder's rate
  // The device's first use in the process (CUDA's context, its kernels'
  // loading) is made on a short untimed run, as bench-ipsec does: otherwise
  // the first offloaded row measures it.
  bool warmed = device.empty();
  auto warm_src = [](const std::string& trace) {
    return fmt::format("FromDump({}, STOP false) -> r :: ReplayUnqueue(STOP 1, STOP_TIME 1)", trace);
  };
  for (uint32_t size : alb ? std::vector<uint32_t>{} : sizes) {
    size = std::clamp<uint32_t>(size, 64, 1518);
    std::string pcap = fmt::format("{}/trace-{}.pcap", dir, size), ids_pcap = fmt::format("{}/ids-{}.pcap", dir, size);
    if (!make_traces(size, pcap, ids_pcap)) return fmt::print(stderr, "bench-scale: {}\n", err), 1;
    struct Row {
      std::string app;
      std::string cpu;               // configuration ({src} filled later)
      std::vector<std::string> off;  // offloaded forms (none, one, or one per SCAN_CHUNK)
      std::vector<std::string> mode;
      bool nba = false;
    };
    std::vector<Row> rows;
    for (const SnapApp& a : snap_apps()) {
      if (!wants(a.name)) continue;
      std::map<std::string, std::string> v = {
          {"sink", "Discard"}, {"acl", acl}, {"ids", ids}, {"batch", std::to_string(batch)},
          {"slice", "true"},   {"r0", "0"},  {"r1", "1"},  {"zc", "0"}};
      std::string cpu = fill(a.cpu, v);
      if (std::string_view(a.name) == "ids-router") v["r0"] = "2", v["r1"] = "3";
      Row r{a.name, cpu, {}, {}, false};
      if (a.offload) r.off.push_back(fill(a.offload, v)), r.mode.push_back("offload");
      if (a.offload && zero_copy) {  // the same with small aggregates read in place
        v["zc"] = std::to_string(zero_copy);
        r.off.push_back(fill(a.offload, v)), r.mode.push_back("offload-zc");
      }
      rows.push_back(r);
    }
    if (wants("ids")) {
      std::string m = fmt::format("i :: IDSMatcher(RULES {}, ENGINE {}, QUIET true", big_rules,
                                  ids::have_hyperscan() ? "hyperscan" : "builtin");
      Row r{"ids", "{src} -> " + m + ") -> c :: Counter -> Discard;", {}, {}, true};
      for (uint32_t ch : ids_chunks) {
        r.off.push_back(
            fmt::format("{{src}} -> OffloadBalancer(1) -> {}, SCAN_CHUNK {}) -> c :: Counter -> Discard;", m, ch));
        r.mode.push_back(ids_chunks.size() > 1 ? fmt::format("offload-c{}", ch) : "offload");
      }
      rows.push_back(r);
    }
    for (const Row& row : rows) {
      std::string trace = row.app == "ids" ? ids_pcap : pcap;
      std::string src =
          fmt::format("FromDump({}, STOP false) -> r :: ReplayUnqueue(STOP -1, STOP_TIME {})", trace, seconds);
      for (int t : threads) {
        double cpu_pps = 0, cpu_settled = 0;
        for (size_t off = 0; off <= row.off.size(); ++off) {
          std::string text = fill(off ? row.off[off - 1] : row.cpu, {{"src", src}});
          std::string mode = off ? row.mode[off - 1] : "cpu";
          const auto& hs = off ? (row.nba ? h_nba : h_snap) : std::vector<std::string>{};
          if (off && !warmed) {  // the device's first use in this process (its context, kernels): untimed
            warmed = true;
            std::string e;
            run_scale(fill(row.off[off - 1], {{"src", warm_src(trace)}}), t, device, std::max<uint32_t>(1, batch / 64),
                      {}, nullptr, e);
          }
          Point pt = run_scale(text, t, off ? device : "", std::max<uint32_t>(1, batch / 64), hs, off ? util : nullptr,
                               err, settle_s);
          if (pt.pps < 0) return fmt::print(stderr, "bench-scale: {} {} x{}: {}\n", row.app, size, t, err), 1;
          if (row.app == "forward") fwd[{size, t}] = pt.pps, fwd_settled[{size, t}] = pt.settled_pps;
          if (!off) cpu_pps = pt.pps, cpu_settled = pt.settled_pps;
          nlohmann::json r = {{"app", row.app},         {"size", size},         {"workers", t},
                              {"mode", mode},           {"mpps", pt.pps / 1e6}, {"gbps", pt.pps * size * 8 / 1e9},
                              {"replay_s", pt.replay_s}};
          std::string vsfwd = "-", vscpu = "-", bpp = "-", bususe = "-", stages = "-", gpu = "-", lat = "-",
                      later = "-";
          // after the settle time: the same ratios without the graph's start
          if (pt.settled_pps > 0) {
            r["mpps_settled"] = pt.settled_pps / 1e6;
            later = fmt::format("{:.2f}", pt.settled_pps / 1e6);
            if (fwd_settled[{size, t}] > 0) r["vs_forward_settled"] = pt.settled_pps / fwd_settled[{size, t}];
            if (off && cpu_settled > 0) {
              r["vs_cpu_settled"] = pt.settled_pps / cpu_settled;
              later += fmt::format(" {:.2f}x", pt.settled_pps / cpu_settled);
            }
          }
          if (fwd.count({size, t})) {
            r["vs_forward"] = pt.pps / fwd[{size, t}];
            vsfwd = fmt::format("{:.0f}%", 100 * pt.pps / fwd[{size, t}]);
          }
          if (off) {
            r["vs_cpu"] = pt.pps / cpu_pps;
            vscpu = fmt::format("{:.2f}", pt.pps / cpu_pps);
            std::string pre = row.nba ? "i.offload_" : "h.";
            // bytes per packet that went to the device; stage shares over all
            double pk = pt.h.count(pre + "device_packets") ? pt.h[pre + "device_packets"] : 0;
            if (pk > 0) {
              double h2d = pt.h[pre + "h2d_bytes"], d2h = pt.h[pre + "d2h_bytes"];
              if (pt.h[pre + "packets"] > 0) r["device_share"] = pk / pt.h[pre + "packets"];
              r["h2d_bytes_per_packet"] = h2d / pk;
              r["d2h_bytes_per_packet"] = d2h / pk;
              bpp = fmt::format("{:.0f}", (h2d + d2h) / pk);
              if (bus > 0) {
                r["bus_use"] = (h2d + d2h) / pt.replay_s / bus;
                bususe = fmt::format("{:.0f}%", 100 * (h2d + d2h) / pt.replay_s / bus);
              }
              double worker_ns = pt.replay_s * 1e9 * t;
              r["stage_share"] = {{"pack", pt.h[pre + "pack_ns"] / worker_ns},
                                  {"launch", pt.h[pre + "launch_ns"] / worker_ns},
                                  {"complete", pt.h[pre + "complete_ns"] / worker_ns}};
              stages =
                  fmt::format("{:.0f}/{:.0f}/{:.0f}%", 100 * pt.h[pre + "pack_ns"] / worker_ns,
                              100 * pt.h[pre + "launch_ns"] / worker_ns, 100 * pt.h[pre + "complete_ns"] / worker_ns);
              r["aggregates"] = pt.h[pre + "aggregates"];
              if (pt.h.count(pre + "zero_copy")) r["zero_copy_aggregates"] = pt.h[pre + "zero_copy"];
              // (the persistent kernel's programs, SHOAL_CUDA_PERSISTENT: no driver call)
              if (pt.h.count(pre + "ring_launches")) r["ring_aggregates"] = pt.h[pre + "ring_launches"];
              r["device_aggregates"] = pt.h[pre + "device_aggregates"];
              r["cpu_busy_aggregates"] = pt.h[pre + "cpu_busy"];
            }
            if (pt.gpu_util >= 0) {
              r["gpu_util"] = pt.gpu_util / 100;
              gpu = fmt::format("{:.0f}%", pt.gpu_util);
            }
            if (!pt.latency.empty()) r["latency_us_p50_p99_p999"] = lat = pt.latency;
          }
          j["results"].push_back(r);
          fmt::print("{:<13} {:>5} {:>3} {:<11} {:>8.2f} {:>7.2f} {:>6} {:>6} {:>13} {:>7} {:>5} {:>17} {:>5} {:>18}\n",
                     row.app, size, t, mode, pt.pps / 1e6, pt.pps * size * 8 / 1e9, vsfwd, vscpu, later, bpp, bususe,
                     stages, gpu, lat);
          std::fflush(stdout);
        }
      }
    }
  }
  // NBA's evaluation (§4.5): each application at every fixed split and
  // adaptively, in one run.
  for (uint32_t size : alb ? sizes : std::vector<uint32_t>{}) {
    size = std::clamp<uint32_t>(size, 64, 1518);
    std::string pcap = fmt::format("{}/trace-{}.pcap", dir, size), ids_pcap = fmt::format("{}/ids-{}.pcap", dir, size);
    if (!make_traces(size, pcap, ids_pcap)) return fmt::print(stderr, "bench-scale: {}\n", err), 1;
    const std::string routes = fill(SHOAL_SNAP_ROUTES, {{"r0", "0"}, {"r1", "1"}});
    struct AlbApp {
      const char *name, *pre, *post;  // before and after the balancer
    };
    const std::string ids_el =
        fmt::format("i :: IDSMatcher(RULES {}, ENGINE {}, QUIET true) -> c :: Counter -> Discard;", big_rules,
                    ids::have_hyperscan() ? "hyperscan" : "builtin");
    const std::string rt_el = "rt :: DirectIPLookup(" + routes + "); rt[0] -> DecIPTTL -> c; rt[1] -> DecIPTTL -> c;";
    const std::string sdn_el = "s :: SDNClassifier(RULES " + acl + "); s[0] -> c; s[1] -> c; s[2] -> c; s[3] -> c;";
    std::vector<AlbApp> apps;
    if (wants("router"))
      apps.push_back({"router", "c :: Counter -> Discard; {src} -> CheckIPHeader(14) ->", rt_el.c_str()});
    if (wants("sdn-forwarder")) apps.push_back({"sdn-forwarder", "c :: Counter -> Discard; {src} ->", sdn_el.c_str()});
    if (wants("ids")) apps.push_back({"ids", "{src} ->", ids_el.c_str()});
    const std::string ipsec_el = "o :: IPsecOutbound(SAD " + sad + ", VERBOSE false) -> c;";
    if (wants("ipsec")) apps.push_back({"ipsec", "c :: Counter -> Discard; {src} -> Strip(14) ->", ipsec_el.c_str()});
    const std::string ipsec_in_el = "i :: IPsecInbound(SAD " + sad_in + ", VERBOSE false) -> c;";
    const std::string esp_pcap = fmt::format("{}/esp-{}.pcap", dir, size);
    if (wants("ipsec-in")) {
      uint64_t sealed = 0;
      if (graph_run(fmt::format("FromDump({}, STOP true) -> Strip(14) -> IPsecOutbound(SAD {}, VERBOSE false) -> c :: "
                                "Counter -> ToDump({}, ENCAP IP);",
                                pcap, sad_in, esp_pcap),
                    "", {}, nullptr, sealed, err) < 0 ||
          sealed == 0)
        return fmt::print(stderr, "bench-scale: sealing the ESP trace: {}\n", err.empty() ? "no packet" : err), 1;
      apps.push_back({"ipsec-in", "c :: Counter -> Discard; {src} ->", ipsec_in_el.c_str()});
    }
    std::vector<std::pair<std::string, std::string>> modes;  // (mode, balancer)
    modes.reserve(fractions.size() + 3);
    for (double f : fractions) modes.push_back({fmt::format("f{:g}", f), fmt::format("b :: OffloadBalancer({:g})", f)});
    modes.push_back({"alb", fmt::format("b :: OffloadBalancer(0.5, MODE adaptive, INTERVAL {})", alb_interval)});
    if (alb_per_worker)
      modes.push_back({"alb-own", fmt::format("b :: OffloadBalancer(0.5, MODE adaptive, INTERVAL {}, SHARED false)",
                                              alb_interval)});
    if (alb_latency > 0)
      modes.push_back({fmt::format("alb-p99<{:g}", alb_latency),
                       fmt::format("b :: OffloadBalancer(0.5, MODE adaptive, INTERVAL {}, LATENCY {:g})", alb_interval,
                                   alb_latency)});
    for (const AlbApp& a : apps) {
      std::string trace = std::string(a.name) == "ids" ? ids_pcap : std::string(a.name) == "ipsec-in" ? esp_pcap : pcap;
      std::string src =
          fmt::format("FromDump({}, STOP false) -> r :: ReplayUnqueue(STOP -1, STOP_TIME {})", trace, seconds);
      for (int t : threads) {
        double best = 0, best_settled = 0;
        std::string best_mode, best_settled_mode;
        std::vector<std::pair<double, double>> curve;  // (share, settled Mpps) of the fixed rows
        for (const auto& [mode, bal] : modes) {
          std::string text = fill(std::string(a.pre) + " " + bal + " -> " + a.post, {{"src", src}});
          Point pt =
              run_scale(text, t, device, std::max<uint32_t>(1, batch / 64),
                        {"b.fraction", "b.epochs", "b.turns", "b.over_bound", "b.latency_p99", "b.sweeps", "b.changes",
                         "b.band", "b.waits", "b.ramp_sweeps", "o.device_sealed", "i.device_opened", "c.count"},
                        nullptr, err, settle_s);
          if (pt.pps < 0) return fmt::print(stderr, "bench-scale: alb {} {} x{}: {}\n", a.name, mode, t, err), 1;
          bool adaptive = mode.rfind("alb", 0) == 0;
          if (!adaptive && pt.pps > best) best = pt.pps, best_mode = mode;
          if (!adaptive && pt.settled_pps > best_settled) best_settled = pt.settled_pps, best_settled_mode = mode;
          if (!adaptive && pt.h.count("b.fraction"))
            curve.emplace_back(pt.h["b.fraction"], (pt.settled_pps > 0 ? pt.settled_pps : pt.pps) / 1e6);
          nlohmann::json r = {{"benchmark", "alb"},
                              {"app", a.name},
                              {"size", size},
                              {"workers", t},
                              {"mode", mode},
                              {"mpps", pt.pps / 1e6},
                              {"gbps", pt.pps * size * 8 / 1e9}};
          std::string vs = "-", fr = "-";
          if (pt.h.count("o.device_sealed") && pt.h["c.count"] > 0)  // the gateway: what the device sealed
            r["device_sealed_share"] = pt.h["o.device_sealed"] / pt.h["c.count"];
          if (pt.h.count("i.device_opened") && pt.h["c.count"] > 0)  // the inbound gateway: what the device opened
            r["device_opened_share"] = pt.h["i.device_opened"] / pt.h["c.count"];
          if (pt.h.count("b.fraction"))
            r["final_fraction_worker0"] = pt.h["b.fraction"], fr = fmt::format("{:.2f}", pt.h["b.fraction"]);
          if (adaptive) {
            r["vs_best_fixed"] = pt.pps / best;
            r["best_fixed"] = best_mode;
            r["epochs"] = pt.h["b.epochs"];
            r["turns"] = pt.h["b.turns"];
            r["over_bound"] = pt.h["b.over_bound"];
            r["sweeps"] = pt.h["b.sweeps"];
            r["changes"] = pt.h["b.changes"];
            r["band"] = pt.h["b.band"];
            r["waits"] = pt.h["b.waits"];
            r["ramp_sweeps"] = pt.h["b.ramp_sweeps"];
            r["climber"] = mode == "alb-own" ? "per worker" : "shared";
            // the climber replayed on the fixed rows' curve: this run's length in intervals, and a long run
            std::sort(curve.begin(), curve.end());
            if (mode == "alb" && curve.size() >= 2) {
              const int epochs = std::max(20, int(pt.h["b.epochs"]));
              r["model_vs_best_fixed"] = {{"epochs", epochs},
                                          {"noise0", model_alb(curve, epochs, 0) / 100},
                                          {"noise5", model_alb(curve, epochs, 0.05) / 100},
                                          {"noise0_1000", model_alb(curve, 1000, 0) / 100}};
              fmt::print(
                  "{:<13} {:>5} {:>3} {:<14} the climber on the fixed rows' curve: {:.0f}% of the best over {} "
                  "intervals, {:.0f}% with 5% noise, {:.0f}% over 1000\n",
                  a.name, size, t, "(model)", model_alb(curve, epochs, 0), epochs, model_alb(curve, epochs, 0.05),
                  model_alb(curve, 1000, 0));
            }
            vs = fmt::format("{:.0f}% of {} ({} sweeps, {} on a change; band {:.3f})", 100 * pt.pps / best, best_mode,
                             pt.h["b.sweeps"], pt.h["b.changes"], pt.h["b.band"]);
            if (pt.settled_pps > 0 && best_settled > 0) {
              r["mpps_settled"] = pt.settled_pps / 1e6;
              r["vs_best_fixed_settled"] = pt.settled_pps / best_settled;
              r["best_fixed_settled"] = best_settled_mode;
              vs += fmt::format("; after {:g} s {:.2f} Mpps, {:.0f}% of {}", settle, pt.settled_pps / 1e6,
                                100 * pt.settled_pps / best_settled, best_settled_mode);
            }
          } else if (pt.settled_pps > 0) {
            r["mpps_settled"] = pt.settled_pps / 1e6;
            vs = fmt::format("after {:g} s {:.2f} Mpps", settle, pt.settled_pps / 1e6);
          }
          j["results"].push_back(r);
          fmt::print("{:<13} {:>5} {:>3} {:<14} {:>8.2f} {:>7.2f}  share {:>5}  {}\n", a.name, size, t, mode,
                     pt.pps / 1e6, pt.pps * size * 8 / 1e9, fr, vs);
          std::fflush(stdout);
        }
      }
    }
  }
  std::filesystem::remove_all(dir);
  std::ofstream(out) << j.dump(2) << "\n";
  fmt::print("wrote {}\n", out);
  return 0;
}

}  // namespace shoal::tool
