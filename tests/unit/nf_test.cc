// Network functions on the flow layer: Maglev's table against the paper's
// properties, the stateful firewall's decision against a linear oracle and
// conntrack's rules, and the firewall and load balancer in graphs.
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include "helpers.hh"
#include "shoal/classbench/classbench.hh"
#include "shoal/classbench/classify_build.hh"
#include "shoal/io/pcap.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/kernels/firewall.hh"
#include "shoal/kernels/tokenbucket.hh"
#include "shoal/nf/fwrules.hh"
#include "shoal/nf/maglev.hh"

namespace shoal::test {

namespace {

std::vector<std::string> backend_names(int n, int from = 0) {
  std::vector<std::string> v;
  for (int i = from; i < from + n; ++i) v.push_back(fmt::format("10.1.{}.{}", i / 250, i % 250 + 1));
  return v;
}

nf::MaglevTable maglev(const std::vector<std::string>& names, uint32_t m = 65537) {
  nf::MaglevTable t;
  std::string err;
  EXPECT_TRUE(t.build(names, m, err)) << err;
  return t;
}

}  // namespace

TEST(Maglev, EveryBackendHoldsAnEqualShareGiveOrTakeOneEntry) {
  for (int n : {1, 3, 10, 100, 1000}) {
    auto t = maglev(backend_names(n));
    auto c = t.counts();
    auto [lo, hi] = std::minmax_element(c.begin(), c.end());
    EXPECT_LE(*hi - *lo, 1u) << n << " backends";
    EXPECT_EQ(std::accumulate(c.begin(), c.end(), 0u), 65537u);
  }
}

TEST(Maglev, ABackendLeavingOrJoiningMovesLittleMoreThanItsShare) {
  // The paper's resilience: removing one of N backends must move its 1/N of
  // the entries, and the others move some entries too (the survivors' fill
  // order shifts once they claim the freed entries). Measured here with the
  // paper's two table sizes: up to 1.54x its share for N = 10 and 100
  // (M = 65537), 4.3x for N = 1000 (M = 655373), so the bound grows with N.
  for (int n : {10, 100, 1000}) {
    uint32_t m = n > 500 ? 655373 : 65537;
    double bound = n > 500 ? 5.0 : 1.6;
    auto names = backend_names(n);
    auto full = maglev(names, m);
    for (int victim : {0, n / 2, n - 1}) {
      auto less = names;
      less.erase(less.begin() + victim);
      auto t = maglev(less, m);
      double share = 1.0 / n, moved = t.changed(full);
      EXPECT_GE(moved, share * 0.95) << n << " backends, removing " << victim;
      EXPECT_LE(moved, share * bound) << n << " backends, removing " << victim;
      // Entries moved between backends that stayed: the excess.
      size_t among = 0;
      for (size_t i = 0; i < t.entries().size(); ++i) {
        const std::string& before = full.names()[full.entries()[i]];
        if (before != names[size_t(victim)] && before != less[t.entries()[i]]) ++among;
      }
      EXPECT_LE(double(among) / m, share * (bound - 1)) << n << " backends";
    }
    auto more = names;
    more.push_back("10.9.9.9");
    double moved = maglev(more, m).changed(full);
    EXPECT_GE(moved, 0.95 / (n + 1));
    EXPECT_LE(moved, bound / (n + 1));
  }
}

TEST(Maglev, TheSameBackendsGiveTheSameTableInAnyOrderOfBuilds) {
  auto a = maglev(backend_names(7)), b = maglev(backend_names(7));
  EXPECT_EQ(a.entries(), b.entries());
  nf::MaglevTable t;
  std::string err;
  EXPECT_FALSE(t.build(backend_names(3), 65536, err));
  EXPECT_NE(err.find("not a prime"), std::string::npos) << err;
  EXPECT_FALSE(t.build({"a", "b", "a"}, 13, err));
  EXPECT_NE(err.find("named twice"), std::string::npos) << err;
  EXPECT_FALSE(t.build(backend_names(13), 13, err));
  EXPECT_TRUE(t.build({}, 13, err));
  EXPECT_EQ(k::maglev_pick(t.view(), 12345), k::kMaglevNone);
}

TEST(FirewallRules, ParseAndUnparse) {
  std::vector<k::ClsRule> rules;
  std::string err;
  ASSERT_TRUE(
      nf::parse_fw_rules("allow @10.0.0.0/8 0.0.0.0/0 0 : 65535 80 : 80 0x06/0xFF  # web\n"
                         "\n"
                         "drop @0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n",
                         "fw", rules, err))
      << err;
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].action, 0);
  EXPECT_EQ(rules[1].action, 1);
  k::ClsRule back;
  ASSERT_TRUE(nf::parse_fw_rule(nf::unparse_fw_rule(rules[0]), back, err)) << err;
  EXPECT_EQ(nf::unparse_fw_rule(back), nf::unparse_fw_rule(rules[0]));
  EXPECT_FALSE(
      nf::parse_fw_rules("allow @1.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\nreject @x\n", "fw", rules, err));
  EXPECT_EQ(err.rfind("fw:2: 'reject'", 0), 0u) << err;
  EXPECT_FALSE(nf::parse_fw_rule("allow @1.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 port 2", back, err));
  EXPECT_FALSE(nf::parse_fw_rule("deny", back, err));
}

