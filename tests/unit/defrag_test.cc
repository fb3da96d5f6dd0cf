// IPv4 and IPv6 fragment reassembly: every arrival order gives the datagram
// back, overlaps follow the policy byte by byte, the bounds hold; and the
// element against IPFragmenter (fragment, shuffle, reassemble: the same bytes).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "helpers.hh"
#include "shoal/flow/defrag.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

using namespace shoal;
using flow::Defragmenter;

namespace {

using Bytes = std::vector<uint8_t>;

// An IPv4 datagram or fragment: payload bytes as given.
Bytes v4(const Bytes& payload, uint16_t frag_off8, bool mf, uint16_t id = 0x4242) {
  Bytes p(20);
  p[0] = 0x45, p[8] = 64, p[9] = 17;
  k::store_be16(p.data() + 2, uint16_t(20 + payload.size()));
  k::store_be16(p.data() + 4, id);
  k::store_be16(p.data() + 6, uint16_t((mf ? 0x2000 : 0) | frag_off8));
  k::store_be32(p.data() + 12, 0x0a000001);
  k::store_be32(p.data() + 16, 0x0a000002);
  p.insert(p.end(), payload.begin(), payload.end());
  k::store_be16(p.data() + 10, k::ip_checksum(p.data(), 20));
  return p;
}

// An IPv6 fragment (a Fragment header after the fixed header) of a UDP payload.
Bytes v6frag(const Bytes& data, uint16_t off, bool mf, uint32_t id = 7) {
  Bytes p(48);
  p[0] = 0x60, p[6] = 44, p[7] = 64;
  k::store_be16(p.data() + 4, uint16_t(8 + data.size()));
  p[8] = 0x20, p[9] = 0x01, p[23] = 1;  // 2001::1 -> 2001::2
  p[24] = 0x20, p[25] = 0x01, p[39] = 2;
  p[40] = 17;  // the fragment carries UDP
  k::store_be16(p.data() + 42, uint16_t(off | (mf ? 1 : 0)));
  k::store_be32(p.data() + 44, id);
  p.insert(p.end(), data.begin(), data.end());
  return p;
}

Bytes counting(size_t n, uint8_t seed = 3) {
  Bytes b(n);
  for (size_t i = 0; i < n; ++i) b[i] = uint8_t(i * 7 + seed);
  return b;
}

Bytes slice(const Bytes& b, size_t from, size_t n) {
  return Bytes(b.begin() + std::ptrdiff_t(from), b.begin() + std::ptrdiff_t(from + n));
}

}  // namespace

TEST(Defrag, EveryArrivalOrderGivesTheDatagramBack) {
  Bytes payload = counting(3000);
  Bytes whole = v4(payload, 0, false);
  std::vector<Bytes> frags = {v4(slice(payload, 0, 1480), 0, true), v4(slice(payload, 1480, 1480), 185, true),
                              v4(slice(payload, 2960, 40), 370, false)};
  std::vector<int> order = {0, 1, 2};
  do {
    Defragmenter d;
    Bytes out;
    for (size_t i = 0; i < order.size(); ++i) {
      const Bytes& f = frags[size_t(order[i])];
      auto r = d.add(f.data(), uint32_t(f.size()), 1000, out);
      EXPECT_EQ(r, i + 1 < order.size() ? Defragmenter::Held : Defragmenter::Done);
    }
    EXPECT_EQ(out, whole) << "header fields and checksum restored";
    EXPECT_EQ(d.pending(), 0u);
  } while (std::next_permutation(order.begin(), order.end()));
  // not a fragment: passes
  Defragmenter d;
  Bytes out;
  EXPECT_EQ(d.add(whole.data(), uint32_t(whole.size()), 0, out), Defragmenter::NotFragment);
}

