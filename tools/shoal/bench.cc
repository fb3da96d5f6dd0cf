// shoal bench: the foundation's throughput benchmarks. Each case runs in
// process for a fixed time per (threads, batch) point; the median of several
// runs is reported in Mpps. Prints a table and writes JSON with the machine,
// the device and the commit.
#include <fmt/format.h>
#include <sys/utsname.h>
#include <CLI/CLI.hpp>

#include <unistd.h>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include <chrono>
#include <random>

#include "common.hh"
#include "shoal/core/version.hh"
#include "shoal/device/device.hh"
#include "shoal/io/traffic.hh"
#include "shoal/kernels/steps/route4.hh"
#include "shoal/kernels/steps/route6.hh"
#include "shoal/offload/chain.hh"
#include "shoal/offload/services.hh"
#include "shoal/routing/iproutetable.hh"
#include "shoal/routing/lpm6_build.hh"

namespace shoal::tool {

namespace {

struct Case {
  const char* name;
  const char* what;
  const char* config;  // $BURST, $LENGTH, $FLOWS, $ROUTES4 and $ROUTES6 are set per point
};

// The router's forwarding path over a generated table; each flow's random
// destination lies in one of the table's prefixes.
#define SHOAL_ROUTER_CASE(LOOKUP)                                                                                \
  "FastUDPFlows(LENGTH $LENGTH, FLOWS $FLOWS, BURST $BURST, DSTRANDOM true)"                                     \
  " -> Strip(14) -> CheckIPHeader -> rt :: " LOOKUP                                                              \
  "(FILE $ROUTES4);"                                                                                             \
  " rt[0] -> DecIPTTL -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:00) -> c :: Counter -> "  \
  "Discard;"                                                                                                     \
  " rt[1] -> DecIPTTL -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:01) -> c1 :: Counter -> " \
  "Discard;"                                                                                                     \
  " rt[2] -> DecIPTTL -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:02) -> c2 :: Counter -> " \
  "Discard;"

// IPFilter over 100 firewall rules; most flows match none of the first 99
// and fall to the last rule, Click's linear program's worst case.
#define SHOAL_IPFILTER_CASE(TREE)                                            \
  "FastUDPFlows(LENGTH $LENGTH, FLOWS $FLOWS, BURST $BURST, DSTRANDOM true)" \
  " -> Strip(14) -> CheckIPHeader -> f :: IPFilter(file $RULES, TREE " TREE  \
  ");"                                                                       \
  " f[0] -> c :: Counter -> Discard; f[1] -> c1 :: Counter -> Discard; f[2] -> c2 :: Counter -> Discard;"

// The router path offloaded in Snap's form, the batch column being the
// aggregate size.
#define SHOAL_SNAP_CASE(H2D)                                                                            \
  "FastUDPFlows(LENGTH $LENGTH, FLOWS $FLOWS, BURST 32, DSTRANDOM true)"                                \
  " -> Strip(14) -> CheckIPHeader -> Batcher($BURST, 1ms) -> h :: HostToDevice(" H2D                    \
  ")"                                                                                                   \
  " -> GPUIPLookup(FILE $ROUTES4) -> GPUDecIPTTL -> DeviceToHost -> cq :: CompletionQueue -> Debatcher" \
  " -> d :: Dispatcher(0, 1, 2); d[0] -> c :: Counter -> Discard; d[1] -> c1 :: Counter -> Discard;"    \
  " d[2] -> c2 :: Counter -> Discard;"

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
    {"router6",
     "IPv6 path (78-byte frames): CheckIP6Header -> LookupIP6Route -> DecIP6HLIM -> EtherRewrite, random destinations",
     "FastUDPFlows(LENGTH 78, FLOWS $FLOWS, BURST $BURST, DSTRANDOM true, IPV6 true)"
     " -> Strip(14) -> CheckIP6Header -> rt :: LookupIP6Route(FILE $ROUTES6);"
     " rt[0] -> DecIP6HLIM -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:00) -> c :: Counter -> "
     "Discard;"
     " rt[1] -> DecIP6HLIM -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:01) -> c1 :: Counter -> "
     "Discard;"
     " rt[2] -> DecIP6HLIM -> Unstrip(14) -> EtherRewrite(02:00:00:00:00:01, 02:00:00:00:01:02) -> c2 :: Counter -> "
     "Discard;"},
    {"router-snap",
     "IPv4 path offloaded, Snap form: Batcher(batch) -> HostToDevice -> GPUIPLookup -> GPUDecIPTTL -> "
     "DeviceToHost -> CompletionQueue -> Debatcher -> Dispatcher",
     SHOAL_SNAP_CASE("")},
    {"router-snap-noslice", "the same, whole packets copied both ways (no ROI slicing)",
     SHOAL_SNAP_CASE("SLICE false")},
    {"router-nba",
     "IPv4 path offloaded, NBA form: OffloadBalancer(1) -> CheckIPHeader -> DirectIPLookup -> DecIPTTL, "
     "one batch per aggregate",
     "FastUDPFlows(LENGTH $LENGTH, FLOWS $FLOWS, BURST $BURST, DSTRANDOM true)"
     " -> Strip(14) -> OffloadBalancer(1) -> CheckIPHeader -> rt :: DirectIPLookup(FILE $ROUTES4);"
     " rt[0] -> DecIPTTL -> c :: Counter -> Discard; rt[1] -> DecIPTTL -> c1 :: Counter -> Discard;"
     " rt[2] -> DecIPTTL -> c2 :: Counter -> Discard;"},
    {"ipfilter", "CheckIPHeader -> IPFilter, 100 rules compiled to a decision DAG", SHOAL_IPFILTER_CASE("true")},
    {"ipfilter-linear", "the same rules tested one by one (Click's linear program)", SHOAL_IPFILTER_CASE("false")},
};

// 100 IPFilter rules over the generator's flows (destinations from
// random_dst4, UDP destination ports 40000 + 7f mod 1000): 40 that single
// flows hit, 59 that (almost) none hits, and a catch-all.
std::string make_rules(uint32_t flows, const std::string& dir) {
  std::mt19937 rng(5);
  auto ip = [](uint32_t a) { return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255); };
  std::string body = "# generated by shoal bench\n";
  for (uint32_t i = 0; i < 40; ++i) {
    uint32_t f = i * 7 % std::max<uint32_t>(flows, 1);
    body += fmt::format("allow dst host {} && udp && dst port {}\n", ip(io::random_dst4(f)), 40000 + (f * 7) % 1000);
  }
  for (uint32_t i = 0; i < 20; ++i)
    body += fmt::format("allow src net 10.{}.0.0/16 && dst net {}/24 && tcp dst port {}\n", i, ip(rng() & 0xffffff00u),
                        (uint32_t[]){22, 25, 80, 443}[i % 4]);
  for (uint32_t i = 0; i < 20; ++i) body += fmt::format("deny dst net {}/24 && dst port 22\n", ip(rng() & 0xffffff00u));
  for (uint32_t i = 0; i < 19; ++i)
    body += fmt::format("1 src host 10.0.{}.{} && udp dst port > 40500 && ip ttl < 32\n", i, 1 + rng() % 250);
  body += "2 all\n";
  std::string path = dir + "/bench-ipfilter.rules";
  std::ofstream(path) << body;
  return path;
}

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
  std::string file4, file6, rules;
  size_t n4 = 0, n6 = 0;
  std::vector<k::Prefix4> pfx4;
  std::vector<k::Prefix6> pfx6;
};

