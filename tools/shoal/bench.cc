// shoal bench: the foundation's throughput benchmarks. Each case runs in
// process for a fixed time per (threads, batch) point; the median of several
// runs is reported in Mpps. Prints a table and writes JSON with the machine,
// the device and the commit.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common.hh"
#include "shoal/core/version.hh"
#include "shoal/device/device.hh"

namespace shoal::tool {

namespace {

struct Case {
  const char* name;
  const char* what;
  const char* config;  // $BURST, $LENGTH and $FLOWS are set per point
};

const Case kCases[] = {
    {"forward", "generator -> Counter -> Discard",
     "FastUDPFlows(LENGTH $LENGTH, FLOWS $FLOWS, BURST $BURST) -> c :: Counter -> Discard;"},
    {"classifier", "generator -> Classifier -> Counter -> Discard",
     "FastUDPFlows(LENGTH $LENGTH, FLOWS $FLOWS, BURST $BURST)"
     " -> cl :: Classifier(12/0806, 12/0800 23/06, 12/0800 23/11, -);"
     " cl[0] -> Discard; cl[1] -> Discard; cl[2] -> c :: Counter -> Discard; cl[3] -> Discard;"},
    {"classifier-split", "generator (60% TCP, 30% UDP, 10% ICMP) -> Classifier, 3 ways -> Counters",
     "FastUDPFlows(LENGTH $LENGTH, FLOWS $FLOWS, BURST $BURST, PROTO mix)"
     " -> cl :: Classifier(12/0800 23/06, 12/0800 23/11, -);"
     " cl[0] -> c :: Counter -> Discard; cl[1] -> c1 :: Counter -> Discard; cl[2] -> c2 :: Counter -> Discard;"},
};

std::string sh(const char* cmd) {
  std::string out;
  if (FILE* f = popen(cmd, "r")) {
    char buf[256];
    while (fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) return std::string(trim(line.substr(line.find(':') + 1)));
  return "unknown";
}

// Packets per second of one run: the total of the case's counters over the
// run's elapsed time.
double run_point(const Case& c, int threads, uint32_t burst, uint32_t length, uint32_t flows, double seconds) {
  Program prog;
  Diagnostics diag;
  config::Defines d{{"BURST", std::to_string(burst)}, {"LENGTH", std::to_string(length)}, {"FLOWS", std::to_string(flows)}};
  if (!config::load_string(std::string("bench:") + c.name, c.config, d, prog, diag)) {
    fmt::print(stderr, "{}", diag.text());
    return -1;
  }
  RunOptions opt;
  opt.threads = threads;
  opt.duration_s = seconds;
  opt.batch_capacity = std::max<uint32_t>(burst, 32);
  Runtime rt(prog, opt);
  if (!rt.configure(diag) || !rt.initialize(diag)) {
    fmt::print(stderr, "{}", diag.text());
    return -1;
  }
  rt.run();
  uint64_t total = 0;
  for (const char* h : {"c.count", "c1.count", "c2.count"}) {
    std::string v, err;
    if (rt.read_handler(h, v, err)) total += std::stoull(v);
  }
  bool balanced = rt.accounting().balanced();
  double secs = double(rt.elapsed_ns()) / 1e9;
  rt.cleanup();
  if (!balanced) fmt::print(stderr, "bench {}: accounting does not balance\n", c.name);
  return secs > 0 ? double(total) / secs : 0;
}

}  // namespace

int cmd_bench(int argc, char** argv) {
  CLI::App app{"shoal bench: throughput of the core data path"};
  std::string out = "bench/results/latest-cpu.json";
  double seconds = 0.5;
  int reps = 3;
  std::vector<uint32_t> bursts{1, 8, 32, 64, 256};
  std::vector<int> threads{1, 2};
  std::vector<std::string> only;
  uint32_t length = 64, flows = 1024;
  app.add_option("--out", out, "JSON output file");
  app.add_option("--seconds", seconds, "run time per point");
  app.add_option("--reps", reps, "runs per point (median reported)")->check(CLI::Range(1, 20));
  app.add_option("--batch", bursts, "batch sizes");
  app.add_option("--threads", threads, "worker thread counts");
  app.add_option("--case", only, "cases to run (forward, classifier, classifier-split)");
  app.add_option("--length", length, "frame bytes");
  app.add_option("--flows", flows, "flows");
  CLI11_PARSE(app, argc, argv);

  DeviceChoice dev;
  std::string err;
  select_device("auto", dev, err);
  struct utsname u;
  uname(&u);
  nlohmann::json j;
  j["benchmark"] = "core";
  j["machine"] = {{"cpu", cpu_model()}, {"cores", std::thread::hardware_concurrency()}, {"kernel", u.release}, {"host", u.nodename}};
  j["device"] = {{"kind", dev.kind}, {"detail", dev.detail}};
  j["commit"] = sh("git rev-parse --short HEAD 2>/dev/null");
  j["dirty"] = !sh("git status --porcelain --untracked-files=no 2>/dev/null").empty();
  j["version"] = kVersion;
  j["date"] = sh("date -u +%Y-%m-%dT%H:%M:%SZ");
  j["settings"] = {{"seconds", seconds}, {"reps", reps}, {"length", length}, {"flows", flows}};
  j["results"] = nlohmann::json::array();

  fmt::print("shoal bench on {} ({} cores), {} byte frames, {} flows, median of {} x {:.2f}s\n", cpu_model(),
             std::thread::hardware_concurrency(), length, flows, reps, seconds);
  fmt::print("{:<18} {:>7}", "case", "threads");
  for (uint32_t b : bursts) fmt::print(" {:>9}", fmt::format("batch {}", b));
  fmt::print("   (Mpps)\n");
  for (const Case& c : kCases) {
    if (!only.empty() && std::find(only.begin(), only.end(), c.name) == only.end()) continue;
    for (int t : threads) {
      fmt::print("{:<18} {:>7}", c.name, t);
      std::fflush(stdout);
      for (uint32_t b : bursts) {
        std::vector<double> runs;
        for (int r = 0; r < reps; ++r) runs.push_back(run_point(c, t, b, length, flows, seconds));
        std::sort(runs.begin(), runs.end());
        double med = runs[runs.size() / 2];
        fmt::print(" {:>9.2f}", med / 1e6);
        std::fflush(stdout);
        j["results"].push_back({{"case", c.name}, {"what", c.what}, {"threads", t}, {"batch", b}, {"mpps", med / 1e6},
                                {"runs_mpps", [&] { std::vector<double> v; for (double x : runs) v.push_back(x / 1e6); return v; }()}});
      }
      fmt::print("\n");
    }
  }
  if (!out.empty()) {
    std::ofstream f(out);
    f << j.dump(2) << "\n";
    if (!f) {
      fmt::print(stderr, "shoal bench: cannot write {}\n", out);
      return 1;
    }
    fmt::print("wrote {}\n", out);
  }
  return 0;
}

}  // namespace shoal::tool