TEST(Defrag, OverlapsFollowThePolicyByteByByte) {
  // A [0,8) 'A'; B [16,24) 'B' last; then C [0,16) 'C', which overlaps A at
  // the same offset and completes the datagram
  Bytes a(8, 'A'), b(8, 'B'), c(16, 'C');
  struct Case {
    const char* policy;
    char first8;  // who owns bytes [0,8)
  };
  for (Case cs : {Case{"first", 'A'}, Case{"last", 'C'}, Case{"bsd", 'A'}, Case{"linux", 'C'}}) {
    flow::DefragConfig cfg;
    ASSERT_TRUE(flow::parse_defrag_policy(cs.policy, cfg.policy));
    Defragmenter d(cfg);
    Bytes out;
    Bytes fa = v4(a, 0, true), fb = v4(b, 2, false), fc = v4(c, 0, true);
    EXPECT_EQ(d.add(fa.data(), uint32_t(fa.size()), 0, out), Defragmenter::Held);
    EXPECT_EQ(d.add(fb.data(), uint32_t(fb.size()), 0, out), Defragmenter::Held);
    ASSERT_EQ(d.add(fc.data(), uint32_t(fc.size()), 0, out), Defragmenter::Done) << cs.policy;
    std::string got(out.begin() + 20, out.end());
    EXPECT_EQ(got, std::string(8, cs.first8) + std::string(8, 'C') + std::string(8, 'B')) << cs.policy;
    EXPECT_EQ(d.counters().overlaps.get(), 1u);
  }
  // a later fragment that starts before the earlier one wins under bsd
  flow::DefragConfig cfg;
  Defragmenter d(cfg);
  Bytes out;
  Bytes f1 = v4(Bytes(8, 'X'), 1, true), f2 = v4(Bytes(8, 'Z'), 2, false), f3 = v4(Bytes(16, 'Y'), 0, true);
  d.add(f1.data(), uint32_t(f1.size()), 0, out);
  d.add(f2.data(), uint32_t(f2.size()), 0, out);
  ASSERT_EQ(d.add(f3.data(), uint32_t(f3.size()), 0, out), Defragmenter::Done);
  EXPECT_EQ(std::string(out.begin() + 20, out.end()), std::string(16, 'Y') + std::string(8, 'Z'));
}

TEST(Defrag, Ipv6LosesItsFragmentHeader) {
  Bytes data = counting(64, 9);
  Defragmenter d;
  Bytes out, f2 = v6frag(slice(data, 32, 32), 32, false), f1 = v6frag(slice(data, 0, 32), 0, true);
  EXPECT_EQ(d.add(f2.data(), uint32_t(f2.size()), 0, out), Defragmenter::Held);
  ASSERT_EQ(d.add(f1.data(), uint32_t(f1.size()), 0, out), Defragmenter::Done);
  ASSERT_EQ(out.size(), 40u + 64u);
  EXPECT_EQ(out[6], 17) << "the fixed header names what the fragments carried";
  EXPECT_EQ(k::load_be16(out.data() + 4), 64u);
  EXPECT_EQ(Bytes(out.begin() + 40, out.end()), data);
  // an atomic fragment stands alone
  Bytes atomic = v6frag(data, 0, false);
  EXPECT_EQ(d.add(atomic.data(), uint32_t(atomic.size()), 0, out), Defragmenter::NotFragment);
}

TEST(Defrag, BoundsHold) {
  Bytes out;
  {  // the timeout gives a datagram up
    flow::DefragConfig cfg;
    cfg.timeout_ns = 1000;
    Defragmenter d(cfg);
    Bytes f = v4(Bytes(8, 'a'), 0, true);
    d.add(f.data(), uint32_t(f.size()), 0, out);
    d.expire(999);
    EXPECT_EQ(d.pending(), 1u);
    d.expire(1000);
    EXPECT_EQ(d.pending(), 0u);
    EXPECT_EQ(d.counters().timeouts.get(), 1u);
    EXPECT_EQ(d.counters().held_bytes.get(), 0u);
    // with no expiry pass between: a fragment that comes at the timeout
    // does not complete the datagram, it starts a new one
    Bytes data = counting(16);
    Bytes a = v4(slice(data, 0, 8), 0, true, 7), b = v4(slice(data, 8, 8), 1, false, 7);
    EXPECT_EQ(d.add(a.data(), uint32_t(a.size()), 5000, out), Defragmenter::Held);
    EXPECT_EQ(d.add(b.data(), uint32_t(b.size()), 6000, out), Defragmenter::Held);
    EXPECT_EQ(d.counters().timeouts.get(), 2u);
    EXPECT_EQ(d.pending(), 1u);
    EXPECT_EQ(d.add(a.data(), uint32_t(a.size()), 6999, out), Defragmenter::Done);  // (within its timeout)
    EXPECT_EQ(out.size(), 20u + 16u);
  }
  {  // memory: the oldest datagram goes
    flow::DefragConfig cfg;
    cfg.memcap = 65536;
    Defragmenter d(cfg);
    for (uint16_t id = 1; id <= 3; ++id) {
      Bytes f = v4(counting(30000), 0, true, id);
      d.add(f.data(), uint32_t(f.size()), id, out);
      EXPECT_LE(d.counters().held_bytes.get(), 65536u);
    }
    EXPECT_EQ(d.pending(), 2u);
    EXPECT_EQ(d.counters().evicted.get(), 1u);
  }
  {  // fragments that cannot be
    Defragmenter d;
    Bytes odd = v4(Bytes(7, 'x'), 0, true);        // not the last, not a multiple of 8
    Bytes past = v4(Bytes(16, 'x'), 8190, false);  // ends past 65,535 bytes
    Bytes cut = v4(Bytes(16, 'x'), 0, true);
    cut.resize(30);  // shorter than its total length
    for (const Bytes* f : {&odd, &past, &cut})
      EXPECT_EQ(d.add(f->data(), uint32_t(f->size()), 0, out), Defragmenter::Invalid);
    EXPECT_EQ(d.counters().invalid.get(), 3u);
  }
  {  // too many fragments
    flow::DefragConfig cfg;
    cfg.max_frags = 4;
    Defragmenter d(cfg);
    Defragmenter::Result r = Defragmenter::Held;
    for (uint16_t i = 0; i < 5 && r == Defragmenter::Held; ++i) {
      Bytes f = v4(Bytes(8, 'x'), i, true);
      r = d.add(f.data(), uint32_t(f.size()), 0, out);
    }
    EXPECT_EQ(r, Defragmenter::Invalid);
    EXPECT_EQ(d.counters().too_many.get(), 1u);
    EXPECT_EQ(d.pending(), 0u);
  }
}

