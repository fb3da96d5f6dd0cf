// Multi-field classification: the cut trees against the linear first-match
// oracle on generated ClassBench-style sets and traces and on edge cases;
// the ClassBench text format; frames to keys.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <fstream>
#include <random>

#include "helpers.hh"
#include "shoal/classbench/classbench.hh"
#include "shoal/classbench/classify_build.hh"
#include "shoal/io/pcap.hh"

using namespace shoal;
using namespace shoal::classify;

namespace {

k::ClsRule rule(const std::string& text) {
  k::ClsRule r;
  std::string err;
  EXPECT_TRUE(parse_rule(text, r, err)) << text << ": " << err;
  return r;
}

// Keys anywhere: random fields, and fields at the rules' range edges.
std::vector<k::ClsKey> edge_keys(const std::vector<k::ClsRule>& rules, size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<k::ClsKey> out;
  for (size_t i = 0; i < n; ++i) {
    const k::ClsRule& r = rules[rng() % rules.size()];
    k::ClsKey key;
    key.ethertype = rng() % 10 ? 0x0800 : 0x0806;
    key.ip = key.ethertype == 0x0800;
    key.tagged = rng() % 4 == 0;
    key.vlan = uint16_t(rng() % 8);
    if (key.ip) {
      key.src = rng() % 2 ? r.src | (rng() % 2 ? ~r.smask : 0) : uint32_t(rng());
      key.dst = rng() % 2 ? r.dst | (rng() % 2 ? ~r.dmask : 0) : uint32_t(rng());
      static const uint8_t protos[] = {6, 17, 1, 0, 255};
      key.proto = protos[rng() % std::size(protos)];
      auto edge = [&](uint16_t lo, uint16_t hi) -> uint16_t {
        switch (rng() % 5) {
          case 0: return lo;
          case 1: return hi;
          case 2: return uint16_t(lo - 1);
          case 3: return uint16_t(hi + 1);
          default: return uint16_t(rng());
        }
      };
      key.sport = edge(r.sp_lo, r.sp_hi);
      key.dport = edge(r.dp_lo, r.dp_hi);
      key.flags = uint16_t(0x5000 | (rng() & 0x1ff));
    }
    out.push_back(key);
  }
  return out;
}

void expect_oracle(const k::ClsTrees& t, const std::vector<k::ClsKey>& keys, const std::string& what) {
  const auto& rules = t.rules();
  k::ClsView v = t.view();
  size_t matched = 0;
  for (const k::ClsKey& key : keys) {
    int32_t want = k::cls_linear(rules.data(), uint32_t(rules.size()), key);
    int32_t got = k::cls_lookup(v, key);
    ASSERT_EQ(got, want) << what << ": src " << key.src << " dst " << key.dst << " ports " << key.sport << "/"
                         << key.dport << " proto " << int(key.proto);
    matched += want >= 0;
  }
  EXPECT_GT(matched, 0u) << what;
}

}  // namespace