// Every connection's verdict is the first matching rule's action (the
// default when none matches), whichever direction its packets come from,
// and a rule change re-decides connections at their next packet.
TEST(Firewall, VerdictsMatchALinearScanOfTheRulesBothWays) {
  classify::GenSpec spec;
  spec.flavor = classify::Flavor::Fw;
  spec.rules = 180;
  spec.catch_all = false;
  std::vector<k::ClsRule> rules = classify::generate(spec);
  std::mt19937 rng(7);
  for (auto& r : rules) r.action = int32_t(rng() % 2);
  k::ClsTrees trees;
  std::string err;
  ASSERT_TRUE(trees.build(rules, err)) << err;
  k::FwRules fr;
  fr.view = trees.view();
  fr.midstream = 1;
  auto keys = classify::trace_keys(rules, 20000, 3);
  std::uniform_int_distribution<uint32_t> any;
  for (size_t i = 0; i < keys.size(); i += 4) keys[i].src = any(rng);  // some that match nothing
  size_t allowed = 0, defaulted = 0;
  for (int dflt = 0; dflt < 2; ++dflt) {
    fr.default_accept = uint8_t(dflt);
    for (const k::ClsKey& key : keys) {
      int32_t r = k::cls_linear(rules.data(), uint32_t(rules.size()), key);
      bool accept = r >= 0 ? rules[size_t(r)].action == 0 : dflt == 1;
      defaulted += r < 0;
      k::FwState s{};
      k::FwPacket p;
      p.key = key;
      p.tcp = key.proto == 6;
      p.key.flags = 0x02;  // SYN
      bool ev;
      ASSERT_EQ(k::fw_process(fr, s, p, ev), accept ? k::kFwPass : k::kFwDenied);
      ASSERT_TRUE(ev);
      ASSERT_EQ(s.rule, r);
      allowed += accept;
      // The reply, addresses and ports the other way: the same verdict, no
      // new evaluation.
      k::FwPacket q = p;
      std::swap(q.key.src, q.key.dst);
      std::swap(q.key.sport, q.key.dport);
      q.key.flags = 0x12;
      q.dir = 1;
      ASSERT_EQ(k::fw_process(fr, s, q, ev), accept ? k::kFwPass : k::kFwDenied);
      ASSERT_FALSE(ev);
      // A rule change: the reply re-decides the connection from its
      // originator's fields.
      k::FwRules flipped = fr;
      flipped.gen = 2;
      flipped.default_accept = uint8_t(1 - dflt);
      bool now = r >= 0 ? accept : !accept;
      ASSERT_EQ(k::fw_process(flipped, s, q, ev), now ? k::kFwPass : k::kFwDenied);
      ASSERT_TRUE(ev);
      ASSERT_EQ(s.rule, r);
    }
  }
  EXPECT_GT(allowed, 2 * keys.size() / 10);  // both verdicts well represented
  EXPECT_LT(allowed, 2 * keys.size() * 9 / 10);
  EXPECT_GT(defaulted, 50u);
}

TEST(Firewall, FollowsConntrackOnTcpFlagsNewConnectionsAndRelatedErrors) {
  k::ClsRule all;
  std::string err;
  ASSERT_TRUE(nf::parse_fw_rule("allow @0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00", all, err)) << err;
  k::ClsTrees trees;
  ASSERT_TRUE(trees.build({all}, err)) << err;
  k::FwRules fr;
  fr.view = trees.view();
  auto pkt = [](uint8_t flags, uint8_t dir, bool tcp = true) {
    k::FwPacket p;
    p.key.ip = 1;
    p.key.ethertype = 0x0800;
    p.key.proto = tcp ? 6 : 1;
    p.key.flags = flags;
    p.tcp = tcp;
    p.dir = dir;
    return p;
  };
  bool ev;
  // Linux's table: these are the valid combinations (PSH, ECE, CWR aside).
  int valid = 0;
  for (int f = 0; f < 256; ++f) valid += k::tcp_flags_valid(uint8_t(f));
  EXPECT_EQ(valid, 9 * 8);
  for (uint8_t bad : {0x00, 0x03, 0x06, 0x01, 0x29, 0x3f}) {
    k::FwState s{};
    EXPECT_EQ(k::fw_process(fr, s, pkt(bad, 0), ev), k::kFwInvalid) << int(bad);
  }
  k::FwState s{};
  EXPECT_EQ(k::fw_process(fr, s, pkt(0x10, 0), ev), k::kFwInvalid);  // a new connection's ACK
  EXPECT_EQ(s.verdict, k::kFwNone);
  EXPECT_EQ(k::fw_process(fr, s, pkt(0x12, 1), ev), k::kFwNotAdmitted);  // its reply
  k::FwPacket err_pkt = pkt(0, 1, false);
  err_pkt.related = 1;
  EXPECT_EQ(k::fw_process(fr, s, err_pkt, ev), k::kFwNotAdmitted);
  EXPECT_EQ(k::fw_process(fr, s, pkt(0x02, 0), ev), k::kFwPass);
  EXPECT_EQ(k::fw_process(fr, s, err_pkt, ev), k::kFwPass);  // RELATED to an admitted connection
  EXPECT_EQ(k::fw_process(fr, s, pkt(0x18, 1), ev), k::kFwPass);
  fr.midstream = 1;
  k::FwState m{};
  EXPECT_EQ(k::fw_process(fr, m, pkt(0x10, 0), ev), k::kFwPass);
}

