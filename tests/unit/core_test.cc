#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <set>

#include "shoal/core/args.hh"
#include "shoal/core/batch.hh"
#include "shoal/core/element.hh"
#include "shoal/core/packet.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/kernels/flowhash.hh"

using namespace shoal;

TEST(Packet, PushPullPutTake) {
  PacketPool pool({.count = 4, .buf_size = 256, .headroom = 32});
  Packet* p = pool.alloc(10);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->length(), 10u);
  EXPECT_EQ(p->headroom(), 32u);
  EXPECT_EQ(p->tailroom(), 256u - 32 - 10);
  ASSERT_NE(p->push(14), nullptr);
  EXPECT_EQ(p->length(), 24u);
  EXPECT_EQ(p->push(100), nullptr) << "no headroom: unchanged";
  EXPECT_EQ(p->length(), 24u);
  p->pull(4);
  EXPECT_EQ(p->length(), 20u);
  p->pull(1000);
  EXPECT_EQ(p->length(), 0u);
  EXPECT_NE(p->put(100), nullptr);
  EXPECT_EQ(p->put(10000), nullptr);
  p->take(30);
  EXPECT_EQ(p->length(), 70u);
  pool.free(p);
  EXPECT_EQ(pool.outstanding(), 0u);
}

TEST(Packet, HeaderOffsetsSurvivePushPull) {
  PacketPool pool({.count = 2});
  Packet* p = pool.alloc(60);
  p->set_network_header(14);
  p->pull(14);
  EXPECT_EQ(p->network_header_offset(), 0);
  p->push(14);
  EXPECT_EQ(p->network_header_offset(), 14);
  pool.free(p);
}

// A batch's headers spread over the L1 cache's sets: 64 packets taken in a
// row start their data in 64 different sets (64-byte lines, 4 KB a way),
// for buffer sizes that are powers of two and others; each buffer keeps its
// whole size, and none overlaps another.
TEST(PacketPool, BuffersSpreadOverTheCacheSets) {
  for (uint32_t size : {2048u, 4096u, 2112u, 2176u, 9216u}) {
    PacketPool pool({.count = 64, .buf_size = size, .headroom = 128, .jumbo_count = 0});
    std::vector<Packet*> ps;
    ps.reserve(64);
    std::set<uintptr_t> sets;
    for (int i = 0; i < 64; ++i) {
      Packet* p = pool.alloc(size - 128);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(p->tailroom(), 0u);
      sets.insert(reinterpret_cast<uintptr_t>(p->data()) / 64 % 64);
      std::memset(p->data(), i, p->length());
      ps.push_back(p);
    }
    EXPECT_EQ(sets.size(), 64u) << "buffers of " << size;
    for (int i = 0; i < 64; ++i)
      for (uint32_t k = 0; k < ps[size_t(i)]->length(); k += 97) ASSERT_EQ(ps[size_t(i)]->data()[k], uint8_t(i));
    for (Packet* p : ps) pool.free(p);
  }
}

TEST(PacketPool, ExhaustionIsCountedNotFatal) {
  PacketPool pool({.count = 3, .buf_size = 2048, .headroom = 128, .jumbo_count = 1});
  std::vector<Packet*> ps;
  ps.reserve(3);
  for (int i = 0; i < 3; ++i) ps.push_back(pool.alloc(64));
  EXPECT_EQ(pool.alloc(64), nullptr);
  EXPECT_EQ(pool.failures(), 1u);
  Packet* j = pool.alloc(9000);  // jumbo class
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->length(), 9000u);
  EXPECT_EQ(pool.alloc(9000), nullptr) << "jumbo class is bounded too";
  EXPECT_EQ(pool.alloc(PacketPool::kMaxFrame + 1000), nullptr) << "larger than any buffer";
  pool.free(j);
  for (auto* p : ps) pool.free(p);
  EXPECT_EQ(pool.outstanding(), 0u);
  EXPECT_NE(pool.alloc(64), nullptr);
}

