// The flow layer: connection keys, the flow table (lookups, TCP states,
// exact expiry on a simulated clock, eviction, fragments) against a brute
// force model, and FlowIPManager/FlowLog in a graph.
#include <gtest/gtest.h>

#if defined(SHOAL_HAVE_PCRE2)
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif
#include <arpa/inet.h>

#include <cstring>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "flow_helpers.hh"
#include "helpers.hh"
#include "shoal/flow/flowtable.hh"
#include "shoal/flow/l7.hh"
#include "shoal/flow/reassembly.hh"
#include "shoal/kernels/flowhash.hh"
#include "shoal/kernels/flowkey.hh"

namespace shoal {
namespace {

constexpr uint64_t kSec = 1'000'000'000ull;

// An IPv4 packet (no Ethernet) with a TCP, UDP or ICMP header.
std::vector<uint8_t> ip4(uint32_t src, uint32_t dst, uint8_t proto, uint16_t sp, uint16_t dp, uint8_t flags = 0,
                         uint16_t payload = 0, uint16_t frag = 0, uint16_t id = 1) {
  uint32_t l4 = proto == 6 ? 20 : 8;
  if (frag & 0x1fff) l4 = 0;
  std::vector<uint8_t> p(20 + l4 + payload, 0);
  p[0] = 0x45;
  k::store_be16(p.data() + 2, uint16_t(p.size()));
  k::store_be16(p.data() + 4, id);
  k::store_be16(p.data() + 6, frag);
  p[8] = 64;
  p[9] = proto;
  k::store_be32(p.data() + 12, src);
  k::store_be32(p.data() + 16, dst);
  if (l4) {
    uint8_t* t = p.data() + 20;
    if (proto == 1) {
      t[0] = uint8_t(sp);        // type
      k::store_be16(t + 4, dp);  // identifier
    } else {
      k::store_be16(t, sp);
      k::store_be16(t + 2, dp);
    }
    if (proto == 6) {
      t[12] = 5 << 4;
      t[13] = flags;
    }
  }
  return p;
}

k::ParsedKey parse(const std::vector<uint8_t>& p) {
  k::ParsedKey r;
  k::parse_conn_key(p.data(), uint32_t(p.size()), r);
  return r;
}

TEST(FlowKey, BothDirectionsShareAKeyAndKnowTheirDirection) {
  auto a = parse(ip4(0x0a000001, 0x0a000002, 6, 40000, 80, k::kTcpSyn));
  auto b = parse(ip4(0x0a000002, 0x0a000001, 6, 80, 40000, k::kTcpSyn | k::kTcpAck));
  ASSERT_EQ(a.kind, k::KeyKind::Conn);
  EXPECT_TRUE(a.key == b.key);
  EXPECT_NE(a.dir, b.dir);
  EXPECT_EQ(a.tcp_flags, k::kTcpSyn);
  auto c = parse(ip4(0x0a000001, 0x0a000002, 6, 40001, 80));
  EXPECT_FALSE(a.key == c.key);
  EXPECT_EQ(k::conn_hash(a.key), k::conn_hash(b.key));
  // same addresses, ports decide the order
  auto d = parse(ip4(0x0a000001, 0x0a000001, 17, 9, 5));
  auto e = parse(ip4(0x0a000001, 0x0a000001, 17, 5, 9));
  EXPECT_TRUE(d.key == e.key);
  EXPECT_NE(d.dir, e.dir);
}

// A key's vlan: one id as it is, a stack of several folded above 0xfff (so
// never one id's), a stack's every id counted; it tells keys and hashes apart.
TEST(FlowKey, VlanIdsSetTheKeysVlan) {
  const uint16_t one[] = {100}, a[] = {300, 5}, b[] = {300, 6}, c[] = {5, 300}, three[] = {300, 5, 7};
  EXPECT_EQ(k::vlan_key(one, 0), 0);
  EXPECT_EQ(k::vlan_key(one, 1), 100);
  std::set<uint16_t> stacks;
  for (auto [ids, n] : {std::pair{a, 2}, {b, 2}, {c, 2}, {three, 3}}) {
    uint16_t v = k::vlan_key(ids, n);
    EXPECT_GE(v, 0x1000);
    stacks.insert(v);
  }
  EXPECT_EQ(stacks.size(), 4u) << "the inner id, the order and the third id count";
  auto x = parse(ip4(0x0a000001, 0x0a000002, 17, 1000, 53));
  auto y = x;
  y.key.vlan = 100;
  EXPECT_FALSE(x.key == y.key);
  EXPECT_NE(k::conn_hash(x.key), k::conn_hash(y.key));
}

TEST(FlowKey, IcmpErrorsQuoteTheirConnection) {
  auto udp = ip4(0x0a000001, 0x0a000002, 17, 5000, 53, 0, 20);
  // the router 10.0.0.9 answers 10.0.0.1 about the datagram it sent
  std::vector<uint8_t> err = ip4(0x0a000009, 0x0a000001, 1, 3, 0);
  err.insert(err.end(), udp.begin(), udp.begin() + 28);
  k::store_be16(err.data() + 2, uint16_t(err.size()));
  auto q = parse(err), u = parse(udp);
  ASSERT_EQ(q.kind, k::KeyKind::Conn);
  EXPECT_EQ(q.icmp_error, 1);
  EXPECT_TRUE(q.key == u.key);
  EXPECT_NE(q.dir, u.dir);  // it travels back towards the sender
  // a quote cut inside its IP header is no key
  err.resize(28 + 12);
  k::store_be16(err.data() + 2, uint16_t(err.size()));
  EXPECT_EQ(parse(err).kind, k::KeyKind::Truncated);
}

TEST(FlowKey, EchoIsKeyedByIdentifierAndCutHeadersAreTruncated) {
  auto req = parse(ip4(0x0a000001, 0x0a000002, 1, 8, 77));
  auto rep = parse(ip4(0x0a000002, 0x0a000001, 1, 0, 77));
  EXPECT_TRUE(req.key == rep.key);
  EXPECT_EQ(req.key.pa, 77);
  auto other = parse(ip4(0x0a000001, 0x0a000002, 1, 8, 78));
  EXPECT_FALSE(req.key == other.key);
  auto tcp = ip4(0x0a000001, 0x0a000002, 6, 1, 2);
  EXPECT_EQ(k::parse_conn_key(tcp.data(), 22, req), k::KeyKind::Truncated);
  EXPECT_EQ(k::parse_conn_key(tcp.data(), 12, req), k::KeyKind::NotIP);
}

// parse_conn_key's inlined path (IPv4 without options over whole TCP/UDP
// headers) gives exactly the general parser's key, and leaves it every
// other packet: random headers near the path's edges (versions, header
// lengths, fragment bits, protocols, total lengths, data offsets, HTTP
// replies), each field compared.
TEST(FlowKey, TheInlinedIpv4PathParsesAsTheGeneralOne) {
  std::mt19937 rng(11);
  auto pick = [&](std::initializer_list<uint32_t> v) { return *(v.begin() + rng() % v.size()); };
  int fast = 0, general = 0, replies = 0;
  for (int it = 0; it < 200000; ++it) {
    std::vector<uint8_t> p(20 + rng() % 70);
    for (auto& b : p) b = uint8_t(rng());
    p[0] = uint8_t(pick({0x45, 0x45, 0x45, 0x46, 0x44, 0x55, 0x65}));
    k::store_be16(p.data() + 6, uint16_t(pick({0, 0, 0, 0x4000, 0x2000, 0x0001, 0x8000})));
    p[9] = uint8_t(pick({6, 17, 6, 17, 1, 132, 50}));
    k::store_be16(p.data() + 2, uint16_t(pick({uint32_t(p.size()), uint32_t(p.size()), 27, 28, 39, 40,
                                               uint32_t(p.size() + 10), uint32_t(rng() % 100)})));
    if (rng() % 4 == 0) std::memcpy(p.data() + 12, p.data() + 16, 4);  // equal addresses: ports decide
    if (p.size() > 33) p[32] = uint8_t(pick({5, 5, 8, 15, 0, 4}) << 4);
    if (p.size() > 48 && rng() % 3 == 0) {
      p[33] = uint8_t(pick({0x10, 0x18, 0x02, 0x12}));
      size_t d = 20 + size_t(p[32] >> 4) * 4;
      if (d + 8 <= p.size()) std::memcpy(p.data() + d, pick({0, 1}) ? "HTTP/1.1" : "HTTP/2.0", 8);
    }
    uint32_t len = uint32_t(p.size()) - uint32_t(rng() % 3 == 0 ? rng() % 10 : 0);
    k::ParsedKey a, b;
    std::memset(static_cast<void*>(&a), 0xee, sizeof a);
    unsigned char untouched[sizeof a], after[sizeof a];  // (bytes: padding included)
    std::memcpy(untouched, static_cast<const void*>(&a), sizeof a);
    bool took = k::parse_ipv4_common(p.data(), len, a);
    k::KeyKind kind = k::parse_conn_key_general(p.data(), len, b);
    // its domain: whole UDP (8 bytes) or TCP (20) headers within the total
    // length, as far as the packet holds it
    uint32_t total = std::min<uint32_t>(k::load_be16(p.data() + 2), len);
    bool expected = len >= 28 && p[0] == 0x45 && !(k::load_be16(p.data() + 6) & 0x3fff) &&
                    ((p[9] == 17 && total >= 28) || (p[9] == 6 && total >= 40));
    ASSERT_EQ(took, expected) << "packet " << it;
    if (took) {
      ASSERT_EQ(kind, k::KeyKind::Conn);
    }
    if (!took) {
      std::memcpy(after, static_cast<const void*>(&a), sizeof a);
      ASSERT_EQ(std::memcmp(after, untouched, sizeof a), 0) << "a packet it leaves is not written";
      ++general;
      continue;
    }
    ++fast;
    replies += a.server_reply;
    ASSERT_TRUE(a.key == b.key) << "packet " << it;
    ASSERT_EQ(a.frag_id, b.frag_id);
    ASSERT_EQ(a.l4_off, b.l4_off);
    ASSERT_EQ(a.payload_len, b.payload_len) << "packet " << it;
    ASSERT_EQ(a.dir, b.dir);
    ASSERT_EQ(a.tcp_flags, b.tcp_flags);
    ASSERT_EQ(a.icmp_error, b.icmp_error);
    ASSERT_EQ(a.kind, b.kind);
    ASSERT_EQ(a.server_reply, b.server_reply) << "packet " << it;
    k::ParsedKey c;
    ASSERT_EQ(k::parse_conn_key(p.data(), len, c), k::KeyKind::Conn);
    ASSERT_TRUE(c.key == b.key);
  }
  EXPECT_GT(fast, 15000);
  EXPECT_GT(general, 100000);
  EXPECT_GT(replies, 100);
}

TEST(FlowKey, Ipv6ExtensionHeadersAndFragments) {
  std::vector<uint8_t> p(40 + 8 + 8 + 20, 0);
  p[0] = 0x60;
  k::store_be16(p.data() + 4, uint16_t(p.size() - 40));
  p[6] = 0;  // hop-by-hop
  p[8 + 15] = 1;
  p[24 + 15] = 2;
  p[40] = 44;  // then a fragment header
  p[48] = 6;   // then TCP
  k::store_be32(p.data() + 52, 0xabcdef);
  k::store_be16(p.data() + 56, 1234);
  k::store_be16(p.data() + 58, 443);
  p[56 + 12] = 5 << 4;
  auto first = parse(p);
  EXPECT_EQ(first.kind, k::KeyKind::FirstFrag);
  EXPECT_EQ(first.key.proto, 6);
  EXPECT_EQ(first.key.pa, 1234);  // ::1 < ::2: the source is the canonical a endpoint
  EXPECT_EQ(first.frag_id, 0xabcdefu);
  k::store_be16(p.data() + 50, 0x0100);  // offset 32: a later fragment
  auto later = parse(p);
  EXPECT_EQ(later.kind, k::KeyKind::Frag);
  EXPECT_EQ(later.frag_id, 0xabcdefu);
}

TEST(FlowKey, DispatchHashIsSymmetric) {
  auto frame = [](uint32_t s, uint32_t d, uint16_t sp, uint16_t dp) {
    std::vector<uint8_t> f(14, 0);
    k::store_be16(f.data() + 12, 0x0800);
    auto ip = ip4(s, d, 6, sp, dp);
    f.insert(f.end(), ip.begin(), ip.end());
    return f;
  };
  auto a = frame(0x0a000001, 0x0a000002, 40000, 80), b = frame(0x0a000002, 0x0a000001, 80, 40000);
  EXPECT_EQ(k::flow_hash(a.data(), uint32_t(a.size())), k::flow_hash(b.data(), uint32_t(b.size())));
  auto c = frame(0x0a000001, 0x0a000001, 1, 2), d = frame(0x0a000001, 0x0a000001, 2, 1);
  EXPECT_EQ(k::flow_hash(c.data(), uint32_t(c.size())), k::flow_hash(d.data(), uint32_t(d.size())));
  auto e = frame(0x0a000001, 0x0a000002, 40001, 80);
  EXPECT_NE(k::flow_hash(a.data(), uint32_t(a.size())), k::flow_hash(e.data(), uint32_t(e.size())));
}

// An ICMP error goes where the connection it quotes goes (a router's
// address sends it: its own tuple would send it anywhere); with hosts, every
// packet between two hosts hashes alike: another connection, a fragment of
// one (no ports), a reply.
TEST(FlowKey, DispatchSendsIcmpErrorsWithTheirConnectionAndHostsTogether) {
  const uint32_t c = 0x0a000001, s = 0x0a000002, router = 0xc0a80101;
  auto h = [](const std::vector<uint8_t>& ip, bool hosts = false) {
    return k::flow_hash_ip(ip.data(), uint32_t(ip.size()), hosts);
  };
  auto conn = ip4(c, s, 6, 40000, 25, k::kTcpAck);
  // an error from the router back to the client, quoting the client's segment
  auto err = ip4(router, c, 1, 11, 0);  // time exceeded
  err.insert(err.end(), conn.begin(), conn.begin() + 28);
  k::store_be16(err.data() + 2, uint16_t(err.size()));
  EXPECT_EQ(h(err), h(conn));
  EXPECT_EQ(h(err), h(ip4(s, c, 6, 25, 40000, k::kTcpAck)));
  auto echo = ip4(router, c, 1, 8, 7);  // not an error: its own tuple
  EXPECT_NE(h(echo), h(conn));
  // hosts
  auto other = ip4(s, c, 17, 53, 5353), frag = ip4(c, s, 6, 0, 0, 0, 16, 0x0003, 9);
  EXPECT_NE(h(other), h(conn));
  EXPECT_EQ(h(other, true), h(conn, true));
  EXPECT_EQ(h(frag, true), h(conn, true));
  EXPECT_NE(h(ip4(c, router, 6, 40000, 25), true), h(conn, true));
}

flow::Config exact() {
  flow::Config c;
  c.granularity_ns = 0;
  return c;
}

// A packet's flow by its tuple and start (ids name entries, which flows reuse).
std::string flow_of(const flow::FlowTable& t, uint32_t id) {
  return id ? flow::flow_tuple(t.flow(id)) + " " + std::to_string(t.flow(id).first_ns) : "-";
}

struct Table {
  flow::FlowTable t;
  std::vector<std::pair<uint32_t, flow::Release>> gone;
  explicit Table(uint32_t cap, flow::Config c = exact()) {
    t.on_release([this](uint32_t id, const flow::Flow&, flow::Release r) { gone.push_back({id, r}); });
    c.capacity = cap;
    t.init(c);
  }
  uint32_t pkt(const std::vector<uint8_t>& p, uint64_t now, uint8_t* dir = nullptr) {
    uint8_t d = 0;
    uint32_t id = t.track(parse(p), uint32_t(p.size()), now, d);
    if (dir) *dir = d;
    return id;
  }
};

// A hot swap's table takes the old one's flows, state and counters when
// both were built alike (capacity, reservations), and nothing otherwise;
// the old table is left empty, so its release callbacks see nothing.
TEST(FlowTable, HotSwapTakesTheFlowsOfATableBuiltAlike) {
  flow::Config c = exact();
  c.capacity = 64;
  auto build = [&](flow::FlowTable& t, const std::string& owner, uint32_t cap, std::vector<uint32_t>& gone) {
    t.reserve(8, 8, owner);
    t.on_release([&gone](uint32_t id, const flow::Flow&, flow::Release) { gone.push_back(id); });
    flow::Config cc = c;
    cc.capacity = cap;
    t.init(cc);
  };
  flow::FlowTable old_t, same, other_owner, other_cap;
  std::vector<uint32_t> gone_old, gone_same, gone_x, gone_y;
  build(old_t, "FlowLog log()", 64, gone_old);
  build(same, "FlowLog log()", 64, gone_same);
  build(other_owner, "FlowLog log(OUT x)", 64, gone_x);
  build(other_cap, "FlowLog log()", 128, gone_y);
  std::map<uint32_t, uint32_t> ids;  // source address -> id
  for (uint32_t a = 1; a <= 10; ++a) {
    uint8_t d;
    auto p = ip4(a, 99, 17, 1000, 53);
    uint32_t id = old_t.track(parse(p), uint32_t(p.size()), a * kSec, d);
    ASSERT_NE(id, 0u);
    std::memcpy(old_t.state(id), &a, sizeof a);
    ids[a] = id;
  }
  std::string why;
  EXPECT_FALSE(other_owner.take(old_t, why));
  EXPECT_NE(why.find("keep state"), std::string::npos) << why;
  EXPECT_FALSE(other_cap.take(old_t, why));
  EXPECT_NE(why.find("capacity changed (64 flows, now 128)"), std::string::npos) << why;
  EXPECT_EQ(old_t.size(), 10u) << "a refused take moves nothing";
  ASSERT_TRUE(same.take(old_t, why)) << why;
  EXPECT_EQ(old_t.size(), 0u);
  EXPECT_EQ(old_t.counters().inserts.get(), 0u);
  EXPECT_EQ(same.size(), 10u);
  EXPECT_EQ(same.counters().inserts.get(), 10u);
  for (auto [a, id] : ids) {
    EXPECT_EQ(same.find(parse(ip4(a, 99, 17, 1000, 53)).key), id);
    uint32_t v = 0;
    std::memcpy(&v, same.state(id), sizeof v);
    EXPECT_EQ(v, a) << "the flow's state moved with it";
  }
  old_t.flush();
  EXPECT_TRUE(gone_old.empty()) << "the old table holds nothing";
  uint8_t d;
  auto again = ip4(3, 99, 17, 1000, 53);
  EXPECT_EQ(same.track(parse(again), uint32_t(again.size()), 20 * kSec, d), ids[3]);
  EXPECT_EQ(same.counters().inserts.get(), 10u);
  same.expire(1000 * kSec);  // the carried flows expire on the new table's clock
  EXPECT_EQ(gone_same.size(), 10u);
}

TEST(FlowTable, TcpFollowsConntrackStates) {
  Table tb(16);
  uint32_t c = 0x0a000001, s = 0x0a000002;
  uint8_t dir;
  uint32_t id = tb.pkt(ip4(c, s, 6, 1000, 80, k::kTcpSyn), 1, &dir);
  EXPECT_EQ(dir, 0);
  auto st = [&] { return tb.t.flow(id).tcp.state; };
  EXPECT_EQ(st(), k::kTcpSynSent);
  EXPECT_EQ(tb.pkt(ip4(s, c, 6, 80, 1000, k::kTcpSyn | k::kTcpAck), 2, &dir), id);
  EXPECT_EQ(dir, 1);
  EXPECT_EQ(st(), k::kTcpSynRecv);
  tb.pkt(ip4(c, s, 6, 1000, 80, k::kTcpAck), 3);
  EXPECT_EQ(st(), k::kTcpEstablished);
  tb.pkt(ip4(c, s, 6, 1000, 80, k::kTcpFin | k::kTcpAck), 4);
  EXPECT_EQ(st(), k::kTcpFinWait);
  tb.pkt(ip4(s, c, 6, 80, 1000, k::kTcpAck), 5);
  EXPECT_EQ(st(), k::kTcpCloseWait);
  tb.pkt(ip4(s, c, 6, 80, 1000, k::kTcpFin | k::kTcpAck), 6);
  EXPECT_EQ(st(), k::kTcpLastAck);
  tb.pkt(ip4(c, s, 6, 1000, 80, k::kTcpAck), 7);
  EXPECT_EQ(st(), k::kTcpTimeWait);
  EXPECT_EQ(tb.t.flow(id).pkts[0], 4u);
  EXPECT_EQ(tb.t.flow(id).pkts[1], 3u);
  // a new SYN on the tuple: the old connection ends, a new one starts
  uint32_t id2 = tb.pkt(ip4(c, s, 6, 1000, 80, k::kTcpSyn), 8);
  EXPECT_NE(id2, id);
  // (the old one's hooks run once the packets tracked before its end went
  // on: at the next track, expiry or flush)
  EXPECT_TRUE(tb.gone.empty());
  EXPECT_EQ(tb.t.flow(id2).tcp.state, k::kTcpSynSent);
  EXPECT_EQ(tb.t.flow(id2).pkts[0], 1u);
  EXPECT_EQ(tb.t.counters().reopened.get(), 1u);
  // RST closes
  tb.pkt(ip4(s, c, 6, 80, 1000, k::kTcpRst | k::kTcpAck), 9);
  ASSERT_EQ(tb.gone.size(), 1u);
  EXPECT_EQ(tb.gone[0].first, id);
  EXPECT_EQ(tb.gone[0].second, flow::Release::Reopened);
  EXPECT_EQ(tb.t.flow(id2).tcp.state, k::kTcpClose);
}

// Each packet's facts are the flow's condition once it was tracked; the
// packet that completes a handshake is established but was not before it
// (what Suricata's flow:established sees), a UDP flow is established by its
// first reply, that reply included, and a connection picked up midstream by
// its first packet.
TEST(FlowTable, FactsSayWhenTheHandshakeCompleted) {
  Table tb(16);
  uint32_t c = 0x0a000001, s = 0x0a000002;
  std::vector<std::vector<uint8_t>> pkts = {
      ip4(c, s, 6, 1000, 80, k::kTcpSyn),
      ip4(s, c, 6, 80, 1000, k::kTcpSyn | k::kTcpAck),
      ip4(c, s, 6, 1000, 80, k::kTcpAck, 10),
      ip4(c, s, 6, 1000, 80, k::kTcpAck, 10),
      ip4(c, s, 6, 1000, 80, k::kTcpFin | k::kTcpAck),
      ip4(c, s, 17, 5000, 53, 0, 8),
      ip4(s, c, 17, 53, 5000, 0, 8),
      ip4(c, s, 17, 5000, 53, 0, 8),
      ip4(c, s, 6, 1001, 80, k::kTcpAck, 10)};  // picked up midstream: established from its first packet
  std::vector<k::ParsedKey> keys;
  std::vector<uint32_t> lens, ids(pkts.size());
  std::vector<uint64_t> nows;
  for (auto& p : pkts) keys.push_back(parse(p)), lens.push_back(uint32_t(p.size())), nows.push_back(keys.size());
  std::vector<uint8_t> dirs(pkts.size()), facts(pkts.size());
  tb.t.track_batch(keys.data(), lens.data(), nows.data(), uint32_t(pkts.size()), ids.data(), dirs.data(), facts.data());
  constexpr uint8_t E = flow::kFactEstablished, B = flow::kFactEstablishedBefore, F = flow::kFactFirstInDir,
                    M = flow::kFactMidstream;
  EXPECT_EQ(facts, (std::vector<uint8_t>{F, F, E, E | B, E | B, F, E | B | F, E | B, E | B | F | M}));
}

// The facts are each packet's, whatever happens to its flow later in the
// batch: a connection picked up midstream that times out at a later packet
// of the batch (which starts a new one) keeps kFactMidstream on its packets,
// though the ended flow's entry shows no flags by then.
TEST(FlowTable, FactsStayThePacketsWhenTheFlowEndsLaterInTheBatch) {
  flow::Config c = exact();
  for (auto& ns : c.timeouts.ns) ns = 10;
  Table tb(16, c);
  std::vector<std::vector<uint8_t>> pkts = {ip4(1, 2, 6, 1000, 80, k::kTcpAck, 10),
                                            ip4(1, 2, 6, 1000, 80, k::kTcpAck, 10), ip4(1, 2, 6, 1000, 80, k::kTcpSyn)};
  std::vector<k::ParsedKey> keys;
  std::vector<uint32_t> lens, ids(pkts.size());
  std::vector<uint64_t> nows = {100, 105, 200};  // the third past the timeout
  for (auto& p : pkts) keys.push_back(parse(p)), lens.push_back(uint32_t(p.size()));
  std::vector<uint8_t> dirs(pkts.size()), facts(pkts.size());
  tb.t.track_batch(keys.data(), lens.data(), nows.data(), uint32_t(pkts.size()), ids.data(), dirs.data(), facts.data());
  EXPECT_EQ(ids[0], ids[1]);
  EXPECT_NE(ids[1], ids[2]);
  EXPECT_EQ(tb.t.flow(ids[0]).flags, 0) << "ended";
  EXPECT_TRUE(facts[0] & flow::kFactMidstream);
  EXPECT_TRUE(facts[1] & flow::kFactMidstream);
  EXPECT_FALSE(facts[2] & flow::kFactMidstream) << "a SYN opens the new one";
  EXPECT_EQ(tb.t.counters().expired.get(), 1u);
}

TEST(FlowTable, MidstreamPickupIsAnOption) {
  Table loose(4);
  uint32_t id = loose.pkt(ip4(1, 2, 6, 1, 2, k::kTcpAck), 1);
  EXPECT_EQ(loose.t.flow(id).tcp.state, k::kTcpEstablished);
  EXPECT_TRUE(loose.t.flow(id).flags & flow::Flow::kMidstream);
  flow::Config strict;
  strict.midstream = false;
  Table tb(4, strict);
  id = tb.pkt(ip4(1, 2, 6, 1, 2, k::kTcpAck), 1);
  EXPECT_EQ(tb.t.flow(id).tcp.state, k::kTcpNone);
  EXPECT_EQ(tb.t.flow(id).cls, k::kClsGeneric);
  // a connection picked up at its SYN-ACK: the SYN-ACK's receiver opened it
  uint8_t dir = 9;
  id = loose.pkt(ip4(5, 6, 6, 80, 1000, k::kTcpSyn | k::kTcpAck), 2, &dir);
  EXPECT_EQ(dir, 1) << "the SYN-ACK goes to the client";
  EXPECT_EQ(loose.t.flow(id).tcp.state, k::kTcpSynRecv);
  EXPECT_TRUE(loose.t.flow(id).flags & flow::Flow::kMidstream);
  EXPECT_EQ(loose.pkt(ip4(6, 5, 6, 1000, 80, k::kTcpAck), 3, &dir), id);
  EXPECT_EQ(dir, 0);
  EXPECT_EQ(loose.t.flow(id).tcp.state, k::kTcpEstablished);
  EXPECT_EQ(loose.t.flow(id).pkts[0], 1u);
  EXPECT_EQ(loose.t.flow(id).pkts[1], 1u);
  // with no midstream pickup the first packet's sender stays the originator
  id = tb.pkt(ip4(5, 6, 6, 80, 1000, k::kTcpSyn | k::kTcpAck), 2, &dir);
  EXPECT_EQ(dir, 0);
  // picked up at its SYN-ACK, the server's ACK completes it too (the
  // client's may not have been captured; Suricata's midstream SYN/ACK)
  id = loose.pkt(ip4(7, 8, 6, 80, 1000, k::kTcpSyn | k::kTcpAck), 4, &dir);
  EXPECT_EQ(loose.t.flow(id).tcp.state, k::kTcpSynRecv);
  loose.pkt(ip4(7, 8, 6, 80, 1000, k::kTcpAck), 5, &dir);
  EXPECT_EQ(dir, 1);
  EXPECT_EQ(loose.t.flow(id).tcp.state, k::kTcpEstablished);
  // picked up at a server's HTTP response: its sender is the server (as
  // Suricata reverses a midstream flow whose first data is a reply)
  auto reply = [](uint32_t a, uint32_t b, uint16_t sp, uint16_t dp, const char* text) {
    std::string t = text;
    auto p = ip4(a, b, 6, sp, dp, k::kTcpAck | 0x08, uint16_t(t.size()));
    std::copy(t.begin(), t.end(), p.end() - long(t.size()));
    return p;
  };
  id = loose.pkt(reply(9, 10, 80, 1000, "HTTP/1.1 200 OK\r\n\r\n"), 6, &dir);
  EXPECT_EQ(dir, 1) << "the response goes to the client";
  EXPECT_EQ(loose.t.flow(id).pkts[1], 1u);
  loose.pkt(ip4(10, 9, 6, 1000, 80, k::kTcpAck), 7, &dir);
  EXPECT_EQ(dir, 0);
  id = loose.pkt(reply(11, 12, 80, 1000, "HTTPS/1.1 200"), 8, &dir);
  EXPECT_EQ(dir, 0) << "not a response: the first packet's sender opened it";
  id = tb.pkt(reply(13, 14, 80, 1000, "HTTP/1.1 200 OK\r\n\r\n"), 9, &dir);
  EXPECT_EQ(dir, 0) << "no pickup: the first sender stays the originator";
}

// A capture of one side of each connection (asymmetric routing): with
// async_oneside (Suricata's stream.async-oneside) the handshake completes
// without the other side's packets; without it the connection never does.
TEST(FlowTable, OneSidedConnectionsAreEstablishedWithAsyncOneside) {
  flow::Config async;
  async.midstream = false;
  async.async_oneside = true;
  flow::Config strict = async;
  strict.async_oneside = false;
  for (bool on : {true, false}) {
    Table tb(8, on ? async : strict);
    // the client's side: SYN, then its ACK (the SYN-ACK unseen), then data
    uint32_t id = tb.pkt(ip4(1, 2, 6, 1000, 80, k::kTcpSyn), 1);
    tb.pkt(ip4(1, 2, 6, 1000, 80, k::kTcpAck), 2);
    EXPECT_EQ(tb.t.flow(id).tcp.state, on ? k::kTcpEstablished : k::kTcpSynSent) << on;
    tb.pkt(ip4(1, 2, 6, 1000, 80, k::kTcpAck | 0x08, 10), 3);
    EXPECT_EQ(tb.t.flow(id).tcp.state, on ? k::kTcpEstablished : k::kTcpSynSent) << on;
    // the server's side: its SYN-ACK (picked up, midstream off), then its data
    uint8_t dir = 9;
    id = tb.pkt(ip4(6, 5, 6, 80, 2000, k::kTcpSyn | k::kTcpAck), 4, &dir);
    if (on) {
      EXPECT_EQ(dir, 1) << "the SYN-ACK goes to the client";
      EXPECT_EQ(tb.t.flow(id).tcp.state, k::kTcpSynRecv);
    } else {
      EXPECT_EQ(tb.t.flow(id).tcp.state, k::kTcpNone);
    }
    tb.pkt(ip4(6, 5, 6, 80, 2000, k::kTcpAck | 0x08, 10), 5);
    EXPECT_EQ(tb.t.flow(id).tcp.state, on ? k::kTcpEstablished : k::kTcpNone) << on;
  }
  // both sides seen: the usual handshake, async or not
  Table both(8, async);
  uint32_t id = both.pkt(ip4(1, 2, 6, 1000, 80, k::kTcpSyn), 1);
  both.pkt(ip4(2, 1, 6, 80, 1000, k::kTcpSyn | k::kTcpAck), 2);
  EXPECT_EQ(both.t.flow(id).tcp.state, k::kTcpSynRecv);
  both.pkt(ip4(1, 2, 6, 1000, 80, k::kTcpAck), 3);
  EXPECT_EQ(both.t.flow(id).tcp.state, k::kTcpEstablished);
}

TEST(FlowTable, ExpiryIsExactOnASimulatedClock) {
  Table tb(64);
  uint64_t t0 = 1000 * kSec;
  uint32_t udp = tb.pkt(ip4(1, 2, 17, 1, 2), t0);
  uint32_t icmp = tb.pkt(ip4(1, 2, 1, 8, 5), t0 + kSec);
  uint32_t syn = tb.pkt(ip4(1, 3, 6, 1, 2, k::kTcpSyn), t0);
  tb.t.expire(t0 + 30 * kSec - 1);
  EXPECT_TRUE(tb.gone.empty());
  tb.t.expire(t0 + 30 * kSec);  // UDP unreplied: 30 s
  ASSERT_EQ(tb.gone.size(), 1u);
  EXPECT_EQ(tb.gone[0].first, udp);
  EXPECT_EQ(tb.gone[0].second, flow::Release::Expired);
  tb.t.expire(t0 + 31 * kSec);  // ICMP: 30 s after its last packet
  ASSERT_EQ(tb.gone.size(), 2u);
  EXPECT_EQ(tb.gone[1].first, icmp);
  // a packet moves the deadline; a reply moves UDP to the stream timeout
  uint32_t u2 = tb.pkt(ip4(5, 6, 17, 1, 2), t0 + 40 * kSec);
  tb.pkt(ip4(6, 5, 17, 2, 1), t0 + 50 * kSec);
  tb.t.expire(t0 + 100 * kSec);
  EXPECT_EQ(tb.t.find(parse(ip4(5, 6, 17, 1, 2)).key), u2);
  tb.t.expire(t0 + 170 * kSec);
  EXPECT_EQ(tb.t.find(parse(ip4(5, 6, 17, 1, 2)).key), 0u);
  tb.t.expire(t0 + 120 * kSec);  // SYN_SENT: 120 s (already past)
  EXPECT_EQ(tb.t.find(parse(ip4(1, 3, 6, 1, 2)).key), 0u);
  (void)syn;
  EXPECT_EQ(tb.t.size(), 0u);
  EXPECT_EQ(tb.t.counters().expired.get(), 4u);
}

TEST(FlowTable, GranularityBoundsHowLateExpiryComes) {
  flow::Config c;
  c.granularity_ns = kSec;
  Table tb(16, c);
  uint64_t t0 = 100 * kSec;
  tb.pkt(ip4(1, 2, 17, 1, 2), t0);             // A: queued at t0
  tb.pkt(ip4(3, 4, 17, 1, 2), t0 + kSec / 2);  // B: queued at t0 + 0.5
  tb.pkt(ip4(1, 2, 17, 1, 2), t0 + kSec - 1);  // A again: within the granularity, it stays put
  tb.t.expire(t0 + 30 * kSec + kSec / 2);      // B is due; A, ahead of it on the list, is not
  EXPECT_TRUE(tb.gone.empty());                // so B waits for A: late, but by less than 1 s
  tb.t.expire(t0 + 31 * kSec - 1);
  ASSERT_EQ(tb.gone.size(), 2u);
  // a packet a granularity later does move the flow
  tb.pkt(ip4(5, 6, 17, 1, 2), t0 + 40 * kSec);
  tb.pkt(ip4(7, 8, 17, 1, 2), t0 + 41 * kSec);
  tb.pkt(ip4(5, 6, 17, 1, 2), t0 + 42 * kSec);
  tb.t.expire(t0 + 71 * kSec);  // 7-8 expires; 5-6 was seen at 42 and moved behind it
  ASSERT_EQ(tb.gone.size(), 3u);
  EXPECT_NE(tb.t.find(parse(ip4(5, 6, 17, 1, 2)).key), 0u);
}

TEST(FlowTable, BatchTrackingMatchesOneByOne) {
  Table one(4096), many(4096);
  std::mt19937 rng(5);
  std::vector<k::ParsedKey> keys;
  std::vector<uint32_t> lens;
  std::vector<uint64_t> nows;
  for (int i = 0; i < 20000; ++i) {
    uint32_t a = rng() % 50, b = rng() % 50;
    auto p = ip4(a, b, i % 3 ? 17 : 6, uint16_t(rng() % 4), 80, uint8_t(rng() & 0x17));
    keys.push_back(parse(p));
    lens.push_back(uint32_t(p.size()));
    nows.push_back(uint64_t(i) * 1000);
  }
  std::vector<uint32_t> ids(keys.size()), ids1(keys.size());
  std::vector<uint8_t> dirs(keys.size()), dirs1(keys.size());
  // (ids are handles: a flow that ends in a batch keeps its entry until the
  // next batch, so the two may give a later flow other ids; the flows each
  // packet got are compared by tuple, read right after its batch)
  std::vector<std::string> flows, flows1;
  for (size_t i = 0; i < keys.size(); i += 32) {
    uint32_t n = uint32_t(std::min<size_t>(32, keys.size() - i));
    many.t.track_batch(&keys[i], &lens[i], &nows[i], n, &ids[i], &dirs[i]);
    for (uint32_t j = 0; j < n; ++j) flows.push_back(flow_of(many.t, ids[i + j]));
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    ids1[i] = one.t.track(keys[i], lens[i], nows[i], dirs1[i]);
    flows1.push_back(flow_of(one.t, ids1[i]));
  }
  for (size_t i = 0; i < flows.size(); ++i) ASSERT_EQ(flows[i], flows1[i]) << "packet " << i;
  EXPECT_EQ(dirs, dirs1);
  EXPECT_EQ(many.t.counters().inserts.get(), one.t.counters().inserts.get());
}

// Trains (a connection's packets back to back) take the flow of the packet
// before them without a lookup, and a train's packets that change nothing
// but counters (one direction, UDP or an established connection's ACKs) are
// added up at once: the same ids, directions, facts, releases, flow state
// and expiry lists as one packet at a time, with reopens (a SYN after FIN or
// RST inside a train), evictions (a table of 64) and expiry-list moves
// inside trains (a granularity of 3 packets, and 0) among them.
TEST(FlowTable, BatchTrainsMatchOneByOne) {
  struct Gone {
    std::string tuple;
    flow::Release why;
    uint64_t pkts0, pkts1;
    bool operator==(const Gone&) const = default;
  };
  for (uint64_t granularity : {uint64_t(3000), uint64_t(0)}) {
    auto make = [granularity](std::vector<Gone>& out) {
      auto t = std::make_unique<flow::FlowTable>();
      flow::Config c;
      c.capacity = 64;
      c.granularity_ns = granularity;
      t->init(c);
      t->on_release([&out](uint32_t id, const flow::Flow& f, flow::Release why) {
        out.push_back({flow::flow_tuple(f), why, f.pkts[0], f.pkts[1]});
      });
      return t;
    };
    std::vector<Gone> g1, g2;
    auto one = make(g1), many = make(g2);
    std::mt19937 rng(11);
    std::vector<k::ParsedKey> keys;
    std::vector<uint32_t> lens;
    std::vector<uint64_t> nows;
    const uint8_t flags[] = {k::kTcpSyn, k::kTcpSyn | k::kTcpAck, k::kTcpAck, k::kTcpFin | k::kTcpAck, k::kTcpRst};
    size_t trains = 0;
    while (keys.size() < 30000) {
      uint32_t a = rng() % 40, b = rng() % 40;
      uint8_t proto = rng() % 4 ? 6 : 17;
      uint32_t run = 1 + rng() % 10;
      trains += run > 1;
      bool back = rng() % 3 == 0;  // the reply direction: still the same connection
      for (uint32_t r = 0; r < run; ++r) {
        if (rng() % 6 == 0) back = !back;
        // mostly an established connection's data and ACKs
        uint8_t f = rng() % 3 ? uint8_t(rng() % 2 ? k::kTcpAck : k::kTcpAck | 0x08) : flags[rng() % 5];
        auto p = back ? ip4(b, a, proto, 80, 7, f, uint16_t(rng() % 100))
                      : ip4(a, b, proto, 7, 80, f, uint16_t(rng() % 100));
        keys.push_back(parse(p));
        lens.push_back(uint32_t(p.size()));
        nows.push_back(uint64_t(keys.size()) * 1000 - (rng() % 4 == 0 ? 1500 : 0));  // (time may step back)
      }
    }
    std::vector<uint32_t> ids(keys.size()), ids1(keys.size());
    std::vector<uint8_t> dirs(keys.size()), dirs1(keys.size()), facts(keys.size()), facts1(keys.size());
    for (size_t i = 0; i < keys.size(); i += 32) {
      uint32_t n = uint32_t(std::min<size_t>(32, keys.size() - i));
      many->track_batch(&keys[i], &lens[i], &nows[i], n, &ids[i], &dirs[i], &facts[i]);
    }
    for (size_t i = 0; i < keys.size(); ++i)
      one->track_batch(&keys[i], &lens[i], &nows[i], 1, &ids1[i], &dirs1[i], &facts1[i]);
    // (the hooks of flows that ended in the last batch run at the next
    // track or expiry: an expiry at time 0 expires nothing)
    one->expire(0);
    many->expire(0);
    EXPECT_GT(trains, 1000u);
    EXPECT_GT(one->counters().reopened.get(), 100u);
    EXPECT_GT(one->counters().evicted.get(), 100u);
    EXPECT_EQ(dirs, dirs1);
    EXPECT_EQ(facts, facts1);
    EXPECT_TRUE(g1 == g2);
    EXPECT_EQ(many->counters().lookups.get(), one->counters().lookups.get());
    // the live flows, in the expiry lists' order (ids are handles: a flow
    // that ends in a batch keeps its entry until the next batch)
    std::vector<const flow::Flow*> live1, live2;
    one->for_each([&](uint32_t, const flow::Flow& f) { live1.push_back(&f); });
    many->for_each([&](uint32_t, const flow::Flow& f) { live2.push_back(&f); });
    ASSERT_EQ(live1.size(), live2.size());
    for (size_t i = 0; i < live1.size(); ++i) {
      const flow::Flow &x = *live1[i], &y = *live2[i];
      EXPECT_EQ(flow::flow_tuple(x), flow::flow_tuple(y)) << "the expiry lists";
      EXPECT_EQ(x.pkts[0], y.pkts[0]);
      EXPECT_EQ(x.pkts[1], y.pkts[1]);
      EXPECT_EQ(x.bytes[0], y.bytes[0]);
      EXPECT_EQ(x.bytes[1], y.bytes[1]);
      EXPECT_EQ(x.last_ns, y.last_ns);
      EXPECT_EQ(x.queued_ns, y.queued_ns);
      EXPECT_EQ(x.tcp.state, y.tcp.state);
      EXPECT_EQ(x.tcp_flags[0], y.tcp_flags[0]);
      EXPECT_EQ(x.tcp_flags[1], y.tcp_flags[1]);
      EXPECT_EQ(x.flags, y.flags);
      EXPECT_EQ(x.cls, y.cls);
    }
  }
}

// Which flow a packet joins does not depend on where batches begin: expiry
// passes come once a batch (at its first packet's time, as FlowIPManager's),
// and a packet that finds its flow past the timeout starts a new one. Random
// traffic whose gaps often pass the timeouts, tracked in batches of random
// sizes (trains included), ends the same flows (tuple, reason, times,
// counts, flags as the release hooks see them) as one packet a batch with an
// expiry pass before each, and gives each packet the same direction and
// facts.
TEST(FlowTable, APacketPastItsFlowsTimeoutStartsANewFlowWhereverBatchesBegin) {
  struct Gone {
    std::string tuple;
    flow::Release why;
    uint64_t first, last, pkts0, pkts1;
    uint8_t flags;  // (an end stream inspection reads "established" from them)
    auto operator<=>(const Gone&) const = default;
  };
  flow::Config c = exact();
  for (auto& ns : c.timeouts.ns) ns = 2 * kSec;
  c.timeouts.ns[k::flow_class(17, k::TcpTrack{}, false)] = kSec;  // UDP unreplied: 1 s
  c.capacity = 256;
  auto make = [&c](std::vector<Gone>& out) {
    auto t = std::make_unique<flow::FlowTable>();
    t->init(c);
    t->on_release([&out](uint32_t, const flow::Flow& f, flow::Release why) {
      out.push_back({flow::flow_tuple(f), why, f.first_ns, f.last_ns, f.pkts[0], f.pkts[1], f.flags});
    });
    return t;
  };
  std::vector<Gone> g1, g2;
  auto one = make(g1), many = make(g2);
  std::mt19937 rng(23);
  std::vector<k::ParsedKey> keys;
  std::vector<uint32_t> lens;
  std::vector<uint64_t> nows;
  uint64_t now = kSec;
  while (keys.size() < 20000) {
    uint32_t a = rng() % 12, b = rng() % 4;
    uint8_t proto = rng() % 2 ? 6 : 17;
    uint32_t run = 1 + rng() % 6;
    for (uint32_t r = 0; r < run; ++r) {
      bool back = rng() % 3 == 0;
      uint8_t f = rng() % 8 ? k::kTcpAck : k::kTcpSyn;
      auto p = back ? ip4(b, a, proto, 80, 7, f, 10) : ip4(a, b, proto, 7, 80, f, 10);
      now += rng() % 5 == 0 ? kSec / 2 + rng() % (2 * kSec) : rng() % (kSec / 50);  // gaps past the timeouts
      keys.push_back(parse(p));
      lens.push_back(uint32_t(p.size()));
      nows.push_back(now);
    }
  }
  std::vector<uint32_t> ids(keys.size()), ids1(keys.size());
  std::vector<uint8_t> dirs(keys.size()), dirs1(keys.size()), facts(keys.size()), facts1(keys.size());
  for (size_t i = 0; i < keys.size();) {
    uint32_t n = uint32_t(std::min<size_t>(1 + rng() % 64, keys.size() - i));
    many->expire(nows[i]);
    many->track_batch(&keys[i], &lens[i], &nows[i], n, &ids[i], &dirs[i], &facts[i]);
    i += n;
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    one->expire(nows[i]);
    one->track_batch(&keys[i], &lens[i], &nows[i], 1, &ids1[i], &dirs1[i], &facts1[i]);
  }
  EXPECT_EQ(dirs, dirs1);
  EXPECT_EQ(facts, facts1);
  for (auto* t : {one.get(), many.get()}) {
    t->expire(nows.back());  // (the flows that timed out after the last batch began)
    t->flush();
  }
  EXPECT_GT(one->counters().expired.get(), 1000u);
  EXPECT_EQ(many->counters().expired.get(), one->counters().expired.get());
  EXPECT_EQ(many->counters().inserts.get(), one->counters().inserts.get());
  // (the order differs: an expiry pass ends a flow at a batch's start, a
  // packet when it comes)
  std::sort(g1.begin(), g1.end());
  std::sort(g2.begin(), g2.end());
  EXPECT_TRUE(g1 == g2);
  EXPECT_EQ(g1.size(), one->counters().inserts.get());
}

TEST(FlowTable, AFullTableEvictsTheFlowNearestItsExpiry) {
  Table tb(8);
  uint64_t t = kSec;
  // one established connection, seen first
  tb.pkt(ip4(9, 10, 6, 1, 2, k::kTcpSyn), t);
  tb.pkt(ip4(10, 9, 6, 2, 1, k::kTcpSyn | k::kTcpAck), t);
  uint32_t est = tb.pkt(ip4(9, 10, 6, 1, 2, k::kTcpAck), t);
  ASSERT_EQ(tb.t.flow(est).tcp.state, k::kTcpEstablished);
  // a SYN flood of random tuples, far more than the table holds
  std::mt19937 rng(7);
  for (int i = 0; i < 10000; ++i) {
    t += 1000;
    tb.pkt(ip4(rng(), rng(), 6, uint16_t(rng()), 80, k::kTcpSyn), t);
    ASSERT_LE(tb.t.size(), 8u);
  }
  EXPECT_EQ(tb.t.size(), 8u);
  EXPECT_EQ(tb.t.counters().evicted.get(), 10000u - 7u);
  // the established connection is still there, with its state
  EXPECT_EQ(tb.t.find(parse(ip4(9, 10, 6, 1, 2)).key), est);
  EXPECT_EQ(tb.t.flow(est).tcp.state, k::kTcpEstablished);
  for (auto& g : tb.gone) EXPECT_NE(g.first, est);
}

// hold(true) (batches held after the flow layer): a flow that ends keeps
// its entry, and its release hooks wait, until settle() says the epoch of
// its end is done; an entry needed before then is taken early, counted.
TEST(FlowTable, HeldReleasesWaitUntilTheirEpochIsDone) {
  Table tb(8);
  tb.t.hold(true);
  uint64_t t = 1000 * kSec;
  const uint32_t udp = tb.pkt(ip4(1, 2, 17, 1, 2), t);  // epoch 1
  EXPECT_EQ(tb.t.epoch(), 1u);
  const uint32_t syn = tb.pkt(ip4(3, 4, 6, 5, 6, k::kTcpSyn), t);  // epoch 2
  tb.t.expire(t + 31 * kSec);                                      // UDP unreplied: 30 s
  EXPECT_EQ(tb.t.size(), 1u);
  EXPECT_TRUE(tb.gone.empty());  // its hook waits: epoch 2 is not done
  EXPECT_EQ(tb.t.find(parse(ip4(1, 2, 17, 1, 2)).key), 0u);
  // a new flow does not take the ended flow's entry while it is held
  const uint32_t other = tb.pkt(ip4(7, 8, 17, 1, 2), t + 31 * kSec);  // epoch 3
  EXPECT_NE(other, udp);
  EXPECT_NE(other, syn);
  tb.t.settle(1);
  EXPECT_TRUE(tb.gone.empty());
  tb.t.settle(2);
  ASSERT_EQ(tb.gone.size(), 1u);
  EXPECT_EQ(tb.gone[0].first, udp);
  EXPECT_EQ(tb.gone[0].second, flow::Release::Expired);
  tb.t.expire(t + 200 * kSec);  // the SYN (120 s) and the other UDP flow
  EXPECT_EQ(tb.t.size(), 0u);
  tb.t.settle(2);
  EXPECT_EQ(tb.gone.size(), 1u);
  tb.t.settle(3);
  ASSERT_EQ(tb.gone.size(), 3u);
  EXPECT_EQ((std::set<uint32_t>{tb.gone[1].first, tb.gone[2].first}), (std::set<uint32_t>{syn, other}));
  EXPECT_EQ(tb.t.counters().reused_early.get(), 0u);
  // More ended flows held than spare entries (a full table evicting at
  // each new flow, nothing settled): new flows take the oldest held
  // entries early, their hooks run then, in order; counted.
  std::set<uint32_t> ids;
  for (uint32_t i = 0; i < 200; ++i) {
    t += kSec;
    ids.insert(tb.pkt(ip4(100 + i, 9, 17, 1, 2), t));
    ASSERT_LE(tb.t.size(), 8u);
  }
  EXPECT_EQ(tb.t.counters().evicted.get(), 192u);
  EXPECT_GT(tb.t.counters().reused_early.get(), 0u);
  EXPECT_LT(tb.gone.size(), 3u + 192u);                  // some still held
  EXPECT_LE(ids.size(), size_t(tb.t.capacity()) + 64u);  // entries reused, never grown
  tb.t.flush();                                          // at a stop: every held release runs, in order
  ASSERT_EQ(tb.gone.size(), 3u + 192u + 8u);
  for (size_t i = 3; i < 3u + 192u; ++i) EXPECT_EQ(tb.gone[i].second, flow::Release::Evicted) << i;
  for (size_t i = 3u + 192u; i < tb.gone.size(); ++i) EXPECT_EQ(tb.gone[i].second, flow::Release::End) << i;
}

TEST(FlowTable, MemoryCapLowersCapacity) {
  flow::FlowTable t;
  uint32_t off = t.reserve(40);
  EXPECT_EQ(off, 0u);
  EXPECT_EQ(t.reserve(4, 4), 40u);
  flow::Config c;
  c.capacity = 1000000;
  c.memory = 1000 * flow::FlowTable::bytes_per_flow(48);
  t.init(c);
  EXPECT_EQ(t.capacity(), 800u) << "and 200 spare entries";
  EXPECT_LE(t.memory_bytes(), c.memory + 4096 * 64 + 16 * 1024);
  flow::FlowTable tiny;
  c.memory = 10;
  EXPECT_THROW(tiny.init(c), std::invalid_argument);
}

TEST(FlowTable, FragmentsFollowTheirFirstFragment) {
  Table tb(16);
  uint32_t id = tb.pkt(ip4(1, 2, 17, 7000, 7001, 0, 100, 0x2000, 42), kSec);
  EXPECT_NE(id, 0u);
  uint8_t dir = 9;
  EXPECT_EQ(tb.pkt(ip4(1, 2, 17, 0, 0, 0, 100, 0x2000 | 14, 42), kSec, &dir), id);
  EXPECT_EQ(dir, 0);
  EXPECT_EQ(tb.pkt(ip4(1, 2, 17, 0, 0, 0, 100, 28, 42), kSec), id);
  EXPECT_EQ(tb.t.flow(id).pkts[0], 3u);
  // another datagram's later fragment, first fragment never seen
  EXPECT_EQ(tb.pkt(ip4(1, 2, 17, 0, 0, 0, 100, 28, 43), kSec), 0u);
  EXPECT_EQ(tb.t.counters().frag_orphans.get(), 1u);
  // after the flow is gone, its datagram's fragments no longer map to it
  tb.t.flush();
  EXPECT_EQ(tb.pkt(ip4(1, 2, 17, 0, 0, 0, 100, 28, 42), kSec), 0u);
}

// Random inserts, packets and expiries against a brute-force model: the
// table holds exactly the model's flows, with the same packet counts.
TEST(FlowTable, AgreesWithABruteForceModel) {
  flow::Config c = exact();
  for (auto& ns : c.timeouts.ns) ns = 5 * kSec;
  Table tb(512, c);
  struct M {
    uint64_t last = 0, pkts = 0;
  };
  std::map<std::tuple<uint32_t, uint32_t, uint16_t, uint16_t>, M> model;
  std::mt19937 rng(11);
  uint64_t now = kSec;
  for (int i = 0; i < 200000; ++i) {
    now += rng() % 40000000;  // up to 40 ms: at most 250 packets (so flows) in a timeout
    uint32_t a = 1 + rng() % 40, b = 100 + rng() % 10;
    uint16_t pa = uint16_t(rng() % 8), pb = 53;
    bool rev = rng() & 1;
    auto key = std::make_tuple(a, b, pa, pb);
    tb.t.expire(now);
    for (auto it = model.begin(); it != model.end();)
      it = it->second.last + 5 * kSec <= now ? model.erase(it) : std::next(it);
    uint32_t id = rev ? tb.pkt(ip4(b, a, 17, pb, pa), now) : tb.pkt(ip4(a, b, 17, pa, pb), now);
    ASSERT_NE(id, 0u);
    auto& m = model[key];
    m.last = now;
    ++m.pkts;
    ASSERT_EQ(tb.t.flow(id).pkts[0] + tb.t.flow(id).pkts[1], m.pkts) << "packet " << i;
    if (i % 1000 == 0) {
      ASSERT_EQ(tb.t.size(), model.size());
      for (auto& [k, v] : model) {
        auto [ka, kb, kpa, kpb] = k;
        ASSERT_NE(tb.t.find(parse(ip4(ka, kb, 17, kpa, kpb)).key), 0u);
      }
    }
  }
  EXPECT_EQ(tb.t.counters().evicted.get(), 0u);
}

struct Collect : flow::StreamSink {
  std::string out[2];
  std::vector<std::pair<uint64_t, uint64_t>> gaps;
  int ends = 0;
  void stream_data(uint32_t, uint8_t dir, uint64_t off, const uint8_t* d, uint32_t n) override {
    EXPECT_EQ(off, out[dir].size());
    out[dir].append(reinterpret_cast<const char*>(d), n);
  }
  void stream_gap(uint32_t, uint8_t dir, uint64_t off, uint64_t len) override {
    gaps.push_back({off, len});
    out[dir].append(len, '.');
  }
  void stream_end(uint32_t, uint8_t) override { ++ends; }
  std::vector<std::pair<uint64_t, std::string>> overwrites;  // (direction 0's)
  void stream_overwrite(uint32_t, uint8_t dir, uint64_t off, const uint8_t* d, uint32_t n) override {
    if (dir == 0) overwrites.push_back({off, std::string(reinterpret_cast<const char*>(d), n)});
  }
};

void seg(flow::Reassembler& r, flow::Stream& s, uint8_t dir, uint32_t seq, uint8_t flags, const std::string& d) {
  r.segment(s, 1, dir, seq, flags, reinterpret_cast<const uint8_t*>(d.data()), uint32_t(d.size()));
}

// A reassembler under policy p, its sink and one connection's stream.
struct Rig {
  flow::Reassembler r;
  Collect c;
  flow::Stream s;
  explicit Rig(flow::Overlap p, uint32_t keep = 0) : r(config(p, keep)) { r.set_sink(&c); }
  static flow::StreamConfig config(flow::Overlap p, uint32_t keep) {
    flow::StreamConfig cfg;
    cfg.policy = p;
    cfg.keep = keep;
    return cfg;
  }
};

TEST(Reassembly, InOrderOutOfOrderAndWrapAround) {
  flow::Reassembler r;
  Collect c;
  r.set_sink(&c);
  flow::Stream s;
  uint32_t isn = 0xfffffff0u;  // the sequence numbers wrap inside the stream
  seg(r, s, 0, isn, k::kTcpSyn, "");
  seg(r, s, 0, isn + 1, k::kTcpAck, "0123456789");
  seg(r, s, 0, isn + 21, k::kTcpAck, "KLMNOPQRST");  // ahead of a hole, past the wrap
  EXPECT_EQ(c.out[0], "0123456789");
  EXPECT_EQ(r.counters().buffered.get(), 10u);
  seg(r, s, 0, isn + 11, k::kTcpAck, "ABCDEFGHIJ");  // fills it
  EXPECT_EQ(c.out[0], "0123456789ABCDEFGHIJKLMNOPQRST");
  EXPECT_EQ(r.counters().buffered.get(), 0u);
  EXPECT_EQ(r.counters().out_of_order.get(), 1u);
  seg(r, s, 0, isn + 6, k::kTcpAck, "xxxxx");  // old data: dropped, counted
  EXPECT_EQ(r.counters().retransmitted.get(), 1u);
  seg(r, s, 0, isn + 31, k::kTcpFin | k::kTcpAck, "!");
  EXPECT_EQ(c.ends, 1);
  seg(r, s, 0, isn + 32, k::kTcpAck, "late");
  EXPECT_EQ(r.counters().after_fin.get(), 1u);
  EXPECT_EQ(c.out[0], "0123456789ABCDEFGHIJKLMNOPQRST!");
}

TEST(Reassembly, OverlapPolicies) {
  for (auto policy : {flow::Overlap::First, flow::Overlap::Last}) {
    flow::StreamConfig cfg;
    cfg.policy = policy;
    flow::Reassembler r(cfg);
    Collect c;
    r.set_sink(&c);
    flow::Stream s;
    seg(r, s, 1, 100, k::kTcpSyn | k::kTcpAck, "");
    seg(r, s, 1, 106, k::kTcpAck, "bbbbbb");  // [5, 11)
    seg(r, s, 1, 103, k::kTcpAck, "cccccc");  // [2, 8): overlaps with other bytes
    seg(r, s, 1, 101, k::kTcpAck, "aa");      // [0, 2)
    EXPECT_EQ(c.out[1], policy == flow::Overlap::First ? "aacccbbbbbb" : "aaccccccbbb");
    EXPECT_EQ(r.counters().overlaps.get(), 1u);
    EXPECT_EQ(r.counters().overlap_differ.get(), 1u);
  }
}

// Target-based reassembly: a segment held at [4, 8) ("LLLL", behind a hole)
// and a later one ('S') in each of the eight ways two segments can overlap.
// Which policies give the later one the shared bytes, as Suricata's stream
// engine resolves them in IDS mode (stream-tcp-list.c, DoHandleDataOverlap),
// written out here by hand.
TEST(Reassembly, TargetBasedPoliciesResolveEachOverlapAsSuricata) {
  using O = flow::Overlap;
  const std::vector<O> all = {O::First,  O::Last, O::Bsd,   O::Linux,   O::OldLinux, O::Solaris,   O::Hpux10,
                              O::Hpux11, O::Irix, O::Macos, O::Windows, O::Vista,    O::Windows2k3};
  const std::vector<O> before = {O::Last, O::Bsd,   O::Linux,   O::OldLinux,  O::Hpux10,
                                 O::Irix, O::Macos, O::Windows, O::Windows2k3};  // starting before, ending within
  struct Case {
    const char* what;
    uint32_t lo, hi;
    std::vector<O> new_wins;
  } cases[] = {
      {"same start, ends within", 4, 6, {O::Last}},
      {"the same bytes", 4, 8, {O::Last, O::OldLinux, O::Solaris, O::Hpux11}},
      {"same start, ends after", 4, 10, {O::Last, O::Linux, O::OldLinux, O::Solaris, O::Hpux11}},
      {"starts before, ends within", 2, 6, before},
      {"starts before, ends after",
       2,
       10,
       {O::Last, O::Bsd, O::Linux, O::OldLinux, O::Hpux10, O::Irix, O::Macos, O::Windows, O::Windows2k3, O::Solaris,
        O::Hpux11}},
      {"starts before, same end",
       2,
       8,
       {O::Last, O::Bsd, O::Linux, O::OldLinux, O::Hpux10, O::Irix, O::Macos, O::Windows, O::Windows2k3, O::Solaris,
        O::Hpux11}},
      {"starts after, ends within", 5, 7, {O::Last}},
      {"starts after, same end", 5, 8, {O::Last}},
      {"starts after, ends after", 5, 10, {O::Last, O::Solaris, O::Hpux11}},
  };
  for (const Case& k : cases)
    for (O p : all) {
      SCOPED_TRACE(std::string(k.what) + ", " + flow::overlap_name(p));
      const bool wins = std::find(k.new_wins.begin(), k.new_wins.end(), p) != k.new_wins.end();
      EXPECT_EQ(flow::overlap_new_wins(p, k.lo, k.hi, 4, 8), wins);
      Rig g(p);
      auto& [r, c, s] = g;
      seg(r, s, 0, 100, k::kTcpSyn, "");
      seg(r, s, 0, 105, k::kTcpAck, "LLLL");
      seg(r, s, 0, 101 + k.lo, k::kTcpAck, std::string(k.hi - k.lo, 'S'));
      std::string want = std::string("0123").substr(0, std::min(k.lo, 4u));
      seg(r, s, 0, 101, k::kTcpAck, want);  // what is left of the hole: then all is delivered
      for (uint32_t at = uint32_t(want.size()); at < std::max(8u, k.hi); ++at) {
        bool in_l = at >= 4 && at < 8, in_s = at >= k.lo && at < k.hi;
        want += in_l && in_s ? (wins ? 'S' : 'L') : in_l ? 'L' : 'S';
      }
      EXPECT_EQ(c.out[0], want);
      EXPECT_TRUE(c.overwrites.empty());
    }
}

TEST(Reassembly, AByteTakesTheNewDataOnlyWhereEveryEarlierSegmentHoldingItGivesWay) {
  Rig g(flow::Overlap::Bsd);
  auto& [r, c, s] = g;
  seg(r, s, 0, 0, k::kTcpSyn, "");
  seg(r, s, 0, 5, k::kTcpAck, "AAAA");  // [4, 8)
  seg(r, s, 0, 3, k::kTcpAck, "BBBB");  // [2, 6): starts before A, wins [4, 6)
  // [2, 8): starts with B (bsd: B stays) and before A (bsd: A gives way):
  // [2, 6) is held by B, so only [6, 8) changes
  seg(r, s, 0, 3, k::kTcpAck, "CCCCCC");
  seg(r, s, 0, 1, k::kTcpAck, "zz");
  EXPECT_EQ(c.out[0], "zzBBBBCC");
}

// Data delivered already is not delivered again, but the sink hears of the
// bytes a retransmission wins by the policy (an IDS still holding them
// uninspected takes them, as Suricata's stream buffer does).
TEST(Reassembly, RetransmissionsWinDeliveredBytesForTheSinkByPolicy) {
  for (auto p : {flow::Overlap::Windows, flow::Overlap::OldLinux, flow::Overlap::Linux, flow::Overlap::First,
                 flow::Overlap::Last}) {
    SCOPED_TRACE(flow::overlap_name(p));
    Rig g(p);
    auto& [r, c, s] = g;
    seg(r, s, 0, 0, k::kTcpSyn, "");
    seg(r, s, 0, 1, k::kTcpAck, "GOOD");
    seg(r, s, 0, 1, k::kTcpAck, "EVIL");    // the same bytes: old-linux (and last) take them
    seg(r, s, 0, 1, k::kTcpAck, "ANEW++");  // the same start, longer: linux too
    EXPECT_EQ(c.out[0], "GOOD++");
    std::vector<std::pair<uint64_t, std::string>> want;
    if (p == flow::Overlap::OldLinux || p == flow::Overlap::Last) want.push_back({0, "EVIL"});
    if (p == flow::Overlap::OldLinux || p == flow::Overlap::Last || p == flow::Overlap::Linux)
      want.push_back({0, "ANEW"});
    EXPECT_EQ(c.overwrites, want);
    EXPECT_EQ(r.counters().overwritten.get(), 4 * want.size());
    EXPECT_EQ(r.counters().retransmitted.get(), 2u);
  }
  // a target-based policy remembers the last 16 segments delivered: older
  // bytes cannot be told apart, and stay
  Rig g(flow::Overlap::OldLinux);
  auto& [r, c, s] = g;
  seg(r, s, 0, 0, k::kTcpSyn, "");
  for (uint32_t i = 0; i < 40; ++i) seg(r, s, 0, 1 + i, k::kTcpAck, std::string(1, char('a' + i % 26)));
  seg(r, s, 0, 1, k::kTcpAck, "X");        // the first: forgotten
  seg(r, s, 0, 1 + 39, k::kTcpAck, "Y");   // the last: taken
  seg(r, s, 0, 1 + 20, k::kTcpAck, "ZZ");  // [20, 22): no segment remembered holds it ([24, 40) are)
  EXPECT_EQ(c.overwrites, (std::vector<std::pair<uint64_t, std::string>>{{39, "Y"}}));
  ASSERT_TRUE(s.d[0].x);
  EXPECT_EQ(s.d[0].x->nrecent, flow::Reassembler::kKeptSegments);
  EXPECT_TRUE(s.d[0].x->held.empty());
}

// An inline IPS's normalization: a segment's bytes the stream already has
// (held, or delivered and kept until acknowledged) become the stream's.
// held_run: the held data that runs without a hole up to an offset, bounded.
TEST(Reassembly, HeldRunIsTheHeldDataBeforeAnOffsetUpToAHole) {
  Rig g(flow::Overlap::First);
  seg(g.r, g.s, 0, 99, k::kTcpSyn, "");
  seg(g.r, g.s, 0, 100, k::kTcpAck, "0123");  // delivered: offsets 0-3
  seg(g.r, g.s, 0, 108, k::kTcpAck, "89");    // held: 8-9, after a hole at 4-7
  seg(g.r, g.s, 0, 110, k::kTcpAck, "ABCD");  // held: 10-13
  seg(g.r, g.s, 0, 120, k::kTcpAck, "KLM");   // held: 20-22, after a hole
  const flow::DirStream& d = g.s.d[0];
  std::string out;
  EXPECT_EQ(flow::Reassembler::held_run(d, 14, 100, out), 8u);
  EXPECT_EQ(out, "89ABCD");
  EXPECT_EQ(flow::Reassembler::held_run(d, 12, 100, out), 8u);
  EXPECT_EQ(out, "89AB") << "up to the offset, within a piece";
  EXPECT_EQ(flow::Reassembler::held_run(d, 14, 3, out), 11u);
  EXPECT_EQ(out, "BCD") << "at most max bytes";
  EXPECT_EQ(flow::Reassembler::held_run(d, 23, 100, out), 20u);
  EXPECT_EQ(out, "KLM") << "not across the hole before it";
  EXPECT_EQ(flow::Reassembler::held_run(d, 16, 100, out), 16u);
  EXPECT_TRUE(out.empty()) << "no held byte just before the offset";
  EXPECT_EQ(flow::Reassembler::held_run(d, 3, 100, out), 3u);
  EXPECT_TRUE(out.empty()) << "delivered data is not held";
}

TEST(Reassembly, NormalizeGivesASegmentTheBytesTheStreamHas) {
  Rig g(flow::Overlap::First, 8);
  auto& [r, c, s] = g;
  auto norm = [&r = r, &s = s](uint32_t seq, std::string d) {  // (bindings named: clang captures no binding)
    r.normalize(s, 0, seq, k::kTcpAck, reinterpret_cast<uint8_t*>(d.data()), uint32_t(d.size()));
    return d;
  };
  seg(r, s, 0, 0, k::kTcpSyn, "");
  EXPECT_EQ(norm(1, "ABCD"), "ABCD");  // nothing there yet
  seg(r, s, 0, 1, k::kTcpAck, "GOOD");
  seg(r, s, 0, 9, k::kTcpAck, "HELD");  // [8, 12), behind a hole
  EXPECT_EQ(norm(1, "EVIL"), "GOOD");
  EXPECT_EQ(norm(3, "xxxxxxxxxxxx"), "ODxxxxHELDxx");  // delivered, the hole, held, past it
  EXPECT_EQ(r.counters().normalized.get(), 2u);
  EXPECT_EQ(r.counters().normalized_bytes.get(), 4u + 2u + 4u);
  std::string d = norm(1, "EVIL");
  seg(r, s, 0, 1, k::kTcpAck, d);  // the same bytes: nothing differs, nothing overwritten
  EXPECT_EQ(r.counters().overlap_differ.get(), 0u);
  r.acknowledged(s, 0, 2);  // the receiver has [0, 2): those bytes are not kept
  EXPECT_EQ(norm(1, "EVIL"), "EVOD");
  seg(r, s, 0, 5, k::kTcpAck, "abcdefghijkl");  // fills the hole up to [8, 12) (held: stays) and on
  EXPECT_EQ(c.out[0], "GOODabcdHELDijkl");
  EXPECT_EQ(norm(13, "zzzz"), "ijkl");
  EXPECT_EQ(norm(1, "zz"), "zz");              // (acknowledged)
  seg(r, s, 0, 17, k::kTcpAck, "0123456789");  // kept: at most twice the cap, then the cap
  EXPECT_EQ(norm(9, "zzzz"), "zzzz");
  EXPECT_EQ(norm(19, "zzzz"), "2345");
  flow::Reassembler plain;  // (keep 0: nothing kept)
  flow::Stream t;
  plain.segment(t, 1, 0, 0, k::kTcpSyn, nullptr, 0);
  plain.segment(t, 1, 0, 1, k::kTcpAck, reinterpret_cast<const uint8_t*>("GOOD"), 4);
  std::string e = "EVIL";
  EXPECT_EQ(plain.normalize(t, 0, 1, k::kTcpAck, reinterpret_cast<uint8_t*>(e.data()), 4), 0u);
}

// The segments a target-based policy remembers are bounded by the bytes
// held (16, and one per 64 bytes): past that they are counted, and the
// bytes they cover stay as they are.
TEST(Reassembly, RememberedSegmentsAreBoundedByTheBytesHeld) {
  Rig g(flow::Overlap::Bsd);
  auto& [r, c, s] = g;
  seg(r, s, 0, 0, k::kTcpSyn, "");
  seg(r, s, 0, 2, k::kTcpAck, std::string(100, 'h'));  // [1, 101) held behind [0, 1)
  for (uint32_t i = 0; i < 2000; ++i)                  // distinct segments over it
    seg(r, s, 0, 2 + i % 50, k::kTcpAck, std::string(1 + i / 50, 'x'));
  ASSERT_TRUE(s.d[0].x);
  EXPECT_LE(s.d[0].x->held.size(), 16u + 100 / 64);
  EXPECT_GT(r.counters().untracked.get(), 1900u);
  EXPECT_EQ(s.d[0].held, 100u);
  seg(r, s, 0, 1, k::kTcpAck, "0");
  EXPECT_EQ(c.out[0], "0" + std::string(100, 'h'));  // (none starts before it: bsd keeps it)
  EXPECT_TRUE(s.d[0].x->held.empty());               // (delivered: the last ones went to the ring)
}

TEST(Reassembly, HostPoliciesTakeTheLongestPrefix) {
  flow::HostPolicies h;
  std::string err;
  flow::Overlap p;
  ASSERT_TRUE(flow::parse_overlap("windows", p));
  ASSERT_TRUE(h.add("0.0.0.0/0", p, err)) << err;
  ASSERT_TRUE(flow::parse_overlap("old-linux", p));
  ASSERT_TRUE(h.add("10.1.0.0/16", p, err)) << err;
  ASSERT_TRUE(flow::parse_overlap("bsd-right", p));  // (Suricata's name for bsd)
  EXPECT_EQ(p, flow::Overlap::Bsd);
  ASSERT_TRUE(h.add("10.1.2.3", p, err)) << err;
  ASSERT_TRUE(flow::parse_overlap("old-solaris", p));
  ASSERT_TRUE(h.add("2001:db8::/32", p, err)) << err;
  auto v4 = [&](const char* a) {
    uint8_t b[16] = {};
    inet_pton(AF_INET, a, b);
    return h.lookup(false, b);
  };
  auto v6 = [&](const char* a) {
    uint8_t b[16] = {};
    inet_pton(AF_INET6, a, b);
    return h.lookup(true, b);
  };
  EXPECT_EQ(v4("192.0.2.1"), flow::Overlap::Windows);
  EXPECT_EQ(v4("10.1.9.9"), flow::Overlap::OldLinux);
  EXPECT_EQ(v4("10.1.2.3"), flow::Overlap::Bsd);
  EXPECT_EQ(v4("10.2.0.1"), flow::Overlap::Windows);
  EXPECT_EQ(v6("2001:db8:1::1"), flow::Overlap::Solaris);
  EXPECT_EQ(v6("2001:db9::1"), flow::Overlap::Default);  // (no IPv6 range holds it)
  EXPECT_FALSE(h.add("10.0.0.0/33", p, err));
  EXPECT_NE(err.find("longer"), std::string::npos);
  EXPECT_FALSE(h.add("host.example", p, err));
  EXPECT_FALSE(h.add("10.0.0.0/x", p, err));
  EXPECT_FALSE(flow::parse_overlap("freebsd", p));
}

TEST(Reassembly, CapsGiveUpTheOldestHoleAndTheStreamGoesOn) {
  flow::StreamConfig cfg;
  cfg.dir_cap = 8;
  flow::Reassembler r(cfg);
  Collect c;
  r.set_sink(&c);
  flow::Stream s;
  seg(r, s, 0, 0, k::kTcpSyn, "");
  seg(r, s, 0, 1, k::kTcpAck, "ab");
  seg(r, s, 0, 5, k::kTcpAck, "efgh");  // hole [2, 4)
  seg(r, s, 0, 9, k::kTcpAck, "ijkl");  // 8 held: at the cap
  EXPECT_EQ(c.out[0], "ab");
  seg(r, s, 0, 14, k::kTcpAck, "nop");  // no room: the hole goes, the rest is delivered
  EXPECT_EQ(c.out[0], "ab..efghijkl");
  ASSERT_EQ(c.gaps.size(), 1u);
  EXPECT_EQ(c.gaps[0], std::make_pair(uint64_t(2), uint64_t(2)));
  EXPECT_EQ(r.counters().buffer_full.get(), 1u);
  seg(r, s, 0, 13, k::kTcpAck, "m");
  EXPECT_EQ(c.out[0], "ab..efghijklmnop");
  EXPECT_LE(r.counters().buffered_peak.get(), 8u);
}

// Suricata's streaming buffer regions: data held more than the region gap
// (256 KiB) beyond the stream's next bytes, or beyond other held data,
// takes a region of its own; the most at once stays the direction's.
TEST(Reassembly, MaxRegionsCountsHeldDataFarAhead) {
  flow::Reassembler r;
  Collect c;
  r.set_sink(&c);
  flow::Stream s;
  seg(r, s, 0, 0, k::kTcpSyn, "");
  seg(r, s, 0, 1, k::kTcpAck, "ab");
  seg(r, s, 0, 10, k::kTcpAck, "near");  // held, within the gap: the stream's region
  EXPECT_EQ(s.d[0].max_regions, 1u);
  seg(r, s, 0, 1 + 300 * 1024, k::kTcpAck, "far");  // 300 KiB ahead: a second region
  EXPECT_EQ(s.d[0].max_regions, 2u);
  seg(r, s, 0, 1 + 400 * 1024, k::kTcpAck, "close to it");  // within the gap of that one
  EXPECT_EQ(s.d[0].max_regions, 2u);
  seg(r, s, 0, 1 + 700 * 1024, k::kTcpAck, "further");  // a third
  EXPECT_EQ(s.d[0].max_regions, 3u);
  r.finish(s, 1);
  EXPECT_EQ(s.d[0].max_regions, 3u) << "the most at once";
  EXPECT_EQ(s.d[1].max_regions, 1u);
}

TEST(Reassembly, RstEndsBothDirectionsAndMidstreamIsAnOption) {
  flow::Reassembler r;
  Collect c;
  r.set_sink(&c);
  flow::Stream s;
  seg(r, s, 0, 500, k::kTcpAck, "mid");  // no SYN: picked up here
  seg(r, s, 1, 900, k::kTcpAck, "stream");
  seg(r, s, 0, 510, k::kTcpAck, "later");  // a hole before it
  seg(r, s, 1, 906, k::kTcpRst, "");
  EXPECT_EQ(c.out[0], "mid.......later");  // the RST ends it: the hole is a gap
  EXPECT_EQ(c.out[1], "stream");
  EXPECT_EQ(c.ends, 2);
  seg(r, s, 0, 515, k::kTcpAck, "after");
  EXPECT_EQ(r.counters().after_rst.get(), 1u);
  flow::StreamConfig strict;
  strict.midstream = false;
  flow::Reassembler r2(strict);
  flow::Stream s2;
  r2.segment(s2, 1, 0, 1, k::kTcpAck, reinterpret_cast<const uint8_t*>("x"), 1);
  EXPECT_EQ(r2.counters().no_handshake.get(), 1u);
  EXPECT_EQ(r2.counters().delivered.get(), 0u);
}

TEST(FlowElements, ManagerAndLogInAGraph) {
  std::filesystem::path dir = test::tmpdir();
  std::string log = (dir / "conn.log").string();
  // 3 UDP flows of 2 packets from a generator (no replies), then the stop
  auto r = test::run(
      "FastUDPFlows(LENGTH 80, FLOWS 3, LIMIT 6, BURST 2, STOP true) -> m :: FlowIPManager(CAPACITY 16)"
      " -> FlowLog(" +
      log + ", FORMAT json) -> c :: Counter -> Discard;");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 6u);
  EXPECT_EQ(r->n("m.inserts"), 3u);
  EXPECT_EQ(r->n("m.lookups"), 6u);
  EXPECT_EQ(r->n("m.count"), 0u);  // every flow ended at the stop
  test::finish(*r);
  std::ifstream in(log);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    EXPECT_NE(line.find("\"proto\":\"udp\""), std::string::npos) << line;
    EXPECT_NE(line.find("\"orig_pkts\":2"), std::string::npos) << line;
    EXPECT_NE(line.find("\"conn_state\":\"S0\""), std::string::npos) << line;
  }
  EXPECT_EQ(n, 3);
  std::filesystem::remove(log);
}