TEST(Firewall, AdmitsConnectionsAndTheirRepliesOnlyInAGraph) {
  std::string in = tmpdir() + "/fw-in.txt", out = tmpdir() + "/fw-out.txt", rej = tmpdir() + "/fw-rej.txt";
  std::ofstream(in) << "!data src sport dst dport proto tcp_flags\n"
                       "10.0.0.1 1000 1.1.1.1 80 T S\n"   // new, allowed
                       "1.1.1.1 80 10.0.0.1 1000 T SA\n"  // its reply
                       "10.0.0.1 1000 1.1.1.1 80 T A\n"   // established
                       "1.1.1.1 22 10.0.0.1 2000 T S\n"   // new from outside: denied
                       "10.0.0.1 2000 1.1.1.1 22 T SA\n"  // its reply: denied
                       "10.0.0.2 3000 1.1.1.1 80 T A\n"   // new without SYN: invalid
                       "1.1.1.1 80 10.0.0.2 3000 T A\n"   // its reply: never admitted
                       "10.0.0.2 3001 1.1.1.1 80 T SF\n"  // invalid flags
                       "1.1.1.1 53 10.0.0.3 4000 U .\n"   // UDP from outside: denied
                       "10.0.0.3 4001 8.8.8.8 53 U .\n"   // allowed
                       "8.8.8.8 53 10.0.0.3 4001 U .\n";  // its reply
  auto r = run(fmt::format(R"(
    FromIPSummaryDump({}, STOP true, CHECKSUM true) -> FlowIPManager
      -> fw :: Firewall("allow @10.0.0.0/8 0.0.0.0/0 0 : 65535 80 : 80 0x06/0xFF",
                        "allow @10.0.0.0/8 0.0.0.0/0 0 : 65535 53 : 53 0x11/0xFF");
    fw[0] -> ToIPSummaryDump({}, FIELDS src sport dst dport proto);
    fw[1] -> ToIPSummaryDump({}, FIELDS src sport dst dport proto);
  )",
                           in, out, rej));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("fw.passed"), 5u);
  EXPECT_EQ(r->n("fw.denied"), 3u);
  EXPECT_EQ(r->n("fw.invalid"), 2u);
  EXPECT_EQ(r->n("fw.not_admitted"), 1u);
  EXPECT_EQ(r->n("fw.evaluations"), 4u);
  std::string table = r->h("fw.table");
  EXPECT_NE(table.find("# 1 connections\n"), std::string::npos) << table;
  EXPECT_NE(table.find("# default deny: 2 connections"), std::string::npos) << table;
  finish(*r);
  EXPECT_EQ(summary_lines(out, "\n"),
            "10.0.0.1 1000 1.1.1.1 80 T\n1.1.1.1 80 10.0.0.1 1000 T\n10.0.0.1 1000 1.1.1.1 80 T\n"
            "10.0.0.3 4001 8.8.8.8 53 U\n8.8.8.8 53 10.0.0.3 4001 U\n");
  EXPECT_EQ(summary_lines(rej, "\n"),
            "1.1.1.1 22 10.0.0.1 2000 T\n10.0.0.1 2000 1.1.1.1 22 T\n10.0.0.2 3000 1.1.1.1 80 T\n"
            "1.1.1.1 80 10.0.0.2 3000 T\n10.0.0.2 3001 1.1.1.1 80 T\n1.1.1.1 53 10.0.0.3 4000 U\n");
}

