// The router's elements: IPv6 LPM against a linear scan, RadixIPLookup and
// RangeIPLookup
// against LinearIPLookup, fragmentation (reassembled and compared byte for
// byte), ICMP errors, ARP and neighbour discovery resolving through their
// responders, ping answers and IP options.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "helpers.hh"
#include "shoal/io/pcap.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/routing/lpm4_build.hh"
#include "shoal/routing/lpm6_build.hh"

using namespace shoal;

namespace {
using Bytes = std::vector<uint8_t>;

void write_pcap(const std::string& path, const std::vector<Bytes>& frames, int linktype = 1) {
  io::PcapWriter w;
  std::string err;
  ASSERT_TRUE(w.open(path, linktype, 65535, true, err)) << err;
  for (size_t i = 0; i < frames.size(); ++i)
    w.write(frames[i].data(), uint32_t(frames[i].size()), uint32_t(frames[i].size()), i);
}

// An IPv4 packet (no link header): proto, addresses, payload of `n` bytes
// counting up, optional options, TTL, DF, fragment offset (8-byte units), MF.
Bytes ipv4(uint32_t src, uint32_t dst, uint32_t n, Bytes opts = {}, uint8_t ttl = 64, bool df = false,
           uint16_t fragoff = 0, bool mf = false, uint8_t proto = 17) {
  uint32_t hl = 20 + uint32_t(opts.size());
  Bytes p(hl + n);
  p[0] = uint8_t(0x40 | hl / 4);
  k::store_be16(p.data() + 2, uint16_t(hl + n));
  k::store_be16(p.data() + 4, 0x1234);
  k::store_be16(p.data() + 6, uint16_t((df ? 0x4000 : 0) | (mf ? 0x2000 : 0) | fragoff));
  p[8] = ttl;
  p[9] = proto;
  k::store_be32(p.data() + 12, src);
  k::store_be32(p.data() + 16, dst);
  std::copy(opts.begin(), opts.end(), p.begin() + 20);
  for (uint32_t i = 0; i < n; ++i) p[hl + i] = uint8_t(i * 7 + 3);
  k::store_be16(p.data() + 10, k::ip_checksum(p.data(), hl));
  return p;
}

std::string router_tmp(const std::string& name) { return test::tmpdir() + "/router-" + name; }
}  // namespace

TEST(Lpm6, MatchesLinearScanOnRandomTables) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 5; ++round) {
    std::vector<k::Prefix6> routes;
    size_t n = 20u << (2 * round);
    for (size_t i = 0; i < n; ++i) {
      uint8_t len = uint8_t(rng() % 129);  // /0 and /128 included
      uint64_t hi = (0x20010db8ull << 32) | (rng() % 16) << 28 | (rng() & 0xfffffff), lo = rng() % 64;
      if (rng() % 4 == 0) lo = rng();
      uint64_t mh, ml;
      k::lpm6_mask(hi, lo, len, mh, ml);
      routes.push_back({mh, ml, len, int32_t(i % 100)});
    }
    if (round == 1) routes.push_back({0, 0, 0, 7});
    k::Lpm6Table t;
    t.build(routes);
    auto v = t.view();
    size_t hits = 0;
    for (int q = 0; q < 20000; ++q) {
      const auto& base = routes[size_t(rng() % routes.size())];
      uint64_t hi = base.hi, lo = base.lo;
      if (q % 3) hi ^= rng() & ((q % 5) ? 0xff : 0xffffffffull), lo ^= rng() & 0xffff;  // near or inside a prefix
      int32_t want = k::lpm6_linear(routes, hi, lo), got = k::lpm6_lookup(v, hi, lo);
      ASSERT_EQ(got, want) << "round " << round << " query " << q;
      hits += want >= 0;
    }
    EXPECT_GT(hits, 10000u);
  }
}

