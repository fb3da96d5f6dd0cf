// The IPRewriter family: the flow layer's RewriteTable and RewritePattern
// (Click's allocation order, eviction and admission control), and the
// elements end to end (rewritten headers, checksums checked by Click's
// checkers, replies mapped back, handlers in Click's forms).
#include <fmt/format.h>

#include <fstream>

#include "helpers.hh"
#include "shoal/elements/clickrandom.hh"
#include "shoal/flow/rewrite.hh"

namespace shoal::test {

namespace {
using flow::FlowId;
using flow::RewritePattern;
using flow::RewriteTable;

uint32_t ip(int a, int b, int c, int d) {
  return uint32_t(a) << 24 | uint32_t(b) << 16 | uint32_t(c) << 8 | uint32_t(d);
}

bool parse_addr(std::string_view s, uint32_t& out) {
  IPv4Addr a;
  if (!parse_ipv4(s, a)) return false;
  out = a.host();
  return true;
}

RewritePattern pattern(const std::vector<std::string>& w) {
  RewritePattern p;
  std::string err;
  EXPECT_TRUE(RewritePattern::parse(w, p, err, parse_addr)) << err;
  return p;
}
}  // namespace

// Click's random numbers: the C library's random() after srandom(seed),
// draw for draw (the oracle is the C library itself), and click_random's
// pick in a range (Click's UDPRewriter-11 expects port 55226 for the first
// draw after RandomSeed(1) in 1024-65534).
TEST(ClickRandom, DrawsWhatTheCLibraryDrawsAndPicksAsClick) {
  for (uint32_t seed : {1u, 2u, 7u, 12345u, 4000000000u}) {
    ClickRandom c(seed);
    srandom(seed);
    for (int i = 0; i < 2000; ++i) ASSERT_EQ(c.random(), uint32_t(random())) << "seed " << seed << " draw " << i;
  }
  ClickRandom c(1);
  EXPECT_EQ(c.range(0, 64510) + 1024, 55226u);
  std::vector<int> hist(7);
  for (int i = 0; i < 70000; ++i) {
    uint32_t v = c.range(3, 9);
    ASSERT_TRUE(v >= 3 && v <= 9);
    ++hist[v - 3];
  }
  for (int h : hist) EXPECT_NEAR(h, 10000, 600);
  EXPECT_EQ(c.range(5, 5), 5u);
  EXPECT_LE(c.range(0, 1), 1u);
  EXPECT_GE(c.range(7, 0xffffffffu), 7u);
}

TEST(RewritePattern, ParsesAndUnparsesAsClick) {
  EXPECT_EQ(pattern({"1.0.0.1", "1024-65535#", "-", "-"}).unparse(), "1.0.0.1 1024-65535 - -");
  EXPECT_EQ(pattern({"1.0.0.1/24", "-"}).unparse(), "1.0.0.1-1.0.0.254 -");  // not .0 nor .255
  EXPECT_EQ(pattern({"1.0.0.1/8", "-"}).unparse(), "1.0.0.1-1.255.255.254 -");
  EXPECT_EQ(pattern({"1.0.0.1-1.0.255.255", "-"}).unparse(), "1.0.0.1-1.0.255.255 -");
  EXPECT_EQ(pattern({"-", "-", "2.0.0.1", "80"}).unparse(), "- - 2.0.0.1 80");
  RewritePattern p;
  std::string err;
  for (auto [words, msg] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"1.0.0.x", "-"}, "bad source address"},
           {{"1.255.0.0-1.0.255.255", "-"}, "bad source address"},
           {{"1.0.0.1", "1x", "-", "-"}, "bad source port"},
           {{"1.0.0.1", "456-19", "-", "-"}, "bad source port"},
           {{"1.0.0.1", "456-65536", "-", "-"}, "bad source port"},
           {{"1.0.0.1", "1", "-", "0"}, "bad destination port"},
           {{"1.0.0.1"}, "syntax error"}}) {
    EXPECT_FALSE(RewritePattern::parse(words, p, err, parse_addr)) << words[0];
    EXPECT_EQ(err, msg);
  }
}