TEST(PacketPool, CloneCopiesDataAndAnnotations) {
  PacketPool pool({.count = 4});
  Packet* p = pool.alloc(5);
  std::memcpy(p->data(), "hello", 5);
  p->anno().paint = 7;
  p->set_timestamp_ns(123);
  p->set_network_header(1);
  Packet* q = pool.clone(p);
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(std::memcmp(q->data(), "hello", 5), 0);
  EXPECT_EQ(q->anno().paint, 7);
  EXPECT_EQ(q->timestamp_ns(), 123u);
  EXPECT_EQ(q->network_header_offset(), 1);
  EXPECT_NE(q->data(), p->data());
  pool.free(p);
  pool.free(q);
}

TEST(PacketBatch, LiveMaskIterationAndCompaction) {
  PacketPool pool({.count = 200});
  PacketBatch b(130);
  std::vector<Packet*> ps;
  for (int i = 0; i < 130; ++i) {
    ps.push_back(pool.alloc(1));
    b.append(ps.back());
  }
  for (uint32_t i = 0; i < 130; i += 3) b.kill(i);
  uint32_t seen = 0, last = 0;
  bool ordered = true;
  b.for_each([&](uint32_t i, Packet* p) {
    EXPECT_NE(i % 3, 0u);
    EXPECT_EQ(p, ps[i]);
    if (seen && i <= last) ordered = false;
    last = i;
    ++seen;
  });
  EXPECT_TRUE(ordered);
  EXPECT_EQ(seen, b.live());
  EXPECT_EQ(b.live(), 130u - 44);
  b.compact();
  EXPECT_TRUE(b.dense());
  EXPECT_EQ(b.slots(), 86u);
  EXPECT_EQ(b.at(0), ps[1]);
  EXPECT_EQ(b.at(1), ps[2]);
  EXPECT_EQ(b.at(2), ps[4]);
  for (auto* p : ps) pool.free(p);
}

TEST(Args, ValueParsers) {
  Duration d;
  EXPECT_TRUE(parse_duration("10ms", d));
  EXPECT_EQ(d.ns, 10000000u);
  EXPECT_TRUE(parse_duration("1.5", d));
  EXPECT_EQ(d.ns, 1500000000u);
  EXPECT_FALSE(parse_duration("5 parsecs", d));
  Bandwidth bw;
  EXPECT_TRUE(parse_bandwidth("8Mbps", bw));
  EXPECT_DOUBLE_EQ(bw.bytes_per_sec, 1e6);
  EtherAddr e;
  EXPECT_TRUE(parse_ether("00:1b:21:3a:4c:5d", e));
  EXPECT_EQ(e.b[5], 0x5d);
  EXPECT_FALSE(parse_ether("00:1b:21:3a:4c", e));
  // Click's forms: one or two digits a group, ':' or '-' (not mixed).
  EXPECT_TRUE(parse_ether("2:1:1:1:1:a", e));
  EXPECT_EQ(format_ether(e.b.data()), "02:01:01:01:01:0a");
  EXPECT_TRUE(parse_ether("00-1B-21-3a-4c-5d", e));
  EXPECT_EQ(e.b[1], 0x1b);
  for (const char* bad : {"00:1b:21:3a:4c:5d:6e", "001:1b:21:3a:4c:5d", "00:1b-21:3a:4c:5d", "00::1b:21:3a:4c",
                          "00:1b:21:3a:4c:", ":00:1b:21:3a:4c", "00:1b:21:3a:4c:5g", ""})
    EXPECT_FALSE(parse_ether(bad, e)) << bad;
  IPv4Addr a;
  EXPECT_TRUE(parse_ipv4("10.0.0.255", a));
  EXPECT_EQ(a.host(), 0x0a0000ffu);
  EXPECT_FALSE(parse_ipv4("10.0.0.256", a));
  DataString ds;
  EXPECT_TRUE(parse_data("\\<0a 0B>\"x\\n\"", ds));
  EXPECT_EQ(ds.bytes, std::string("\x0a\x0bx\n"));
  EXPECT_FALSE(parse_data("\\<0a 0>", ds)) << "odd number of hex digits";
  int64_t i;
  EXPECT_TRUE(parse_int("-0x10", i));
  EXPECT_EQ(i, -16);
  EXPECT_TRUE(parse_int("-16", i));
  EXPECT_EQ(i, -16);
  uint64_t u;
  EXPECT_FALSE(parse_uint("18446744073709551616", u));
}

