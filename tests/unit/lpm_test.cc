// DIR-24-8, the radix trie and the range table against a brute-force
// longest match, and the lookup elements
// (DirectIPLookup vs LinearIPLookup) in a graph, with run-time route changes.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "helpers.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/routing/ip6routetable.hh"
#include "shoal/routing/iproutetable.hh"
#include "shoal/routing/lpm4_build.hh"

using namespace shoal;

namespace {
int32_t brute(const std::vector<k::Prefix4>& r, uint32_t a) {
  int32_t best = -1;
  int len = -1;
  for (size_t i = 0; i < r.size(); ++i)
    if ((a & k::prefix_mask(r[i].len)) == r[i].addr && r[i].len > len) best = r[i].nexthop, len = r[i].len;
  return best;
}
}  // namespace

TEST(Lpm4, MatchesBruteForceOnRandomTables) {
  std::mt19937 rng(7);
  for (int round = 0; round < 6; ++round) {
    std::vector<k::Prefix4> routes;
    size_t n = round == 0 ? 1 : 50u << round;
    for (size_t i = 0; i < n; ++i) {
      uint8_t len = uint8_t(rng() % 33);  // every length, /0 and /32 included
      // Cluster addresses so prefixes nest and overlap.
      uint32_t a = (uint32_t(rng() % 8) << 29) | (rng() & 0x00ffffffu) | ((rng() % 4) << 24);
      routes.push_back({a & k::prefix_mask(len), len, uint16_t(i % 700)});
    }
    if (round == 2) routes.push_back({0, 0, 5});
    if (round == 3) {  // the top of the address space, and prefixes that end together
      routes.push_back({0xffffffffu, 32, 9});
      routes.push_back({0xff000000u, 8, 10});
      routes.push_back({0xfffffff0u, 28, 11});
    }
    // Duplicates: the brute force takes the first longest, so keep them unique.
    std::vector<k::Prefix4> uniq;
    for (auto& r : routes) {
      bool dup = false;
      for (auto& u : uniq) dup |= u.addr == r.addr && u.len == r.len;
      if (!dup) uniq.push_back(r);
    }
    k::Lpm4Table t;
    std::string err;
    ASSERT_TRUE(t.build(uniq, err)) << err;
    auto v = t.view();
    // Random addresses, and each prefix's first, last and neighbours.
    std::vector<uint32_t> probes;
    for (int i = 0; i < 20000; ++i) probes.push_back(uint32_t(rng()));
    for (auto& r : uniq) {
      uint32_t last = r.addr | ~k::prefix_mask(r.len);
      for (uint32_t x : {r.addr, last, r.addr - 1, last + 1, r.addr + 1}) probes.push_back(x);
    }
    // RadixIPLookup's trie and RangeIPLookup's intervals, on the same table.
    std::vector<std::pair<k::Prefix4, int32_t>> wide;
    for (auto& r : uniq) wide.push_back({r, r.nexthop});
    IPv4Routes::Radix radix;
    radix.build(wide);
    IPv4Routes::Range range;
    range.build(wide);
    ASSERT_LE(range.starts.size(), 2 * uniq.size() + 1);
    for (uint32_t a : probes) {
      int32_t want = brute(uniq, a);
      ASSERT_EQ(k::lpm4_lookup(v, a), want) << "round " << round << " addr " << a;
      ASSERT_EQ(radix.lookup(a), want) << "radix, round " << round << " addr " << a;
      ASSERT_EQ(range.lookup(a), want) << "range, round " << round << " addr " << a;
    }
  }
}

TEST(Lpm4, LargeTablesAndLimits) {
  // 200,000 prefixes (mostly /24, /16-/23, some /25-/32) over 8 next hops.
  std::mt19937 rng(3);
  std::vector<k::Prefix4> many;
  for (uint32_t i = 0; i < 200000; ++i) {
    uint32_t r = rng() % 100;
    uint8_t len = uint8_t(r < 55 ? 24 : r < 90 ? 16 + rng() % 8 : r < 97 ? 8 + rng() % 8 : 25 + rng() % 8);
    many.push_back({uint32_t(rng()) & k::prefix_mask(len), len, uint16_t(rng() % 8)});
  }
  k::Lpm4Table t;
  std::string err;
  ASSERT_TRUE(t.build(many, err)) << err;
  // Duplicates: build keeps the last; the brute force the first. Check on a
  // de-duplicated sample instead: addresses inside random routes.
  std::map<std::pair<uint32_t, uint8_t>, uint16_t> last;
  for (auto& p : many) last[{p.addr, p.len}] = p.nexthop;
  std::vector<k::Prefix4> uniq;
  for (auto& [key, nh] : last) uniq.push_back({key.first, key.second, nh});
  auto v = t.view();
  for (int i = 0; i < 300; ++i) {
    const auto& p = uniq[rng() % uniq.size()];
    uint32_t a = p.addr | (uint32_t(rng()) & ~k::prefix_mask(p.len));
    ASSERT_EQ(k::lpm4_lookup(v, a), brute(uniq, a));
  }
  std::vector<k::Prefix4> hops{{0, 0, uint16_t(k::Lpm4Table::kMaxNexthops)}};
  EXPECT_FALSE(t.build(hops, err));
  EXPECT_NE(err.find("too many next hops"), std::string::npos);
}