TEST(ClassBench, ParsesTheFormatAndItsOptions) {
  k::ClsRule r = rule("@192.151.11.17/24\t15.0.120.4/32\t10 : 65535\t0 : 65535\t0x06/0xFF\t0x1000/0x1000");
  EXPECT_EQ(r.src, 0xc0970b00u);
  EXPECT_EQ(r.smask, 0xffffff00u);
  EXPECT_EQ(r.dst, 0x0f007804u);
  EXPECT_EQ(r.sp_lo, 10);
  EXPECT_EQ(r.dp_hi, 65535);
  EXPECT_EQ(r.proto, 6);
  EXPECT_EQ(r.flags_mask, 0x1000);
  EXPECT_EQ(r.ip, 1);
  EXPECT_EQ(r.action, 0);
  k::ClsRule s = rule("@0.0.0.0/0 0.0.0.0/0 0:65535 0 :65535 0x00/0x00 ethertype 0x0806 vlan 7 port 3");
  EXPECT_EQ(s.ip, 0);
  EXPECT_EQ(s.ethertype, 0x0806);
  EXPECT_EQ(s.vlan_mask, 0x0fff);
  EXPECT_EQ(s.action, 3);
  k::ClsRule any = rule("@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 ethertype any");
  EXPECT_EQ(any.ethertype_mask, 0);
  // round trip
  k::ClsRule back = rule(unparse_rule(s));
  EXPECT_EQ(unparse_rule(back), unparse_rule(s));

  struct Bad {
    const char* text;
    const char* says;
  } bad[] = {
      {"10.0.0.0/8 0.0.0.0/0 0 : 1 0 : 1 0x06/0xFF", "'@'"},
      {"@10.0.0.0/33 0.0.0.0/0 0 : 1 0 : 1 0x06/0xFF", "source"},
      {"@10.0.0/8 0.0.0.0/0 0 : 1 0 : 1 0x06/0xFF", "source"},
      {"@10.0.0.0/8 1.2.3.4 0 : 1 0 : 1 0x06/0xFF", "destination"},
      {"@10.0.0.0/8 0.0.0.0/0 5 : 1 0 : 1 0x06/0xFF", "source ports"},
      {"@10.0.0.0/8 0.0.0.0/0 0 : 1 0 : 70000 0x06/0xFF", "destination ports"},
      {"@10.0.0.0/8 0.0.0.0/0 0 : 1 0 : 1", "protocol"},
      {"@10.0.0.0/8 0.0.0.0/0 0 : 1 0 : 1 0x16/0x0F", "outside mask"},
      {"@10.0.0.0/8 0.0.0.0/0 0 : 1 0 : 1 0x06/0xFF port 300", "port"},
      {"@10.0.0.0/8 0.0.0.0/0 0 : 1 0 : 1 0x06/0xFF colour red", "unknown option"},
      {"@10.0.0.0/8 0.0.0.0/0 0 : 1 0 : 1 0x06/0xFF ethertype 0x0806", "need IPv4"},
      {"@10.0.0.0/8 0.0.0.0/0 0 : 1 0 : 1 0x06/0xFF vlan", "needs a value"},
  };
  for (const Bad& b : bad) {
    k::ClsRule x;
    std::string err;
    EXPECT_FALSE(parse_rule(b.text, x, err)) << b.text;
    EXPECT_NE(err.find(b.says), std::string::npos) << b.text << " -> " << err;
  }
  std::vector<k::ClsRule> rs;
  std::string err;
  EXPECT_FALSE(
      parse_rules("# a comment\n\n@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n@bad\n", "f.rules", rs, err));
  EXPECT_NE(err.find("f.rules:4:"), std::string::npos) << err;
  EXPECT_FALSE(load_rules("/nonexistent/x.rules", rs, err));
  EXPECT_NE(err.find("cannot read"), std::string::npos);
}

TEST(ClassBench, FramesGiveBackTheirKeys) {
  auto rules = generate({Flavor::Ipc, 500, 3, 4, true});
  auto keys = trace_keys(rules, 2000, 4);
  std::vector<uint8_t> buf(1600);
  for (const k::ClsKey& key : keys) {
    for (uint32_t size : {64u, 1500u}) {
      uint32_t len = build_frame(key, size, buf.data());
      k::ClsKey got;
      ASSERT_EQ(k::cls_key(buf.data(), len, got), k::kClsOk);
      EXPECT_EQ(got.src, key.src);
      EXPECT_EQ(got.dst, key.dst);
      EXPECT_EQ(got.sport, key.sport);
      EXPECT_EQ(got.dport, key.dport);
      EXPECT_EQ(got.proto, key.proto);
      EXPECT_EQ(got.flags, key.flags);
      EXPECT_EQ(got.ethertype, key.ethertype);
      EXPECT_EQ(got.tagged, key.tagged);
      EXPECT_EQ(got.vlan, key.vlan);
      EXPECT_EQ(got.ip, key.ip);
    }
  }
  // runts, bad IPv4 headers, a later fragment (no ports), a short TCP header
  k::ClsKey key;
  uint8_t f[64] = {};
  EXPECT_EQ(k::cls_key(f, 13, key), k::kClsRunt);
  f[12] = 0x81, f[13] = 0x00;
  EXPECT_EQ(k::cls_key(f, 16, key), k::kClsRunt);
  f[12] = 0x08, f[13] = 0x00;
  EXPECT_EQ(k::cls_key(f, 30, key), k::kClsBadIp);
  f[14] = 0x46;  // IHL 6, but only 20 bytes there
  EXPECT_EQ(k::cls_key(f, 34, key), k::kClsBadIp);
  f[14] = 0x65;  // version 6 under ethertype 0x0800
  EXPECT_EQ(k::cls_key(f, 64, key), k::kClsBadIp);
  f[14] = 0x45, f[23] = 6, f[34] = 0x12, f[35] = 0x34;
  f[20] = 0x00, f[21] = 0x10;  // fragment offset 16
  ASSERT_EQ(k::cls_key(f, 64, key), k::kClsOk);
  EXPECT_EQ(key.sport, 0);
  f[21] = 0;
  ASSERT_EQ(k::cls_key(f, 40, key), k::kClsOk);  // 6 bytes of TCP: ports, no flags
  EXPECT_EQ(key.sport, 0x1234);
  EXPECT_EQ(key.flags, 0);
}