TEST(RewritePattern, SequentialPortsSkipThoseTaken) {
  // Click's IPRewriter-03: ports 1024-1026 in turn, a port reused toward
  // another destination, and no port left for a fourth flow to one place.
  RewritePattern p = pattern({"1.0.0.1", "1024-1026#", "-", "-"});
  std::vector<FlowId> used;  // reply keys
  auto taken = [&](const FlowId& k) { return std::find(used.begin(), used.end(), k) != used.end(); };
  auto rnd = [](uint32_t) -> uint32_t {
    ADD_FAILURE() << "sequential patterns do not draw";
    return 0;
  };
  auto map = [&](uint32_t dst, uint16_t sport, uint16_t dport) -> int {
    FlowId in{ip(18, 26, 4, 44), dst, sport, dport}, out;
    if (!p.rewrite(in, out, taken, rnd)) return -1;
    EXPECT_EQ(out.saddr, ip(1, 0, 0, 1));
    used.push_back(out.reverse());
    return out.sport;
  };
  EXPECT_EQ(map(ip(10, 0, 0, 4), 1, 1), 1024);
  EXPECT_EQ(map(ip(10, 0, 0, 8), 2, 2), 1025);
  EXPECT_EQ(map(ip(10, 0, 0, 4), 3, 3), 1026);
  EXPECT_EQ(map(ip(10, 0, 0, 8), 4, 2), 1024);  // free toward 10.0.0.8:2
  EXPECT_EQ(map(ip(10, 0, 0, 8), 5, 2), 1026);  // 1025 is taken there
  EXPECT_EQ(map(ip(10, 0, 0, 8), 6, 2), -1);    // all three are
}

TEST(RewriteTable, EvictsBestEffortAndRefusesWhenAllAreGuaranteed) {
  RewriteTable t;
  t.capacity = 2;
  uint32_t o = t.add_owner("rw", 1);
  const uint64_t s = 1000000000ull;
  auto add = [&](int n, uint64_t now) {
    FlowId f{ip(10, 0, 0, n), ip(2, 0, 0, 1), 1, 80}, r{ip(1, 0, 0, 1), ip(2, 0, 0, 1), uint16_t(1000 + n), 80};
    return t.add(o, 0, 0, 6, f, r, 0, 1, true, now + 5 * s, now + 300 * s, now);
  };
  uint32_t a = add(1, 0), b = add(2, 0);
  ASSERT_TRUE(a && b);
  EXPECT_EQ(add(3, 1 * s), 0u) << "both others guaranteed: the new one is refused";
  EXPECT_EQ(t.owner(o).failures[0], 1u);
  uint32_t c = add(3, 6 * s);  // guarantees over: the one nearest expiry goes
  ASSERT_TRUE(c);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.find(o, 0, FlowId{ip(10, 0, 0, 1), ip(2, 0, 0, 1), 1, 80}).first, 0u);
  auto [id, dir] = t.find(o, 0, FlowId{ip(2, 0, 0, 1), ip(1, 0, 0, 1), 80, 1002});
  EXPECT_EQ(id, b);
  EXPECT_EQ(dir, 1) << "the reply entry";
  t.reap(400 * s);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.owner(o).count[0], 0u);
}