// On the CPU, and offloaded (a device chain takes the new rules at its next
// aggregate: a new copy of them goes to the device).
TEST(Firewall, DropsWithReasonsAndTakesNewRulesAtRunTime) {
  for (std::string before : {"", "OffloadBalancer(FRACTION 1) -> "}) {
    SCOPED_TRACE(before);
    std::string a = tmpdir() + "/fw-a.txt", b = tmpdir() + "/fw-b.txt", out = tmpdir() + "/fw-out2.txt";
    std::ofstream(a) << "!data src sport dst dport proto tcp_flags\n"
                        "10.0.0.1 1000 1.1.1.1 80 T S\n"
                        "1.1.1.1 80 10.0.0.1 1000 T SA\n"
                        "10.0.0.9 1000 1.1.1.1 80 T S\n"
                        "1.1.1.1 80 10.0.0.9 1000 T SA\n";  // (denied, but its handshake goes on)
    std::ofstream(b) << "!data src sport dst dport proto tcp_flags\n"
                        "10.0.0.1 1000 1.1.1.1 80 T A\n"   // now denied: its connection is decided again
                        "10.0.0.9 1000 1.1.1.1 80 T A\n";  // now allowed
    auto r = run(fmt::format(R"(
    x :: FromIPSummaryDump({}, STOP true, CHECKSUM true) -> in :: Null -> {} m :: FlowIPManager -> fw :: Firewall(DEFAULT deny,
         "allow @10.0.0.1/32 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00") -> ToIPSummaryDump({}, FIELDS src dst);
    y :: FromIPSummaryDump({}, STOP true, CHECKSUM true, ACTIVE false) -> in;
    DriverManager(wait_stop, write fw.rules "allow @10.0.0.9/32 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00",
                  write y.active true, wait_stop);
  )",
                             a, before, out, b));
    ASSERT_TRUE(r->ok) << r->errors;
    EXPECT_EQ(r->n("fw.generation"), 2u);
    EXPECT_EQ(r->n("fw.rules"), 1u);
    EXPECT_EQ(r->n("fw.passed"), 3u);
    EXPECT_EQ(r->n("fw.denied"), 3u);
    EXPECT_EQ(r->n("fw.evaluations"), 4u);
    EXPECT_EQ(r->n("fw.drops"), 3u);  // no second output: dropped, reason 'denied'
    if (!before.empty()) {
      EXPECT_EQ(r->n("fw.offload_device_packets"), 6u);
      EXPECT_EQ(r->n("fw.offload_uploads"), 2u) << "one copy of each rule set";
    }
    finish(*r);
    EXPECT_EQ(summary_lines(out, "\n"), "10.0.0.1 1.1.1.1\n1.1.1.1 10.0.0.1\n10.0.0.9 1.1.1.1\n");
  }
}

TEST(Firewall, RefusesBadRulesAtTheirArgument) {
  auto r = load(R"(Idle -> FlowIPManager -> Firewall("allow @10.0.0.0/8 nonsense") -> Discard;)");
  ASSERT_TRUE(r->ok) << r->errors;
  Options opt = default_options();
  auto bad = run_with(R"(Idle -> FlowIPManager -> Firewall("allow @10.0.0.0/8 nonsense") -> Discard;)", opt);
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("test.click:1:"), std::string::npos) << bad->errors;
  auto none =
      run_with("Idle -> Firewall(\"allow @0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\") -> Discard;", opt);
  EXPECT_FALSE(none->ok);
  EXPECT_NE(none->errors.find("needs a FlowIPManager upstream"), std::string::npos) << none->errors;
}

// A flood of 100,000 new flows against a table of 4,096: the table stays at
// its cap (evictions counted), and an established conversation survives it:
// its reply after the flood still belongs to the admitted connection (were
// its flow evicted, the reply would open a new connection the rules deny)
// and its backend does not change.
TEST(Firewall, AnEstablishedConnectionSurvivesAFloodOfNewFlows) {
  std::string a = tmpdir() + "/flood-a.txt", b = tmpdir() + "/flood-b.txt", out = tmpdir() + "/flood-out.txt";
  std::ofstream(a) << "!data src sport dst dport proto\n"
                      "10.0.0.1 5000 10.1.0.1 53 U\n"
                      "10.1.0.1 53 10.0.0.1 5000 U\n";
  std::ofstream(b) << "!data src sport dst dport proto\n"
                      "10.1.0.1 53 10.0.0.1 5000 U\n"
                      "10.0.0.1 5000 10.1.0.1 53 U\n";
  auto r = run(fmt::format(R"(
    x :: FromIPSummaryDump({}, STOP true, CHECKSUM true) -> m :: FlowIPManager(CAPACITY 4096)
      -> fw :: Firewall("allow @10.0.0.0/8 0.0.0.0/0 0 : 65535 0 : 65535 0x11/0xFF")
      -> lb :: FlowIPLoadBalancer(VIP 10.1.0.1, DST 10.2.0.1 10.2.0.2 10.2.0.3 10.2.0.4)
      -> k :: IPClassifier(src net 10.0.0.0/8 and src port 5000, dst net 10.0.0.0/8 and dst port 5000, -);
    k[0] -> o :: ToIPSummaryDump({}, FIELDS src sport dst dport); k[1] -> o; k[2] -> Discard;
    f :: FastUDPFlows(LENGTH 64, FLOWS 100000, LIMIT 100000, SRCIP 10.5.0.1, ACTIVE false, STOP true)
      -> Strip(14) -> CheckIPHeader -> m;
    y :: FromIPSummaryDump({}, STOP true, CHECKSUM true, ACTIVE false) -> m;
    DriverManager(wait_stop, write f.active true, wait_stop, write y.active true, wait_stop);
  )",
                           a, out, b));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_LE(r->n("m.count"), 4096u);
  EXPECT_GE(r->n("m.evicted"), 100000u - 4096u);
  EXPECT_EQ(r->n("fw.passed"), 100004u);
  EXPECT_EQ(r->n("fw.denied"), 0u);
  EXPECT_EQ(r->n("lb.reassigned"), 0u);
  finish(*r);
  std::string lines = summary_lines(out, "\n");
  std::istringstream in(lines);
  std::vector<std::string> v;
  for (std::string l; std::getline(in, l);) v.push_back(l);
  ASSERT_EQ(v.size(), 4u) << lines;
  EXPECT_EQ(v[0], v[3]) << "the client's packets before and after the flood go to one backend";
  EXPECT_EQ(v[1], v[2]);
}

