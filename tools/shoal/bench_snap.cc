// shoal bench-snap: a reproduction of Snap's evaluation (Snap §5, Figure 8).
// For each application (the trivial forwarder, the SDN forwarder, the DPI
// router, the IDS router) and packet size (64..1518 bytes): the CPU
// configuration, and the offloaded one (Snap form) without and with ROI
// slicing at aggregates of 512 and 1024 packets. Rates are Mpps and Gbps
// over the frame bytes, with each application's rate against the trivial
// forwarder's in the same run (Snap's headline: the IDS router at 90% of its
// forwarder). The offloaded rows carry the aggregate latency percentiles
// (CompletionQueue: first packet in to completion) and bytes moved per
// packet. A second, short pass per application and mode writes the
// forwarded packets and checks that no flow's packets were reordered (TCP
// sequence numbers count each flow's packets). JSON to --out, a chart
// shaped like Snap's Figure 8 to --png (bench/snap_chart.py, matplotlib).
#include <fmt/format.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "common.hh"
#include "shoal/classbench/classbench.hh"
#include "shoal/io/pcap.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal::tool {

// Frame i of the trace: flow i % kSnapFlows (a client in 203.0.113.0/24 to a
// web server in 10.0.0.0/16, TCP to port 80), its TCP sequence number the
// packet's number within its flow; every 100th payload starts with
// "<script" (local.rules' sid 1000003 alerts on it).
uint32_t snap_frame(uint64_t i, uint32_t size, uint8_t* f) {
  uint32_t flow = uint32_t(i % kSnapFlows), seq = uint32_t(i / kSnapFlows);
  std::memset(f, 0, size);
  const uint8_t dmac[6] = {2, 0, 0, 0, 0, 2}, smac[6] = {2, 0, 0, 0, 0, 1};
  std::memcpy(f, dmac, 6);
  std::memcpy(f + 6, smac, 6);
  k::store_be16(f + 12, 0x0800);
  uint8_t* ip = f + 14;
  ip[0] = 0x45;
  k::store_be16(ip + 2, uint16_t(size - 14));
  k::store_be16(ip + 4, uint16_t(seq));
  ip[8] = 64;
  ip[9] = 6;
  k::store_be32(ip + 12, 0xcb007100u | (flow % 250 + 1));     // 203.0.113.x
  k::store_be32(ip + 16, 0x0a000000u | (flow * 37 % 65536));  // 10.0.x.y
  k::store_be16(ip + 10, k::ip_checksum(ip, 20));
  uint8_t* tcp = ip + 20;
  k::store_be16(tcp, uint16_t(1024 + flow));
  k::store_be16(tcp + 2, 80);
  k::store_be32(tcp + 4, seq);
  tcp[12] = 0x50;
  tcp[13] = 0x18;  // PSH ACK
  k::store_be16(tcp + 14, 65535);
  uint8_t* pay = tcp + 20;
  uint32_t plen = size - 54;
  for (uint32_t j = 0; j < plen; ++j) pay[j] = uint8_t('a' + (i + j) % 26);
  if (i % 100 == 7 && plen >= 7) std::copy_n("<script", 7, pay);  // (no terminating NUL: payload bytes)
  return size;
}

#define SHOAL_SNAP_IDS "RULES {ids}/local.rules, VARS {ids}/vars.yaml, QUIET true"
#define SHOAL_SNAP_DEV "Batcher({batch}, 100us) -> h :: HostToDevice(INFLIGHT 8, SLICE {slice}, ZERO_COPY {zc}) -> "
#define SHOAL_SNAP_BACK " -> DeviceToHost -> cq :: CompletionQueue -> Debatcher -> d :: Dispatcher"

