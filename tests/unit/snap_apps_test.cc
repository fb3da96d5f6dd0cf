// Snap's applications (examples/): each CPU variant and its offloaded
// variant (Snap form; the host backend here, CUDA on a GPU machine) write
// the same packets to the same outputs and raise the same alerts.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "helpers.hh"
#include "shoal/kernels/bytes.hh"

using namespace shoal;

namespace {

struct SnapApp {
  const char* cpu;
  const char* gpu;
  std::vector<std::string> outputs;  // pcap suffixes
  std::vector<std::string> logs;     // fast.log suffixes
  bool exact_order;                  // else per-flow order (packets the router itself makes may move)
  const char* host_steps;            // handler that must be > 0 in the offloaded run ("" none)
  // more handlers that must be > 0 in the offloaded run without faults
  std::vector<std::string> used = {};
};

const std::vector<SnapApp>& apps() {
  static const std::vector<SnapApp> a = {
      {"dpi-router.click", "gpu-dpi-router.click", {"port0", "port1"}, {"fast"}, true, ""},
      // (its IDS runs the stream scan and its one yes/no pcre on the device:
      // HostToDevice's chain is declared after the IDS loaded its rules)
      {"ids-router.click",
       "gpu-ids-router.click",
       {"port0", "port1"},
       {"fast"},
       true,
       "h.host_steps",
       {"ids.device_regex", "ids.stream_device_scans"}},
      {"divergence.click",
       "gpu-divergence.click",
       {"web", "web-alerts", "other", "other-alerts"},
       {"web-fast", "other-fast"},
       true,
       ""},
      {"ids-std-router.click", "gpu-ids-std-router.click", {"eth0", "eth1"}, {"fast"}, false, "h.host_steps"},
  };
  return a;
}

// A frame's flow: the IPv4 addresses, protocol and ports after an Ethernet
// header; for ICMP the type (a router's echo replies and its errors of
// different kinds come from different paths, each in order); ARP and
// other frames: their Ethernet type alone.
std::string flow_of(const std::vector<uint8_t>& f) {
  if (f.size() < 34 || f[12] != 0x08 || f[13] != 0x00)
    return f.size() >= 14 ? fmt::format("eth {:02x}{:02x}", f[12], f[13]) : "runt";
  const uint8_t* ip = f.data() + 14;
  uint32_t hl = (ip[0] & 0xf) * 4u;
  std::string k = fmt::format("{} {}", k::load_be32(ip + 12), k::load_be32(ip + 16)) + fmt::format(" {}", ip[9]);
  bool first_fragment = (k::load_be16(ip + 6) & 0x1fff) == 0;
  if ((ip[9] == 6 || ip[9] == 17) && first_fragment && f.size() >= 14 + hl + 4)
    k += fmt::format(" {} {}", k::load_be16(ip + hl), k::load_be16(ip + hl + 2));
  if (ip[9] == 1 && first_fragment && f.size() > 14 + hl) k += fmt::format(" icmp {}", ip[hl]);
  return k;
}

std::vector<std::string> log_lines(const std::string& path) {
  std::ifstream f(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(f, l);) out.push_back(l.size() > 26 ? l.substr(26) : l);  // without the time
  return out;
}

// `edit` changes the offloaded configuration; `used` names handlers that
// must be above 0 after the offloaded run.
void check_app(const SnapApp& app, const test::Options& gpu_opt, const std::string& tag,
               const std::function<std::string(std::string)>& edit = {}, const std::vector<std::string>& used = {}) {
  std::string dir = test::tmpdir() + "/" + tag;
  std::filesystem::create_directories(dir);
  uint64_t sent[2] = {0, 0}, alerts[2] = {0, 0};
  for (int v = 0; v < 2; ++v) {
    const char* file = v ? app.gpu : app.cpu;
    std::string cfg = test::example_config(file);
    ASSERT_FALSE(cfg.empty());
    if (v && edit) cfg = edit(cfg);
    auto r = test::run_with(cfg, v ? gpu_opt : test::default_options(), {{"OUT", fmt::format("{}/{}-", dir, file)}});
    ASSERT_TRUE(r->ok) << file << ": " << r->errors;
    const auto& acc = r->rt->accounting();
    sent[v] = acc.sent;
    for (const char* h : {"ids.alerts", "web.alerts", "other.alerts"}) {
      std::string val, err;
      if (r->rt->read_handler(h, val, err)) alerts[v] += std::stoull(val);
    }
    if (v && *app.host_steps) {
      EXPECT_GT(r->n(app.host_steps), 0u) << file << ": no suspect was found clean";
    }
    if (v) {
      for (const std::string& h : used) EXPECT_GT(r->n(h), 0u) << file << " " << tag << ": " << h;
      if (gpu_opt.offload.device.fault_rate == 0) {
        for (const std::string& h : app.used) EXPECT_GT(r->n(h), 0u) << file << " " << tag << ": " << h;
      }
    }
    test::finish(*r, false, v && gpu_opt.offload.device.fault_rate > 0);
  }
  EXPECT_EQ(sent[0], sent[1]) << app.cpu;
  EXPECT_EQ(alerts[0], alerts[1]) << app.cpu;
  EXPECT_GT(alerts[0], 0u) << app.cpu;
  size_t total = 0;
  for (const std::string& o : app.outputs) {
    auto a = test::read_pcap(fmt::format("{}/{}-{}.pcap", dir, app.cpu, o));
    auto b = test::read_pcap(fmt::format("{}/{}-{}.pcap", dir, app.gpu, o));
    ASSERT_EQ(a.size(), b.size()) << app.cpu << " output " << o;
    total += a.size();
    if (app.exact_order) {
      for (size_t j = 0; j < a.size(); ++j) ASSERT_EQ(a[j].bytes, b[j].bytes) << app.cpu << " " << o << " #" << j;
      continue;
    }
    // The same frames, and within each flow in the same order.
    std::map<std::string, std::vector<std::vector<uint8_t>>> fa, fb;
    std::multiset<std::vector<uint8_t>> ma, mb;
    for (auto& f : a) fa[flow_of(f.bytes)].push_back(f.bytes), ma.insert(f.bytes);
    for (auto& f : b) fb[flow_of(f.bytes)].push_back(f.bytes), mb.insert(f.bytes);
    EXPECT_TRUE(ma == mb) << app.cpu << " output " << o << ": different frames";
    for (auto& [flow, seq] : fa)
      EXPECT_TRUE(seq == fb[flow]) << app.cpu << " output " << o << ": flow " << flow << " reordered";
  }
  EXPECT_GT(total, 20u) << app.cpu;
  for (const std::string& l : app.logs) {
    auto a = log_lines(fmt::format("{}/{}-{}.log", dir, app.cpu, l));
    auto b = log_lines(fmt::format("{}/{}-{}.log", dir, app.gpu, l));
    EXPECT_FALSE(a.empty()) << app.cpu << " " << l;
    EXPECT_EQ(a, b) << app.cpu << " " << l;
  }
}

}  // namespace