// About n4 IPv4 and n6 IPv6 prefixes over 3 outputs and 64 gateways: one
// covering each flow's destination, the rest random, all of the mix above.
Tables make_tables(uint32_t flows, size_t n4, size_t n6, const std::string& dir) {
  Tables t;
  std::mt19937 rng(2024);
  auto gw = [&](std::string& s, uint32_t i) {
    s += fmt::format("10.255.{}.{} {}\n", (i >> 8) & 63, 1 + (i & 63) % 254, i % 3);
  };
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

// Bare device lookups: the router's step kernel K over `n` addresses of
// `ab` bytes each, `chunk` per launch, three ways in one run, each going
// through all the addresses in turn:
//   kernel       all addresses resident on the device, launches back to
//                back (the verdict words zeroed before each, as a chain does);
//   with copies  addresses copied in, verdicts and (possibly rewritten)
//                addresses copied back, on 4 streams so copies overlap;
//   cpu          the same K::run over host memory on this thread.
// The device's verdicts are checked against the CPU's.
struct DevLookups {
  double kernel = 0, copies = 0, cpu = 0;  // lookups per second
  uint64_t mismatches = 0;
  std::string error;
};

template <class K, class SetAddr>
DevLookups device_lookups(dev::Device& d, typename K::Params p, typename K::Params cpu_p,
                          const std::vector<uint8_t>& addrs, size_t ab, uint32_t chunk, double seconds,
                          SetAddr set_addr) {
  using clk = std::chrono::steady_clock;
  DevLookups r;
  const size_t n = addrs.size() / ab, chunks = std::max<size_t>(1, n / chunk);
  constexpr int S = 4;
  dev::Stream* st[S];
  uint8_t *haddr[S], *hres[S], *daddr[S], *dverd[S];
  for (int s = 0; s < S; ++s) {
    st[s] = d.stream_create();
    haddr[s] = static_cast<uint8_t*>(d.host_alloc(chunk * ab));
    hres[s] = static_cast<uint8_t*>(d.host_alloc(chunk * (4 + ab)));
    daddr[s] = static_cast<uint8_t*>(d.dev_alloc(chunk * ab));
    dverd[s] = static_cast<uint8_t*>(d.dev_alloc(chunk * 4));
    if (!haddr[s] || !hres[s] || !daddr[s] || !dverd[s]) r.error = "out of memory";
  }
  auto params = [&](uint8_t* verd, uint8_t* addr, const typename K::Params& from) {
    typename K::Params q = from;
    q.a.n = chunk;
    q.a.verdict = reinterpret_cast<uint32_t*>(verd);
    set_addr(q.a, addr);
    return q;
  };
  std::string err;
  uint8_t* dall = static_cast<uint8_t*>(d.dev_alloc(chunks * chunk * ab));
  if (!dall) r.error = "out of device memory";
  if (r.error.empty() && !d.upload(dall, addrs.data(), chunks * chunk * ab, err)) r.error = err;
  if (r.error.empty()) {
    // kernel only: 8 launches per wait
    uint64_t done = 0;
    size_t next = 0;
    auto t0 = clk::now();
    double el = 0;
    do {
      for (int i = 0; i < 8; ++i) {
        auto q = params(dverd[0], dall + (next++ % chunks) * chunk * ab, p);
        d.memset(st[0], dverd[0], 0, chunk * 4);
        d.launch(st[0], dev::step_kernel<K>(), &q, sizeof q, chunk);
      }
      d.record(st[0]);
      if (d.wait(st[0], err) != dev::Status::Done) r.error = err;
      done += 8ull * chunk;
      el = std::chrono::duration<double>(clk::now() - t0).count();
    } while (el < seconds && r.error.empty());
    r.kernel = double(done) / el;
  }
  if (r.error.empty()) {
    // with copies, S streams in turn
    bool busy[S] = {};
    size_t next = 0;
    uint64_t done = 0;
    auto t0 = clk::now();
    double el = 0;
    for (int s = 0;; s = (s + 1) % S) {
      if (busy[s]) {
        if (d.wait(st[s], err) != dev::Status::Done) {
          r.error = err;
          break;
        }
        done += chunk;
        busy[s] = false;
      }
      el = std::chrono::duration<double>(clk::now() - t0).count();
      if (el >= seconds) break;
      std::memcpy(haddr[s], addrs.data() + (next++ % chunks) * chunk * ab, chunk * ab);
      auto q = params(dverd[s], daddr[s], p);
      d.h2d(st[s], daddr[s], haddr[s], chunk * ab);
      d.memset(st[s], dverd[s], 0, chunk * 4);
      d.launch(st[s], dev::step_kernel<K>(), &q, sizeof q, chunk);
      d.d2h(st[s], hres[s], dverd[s], chunk * 4);
      d.d2h(st[s], hres[s] + chunk * 4, daddr[s], chunk * ab);
      d.record(st[s]);
      busy[s] = true;
    }
    for (int s = 0; s < S; ++s)
      if (busy[s]) d.wait(st[s], err);
    r.copies = double(done) / el;
  }
  d.dev_free(dall);
  // one CPU core (the next hops have no gateways, so the addresses stay as
  // they are), and the check: the last chunk each stream did vs the CPU
  std::vector<uint8_t> cverd(chunk * 4), caddr(chunk * ab);
  auto q = params(cverd.data(), caddr.data(), cpu_p);
  uint64_t done = 0;
  auto t0 = clk::now();
  double el = 0;
  size_t next = 0;
  do {
    auto qc = params(cverd.data(), const_cast<uint8_t*>(addrs.data()) + (next++ % chunks) * chunk * ab, cpu_p);
    std::memset(cverd.data(), 0, cverd.size());
    for (uint32_t i = 0; i < chunk; ++i) K::run(qc, i);
    done += chunk;
    el = std::chrono::duration<double>(clk::now() - t0).count();
  } while (el < seconds);
  r.cpu = double(done) / el;
  if (r.error.empty())
    for (int s = 0; s < S; ++s) {
      // stream s last did chunk index (its last launch); redo it on the CPU and compare
      std::memcpy(caddr.data(), haddr[s], chunk * ab);
      std::memset(cverd.data(), 0, cverd.size());
      for (uint32_t i = 0; i < chunk; ++i) K::run(q, i);
      r.mismatches += std::memcmp(cverd.data(), hres[s], chunk * 4) != 0;
      r.mismatches += std::memcmp(caddr.data(), hres[s] + chunk * 4, chunk * ab) != 0;
    }
  for (int s = 0; s < S; ++s) {
    d.stream_destroy(st[s]);
    d.host_free(haddr[s]);
    d.host_free(hres[s]);
    d.dev_free(daddr[s]);
    d.dev_free(dverd[s]);
  }
  return r;
}

// Packets per second of one run: the total of the case's counters over the
// run's elapsed time.
double run_point(const Case& c, int threads, uint32_t burst, uint32_t length, uint32_t flows, double seconds,
                 const Tables& tables, std::string* notes = nullptr, nlohmann::json* extra = nullptr) {
  Program prog;
  Diagnostics diag;
  config::Defines d{{"BURST", std::to_string(burst)}, {"LENGTH", std::to_string(length)},
                    {"FLOWS", std::to_string(flows)}, {"ROUTES4", tables.file4},
                    {"ROUTES6", tables.file6},        {"RULES", tables.rules}};
  if (!config::load_string(std::string("bench:") + c.name, c.config, d, prog, diag)) {
    fmt::print(stderr, "{}", diag.text());
    return -1;
  }
  RunOptions opt;
  opt.threads = threads;
  opt.duration_s = seconds;
  opt.batch_capacity = std::max<uint32_t>(burst, 32);
  bool offload = std::string_view(c.name).find("-snap") != std::string_view::npos ||
                 std::string_view(c.name).find("-nba") != std::string_view::npos;
  offload::Options oo;
  if (offload) {  // aggregates of up to 16384 packets, several in flight
    opt.pool.count = std::max<uint32_t>(65536, 8 * burst);
    oo.batches = 1;
  }
  Runtime rt(prog, opt);
  offload::set_options(rt, oo);
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
  if (std::string v, err; notes && rt.read_handler("f.program", v, err)) *notes = v.substr(0, v.find('\n'));
  // Offload: bytes moved per packet each way, and latency percentiles.
  auto num = [&](const std::string& h) {
    std::string v, err;
    return rt.read_handler(h, v, err) ? std::strtod(v.c_str(), nullptr) : -1.0;
  };
  if (extra && offload) {
    std::string pre = std::string_view(c.name).find("-nba") != std::string_view::npos ? "rt.offload_" : "h.";
    double pk = num(pre + "packets");
    if (pk > 0) {
      (*extra)["h2d_bytes_per_packet"] = num(pre + "h2d_bytes") / pk;
      (*extra)["d2h_bytes_per_packet"] = num(pre + "d2h_bytes") / pk;
      (*extra)["device_aggregates"] = num(pre + "device_aggregates");
      (*extra)["cpu_busy_aggregates"] = num(pre + "cpu_busy");
    }
    std::string v, err;
    if (rt.read_handler("cq.latency", v, err)) (*extra)["latency_us_p50_p99_p999"] = v;
  }
  bool balanced = rt.accounting().balanced();
  double secs = double(rt.elapsed_ns()) / 1e9;
  rt.cleanup();
  if (!balanced) fmt::print(stderr, "bench {}: accounting does not balance\n", c.name);
  return secs > 0 ? double(total) / secs : 0;
}

}  // namespace