// copy_frame against memcpy at every length up to 300 and every alignment,
// with guard bytes around the destination.
TEST(Packet, CopyFrameEqualsMemcpy) {
  std::mt19937 rng(4);
  std::vector<uint8_t> src(400), a(420), b(420);
  for (auto& x : src) x = uint8_t(rng());
  for (size_t n = 0; n <= 300; ++n)
    for (size_t so = 0; so < 8; ++so)
      for (size_t d = 0; d < 4; ++d) {
        std::fill(a.begin(), a.end(), 0xa5);
        std::fill(b.begin(), b.end(), 0xa5);
        copy_frame(a.data() + 8 + d, src.data() + so, n);
        std::memcpy(b.data() + 8 + d, src.data() + so, n);
        ASSERT_EQ(a, b) << "length " << n << " source offset " << so << " destination offset " << d;
      }
}

TEST(Args, AddressListsAndPrefixes) {
  EXPECT_EQ(split_words("  a b\tc  "), (std::vector<std::string_view>{"a", "b", "c"}));
  EXPECT_TRUE(split_words("   ").empty());
  uint32_t addr, mask;
  ASSERT_TRUE(parse_ipv4_prefix("10.1.2.3/8", addr, mask));
  EXPECT_EQ(addr, 0x0a010203u);
  EXPECT_EQ(mask, 0xff000000u);
  ASSERT_TRUE(parse_ipv4_prefix("10.1.2.3/255.255.0.0", addr, mask));
  EXPECT_EQ(mask, 0xffff0000u);
  ASSERT_TRUE(parse_ipv4_prefix("0.0.0.0/0", addr, mask));
  EXPECT_EQ(mask, 0u);
  EXPECT_FALSE(parse_ipv4_prefix("10.1.2.3", addr, mask)) << "a bare address only where allowed";
  ASSERT_TRUE(parse_ipv4_prefix("10.1.2.3", addr, mask, true));
  EXPECT_EQ(mask, 0xffffffffu);
  EXPECT_FALSE(parse_ipv4_prefix("10.1.2.3/33", addr, mask));
  // Click's shortened networks
  ASSERT_TRUE(parse_ipv4_prefix("10.1.2/24", addr, mask));
  EXPECT_EQ(addr, 0x0a010200u);
  EXPECT_EQ(mask, 0xffffff00u);
  ASSERT_TRUE(parse_ipv4_prefix("0/0", addr, mask));
  EXPECT_EQ(mask, 0u);
  EXPECT_FALSE(parse_ipv4_prefix("10.1.2", addr, mask, true)) << "shortened only before a prefix";
  EXPECT_FALSE(parse_ipv4_prefix("10.1.2.3.4/8", addr, mask));
  std::vector<uint32_t> v4;
  std::string bad;
  EXPECT_TRUE(parse_ipv4_list(" 1.2.3.4  5.6.7.8 ", v4, bad));
  EXPECT_EQ(v4, (std::vector<uint32_t>{0x01020304u, 0x05060708u}));
  EXPECT_FALSE(parse_ipv4_list("1.2.3.4 nope", v4, bad));
  EXPECT_EQ(bad, "nope");
  std::vector<IPv6Addr> v6;
  EXPECT_TRUE(parse_ipv6_list("fe80::1 ::", v6, bad));
  EXPECT_EQ(v6.size(), 2u);
  EXPECT_FALSE(parse_ipv6_list("fe80::1 1.2.3.4.5", v6, bad));
  EXPECT_EQ(bad, "1.2.3.4.5");
}