// A packet's refresh leaves the mapping's heap item where it was; eviction
// and expiry must still see the real expiry times, and break ties by the
// order of the last refresh, as an exact heap does.
TEST(RewriteTable, RefreshedMappingsExpireAndAreEvictedByTheirRealTimes) {
  RewriteTable t;
  t.capacity = 3;
  uint32_t o = t.add_owner("rw", 1);
  const uint64_t s = 1000000000ull;
  auto flow = [](int n) { return FlowId{ip(10, 0, 0, n), ip(2, 0, 0, 1), 1, 80}; };
  auto add = [&](int n, uint64_t exp) {
    FlowId r{ip(1, 0, 0, 1), ip(2, 0, 0, 1), uint16_t(1000 + n), 80};
    return t.add(o, 0, 0, 17, flow(n), r, 0, 1, false, exp, exp, 0);
  };
  uint32_t a = add(1, 10 * s), b = add(2, 20 * s);
  ASSERT_NE(add(3, 30 * s), 0u);
  t.set_expiry(a, false, 40 * s, 40 * s);  // a now expires last
  t.set_expiry(b, false, 30 * s, 30 * s);  // b ties with c, refreshed after it
  add(4, 50 * s);                          // full: c goes (30 s, refreshed before b)
  EXPECT_EQ(t.find(o, 0, flow(3)).first, 0u);
  EXPECT_EQ(t.find(o, 0, flow(2)).first, b);
  EXPECT_EQ(t.find(o, 0, flow(1)).first, a);
  t.reap(35 * s);  // b (30 s) expires; a (40 s, its item still keyed 10 s) does not
  EXPECT_EQ(t.find(o, 0, flow(2)).first, 0u);
  EXPECT_EQ(t.find(o, 0, flow(1)).first, a);
  EXPECT_EQ(t.size(), 2u);
  t.set_expiry(a, false, 36 * s, 36 * s);  // earlier than before: moved at once
  t.reap(37 * s);
  EXPECT_EQ(t.find(o, 0, flow(1)).first, 0u);
  EXPECT_EQ(t.size(), 1u);
}

