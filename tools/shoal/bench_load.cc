// shoal bench --case config-load: the time to load a Click configuration
// (parse, expand, validate) and to configure it (arguments, route table
// build) against its size, so the slope shows: a router written the way
// Click users write one, its routes inline in DirectIPLookup's arguments.
// Prefixes come from the full Internet table in ../shared/data when it is
// there, else generated.
#include <fmt/format.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "common.hh"
#include "shoal/config/config.hh"
#include "shoal/core/runtime.hh"

namespace shoal::tool {

namespace {

// Up to n prefixes ("A.B.C.D/LEN") from the gzip'd table, else generated.
std::vector<std::string> load_prefixes(size_t n, std::string& source) {
  std::vector<std::string> out;
  for (const char* path : {"../shared/data/routes/internet-table-prefixes.txt.gz",
                           "../../shared/data/routes/internet-table-prefixes.txt.gz"}) {
    if (!std::filesystem::exists(path)) continue;
    gzFile f = gzopen(path, "rb");
    if (!f) continue;
    char line[128];
    while (out.size() < n && gzgets(f, line, sizeof line)) {
      std::string s(line);
      while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
      if (!s.empty() && s[0] != '#' && s.find(':') == std::string::npos) out.push_back(s);  // IPv4 only
    }
    gzclose(f);
    source = path;
    break;
  }
  std::mt19937 rng(3);
  if (out.size() < n) source += source.empty() ? "generated" : " + generated";
  while (out.size() < n) {
    uint32_t len = 8 + rng() % 25, a = rng() & (len ? ~uint32_t(0) << (32 - len) : 0);
    out.push_back(fmt::format("{}.{}.{}.{}/{}", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255, len));
  }
  return out;
}

}  // namespace

void bench_config_load(const std::vector<size_t>& sizes, nlohmann::json& j) {
  size_t most = 0;
  for (size_t n : sizes) most = std::max(most, n);
  std::string source;
  std::vector<std::string> pfx = load_prefixes(most, source);
  fmt::print("\nconfiguration loading, routes inline in DirectIPLookup ({}):\n", source);
  fmt::print("  {:>9} {:>10} {:>10} {:>10} {:>12} {:>12}\n", "routes", "bytes", "load ms", "config ms", "load ns/rt",
             "config ns/rt");
  using clk = std::chrono::steady_clock;
  for (size_t n : sizes) {
    std::string cfg = "Idle -> rt :: DirectIPLookup(\n";
    cfg.reserve(n * 30 + 200);
    for (size_t i = 0; i < n; ++i) cfg += fmt::format("  {} {},\n", pfx[i], i % 2);
    cfg += "  0.0.0.0/0 1);\nrt[0] -> Discard;\nrt[1] -> Discard;\n";
    Program prog;
    Diagnostics diag;
    auto t0 = clk::now();
    bool ok = config::load_string(fmt::format("routes-{}.click", n), cfg, {}, prog, diag);
    double load_s = std::chrono::duration<double>(clk::now() - t0).count();
    double conf_s = 0;
    if (ok) {
      RunOptions opt;
      opt.pool.count = 64;
      Runtime rt(prog, opt);
      t0 = clk::now();
      ok = rt.configure(diag);
      conf_s = std::chrono::duration<double>(clk::now() - t0).count();
      rt.cleanup();
    }
    if (!ok) {
      fmt::print(stderr, "config-load: {} routes did not load: {}\n", n, diag.text().substr(0, 400));
      continue;
    }
    fmt::print("  {:>9} {:>10} {:>10.1f} {:>10.1f} {:>12.0f} {:>12.0f}\n", n, cfg.size(), load_s * 1e3, conf_s * 1e3,
               load_s * 1e9 / double(n), conf_s * 1e9 / double(n));
    j["config_load"].push_back(
        {{"routes", n}, {"bytes", cfg.size()}, {"load_s", load_s}, {"configure_s", conf_s}, {"source", source}});
  }
}

}  // namespace shoal::tool