TEST(Args, PositionalKeywordsAndErrors) {
  Loc start{-1, 1, 1};
  auto items = split_args("5, \"a, b\", LIMIT 10, STOP true", start);
  ASSERT_EQ(items.size(), 4u);
  EXPECT_EQ(items[1].text, "\"a, b\"");
  EXPECT_EQ(items[2].keyword, "LIMIT");
  Args a(items, start, "x");
  uint32_t first = 0;
  std::string s;
  int64_t limit = 0;
  bool stop = false;
  a.read_mp("FIRST", first).read_p("S", s).read("LIMIT", limit).read("STOP", stop);
  EXPECT_NO_THROW(a.complete());
  EXPECT_EQ(first, 5u);
  EXPECT_EQ(s, "a, b");
  EXPECT_EQ(limit, 10);
  EXPECT_TRUE(stop);

  Args b(split_args("1, BOGUS 3", start), start, "x");
  b.read_p("A", first);
  EXPECT_THROW(b.complete(), ConfigError);
  Args c(split_args("notanumber", start), start, "x");
  try {
    c.read_mp("A", first);
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "x: A expects an unsigned integer, got 'notanumber'");
  }
  // A lone capitalised word is a value, not a keyword (Click's FromDump(IN)).
  Args lone(split_args("IN, LIMIT 3", start), start, "x");
  std::string file;
  lone.read_mp("FILENAME", file).read("LIMIT", limit);
  EXPECT_NO_THROW(lone.complete());
  EXPECT_EQ(file, "IN");
  Args m(split_args("", start), start, "x");
  EXPECT_THROW(m.read_mp("A", first), ConfigError);
  // Keywords read first are out of the way of the positionals after them
  // (Click's consume(): ARPQuerier(TIMEOUT 0.1s, IP, ETH)); a keyword not
  // read yet still ends them.
  Args k(split_args("LIMIT 4, 7, AFTER", start), start, "x");
  k.read("LIMIT", limit).read_mp("A", first).read_p("S", s);
  EXPECT_NO_THROW(k.complete());
  EXPECT_EQ(limit, 4);
  EXPECT_EQ(first, 7u);
  EXPECT_EQ(s, "AFTER");
  Args unread(split_args("LIMIT 4, 7", start), start, "x");
  EXPECT_THROW(unread.read_mp("A", first), ConfigError);
}

TEST(PortSpec, ParsesClickForms) {
  PortRange in, out;
  ASSERT_TRUE(parse_port_counts("1/1-2", in, out));
  EXPECT_EQ(in.lo, 1u);
  EXPECT_EQ(out.hi, 2u);
  ASSERT_TRUE(parse_port_counts("-/=", in, out));
  EXPECT_EQ(in.hi, UINT32_MAX);
  EXPECT_TRUE(out.same_as_inputs);
  ASSERT_TRUE(parse_port_counts("1/1-", in, out));
  EXPECT_EQ(out.lo, 1u);
  EXPECT_EQ(out.hi, UINT32_MAX);
  EXPECT_FALSE(parse_port_counts("x", in, out));
  EXPECT_EQ(port_processing("a/ah", true, 0), Proc::Agnostic);
  EXPECT_EQ(port_processing("a/ah", true, 5), Proc::Push);
  EXPECT_EQ(port_processing("h/l", true, 0), Proc::Pull);
}