TEST(SnapApps, OffloadedVariantsGiveTheCpuVariantsOutputs) {
  for (const SnapApp& app : apps()) {
    SCOPED_TRACE(app.cpu);
    check_app(app, test::default_options(), "plain");
  }
}

TEST(SnapApps, OffloadedVariantsAgreeUnderDeviceDelaysAndFaults) {
  // Aggregates finish out of order (random delays) and 30% of device
  // operations fail (those aggregates run on the CPU): the outputs stay.
  test::Options o = test::default_options();
  o.offload.device.delay_us = 50;
  o.offload.device.fault_rate = 0.3;
  for (const SnapApp& app : apps()) {
    SCOPED_TRACE(app.cpu);
    check_app(app, o, "faults");
  }
}

TEST(SnapApps, AChunkedScanBetweenOtherStepsGivesTheCpuOutputs) {
  // The IDS router's payload scan split among threads (SCAN_CHUNK) with
  // device steps before it (header check, access list) and after it (lookup
  // and TTL on its predicate bits). CUDA fuses the three into one kernel
  // when a packet's chunks fit in a block (16 bytes: ~70 chunks for the
  // longest payload here) and launches the scan by itself when they do not
  // (2 bytes: ~520); the host backend runs them in turn.
  const SnapApp& app = apps()[1];
  for (const char* chunk : {"16", "2"}) {
    SCOPED_TRACE(chunk);
    check_app(app, test::default_options(), fmt::format("chunk{}", chunk),
              [&](std::string cfg) {
                const std::string at = "QUIET true,";
                size_t p = cfg.find(at);
                EXPECT_NE(p, std::string::npos);
                if (p != std::string::npos) cfg.insert(p + at.size(), fmt::format(" SCAN_CHUNK {},", chunk));
                return cfg;
              },
              {"h.device_aggregates", "ids.device_chunked"});
  }
}

TEST(SnapApps, SkipNeedsAnElementThatCanRunAPacketOnTheHost) {
  auto r = test::run(
      "Idle -> Batcher -> HostToDevice -> GPUCheckIPHeader(14, SKIP 3) -> DeviceToHost -> "
      "CompletionQueue -> Debatcher -> Discard;");
  EXPECT_FALSE(r->ok);
  EXPECT_NE(r->errors.find("SKIP"), std::string::npos) << r->errors;
  auto q = test::run(
      "Idle -> Batcher -> HostToDevice -> GPUIPLookup(0/0 0, SKIP 40) -> DeviceToHost -> "
      "CompletionQueue -> Debatcher -> Discard;");
  EXPECT_FALSE(q->ok);
  EXPECT_NE(q->errors.find("0-31"), std::string::npos) << q->errors;
}