TEST(RadixIPLookup, AndDirectEqualLinearOnRandomTables) {
  std::mt19937 rng(5);
  std::vector<Bytes> frames;
  for (int i = 0; i < 3000; ++i)
    frames.push_back(ipv4(0x0a000001, (uint32_t(rng() % 4) << 30) | (rng() & 0x3fffffff), 8));
  write_pcap(router_tmp("radix.pcap"), frames, 12);
  std::string routes;
  for (int i = 0; i < 300; ++i) {
    uint8_t len = uint8_t(rng() % 33);
    uint32_t a = ((uint32_t(rng() % 4) << 30) | (rng() & 0x3fffffff)) & k::prefix_mask(len);
    routes += fmt::format("{}{}.{}.{}.{}/{} {}", i ? ", " : "", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255, len,
                          rng() % 3);
  }
  std::map<std::string, std::vector<std::vector<test::Frame>>> out;
  for (std::string cls : {"LinearIPLookup", "RadixIPLookup", "RangeIPLookup", "DirectIPLookup", "StaticIPLookup"}) {
    std::string cfg =
        fmt::format("FromDump({}, STOP true) -> CheckIPHeader -> rt :: {}({});", router_tmp("radix.pcap"), cls, routes);
    for (int o = 0; o < 3; ++o)
      cfg += fmt::format(" rt[{}] -> ToDump({});", o, router_tmp(fmt::format("{}-{}.pcap", cls, o)));
    auto r = test::run(cfg);
    ASSERT_TRUE(r->ok) << r->errors;
    test::finish(*r);
    for (int o = 0; o < 3; ++o) out[cls].push_back(test::read_pcap(router_tmp(fmt::format("{}-{}.pcap", cls, o))));
  }
  size_t total = 0;
  for (int o = 0; o < 3; ++o) {
    total += out["LinearIPLookup"][size_t(o)].size();
    for (auto& [cls, v] : out) {
      ASSERT_EQ(v[size_t(o)].size(), out["LinearIPLookup"][size_t(o)].size()) << cls << " output " << o;
      for (size_t i = 0; i < v[size_t(o)].size(); ++i)
        EXPECT_EQ(v[size_t(o)][i].bytes, out["LinearIPLookup"][size_t(o)][i].bytes) << cls;
    }
  }
  EXPECT_GT(total, 1000u);
}

TEST(LookupIP6Route, RoutesAndChangesWhileRunning) {
  // IPv6 packets to 2001:db8:1::5 and 2001:db8:2::5.
  std::vector<Bytes> frames;
  for (int i = 0; i < 200; ++i) {
    Bytes p(48, 0);
    p[0] = 0x60;
    k::store_be16(p.data() + 4, 8);
    p[6] = 17;
    p[7] = 64;
    p[8] = 0x20, p[9] = 0x01, p[10] = 0x0d, p[11] = 0xb8, p[23] = 1;
    p[24] = 0x20, p[25] = 0x01, p[26] = 0x0d, p[27] = 0xb8, p[29] = uint8_t(1 + i % 2), p[39] = 5;
    frames.push_back(p);
  }
  write_pcap(router_tmp("v6.pcap"), frames, 12);
  auto r = test::run(fmt::format(R"(
    FromDump({}, STOP true) -> CheckIP6Header -> dh :: DecIP6HLIM -> rt :: LookupIP6Route(2001:db8:1::/48 0, ::/0 fe80::1 1);
    rt[0] -> a :: Counter -> Discard;
    rt[1] -> b :: Counter -> Discard;)",
                                 router_tmp("v6.pcap")));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("a.count"), 100u);
  EXPECT_EQ(r->n("b.count"), 100u);
  test::finish(*r);
  // Run-time changes: add a /64 to output 0, then remove the default.
  auto r2 = test::run(R"(
    src :: RatedSource(DATA \<60 00 00 00 00 00 3b 40  20 01 0d b8 00 00 00 00 00 00 00 00 00 00 00 01
                                20 01 0d b8 00 02 00 00 00 00 00 00 00 00 00 05>, RATE 2000, LIMIT 300, STOP true)
      -> CheckIP6Header -> rt :: LookupIP6Route(::/0 1);
    rt[0] -> a :: Counter -> Discard;
    rt[1] -> b :: Counter -> Discard;
    Script(wait 50ms, write rt.add 2001:db8:2::/64 0, wait 30ms, write rt.remove ::/0, wait 30ms, write rt.remove 2001:db8:2::/64);
  )");
  ASSERT_TRUE(r2->ok) << r2->errors;
  uint64_t a = r2->n("a.count"), b = r2->n("b.count"), none = r2->n("rt.drops");
  EXPECT_EQ(a + b + none, 300u);
  EXPECT_GT(a, 0u);
  EXPECT_GT(b, 0u);
  EXPECT_GT(none, 0u);
  EXPECT_EQ(r2->h("rt.routes"), "0");
  test::finish(*r2);
}