const std::vector<SnapApp>& snap_apps() {
  static const std::vector<SnapApp> apps = {
      {"forward", "{src} -> c :: Counter -> {sink};", nullptr},
      {"router",
       "c :: Counter -> {sink}; {src} -> CheckIPHeader(14) -> rt :: DirectIPLookup(" SHOAL_SNAP_ROUTES
       "); rt[0] -> DecIPTTL -> c; rt[1] -> DecIPTTL -> c;",
       "c :: Counter -> {sink}; {src} -> " SHOAL_SNAP_DEV "GPUCheckIPHeader(14) -> GPUIPLookup(" SHOAL_SNAP_ROUTES
       ") -> GPUDecIPTTL" SHOAL_SNAP_BACK "(0, 1); d[0] -> c; d[1] -> c;",
       false},
      {"sdn-forwarder",
       "c :: Counter -> {sink}; {src} -> s :: SDNClassifier(RULES {acl}); "
       "s[0] -> c; s[1] -> c; s[2] -> c; s[3] -> c;",
       "c :: Counter -> {sink}; {src} -> " SHOAL_SNAP_DEV "GPUSDNClassifier(RULES {acl})" SHOAL_SNAP_BACK
       "(0, 1, 2, 3); d[0] -> c; d[1] -> c; d[2] -> c; d[3] -> c;"},
      {"dpi-router",
       "c :: Counter -> {sink}; {src} -> CheckIPHeader(14) -> IDSMatcher(" SHOAL_SNAP_IDS
       ") -> rt :: DirectIPLookup(" SHOAL_SNAP_ROUTES "); rt[0] -> DecIPTTL -> c; rt[1] -> DecIPTTL -> c;",
       "c :: Counter -> {sink}; {src} -> " SHOAL_SNAP_DEV "GPUCheckIPHeader(14) -> GPUIDSMatcher(" SHOAL_SNAP_IDS
       ") -> GPUIPLookup(" SHOAL_SNAP_ROUTES ") -> GPUDecIPTTL" SHOAL_SNAP_BACK "(0, 1); d[0] -> c; d[1] -> c;"},
      {"ids-router",
       "c :: Counter -> {sink}; x :: Counter -> Discard; {src} -> CheckIPHeader(14) "
       "-> acl :: SDNClassifier(RULES {ids}/../sdn/ids-router.rules); acl[1] -> x; acl[0] -> ids :: "
       "IDSMatcher(" SHOAL_SNAP_IDS "); ids[1] -> x; ids[0] -> rt :: DirectIPLookup(" SHOAL_SNAP_ROUTES
       "); rt[0] -> DecIPTTL -> c; rt[1] -> DecIPTTL -> c;",
       "c :: Counter -> {sink}; x :: Counter -> Discard; {src} -> " SHOAL_SNAP_DEV
       "GPUCheckIPHeader(14) -> GPUSDNClassifier(RULES {ids}/../sdn/ids-router.rules) -> GPUIDSMatcher(" SHOAL_SNAP_IDS
       ", PRED 0, ALERT 7) -> GPUIPLookup(" SHOAL_SNAP_ROUTES
       ", PRED 0, SKIP 7) -> GPUDecIPTTL(PRED 0, SKIP 7)" SHOAL_SNAP_BACK
       "(1, 7, 2, 3); d[0] -> x; d[1] -> x; d[2] -> c; d[3] -> c;"},
  };
  return apps;
}

std::string fill(std::string t, const std::map<std::string, std::string>& v) {
  for (auto& [k, val] : v)
    for (size_t p; (p = t.find("{" + k + "}")) != std::string::npos;) t.replace(p, k.size() + 2, val);
  return t;
}

namespace {

// Packets of a pcap whose flow (addresses and ports) went backwards in TCP
// sequence number.
uint64_t reordered(const std::string& path, uint64_t& packets, std::string& err) {
  io::PcapReader rd;
  packets = 0;
  if (!rd.open(path, err)) return ~0ull;
  std::map<uint64_t, uint32_t> last;
  uint64_t bad = 0, ts;
  const uint8_t* d;
  uint32_t cap, wire;
  while (rd.next(d, cap, wire, ts, err) == 1) {
    ++packets;
    if (cap < 54) continue;
    uint64_t key = uint64_t(k::load_be32(d + 26)) << 32 | (k::load_be32(d + 30) ^ k::load_be16(d + 34));
    uint32_t seq = k::load_be32(d + 38);
    auto it = last.find(key);
    if (it != last.end() && seq < it->second) ++bad;
    last[key] = seq;
  }
  return bad;
}

}  // namespace