// Reading the flow list while the workers run: each worker's table is
// listed on its own thread (the other worker's read goes through its
// mailbox), so the list is whole and the read races with nothing (TSan).
TEST(FlowElements, FlowListReadWhileRunningOnTwoWorkers) {
  std::string out = test::tmpdir() + "/flows.txt";
  auto r = test::run(
      "FastUDPFlows(RATE 4000, LIMIT 2000, FLOWS 6, STOP true) -> m :: FlowIPManager -> Discard;"
      "Script(wait 0.2s, print >" +
          out + " m.flows)",
      2);
  ASSERT_TRUE(r->ok) << r->errors;
  std::ifstream in(out);
  std::string line;
  int n = 0;
  while (std::getline(in, line))
    if (line.rfind("udp ", 0) == 0) ++n;
  EXPECT_EQ(n, 6);
  std::filesystem::remove(out);
  test::finish(*r);
}

// A capture whose time goes back: a packet a worker never sees moves the
// trace's clock (FromDump stamps each packet with the latest time read, every
// worker's records), so each worker's flow layer ends and starts the flows
// one worker's would. Here one packet of one flow comes 1000 s late, then
// every flow's next packet comes with the earlier time: one worker finds
// every flow past the UDP timeout; so must two, whichever took that packet.
TEST(FlowElements, SeveralWorkersKeepOneWorkersClockWhenTheTraceGoesBack) {
  std::string dir = test::tmpdir();
  std::string pcap = dir + "/back.pcap";
  {
    io::PcapWriter w;
    std::string err;
    ASSERT_TRUE(w.open(pcap, 1, 65535, true, err)) << err;
    auto put = [&](uint16_t sport, uint64_t t) {
      std::vector<uint8_t> f(14, 0);
      f[12] = 0x08;
      auto ip = ip4(0x0a000001, 0x0a000002, 17, sport, 53, 0, 8);
      f.insert(f.end(), ip.begin(), ip.end());
      w.write(f.data(), uint32_t(f.size()), uint32_t(f.size()), t);
    };
    constexpr uint16_t kFlows = 40;
    for (uint16_t i = 0; i < kFlows; ++i) put(uint16_t(1000 + i), 1 * kSec + i);
    put(1000, 1000 * kSec);  // the trace's time jumps on; one worker sees it
    for (uint16_t i = 0; i < kFlows; ++i) put(uint16_t(1000 + i), 2 * kSec + i);
    ASSERT_TRUE(w.close());
  }
  auto flows = [&](int threads, uint64_t& inserts, uint64_t& timeouts) {
    auto r = test::run("FromDump(" + pcap + ", STOP true) -> m :: FlowIPManager(CAPACITY 1024) -> Discard;", threads);
    EXPECT_TRUE(r->ok) << r->errors;
    inserts = r->n("m.inserts");
    timeouts = r->n("m.expired");
    test::finish(*r);
  };
  uint64_t i1 = 0, t1 = 0, i2 = 0, t2 = 0;
  flows(1, i1, t1);
  // one worker: the 40 flows, flow 1000 again at 1000 s, then the 39 others again
  EXPECT_EQ(i1, 80u);
  EXPECT_EQ(t1, 40u);
  flows(2, i2, t2);
  EXPECT_EQ(i2, i1);
  EXPECT_EQ(t2, t1);
  std::filesystem::remove(pcap);
}

