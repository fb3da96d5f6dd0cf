// shoal bench: the foundation's throughput benchmarks. Each case runs in
// process for a fixed time per (threads, batch) point; the median of several
// runs is reported in Mpps. Prints a table and writes JSON with the machine,
// the device and the commit.
#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <unistd.h>
#include <fstream>
#include <nlohmann/json.hpp>

#include <chrono>
#include <random>

#include "common.hh"
#include "shoal/core/version.hh"
#include "shoal/device/device.hh"
#include "shoal/elements/ip/iproutetable.hh"
#include "shoal/io/traffic.hh"
#include "shoal/kernels/lpm6_build.hh"

namespace shoal::tool {

namespace {

struct Case {
  const char* name;
  const char* what;
  const char* config;  // $BURST, $LENGTH, $FLOWS, $ROUTES4 and $ROUTES6 are set per point
};

// The router's forwarding path over a generated table; each flow's random
// destination lies in one of the table's prefixes.
#define SHOAL_ROUTER_CASE(LOOKUP)                                                                     \
  "FastUDPFlows(LENGTH $LENGTH, FLOWS $FLOWS, BURST $BURST, DSTRANDOM true)"                          \
  " -> Strip(14) -> CheckIPHeader -> rt :: " LOOKUP "(FILE $ROUTES4);"                               \
  " rt[0] -> DecIPTTL -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:00) -> c :: Counter -> Discard;"  \
  " rt[1] -> DecIPTTL -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:01) -> c1 :: Counter -> Discard;" \
  " rt[2] -> DecIPTTL -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:02) -> c2 :: Counter -> Discard;"

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
    {"router", "IPv4 path: CheckIPHeader -> DirectIPLookup -> DecIPTTL -> EtherRewrite, random destinations",
     SHOAL_ROUTER_CASE("DirectIPLookup")},
    {"router-radix", "the same path with RadixIPLookup", SHOAL_ROUTER_CASE("RadixIPLookup")},
    {"router6", "IPv6 path (78-byte frames): CheckIP6Header -> LookupIP6Route -> DecIP6HLIM -> EtherRewrite, random destinations",
     "FastUDPFlows(LENGTH 78, FLOWS $FLOWS, BURST $BURST, DSTRANDOM true, IPV6 true)"
     " -> Strip(14) -> CheckIP6Header -> rt :: LookupIP6Route(FILE $ROUTES6);"
     " rt[0] -> DecIP6HLIM -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:00) -> c :: Counter -> Discard;"
     " rt[1] -> DecIP6HLIM -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:01) -> c1 :: Counter -> Discard;"
     " rt[2] -> DecIP6HLIM -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:02) -> c2 :: Counter -> Discard;"},
};

// A realistic prefix-length mix (shares of today's BGP tables).
uint8_t pick_len4(std::mt19937& rng) {
  uint32_t x = rng() % 1000;
  if (x < 600) return 24;
  if (x < 700) return 23;
  if (x < 800) return 22;
  if (x < 880) return uint8_t(20 + rng() % 2);
  if (x < 980) return uint8_t(16 + rng() % 4);
  if (x < 990) return uint8_t(8 + rng() % 8);
  return uint8_t(25 + rng() % 8);
}
uint8_t pick_len6(std::mt19937& rng) {
  uint32_t x = rng() % 1000;
  if (x < 450) return 48;
  if (x < 650) return 32;
  if (x < 750) return 44;
  if (x < 830) return 40;
  if (x < 880) return 36;
  if (x < 930) return uint8_t(29 + rng() % 3);
  return uint8_t(56 + rng() % 9);
}

struct Tables {
  std::string file4, file6;
  size_t n4 = 0, n6 = 0;
  std::vector<k::Prefix4> pfx4;
  std::vector<k::Prefix6> pfx6;
};

// About n4 IPv4 and n6 IPv6 prefixes over 3 outputs and 64 gateways: one
// covering each flow's destination, the rest random, all of the mix above.
Tables make_tables(uint32_t flows, size_t n4, size_t n6, const std::string& dir) {
  Tables t;
  std::mt19937 rng(2024);
  auto gw = [&](std::string& s, uint32_t i) { s += fmt::format("10.255.{}.{} {}\n", (i >> 8) & 63, 1 + (i & 63) % 254, i % 3); };
  std::string body;
  for (size_t i = 0; i < n4; ++i) {
    uint32_t a = i < flows ? io::random_dst4(uint32_t(i)) : 0x01000000u + rng() % 0xdf000000u;
    uint8_t len = pick_len4(rng);
    a &= k::prefix_mask(len);
    t.pfx4.push_back({a, len, uint16_t(i % 192)});
    body += fmt::format("{}.{}.{}.{}/{} ", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255, len);
    gw(body, uint32_t(rng()));
  }
  t.file4 = dir + "/bench-routes4.txt";
  std::ofstream(t.file4) << body;
  body.clear();
  for (size_t i = 0; i < n6; ++i) {
    uint8_t a[16];
    io::random_dst6(i < flows ? uint32_t(i) : uint32_t(rng() | 0x80000000u), a);
    uint8_t len = pick_len6(rng);
    for (uint32_t b = len; b < 128; ++b) a[b / 8] &= uint8_t(~(0x80 >> (b % 8)));
    uint64_t hi = 0, lo = 0;
    for (int b = 0; b < 8; ++b) hi = hi << 8 | a[b], lo = lo << 8 | a[8 + b];
    t.pfx6.push_back({hi, lo, len, int32_t(i % 192)});
    body += fmt::format("{}/{} fe80::{:x} {}\n", format_ipv6(a), len, 1 + rng() % 64, rng() % 3);
  }
  t.file6 = dir + "/bench-routes6.txt";
  std::ofstream(t.file6) << body;
  t.n4 = n4;
  t.n6 = n6;
  return t;
}

// Bare lookups per second of one structure over `addrs`, one thread.
template <class F>
double lookups_per_sec(size_t n, double seconds, F&& one) {
  using clk = std::chrono::steady_clock;
  uint64_t done = 0, sink = 0;
  auto t0 = clk::now();
  double el = 0;
  do {
    for (size_t i = 0; i < n; ++i) sink += uint32_t(one(i));
    done += n;
    el = std::chrono::duration<double>(clk::now() - t0).count();
  } while (el < seconds);
  if (sink == 42) std::fprintf(stderr, " ");  // keep the loop
  return double(done) / el;
}

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
double run_point(const Case& c, int threads, uint32_t burst, uint32_t length, uint32_t flows, double seconds,
                 const Tables& tables) {
  Program prog;
  Diagnostics diag;
  config::Defines d{{"BURST", std::to_string(burst)}, {"LENGTH", std::to_string(length)}, {"FLOWS", std::to_string(flows)},
                    {"ROUTES4", tables.file4}, {"ROUTES6", tables.file6}};
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
  app.add_option("--case", only, "cases to run (forward, classifier, classifier-split, router, router-radix, router6, lpm)");
  size_t routes4 = 170000, routes6 = 20000;
  app.add_option("--routes4", routes4, "IPv4 prefixes for the router cases");
  app.add_option("--routes6", routes6, "IPv6 prefixes for the router cases");
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
  j["settings"] = {{"seconds", seconds}, {"reps", reps}, {"length", length}, {"flows", flows},
                   {"routes4", routes4}, {"routes6", routes6}};
  j["results"] = nlohmann::json::array();
  auto wants = [&](const char* n) { return only.empty() || std::find(only.begin(), only.end(), n) != only.end(); };
  Tables tables;
  bool routing = wants("router") || wants("router-radix") || wants("router6") || wants("lpm");
  if (routing) {
    std::string dir = std::filesystem::temp_directory_path() / ("shoal-bench-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    tables = make_tables(flows, routes4, routes6, dir);
  }

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
        for (int r = 0; r < reps; ++r) runs.push_back(run_point(c, t, b, length, flows, seconds, tables));
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
  if (wants("lpm") && routing) {
    // The bare structures: build time, memory, lookups per second over the
    // flows' destinations (cache-resident, as in the router cases) and over
    // a million random addresses in routed prefixes.
    using clk = std::chrono::steady_clock;
    std::mt19937 rng(7);
    std::vector<uint32_t> a4;
    std::vector<std::pair<uint64_t, uint64_t>> a6;
    for (uint32_t i = 0; i < (1u << 20); ++i) {
      const auto& p = tables.pfx4[rng() % tables.pfx4.size()];
      a4.push_back(p.addr | (rng() & ~k::prefix_mask(p.len)));
      const auto& q = tables.pfx6[rng() % tables.pfx6.size()];
      uint64_t mh, ml;
      k::lpm6_mask(~0ull, ~0ull, q.len, mh, ml);
      uint64_t r1 = (uint64_t(rng()) << 32) | rng(), r2 = (uint64_t(rng()) << 32) | rng();
      a6.push_back({q.hi | (r1 & ~mh), q.lo | (r2 & ~ml)});
    }
    std::vector<IPRoute> r4;
    for (auto& p : tables.pfx4) r4.push_back({p.addr, p.len, 0x0aff0001u + p.nexthop % 64, int(p.nexthop % 3)});
    auto t0 = clk::now();
    IPRouteTable dir(IPRouteTable::Kind::Dir24_8), rad(IPRouteTable::Kind::Radix);
    std::string e;
    dir.set(r4, e);
    double build_dir = std::chrono::duration<double>(clk::now() - t0).count();
    t0 = clk::now();
    rad.set(r4, e);
    double build_rad = std::chrono::duration<double>(clk::now() - t0).count();
    t0 = clk::now();
    k::Lpm6Table l6;
    l6.build(tables.pfx6);
    double build6 = std::chrono::duration<double>(clk::now() - t0).count();
    auto sd = dir.snapshot(), sr = rad.snapshot();
    auto v4 = sd->lpm.view();
    auto v6 = l6.view();
    double dir_lps = lookups_per_sec(a4.size(), seconds, [&](size_t i) { return k::lpm4_lookup(v4, a4[i]); });
    double rad_lps = lookups_per_sec(a4.size(), seconds, [&](size_t i) { return sr->radix.lookup(a4[i]); });
    double l6_lps = lookups_per_sec(a6.size(), seconds, [&](size_t i) { return k::lpm6_lookup(v6, a6[i].first, a6[i].second); });
    fmt::print("\nbare lookups, 1 thread, 2^20 random addresses in routed prefixes:\n");
    fmt::print("  DIR-24-8   {:>8} prefixes: {:>7.2f} M lookups/s, build {:.2f} s, {:.0f} MiB\n", tables.n4, dir_lps / 1e6,
               build_dir, double(sd->lpm.memory_bytes()) / (1 << 20));
    fmt::print("  radix trie {:>8} prefixes: {:>7.2f} M lookups/s, build {:.2f} s, {} nodes\n", tables.n4, rad_lps / 1e6,
               build_rad, sr->radix.nodes.size());
    fmt::print("  IPv6 BSPL  {:>8} prefixes: {:>7.2f} M lookups/s, build {:.2f} s, {} markers, {:.1f} MiB\n", tables.n6,
               l6_lps / 1e6, build6, l6.markers(), double(l6.memory_bytes()) / (1 << 20));
    j["lpm"] = {{"dir24_8", {{"prefixes", tables.n4}, {"mlookups_per_s", dir_lps / 1e6}, {"build_s", build_dir}}},
                {"radix", {{"prefixes", tables.n4}, {"mlookups_per_s", rad_lps / 1e6}, {"build_s", build_rad}}},
                {"ipv6_bspl", {{"prefixes", tables.n6}, {"mlookups_per_s", l6_lps / 1e6}, {"build_s", build6},
                               {"markers", l6.markers()}}}};
  }
  if (routing) std::filesystem::remove_all(std::filesystem::path(tables.file4).parent_path());
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