TEST(ClsTrees, MatchTheLinearOracleOnGeneratedSets) {
  for (Flavor f : {Flavor::Acl, Flavor::Fw, Flavor::Ipc}) {
    for (size_t n : {100u, 1000u, 10000u}) {
      auto rules = generate({f, n, uint32_t(n) + 7, 8, true});
      ASSERT_EQ(rules.size(), n);
      k::ClsTrees t;
      std::string err;
      ASSERT_TRUE(t.build(rules, err)) << err;
      const auto& st = t.stats();
      std::string what = fmt::format("{} {}", flavor_name(f), n);
      std::string line =
          (fmt::format("trees {} nodes {} depth {} leaf entries {} ({:.1f}/rule) largest leaf {} "
                       "memory {} KiB build {:.0f} ms",
                       st.trees, st.nodes, st.depth, st.leaf_entries, double(st.leaf_entries) / double(n),
                       st.largest_leaf, t.memory_bytes() >> 10, st.build_ms));
      RecordProperty(what, line);
      if (getenv("SHOAL_VERBOSE")) fmt::print("{}: {}\n", what, line);
      EXPECT_LT(st.leaf_entries, 40 * n) << what << ": rule copies stay bounded";
      expect_oracle(t, trace_keys(rules, 20000, 1), what + " trace");
      expect_oracle(t, edge_keys(rules, 20000, 2), what + " edges");
      if (HasFatalFailure()) return;
    }
  }
}

TEST(ClsTrees, EdgeCases) {
  std::vector<k::ClsRule> rules = {
      rule("@10.0.0.0/8 0.0.0.0/0 0 : 65535 80 : 80 0x06/0xFF port 1"),
      rule("@10.1.0.0/16 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 port 2"),  // partly hidden by nothing: overlaps
      rule("@10.1.2.0/24 0.0.0.0/0 0 : 65535 80 : 80 0x06/0xFF port 3"),    // hidden by rule 0 entirely
      rule("@0.0.0.0/0 192.168.0.0/16 0 : 65535 0 : 65535 0x11/0xFF port 4"),
      rule("@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF 0x0002/0x0012 port 5"),  // bare SYNs
      rule("@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 vlan 7 port 6"),
      rule("@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 ethertype 0x0806 port 7"),
      rule("@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 port 0"),  // every IPv4 frame
  };
  k::ClsTrees t;
  std::string err;
  ASSERT_TRUE(t.build(rules, {1, 2.0, 8}, err)) << err;  // BINTH 1: cut as far as it goes
  auto classify = [&](k::ClsKey key) {
    int32_t r = k::cls_lookup(t.view(), key);
    EXPECT_EQ(r, k::cls_linear(rules.data(), uint32_t(rules.size()), key));
    return r < 0 ? -1 : rules[size_t(r)].action;
  };
  k::ClsKey web;
  web.ip = 1, web.ethertype = 0x0800, web.proto = 6, web.src = 0x0a010203, web.dport = 80, web.flags = 0x5010;
  EXPECT_EQ(classify(web), 1);
  web.dport = 81;
  EXPECT_EQ(classify(web), 2);
  web.src = 0x0b000001, web.flags = 0x5002;
  EXPECT_EQ(classify(web), 5);
  web.flags = 0x5012;  // SYN+ACK
  EXPECT_EQ(classify(web), 0);
  k::ClsKey udp = web;
  udp.proto = 17, udp.dst = 0xc0a80101;
  EXPECT_EQ(classify(udp), 4);
  udp.tagged = 1, udp.vlan = 7, udp.dst = 1;
  EXPECT_EQ(classify(udp), 6);
  k::ClsKey arp;
  arp.ethertype = 0x0806;
  EXPECT_EQ(classify(arp), 7);
  arp.ethertype = 0x86dd;  // IPv6: no rule for it
  EXPECT_EQ(classify(arp), -1);
  // full wildcards on ports: 0 and 65535 both in
  udp.tagged = 0, udp.sport = 0, udp.dport = 65535;
  EXPECT_EQ(classify(udp), 0);
  // an empty set
  k::ClsTrees none;
  ASSERT_TRUE(none.build({}, err));
  EXPECT_EQ(k::cls_lookup(none.view(), web), -1);
}