TEST(FlowElements, StatefulElementNeedsAManager) {
  auto r = test::run("FastUDPFlows(LIMIT 1, STOP true) -> FlowLog(/dev/null) -> Discard;");
  EXPECT_FALSE(r->ok);
  EXPECT_NE(r->errors.find("needs a FlowIPManager upstream"), std::string::npos) << r->errors;
}

}  // namespace
}  // namespace shoal

namespace shoal {
namespace {

#if defined(SHOAL_HAVE_PCRE2)
// Every l7-filter pattern, streamed over chunks as L7Classifier feeds it,
// against PCRE2 (caseless, dotall, '$' at the very end) run on each prefix
// of the NUL-stripped data: the same answer after every chunk.
TEST(L7, StreamingDfasAgreeWithPcre2OnEveryPrefix) {
  std::string dir = std::string(SHOAL_SOURCE_DIR) + "/../shared/data/l7/protocols";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no l7-filter patterns at " << dir;
  flow::L7Set set;
  std::string err;
  std::vector<std::string> skipped;
  ASSERT_TRUE(set.load(dir, {}, err, &skipped)) << err;
  ASSERT_GT(set.size(), 100u);
  std::vector<std::string> inputs = {
      "GET / HTTP/1.1\r\nHost: a\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
      "SSH-2.0-OpenSSH_9.2p1\r\n",
      "220 mail.example.com ESMTP Postfix\r\n",
      std::string("\x13"
                  "BitTorrent protocol") +
          std::string(8, '\0') + "abcdefghij0123456789",
      std::string("\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00\x16\x03\x03\x00\x02\x02\x00", 17),
      "* OK IMAP4rev1 ready\r\n",
      "+OK POP3 ready\r\n"};
  std::mt19937 rng(9);
  for (int i = 0; i < 40; ++i) {
    std::string s(rng() % 300, '\0');
    for (auto& c : s) c = char(rng() % 4 ? rng() % 128 : rng());
    inputs.push_back(s);
  }
  int checks = 0;
  for (size_t pi = 0; pi < set.size(); ++pi) {
    const auto& pat = set.at(pi);
    int code_err = 0;
    PCRE2_SIZE off = 0;
    pcre2_code* re = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pat.regex.data()), pat.regex.size(),
                                   PCRE2_CASELESS | PCRE2_DOTALL | PCRE2_DOLLAR_ENDONLY, &code_err, &off, nullptr);
    if (!re) continue;  // POSIX syntax PCRE2 reads otherwise: nothing to compare with
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(re, nullptr);
    for (auto& in : inputs) {
      std::vector<uint32_t> st(set.state_words());
      set.start(st.data());
      std::string prefix;
      for (size_t at = 0; at < in.size();) {
        size_t n = std::min<size_t>(in.size() - at, 1 + rng() % 40);
        std::string chunk = in.substr(at, n);
        at += n;
        set.feed(st.data(), reinterpret_cast<const uint8_t*>(chunk.data()), uint32_t(chunk.size()));
        for (char c : chunk)
          if (c) prefix += c;
        k::RegexView v = pat.dfa.view();
        bool dfa = st[pi] == v.accept || v.accept_end[st[pi]];
        bool pcre = pcre2_match(re, reinterpret_cast<PCRE2_SPTR>(prefix.data()), prefix.size(), 0, 0, md, nullptr) >= 0;
        ASSERT_EQ(dfa, pcre) << pat.name << " /" << pat.regex << "/ on a prefix of " << prefix.size() << " bytes";
        ++checks;
      }
    }
    pcre2_match_data_free(md);
    pcre2_code_free(re);
  }
  EXPECT_GT(checks, 10000);
}
#endif