TEST(IPReassembler, UndoesIPFragmenterWhateverTheOrder) {
  // datagrams of several sizes, fragmented by IPFragmenter, the fragments
  // shuffled (other traffic in between), then reassembled: the same bytes
  std::vector<Bytes> originals;
  for (uint32_t n : {100u, 1400u, 3000u, 9000u}) {
    Bytes e = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0};
    Bytes ip = v4(counting(n, uint8_t(n)), 0, false, uint16_t(n));
    e.insert(e.end(), ip.begin(), ip.end());
    originals.push_back(e);
  }
  std::string dir = test::tmpdir(), in = dir + "/defrag-in.pcap", frag = dir + "/defrag-frags.pcap",
              out = dir + "/defrag-out.pcap";
  {
    io::PcapWriter w;
    std::string err;
    ASSERT_TRUE(w.open(in, 1, 65535, true, err)) << err;
    for (size_t i = 0; i < originals.size(); ++i)
      w.write(originals[i].data(), uint32_t(originals[i].size()), uint32_t(originals[i].size()), i);
    ASSERT_TRUE(w.close());
  }
  auto r1 = test::run(
      fmt::format("FromDump({}, STOP true) -> CheckIPHeader(14) -> IPFragmenter(576) -> ToDump({});", in, frag));
  ASSERT_TRUE(r1->ok) << r1->errors;
  test::finish(*r1);
  auto frames = test::read_pcap(frag);
  ASSERT_GT(frames.size(), 20u);
  std::mt19937 rng(5);
  std::shuffle(frames.begin(), frames.end(), rng);
  {
    io::PcapWriter w;
    std::string err;
    ASSERT_TRUE(w.open(frag, 1, 65535, true, err)) << err;
    for (size_t i = 0; i < frames.size(); ++i)
      w.write(frames[i].bytes.data(), uint32_t(frames[i].bytes.size()), uint32_t(frames[i].bytes.size()), i);
    ASSERT_TRUE(w.close());
  }
  auto r2 = test::run(fmt::format("FromDump({}, STOP true) -> re :: IPReassembler -> ToDump({});", frag, out));
  ASSERT_TRUE(r2->ok) << r2->errors;
  test::finish(*r2);
  EXPECT_EQ(r2->n("re.reassembled"), 3u) << "the 100-byte datagram was never fragmented";
  EXPECT_EQ(r2->n("re.pending"), 0u);
  auto got = test::read_pcap(out);
  std::vector<Bytes> bytes;
  bytes.reserve(got.size());
  for (auto& f : got) bytes.emplace_back(f.bytes.begin(), f.bytes.end());
  std::sort(bytes.begin(), bytes.end());
  std::sort(originals.begin(), originals.end());
  EXPECT_EQ(bytes, originals);
}