namespace {

// A ClassBench-style set and a trace of frames hitting it, with hostile
// frames mixed in (runts, a broken IPv4 header, ARP and IPv6 frames).
struct Workload {
  std::string dir, rules, trace;
  std::vector<k::ClsRule> set;
};

Workload make_workload(Flavor f, size_t nrules, size_t npackets, int ports, bool catch_all) {
  Workload w;
  w.dir = test::tmpdir();
  w.rules = w.dir + "/sdn.rules";
  w.trace = w.dir + "/sdn.pcap";
  w.set = generate({f, nrules, 11, ports, catch_all});
  {
    std::ofstream o(w.rules);
    o << "# generated\n";
    for (auto& r : w.set) o << unparse_rule(r) << "\n";
  }
  auto keys = trace_keys(w.set, npackets, 12);
  io::PcapWriter pw;
  std::string err;
  EXPECT_TRUE(pw.open(w.trace, 1, 65535, true, err)) << err;
  std::vector<uint8_t> buf(1600);
  std::mt19937 rng(13);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (i % 17 == 0) {  // LLDP: only an "ethertype any" rule takes it
      keys[i] = k::ClsKey();
      keys[i].ethertype = 0x88cc;
    }
    uint32_t len = build_frame(keys[i], i % 7 == 0 ? 1514 : 64 + rng() % 200, buf.data());
    if (i % 211 == 0) len = 10;                                            // runt
    if (i % 223 == 0 && keys[i].ip) buf[keys[i].tagged ? 18 : 14] = 0x44;  // IHL 4
    pw.write(buf.data(), len, len, 1700000000000000000ull + i * 1000);
  }
  return w;
}

}  // namespace