// Connections stick to their backend; the checksums stay right (the
// checkers drop nothing); a removed backend's connections move; replies get
// the virtual address back.
TEST(FlowIPLoadBalancer, KeepsConnectionsOnTheirBackendAndMovesThoseOfARemovedOne) {
  std::string a = tmpdir() + "/lb-a.txt", b = tmpdir() + "/lb-b.txt", back = tmpdir() + "/lb-back.txt",
              out = tmpdir() + "/lb-out.txt", rev = tmpdir() + "/lb-rev.txt";
  std::ofstream(a) << "!data src sport dst dport proto tcp_flags payload\n"
                      "1.0.0.1 1000 10.0.0.100 80 T S x\n"
                      "1.0.0.1 1000 10.0.0.100 80 T A hello\n"
                      "1.0.0.2 2000 10.0.0.100 53 U . q\n"
                      "1.0.0.3 3000 10.9.9.9 80 T S x\n";  // not for the VIP
  std::ofstream(b) << "!data src sport dst dport proto tcp_flags payload\n"
                      "1.0.0.1 1000 10.0.0.100 80 T A more\n"
                      "1.0.0.4 4000 10.0.0.100 80 T S x\n";
  std::ofstream(back) << "!data src sport dst dport proto tcp_flags payload\n"
                         "10.0.1.2 80 1.0.0.1 1000 T A reply\n"
                         "10.0.1.2 53 1.0.0.2 2000 U . unknown\n"  // its connection went to 10.0.1.1
                         "10.0.1.7 80 1.0.0.4 4000 T SA nobody\n";
  auto r = run(fmt::format(R"(
    x :: FromIPSummaryDump({}, STOP true, CHECKSUM true) -> m :: FlowIPManager
      -> lb :: FlowIPLoadBalancer(VIP 10.0.0.100, DST 10.0.1.1)
      -> CheckIPHeader -> c :: CheckTCPHeader -> o :: ToIPSummaryDump({}, FIELDS src sport dst dport proto);
    c[1] -> CheckUDPHeader -> o;
    y :: FromIPSummaryDump({}, STOP true, CHECKSUM true, ACTIVE false) -> m;
    z :: FromIPSummaryDump({}, STOP true, CHECKSUM true, ACTIVE false) -> rv :: FlowIPLoadBalancerReverse(lb)
      -> CheckIPHeader -> CheckTCPHeader -> ToIPSummaryDump({}, FIELDS src sport dst dport proto);
    DriverManager(wait_stop, write lb.add 10.0.1.2, write lb.remove 10.0.1.1, write y.active true, wait_stop,
                  write z.active true, wait_stop);
  )",
                           a, out, b, back, rev));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("lb.balanced"), 4u);  // three connections, one of them twice
  EXPECT_EQ(r->n("lb.reassigned"), 1u);
  EXPECT_EQ(r->n("lb.passed"), 1u);
  EXPECT_EQ(r->n("lb.version"), 3u);
  EXPECT_EQ(r->n("rv.rewritten"), 1u);
  EXPECT_EQ(r->n("rv.unknown"), 2u);
  std::string backends = r->h("lb.backends");
  EXPECT_EQ(backends.rfind("10.0.1.2\t2 connections\t65537 of 65537 table entries", 0), 0u) << backends;
  finish(*r);
  // (TCP and UDP leave the checkers in separate batches: compared sorted.)
  auto sorted = [](const std::string& s) {
    std::vector<std::string> v;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);) v.push_back(l);
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(sorted(summary_lines(out, "\n")),
            sorted("1.0.0.1 1000 10.0.1.1 80 T\n1.0.0.1 1000 10.0.1.1 80 T\n1.0.0.2 2000 10.0.1.1 53 U\n"
                   "1.0.0.3 3000 10.9.9.9 80 T\n1.0.0.1 1000 10.0.1.2 80 T\n1.0.0.4 4000 10.0.1.2 80 T\n"));
  EXPECT_EQ(summary_lines(rev, "\n"), "10.0.0.100 80 1.0.0.1 1000 T\n");
}

TEST(FlowIPLoadBalancer, SpreadsConnectionsAsItsTableDoes) {
  auto r = run(R"(
    FastUDPFlows(LENGTH 64, FLOWS 4000, FLOWSIZE 2, LIMIT 8000, STOP true) -> Strip(14) -> CheckIPHeader
      -> FlowIPManager(CAPACITY 8192) -> lb :: FlowIPLoadBalancer(DST 10.0.1.1 10.0.1.2 10.0.1.3 10.0.1.4)
      -> c :: Counter -> Discard;
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 8000u);
  uint64_t flows = r->n("lb.balanced");
  EXPECT_GT(flows, 3000u);
  std::string backends = r->h("lb.backends");
  std::istringstream in(backends);
  std::string addr;
  uint64_t n, total = 0;
  std::string rest;
  int seen = 0;
  while (in >> addr >> n && std::getline(in, rest)) {
    ++seen;
    total += n;
    // Each backend holds a quarter of the table; its connections are a
    // binomial draw around a quarter of them (6 sigma is ~ 0.04 of 4000).
    EXPECT_NEAR(double(n) / double(flows), 0.25, 0.05) << backends;
  }
  EXPECT_EQ(seen, 4) << backends;
  EXPECT_EQ(total, flows);
  finish(*r);
}