TEST(DirectIPLookup, AgreesWithLinearAndFollowsClickSemantics) {
  // Every packet goes to 10.1.0.1: the /32 must win over the /24, the /16
  // and the default route, in both lookups.
  std::string in = test::tmpdir() + "/lpm-in.pcap";
  auto g = test::run("FastUDPFlows(LIMIT 3000, FLOWS 3000, SRCIP 10.0.0.0, DSTIP 10.1.0.1) -> ToDump(" + in + ");");
  test::finish(*g);
  const char* routes = "10.1.0.0/16 0, 10.1.0.0/24 1, 10.1.0.1/32 10.9.9.9 2, 0.0.0.0/0 3";
  for (const char* cls : {"DirectIPLookup", "LinearIPLookup"}) {
    std::string cfg = fmt::format("FromDump({}, STOP true) -> CheckIPHeader(14) -> rt :: {}({});", in, cls, routes);
    for (int o = 0; o < 4; ++o) cfg += fmt::format(" rt[{}] -> c{} :: Counter -> Discard;", o, o);
    auto r = test::run(cfg);
    ASSERT_TRUE(r->ok) << r->errors;
    EXPECT_EQ(r->n("c2.count"), 3000u) << cls << ": every packet goes to 10.1.0.1, the /32";
    test::finish(*r);
  }
  auto bad = test::run("FastUDPFlows -> DirectIPLookup(10.0.0.0/8 5) -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("names output 5"), std::string::npos) << bad->errors;
  auto bad2 = test::run("FastUDPFlows -> DirectIPLookup(10.0.0.0/33 0) -> Discard;");
  EXPECT_FALSE(bad2->ok);
  EXPECT_NE(bad2->errors.find("prefix length 33 is over 32"), std::string::npos) << bad2->errors;
}

TEST(DirectIPLookup, EqualsLinearOnRandomTables) {
  std::mt19937 rng(99);
  std::string in = test::tmpdir() + "/lpm-rand.pcap";
  {
    io::PcapWriter w;
    std::string err;
    ASSERT_TRUE(w.open(in, 1, 65535, true, err));
    for (int i = 0; i < 4000; ++i) {
      uint8_t f[34] = {};
      k::store_be16(f + 12, 0x0800);
      f[14] = 0x45;
      k::store_be16(f + 16, 20);
      f[22] = 64;
      k::store_be32(f + 26, 0x0a000001);
      k::store_be32(f + 30, (uint32_t(rng() % 4) << 30) | (rng() & 0x3fffffff));
      k::store_be16(f + 24, k::ip_checksum(f + 14, 20));
      w.write(f, 34, 34, uint64_t(i));
    }
  }
  std::string routes;
  for (int i = 0; i < 400; ++i) {
    uint8_t len = uint8_t(rng() % 33);
    uint32_t a = ((uint32_t(rng() % 4) << 30) | (rng() & 0x3fffffff)) & k::prefix_mask(len);
    routes += fmt::format("{}{}.{}.{}.{}/{} {}", i ? ", " : "", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255, len,
                          rng() % 4);
  }
  std::vector<std::vector<test::Frame>> outs[2];
  const char* cls[2] = {"DirectIPLookup", "LinearIPLookup"};
  for (int c = 0; c < 2; ++c) {
    std::string cfg = fmt::format("FromDump({}, STOP true) -> CheckIPHeader(14) -> rt :: {}({});", in, cls[c], routes);
    for (int o = 0; o < 4; ++o) cfg += fmt::format(" rt[{}] -> ToDump({}/lpm-{}-{}.pcap);", o, test::tmpdir(), c, o);
    auto r = test::run(cfg);
    ASSERT_TRUE(r->ok) << r->errors;
    test::finish(*r);
    for (int o = 0; o < 4; ++o)
      outs[c].push_back(test::read_pcap(fmt::format("{}/lpm-{}-{}.pcap", test::tmpdir(), c, o)));
  }
  size_t total = 0;
  for (int o = 0; o < 4; ++o) {
    ASSERT_EQ(outs[0][size_t(o)].size(), outs[1][size_t(o)].size()) << "output " << o;
    for (size_t i = 0; i < outs[0][size_t(o)].size(); ++i)
      EXPECT_EQ(outs[0][size_t(o)][i].bytes, outs[1][size_t(o)][i].bytes);
    total += outs[0][size_t(o)].size();
  }
  EXPECT_GT(total, 1000u) << "most packets found a route";
}

TEST(DirectIPLookup, RoutesChangeWhileRunning) {
  auto r = test::run(R"(
    src :: RatedSource(DATA \<00 00 00 00 00 02  00 00 00 00 00 01  08 00
                               45 00 00 14 00 00 00 00 40 00 00 00  0a 00 00 01  0a 02 03 04>,
                       RATE 2000, LIMIT 300, STOP true)
      -> CheckIPHeader(14, CHECKSUM false) -> rt :: DirectIPLookup(10.0.0.0/8 0);
    rt[0] -> a :: Counter -> Discard;
    rt[1] -> b :: Counter -> Discard;
    Script(wait 50ms, write rt.add 10.2.0.0/16 1, wait 50ms, write rt.remove 10.2.0.0/16, wait 30ms, write rt.flush);
  )");
  ASSERT_TRUE(r->ok) << r->errors;
  uint64_t a = r->n("a.count"), b = r->n("b.count"), none = r->n("rt.drops");
  EXPECT_EQ(a + b + none, 300u);
  EXPECT_GT(a, 0u);
  EXPECT_GT(b, 0u) << "the added /16 took traffic";
  EXPECT_GT(none, 0u) << "after flush nothing routes";
  EXPECT_EQ(r->h("rt.routes"), "0");
  test::finish(*r);
}

TEST(CheckIPHeader, ReasonsAndDecIPTTL) {
  // tests/golden/ipv4-check/in.pcap: scapy-made frames, one per defect.
  std::string in = std::string(SHOAL_SOURCE_DIR) + "/tests/golden/ipv4-check/in.pcap";
  auto r = test::run("FromDump(" + in +
                     ", STOP true) -> c :: CheckIPHeader(14) -> d :: DecIPTTL -> n :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  std::map<std::string, uint64_t> got;
  for (auto* e : {r->rt->router(0).find("c"), r->rt->router(0).find("d")})
    for (auto& dr : e->drop_reasons())
      if (dr.count.get()) got[dr.name] = dr.count.get();
  std::map<std::string, uint64_t> want{{"bad-ip-checksum", 1}, {"bad-ip-header-length", 2}, {"bad-ip-length", 2},
                                       {"bad-ip-options", 1},  {"bad-ip-version", 1},       {"bad-source-address", 2},
                                       {"tiny-packet", 1},     {"ttl-expired", 1}};
  EXPECT_EQ(got, want);
  EXPECT_EQ(r->n("n.count"), 3u);
  test::finish(*r);
  // With a second output, bad packets leave there instead of being dropped.
  auto r2 = test::run("FromDump(" + in +
                      ", STOP true) -> c :: CheckIPHeader(14) -> Discard; c[1] -> bad :: Counter -> Discard;");
  ASSERT_TRUE(r2->ok) << r2->errors;
  EXPECT_EQ(r2->n("bad.count"), 10u);
  test::finish(*r2);
}

// The route table both families' lookups share: an equal prefix given twice
// keeps the last, add replaces, remove of a missing prefix fails and leaves
// the table as it was, every change is a new version.
TEST(RouteTable, SetAddRemoveForBothFamilies) {
  auto check = [](auto& table, auto parse, const char* a, const char* a2, const char* b, const char* missing) {
    using Route = typename std::decay_t<decltype(table)>::Route;
    auto route = [&](const char* text) {
      Route r;
      std::string err;
      EXPECT_TRUE(parse(text, r, err)) << err;
      return r;
    };
    std::string err;
    uint64_t v0 = table.version();
    ASSERT_TRUE(table.set({route(a), route(a2), route(b)}, err)) << err;
    auto s = table.snapshot();
    ASSERT_EQ(s->routes.size(), 2u);
    EXPECT_EQ(s->routes[0].port, route(a2).port) << "the last of two equal prefixes stands";
    EXPECT_EQ(table.version(), v0 + 1);
    ASSERT_TRUE(table.add(route(a), err));
    EXPECT_EQ(table.snapshot()->routes.size(), 2u);
    EXPECT_EQ(table.snapshot()->routes[0].port, route(a).port) << "add replaces the prefix";
    EXPECT_FALSE(table.remove(route(missing), err));
    EXPECT_EQ(err, "no such route");
    EXPECT_EQ(table.version(), v0 + 2) << "a failed remove changes nothing";
    ASSERT_TRUE(table.remove(route(b), err));
    EXPECT_EQ(table.snapshot()->routes.size(), 1u);
    EXPECT_EQ(table.unparse(), route(a).unparse() + "\n");
  };
  IPRouteTable t4(IPRouteTable::Kind::Dir24_8);
  check(t4, parse_route, "10.0.0.0/8 1", "10.0.0.0/8 2", "192.168.1.0/24 10.0.0.1 0", "172.16.0.0/12 0");
  IP6RouteTable t6;
  check(t6, parse_route6, "fd00::/16 1", "fd00::/16 2", "2001:db8::/32 fe80::1 0", "fd01::/16 0");
}