namespace {
// Reassembles IPv4 fragments (raw IP frames); empty on a gap or overlap.
Bytes reassemble(const std::vector<test::Frame>& frags, Bytes& first_header) {
  std::map<uint32_t, Bytes> parts;
  uint32_t end = 0;
  for (auto& f : frags) {
    const uint8_t* p = f.bytes.data();
    uint32_t hl = uint32_t(p[0] & 0xf) * 4, tot = k::load_be16(p + 2);
    EXPECT_EQ(k::ip_checksum(p, hl), 0) << "fragment header checksum";
    uint16_t fo = k::load_be16(p + 6);
    uint32_t off = uint32_t(fo & 0x1fff) * 8;
    if (off == 0) first_header.assign(p, p + hl);
    parts[off] = Bytes(p + hl, p + tot);
    if (!(fo & 0x2000)) end = off + tot - hl;
  }
  Bytes all;
  for (auto& [off, b] : parts) {
    if (off != all.size()) return {};
    all.insert(all.end(), b.begin(), b.end());
  }
  return all.size() == end ? all : Bytes{};
}
}  // namespace

TEST(IPFragmenter, SplitsReassemblesAndHonoursDF) {
  // Options: record route (copy bit clear: first fragment only) and a
  // copied option (type 0x88, stream ID), padded to 12 bytes.
  Bytes opts = {7, 7, 4, 0, 0, 0, 0, 0x88, 4, 0x12, 0x34, 0};
  Bytes big = ipv4(0x0a000001, 0x0a000002, 3001, opts);
  Bytes df = ipv4(0x0a000001, 0x0a000002, 3001, {}, 64, true);
  Bytes small = ipv4(0x0a000001, 0x0a000002, 100);
  Bytes frag = ipv4(0x0a000001, 0x0a000003, 2000, {}, 64, false, 100, true);  // a middle fragment
  write_pcap(router_tmp("frag.pcap"), {big, df, small, frag}, 12);
  auto r = test::run(fmt::format(R"(
    FromDump({}, STOP true) -> CheckIPHeader -> fr :: IPFragmenter(1000) -> ToDump({}, ENCAP IP);
    fr[1] -> toobig :: Counter -> Discard;)",
                                 router_tmp("frag.pcap"), router_tmp("frag-out.pcap")));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("toobig.count"), 1u) << "DF packet to output 1";
  test::finish(*r);
  auto out = test::read_pcap(router_tmp("frag-out.pcap"));
  std::vector<test::Frame> f1, f2;
  bool saw_small = false;
  for (auto& f : out) {
    ASSERT_LE(f.bytes.size(), 1000u);
    uint32_t tot = k::load_be16(f.bytes.data() + 2);
    uint16_t fo = k::load_be16(f.bytes.data() + 6);
    if (tot == 120 && fo == 0)
      saw_small = true;
    else if (f.bytes[19] == 3)
      f2.push_back(f);
    else
      f1.push_back(f);
  }
  EXPECT_TRUE(saw_small) << "small packets pass unchanged";
  ASSERT_GE(f1.size(), 4u);
  Bytes hdr;
  Bytes data = reassemble(f1, hdr);
  EXPECT_EQ(data, Bytes(big.begin() + 32, big.end())) << "reassembly gives back the payload";
  EXPECT_EQ(hdr.size(), 32u) << "first fragment keeps every option";
  for (size_t i = 1; i < f1.size(); ++i) {
    uint32_t hl = uint32_t(f1[i].bytes[0] & 0xf) * 4;
    EXPECT_EQ(hl, 24u) << "later fragments: only the copied option, padded";
    EXPECT_EQ(f1[i].bytes[20], 0x88);
  }
  // The fragment of a fragment keeps its offset and MF on every piece.
  ASSERT_GE(f2.size(), 3u);
  uint32_t covered = 0;
  for (auto& f : f2) {
    uint16_t fo = k::load_be16(f.bytes.data() + 6);
    EXPECT_TRUE(fo & 0x2000) << "MF stays set: more fragments follow the original";
    EXPECT_EQ((fo & 0x1fff) * 8u, 800u + covered);
    covered += k::load_be16(f.bytes.data() + 2) - 20u;
  }
  EXPECT_EQ(covered, 2000u);
  // An MTU below header + 8 bytes drops, with its reason.
  auto r2 = test::run(fmt::format("FromDump({}, STOP true) -> CheckIPHeader -> fr :: IPFragmenter(30) -> Discard;",
                                  router_tmp("frag.pcap")));
  ASSERT_TRUE(r2->ok) << r2->errors;
  std::map<std::string, uint64_t> got;
  for (auto& d : r2->rt->router(0).find("fr")->drop_reasons())
    if (d.count.get()) got[d.name] = d.count.get();
  EXPECT_EQ(got["mtu-below-header"], 1u) << "the options packet: 32 + 8 > 30 (the others fit 20 + 8)";
  EXPECT_EQ(got["dont-fragment"], 1u);
  test::finish(*r2);
}