TEST(IPRewriter, RewritesBothWaysWithValidChecksumsAndClickHandlers) {
  std::string in1 = tmpdir() + "/rw-in1.txt", in2 = tmpdir() + "/rw-in2.txt", out1 = tmpdir() + "/rw-out1.txt",
              out2 = tmpdir() + "/rw-out2.txt";
  std::ofstream(in1) << "!data src sport dst dport proto payload\n"
                        "18.26.4.44 30 10.0.0.4 40 T abc\n"
                        "18.26.4.44 31 10.0.0.4 53 U xyz\n"
                        "18.26.4.44 30 10.0.0.4 40 T abc\n"
                        "18.26.4.44 9 10.0.0.4 9 I ping\n";
  std::ofstream(in2) << "!data src sport dst dport proto payload\n"
                        "10.0.0.4 40 1.0.0.1 1024 T def\n"
                        "10.0.0.4 53 1.0.0.1 1025 U uvw\n"
                        "10.0.0.4 40 1.0.0.1 2000 T nope\n";
  auto r = run(fmt::format(R"(
    rw :: IPRewriter(pattern 1.0.0.1 1024-65535# - - 0 1, drop);
    a :: FromIPSummaryDump({}, STOP true, CHECKSUM true) -> [0]rw;
    b :: FromIPSummaryDump({}, STOP true, CHECKSUM true, ACTIVE false) -> [1]rw;
    rw[0] -> CheckIPHeader -> c0 :: CheckTCPHeader -> ToIPSummaryDump({}, FIELDS src sport dst dport proto);
    c0[1] -> CheckUDPHeader -> ToIPSummaryDump({}, FIELDS src sport dst dport proto);
    rw[1] -> CheckIPHeader -> c1 :: CheckTCPHeader -> t2 :: ToIPSummaryDump({}, FIELDS src sport dst dport proto);
    c1[1] -> CheckUDPHeader -> t2;
    DriverManager(wait_stop, write b.active true, wait_stop);
  )",
                           in1, in2, out1 + "-tcp", out1 + "-udp", out2));
  ASSERT_TRUE(r->ok) << r->errors;
  auto lookup = [&](const std::string& h, const std::string& flow) {
    std::string v, err;
    EXPECT_TRUE(r->rt->read_handler("rw." + h, v, err, flow)) << err;
    return v;
  };
  EXPECT_EQ(lookup("tcp_lookup", "18.26.4.44 30 10.0.0.4 40"), "1.0.0.1 1024 10.0.0.4 40");
  EXPECT_EQ(lookup("tcp_lookup", "10.0.0.4 40 1.0.0.1 1024"), "10.0.0.4 40 18.26.4.44 30");
  // UDP has its own map; the pattern's turn goes on from the TCP flow's port.
  EXPECT_EQ(lookup("udp_lookup", "18.26.4.44 31 10.0.0.4 53"), "1.0.0.1 1025 10.0.0.4 53");
  EXPECT_EQ(lookup("tcp_lookup", "18.26.4.44 31 10.0.0.4 53"), "");
  EXPECT_EQ(lookup("tcp_lookup", "9.9.9.9 1 9.9.9.9 1"), "");
  EXPECT_EQ(r->n("rw.nmappings"), 2u);
  EXPECT_EQ(r->h("rw.patterns"), "1.0.0.1 1024-65535 - - [2]\n<drop>\n");
  std::string table = r->h("rw.tcp_table");
  EXPECT_NE(table.find("(18.26.4.44, 30, 10.0.0.4, 40) => (1.0.0.1, 1024, 10.0.0.4, 40) [*0 1] i0 exp"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("(10.0.0.4, 40, 1.0.0.1, 1024) => (10.0.0.4, 40, 18.26.4.44, 30) [0 *1] i0 exp"),
            std::string::npos)
      << table;
  finish(*r);
  auto body = [](const std::string& path) {
    std::ifstream f(path);
    std::string line, s;
    while (std::getline(f, line))
      if (line.empty() || line[0] != '!') s += line + "\n";
    return s;
  };
  // The checkers passed every packet: the incremental checksums are right.
  EXPECT_EQ(body(out1 + "-tcp"), "1.0.0.1 1024 10.0.0.4 40 T\n1.0.0.1 1024 10.0.0.4 40 T\n");
  EXPECT_EQ(body(out1 + "-udp"), "1.0.0.1 1025 10.0.0.4 53 U\n");
  EXPECT_EQ(body(out2), "10.0.0.4 40 18.26.4.44 30 T\n10.0.0.4 53 18.26.4.44 31 U\n");
}

TEST(IPRewriter, InputSpecificationErrorsAsClick) {
  auto r = run(R"(
    i :: Idle;
    rw :: IPAddrRewriter(pattern 1.0.0.x - 0 1, pattern 1.0.0.1 - 0 9, keep 0, nochange x);
    i -> [0]rw; i[1] -> [1]rw; i[2] -> [2]rw; i[3] -> [3]rw; rw[0] -> i; rw[1] -> i;
  )");
  ASSERT_FALSE(r->ok);
  for (const char* e : {"input spec 0: bad source address", "input spec 1: output port out of range",
                        "input spec 2: bad forward port", "input spec 3: syntax error, expected 'nochange [OUTPUT]'"})
    EXPECT_NE(r->errors.find(e), std::string::npos) << r->errors;
}

TEST(RoundRobinIPMapper, HandsNewFlowsToPatternsInTurn) {
  std::string in = tmpdir() + "/rr.txt";
  std::ofstream(in) << "!data src sport dst dport proto\n"
                       "1.0.0.1 1 1.0.0.2 2 U\n1.0.0.1 2 1.0.0.2 2 U\n1.0.0.1 1 1.0.0.2 2 U\n"
                       "1.0.0.1 3 1.0.0.2 2 U\n1.0.0.1 4 1.0.0.2 2 U\n";
  auto r = run(fmt::format(R"(
    m :: RoundRobinIPMapper(- - 10.0.0.1 - 0 1, - - 10.0.0.2 - 0 1);
    FromIPSummaryDump({}, STOP true) -> rw :: UDPRewriter(m, drop);
    rw[0] -> c :: Counter -> Discard; rw[1] -> Discard; Idle -> [1]rw;
  )",
                           in));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 5u);
  EXPECT_EQ(r->n("rw.nmappings"), 4u);
  EXPECT_EQ(r->h("rw.patterns"), "<mapper> [4]\n<drop>\n");
  std::string t = r->h("rw.table");
  for (int sport : {1, 2, 3, 4})
    EXPECT_NE(t.find(fmt::format("(1.0.0.1, {0}, 1.0.0.2, 2) => (1.0.0.1, {0}, 10.0.0.{1}, 2)", sport, 2 - sport % 2)),
              std::string::npos)
        << t;
  finish(*r);
}

}  // namespace shoal::test