TEST(SDNClassifier, SendsEachFrameWhereTheOracleSaysAndAccountsForTheRest) {
  auto w = make_workload(Flavor::Fw, 2000, 6000, 4, false);
  std::string out = w.dir + "/cpu";
  auto cfg = [&](const std::string& tag, const std::string& before) {
    return fmt::format(R"(FromDump({}, STOP true) -> {} c :: SDNClassifier(RULES {}, NOMATCH 4);
        c[0] -> ToDump({}/{}-0.pcap); c[1] -> ToDump({}/{}-1.pcap); c[2] -> ToDump({}/{}-2.pcap);
        c[3] -> ToDump({}/{}-3.pcap); c[4] -> ToDump({}/{}-4.pcap);)",
                       w.trace, before, w.rules, w.dir, tag, w.dir, tag, w.dir, tag, w.dir, tag, w.dir, tag);
  };
  auto cpu = test::run(cfg("cpu", ""));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  EXPECT_EQ(cpu->n("c.rules"), 2000u);
  uint64_t nomatch = cpu->n("c.no_match");
  test::finish(*cpu);
  // every frame of every output is where the linear oracle sends it
  size_t seen = 0, runts = 0, bad = 0, to_nomatch = 0;
  for (const auto& f : test::read_pcap(w.trace)) {
    k::ClsKey key;
    int st = k::cls_key(f.bytes.data(), uint32_t(std::min<size_t>(f.bytes.size(), k::kClsKeyBytes)), key);
    runts += st == k::kClsRunt;
    bad += st == k::kClsBadIp;
    if (st == k::kClsOk) to_nomatch += k::cls_linear(w.set.data(), uint32_t(w.set.size()), key) < 0;
  }
  EXPECT_GT(runts, 0u);
  EXPECT_GT(bad, 0u);
  EXPECT_GT(to_nomatch, 0u) << "no catch-all: some frames match nothing";
  EXPECT_EQ(nomatch, to_nomatch);
  for (int port = 0; port <= 4; ++port) {
    auto frames = test::read_pcap(fmt::format("{}/cpu-{}.pcap", w.dir, port));
    for (const auto& f : frames) {
      k::ClsKey key;
      ASSERT_EQ(k::cls_key(f.bytes.data(), uint32_t(std::min<size_t>(f.bytes.size(), k::kClsKeyBytes)), key),
                k::kClsOk);
      int32_t r = k::cls_linear(w.set.data(), uint32_t(w.set.size()), key);
      ASSERT_EQ(r < 0 ? 4 : w.set[size_t(r)].action, port);
    }
    seen += frames.size();
  }
  EXPECT_EQ(seen + runts + bad, 6000u) << "received = sent + dropped (runt, bad-ip-header)";

  // offloaded (host backend; CUDA where there is one): the same frames on
  // the same outputs in the same order, with device delays and faults
  for (double faults : {0.0, 0.3}) {
    test::Options o = test::default_options();
    o.offload.device.delay_us = 20;
    o.offload.device.fault_rate = faults;
    o.offload.inflight = 4;
    std::string tag = fmt::format("off-{}", faults);
    auto off = test::run_with(cfg(tag, "OffloadBalancer(0.7) ->"), o);
    ASSERT_TRUE(off->ok) << off->errors;
    EXPECT_GT(off->n("c.offload_packets"), 0u);
    EXPECT_EQ(off->n("c.no_match"), nomatch);
    test::finish(*off, false, faults > 0);
    for (int port = 0; port <= 4; ++port) {
      auto a = test::read_pcap(fmt::format("{}/cpu-{}.pcap", w.dir, port));
      auto b = test::read_pcap(fmt::format("{}/{}-{}.pcap", w.dir, tag, port));
      ASSERT_EQ(a.size(), b.size()) << tag << " output " << port;
      for (size_t j = 0; j < a.size(); ++j) ASSERT_EQ(a[j].bytes, b[j].bytes) << tag << " output " << port;
    }
  }
}

TEST(SDNClassifier, SnapFormSetsPredicatesForADispatcher) {
  auto w = make_workload(Flavor::Acl, 1000, 3000, 3, true);
  auto cfg = [&](const std::string& tag, bool gpu) {
    std::string head = gpu ? fmt::format(
                                 "Batcher(512, 100us) -> HostToDevice -> GPUSDNClassifier(RULES {}) -> "
                                 "DeviceToHost -> CompletionQueue -> Debatcher -> c :: Dispatcher(0, 1, 2)",
                                 w.rules)
                           : fmt::format("c :: SDNClassifier(RULES {})", w.rules);
    return fmt::format(
        "FromDump({}, STOP true) -> {}; c[0] -> ToDump({}/{}-0.pcap); c[1] -> ToDump({}/{}-1.pcap); "
        "c[2] -> ToDump({}/{}-2.pcap);",
        w.trace, head, w.dir, tag, w.dir, tag, w.dir, tag);
  };
  for (bool gpu : {false, true}) {
    auto r = test::run(cfg(gpu ? "snap" : "cpu", gpu));
    ASSERT_TRUE(r->ok) << r->errors;
    test::finish(*r);
  }
  size_t total = 0;
  for (int port = 0; port < 3; ++port) {
    auto a = test::read_pcap(fmt::format("{}/cpu-{}.pcap", w.dir, port));
    auto b = test::read_pcap(fmt::format("{}/snap-{}.pcap", w.dir, port));
    ASSERT_EQ(a.size(), b.size()) << "output " << port;
    for (size_t j = 0; j < a.size(); ++j) ASSERT_EQ(a[j].bytes, b[j].bytes) << "output " << port;
    total += a.size();
  }
  EXPECT_GT(total, 2700u) << "all but the runts, broken headers and LLDP frames";
}