TEST(ICMPError, FormatAndRefusals) {
  Bytes ttl1 = ipv4(0x0a000005, 0x0a010002, 600, {}, 1);
  Bytes to_bcast = ipv4(0x0a000005, 0xffffffff, 20, {}, 1);
  Bytes from_mcast_src = ipv4(0xe0000001, 0x0a010002, 20, {}, 1);
  Bytes later_frag = ipv4(0x0a000005, 0x0a010002, 40, {}, 1, false, 10);
  Bytes icmp_err = ipv4(0x0a000005, 0x0a010002, 36, {}, 1, false, 0, false, 1);
  icmp_err[20] = 3;  // an ICMP unreachable: never answered
  Bytes icmp_echo = ipv4(0x0a000005, 0x0a010002, 36, {}, 1, false, 0, false, 1);
  icmp_echo[20] = 8;
  icmp_echo[21] = 0;
  write_pcap(router_tmp("icmp.pcap"), {ttl1, to_bcast, from_mcast_src, later_frag, icmp_err, icmp_echo}, 12);
  auto r = test::run(fmt::format(R"(
    FromDump({}, STOP true) -> CheckIPHeader(BADSRC 1.1.1.1) -> dt :: DecIPTTL;
    dt -> Discard;
    dt[1] -> e :: ICMPError(10.0.0.1, timeexceeded) -> FixIPSrc(10.9.9.9) -> ToDump({}, ENCAP IP);)",
                                 router_tmp("icmp.pcap"), router_tmp("icmp-out.pcap")));
  ASSERT_TRUE(r->ok) << r->errors;
  test::finish(*r);
  auto out = test::read_pcap(router_tmp("icmp-out.pcap"));
  ASSERT_EQ(out.size(), 2u) << "errors for the TTL-expired datagram and the echo request only";
  // CheckIPHeader drops the multicast source itself; the others are refused by ICMPError.
  for (size_t i = 0; i < out.size(); ++i) {
    const Bytes& e = out[i].bytes;
    ASSERT_GE(e.size(), 56u);
    EXPECT_EQ(k::ip_checksum(e.data(), 20), 0);
    EXPECT_EQ(k::load_be32(e.data() + 12), 0x0a090909u) << "FixIPSrc gave it the interface address";
    EXPECT_EQ(k::load_be32(e.data() + 16), 0x0a000005u);
    EXPECT_EQ(e[9], 1);
    EXPECT_EQ(e[20], 11);
    EXPECT_EQ(e[21], 0);
    EXPECT_EQ(k::ip_checksum(e.data() + 20, uint32_t(e.size()) - 20), 0) << "ICMP checksum";
  }
  EXPECT_EQ(out[0].bytes.size(), 576u) << "as much of the original as fits 576 bytes";
  EXPECT_EQ(out[0].bytes[28], 0x45) << "the quote starts with the original header";
  EXPECT_EQ(r->n("e.errors"), 2u);
  // Unknown codes and types are configuration errors.
  auto bad = test::run("FastUDPFlows(LIMIT 1) -> ICMPError(10.0.0.1, unreachable, nosuchcode) -> Discard;");
  EXPECT_FALSE(bad->ok);
  EXPECT_NE(bad->errors.find("'nosuchcode' is not a code"), std::string::npos) << bad->errors;
}