TEST(L7, PatternFilesAndPriorities) {
  std::string name, regex, err;
  ASSERT_TRUE(
      flow::parse_l7_pattern("# comment\n\nssh\n# more\n^ssh-[12]\\.[0-9]\nuserspace pattern=x\n", name, regex, err));
  EXPECT_EQ(name, "ssh");
  EXPECT_EQ(regex, "^ssh-[12]\\.[0-9]");
  EXPECT_FALSE(flow::parse_l7_pattern("# only comments\n", name, regex, err));
  std::string dir = std::string(SHOAL_SOURCE_DIR) + "/../shared/data/l7/protocols";
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no l7-filter patterns at " << dir;
  flow::L7Set named;
  ASSERT_TRUE(named.load(dir, {"ssh", "http"}, err)) << err;
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named.at(0).name, "ssh");  // the order given is the priority
  flow::L7Set bad;
  EXPECT_FALSE(bad.load(dir, {"no-such-protocol"}, err));
  EXPECT_NE(err.find("no-such-protocol"), std::string::npos);
  flow::L7Set all;
  ASSERT_TRUE(all.load(dir, {}, err)) << err;
  for (size_t i = 0; i < all.size(); ++i) {
    EXPECT_NE(all.at(i).name, "unknown");  // l7-filter's dummies are left out
    EXPECT_NE(all.at(i).name, "unset");
  }
  // streaming: a banner cut in two still matches, once the second half comes
  std::vector<uint32_t> st(named.state_words());
  named.start(st.data());
  EXPECT_EQ(named.feed(st.data(), reinterpret_cast<const uint8_t*>("SS"), 2), -1);
  EXPECT_EQ(named.feed(st.data(), reinterpret_cast<const uint8_t*>("H-2.0-x"), 7), 0);
}

}  // namespace
}  // namespace shoal

