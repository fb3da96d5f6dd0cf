// shoal bench-nf: the network functions on the flow layer, one core:
// per-core Mpps of the firewall (60 and 180 rules), the Maglev load
// balancer, NAT (IPRewriter), the per-flow rate limiter and GPUNFV's chain
// (flow monitor -> firewall -> load balancer), each against the plain
// forwarder and the flow layer alone, in the same run; then that chain with
// its network functions offloaded, by aggregate size and with GPUNFV's
// dynamic sizing, against the same chain on the CPU.
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "common.hh"
#include "shoal/classbench/classbench.hh"
#include "shoal/nf/fwrules.hh"

namespace shoal::tool {

namespace {

// A GPUNFV-like firewall: ClassBench 'fw' rules, a quarter of those with
// both addresses under a prefix denying, and a last rule that allows the
// rest (so most traffic goes on: a wide deny would leave nothing to time).
void write_rules(const std::string& path, size_t n, uint32_t seed) {
  classify::GenSpec spec;
  spec.flavor = classify::Flavor::Fw;
  spec.rules = n - 1;
  spec.seed = seed;
  spec.catch_all = false;
  spec.ports = 1;
  auto rules = classify::generate(spec);
  std::mt19937 rng(seed);
  std::ofstream f(path);
  for (auto& r : rules) {
    r.action = int32_t(r.smask && r.dmask && rng() % 4 == 0);
    f << nf::unparse_fw_rule(r) << "\n";
  }
  f << "allow @0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n";
}

// GPUNFV's Figures 5 and 6 from the sizer's history ("ms target packets"
// lines): the aggregate size and the throughput over the run, and when the
// size settled (from then on within 25% of its final value).
void sizer_figure(const std::string& history, nlohmann::json& j) {
  struct P {
    double ms;
    uint32_t target;
    uint64_t packets;
  };
  std::vector<P> ps;
  std::istringstream in(history);
  for (P p; in >> p.ms >> p.target >> p.packets;) ps.push_back(p);
  if (ps.size() < 2) return;
  const double final_t = ps.back().target;
  double settled = 0;
  for (size_t i = ps.size(); i-- > 0;)
    if (ps[i].target < 0.75 * final_t || ps[i].target > 1.25 * final_t) {
      settled = i + 1 < ps.size() ? ps[i + 1].ms : ps[i].ms;
      break;
    }
  fmt::print("  dynamic sizing over the run (GPUNFV Fig. 5-6): settled at {:.0f} batches after {:.1f} ms\n", final_t,
             settled);
  fmt::print("  {:>9} {:>8} {:>10}\n", "ms", "batches", "Mpps");
  const size_t step = std::max<size_t>(1, ps.size() / 10);
  nlohmann::json series = nlohmann::json::array();
  for (size_t i = step; i < ps.size(); i += step) {
    const P& a = ps[i - step];
    const P& b = ps[i];
    double mpps = b.ms > a.ms ? double(b.packets - a.packets) / ((b.ms - a.ms) * 1e3) : 0;
    fmt::print("  {:>9.1f} {:>8} {:>10.2f}\n", b.ms, b.target, mpps);
    series.push_back({{"ms", b.ms}, {"batches", b.target}, {"mpps", mpps}});
  }
  j["sizer"] = {{"settled_ms", settled}, {"final_batches", final_t}, {"series", series}};
}

}  // namespace

int cmd_bench_nf(int argc, char** argv) {
  CLI::App app{"shoal bench-nf: firewall, load balancer, NAT, rate limiter and GPUNFV's chain on one core"};
  std::string out = "bench/results/nf-latest.json";
  uint64_t flows = 50000, packets = 4000000;
  int reps = 3;
  app.add_option("--out", out, "JSON output file");
  app.add_option("--flows", flows, "flows in the traffic (GPUNFV: 50,000)");
  app.add_option("--packets", packets, "packets a run");
  app.add_option("--reps", reps, "runs per case (the best is kept)");
  std::string device = "auto";
  app.add_option("--device", device, "device for the offloaded chain: auto, host or cuda");
  uint32_t delay_us = 0, host_threads = 0;
  app.add_option("--device-delay-us", delay_us,
                 "host backend: each device operation first waits a random 0..N us (a device's latency without its "
                 "work on the CPU's cores)");
  app.add_option("--host-threads", host_threads, "host backend: its threads (0: min(4, cores))");
  CLI11_PARSE(app, argc, argv);

  std::string dir = std::filesystem::temp_directory_path() / ("shoal-bench-nf-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  write_rules(dir + "/fw60.rules", 60, 1);
  write_rules(dir + "/fw180.rules", 180, 2);
  std::string backends;
  for (int i = 1; i <= 16; ++i) backends += fmt::format(" 10.9.0.{}", i);
  std::string src = fmt::format(
      "FastUDPFlows(LENGTH 64, FLOWS {}, FLOWSIZE 4, BURST 32, DSTRANDOM true, LIMIT {}, STOP true) -> Strip(14) "
      "-> CheckIPHeader -> ",
      flows, packets);
  std::string mgr = fmt::format("FlowIPManager(CAPACITY {}) -> ", flows * 2);
  std::string sink = "c :: Counter -> Discard;";
  struct Case {
    const char* name;
    std::string body;
  };
  std::vector<Case> cases = {
      {"forwarder", ""},
      {"flow layer", mgr},
      {"firewall 60", mgr + fmt::format("Firewall(RULES {}/fw60.rules) -> ", dir)},
      {"firewall 180", mgr + fmt::format("Firewall(RULES {}/fw180.rules) -> ", dir)},
      {"maglev lb", mgr + fmt::format("FlowIPLoadBalancer(DST{}) -> ", backends)},
      {"rate limiter", mgr + "FlowRateLimiter(RATE 1000000) -> "},
      {"nat", "IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 0) -> "},
      {"gpunfv chain", mgr + fmt::format("FlowLog({}/conn.log, FORMAT json) -> Firewall(RULES {}/fw180.rules) -> "
                                         "FlowIPLoadBalancer(DST{}) -> ",
                                         dir, dir, backends)},
  };
  nlohmann::json j = bench_record("nf");
  j["flows"] = flows;
  fmt::print("shoal bench-nf on {}, one core, {} flows, 64-byte UDP, best of {}\n", cpu_model(), flows, reps);
  fmt::print("{:<14} {:>10} {:>12} {:>14}\n", "case", "Mpps", "x forwarder", "ns/packet more");
  double base = 0;
  int rc = 0;
  for (const Case& c : cases) {
    std::string text = src;
    text += c.body;
    text += sink;
    double best = 0;
    uint64_t got = 0;
    for (int r = 0; r < reps; ++r) {
      std::string err;
      double pps = graph_pps(text, false, got, err);
      if (pps < 0) {
        fmt::print(stderr, "bench-nf: {}: {}\n", c.name, err);
        rc = 1;
        break;
      }
      best = std::max(best, pps);
    }
    if (best <= 0 || got < packets / 2) {
      fmt::print(stderr, "bench-nf: {}: {} of {} packets came out: nothing to time\n", c.name, got, packets);
      rc = 1;
      continue;
    }
    if (base == 0) base = best;
    double more = 1e9 / best - 1e9 / base;
    fmt::print("{:<14} {:>10.2f} {:>11.2f}x {:>14.1f}   ({} packets out)\n", c.name, best / 1e6, best / base, more,
               got);
    j["results"].push_back({{"case", c.name},
                            {"pps", best},
                            {"ratio_to_forwarder", best / base},
                            {"ns_per_packet_more", more},
                            {"packets_out", got}});
  }
  // GPUNFV's Figures 5 and 6: the chain (firewall of 180 rules) with its
  // network functions on the device, by aggregate size, and with the
  // dynamic sizer, against the same chain on the CPU. On a machine without
  // a GPU the device is the host backend (its threads run the kernels):
  // this shows the shape and the costs (state and ROI bytes moved per
  // packet), not a GPU's speed.
  const std::string chain = mgr + fmt::format(
                                      "FlowLog({}/conn.log, FORMAT json) -> fw :: Firewall(RULES {}/fw180.rules) -> "
                                      "FlowIPLoadBalancer(DST{}) -> ",
                                      dir, dir, backends);
  fmt::print("\nGPUNFV's chain offloaded (device '{}'), by aggregate size; 1 batch = 32 packets\n", device);
  fmt::print("{:<20} {:>8} {:>9} {:>10} {:>10} {:>10} {:>9} {:>9}\n", "aggregate", "Mpps", "x cpu", "on device",
             "h2d B/pkt", "d2h B/pkt", "flows/agg", "overlap");
  double cpu_pps = 0;
  struct Off {
    std::string name;
    uint32_t batches;  // 0: the CPU chain
    bool adaptive;
    bool serial = false;  // the flows' state not resident on the device: one aggregate at a time
  };
  // (GPUNFV's batches were 320 to 40,000 packets: 10 to 1,250 batches here)
  std::vector<Off> offs = {{"cpu only", 0, false},
                           {"1 batch", 1, false},
                           {"4 batches", 4, false},
                           {"16 batches", 16, false},
                           {"16 batches, serial", 16, false, true},
                           {"64 batches", 64, false},
                           {"64 batches, serial", 64, false, true},
                           {"256 batches", 256, false},
                           {"1024 batches", 1024, false},
                           {"adaptive (<= 1024)", 1024, true}};
  const std::vector<std::string> hs = {"fw.offload_device_packets", "fw.offload_h2d_bytes",      "fw.offload_d2h_bytes",
                                       "fw.offload_flow_runs",      "fw.offload_aggregates",     "fw.offload_sizer",
                                       "fw.offload_sizer_history",  "fw.offload_flow_overlapped"};
  for (const Off& c : offs) {
    std::string text = src;
    if (c.batches) text += "OffloadBalancer(FRACTION 1) -> ";
    text += chain;
    text += sink;
    offload::Options oo;
    oo.device.kind = device;
    oo.device.delay_us = delay_us;
    oo.device.host_threads = host_threads;
    oo.batches = c.batches ? c.batches : 1;
    oo.adaptive = c.adaptive;
    oo.flow_resident = !c.serial;
    // the size is the size: the timeout only ends the run's last aggregate
    oo.timeout_us = 100000;
    // room for the open aggregate and those waiting behind the one in flight
    const uint32_t pool = std::max<uint32_t>(65536, (4 + 2) * oo.batches * 32 + 8192);
    double best = 0;
    uint64_t got = 0;
    std::map<std::string, std::string> h;
    for (int r = 0; r < reps; ++r) {
      std::string err;
      std::map<std::string, std::string> hr;
      double pps = graph_run_with(text, c.batches ? &oo : nullptr, hs, &hr, got, err, pool);
      if (pps < 0) {
        fmt::print(stderr, "bench-nf: offloaded chain, {}: {}\n", c.name, err);
        rc = 1;
        break;
      }
      if (pps > best) best = pps, h = hr;
    }
    if (best <= 0) continue;
    if (!c.batches) cpu_pps = best;
    auto num = [&](const char* k) { return h.count(k) ? std::stod(h[k]) : 0.0; };
    double dev = num("fw.offload_device_packets");
    double per = dev > 0 ? 1.0 / dev : 0;
    double aggs = num("fw.offload_aggregates");
    std::string sizer = h.count("fw.offload_sizer") ? h["fw.offload_sizer"] : "";
    if (!sizer.empty() && sizer.back() == '\n') sizer.pop_back();
    const double overlap = aggs > 0 ? num("fw.offload_flow_overlapped") / aggs : 0;
    fmt::print("{:<20} {:>8.2f} {:>8.2f}x {:>10.0f} {:>10.1f} {:>10.1f} {:>9.0f} {:>8.0f}%  {}\n", c.name, best / 1e6,
               cpu_pps > 0 ? best / cpu_pps : 0, dev, num("fw.offload_h2d_bytes") * per,
               num("fw.offload_d2h_bytes") * per, aggs > 0 ? num("fw.offload_flow_runs") / aggs : 0, overlap * 100,
               c.adaptive ? sizer : "");
    j["offloaded_chain"].push_back({{"case", c.name},
                                    {"device", device},
                                    {"device_delay_us", delay_us},
                                    {"host_threads", host_threads},
                                    {"batches", c.batches},
                                    {"adaptive", c.adaptive},
                                    {"flow_state_resident", !c.serial},
                                    {"overlapped_fraction", overlap},
                                    {"pps", best},
                                    {"ratio_to_cpu_chain", cpu_pps > 0 ? best / cpu_pps : 0},
                                    {"device_packets", dev},
                                    {"h2d_bytes_per_packet", num("fw.offload_h2d_bytes") * per},
                                    {"d2h_bytes_per_packet", num("fw.offload_d2h_bytes") * per},
                                    {"flows_per_aggregate", aggs > 0 ? num("fw.offload_flow_runs") / aggs : 0},
                                    {"sizer", sizer}});
    if (c.adaptive && h.count("fw.offload_sizer_history")) sizer_figure(h["fw.offload_sizer_history"], j);
  }
  std::filesystem::remove_all(dir);
  if (!write_bench_json(out, j)) return 1;
  return rc;
}

}  // namespace shoal::tool