TEST(ARPQuerier, ResolvesThroughResponderAndQueues) {
  auto r = test::run(fmt::format(R"(
    InfiniteSource(DATA \<45 00 00 1c 00 00 00 00 40 11 00 00 0a 00 00 01 0a 00 00 02 00 00 00 00 00 00 00 00>, LIMIT 5)
      -> MarkIPHeader -> GetIPAddress(16) -> [0]q :: ARPQuerier(10.0.0.1, 02:00:00:00:00:01);
    q -> c :: Classifier(12/0806 20/0001, 12/0800);
    c[0] -> ar :: ARPResponder(10.0.0.0/24 02:00:00:00:00:02) -> [1]q;
    c[1] -> ToDump({});)",
                                 router_tmp("arp.pcap")));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("q.queries"), 1u) << "one query for five waiting packets";
  EXPECT_EQ(r->n("q.responses"), 1u);
  EXPECT_EQ(r->n("ar.replies"), 1u);
  EXPECT_EQ(r->h("q.table").rfind("10.0.0.2 1 02-00-00-00-00-02 ", 0), 0u) << r->h("q.table");
  test::finish(*r);
  auto out = test::read_pcap(router_tmp("arp.pcap"));
  ASSERT_EQ(out.size(), 5u);
  for (auto& f : out) {
    EXPECT_EQ(Bytes(f.bytes.begin(), f.bytes.begin() + 12), (Bytes{2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1}));
    EXPECT_EQ(k::load_be16(f.bytes.data() + 12), 0x0800);
  }
  // No answer: one query for packets that come together (at most one per
  // 100 ms per address), and the packets wait until the entry expires.
  auto r2 = test::run(R"(
    InfiniteSource(DATA \<45 00 00 14 00 00 00 00 40 11 00 00 0a 00 00 01 0a 00 00 09>, LIMIT 3)
      -> MarkIPHeader -> GetIPAddress(16) -> [0]q :: ARPQuerier(10.0.0.1, 02:00:00:00:00:01, TIMEOUT 0);
    Idle -> [1]q;
    q -> Discard;)");
  ASSERT_TRUE(r2->ok) << r2->errors;
  EXPECT_EQ(r2->n("q.queries"), 1u);
  EXPECT_EQ(r2->n("q.length"), 3u) << "waiting";
  EXPECT_EQ(r2->n("q.count"), 1u);
  EXPECT_EQ(r2->h("q.table").rfind("10.0.0.9 0 FF-FF-FF-FF-FF-FF ", 0), 0u) << r2->h("q.table");
  test::finish(*r2);
  // ENTRY_CAPACITY: a new address pushes the oldest out, with its packets.
  auto r3 = test::run(R"(
    a :: InfiniteSource(DATA \<45 00 00 14 00 00 00 00 40 11 00 00 0a 00 00 01 0a 00 00 09>, LIMIT 2)
      -> MarkIPHeader -> GetIPAddress(16) -> [0]q :: ARPQuerier(10.0.0.1, 02:00:00:00:00:01, ENTRY_CAPACITY 1);
    b :: InfiniteSource(DATA \<45 00 00 14 00 00 00 00 40 11 00 00 0a 00 00 01 0a 00 00 0a>, LIMIT 1, ACTIVE false)
      -> MarkIPHeader -> GetIPAddress(16) -> q;
    Idle -> [1]q;
    q -> Discard;
    DriverManager(wait 10ms, write b.active true, wait 10ms);)");
  ASSERT_TRUE(r3->ok) << r3->errors;
  EXPECT_EQ(r3->n("q.queries"), 2u);
  EXPECT_EQ(r3->n("q.length"), 1u);
  EXPECT_EQ(r3->h("q.table").rfind("10.0.0.10 0 ", 0), 0u) << r3->h("q.table");
  uint64_t expired = 0;
  for (auto& d : r3->rt->router(0).find("q")->drop_reasons())
    if (d.name == "arp-expired") expired = d.count.get();
  EXPECT_EQ(expired, 2u);
  test::finish(*r3);
}