#include "shoal/flow/devtable.hh"
#include "shoal/io/traffic.hh"
#include "shoal/kernels/steps/flow_track.hh"

namespace shoal {
namespace {

// Frames of UDP, TCP and ICMP flows, IPv4 and IPv6, some cut short, some
// TCP ones SYN-ACKs, and a reply for every third (addresses and ports
// swapped).
void device_table_frames(std::vector<uint8_t>& frames, std::vector<uint32_t>& off, std::vector<uint32_t>& len) {
  for (int v6 = 0; v6 < 2; ++v6) {
    io::TrafficSpec s;
    s.flows = 700;
    s.ipv6 = v6;
    s.proto = io::Proto::MIX;
    io::TrafficGen g(s);
    for (uint64_t i = 0; i < 6000; ++i) {
      off.push_back(uint32_t(frames.size()));
      uint32_t l = g.length_of(i);
      frames.resize(frames.size() + l);
      g.build(i, frames.data() + off.back());
      len.push_back(i % 101 == 0 ? l % 30 : l);  // some cut short
      // some TCP packets are SYN-ACKs: a flow they open is its responder's
      uint32_t ipl = 0;
      uint8_t* ip = const_cast<uint8_t*>(k::frame_ip(frames.data() + off.back(), len.back(), ipl));
      if (ip && i % 7 == 0) {
        bool v4 = (ip[0] >> 4) == 4;
        uint32_t l4 = v4 ? uint32_t(ip[0] & 15) * 4 : 40;
        if (ip[v4 ? 9 : 6] == 6 && l4 + 14 <= ipl) ip[l4 + 13] = k::kTcpSyn | k::kTcpAck;
      }
    }
  }
  // replies: each frame again with the addresses and ports swapped
  size_t n0 = off.size();
  for (size_t i = 0; i < n0; i += 3) {
    std::vector<uint8_t> f(frames.begin() + off[i], frames.begin() + off[i] + len[i]);
    uint32_t ipl = 0;
    const uint8_t* ip = k::frame_ip(f.data(), uint32_t(f.size()), ipl);
    if (!ip || ipl < 40) continue;
    uint8_t* w = f.data() + (ip - f.data());
    bool v4 = (w[0] >> 4) == 4;
    uint32_t a = v4 ? 12 : 8, n = v4 ? 4 : 16, l4 = v4 ? uint32_t(w[0] & 15) * 4 : 40;
    for (uint32_t b = 0; b < n; ++b) std::swap(w[a + b], w[a + n + b]);
    if (l4 + 4 <= ipl && (w[v4 ? 9 : 6] == 6 || w[v4 ? 9 : 6] == 17))
      for (int b = 0; b < 2; ++b) std::swap(w[l4 + b], w[l4 + 2 + b]);
    off.push_back(uint32_t(frames.size()));
    len.push_back(uint32_t(f.size()));
    frames.insert(frames.end(), f.begin(), f.end());
  }
}

// The device flow table (host backend here; CUDA under bench/gpu) against
// the CPU table on the same frames: the same flows, originators and
// per-direction counters, and every packet's direction the same. The
// device must have done the work (its operations counted).
TEST(DeviceFlowTable, MatchesTheCpuTable) {
  std::vector<uint8_t> frames;
  std::vector<uint32_t> off, len;
  device_table_frames(frames, off, len);
  // CPU reference, packet by packet
  flow::FlowTable cpu;
  flow::Config c;
  c.capacity = 1 << 16;
  cpu.init(c);
  std::vector<uint8_t> cdirs(off.size());
  for (size_t i = 0; i < off.size(); ++i) {
    uint32_t ipl = 0;
    const uint8_t* ip = k::frame_ip(frames.data() + off[i], len[i], ipl);
    k::ParsedKey pk;
    if (ip) k::parse_conn_key(ip, ipl, pk);
    if (pk.icmp_error || pk.kind == k::KeyKind::Frag) pk.kind = k::KeyKind::NotIP;  // the device leaves these out
    cpu.track(pk, ipl, 1, cdirs[i]);
  }
  auto d = test::open_test_device();
  ASSERT_TRUE(d);
  std::string err;
  flow::DeviceFlowTable gpu;
  ASSERT_TRUE(gpu.init(d, 1 << 16, err)) << err;
  std::vector<uint32_t> ids;
  std::vector<uint8_t> dirs;
  uint64_t ops0 = d->operations();
  for (size_t i = 0; i < off.size(); i += 2048) {  // batches; offsets made relative to the batch's frames
    uint32_t n = uint32_t(std::min<size_t>(2048, off.size() - i));
    std::vector<uint8_t> bf;
    std::vector<uint32_t> bo, bl;
    for (uint32_t j = 0; j < n; ++j) {
      bo.push_back(uint32_t(bf.size()));
      bl.push_back(len[i + j]);
      bf.insert(bf.end(), frames.begin() + off[i + j], frames.begin() + off[i + j] + len[i + j]);
    }
    ASSERT_TRUE(gpu.track(bf.data(), bf.size(), bo.data(), bl.data(), n, ids, dirs, err)) << err;
    for (uint32_t j = 0; j < n; ++j)
      if (ids[j]) {
        ASSERT_EQ(dirs[j], cdirs[i + j]) << "packet " << i + j;
      }
  }
  EXPECT_GT(d->operations(), ops0);
  EXPECT_GT(gpu.launches(), 0u);
  std::vector<flow::DeviceFlowTable::Entry> got;
  ASSERT_TRUE(gpu.contents(got, err)) << err;
  EXPECT_EQ(got.size(), size_t(cpu.size()));
  EXPECT_GT(got.size(), 1000u);
  size_t replied = 0;
  for (auto& e : got) replied += e.pkts[1] != 0;
  EXPECT_GT(replied, 300u);  // directions are exercised
  for (auto& e : got) {
    uint32_t id = cpu.find(e.key);
    ASSERT_NE(id, 0u);
    const flow::Flow& f = cpu.flow(id);
    EXPECT_EQ(e.orig_dir, f.orig_dir);
    EXPECT_EQ(e.pkts[0], f.pkts[0]);
    EXPECT_EQ(e.pkts[1], f.pkts[1]);
    EXPECT_EQ(e.bytes[0], f.bytes[0]);
    EXPECT_EQ(e.bytes[1], f.bytes[1]);
  }
  EXPECT_EQ(gpu.full_packets(), 0u);
}

// Over simulated time, with TCP flags that open, close, reset and reopen
// connections and timeouts short enough that flows come and go: after every
// batch the device table (host backend here; CUDA under bench/gpu) holds the
// CPU table's flows with the same originators, TCP states, counters, times,
// timeout classes and flags, each packet's direction is the CPU's, and both
// ended the same number of flows by timeout and reopened the same
// connections (entries reused from the free list, the index rebuilt past its
// tombstones).
TEST(DeviceFlowTable, KeepsTheCpuTablesStatesTimesAndExpiry) {
  std::vector<uint8_t> frames;
  std::vector<uint32_t> off, len;
  device_table_frames(frames, off, len);
  std::mt19937 rng(19);
  // TCP flags for the segments: handshakes, data, FINs, resets
  static const uint8_t kFlags[] = {k::kTcpSyn,
                                   k::kTcpSyn | k::kTcpAck,
                                   k::kTcpAck,
                                   k::kTcpAck,
                                   k::kTcpAck,
                                   k::kTcpAck | 0x08,
                                   k::kTcpFin | k::kTcpAck,
                                   k::kTcpRst,
                                   k::kTcpRst | k::kTcpAck};
  for (size_t i = 0; i < off.size(); ++i) {
    uint32_t ipl = 0;
    uint8_t* ip = const_cast<uint8_t*>(k::frame_ip(frames.data() + off[i], len[i], ipl));
    if (!ip) continue;
    bool v4 = (ip[0] >> 4) == 4;
    uint32_t l4 = v4 ? uint32_t(ip[0] & 15) * 4 : 40;
    if (ip[v4 ? 9 : 6] == 6 && l4 + 14 <= ipl) ip[l4 + 13] = kFlags[rng() % std::size(kFlags)];
  }
  std::vector<uint32_t> order(off.size());
  for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  flow::Config c = test::short_timeouts(2048);
  const uint64_t ms = 1000000;
  flow::FlowTable cpu;
  cpu.init(c);
  auto d = test::open_test_device();
  ASSERT_TRUE(d);
  std::string err;
  flow::DeviceFlowTable gpu;
  ASSERT_TRUE(gpu.init(d, c, err)) << err;
  uint64_t ops0 = d->operations();
  std::vector<uint32_t> ids;
  std::vector<uint8_t> dirs;
  const uint32_t kBatch = 500;
  uint64_t compared = 0;
  for (size_t b = 0; b < order.size(); b += kBatch) {
    uint32_t n = uint32_t(std::min<size_t>(kBatch, order.size() - b));
    std::vector<uint8_t> bf;
    std::vector<uint32_t> bo, bl;
    std::vector<uint64_t> nows;
    for (uint32_t j = 0; j < n; ++j) {
      uint32_t i = order[b + j];
      bo.push_back(uint32_t(bf.size()));
      bl.push_back(len[i]);
      bf.insert(bf.end(), frames.begin() + off[i], frames.begin() + off[i] + len[i]);
      nows.push_back(1000 * ms + (b + j) * 2 * ms);  // 2 ms a packet: 32 s in all
    }
    // expiry at each batch's first packet's time, as FlowIPManager's
    cpu.expire(nows[0]);
    ASSERT_TRUE(gpu.expire(nows[0], err)) << err;
    std::vector<uint32_t> cpu_ids(n);
    std::vector<uint8_t> cpu_dirs(n);
    for (uint32_t j = 0; j < n; ++j) {
      uint32_t ipl = 0;
      const uint8_t* ip = k::frame_ip(bf.data() + bo[j], bl[j], ipl);
      k::ParsedKey pk;
      if (ip) k::parse_conn_key(ip, ipl, pk);
      if (pk.icmp_error || pk.kind == k::KeyKind::Frag) pk.kind = k::KeyKind::NotIP;  // the device leaves these out
      cpu_ids[j] = cpu.track(pk, ipl, nows[j], cpu_dirs[j]);
    }
    ASSERT_TRUE(gpu.track(bf.data(), bf.size(), bo.data(), bl.data(), n, ids, dirs, err, nows.data())) << err;
    for (uint32_t j = 0; j < n; ++j) {
      ASSERT_EQ(ids[j] != 0, cpu_ids[j] != 0) << "packet " << b + j;
      if (ids[j]) {
        ASSERT_EQ(dirs[j], cpu_dirs[j]) << "packet " << b + j;
      }
    }
    std::vector<flow::DeviceFlowTable::Entry> got;
    ASSERT_TRUE(gpu.contents(got, err)) << err;
    ASSERT_EQ(got.size(), size_t(cpu.size())) << "batch " << b / kBatch;
    for (auto& e : got) {
      uint32_t id = cpu.find(e.key);
      ASSERT_NE(id, 0u) << "batch " << b / kBatch;
      const flow::Flow& f = cpu.flow(id);
      ASSERT_EQ(e.orig_dir, f.orig_dir);
      ASSERT_EQ(e.pkts[0], f.pkts[0]);
      ASSERT_EQ(e.pkts[1], f.pkts[1]);
      ASSERT_EQ(e.bytes[0], f.bytes[0]);
      ASSERT_EQ(e.bytes[1], f.bytes[1]);
      ASSERT_EQ(e.first_ns, f.first_ns);
      ASSERT_EQ(e.last_ns, f.last_ns);
      ASSERT_EQ(e.tcp.state, f.tcp.state) << flow::flow_tuple(f);
      ASSERT_EQ(e.tcp.fin, f.tcp.fin);
      ASSERT_EQ(e.tcp.first_fin, f.tcp.first_fin);
      ASSERT_EQ(e.tcp.synack_pickup, f.tcp.synack_pickup);
      ASSERT_EQ(e.cls, f.cls);
      ASSERT_EQ(e.flags, f.flags & ~flow::Flow::kLive);
      ASSERT_EQ(e.tcp_flags[0], f.tcp_flags[0]);
      ASSERT_EQ(e.tcp_flags[1], f.tcp_flags[1]);
      ++compared;
    }
    const auto& dc = gpu.counters();
    ASSERT_EQ(dc.expired, cpu.counters().expired.get()) << "batch " << b / kBatch;
    ASSERT_EQ(dc.reopened, cpu.counters().reopened.get());
    ASSERT_EQ(dc.inserts, cpu.counters().inserts.get());
    ASSERT_EQ(dc.live, cpu.size());
  }
  EXPECT_GT(d->operations(), ops0);  // the device did the work
  EXPECT_GT(compared, 20000u);
  // what the traffic exercised
  EXPECT_GT(cpu.counters().expired.get(), 1000u);
  EXPECT_GT(cpu.counters().reopened.get(), 10u);
  EXPECT_EQ(cpu.counters().evicted.get(), 0u);
  EXPECT_GT(gpu.rebuilds(), 0u);
  EXPECT_EQ(gpu.full_packets(), 0u);
}

// A device table too full for a batch evicts before it, in the CPU table's
// order: a flood of half-open connections (random tuples' SYNs, SYN_SENT's
// two minutes) into a table of 1,000 flows evicts the flood's oldest first,
// and established connections (five days) that keep sending stay, with
// their states and counts; no packet finds the table full. Before each
// batch the test reads the table, after it sees which flows went: each
// evicted flow's expiry is no later than any kept flow's.
TEST(DeviceFlowTable, AFullTableEvictsTheFlowsNearestTheirExpiryFirst) {
  auto frame = [](uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp, uint8_t flags, std::vector<uint8_t>& bf,
                  std::vector<uint32_t>& bo, std::vector<uint32_t>& bl) {
    uint8_t f[54] = {};
    f[12] = 0x08;  // IPv4
    uint8_t* ip = f + 14;
    ip[0] = 0x45, ip[3] = 40, ip[8] = 64, ip[9] = 6;
    for (int b = 0; b < 4; ++b) ip[12 + b] = uint8_t(src >> (24 - 8 * b)), ip[16 + b] = uint8_t(dst >> (24 - 8 * b));
    uint8_t* t = ip + 20;
    t[0] = uint8_t(sp >> 8), t[1] = uint8_t(sp), t[2] = uint8_t(dp >> 8), t[3] = uint8_t(dp);
    t[12] = 0x50, t[13] = flags, t[14] = 0xff;
    bo.push_back(uint32_t(bf.size()));
    bl.push_back(54);
    bf.insert(bf.end(), f, f + 54);
  };
  const uint32_t kCap = 1000, kConns = 100;
  flow::Config c;
  c.capacity = kCap;
  auto d = test::open_test_device();
  ASSERT_TRUE(d);
  std::string err;
  flow::DeviceFlowTable gpu;
  ASSERT_TRUE(gpu.init(d, c, err)) << err;
  const uint64_t ms = 1000000;
  uint64_t now = 1000000 * ms;
  std::vector<uint32_t> ids;
  std::vector<uint8_t> dirs;
  auto client = [](uint32_t i) { return 0x0a000000u + i; };
  const uint32_t server = 0xc0a80001u;
  // the connections' handshakes
  for (uint8_t flags : {k::kTcpSyn, uint8_t(k::kTcpSyn | k::kTcpAck), k::kTcpAck}) {
    std::vector<uint8_t> bf;
    std::vector<uint32_t> bo, bl;
    for (uint32_t i = 0; i < kConns; ++i) {
      if (flags == (k::kTcpSyn | k::kTcpAck))
        frame(server, client(i), 443, uint16_t(20000 + i), flags, bf, bo, bl);
      else
        frame(client(i), server, uint16_t(20000 + i), 443, flags, bf, bo, bl);
    }
    std::vector<uint64_t> nows(bo.size(), now);
    ASSERT_TRUE(gpu.track(bf.data(), bf.size(), bo.data(), bl.data(), uint32_t(bo.size()), ids, dirs, err, nows.data()))
        << err;
    now += ms;
  }
  auto key_of = [](const k::ConnKey& key) { return std::string(reinterpret_cast<const char*>(&key), sizeof key); };
  std::mt19937 rng(23);
  std::vector<uint64_t> sent(kConns, 2);  // each connection's packets from its client
  uint64_t evicted = 0, batches = 0, comparisons = 0;
  uint32_t next_conn = 0;
  for (int b = 0; b < 200; ++b, now += ms) {
    // the table as it stands: each flow's expiry
    std::vector<flow::DeviceFlowTable::Entry> before, after;
    ASSERT_TRUE(gpu.contents(before, err)) << err;
    std::map<std::string, uint64_t> expiry;
    for (auto& e : before) expiry[key_of(e.key)] = e.last_ns + c.timeouts.ns[e.cls];
    // a batch: 28 SYNs of random tuples, 4 segments of the connections
    std::vector<uint8_t> bf;
    std::vector<uint32_t> bo, bl;
    for (int i = 0; i < 28; ++i)
      frame(uint32_t(rng()) | 0x80000000u, server, uint16_t(rng()), 80, k::kTcpSyn, bf, bo, bl);
    for (int i = 0; i < 4; ++i, next_conn = (next_conn + 1) % kConns) {
      frame(client(next_conn), server, uint16_t(20000 + next_conn), 443, k::kTcpAck | 0x08, bf, bo, bl);
      ++sent[next_conn];
    }
    std::vector<uint64_t> nows(bo.size(), now);
    ASSERT_TRUE(gpu.track(bf.data(), bf.size(), bo.data(), bl.data(), uint32_t(bo.size()), ids, dirs, err, nows.data()))
        << err;
    ++batches;
    for (uint32_t id : ids) ASSERT_NE(id, 0u) << "batch " << b;
    ASSERT_TRUE(gpu.contents(after, err)) << err;
    ASSERT_LE(after.size(), kCap);
    std::set<std::string> kept;
    for (auto& e : after) kept.insert(key_of(e.key));
    uint64_t latest_gone = 0, earliest_kept = ~0ull, gone = 0;
    for (auto& [key, at] : expiry) {
      if (kept.count(key)) {
        earliest_kept = std::min(earliest_kept, at);
      } else {
        latest_gone = std::max(latest_gone, at);
        ++gone;
      }
    }
    if (gone) {
      ASSERT_LE(latest_gone, earliest_kept) << "batch " << b << ": a flow was evicted before one nearer its expiry";
      ++comparisons;
    }
    evicted += gone;
  }
  EXPECT_EQ(gpu.full_packets(), 0u);
  EXPECT_EQ(gpu.counters().evicted, evicted);
  EXPECT_GT(evicted, 4000u);  // 5,600 SYNs into room for 900
  EXPECT_GT(comparisons, 50u);
  // a sixteenth of the table more than the batch at each eviction: not one a batch
  EXPECT_GT(gpu.evictions(), 0u);
  EXPECT_LT(gpu.evictions(), batches * 2 / 3);
  std::vector<flow::DeviceFlowTable::Entry> got;
  ASSERT_TRUE(gpu.contents(got, err)) << err;
  uint32_t established = 0;
  for (auto& e : got)
    if (e.key.pb == 443 || e.key.pa == 443) {
      const uint32_t i = (e.key.pa == 443 ? e.key.pb : e.key.pa) - 20000;
      ASSERT_LT(i, kConns);
      EXPECT_EQ(e.tcp.state, k::kTcpEstablished);
      EXPECT_EQ(e.pkts[e.orig_dir == 0 ? 0 : 1] + e.pkts[e.orig_dir == 0 ? 1 : 0], sent[i] + 1);  // and the SYN-ACK
      ++established;
    }
  EXPECT_EQ(established, kConns);
}

}  // namespace
}  // namespace shoal