int cmd_bench_snap(int argc, char** argv) {
  CLI::App app{
      "shoal bench-snap: Snap's evaluation: applications x packet sizes, CPU vs offloaded with and "
      "without ROI slicing, latency, reordering"};
  std::string out = "bench-snap.json", png, device = "auto", data = "examples/data";
  std::vector<uint32_t> sizes = {64, 128, 256, 512, 1024, 1518}, batches = {512, 1024};
  std::vector<std::string> only;
  uint64_t packets = 400000, mbytes = 256, check_packets = 20000;
  app.add_option("--out", out, "JSON results");
  app.add_option("--png", png, "chart (Snap Figure 8's shape), drawn by bench/snap_chart.py with matplotlib");
  app.add_option("--device", device, "device for the offloaded rows: auto, cuda, host (default auto)");
  app.add_option("--sizes", sizes, "frame sizes");
  app.add_option("--batch", batches, "aggregate sizes of the offloaded rows");
  app.add_option("--app", only, "applications (forward, sdn-forwarder, dpi-router, ids-router)");
  app.add_option("--packets", packets, "frames per point (fewer for large frames: see --mbytes)");
  app.add_option("--mbytes", mbytes, "trace size cap in MiB");
  app.add_option("--check-packets", check_packets, "frames of the reordering check");
  app.add_option("--data", data, "the examples' data folder (rules)");
  CLI11_PARSE(app, argc, argv);

  nlohmann::json j = bench_record("snap");
  j["device"] = cuda_device_record();
  if (device == "auto") device = j["device"]["kind"] == "cuda" ? "cuda" : "host";
  j["offload_device"] = device;
  j["settings"] = {
      {"packets", packets}, {"mbytes", mbytes}, {"flows", kSnapFlows}, {"sizes", sizes}, {"batches", batches}};
  std::string dir = std::filesystem::temp_directory_path() / ("shoal-bench-snap-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string err;
  std::string ids = std::filesystem::absolute(data + "/ids").string();
  if (!std::filesystem::exists(ids + "/local.rules")) {
    fmt::print(stderr, "bench-snap: no {}/local.rules (run from the repository, or give --data)\n", ids);
    return 1;
  }
  // The SDN forwarder's access list: 1,000 ClassBench ACL rules on 4 outputs.
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
  auto wants = [&](const char* n) {
    auto app = std::find_if(snap_apps().begin(), snap_apps().end(),
                            [&](const SnapApp& a) { return a.name == std::string_view(n); });
    return only.empty() ? app->in_snap : std::find(only.begin(), only.end(), n) != only.end();
  };
  fmt::print("shoal bench-snap on {}; offloaded rows on {}\n", cpu_model(),
             device == "cuda" ? j["device"].value("detail", "cuda") : "the host backend");
  fmt::print("{:<14} {:>5} {:<16} {:>6} {:>8} {:>8} {:>7} {:>9} {:>22}\n", "app", "bytes", "mode", "batch", "Mpps",
             "Gbps", "vs fwd", "B/pkt h2d", "latency p50/p99 us");
  std::vector<uint8_t> buf(2048);
  for (uint32_t size : sizes) {
    size = std::clamp<uint32_t>(size, 64, 1518);
    std::string pcap = fmt::format("{}/trace-{}.pcap", dir, size);
    uint64_t n = std::min<uint64_t>(packets, (mbytes << 20) / size);
    {
      io::PcapWriter w;
      if (!w.open(pcap, 1, 65535, true, err)) return fmt::print(stderr, "bench-snap: {}\n", err), 1;
      for (uint64_t i = 0; i < n; ++i)
        w.write(buf.data(), snap_frame(i, size, buf.data()), size, 1700000000000000000ull + i * 1000);
    }
    double fwd = 0;
    for (const SnapApp& a : snap_apps()) {
      if (!wants(a.name)) continue;
      struct Mode {
        const char* name;
        bool off;
        const char* slice;
        uint32_t batch;
      };
      std::vector<Mode> modes = {{"cpu", false, "", 0}};
      if (a.offload)
        for (uint32_t b : batches)
          modes.push_back({"offload-noslice", true, "false", b}), modes.push_back({"offload", true, "true", b});
      for (const Mode& m : modes) {
        std::map<std::string, std::string> v = {{"src", "FromDump(" + pcap + ", STOP true)"},
                                                {"sink", "Discard"},
                                                {"acl", acl},
                                                {"ids", ids},
                                                {"batch", std::to_string(m.batch)},
                                                {"slice", m.slice},
                                                {"zc", "0"},
                                                {"r0", m.off ? "0" : "0"},
                                                {"r1", "1"}};
        if (std::string_view(a.name) == "ids-router" && m.off) v["r0"] = "2", v["r1"] = "3";
        std::string cfg = fill(m.off ? a.offload : a.cpu, v);
        std::map<std::string, std::string> got;
        uint64_t cnt = 0;
        double pps =
            graph_run(cfg, m.off ? device : "", {"x.count", "cq.latency", "h.h2d_bytes", "h.packets"}, &got, cnt, err);
        if (pps < 0) return fmt::print(stderr, "bench-snap: {} {}: {}\n", a.name, m.name, err), 1;
        if (got.count("x.count")) pps *= double(cnt + std::stoull(got["x.count"])) / double(std::max<uint64_t>(cnt, 1));
        if (std::string_view(a.name) == "forward") fwd = pps;
        double gbps = pps * size * 8 / 1e9;
        nlohmann::json row = {{"app", a.name},     {"size", size}, {"mode", m.name},
                              {"mpps", pps / 1e6}, {"gbps", gbps}, {"packets", n}};
        if (m.batch) row["batch"] = m.batch;
        if (fwd > 0) row["vs_forward"] = pps / fwd;
        std::string lat = "-", h2d = "-";
        if (got.count("cq.latency")) row["latency_us_p50_p99_p999"] = lat = got["cq.latency"];
        if (got.count("h.h2d_bytes") && got.count("h.packets") && std::stod(got["h.packets"]) > 0) {
          row["h2d_bytes_per_packet"] = std::stod(got["h.h2d_bytes"]) / std::stod(got["h.packets"]);
          h2d = fmt::format("{:.0f}", row["h2d_bytes_per_packet"].get<double>());
        }
        j["results"].push_back(row);
        fmt::print("{:<14} {:>5} {:<16} {:>6} {:>8.2f} {:>8.2f} {:>6.0f}% {:>9} {:>22}\n", a.name, size, m.name,
                   m.batch ? std::to_string(m.batch) : "-", pps / 1e6, gbps, fwd > 0 ? 100 * pps / fwd : 0.0, h2d, lat);
      }
    }
  }
  // Reordering: each application and mode once more on the first frames of
  // a 128-byte trace, the forwarded packets written and checked per flow.
  {
    std::string pcap = fmt::format("{}/check.pcap", dir);
    io::PcapWriter w;
    if (!w.open(pcap, 1, 65535, true, err)) return fmt::print(stderr, "bench-snap: {}\n", err), 1;
    for (uint64_t i = 0; i < check_packets; ++i)
      w.write(buf.data(), snap_frame(i, 128, buf.data()), 128, 1700000000000000000ull + i * 1000);
    w.close();
    j["order"] = nlohmann::json::array();
    uint64_t total_bad = 0;
    for (const SnapApp& a : snap_apps()) {
      if (!wants(a.name)) continue;
      for (int off = 0; off < (a.offload ? 2 : 1); ++off) {
        std::string outp = fmt::format("{}/order-{}-{}.pcap", dir, a.name, off);
        std::map<std::string, std::string> v = {{"src", "FromDump(" + pcap + ", STOP true)"},
                                                {"sink", "ToDump(" + outp + ")"},
                                                {"acl", acl},
                                                {"ids", ids},
                                                {"batch", "1024"},
                                                {"slice", "true"},
                                                {"zc", "0"},
                                                {"r0", "0"},
                                                {"r1", "1"}};
        if (std::string_view(a.name) == "ids-router" && off) v["r0"] = "2", v["r1"] = "3";
        uint64_t cnt;
        if (graph_run(fill(off ? a.offload : a.cpu, v), off ? device : "", {}, nullptr, cnt, err) < 0)
          return fmt::print(stderr, "bench-snap: {} order check: {}\n", a.name, err), 1;
        uint64_t seen = 0, bad = reordered(outp, seen, err);
        total_bad += bad;
        j["order"].push_back(
            {{"app", a.name}, {"mode", off ? "offload" : "cpu"}, {"packets", seen}, {"reordered", bad}});
        fmt::print("order {:<14} {:<8} {} packets, {} out of order within their flow\n", a.name,
                   off ? "offload" : "cpu", seen, bad);
      }
    }
    j["reordered_total"] = total_bad;
  }
  std::filesystem::remove_all(dir);
  std::ofstream(out) << j.dump(2) << "\n";
  fmt::print("wrote {}\n", out);
  if (!png.empty()) {
    std::string script = std::filesystem::absolute(data + "/../../bench/snap_chart.py").lexically_normal().string();
    // the PATH's python3 (the GPU machine's has matplotlib), else Debian's
    std::string cmd =
        fmt::format("python3 '{0}' '{1}' '{2}' 2>/dev/null || /usr/bin/python3 '{0}' '{1}' '{2}'", script, out, png);
    if (std::system(cmd.c_str()) != 0) fmt::print(stderr, "bench-snap: no chart ({} failed)\n", cmd);
  }
  return j["reordered_total"].get<uint64_t>() == 0 ? 0 : 2;
}

}  // namespace shoal::tool