TEST(SDNClassifier, ReloadsAtRunTimeAndReportsBadRules) {
  std::string dir = test::tmpdir(), rules = dir + "/r.rules", other = dir + "/o.rules";
  {
    std::ofstream(rules) << "@10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 port 1\n"
                            "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 port 0\n";
    std::ofstream(other) << "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 port 1\n";
  }
  auto r = test::run(fmt::format("Idle -> c :: SDNClassifier(RULES {}) -> Discard; c[1] -> Discard;", rules));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.rules"), 2u);
  EXPECT_EQ(r->n("c.version"), 1u);
  std::string err;
  EXPECT_TRUE(r->rt->write_handler("c.load", other, err)) << err;
  EXPECT_EQ(r->n("c.rules"), 1u);
  EXPECT_EQ(r->n("c.version"), 2u);
  { std::ofstream(other) << "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 port 5\n"; }
  EXPECT_FALSE(r->rt->write_handler("c.reload", "", err));
  EXPECT_NE(err.find("output 5"), std::string::npos) << err;
  EXPECT_EQ(r->n("c.rules"), 1u) << "the old rules stay";
  test::finish(*r);

  struct Bad {
    std::string cfg, says;
  } bad[] = {
      {"Idle -> SDNClassifier() -> Discard;", "RULES"},
      {"Idle -> SDNClassifier(RULES /nonexistent.rules) -> Discard;", "cannot read"},
      {fmt::format("Idle -> SDNClassifier(RULES {}) -> Discard;", rules), "output 1"},
      {"Idle -> SDNClassifier(@1.2.3.4/40 0.0.0.0/0 0 : 1 0 : 1 0x06/0xFF) -> Discard;", "source"},
      {"Idle -> SDNClassifier(@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00, NOMATCH 3) -> Discard;", "NOMATCH"},
  };
  for (const Bad& b : bad) {
    auto x = test::run(b.cfg);
    EXPECT_FALSE(x->ok) << b.cfg;
    EXPECT_NE(x->errors.find(b.says), std::string::npos) << b.cfg << " -> " << x->errors;
  }
}

TEST(SDNClassifier, TheForwarderExamplesAgreeWithEachOtherAndTheOracle) {
  // examples/sdn-forwarder.click (CPU) and gpu-sdn-forwarder.click (Snap
  // form, host backend here, CUDA on a GPU machine): the same frames on
  // the same outputs, and each where the linear scan of the rules says.
  std::string root = SHOAL_SOURCE_DIR, dir = test::tmpdir();
  std::vector<k::ClsRule> rules;
  std::string err;
  ASSERT_TRUE(load_rules(root + "/examples/data/sdn/acl1k.rules", rules, err)) << err;
  for (const char* file : {"sdn-forwarder.click", "gpu-sdn-forwarder.click"}) {
    std::string cfg = test::example_config(file);
    ASSERT_FALSE(cfg.empty());
    auto r = test::run(cfg, 1, 4096, {{"OUT", fmt::format("{}/{}-", dir, file)}});
    ASSERT_TRUE(r->ok) << r->errors;
    EXPECT_EQ(r->n("c0.count") + r->n("c1.count") + r->n("c2.count") + r->n("c3.count"), 3000u) << file;
    test::finish(*r);
  }
  for (int port = 0; port < 4; ++port) {
    auto a = test::read_pcap(fmt::format("{}/sdn-forwarder.click-port{}.pcap", dir, port));
    auto b = test::read_pcap(fmt::format("{}/gpu-sdn-forwarder.click-port{}.pcap", dir, port));
    ASSERT_EQ(a.size(), b.size()) << "output " << port;
    EXPECT_GT(a.size(), 300u);
    for (size_t j = 0; j < a.size(); ++j) {
      ASSERT_EQ(a[j].bytes, b[j].bytes) << "output " << port;
      k::ClsKey key;
      ASSERT_EQ(k::cls_key(a[j].bytes.data(), uint32_t(a[j].bytes.size()), key), k::kClsOk);
      int32_t want = k::cls_linear(rules.data(), uint32_t(rules.size()), key);
      ASSERT_GE(want, 0);
      EXPECT_EQ(rules[size_t(want)].action, port);
    }
  }
}