// A graph's packets per second over the pcap (its elapsed run time).
double graph_pps(const std::string& text, bool offload, uint64_t& packets, std::string& err) {
  return graph_run(text, offload ? "cuda" : "", {}, nullptr, packets, err);
}

double graph_run(const std::string& text, const std::string& device, const std::vector<std::string>& read,
                 std::map<std::string, std::string>* got, uint64_t& packets, std::string& err) {
  offload::Options oo;
  if (!device.empty()) {
    oo.device.kind = device;
    oo.batches = 64;
  }
  return graph_run_with(text, device.empty() ? nullptr : &oo, read, got, packets, err);
}

double graph_run_with(const std::string& text, const offload::Options* offload, const std::vector<std::string>& read,
                      std::map<std::string, std::string>* got, uint64_t& packets, std::string& err, uint32_t pool) {
  Program prog;
  Diagnostics diag;
  if (!config::load_string("bench", text, {}, prog, diag)) return err = diag.text(), -1;
  RunOptions opt;
  opt.duration_s = 120;
  offload::Options oo;
  if (offload) {
    oo = *offload;
    opt.pool.count = pool;
  }
  Runtime rt(prog, opt);
  offload::set_options(rt, oo);
  if (!rt.configure(diag) || !rt.initialize(diag)) return err = diag.text(), -1;
  rt.run();
  std::string v, e2;
  packets = rt.read_handler("c.count", v, e2) ? std::stoull(v) : 0;
  if (got)
    for (const std::string& h : read)
      if (rt.read_handler(h, v, e2)) (*got)[h] = v;
  double secs = double(rt.elapsed_ns()) / 1e9;
  bool balanced = rt.accounting().balanced();
  rt.cleanup();
  if (!balanced) return err = "accounting does not balance", -1;
  return secs > 0 ? double(packets) / secs : 0;
}