TEST(IP6NDSolicitor, ResolvesThroughAdvertiser) {
  auto r = test::run(fmt::format(R"(
    InfiniteSource(DATA \<60 00 00 00 00 00 3b 40  fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 01
                                fd 00 00 00 00 00 00 00 00 00 00 00 00 00 00 02>, LIMIT 4)
      -> CheckIP6Header -> [0]nds :: IP6NDSolicitor(fd00::1, 02:00:00:00:00:01);
    nds -> c :: Classifier(12/86dd 20/3a 54/87, 12/86dd);
    c[0] -> adv :: IP6NDAdvertiser(fd00::2/64 02:00:00:00:00:02) -> [1]nds;
    c[1] -> ToDump({});)",
                                 router_tmp("nd.pcap")));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("nds.queries"), 1u);
  EXPECT_EQ(r->n("adv.replies"), 1u) << "the solicitation passed the advertiser's checks (hop limit, checksum)";
  EXPECT_EQ(r->n("nds.responses"), 1u) << "the advertisement passed the solicitor's checks";
  test::finish(*r);
  auto out = test::read_pcap(router_tmp("nd.pcap"));
  ASSERT_EQ(out.size(), 4u);
  for (auto& f : out) EXPECT_EQ(Bytes(f.bytes.begin(), f.bytes.begin() + 6), (Bytes{2, 0, 0, 0, 0, 2}));
}

TEST(ICMPPingResponder, AndRecordRoute) {
  Bytes echo = ipv4(0x0a000005, 0x0a000001, 16, {}, 64, false, 0, false, 1);
  echo[20] = 8;
  echo[21] = 0;
  echo[22] = echo[23] = 0;
  k::store_be16(echo.data() + 22, k::ip_checksum(echo.data() + 20, 16));
  Bytes rr = ipv4(0x0a000005, 0x0a010002, 8, {7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0});
  Bytes badopt = ipv4(0x0a000005, 0x0a010002, 8, {7, 11, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0});  // pointer < 4
  write_pcap(router_tmp("ping.pcap"), {echo, rr, badopt}, 12);
  auto r = test::run(fmt::format(R"(
    FromDump({}, STOP true) -> CheckIPHeader -> p :: ICMPPingResponder -> ToDump({}, ENCAP IP);
    p[1] -> g :: IPGWOptions(10.0.0.1) -> ToDump({}, ENCAP IP);
    g[1] -> bad :: Counter -> Discard;)",
                                 router_tmp("ping.pcap"), router_tmp("ping-out.pcap"), router_tmp("rr-out.pcap")));
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("bad.count"), 1u);
  test::finish(*r);
  auto pong = test::read_pcap(router_tmp("ping-out.pcap"));
  ASSERT_EQ(pong.size(), 1u);
  const Bytes& e = pong[0].bytes;
  EXPECT_EQ(k::load_be32(e.data() + 12), 0x0a000001u);
  EXPECT_EQ(k::load_be32(e.data() + 16), 0x0a000005u);
  EXPECT_EQ(e[20], 0);
  EXPECT_EQ(k::ip_checksum(e.data(), 20), 0);
  EXPECT_EQ(k::ip_checksum(e.data() + 20, 16), 0);
  auto rrout = test::read_pcap(router_tmp("rr-out.pcap"));
  ASSERT_EQ(rrout.size(), 1u);
  const Bytes& o = rrout[0].bytes;
  EXPECT_EQ(o[22], 8) << "pointer advanced";
  EXPECT_EQ(k::load_be32(o.data() + 23), 0x0a000001u) << "address recorded";
  EXPECT_EQ(k::ip_checksum(o.data(), 32), 0);
}