TEST(TokenBucket, RefillsAtItsRateUpToItsBurst) {
  k::TokenRate r{1000, 10};  // 1000 a second, 10 at most
  k::TokenBucket b{};
  uint64_t t = 5'000'000'000ull;
  int ok = 0;
  for (int i = 0; i < 20; ++i) ok += k::tb_take(b, r, t, 1);
  EXPECT_EQ(ok, 10);                                // a new bucket is full, and no more
  EXPECT_FALSE(k::tb_take(b, r, t + 999'999, 1));   // not quite a token later
  EXPECT_TRUE(k::tb_take(b, r, t + 1'000'000, 1));  // one token a millisecond
  EXPECT_FALSE(k::tb_take(b, r, t + 500'000, 1));   // time going back refills nothing
  ok = 0;
  for (int i = 0; i < 20; ++i) ok += k::tb_take(b, r, t + 3'600'000'000'000ull, 1);
  EXPECT_EQ(ok, 10);  // an hour later: full, not more (no overflow)
  k::TokenRate fast{uint64_t(1e13), uint64_t(1.8e10)};
  k::TokenBucket f{};
  EXPECT_TRUE(k::tb_take(f, fast, 1, uint64_t(1.8e10)));
  EXPECT_FALSE(k::tb_take(f, fast, 1, 1));
  EXPECT_TRUE(k::tb_take(f, fast, uint64_t(3e9), uint64_t(1.8e10)));
}

TEST(FlowRateLimiter, HoldsEachFlowToItsRateOnPacketTime) {
  // Two flows, a packet every millisecond each for a second of packet time,
  // limited to 100 packets a second with a burst of 10: each flow passes
  // its 10, then one every 10 ms (100 in all +- 1), wherever it interleaves.
  std::string in = tmpdir() + "/frl-in.txt";
  {
    std::ofstream f(in);
    f << "!data timestamp src sport dst dport proto\n";
    for (int i = 0; i < 1000; ++i)
      for (int fl = 0; fl < 2; ++fl)
        f << fmt::format("{}.{:06d} 10.0.0.{} 1000 1.1.1.1 53 U\n", 1 + i / 1000, (i % 1000) * 1000, fl + 1);
  }
  auto r = run(fmt::format(R"(
    FromIPSummaryDump({}, STOP true) -> FlowIPManager -> rl :: FlowRateLimiter(RATE 100, BURST 10)
      -> c :: Counter -> Discard;
    rl[1] -> over :: Counter -> Discard;
  )",
                           in));
  ASSERT_TRUE(r->ok) << r->errors;
  uint64_t passed = r->n("c.count");
  EXPECT_GE(passed, 2u * 108);
  EXPECT_LE(passed, 2u * 111);
  EXPECT_EQ(passed + r->n("over.count"), 2000u);
  EXPECT_EQ(r->n("rl.limited"), r->n("over.count"));
  finish(*r);
}

}  // namespace shoal::test

namespace shoal::test {

namespace {

// GPUNFV's workload: 400 connections whose rates differ by 1000x (flow f
// weighs 1000^(f/399)), interleaved at random: TCP handshakes, data both
// ways, FINs, a few segments with invalid flags, forged resets far from
// their connection's window (the flow layer finds them INVALID), UDP both
// ways, flows whose server speaks first, ICMP errors quoting connections,
// and ARP frames (no flow). Returns the capture's path.
std::string write_nf_workload(const std::string& path, uint32_t packets, uint32_t seed) {
  constexpr uint32_t kFlows = 400;
  std::mt19937 rng(seed);
  std::vector<double> w(kFlows);
  for (uint32_t f = 0; f < kFlows; ++f) w[f] = std::pow(1000.0, double(f) / (kFlows - 1));
  std::discrete_distribution<uint32_t> pick(w.begin(), w.end());
  std::vector<uint32_t> sent(kFlows, 0);
  io::PcapWriter pw;
  std::string err;
  EXPECT_TRUE(pw.open(path, 1, 65535, true, err)) << err;
  std::vector<uint8_t> buf(512);  // (the longest frame: 14 + 20 + 20 + 209 bytes)
  uint32_t seq = 0;               // the next TCP segment's sequence number
  auto frame = [&](uint32_t src, uint32_t dst, uint8_t proto, uint16_t sp, uint16_t dp, uint8_t flags, uint32_t payload,
                   uint64_t ts, const uint8_t* quote = nullptr) {
    std::fill(buf.begin(), buf.end(), 0);
    uint8_t* e = buf.data();
    e[0] = 2, e[5] = 1, e[6] = 2, e[11] = 2, e[12] = 0x08;
    uint8_t* ip = e + 14;
    uint32_t l4 = proto == 6 ? 20 : 8;
    uint32_t iplen = 20 + l4 + payload;
    ip[0] = 0x45, ip[8] = 64, ip[9] = proto;
    k::store_be16(ip + 2, uint16_t(iplen));
    k::store_be32(ip + 12, src), k::store_be32(ip + 16, dst);
    uint8_t* t = ip + 20;
    if (proto == 1) {
      t[0] = 3, t[1] = 3;  // port unreachable, quoting a datagram
      if (quote) std::memcpy(t + 8, quote, payload);
    } else {
      k::store_be16(t, sp), k::store_be16(t + 2, dp);
      if (proto == 6)
        k::store_be32(t + 4, seq), t[12] = 0x50, t[13] = flags, k::store_be16(t + 14, 65535);
      else
        k::store_be16(t + 4, uint16_t(8 + payload));
      for (uint32_t i = 0; i < payload; ++i) t[l4 + i] = uint8_t(i * 7 + sp);
    }
    k::store_be16(ip + 10, k::ip_checksum(ip, 20));
    pw.write(buf.data(), 14 + iplen, 14 + iplen, ts);
  };
  for (uint32_t n = 0; n < packets; ++n) {
    uint64_t ts = 1700000000000000000ull + uint64_t(n) * 2000;
    if (rng() % 97 == 0) {  // ARP: no flow
      std::fill(buf.begin(), buf.end(), 0);
      buf[12] = 0x08, buf[13] = 0x06;
      pw.write(buf.data(), 60, 60, ts);
      continue;
    }
    uint32_t f = pick(rng);
    uint32_t client = 0x0a000000u | (f / 200) << 8 | (f % 200 + 1);
    uint32_t server = f % 10 == 9 ? 0x0a010002u : 0x0a010001u;  // a tenth not to the VIP
    uint16_t cport = uint16_t(20000 + f);
    uint8_t proto = f % 3 == 2 ? 17 : 6;
    uint16_t sport = proto == 17 ? 53 : f % 7 == 3 ? 22 : f % 11 == 5 ? 8080 : 80;
    uint32_t k = sent[f]++;
    bool server_first = f % 13 == 4;
    bool to_server = k == 0 ? !server_first : k == 1 ? server_first : rng() % 2 == 0;
    uint32_t src = to_server ? client : server, dst = to_server ? server : client;
    uint16_t sp = to_server ? cport : sport, dp = to_server ? sport : cport;
    if (rng() % 151 == 0) {  // an ICMP error quoting this connection's last datagram
      uint8_t q[28] = {0x45, 0, 0, 28, 0, 0, 0, 0, 64, proto};
      k::store_be32(q + 12, dst), k::store_be32(q + 16, src);
      k::store_be16(q + 20, dp), k::store_be16(q + 22, sp);
      frame(src == client ? 0x0a090001u : 0x0a090002u, src, 1, 0, 0, 0, 28, ts, q);
      continue;
    }
    uint8_t flags = 0x10;
    if (proto == 6) {
      if (k == 0)
        flags = 0x02;
      else if (k == 1)
        flags = 0x12;
      else if (rng() % 61 == 0)
        flags = 0x03;  // SYN+FIN: invalid
      else if (rng() % 41 == 0)
        flags = 0x11;
      else
        flags = 0x18;
    }
    if (proto == 6 && k > 2 && rng() % 53 == 0) {  // a blind reset
      seq = 0x80000000u;
      frame(src, dst, proto, sp, dp, 0x04, 0, ts);
      seq = 0;
      continue;
    }
    frame(src, dst, proto, sp, dp, flags, k < 2 && proto == 6 ? 0 : 10 + rng() % 200, ts);
  }
  EXPECT_TRUE(pw.close()) << pw.error();
  return path;
}

}  // namespace

// The chain "firewall -> load balancer -> rate limiter" on the CPU and offloaded (the host
// backend with device delays, with and without injected faults, all batches
// or some on the device): the same packets out in the same order, the same
// verdicts, and the same per-flow state (each rule's connections, each
// backend's connections, each flow's token bucket), on traffic where flows
// interleave heavily, their rates differ by 1000x, and connections close and
// reopen (an id then names another flow while packets of the first wait).
// With the flows' state resident on the device, aggregates overlap and pass
// it along there; a failure makes those behind it run again on the host.
TEST(NfChain, OffloadedPerFlowGivesTheCpuPacketsAndStateWithDelaysAndFaults) {
  std::string dir = tmpdir();
  std::string trace = write_nf_workload(dir + "/nf-diff.pcap", 30000, 7);
  auto cfg = [&](const std::string& tag, const std::string& before) {
    return fmt::format(R"(FromDump({}, STOP true) -> {} m :: FlowIPManager(CAPACITY 4096)
      -> fw :: Firewall("allow @0.0.0.0/0 10.1.0.0/16 0 : 65535 80 : 80 0x06/0xFF",
                        "deny @0.0.0.0/0 0.0.0.0/0 0 : 65535 22 : 22 0x06/0xFF",
                        "allow @0.0.0.0/0 10.1.0.0/16 0 : 65535 53 : 53 0x11/0xFF",
                        "allow @10.1.0.0/16 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00", DEFAULT deny)
      -> lb :: FlowIPLoadBalancer(VIP 10.1.0.1, DST 10.2.0.1 10.2.0.2 10.2.0.3 10.2.0.4 10.2.0.5)
      -> rl :: FlowRateLimiter(RATE 3000, BURST 8)
      -> ToDump({}/nf-{}.pcap);)",
                       trace, before, dir, tag);
  };
  const char* counters[] = {"fw.passed",      "fw.denied",   "fw.invalid", "fw.not_admitted", "fw.no_flow",
                            "fw.evaluations", "lb.balanced", "lb.passed",  "fw.drops",        "lb.drops",
                            "rl.limited",     "rl.drops",    "m.inserts",  "m.reopened",      "m.tcp_invalid"};
  auto cpu = run(cfg("cpu", ""));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  std::map<std::string, uint64_t> want;
  for (const char* c : counters) want[c] = cpu->n(c);
  std::string table = cpu->h("fw.table"), backends = cpu->h("lb.backends");
  finish(*cpu);
  // the workload exercises every verdict
  for (const char* c : {"fw.passed", "fw.denied", "fw.invalid", "fw.not_admitted", "fw.no_flow", "lb.balanced",
                        "lb.passed", "rl.limited", "m.reopened", "m.tcp_invalid"})
    EXPECT_GT(want[c], 0u) << c;
  auto expected = read_pcap(dir + "/nf-cpu.pcap");
  ASSERT_GT(expected.size(), 10000u);
  struct Case {
    double fraction, faults;
    bool adaptive = false;  // GPUNFV's dynamic batch sizing
    bool serial = false;    // the flows' state not resident on the device (Options::flow_resident)
  };
  uint64_t redone = 0;
  // (CUDA's persistent kernel takes aggregates from a ring that is not
  // ordered with streams: there the chain runs one aggregate at a time)
  const char* persistent = std::getenv("SHOAL_CUDA_PERSISTENT");
  const bool ring =
      persistent && std::string_view(persistent) != "0" && default_options().offload.device.kind == "cuda";
  for (Case c :
       {Case{1, 0}, Case{0.6, 0}, Case{1, 0.15}, Case{0.5, 0.15}, Case{1, 0, true}, Case{1, 0.15, false, true}}) {
    Options o = default_options();
    o.offload.device.delay_us = 20;
    o.offload.device.fault_rate = c.faults;
    o.offload.inflight = 4;
    o.offload.adaptive = c.adaptive;
    o.offload.flow_resident = !c.serial;
    std::string tag =
        fmt::format("off-{}-{}{}{}", c.fraction, c.faults, c.adaptive ? "-adaptive" : "", c.serial ? "-serial" : "");
    auto off = run_with(cfg(tag, fmt::format("OffloadBalancer(FRACTION {}) ->", c.fraction)), o);
    ASSERT_TRUE(off->ok) << off->errors;
    EXPECT_GT(off->n("fw.offload_device_packets"), 0u) << tag << ": the device ran the chain";
    EXPECT_GT(off->n("fw.offload_flow_runs"), 0u) << tag;
    EXPECT_EQ(off->h("fw.offload_chain").rfind("fw -> lb -> rl\n", 0), 0u) << off->h("fw.offload_chain");
    EXPECT_EQ(off->n("fw.offload_flow_stale"), 0u) << tag;
    // Resident flow state: device aggregates overlapped, their flows' state
    // passed between them on the device; after a failure those behind it
    // were redone on the host. Serial: one aggregate at a time.
    if (c.serial) {
      EXPECT_EQ(off->n("fw.offload_flow_overlapped"), 0u) << tag;
      EXPECT_EQ(off->n("fw.offload_flow_resident"), 0u) << tag;
    } else if (c.fraction == 1 && c.faults == 0 && !ring) {
      EXPECT_GT(off->n("fw.offload_flow_overlapped"), 0u) << tag;
      EXPECT_GT(off->n("fw.offload_flow_resident"), 0u) << tag;
    }
    if (c.faults > 0) redone += off->n("fw.offload_flow_redone");
    if (c.adaptive) {  // the sizer grew the aggregate (where it settles follows the machine's
                       // timing: under ThreadSanitizer it climbed and came back to 1 batch)
      unsigned target = 0, grown = 0, shrunk = 0;
      const std::string sz = off->h("fw.offload_sizer");
      ASSERT_EQ(std::sscanf(sz.c_str(), "target %u batches, grown %u, shrunk %u", &target, &grown, &shrunk), 3) << sz;
      EXPECT_GT(grown, 0u) << sz;
    }
    if (c.faults > 0) {
      EXPECT_GT(off->n("fw.offload_cpu_fault"), 0u) << tag << ": faults were injected";
    }
    for (const char* n : counters) EXPECT_EQ(off->n(n), want[n]) << tag << " " << n;
    EXPECT_EQ(off->h("fw.table"), table) << tag;
    EXPECT_EQ(off->h("lb.backends"), backends) << tag;
    finish(*off, false, c.faults > 0);
    auto got = read_pcap(fmt::format("{}/nf-{}.pcap", dir, tag));
    ASSERT_EQ(got.size(), expected.size()) << tag;
    for (size_t j = 0; j < got.size(); ++j) ASSERT_EQ(got[j].bytes, expected[j].bytes) << tag << " packet " << j;
  }
  if (!ring) {
    EXPECT_GT(redone, 0u) << "no overlapping aggregate was behind a failed one";
  }
}

}  // namespace shoal::test