nlohmann::json bench_record(const char* name) {
  struct utsname u;
  uname(&u);
  nlohmann::json j;
  j["benchmark"] = name;
  j["machine"] = {{"cpu", cpu_model()},
                  {"cores", std::thread::hardware_concurrency()},
                  {"kernel", u.release},
                  {"host", u.nodename}};
  j["commit"] = sh("git rev-parse --short HEAD 2>/dev/null");
  j["dirty"] = !sh("git status --porcelain --untracked-files=no 2>/dev/null").empty();
  j["version"] = kVersion;
  j["date"] = sh("date -u +%Y-%m-%dT%H:%M:%SZ");
  j["results"] = nlohmann::json::array();
  return j;
}

bool write_bench_json(const std::string& out, const nlohmann::json& j) {
  if (out.empty()) return true;
  std::error_code ec;
  std::filesystem::path dir = std::filesystem::path(out).parent_path();
  if (!dir.empty()) std::filesystem::create_directories(dir, ec);
  std::ofstream o(out);
  o << j.dump(2) << "\n";
  o.close();
  if (!o) {
    fmt::print(stderr, "cannot write '{}'\n", out);
    return false;
  }
  fmt::print("wrote {}\n", out);
  return true;
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

double pcie_h2d_bandwidth(std::string* name) {
  dev::DeviceOptions o;
  o.kind = "cuda";
  std::string detail, e2;
  double bw = 0;
  if (auto d = dev::open_device(o, detail, e2)) {
    size_t n = size_t(256) << 20;
    void* h = d->host_alloc(n);
    void* g = d->dev_alloc(n);
    if (h && g) {
      std::memset(h, 1, n);
      d->upload(g, h, n, e2);
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < 4; ++i) d->upload(g, h, n, e2);
      bw = 4.0 * double(n) / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    d->host_free(h);
    d->dev_free(g);
  }
  if (name) *name = detail;
  return bw;
}

nlohmann::json cuda_device_record() {
  std::string name;
  double pcie = pcie_h2d_bandwidth(&name);
  if (pcie <= 0) return {{"kind", "none"}};
  return {{"kind", "cuda"}, {"detail", name}, {"pcie_h2d_bytes_per_sec", pcie}};
}

namespace {

struct BenchPoint {
  uint32_t length, flows;
  double seconds;
};

// The graph cases: each case, thread count and batch size, the median of
// `reps` runs; offload rows with their bytes moved and PCIe-bound limits.
void bench_graph_cases(const BenchPoint& bp, const std::vector<std::string>& only, const std::vector<int>& threads,
                       const std::vector<uint32_t>& bursts, int reps, double pcie_bw, const Tables& tables,
                       nlohmann::json& j) {
  const uint32_t length = bp.length, flows = bp.flows;
  const double seconds = bp.seconds;
  std::vector<nlohmann::json> offload_rows;
  for (const Case& c : kCases) {
    if (!only.empty() && std::find(only.begin(), only.end(), c.name) == only.end()) continue;
    std::string notes;
    for (int t : threads) {
      fmt::print("{:<18} {:>7}", c.name, t);
      std::fflush(stdout);
      for (uint32_t b : bursts) {
        std::vector<double> runs;
        runs.reserve(size_t(reps));
        nlohmann::json extra = nlohmann::json::object();
        for (int r = 0; r < reps; ++r)
          runs.push_back(run_point(c, t, b, length, flows, seconds, tables, &notes, &extra));
        std::sort(runs.begin(), runs.end());
        double med = runs[runs.size() / 2];
        fmt::print(" {:>9.2f}", med / 1e6);
        std::fflush(stdout);
        nlohmann::json row = {{"case", c.name},
                              {"what", c.what},
                              {"threads", t},
                              {"batch", b},
                              {"mpps", med / 1e6},
                              {"runs_mpps", [&] {
                                 std::vector<double> v;
                                 v.reserve(runs.size());
                                 for (double x : runs) v.push_back(x / 1e6);
                                 return v;
                               }()}};
        for (auto& [k2, v2] : extra.items()) row[k2] = v2;
        if (extra.contains("h2d_bytes_per_packet") && pcie_bw > 0)
          row["pcie_limit_mpps"] = pcie_bw / std::max(1.0, extra["h2d_bytes_per_packet"].get<double>()) / 1e6;
        offload_rows.push_back(row);
        j["results"].push_back(row);
      }
      fmt::print("\n");
    }
    for (auto& row : offload_rows)
      if (row.contains("h2d_bytes_per_packet"))
        fmt::print(
            "{:<18} batch {:>5}: {:.1f} B/pkt to the device, {:.1f} back; latency p50/p99/p99.9 {} us; "
            "PCIe-bound limit {} Mpps\n",
            "", row["batch"].get<uint32_t>(), row["h2d_bytes_per_packet"].get<double>(),
            row["d2h_bytes_per_packet"].get<double>(), row.value("latency_us_p50_p99_p999", std::string("-")),
            row.contains("pcie_limit_mpps") ? fmt::format("{:.0f}", row["pcie_limit_mpps"].get<double>())
                                            : std::string("- (no GPU)"));
    offload_rows.clear();
    if (!notes.empty() && std::string_view(c.name) == "ipfilter") {  // the DAG's shape
      fmt::print("{:<18} {}\n", "", notes);
      j["notes"][c.name] = notes;
    }
  }
}

// The bare structures: build time, memory, lookups per second over a
// million random addresses in routed prefixes.
void bench_lpm(const Tables& tables, double seconds, nlohmann::json& j) {
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
  double l6_lps =
      lookups_per_sec(a6.size(), seconds, [&](size_t i) { return k::lpm6_lookup(v6, a6[i].first, a6[i].second); });
  // The same in batches of 32, as LookupIP6Route does them (lock-step rounds).
  std::vector<uint64_t> h6(a6.size()), l6v(a6.size());
  for (size_t i = 0; i < a6.size(); ++i) h6[i] = a6[i].first, l6v[i] = a6[i].second;
  int32_t nh6[32];
  double l6b_lps = 32 * lookups_per_sec(a6.size() / 32, seconds, [&](size_t i) {
                     k::lpm6_lookup_batch(v6, 32, h6.data() + 32 * i, l6v.data() + 32 * i, nh6);
                     return nh6[i % 32];
                   });
  fmt::print("\nbare lookups, 1 thread, 2^20 random addresses in routed prefixes:\n");
  fmt::print("  DIR-24-8   {:>8} prefixes: {:>7.2f} M lookups/s, build {:.2f} s, {:.0f} MiB\n", tables.n4,
             dir_lps / 1e6, build_dir, double(sd->lpm.memory_bytes()) / (1 << 20));
  fmt::print("  radix trie {:>8} prefixes: {:>7.2f} M lookups/s, build {:.2f} s, {} nodes\n", tables.n4, rad_lps / 1e6,
             build_rad, sr->radix.nodes.size());
  fmt::print(
      "  IPv6 BSPL  {:>8} prefixes: {:>7.2f} M lookups/s ({:.2f} M/s in batches of 32), build {:.2f} s, {} markers, "
      "{:.1f} MiB\n",
      tables.n6, l6_lps / 1e6, l6b_lps / 1e6, build6, l6.markers(), double(l6.memory_bytes()) / (1 << 20));
  j["lpm"] = {{"dir24_8", {{"prefixes", tables.n4}, {"mlookups_per_s", dir_lps / 1e6}, {"build_s", build_dir}}},
              {"radix", {{"prefixes", tables.n4}, {"mlookups_per_s", rad_lps / 1e6}, {"build_s", build_rad}}},
              {"ipv6_bspl",
               {{"prefixes", tables.n6},
                {"mlookups_per_s", l6_lps / 1e6},
                {"build_s", build6},
                {"markers", l6.markers()},
                {"batch32_mlookups_per_s", l6b_lps / 1e6}}}};
}

// Bare lookups on the device vs one CPU core, same run, same addresses;
// false when the device disagrees with the CPU or fails.
bool bench_lpm_device(const DeviceChoice& dev, const Tables& tables, const std::vector<uint32_t>& chunks,
                      double seconds, double pcie_bw, nlohmann::json& j) {
  // Bare lookups on the device vs one CPU core, same run, same addresses.
  dev::DeviceOptions o;
  o.kind = dev.kind;
  std::string detail, e2;
  auto d = dev::open_device(o, detail, e2);
  if (!d) {
    fmt::print("\nlpm-device: no device ({})\n", e2);
  } else {
    std::mt19937 rng(11);
    size_t n = size_t(1) << 20;
    std::vector<uint8_t> a4(n * 4), a6(n * 16);
    for (size_t i = 0; i < n; ++i) {
      const auto& p = tables.pfx4[rng() % tables.pfx4.size()];
      k::store_be32(&a4[4 * i], p.addr | (rng() & ~k::prefix_mask(p.len)));
      const auto& q = tables.pfx6[rng() % tables.pfx6.size()];
      uint64_t mh, ml;
      k::lpm6_mask(~0ull, ~0ull, q.len, mh, ml);
      uint64_t r1 = (uint64_t(rng()) << 32) | rng(), r2 = (uint64_t(rng()) << 32) | rng();
      k::store_be64(&a6[16 * i], q.hi | (r1 & ~mh));
      k::store_be64(&a6[16 * i + 8], q.lo | (r2 & ~ml));
    }
    // Tables as the offloaded lookups upload them. The next hops have no
    // gateways: a rewritten address would be looked up again, hitting
    // the same few entries and flattering every loop that repeats.
    std::vector<IPRoute> r4;
    for (auto& p : tables.pfx4) r4.push_back({p.addr, p.len, 0, int(p.nexthop % 3)});
    IPRouteTable dir(IPRouteTable::Kind::Dir24_8);
    std::string e;
    dir.set(r4, e);
    auto sd = dir.snapshot();
    k::Lpm6Table l6;
    l6.build(tables.pfx6);
    std::vector<k::NextHop4> nh4;
    for (auto& h : sd->nexthops) nh4.push_back({h.gw, h.port});
    std::vector<k::NextHop6> nh6(192);
    for (size_t i = 0; i < nh6.size(); ++i) {
      nh6[i] = {};
      nh6[i].port = int32_t(i % 3);
    }
    const k::Lpm4View v4 = sd->lpm.view();
    const k::Lpm6View v6 = l6.view();
    auto up = [&](const void* src, size_t bytes) { return offload::upload_shared(d, src, bytes, e2); };
    auto t24 = up(v4.tbl24, size_t(2) << 24), t8 = up(v4.tbl8, sd->lpm.groups() * 512),
         n4 = up(nh4.data(), nh4.size() * sizeof(k::NextHop4));
    auto lens = up(v6.lens, v6.nlens), base = up(v6.base, v6.nlens * 4), mask = up(v6.mask, v6.nlens * 4),
         slots = up(v6.slots, l6.memory_bytes()), n6 = up(nh6.data(), nh6.size() * sizeof(k::NextHop6));
    k::Route4Step::Params p4{};
    p4.t = {static_cast<const uint16_t*>(t24.get()), static_cast<const uint16_t*>(t8.get())};
    p4.nh = static_cast<const k::NextHop4*>(n4.get());
    p4.noutputs = 3, p4.r_noroute = 0, p4.r_discard = 1;
    k::Route6Step::Params p6{};
    p6.t = v6;
    p6.t.lens = static_cast<const uint8_t*>(lens.get());
    p6.t.base = static_cast<const uint32_t*>(base.get());
    p6.t.mask = static_cast<const uint32_t*>(mask.get());
    p6.t.slots = static_cast<const k::Lpm6Slot*>(slots.get());
    p6.nh = static_cast<const k::NextHop6*>(n6.get());
    p6.noutputs = 3, p6.r_noroute = 0, p6.r_discard = 1;
    // the CPU runs over the host tables
    k::Route4Step::Params c4 = p4;
    c4.t = v4, c4.nh = nh4.data();
    k::Route6Step::Params c6 = p6;
    c6.t = v6, c6.nh = nh6.data();
    fmt::print("\nbare lookups on the device ({}) vs one CPU core, same run, 2^20 addresses in routed prefixes:\n",
               detail);
    fmt::print("  {:<5} {:>8} {:>13} {:>13} {:>13} {:>9} {:>13}\n", "", "chunk", "kernel Ml/s", "+copies Ml/s",
               "1 core Ml/s", "dev/core", "PCIe limit");
    j["lpm_device"] = {{"device", detail}, {"rows", nlohmann::json::array()}};
    bool ok = t24 && t8 && n4 && lens && base && mask && slots && n6;
    for (uint32_t chunk : chunks) {
      if (!ok) break;
      for (int v = 0; v < 2; ++v) {
        size_t ab = v == 0 ? 4 : 16;
        DevLookups r;
        // the device kernels get device tables; the CPU loop host ones
        if (v == 0) {
          r = device_lookups<k::Route4Step>(*d, p4, c4, a4, ab, chunk, seconds,
                                            [](k::AggView& a, uint8_t* x) { a.dst_ip = x; });
        } else {
          r = device_lookups<k::Route6Step>(*d, p6, c6, a6, ab, chunk, seconds,
                                            [](k::AggView& a, uint8_t* x) { a.dst_ip6 = x; });
        }
        double limit = pcie_bw > 0 ? pcie_bw / double(ab) : 0;
        fmt::print("  {:<5} {:>8} {:>13.1f} {:>13.1f} {:>13.1f} {:>8.1f}x {:>13}{}\n", v == 0 ? "IPv4" : "IPv6", chunk,
                   r.kernel / 1e6, r.copies / 1e6, r.cpu / 1e6, r.copies / std::max(1.0, r.cpu),
                   limit > 0 ? fmt::format("{:.0f} Ml/s", limit / 1e6) : std::string("- (no GPU)"),
                   r.error.empty() ? (r.mismatches ? fmt::format("  {} MISMATCHES", r.mismatches) : "")
                                   : "  error: " + r.error);
        nlohmann::json row = {{"family", v == 0 ? "ipv4" : "ipv6"},
                              {"chunk", chunk},
                              {"kernel_mlookups_per_s", r.kernel / 1e6},
                              {"copies_mlookups_per_s", r.copies / 1e6},
                              {"cpu_core_mlookups_per_s", r.cpu / 1e6},
                              {"h2d_bytes_per_lookup", ab},
                              {"d2h_bytes_per_lookup", 4 + ab},
                              {"mismatches", r.mismatches},
                              {"error", r.error}};
        if (limit > 0) row["pcie_limit_mlookups_per_s"] = limit / 1e6;
        j["lpm_device"]["rows"].push_back(row);
        if (r.mismatches || !r.error.empty()) ok = false;
      }
    }
    if (!ok) {
      fmt::print(stderr, "shoal bench: lpm-device: the device disagrees with the CPU or failed\n");
      return 1;
    }
  }
  return true;
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
  app.add_option("--case", only,
                 "cases to run (forward, classifier, classifier-split, router, router-radix, router6, "
                 "ipfilter, ipfilter-linear, lpm, lpm-device, config-load, and the offload cases router-snap, "
                 "router-snap-noslice, "
                 "router-nba)");
  std::vector<uint32_t> chunks{1024, 16384, 262144};
  std::vector<size_t> load_sizes{1000, 10000, 100000, 1000000};
  app.add_option("--load-routes", load_sizes, "config-load: route counts");
  app.add_option("--lookup-chunk", chunks, "lpm-device: addresses per launch");
  size_t routes4 = 170000, routes6 = 20000;
  app.add_option("--routes4", routes4, "IPv4 prefixes for the router cases");
  app.add_option("--routes6", routes6, "IPv6 prefixes for the router cases");
  app.add_option("--length", length, "frame bytes");
  app.add_option("--flows", flows, "flows");
  CLI11_PARSE(app, argc, argv);

  DeviceChoice dev;
  std::string err;
  select_device("auto", dev, err);
  nlohmann::json j = bench_record("core");
  j["device"] = {{"kind", dev.kind}, {"detail", dev.detail}};
  j["settings"] = {{"seconds", seconds}, {"reps", reps},       {"length", length},
                   {"flows", flows},     {"routes4", routes4}, {"routes6", routes6}};
  auto wants = [&](const char* n) { return only.empty() || std::find(only.begin(), only.end(), n) != only.end(); };
  Tables tables;
  bool routing = wants("router") || wants("router-radix") || wants("router6") || wants("lpm") || wants("lpm-device");
  bool filtering = wants("ipfilter") || wants("ipfilter-linear");
  std::string dir = std::filesystem::temp_directory_path() / ("shoal-bench-" + std::to_string(getpid()));
  if (routing || filtering) std::filesystem::create_directories(dir);
  if (routing) tables = make_tables(flows, routes4, routes6, dir);
  if (filtering) tables.rules = make_rules(flows, dir);

  fmt::print("shoal bench on {} ({} cores), {} byte frames, {} flows, median of {} x {:.2f}s\n", cpu_model(),
             std::thread::hardware_concurrency(), length, flows, reps, seconds);
  fmt::print("{:<18} {:>7}", "case", "threads");
  for (uint32_t b : bursts) fmt::print(" {:>9}", fmt::format("batch {}", b));
  fmt::print("   (Mpps)\n");
  // Host-to-device bandwidth of pinned memory, for the PCIe-bound limits of
  // the offload cases (only meaningful on a GPU).
  double pcie_bw = 0;
  if (dev.kind == "cuda") {
    pcie_bw = pcie_h2d_bandwidth();
    if (pcie_bw > 0) {
      fmt::print("host-to-device bandwidth (pinned): {:.1f} GB/s\n", pcie_bw / 1e9);
      j["pcie_h2d_bytes_per_sec"] = pcie_bw;
    }
  }

  bench_graph_cases({length, flows, seconds}, only, threads, bursts, reps, pcie_bw, tables, j);
  if (wants("lpm") && routing) bench_lpm(tables, seconds, j);
  if (wants("lpm-device") && routing && !bench_lpm_device(dev, tables, chunks, seconds, pcie_bw, j)) return 1;
  if (wants("config-load")) bench_config_load(load_sizes, j);
  if (routing || filtering) std::filesystem::remove_all(dir);
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