namespace shoal::test {

// FTPPortMapper's shifts: a PORT command 12 bytes shorter at [1, 30) moves
// later sequence numbers back 12, and the other side's acknowledgements
// (and SACK edges) forward again; a shift 2^30 old is folded into the base.
TEST(TcpSeqShift, SequenceAndAcknowledgementNumbers) {
  flow::TcpSeqShift s;
  ASSERT_TRUE(s.add(0, 30, -12));
  EXPECT_EQ(s.new_seq(0, 1), 1u);
  EXPECT_EQ(s.new_seq(0, 30), 18u);
  EXPECT_EQ(s.new_ack(1, 18), 30u);
  EXPECT_EQ(s.new_ack(1, 1), 1u);
  EXPECT_FALSE(s.add(0, 29, 5)) << "an older trigger is out of order";
  ASSERT_TRUE(s.add(0, 60, 6));  // a second change, 6 bytes longer: -6 from 60 on
  EXPECT_EQ(s.new_seq(0, 59), 47u);
  EXPECT_EQ(s.new_seq(0, 60), 54u);
  ASSERT_TRUE(s.add(0, 60, 8)) << "the same place again replaces the change made there";
  EXPECT_EQ(s.new_seq(0, 60), 56u);
  s.forget_old(0, 60 + (1u << 30));
  EXPECT_EQ(s.new_seq(0, 100), 96u) << "only the newest shift is left";
  EXPECT_FALSE(s.active(1));
}

// (BURST 1: the PORT command must find the control connection's mapping,
// which the rewriter makes from the packet before it.)
TEST(FTPPortMapper, RewritesPortCommandsAndShiftsTheConnection) {
  std::string in = tmpdir() + "/ftp.txt", out = tmpdir() + "/ftp-out.txt";
  std::ofstream(in) << "!data src sport dst dport proto tcp_seq tcp_ack payload\n"
                       "200.200.200.200 30 2.0.0.2 21 T 0 0 \"x\"\n"
                       "200.200.200.200 30 2.0.0.2 21 T 1 0 \"PORT 200,200,200,200,200,200\\r\\n\"\n"
                       "200.200.200.200 30 2.0.0.2 21 T 31 0 \"QUIT\\r\\n\"\n"
                       "2.0.0.2 21 1.0.0.1 1024 T 0 19 \"\"\n";
  auto r = run(fmt::format(R"(
    rw :: TCPRewriter(pattern 1.0.0.1 1024-65535# - - 0 0);
    FromIPSummaryDump({}, STOP true, CHECKSUM true, BURST 1) -> f :: FTPPortMapper(rw, rw, 0) -> rw
      -> CheckIPHeader -> CheckTCPHeader -> ToIPSummaryDump({}, FIELDS src sport dst dport tcp_seq tcp_ack payload);
  )",
                           in, out));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("f.rewritten"), 1u);
  EXPECT_EQ(r->n("rw.nmappings"), 2u) << "the control connection and the announced data connection";
  std::string v, err;
  ASSERT_TRUE(r->rt->read_handler("rw.lookup", v, err, "200.200.200.200 51400 2.0.0.2 20")) << err;
  EXPECT_EQ(v, "1.0.0.1 1025 2.0.0.2 20");
  EXPECT_NE(r->h("rw.table").find("seq -12"), std::string::npos) << r->h("rw.table");
  finish(*r);
  std::ifstream f(out);
  std::string line, body;
  while (std::getline(f, line))
    if (line.empty() || line[0] != '!') body += line + "\n";
  EXPECT_EQ(body,
            "1.0.0.1 1024 2.0.0.2 21 0 0 \"x\"\n"
            "1.0.0.1 1024 2.0.0.2 21 1 0 \"PORT 1,0,0,1,4,1\\r\\n\"\n"
            "1.0.0.1 1024 2.0.0.2 21 19 0 \"QUIT\\r\\n\"\n"
            "2.0.0.2 21 200.200.200.200 30 0 31 \"\"\n");
}

}  // namespace shoal::test