// The 32-bit-word header check against the 16-bit reference sum, on random
// headers of every length with and without a valid checksum (and the
// all-zero and all-ones corners).
TEST(Kernels, FastHeaderChecksumAgreesWithTheReference) {
  std::mt19937 rng(9);
  for (int n = 0; n < 20000; ++n) {
    uint32_t hl = 20 + 4 * (rng() % 11);
    uint8_t ip[60];
    int corner = n % 50;
    for (uint32_t i = 0; i < hl; ++i) ip[i] = corner == 1 ? 0 : corner == 2 ? 0xff : uint8_t(rng());
    if (n % 2 == 0 && corner > 2) {
      ip[10] = ip[11] = 0;
      k::store_be16(ip + 10, k::ip_checksum(ip, hl));
    }
    EXPECT_EQ(k::ipv4_header_checksum_ok(ip, hl), k::ip_checksum(ip, hl) == 0) << "header length " << hl;
  }
}

TEST(Kernels, FastHeaderChecksumSetterAgreesWithTheReference) {
  std::mt19937 rng(10);
  for (int n = 0; n < 20000; ++n) {
    uint32_t hl = 20 + 4 * (rng() % 11);
    uint8_t ip[60], ref[60];
    int corner = n % 50;
    for (uint32_t i = 0; i < hl; ++i) ip[i] = corner == 1 ? 0 : corner == 2 ? 0xff : uint8_t(rng());
    ip[0] = uint8_t(0x40 | (hl / 4));
    std::memcpy(ref, ip, hl);
    ref[10] = ref[11] = 0;
    k::store_be16(ref + 10, k::ip_checksum(ref, hl));
    k::set_ipv4_header_checksum(ip, hl);
    ASSERT_EQ(k::load_be16(ip + 10), k::load_be16(ref + 10)) << "header length " << hl;
    ASSERT_TRUE(k::ipv4_header_checksum_ok(ip, hl));
  }
}

TEST(Kernels, ChecksumMatchesRfc1071Example) {
  // RFC 1071 section 3 example bytes.
  const uint8_t b[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
  EXPECT_EQ(k::csum_partial(b, 8) % 0xffff, (0x0001 + 0xf203 + 0xf4f5 + 0xf6f7) % 0xffff);
  EXPECT_EQ(k::csum_fold(k::csum_partial(b, 8)), uint16_t(~0xddf2 & 0xffff));
  uint8_t ip[20] = {0x45, 0, 0, 0x54, 0, 0, 0x40, 0, 0x40, 0x01, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2};
  k::store_be16(ip + 10, k::ip_checksum(ip, 20));
  EXPECT_EQ(k::ip_checksum(ip, 20), 0) << "a header with its checksum sums to zero";
  uint16_t before = k::load_be16(ip + 10);
  uint16_t ttl_before = k::load_be16(ip + 8);
  ip[8] = 0x3f;
  uint16_t updated = k::csum_update16(before, ttl_before, k::load_be16(ip + 8));
  k::store_be16(ip + 10, 0);
  EXPECT_EQ(updated, k::ip_checksum(ip, 20));
}

TEST(Kernels, FlowHashKeepsFragmentsTogetherAndSeesPorts) {
  uint8_t f[64] = {};
  k::store_be16(f + 12, 0x0800);
  f[14] = 0x45;
  f[23] = 17;
  k::store_be32(f + 26, 0x0a000001);
  k::store_be32(f + 30, 0x0a000002);
  k::store_be16(f + 34, 1000);
  k::store_be16(f + 36, 53);
  uint32_t h1 = k::flow_hash(f, 64);
  k::store_be16(f + 34, 1001);
  EXPECT_NE(k::flow_hash(f, 64), h1);
  k::store_be16(f + 20, 0x2000);  // MF: a first fragment
  uint32_t frag_a = k::flow_hash(f, 64);
  k::store_be16(f + 20, 0x0010);  // a later fragment, ports not present
  k::store_be16(f + 34, 7777);
  EXPECT_EQ(k::flow_hash(f, 64), frag_a);
  EXPECT_NO_FATAL_FAILURE(k::flow_hash(f, 10));  // truncated: no overread (ASan checks)
}
