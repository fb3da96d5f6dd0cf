// shoal bench-classify: multi-field classification on one core. For each
// ClassBench-style set (acl, fw, ipc; 1K and 10K rules by default):
//   trees    the cut-tree lookup (kernels/classify.hh) on keys of a trace
//            that hits the rules, lookups per second
//   linear   the linear first-match scan (the oracle) on the same keys
//   graph    FromDump -> SDNClassifier -> Counter over 64-byte frames of
//            the trace, packets per second
//   element  the element's own rate in that graph: the graph without it
//            (FromDump -> Counter) timed too and its time per packet
//            subtracted (medians of three runs)
//   offload  the same element offloaded to a CUDA device (GPU machines
//            only; NBA form, every batch to the device)
// with the trees' build time, memory and copies per rule. Every row's
// answers are checked against the linear scan first.
#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "common.hh"
#include "shoal/classbench/classbench.hh"
#include "shoal/classbench/classify_build.hh"
#include "shoal/core/version.hh"
#include "shoal/io/pcap.hh"

namespace shoal::tool {

namespace {

using clk = std::chrono::steady_clock;

template <class F>
double per_sec(size_t n, double seconds, F&& fn) {
  size_t done = 0;
  auto t0 = clk::now();
  double el = 0;
  do {
    fn();
    done += n;
    el = std::chrono::duration<double>(clk::now() - t0).count();
  } while (el < seconds);
  return double(done) / el;
}

}  // namespace

int cmd_bench_classify(int argc, char** argv) {
  CLI::App app{"shoal bench-classify: multi-field classification per core (cut trees, linear scan, element)"};
  std::string out = "bench/results/classify-latest.json";
  double seconds = 0.5;
  std::vector<size_t> sizes{1000, 10000};
  std::vector<std::string> flavors{"acl", "fw", "ipc"};
  size_t packets = 100000;
  bool element = true;
  app.add_option("--out", out, "JSON output file");
  app.add_option("--seconds", seconds, "run time per point");
  app.add_option("--rules", sizes, "rules per set");
  app.add_option("--flavor", flavors, "acl, fw, ipc");
  app.add_option("--packets", packets, "trace packets (distinct keys)");
  app.add_option("--element", element, "also time SDNClassifier in a graph (default true)");
  CLI11_PARSE(app, argc, argv);

  nlohmann::json j = bench_record("classify");
  j["device"] = cuda_device_record();
  double pcie = j["device"].value("pcie_h2d_bytes_per_sec", 0.0);
  j["settings"] = {{"seconds", seconds}, {"packets", packets}};
  std::string dir = std::filesystem::temp_directory_path() / ("shoal-bench-classify-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);

  fmt::print("shoal bench-classify on {}, one core, {} trace packets\n", cpu_model(), packets);
  fmt::print("{:>4} {:>6} {:>9} {:>9} {:>10} {:>8}  {:<8} {:>12} {:>9}\n", "set", "rules", "build ms", "KiB",
             "copies/rule", "trees", "row", "M/s", "vs linear");
  int status = 0;
  for (const std::string& fl : flavors) {
    classify::Flavor flavor;
    if (!classify::parse_flavor(fl, flavor)) {
      fmt::print(stderr, "bench-classify: unknown flavor '{}' (acl, fw, ipc)\n", fl);
      return 2;
    }
    for (size_t n : sizes) {
      auto rules = classify::generate({flavor, n, uint32_t(n), 8, true});
      k::ClsTrees trees;
      std::string err;
      if (!trees.build(rules, err)) {
        fmt::print(stderr, "bench-classify: {}\n", err);
        return 1;
      }
      auto keys = classify::trace_keys(rules, packets, 7);
      // check before timing
      k::ClsView v = trees.view();
      for (size_t i = 0; i < keys.size(); i += std::max<size_t>(1, keys.size() / 5000))
        if (k::cls_lookup(v, keys[i]) != k::cls_linear(rules.data(), uint32_t(rules.size()), keys[i])) {
          fmt::print(stderr, "bench-classify: the trees disagree with the linear scan ({} {})\n", fl, n);
          return 1;
        }
      int64_t sink = 0;
      double tree_ps = per_sec(keys.size(), seconds, [&] {
        for (const auto& key : keys) sink += k::cls_lookup(v, key);
      });
      // the linear scan is slow: time it over a slice
      size_t slice = std::min<size_t>(keys.size(), std::max<size_t>(200, 20000000 / std::max<size_t>(1, n)));
      double lin_ps = per_sec(slice, seconds, [&] {
        for (size_t i = 0; i < slice; ++i) sink += k::cls_linear(rules.data(), uint32_t(rules.size()), keys[i]);
      });
      const auto& st = trees.stats();
      double copies = double(st.leaf_entries) / double(std::max<size_t>(1, n));
      auto row = [&](const char* name, double ps) {
        fmt::print("{:>4} {:>6} {:>9.1f} {:>9} {:>10.2f} {:>8}  {:<8} {:>12.3f} {:>8.1f}x\n", fl, n, st.build_ms,
                   trees.memory_bytes() >> 10, copies, st.trees, name, ps / 1e6, ps / lin_ps);
        j["results"].push_back({{"flavor", fl},
                                {"rules", n},
                                {"row", name},
                                {"per_sec", ps},
                                {"vs_linear", ps / lin_ps},
                                {"build_ms", st.build_ms},
                                {"memory_bytes", trees.memory_bytes()},
                                {"copies_per_rule", copies},
                                {"trees", st.trees},
                                {"nodes", st.nodes},
                                {"depth", st.depth}});
      };
      row("trees", tree_ps);
      row("linear", lin_ps);
      if (element) {
        std::string rfile = fmt::format("{}/{}-{}.rules", dir, fl, n), pcap = fmt::format("{}/{}-{}.pcap", dir, fl, n);
        {
          std::ofstream o(rfile);
          for (const auto& r : rules) o << classify::unparse_rule(r) << "\n";
        }
        io::PcapWriter w;
        if (!w.open(pcap, 1, 65535, true, err)) {
          fmt::print(stderr, "bench-classify: {}\n", err);
          return 1;
        }
        std::vector<uint8_t> buf(128);
        // enough rounds of the trace for about `seconds` (at most 2M frames)
        size_t total = std::clamp<size_t>(size_t(tree_ps * seconds), keys.size(), 2000000);
        for (size_t i = 0; i < total; ++i) {
          uint32_t len = classify::build_frame(keys[i % keys.size()], 64, buf.data());
          w.write(buf.data(), len, len, 1700000000000000000ull + i);
        }
        w.close();
        std::string outs;
        for (int p = 1; p < 8; ++p) outs += fmt::format(" s[{}] -> c;", p);
        auto median3 = [&](const std::string& cfg, bool off) {
          double v[3];
          uint64_t got;
          for (double& x : v) x = graph_pps(cfg, off, got, err);
          std::sort(v, v + 3);
          return v[1];
        };
        double base = median3(fmt::format("FromDump({}, STOP true) -> c :: Counter -> Discard;", pcap), false);
        double with =
            median3(fmt::format("FromDump({}, STOP true) -> s :: SDNClassifier(RULES {}) -> c :: Counter -> Discard;{}",
                                pcap, rfile, outs),
                    false);
        if (base <= 0 || with <= 0) {
          fmt::print(stderr, "bench-classify: element: {}\n", err);
          return 1;
        }
        double per = 1 / with - 1 / base;  // the element's seconds per packet
        row("graph", with);
        row("element", per > 0 ? 1 / per : with);
        if (pcie > 0) {
          double off = median3(fmt::format("FromDump({}, STOP true) -> OffloadBalancer(FRACTION 1) -> s :: "
                                           "SDNClassifier(RULES {}) -> c :: Counter -> Discard;{}",
                                           pcap, rfile, outs),
                               true);
          if (off > 0) {
            row("offload", off);
          } else {
            fmt::print(stderr, "bench-classify: offload: {}\n", err);
            status = 1;
          }
        }
      }
      if (sink == 42) fmt::print(" ");  // keep the lookups
    }
  }
  std::filesystem::remove_all(dir);
  if (!write_bench_json(out, j)) return 1;
  return status;
}

}  // namespace shoal::tool
