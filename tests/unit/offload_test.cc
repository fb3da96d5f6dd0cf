// The offload framework: the host device backend (asynchrony, stream order,
// faults), ROI packing (ranges, union, write-back), and the offloaded
// routers in both forms (Snap's chain, NBA's balancer) against the CPU
// elements on random traffic: byte-identical outputs, the same drops,
// order kept under injected delays, predicates, faults, no device, route
// changes reaching the device copy. These run on the device `auto` picks
// (SHOAL_TEST_DEVICE overrides): the host backend in CI, CUDA on a GPU.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>
#include <utility>

#include "helpers.hh"
#include "shoal/core/graph.hh"
#include "shoal/device/device.hh"
#include "shoal/io/pcap.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/offload/chain.hh"
#include "shoal/offload/services.hh"
#include "shoal/offload/sizer.hh"
#include "shoal/routing/lpm4_build.hh"

using namespace shoal;

namespace {
using Bytes = std::vector<uint8_t>;

std::string tmp(const std::string& name) { return test::tmpdir() + "/offload-" + name; }

void write_pcap(const std::string& path, const std::vector<Bytes>& frames) {
  io::PcapWriter w;
  std::string err;
  ASSERT_TRUE(w.open(path, 1, 65535, true, err)) << err;
  for (size_t i = 0; i < frames.size(); ++i)
    w.write(frames[i].data(), uint32_t(frames[i].size()), uint32_t(frames[i].size()), i);
}

// ---------------------------------------------------------------- traffic
struct Route4 {
  uint32_t addr;
  int len;
  uint32_t gw;
  int port;
};

std::vector<Route4> random_routes4(std::mt19937& rng, int n) {
  std::vector<Route4> r;
  for (int i = 0; i < n; ++i) {
    int len = int(8 + rng() % 25);
    uint32_t a = rng() & k::prefix_mask(uint8_t(len));
    if ((a >> 28) >= 0xe) a &= 0x7fffffff;  // unicast prefixes
    uint32_t gw = rng() % 3 == 0 ? uint32_t(rng() | 1) & 0x7fffffff : 0u;
    r.push_back({a, len, gw, i % 7 == 6 ? -1 : int(rng() % 3)});
  }
  return r;
}

std::string routes_text(const std::vector<Route4>& rs) {
  std::string s;
  for (auto& r : rs) {
    uint8_t a[4], g[4];
    k::store_be32(a, r.addr);
    k::store_be32(g, r.gw);
    s += fmt::format("{}{}/{} {}{}", s.empty() ? "" : ", ", format_ipv4(a), r.len, r.gw ? format_ipv4(g) + " " : "",
                     r.port);
  }
  return s;
}

Bytes ether(uint16_t type) {
  Bytes f = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, uint8_t(type >> 8), uint8_t(type)};
  return f;
}

// Ethernet + IPv4 frames: destinations mostly under the routes, TTLs near
// expiry, options, multicast, and one in eight broken in some way.
std::vector<Bytes> ipv4_traffic(std::mt19937& rng, const std::vector<Route4>& routes, int n) {
  std::vector<Bytes> out;
  for (int i = 0; i < n; ++i) {
    Bytes f = ether(0x0800);
    uint32_t opt = rng() % 4 == 0 ? 4 * (1 + rng() % 3) : 0, hl = 20 + opt, pay = rng() % 90;
    Bytes ip(hl + pay);
    ip[0] = uint8_t(0x40 | hl / 4);
    k::store_be16(ip.data() + 2, uint16_t(hl + pay));
    k::store_be16(ip.data() + 4, uint16_t(i));
    static const uint8_t ttls[] = {0, 1, 2, 64, 255, 64, 64};
    ip[8] = ttls[rng() % 7];
    ip[9] = rng() % 2 ? 17 : 6;
    uint32_t src = 0x0a000000 | (rng() & 0xffffff), dst;
    const Route4& r = routes[rng() % routes.size()];
    switch (rng() % 8) {
      case 0: dst = rng(); break;
      case 1: dst = 0xe0000000 | (rng() & 0xfffffff); break;  // multicast destination
      default: dst = r.addr | (rng() & ~k::prefix_mask(uint8_t(r.len)));
    }
    k::store_be32(ip.data() + 12, src);
    k::store_be32(ip.data() + 16, dst);
    for (uint32_t j = 20; j < hl; ++j) ip[j] = 1;  // NOP options
    for (uint32_t j = hl; j < ip.size(); ++j) ip[j] = uint8_t(rng());
    k::store_be16(ip.data() + 10, k::ip_checksum(ip.data(), hl));
    f.insert(f.end(), ip.begin(), ip.end());
    if (rng() % 8 == 0) {
      switch (rng() % 7) {
        case 0: f[14] = 0x55; break;                        // version
        case 1: f[24] ^= 0x5a; break;                       // checksum
        case 2: f.resize(14 + rng() % 24); break;           // cut short
        case 3: k::store_be16(f.data() + 16, 1500); break;  // total length past the end
        case 4: f[14] = 0x44; break;                        // header length 16
        case 5:
          f[26] = 0xe0;
          k::store_be16(f.data() + 24, 0);
          k::store_be16(f.data() + 24, k::ip_checksum(f.data() + 14, hl));
          break;                                 // multicast source
        case 6: f.insert(f.end(), 6, 0); break;  // link padding
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Bytes> ipv6_traffic(std::mt19937& rng, const std::vector<std::array<uint8_t, 17>>& pfx, int n) {
  std::vector<Bytes> out;
  for (int i = 0; i < n; ++i) {
    Bytes f = ether(0x86dd);
    uint32_t pay = 8 + rng() % 40;
    Bytes ip(40 + pay);
    ip[0] = 0x60;
    k::store_be16(ip.data() + 4, uint16_t(pay));
    ip[6] = 17;
    ip[7] = uint8_t(1 + rng() % 64);
    ip[8] = 0xfd;
    for (int j = 9; j < 24; ++j) ip[j] = uint8_t(rng());
    const auto& p = pfx[rng() % pfx.size()];
    for (int j = 0; j < 16; ++j) ip[24 + j] = uint8_t(rng());
    if (rng() % 6) {  // under a prefix
      int len = p[16];
      for (int b = 0; b < len; ++b) {
        uint8_t m = uint8_t(0x80 >> (b % 8));
        ip[24 + b / 8] = uint8_t((ip[24 + b / 8] & ~m) | (p[b / 8] & m));
      }
    }
    f.insert(f.end(), ip.begin(), ip.end());
    out.push_back(std::move(f));
  }
  return out;
}

uint64_t drops(test::Run& r, const std::string& e) { return r.n(e + ".drops"); }
}  // namespace

// ---------------------------------------------------------------- host backend
TEST(HostDevice, StreamsKeepTheirOrderButFinishInAnyOrder) {
  dev::DeviceOptions o;
  o.delay_us = 300;
  o.host_threads = 4;
  auto d = dev::make_host_device(o);
  bool saw_pending = false, saw_reorder = false;
  for (int trial = 0; trial < 20 && !(saw_pending && saw_reorder); ++trial) {
    constexpr int kStreams = 8;
    std::vector<dev::Stream*> s;
    std::vector<uint8_t*> buf, out1, out2;
    for (int i = 0; i < kStreams; ++i) {
      s.push_back(d->stream_create());
      buf.push_back(static_cast<uint8_t*>(d->dev_alloc(256)));
      out1.push_back(static_cast<uint8_t*>(d->host_alloc(256)));
      out2.push_back(static_cast<uint8_t*>(d->host_alloc(256)));
      d->memset(s[i], buf[i], i + 1, 256);
      d->d2h(s[i], out1[i], buf[i], 256);
      d->memset(s[i], buf[i], 100 + i, 256);
      d->d2h(s[i], out2[i], buf[i], 256);
      d->record(s[i]);
    }
    std::string err;
    saw_pending |= d->poll(s[0], err) == dev::Status::Pending;
    std::vector<int> done_order;
    std::vector<bool> done(kStreams);
    while (int(done_order.size()) < kStreams)
      for (int i = 0; i < kStreams; ++i)
        if (!done[i] && d->poll(s[i], err) == dev::Status::Done) done[i] = true, done_order.push_back(i);
    saw_reorder |= !std::is_sorted(done_order.begin(), done_order.end());
    for (int i = 0; i < kStreams; ++i) {
      // Each stream ran its operations in the order they were queued.
      EXPECT_EQ(std::count(out1[i], out1[i] + 256, uint8_t(i + 1)), 256);
      EXPECT_EQ(std::count(out2[i], out2[i] + 256, uint8_t(100 + i)), 256);
      d->stream_destroy(s[i]);
      d->dev_free(buf[i]);
      d->host_free(out1[i]);
      d->host_free(out2[i]);
    }
  }
  EXPECT_TRUE(saw_pending) << "operations completed before poll(): not asynchronous";
  EXPECT_TRUE(saw_reorder) << "streams always finished in order despite random delays";
}

// Device::follow: each stream reads a shared word and then writes its own
// number there, after the stream before it; with random delays only the
// ordering makes each read see its predecessor's write. A stream destroyed
// while the next still waits for it outlives that wait.
TEST(HostDevice, AFollowingStreamStartsAfterWhatItFollowsFinished) {
  dev::DeviceOptions o;
  o.delay_us = 200;
  o.host_threads = 4;
  auto d = dev::make_host_device(o);
  ASSERT_TRUE(d->orders_streams());
  constexpr int kStreams = 12;
  auto* shared = static_cast<uint64_t*>(d->dev_alloc(8));
  *shared = 0;
  std::vector<dev::Stream*> s;
  std::vector<uint64_t> seen(kStreams, ~0ull), mine(kStreams);
  for (int i = 0; i < kStreams; ++i) {
    s.push_back(d->stream_create());
    mine[i] = uint64_t(i) + 1;
    d->memset(s[i], &seen[i], 0xff, 8);  // (something queued before the wait)
    if (i) d->follow(s[i], s[i - 1]);
    d->d2h(s[i], &seen[i], shared, 8);
    d->h2d(s[i], shared, &mine[i], 8);
    d->record(s[i]);
  }
  d->stream_destroy(s[0]);  // (s[1] may still wait for it)
  std::string err;
  for (int i = 1; i < kStreams; ++i) EXPECT_EQ(d->wait(s[i], err), dev::Status::Done) << err;
  for (int i = 0; i < kStreams; ++i) EXPECT_EQ(seen[i], uint64_t(i)) << "stream " << i;
  EXPECT_EQ(*shared, uint64_t(kStreams));
  for (int i = 1; i < kStreams; ++i) d->stream_destroy(s[i]);
  d->dev_free(shared);
}

// A chain's aggregates reuse their streams: two streams follow each other in
// turn (each new piece of work on one follows what the other has queued),
// without waiting in between. (A pool thread holding one stream's lock while
// taking the other's deadlocked here.)
TEST(HostDevice, StreamsThatFollowEachOtherInTurnKeepTheOrder) {
  dev::DeviceOptions o;
  o.delay_us = 20;
  o.host_threads = 4;
  auto d = dev::make_host_device(o);
  constexpr int kWork = 400;
  auto* shared = static_cast<uint64_t*>(d->dev_alloc(8));
  *shared = 0;
  dev::Stream* s[2] = {d->stream_create(), d->stream_create()};
  std::vector<uint64_t> seen(kWork, ~0ull), mine(kWork);
  for (int i = 0; i < kWork; ++i) {
    dev::Stream* me = s[i % 2];
    mine[i] = uint64_t(i) + 1;
    if (i) d->follow(me, s[(i + 1) % 2]);
    d->d2h(me, &seen[i], shared, 8);
    d->h2d(me, shared, &mine[i], 8);
  }
  std::string err;
  for (dev::Stream* x : s) {
    d->record(x);
    EXPECT_EQ(d->wait(x, err), dev::Status::Done) << err;
  }
  for (int i = 0; i < kWork; ++i) ASSERT_EQ(seen[i], uint64_t(i)) << "work " << i;
  for (dev::Stream* x : s) d->stream_destroy(x);
  d->dev_free(shared);
}

TEST(HostDevice, InjectedFaultsFailTheStreamUntilReset) {
  dev::DeviceOptions o;
  o.fault_rate = 1;
  auto d = dev::make_host_device(o);
  dev::Stream* s = d->stream_create();
  uint8_t* b = static_cast<uint8_t*>(d->dev_alloc(64));
  uint8_t h[64] = {};
  d->h2d(s, b, h, 64);
  d->record(s);
  std::string err;
  EXPECT_EQ(d->wait(s, err), dev::Status::Failed);
  EXPECT_NE(err.find("injected fault in host-to-device copy"), std::string::npos) << err;
  EXPECT_GE(d->injected_faults(), 1u);
  d->reset(s);
  d->record(s);
  EXPECT_EQ(d->poll(s, err), dev::Status::Done);
  d->stream_destroy(s);
  d->dev_free(b);
}

// ---------------------------------------------------------------- ROI packing
namespace {
// A step that flips every byte of its written ranges, once, on the host.
struct FlipStep : offload::Offloadable {
  Element* e = nullptr;
  std::vector<offload::Range> ranges;
  std::vector<uint32_t> idx;
  Element& offload_element() override { return *e; }
  void offload_declare(offload::Plan& plan) override {
    for (auto& r : ranges) idx.push_back(plan.add(r));
  }
  bool offload_launch(offload::Launch& L, std::string&) override {
    EXPECT_TRUE(L.host);
    const k::AggView& v = L.view;
    for (uint32_t i = 0; i < v.n; ++i) {
      std::vector<uint32_t> offs;
      for (size_t j = 0; j < ranges.size(); ++j) {
        if (!ranges[j].write) continue;
        uint32_t o = v.roff[idx[j] * v.n + i];
        if (o == k::kAbsent) continue;
        for (uint32_t b = 0; b < v.rlen[idx[j] * v.n + i]; ++b) offs.push_back(o + b);
      }
      std::sort(offs.begin(), offs.end());
      offs.erase(std::unique(offs.begin(), offs.end()), offs.end());
      for (uint32_t o : offs) v.data[o] ^= 0xff;
    }
    return true;
  }
};
}  // namespace

TEST(Roi, AnchorsResolvePerPacket) {
  auto r = test::run("Idle;");
  ASSERT_TRUE(r->ok) << r->errors;
  PacketPool& pool = r->rt->worker(0).pool();
  Bytes f = ether(0x0800);
  Bytes ip(24 + 20 + 10, 0);
  ip[0] = 0x46, ip[9] = 6, ip[24 + 12] = 0x50;  // IHL 6, TCP, data offset 5
  f.insert(f.end(), ip.begin(), ip.end());
  Packet* p = pool.make(f.data(), uint32_t(f.size()));
  uint32_t s, e;
  offload::Range ipdst{offload::Anchor::IP, 16, 20, 20};
  EXPECT_FALSE(offload::resolve(ipdst, p, s, e)) << "no network header yet";
  ipdst.ip_at = 14;
  ASSERT_TRUE(offload::resolve(ipdst, p, s, e));
  EXPECT_EQ(s, 30u);
  EXPECT_EQ(e, 34u);
  offload::Range l4{offload::Anchor::L4, 0, 4, 0, false, 14};
  ASSERT_TRUE(offload::resolve(l4, p, s, e));
  EXPECT_EQ(s, 14u + 24);
  offload::Range pay{offload::Anchor::Payload, 0, offload::kToEnd, 0, false, 14};
  ASSERT_TRUE(offload::resolve(pay, p, s, e));
  EXPECT_EQ(s, 14u + 24 + 20);
  EXPECT_EQ(e, uint32_t(f.size()));
  offload::Range far{offload::Anchor::IP, 0, 100, 100, false, 14};
  EXPECT_FALSE(offload::resolve(far, p, s, e)) << "needs 100 bytes from the IP header";
  offload::Range cut{offload::Anchor::Data, 40, 400};
  ASSERT_TRUE(offload::resolve(cut, p, s, e));
  EXPECT_EQ(e, uint32_t(f.size())) << "cut at the packet's end";
  p->set_network_header(14);
  ipdst.ip_at = -1;
  ASSERT_TRUE(offload::resolve(ipdst, p, s, e));
  EXPECT_EQ(s, 30u);
  pool.free(p);
  test::finish(*r);
}

TEST(Roi, PackedBytesMatchTheRangesTheirUnionAndComeBackWhenWritten) {
  auto r = test::run("x :: Null; Idle -> x -> Idle;");
  ASSERT_TRUE(r->ok) << r->errors;
  Element& owner = *r->rt->router(0).find("x");
  PacketPool& pool = r->rt->worker(0).pool();
  std::mt19937 rng(7);  // (300 random plans: every way ranges overlap, touch, nest and are read early)
  for (int trial = 0; trial < 300; ++trial) {
    FlipStep a, b;
    a.e = b.e = &owner;
    for (FlipStep* st : {&a, &b})
      for (int j = 0, nr = 1 + int(rng() % 3); j < nr; ++j) {
        offload::Range x;
        x.anchor = offload::Anchor(rng() % 5);
        x.begin = int32_t(rng() % 30);
        x.end = rng() % 5 == 0 ? offload::kToEnd : x.begin + int32_t(rng() % 40);
        x.need = rng() % 3 == 0 ? x.begin + int32_t(rng() % 60) : 0;
        x.write = rng() % 2;
        x.ip_at = rng() % 3 == 0 ? 14 : -1;
        st->ranges.push_back(x);
      }
    offload::ChainStats stats;
    offload::Chain chain(owner, nullptr, {&a, &b}, 1, stats);
    PacketBatch* batch = new PacketBatch(64);
    std::vector<Bytes> orig;
    auto traffic = ipv4_traffic(rng, {{0x0a000000, 8, 0, 0}}, 64);
    for (auto& f : traffic) {
      Packet* p = pool.make(f.data(), uint32_t(f.size()));
      if (rng() % 4) p->set_mac_header(0);
      if (rng() % 4 && f.size() >= 34) p->set_network_header(14);
      if (rng() % 4 && f.size() >= 34) p->set_transport_header(14 + (f[14] & 0xf) * 4);
      batch->append(p);
      orig.push_back(f);
    }
    offload::Aggregate* ag = chain.begin(batch, false);
    const auto& R = chain.plan().ranges();
    const k::AggView v = ag->view(ag->host);
    // Ranges read before any step writes (Plan::read_early) travel as a
    // union of their own: the packed bytes are that union plus the union
    // of the others.
    size_t union_bytes = 0;
    std::vector<std::vector<int>> written(64);  // how many steps write each byte
    for (uint32_t i = 0; i < 64; ++i) {
      Packet* p = batch->at(i);
      std::vector<bool> in(p->length() + 1), in_early(p->length() + 1);
      std::vector<int> w(p->length() + 1);
      for (uint32_t x = 0; x < R.size(); ++x) {
        uint32_t s, e;
        bool has = offload::resolve(R[x], p, s, e);
        uint32_t o = v.roff[x * 64 + i];
        ASSERT_EQ(has, o != k::kAbsent) << R[x].unparse();
        if (!has) continue;
        ASSERT_EQ(v.rlen[x * 64 + i], e - s);
        EXPECT_EQ(0, std::memcmp(v.data + o, p->data() + s, e - s)) << "packed bytes of " << R[x].unparse();
        for (uint32_t y = s; y < e; ++y) (chain.plan().read_early(x) ? in_early : in)[y] = true;
      }
      // Each step flips the bytes of its own written ranges once.
      for (FlipStep* st : {&a, &b}) {
        std::vector<bool> mine(p->length() + 1);
        for (size_t j = 0; j < st->ranges.size(); ++j) {
          uint32_t s, e;
          if (st->ranges[j].write && offload::resolve(st->ranges[j], p, s, e))
            for (uint32_t y = s; y < e; ++y) mine[y] = true;
        }
        for (uint32_t y = 0; y < p->length(); ++y) w[y] += mine[y];
      }
      union_bytes +=
          size_t(std::count(in.begin(), in.end(), true) + std::count(in_early.begin(), in_early.end(), true));
      written[i] = w;
    }
    EXPECT_EQ(ag->rw_bytes + ag->ro_bytes, union_bytes) << "packed bytes are the union of the ranges";
    EXPECT_EQ(stats.roi_bytes.get(), union_bytes);
    chain.step(*ag, 0);
    chain.step(*ag, 1);
    chain.end(*ag);
    ASSERT_TRUE(chain.ready(*ag));
    chain.complete(*ag);
    for (uint32_t i = 0; i < 64; ++i) {
      Packet* p = batch->at(i);
      for (uint32_t y = 0; y < p->length(); ++y)
        ASSERT_EQ(p->data()[y], uint8_t(written[i][y] % 2 ? orig[i][y] ^ 0xff : orig[i][y]))
            << "byte " << y << " of packet " << i << " written by " << written[i][y] << " steps";
    }
    chain.release(*ag);
    batch->for_each([&](uint32_t, Packet* p) { pool.free(p); });
    delete batch;
  }
  test::finish(*r);
}

// ---------------------------------------------------------------- routers
namespace {
struct RouterCase {
  std::string in, routes;
};

RouterCase make_ipv4_case(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  auto routes = random_routes4(rng, 40);
  routes.push_back({0, 0, 0x0a0a0a0a, 2});  // a default via a gateway
  RouterCase c{tmp(fmt::format("v4-{}.pcap", seed)), routes_text(routes)};
  write_pcap(c.in, ipv4_traffic(rng, routes, n));
  return c;
}

// The IPv4 path three ways. Output i of the router writes OUT<i>.pcap;
// outputs 0 and 1 decrement the TTL, output 2 does not.
std::string cpu_v4(const RouterCase& c, const std::string& out, const std::string& balancer = "") {
  return fmt::format(R"(
    FromDump({}, STOP true) -> {} c :: CheckIPHeader(14) -> rt :: DirectIPLookup({});
    rt[0] -> t0 :: DecIPTTL -> ToDump({}0.pcap);
    rt[1] -> t1 :: DecIPTTL -> ToDump({}1.pcap);
    rt[2] -> ToDump({}2.pcap);)",
                     c.in, balancer, c.routes, out, out, out);
}
std::string snap_v4(const RouterCase& c, const std::string& out, uint32_t batch, const std::string& cq = "",
                    uint32_t zero_copy = 0) {
  return fmt::format(R"(
    FromDump({}, STOP true) -> Batcher({}, 1ms) -> h :: HostToDevice(INFLIGHT 4, ZERO_COPY {})
      -> c :: GPUCheckIPHeader(14) -> rt :: GPUIPLookup({}) -> t0 :: GPUDecIPTTL(PRED 0) -> t1 :: GPUDecIPTTL(PRED 1)
      -> DeviceToHost -> cq :: CompletionQueue({}) -> Debatcher -> d :: Dispatcher(0, 1, 2);
    d[0] -> ToDump({}0.pcap); d[1] -> ToDump({}1.pcap); d[2] -> ToDump({}2.pcap);)",
                     c.in, batch, zero_copy, c.routes, cq, out, out, out);
}

test::Options opts(uint32_t delay_us = 0, double faults = 0) {
  test::Options o = test::default_options();
  o.offload.device.delay_us = delay_us;
  o.offload.device.fault_rate = faults;
  o.offload.inflight = 4;
  return o;
}

void expect_same_outputs(const std::string& a, const std::string& b, int nout = 3) {
  for (int i = 0; i < nout; ++i) {
    auto fa = test::read_pcap(fmt::format("{}{}.pcap", a, i)), fb = test::read_pcap(fmt::format("{}{}.pcap", b, i));
    ASSERT_EQ(fa.size(), fb.size()) << "output " << i;
    for (size_t j = 0; j < fa.size(); ++j) ASSERT_EQ(fa[j].bytes, fb[j].bytes) << "output " << i << " packet " << j;
  }
}

void expect_same_drops(test::Run& cpu, test::Run& off) {
  EXPECT_EQ(cpu.h("c.drop_details"), off.h("c.drop_details"));
  EXPECT_EQ(drops(cpu, "c"), drops(off, "c"));
  EXPECT_EQ(drops(cpu, "rt"), drops(off, "rt"));
  EXPECT_EQ(drops(cpu, "t0") + drops(cpu, "t1"), drops(off, "t0") + drops(off, "t1"));
}
}  // namespace

TEST(OffloadRouter, IPv4NbaAndSnapFormsEqualTheCpuRouter) {
  RouterCase c = make_ipv4_case(11, 6000);
  auto cpu = test::run(cpu_v4(c, tmp("cpu")));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  uint64_t sent = 0;
  for (int i = 0; i < 3; ++i) sent += test::read_pcap(tmp("cpu") + std::to_string(i) + ".pcap").size();
  EXPECT_GT(sent, 3000u);
  EXPECT_GT(drops(*cpu, "c"), 100u) << "the traffic has bad headers";
  EXPECT_GT(drops(*cpu, "t0") + drops(*cpu, "t1"), 100u) << "the traffic has expiring TTLs";
  // NBA: everything to the device, then half.
  for (const char* frac : {"1", "0.5"}) {
    auto nba = test::run_with(cpu_v4(c, tmp("nba"), fmt::format("OffloadBalancer({}) ->", frac)), opts());
    ASSERT_TRUE(nba->ok) << nba->errors;
    expect_same_outputs(tmp("cpu"), tmp("nba"));
    expect_same_drops(*cpu, *nba);
    EXPECT_GT(nba->n("c.offload_packets"), 0u);
    EXPECT_EQ(nba->n("c.offload_cpu_fault"), 0u) << nba->h("c.offload_last_error");
    // The chain: CheckIPHeader -> DirectIPLookup -> DecIPTTL (output 0).
    EXPECT_EQ(nba->h("c.offload_chain").substr(0, 20), "c -> rt -> t0\nrange ");
    test::finish(*nba);
  }
  auto snap = test::run_with(snap_v4(c, tmp("snap"), 512), opts());
  ASSERT_TRUE(snap->ok) << snap->errors;
  expect_same_outputs(tmp("cpu"), tmp("snap"));
  expect_same_drops(*cpu, *snap);
  EXPECT_EQ(snap->n("h.packets"), 6000u);
  EXPECT_EQ(snap->n("h.cpu_fault"), 0u) << snap->h("h.last_error");
  test::finish(*snap);
  test::finish(*cpu);
}

TEST(OffloadRouter, OrderSurvivesDelaysThatFinishAggregatesOutOfOrder) {
  RouterCase c = make_ipv4_case(12, 4000);
  auto cpu = test::run(cpu_v4(c, tmp("ocpu")));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  test::Options o = opts(200);
  o.offload.batches = 1;  // many small aggregates in flight
  o.batch_capacity = 32;
  auto nba = test::run_with(cpu_v4(c, tmp("onba"), "OffloadBalancer(0.7) ->"), o);
  ASSERT_TRUE(nba->ok) << nba->errors;
  expect_same_outputs(tmp("ocpu"), tmp("onba"));
  EXPECT_GT(nba->n("c.offload_inflight_max"), 1u);
  test::finish(*nba);
  auto snap = test::run_with(snap_v4(c, tmp("osnap"), 64), opts(200));
  ASSERT_TRUE(snap->ok) << snap->errors;
  expect_same_outputs(tmp("ocpu"), tmp("osnap"));
  EXPECT_GT(snap->n("h.inflight_max"), 1u);
  EXPECT_GT(snap->n("cq.highwater_length"), 1u);
  test::finish(*snap);
  // Unordered completion: the same packets, in whatever order.
  auto un = test::run_with(snap_v4(c, tmp("usnap"), 64, "ORDERED false"), opts(200));
  ASSERT_TRUE(un->ok) << un->errors;
  for (int i = 0; i < 3; ++i) {
    auto fa = test::read_pcap(tmp("ocpu") + std::to_string(i) + ".pcap");
    auto fb = test::read_pcap(tmp("usnap") + std::to_string(i) + ".pcap");
    std::vector<Bytes> a, b;
    for (auto& f : fa) a.push_back(f.bytes);
    for (auto& f : fb) b.push_back(f.bytes);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << "output " << i;
  }
  test::finish(*un);
  test::finish(*cpu);
}

// GASPP's packet scheduling: kernels take each aggregate's packets sorted by
// protocol and length, and the results are those of the CPU router, in the
// same order, on the device, with out-of-order completions and with faults
// (the CPU fallback takes the same order).
// Zero-copy aggregates (kernels read and write pinned host memory in
// place, no copies queued) give the CPU router's outputs, with device
// delays and faults too; aggregates over the limit are still copied.
TEST(OffloadRouter, ZeroCopyAggregatesEqualTheCpuRouter) {
  RouterCase c = make_ipv4_case(23, 5000);
  auto cpu = test::run(cpu_v4(c, tmp("zcpu")));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  for (double faults : {0.0, 0.2}) {
    auto snap = test::run_with(snap_v4(c, tmp("zsnap"), 256, "", 4096), opts(100, faults));
    ASSERT_TRUE(snap->ok) << snap->errors;
    expect_same_outputs(tmp("zcpu"), tmp("zsnap"));
    expect_same_drops(*cpu, *snap);
    EXPECT_GT(snap->n("h.zero_copy"), 0u);
    if (faults == 0) {
      EXPECT_EQ(snap->n("h.zero_copy"), snap->n("h.device_aggregates")) << "all small enough";
    }
    test::finish(*snap, false, faults > 0);
  }
  auto big = test::run_with(snap_v4(c, tmp("zbig"), 256, "", 4), opts());  // 4 bytes a packet: none fits
  ASSERT_TRUE(big->ok) << big->errors;
  expect_same_outputs(tmp("zcpu"), tmp("zbig"));
  EXPECT_EQ(big->n("h.zero_copy"), 0u);
  EXPECT_GT(big->n("h.device_aggregates"), 0u);
  test::finish(*big);
  test::finish(*cpu);
}

// The persistent kernel (CUDA, SHOAL_CUDA_PERSISTENT): each aggregate's
// copies in, launch and copies out (or, zero-copy, its launch alone) are
// put on its ring as one program and marked done by it, with no driver
// call, and give the CPU router's outputs, with device faults too; without
// faults every aggregate went through the ring. CI's host backend has no
// such kernel: the ring's protocol is tested with host threads in WorkRing.*.
TEST(OffloadRouter, ThePersistentKernelsRingGivesTheCpuRoutersOutputs) {
  const char* kind = std::getenv("SHOAL_TEST_DEVICE");
  if (!kind || std::string(kind) != "cuda") GTEST_SKIP() << "CUDA only (SHOAL_TEST_DEVICE=cuda)";
  struct Env {  // (restored after: bench/gpu/run.sh runs every offload test with it too)
    const char* was = std::getenv("SHOAL_CUDA_PERSISTENT");
    std::string old = was ? was : "";
    Env() { setenv("SHOAL_CUDA_PERSISTENT", "1", 1); }
    ~Env() {
      if (was)
        setenv("SHOAL_CUDA_PERSISTENT", old.c_str(), 1);
      else
        unsetenv("SHOAL_CUDA_PERSISTENT");
    }
  } env;
  RouterCase c = make_ipv4_case(24, 6000);
  auto cpu = test::run(cpu_v4(c, tmp("pcpu")));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  for (uint32_t zero_copy : {4096u, 0u})
    for (double faults : {0.0, 0.2}) {
      auto snap = test::run_with(snap_v4(c, tmp("psnap"), 128, "", zero_copy), opts(0, faults));
      ASSERT_TRUE(snap->ok) << snap->errors;
      expect_same_outputs(tmp("pcpu"), tmp("psnap"));
      expect_same_drops(*cpu, *snap);
      EXPECT_GT(snap->n("h.ring_launches"), 10u) << snap->h("h.device");
      if (faults == 0) {
        EXPECT_EQ(snap->n("h.ring_launches"), snap->n("h.device_aggregates")) << "zero-copy " << zero_copy;
        EXPECT_EQ(snap->n("h.zero_copy"), zero_copy ? snap->n("h.device_aggregates") : 0u);
      }
      test::finish(*snap, false, faults > 0);
    }
  test::finish(*cpu);
}

TEST(OffloadRouter, PacketSchedulingChangesNoResult) {
  RouterCase c = make_ipv4_case(21, 5000);
  auto cpu = test::run(cpu_v4(c, tmp("scpu")));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  for (double faults : {0.0, 0.2}) {
    test::Options o = opts(100, faults);
    o.offload.schedule = true;
    auto nba = test::run_with(cpu_v4(c, tmp("snba"), "OffloadBalancer(1) ->"), o);
    ASSERT_TRUE(nba->ok) << nba->errors;
    expect_same_outputs(tmp("scpu"), tmp("snba"));
    expect_same_drops(*cpu, *nba);
    EXPECT_GT(nba->n("c.offload_reordered"), 0u) << "the aggregates were not reordered: the test shows nothing";
    test::finish(*nba, false, faults > 0);
    auto snap = test::run_with(snap_v4(c, tmp("ssnap"), 256), o);
    ASSERT_TRUE(snap->ok) << snap->errors;
    expect_same_outputs(tmp("scpu"), tmp("ssnap"));
    expect_same_drops(*cpu, *snap);
    EXPECT_GT(snap->n("h.reordered"), 0u);
    test::finish(*snap, false, faults > 0);
  }
  test::finish(*cpu);
}

TEST(OffloadRouter, FaultsFallBackToTheCpuLosingAndReorderingNothing) {
  RouterCase c = make_ipv4_case(13, 4000);
  auto cpu = test::run(cpu_v4(c, tmp("fcpu")));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  auto snap = test::run_with(snap_v4(c, tmp("fsnap"), 128), opts(20, 0.1));
  ASSERT_TRUE(snap->ok) << snap->errors;
  expect_same_outputs(tmp("fcpu"), tmp("fsnap"));
  expect_same_drops(*cpu, *snap);
  EXPECT_GT(snap->n("h.cpu_fault"), 0u);
  EXPECT_GT(snap->n("h.device_aggregates"), 0u);
  EXPECT_NE(snap->h("h.last_error").find("injected fault"), std::string::npos);
  test::finish(*snap, false, true);
  test::Options o = opts(20, 0.1);
  o.offload.batches = 2;
  auto nba = test::run_with(cpu_v4(c, tmp("fnba"), "OffloadBalancer(1) ->"), o);
  ASSERT_TRUE(nba->ok) << nba->errors;
  expect_same_outputs(tmp("fcpu"), tmp("fnba"));
  expect_same_drops(*cpu, *nba);
  EXPECT_GT(nba->n("c.offload_cpu_fault"), 0u);
  test::finish(*nba, false, true);
  test::finish(*cpu);
}

TEST(OffloadRouter, NoDeviceRunsEverythingOnTheCpuCounted) {
  DeviceChoice ch;
  std::string err;
  if (select_device("cuda", ch, err)) GTEST_SKIP() << "a CUDA device is usable here";
  RouterCase c = make_ipv4_case(14, 1000);
  auto cpu = test::run(cpu_v4(c, tmp("ncpu")));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  test::Options o = opts();
  o.offload.device.kind = "cuda";  // unusable: the elements say so once and use the CPU
  auto snap = test::run_with(snap_v4(c, tmp("nsnap"), 256), o);
  ASSERT_TRUE(snap->ok) << snap->errors;
  expect_same_outputs(tmp("ncpu"), tmp("nsnap"));
  EXPECT_EQ(snap->n("h.cpu_fault"), snap->n("h.aggregates"));
  EXPECT_EQ(snap->n("h.fault_packets"), 1000u);
  test::finish(*snap, false, true);
  auto nba = test::run_with(cpu_v4(c, tmp("nnba"), "OffloadBalancer(1) ->"), o);
  ASSERT_TRUE(nba->ok) << nba->errors;
  expect_same_outputs(tmp("ncpu"), tmp("nnba"));
  EXPECT_GT(nba->n("c.offload_fault_packets"), 0u);
  test::finish(*nba, false, true);
  test::finish(*cpu);
}

TEST(OffloadRouter, PredicatesRouteEveryPacketExactlyOnce) {
  // Routes to four predicate bits; only bit-1 packets get their TTL
  // decremented on the device; the Dispatcher splits by bit.
  RouterCase c = make_ipv4_case(15, 3000);
  std::mt19937 rng(3);
  std::string routes;
  for (int i = 0; i < 16; ++i) routes += fmt::format("{}{}.0.0.0/8 {}", routes.empty() ? "" : ", ", 1 + i * 15, i % 4);
  routes += ", 0.0.0.0/0 3";
  std::string cpu_cfg = fmt::format(R"(
    FromDump({}, STOP true) -> c :: CheckIPHeader(14) -> rt :: DirectIPLookup({});
    rt[0] -> ToDump({}0.pcap); rt[1] -> t :: DecIPTTL -> ToDump({}1.pcap); rt[2] -> ToDump({}2.pcap);
    rt[3] -> ToDump({}3.pcap);)",
                                    c.in, routes, tmp("pcpu"), tmp("pcpu"), tmp("pcpu"), tmp("pcpu"));
  std::string snap_cfg = fmt::format(R"(
    FromDump({}, STOP true) -> c :: CheckIPHeader(14) -> Batcher(256) -> h :: HostToDevice
      -> rt :: GPUIPLookup({}) -> t :: GPUDecIPTTL(PRED 1) -> DeviceToHost -> CompletionQueue -> Debatcher
      -> d :: Dispatcher(0, 1, 2, 3);
    d[0] -> ToDump({}0.pcap); d[1] -> ToDump({}1.pcap); d[2] -> ToDump({}2.pcap); d[3] -> ToDump({}3.pcap);)",
                                     c.in, routes, tmp("psnap"), tmp("psnap"), tmp("psnap"), tmp("psnap"));
  auto cpu = test::run(cpu_cfg);
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  auto snap = test::run_with(snap_cfg, opts(50));
  ASSERT_TRUE(snap->ok) << snap->errors;
  expect_same_outputs(tmp("pcpu"), tmp("psnap"), 4);
  uint64_t out = 0;
  for (int i = 0; i < 4; ++i) {
    uint64_t n = test::read_pcap(tmp("psnap") + std::to_string(i) + ".pcap").size();
    EXPECT_GT(n, 0u) << "output " << i;
    out += n;
  }
  EXPECT_EQ(out + drops(*snap, "rt") + drops(*snap, "t") + drops(*snap, "d"), snap->n("h.packets"));
  EXPECT_EQ(drops(*snap, "d"), 0u);
  EXPECT_EQ(drops(*cpu, "t"), drops(*snap, "t"));
  test::finish(*snap);
  test::finish(*cpu);
}

TEST(OffloadRouter, RoiBytesAreTheDeclaredUnion) {
  // GPUCheckIPHeader reads at most 60 header bytes from offset 14; DecIPTTL
  // without MULTICAST reads/writes inside them, after: the header travels
  // read-only and the TTL word written (with the destination's first byte
  // DecIPTTL reads), and only those come back.
  std::mt19937 rng(16);
  auto frames = ipv4_traffic(rng, {{0x0a000000, 8, 0, 0}}, 2000);
  write_pcap(tmp("roi.pcap"), frames);
  uint64_t want = 0;
  for (auto& f : frames)  // (DecIPTTL's two ranges need a whole 20-byte header)
    want += (f.size() > 14 ? std::min<size_t>(60, f.size() - 14) : 0) + (f.size() >= 34 ? 4 + 1 : 0);
  auto r = test::run_with(fmt::format(R"(
    FromDump({}, STOP true) -> Batcher(500) -> h :: HostToDevice -> GPUCheckIPHeader(14) -> GPUDecIPTTL(MULTICAST false)
      -> DeviceToHost -> CompletionQueue -> Debatcher -> Discard;)",
                                      tmp("roi.pcap")),
                          opts());
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("h.roi_bytes"), want);
  EXPECT_NE(r->h("h.chain").find("rw [IP+8, IP+12) (IP at 14)"), std::string::npos) << r->h("h.chain");
  test::finish(*r);
  // A lookup alone moves only annotations: no packet bytes at all, and
  // 12 bytes per packet each way (verdict, predicates, DST_IP: the zeroed
  // words travel in the aggregate's one copy), plus alignment per aggregate.
  auto l = test::run_with(fmt::format(R"(
    FromDump({}, STOP true) -> CheckIPHeader(14) -> Batcher(500) -> h :: HostToDevice -> GPUIPLookup(0.0.0.0/0 0)
      -> DeviceToHost -> CompletionQueue -> Debatcher -> Discard;)",
                                      tmp("roi.pcap")),
                          opts());
  ASSERT_TRUE(l->ok) << l->errors;
  uint64_t pk = l->n("h.packets"), ag = l->n("h.aggregates"), dev = l->n("h.device_aggregates");
  EXPECT_EQ(l->n("h.roi_bytes"), 0u);
  if (dev == ag) {  // all of them on the device
    EXPECT_LE(l->n("h.h2d_bytes"), 12 * pk + 128 * ag);
    EXPECT_LE(l->n("h.d2h_bytes"), 12 * pk + 64 * ag);
    EXPECT_GE(l->n("h.d2h_bytes"), 12 * pk);
  }
  test::finish(*l);
}

TEST(OffloadRouter, IPv6NbaAndSnapFormsEqualTheCpuRouter) {
  std::mt19937 rng(17);
  std::vector<std::array<uint8_t, 17>> pfx;
  std::string routes;
  for (int i = 0; i < 30; ++i) {
    std::array<uint8_t, 17> p{};
    p[0] = 0xfd;
    for (int j = 1; j < 16; ++j) p[j] = uint8_t(rng());
    int len = 16 + int(rng() % 49);
    for (int b = len; b < 128; ++b) p[b / 8] &= uint8_t(~(0x80 >> (b % 8)));
    p[16] = uint8_t(len);
    pfx.push_back(p);
    routes += fmt::format("{}{}/{} {}{}", routes.empty() ? "" : ", ", format_ipv6(p.data()), len,
                          i % 3 == 0 ? "fe80::1 " : "", i % 5 == 4 ? -1 : int(i % 3));
  }
  write_pcap(tmp("v6.pcap"), ipv6_traffic(rng, pfx, 5000));
  auto cfg = [&](const std::string& out, const std::string& mid) {
    return fmt::format(R"(
      FromDump({}, STOP true) -> CheckIP6Header(OFFSET 14) -> {} rt :: LookupIP6Route({});
      rt[0] -> ToDump({}0.pcap); rt[1] -> ToDump({}1.pcap); rt[2] -> ToDump({}2.pcap);)",
                       tmp("v6.pcap"), mid, routes, out, out, out);
  };
  auto cpu = test::run(cfg(tmp("6cpu"), ""));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  EXPECT_GT(drops(*cpu, "rt"), 100u);
  auto nba = test::run_with(cfg(tmp("6nba"), "OffloadBalancer(0.8) ->"), opts(30));
  ASSERT_TRUE(nba->ok) << nba->errors;
  expect_same_outputs(tmp("6cpu"), tmp("6nba"));
  EXPECT_EQ(drops(*cpu, "rt"), drops(*nba, "rt"));
  EXPECT_GT(nba->n("rt.offload_packets"), 0u);
  test::finish(*nba);
  auto snap = test::run_with(fmt::format(R"(
      FromDump({}, STOP true) -> CheckIP6Header(OFFSET 14) -> Batcher(300) -> h :: HostToDevice
        -> rt :: GPUIP6Lookup({}) -> DeviceToHost -> CompletionQueue -> Debatcher -> d :: Dispatcher(0, 1, 2);
      d[0] -> ToDump({}0.pcap); d[1] -> ToDump({}1.pcap); d[2] -> ToDump({}2.pcap);)",
                                         tmp("v6.pcap"), routes, tmp("6snap"), tmp("6snap"), tmp("6snap")),
                             opts(30));
  ASSERT_TRUE(snap->ok) << snap->errors;
  expect_same_outputs(tmp("6cpu"), tmp("6snap"));
  EXPECT_EQ(drops(*cpu, "rt"), drops(*snap, "rt"));
  test::finish(*snap);
  test::finish(*cpu);
}

TEST(OffloadRouter, RouteChangesReachTheDeviceCopy) {
  // 10.0.0.5 first has no route, then one to output 0, then to output 1:
  // 200 packets in each phase. Each phase's source starts once the last
  // phase's packets are all out, so the changes follow the packets, not the
  // clock (a device's start-up, CUDA's context, must not decide the outcome).
  auto r = test::run_with(R"(
    s1 :: InfiniteSource(DATA \<45 00 00 1c 00 00 00 00 40 11 66 cc 0a 00 00 01 0a 00 00 05 00 00 00 00 00 00 00 00>,
                         LIMIT 200, ACTIVE false);
    s2 :: InfiniteSource(DATA \<45 00 00 1c 00 00 00 00 40 11 66 cc 0a 00 00 01 0a 00 00 05 00 00 00 00 00 00 00 00>,
                         LIMIT 200, ACTIVE false);
    s3 :: InfiniteSource(DATA \<45 00 00 1c 00 00 00 00 40 11 66 cc 0a 00 00 01 0a 00 00 05 00 00 00 00 00 00 00 00>,
                         LIMIT 200, ACTIVE false);
    s1 -> j :: CheckIPHeader -> OffloadBalancer(1) -> rt :: DirectIPLookup(192.168.0.0/16 1);
    s2 -> j; s3 -> j;
    rt[0] -> a :: Counter -> Discard;
    rt[1] -> b :: Counter -> Discard;
    Script(write s1.active true, label x, wait 1ms, goto x $(lt $(rt.drops) 200),
           write rt.add 10.0.0.0/8 0, write s2.active true, label y, wait 1ms, goto y $(lt $(a.count) 200),
           write rt.add 10.0.0.0/24 1, write s3.active true, label z, wait 1ms, goto z $(lt $(b.count) 200), stop);)",
                          opts());
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("rt.drops"), 200u);
  EXPECT_EQ(r->n("a.count"), 200u);
  EXPECT_EQ(r->n("b.count"), 200u);
  if (r->n("rt.offload_device_aggregates") > 0) {
    EXPECT_GE(r->n("rt.offload_uploads"), 3u);
  }
  test::finish(*r);
}

TEST(OffloadConfig, MisplacedElementsAreReported) {
  auto r =
      test::run("Idle -> Batcher -> HostToDevice -> Null -> DeviceToHost -> CompletionQueue -> Debatcher -> Discard;");
  EXPECT_FALSE(r->ok);
  EXPECT_NE(r->errors.find("only device elements"), std::string::npos) << r->errors;
  auto q = test::run("Idle -> Batcher -> HostToDevice -> DeviceToHost -> CompletionQueue -> Discard;");
  EXPECT_FALSE(q->ok);
  EXPECT_NE(q->errors.find("must go to a Debatcher"), std::string::npos) << q->errors;
  auto p = test::run("Idle -> GPUIPLookup(0.0.0.0/0 40) -> Discard;");
  EXPECT_FALSE(p->ok);
  EXPECT_NE(p->errors.find("names output 40"), std::string::npos) << p->errors;
  // A device element outside a HostToDevice chain drops, counted.
  auto o = test::run(R"(InfiniteSource(LIMIT 10, STOP true) -> g :: GPUDecIPTTL -> Discard;)");
  ASSERT_TRUE(o->ok) << o->errors;
  EXPECT_EQ(o->n("g.drops"), 10u);
  test::finish(*o);
}

// ---------------------------------------------------------------- datablocks
namespace {
// A host step that resizes the whole packet by random amounts at both ends
// (NBA's "whole packet with size delta"), writing a pattern into what it
// adds, and fills/reads a user block (pre/post functions).
struct ResizeStep : offload::Offloadable {
  Element* e = nullptr;
  uint32_t head = 0, tail = 0, whole = 0, blk = 0;
  std::mt19937 rng{3};
  std::vector<int> push, put;             // per packet: + push / - pull, + put / - take
  std::vector<uint32_t> pre_calls, post;  // what pre() wrote, what post() read
  Element& offload_element() override { return *e; }
  void offload_declare(offload::Plan& plan) override {
    whole = plan.add_resizable(head, tail);
    blk = plan.add_block(4, 4);
  }
  bool offload_resizes() const override { return true; }
  void offload_pre(offload::Aggregate& a) override {
    for (uint32_t i = 0; i < a.n; ++i) {
      uint32_t x = uint32_t(pre_calls.size());
      std::memcpy(a.block_in(blk) + 4 * i, &x, 4);
      pre_calls.push_back(x);
    }
  }
  bool offload_launch(offload::Launch& L, std::string&) override {
    const k::AggView& v = L.view;
    for (uint32_t i = 0; i < v.n; ++i) {
      int ph = push[i], pt = put[i];
      if (ph > 0) {
        uint8_t* d = k::whole_push(v, i, uint32_t(ph));
        if (!d) {  // no room: dropped (reason 0)
          k::step_result(v, L.ctl, i, -1);
          continue;
        }
        for (int j = 0; j < ph; ++j) d[j] = uint8_t(0xa0 + j);
      } else {
        k::whole_pull(v, i, uint32_t(-ph));
      }
      if (pt > 0) {
        uint8_t* d = k::whole_put(v, i, uint32_t(pt));
        if (!d) {
          k::step_result(v, L.ctl, i, -1);
          continue;
        }
        for (int j = 0; j < pt; ++j) d[j] = uint8_t(0x50 + j);
      } else {
        k::whole_take(v, i, uint32_t(-pt));
      }
      uint32_t in;
      std::memcpy(&in, L.block_in(blk) + 4 * i, 4);
      uint32_t out = in * 2654435761u ^ k::whole_len(v, i);
      std::memcpy(L.block_out(blk) + 4 * i, &out, 4);
    }
    return true;
  }
  void offload_post(offload::Aggregate& a, size_t s) override {
    for (uint32_t i = 0; i < a.n; ++i) {
      uint32_t x;
      std::memcpy(&x, a.block_out(blk) + 4 * i, 4);
      post.push_back(a.reached(i, s) ? x : 0);
    }
  }
};
}  // namespace

TEST(Datablocks, WholePacketsGrowAndShrinkAtBothEndsWithinTheirRoom) {
  auto r = test::run("x :: Null; Idle -> x -> Idle;");
  ASSERT_TRUE(r->ok) << r->errors;
  Element& owner = *r->rt->router(0).find("x");
  PacketPool& pool = r->rt->worker(0).pool();
  std::mt19937 rng(9);
  for (int trial = 0; trial < 30; ++trial) {
    ResizeStep st;
    st.e = &owner;
    st.head = rng() % 80, st.tail = rng() % 80;
    offload::ChainStats stats;
    offload::Chain chain(owner, nullptr, {&st}, 1, stats);
    ASSERT_TRUE(chain.error().empty()) << chain.error();
    PacketBatch* batch = new PacketBatch(64);
    std::vector<Bytes> orig;
    std::vector<uint32_t> hroom, troom;
    for (uint32_t i = 0; i < 64; ++i) {
      Bytes f(rng() % 300);
      for (auto& c : f) c = uint8_t(rng());
      uint32_t hr = rng() % 100;
      Packet* p = pool.alloc(uint32_t(f.size()), hr);
      ASSERT_NE(p, nullptr);
      if (!f.empty()) std::memcpy(p->data(), f.data(), f.size());
      p->set_network_header(0);
      batch->append(p);
      orig.push_back(f);
      hroom.push_back(p->headroom()), troom.push_back(p->tailroom());
      st.push.push_back(int(rng() % 120) - 40);
      st.put.push_back(int(rng() % 120) - 40);
    }
    offload::Aggregate* ag = chain.begin(batch, false);
    chain.run(*ag);
    ASSERT_TRUE(chain.ready(*ag));
    chain.complete(*ag);
    for (uint32_t i = 0; i < 64; ++i) {
      Packet* p = batch->at(i);
      int ph = st.push[i], pt = st.put[i];
      bool room = (ph <= 0 || uint32_t(ph) <= std::min(st.head, hroom[i]));
      Bytes want;
      if (ph > 0)
        for (int j = 0; j < ph; ++j) want.push_back(uint8_t(0xa0 + j));
      want.insert(want.end(), orig[i].begin() + std::min<size_t>(orig[i].size(), ph < 0 ? size_t(-ph) : 0),
                  orig[i].end());
      // put has the tail room (a pull frees room in front, not behind)
      room = room && (pt <= 0 || uint32_t(pt) <= std::min(st.tail, troom[i]));
      if (!room) {
        EXPECT_TRUE(k::verdict_dropped(ag->verdict(i))) << "packet " << i;
        continue;
      }
      ASSERT_EQ(ag->verdict(i), 0u);
      if (pt > 0)
        for (int j = 0; j < pt; ++j) want.push_back(uint8_t(0x50 + j));
      else
        want.resize(want.size() - std::min<size_t>(want.size(), size_t(-pt)));
      ASSERT_EQ(Bytes(p->data(), p->data() + p->length()), want)
          << "packet " << i << " push " << ph << " put " << pt << " head room " << std::min(st.head, hroom[i]);
      EXPECT_EQ(p->network_header_offset(), ph > 0 ? ph : -std::min<int64_t>(-ph, int64_t(orig[i].size())))
          << "header annotations keep pointing at the same bytes";
      uint32_t x = st.pre_calls[i] * 2654435761u ^ uint32_t(want.size());
      EXPECT_EQ(st.post[i], x) << "post() reads what the kernel wrote from pre()'s block";
    }
    EXPECT_EQ(st.pre_calls.size(), 64u) << "pre() runs once per packet";
    chain.release(*ag);
    batch->for_each([&](uint32_t, Packet* p) { pool.free(p); });
    delete batch;
  }
  test::finish(*r);
}

namespace {
// Independent checks of an IPv4/UDP header: both checksums, lengths.
void check_udpip(const Bytes& f, const Bytes& payload, uint16_t id, bool udp_checksum) {
  ASSERT_EQ(f.size(), payload.size() + 28);
  EXPECT_EQ(f[0], 0x45);
  EXPECT_EQ(k::load_be16(&f[2]), f.size());
  EXPECT_EQ(k::load_be16(&f[4]), id);
  EXPECT_EQ(f[9], 17);
  uint32_t s = 0;
  for (int j = 0; j < 20; j += 2) s += uint32_t(f[j] << 8 | f[j + 1]);
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  EXPECT_EQ(s, 0xffffu) << "IP checksum";
  EXPECT_EQ(Bytes(f.begin() + 28, f.end()), payload);
  if (!udp_checksum) {
    EXPECT_EQ(k::load_be16(&f[26]), 0) << "no UDP checksum";
    return;
  }
  // UDP: pseudo-header + header + payload sums to all ones
  s = 17 + uint32_t(f.size() - 20);
  for (int j = 12; j < 20; j += 2) s += uint32_t(f[j] << 8 | f[j + 1]);
  for (size_t j = 20; j < f.size(); j += 2) s += uint32_t(f[j] << 8 | (j + 1 < f.size() ? f[j + 1] : 0));
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  EXPECT_EQ(s, 0xffffu) << "UDP checksum";
}
}  // namespace

TEST(Datablocks, UDPIPEncapOnTheDeviceEqualsTheCpuElement) {
  std::mt19937 rng(21);
  std::vector<Bytes> frames;
  for (int i = 0; i < 3000; ++i) {
    Bytes f(i < 3 ? i : rng() % 1800);
    for (auto& c : f) c = uint8_t(rng());
    frames.push_back(f);
  }
  std::string in = tmp("encap.pcap");
  write_pcap(in, frames);
  auto cfg = [&](const std::string& out, const std::string& bal) {
    return fmt::format(R"(FromDump({}, STOP true) -> {} e1 :: UDPIPEncap(10.0.0.1, 1234, 10.9.8.7, 4789)
      -> e2 :: UDPIPEncap(192.168.1.1, 53, 192.168.1.2, 5353, CHECKSUM false, TTL 9)
      -> t :: Tee; t[0] -> ToDump({}); t[1] -> e3 :: UDPIPEncap(1.2.3.4, 1, 5.6.7.8, 2) -> e4 :: UDPIPEncap(1.2.3.4, 1, 5.6.7.8, 2)
      -> e5 :: UDPIPEncap(1.2.3.4, 1, 5.6.7.8, 2) -> Discard;)",
                       in, bal, out);
  };
  auto cpu = test::run(cfg(tmp("encap-cpu.pcap"), ""));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  auto want = test::read_pcap(tmp("encap-cpu.pcap"));
  ASSERT_EQ(want.size(), frames.size());
  for (size_t i = 0; i < want.size(); ++i) {
    const Bytes& f = want[i].bytes;
    // the outer header (e2) over the inner one (e1) over the frame
    check_udpip(f, Bytes(f.begin() + 28, f.end()), uint16_t(i), false);
    EXPECT_EQ(f[8], 9) << "TTL";
    check_udpip(Bytes(f.begin() + 28, f.end()), frames[i], uint16_t(i), true);
    if (HasFailure()) return;
  }
  EXPECT_GT(drops(*cpu, "e5"), 0u) << "the fifth header finds no headroom";
  for (double faults : {0.0, 0.3})
    for (const char* frac : {"1", "0.5"}) {
      test::Options o = opts(20, faults);
      auto off = test::run_with(cfg(tmp("encap-off.pcap"), fmt::format("OffloadBalancer({}) ->", frac)), o);
      ASSERT_TRUE(off->ok) << off->errors;
      auto got = test::read_pcap(tmp("encap-off.pcap"));
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i].bytes, want[i].bytes) << "packet " << i << " fraction " << frac << " faults " << faults;
      for (const char* e : {"e1", "e2", "e3", "e4", "e5"}) EXPECT_EQ(drops(*cpu, e), drops(*off, e)) << e;
      EXPECT_GT(off->n("e1.offload_packets"), 0u);
      EXPECT_GT(off->n("e2.offload_packets"), 0u) << "the device choice stays with the batch";
      std::string chain = off->h("e1.offload_chain");
      EXPECT_EQ(chain.substr(0, 3), "e1\n") << "a resizing step ends its chain: " << chain;
      EXPECT_NE(chain.find("resizable: 28 bytes in front"), std::string::npos) << chain;
      EXPECT_NE(chain.find("block 0: 2 bytes in, 0 bytes out"), std::string::npos) << chain;
      if (faults > 0) {
        EXPECT_GT(off->n("e1.offload_cpu_fault"), 0u);
      }
      test::finish(*off, false, faults > 0);
    }
  test::finish(*cpu);
}

namespace {
// Drops by reason, over the workers.
std::map<std::string, uint64_t> drop_reasons(test::Run& r, const std::string& e) {
  std::map<std::string, uint64_t> m;
  for (int w = 0; w < r.rt->nworkers(); ++w)
    for (const auto& d : r.rt->router(w).find(e)->drop_reasons())
      if (d.count.get()) m[d.name] += d.count.get();
  return m;
}

// An Ethernet frame with an IPv4 packet from src to dst (10.a.b.c as a, b,
// c), random protocol and payload; some with link-layer padding, some
// fragments.
Bytes esp_test_frame(std::mt19937& rng, uint8_t sa, uint8_t da) {
  uint32_t pay = rng() % 1400;
  Bytes f(14 + 20 + pay);
  f[12] = 0x08;
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45;
  ip[1] = uint8_t(rng() % 4 == 0 ? 0xb8 : 0);
  k::store_be16(ip + 2, uint16_t(20 + pay));
  k::store_be16(ip + 4, uint16_t(rng()));
  if (rng() % 20 == 0) k::store_be16(ip + 6, 0x2000);  // a first fragment
  ip[8] = uint8_t(2 + rng() % 200);
  ip[9] = std::array<uint8_t, 3>{6, 17, 1}[rng() % 3];
  bool host = sa == 3;  // (transport mode: the SA is between two hosts, 10.3.0.0 and 10.4.0.0)
  ip[12] = 10, ip[13] = sa, ip[14] = host ? 0 : uint8_t(rng()), ip[15] = host ? 0 : uint8_t(rng());
  ip[16] = 10, ip[17] = da, ip[18] = host ? 0 : uint8_t(rng()), ip[19] = host ? 0 : uint8_t(rng());
  for (uint32_t i = 0; i < pay; ++i) ip[20 + i] = uint8_t(rng());
  k::set_ipv4_header_checksum(ip, 20);
  if (rng() % 10 == 0) f.resize(f.size() + 1 + rng() % 8, 0);  // link-layer padding
  return f;
}
}  // namespace

// IPsecOutbound in NBA's form: the host decides policy, SA and sequence
// numbers in a pre-function block, the device's ESP kernels lay each packet
// out and seal it (GCM, CTR with HMAC-SHA-256, CBC, ESP in UDP), packets of
// an SA whose suite the device does not do (the null cipher) take the
// host's path at completion.
// The same bytes as the CPU element, the same drops; with half the batches
// on the CPU and injected device faults, IPsecInbound gives back every
// packet sealed.
TEST(Datablocks, IPsecOutboundOnTheDeviceEqualsTheCpuElement) {
  std::mt19937 rng(23);
  std::vector<Bytes> frames;
  for (int i = 0; i < 2500; ++i) {
    static const uint8_t pairs[][2] = {{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 9}, {11, 12}, {13, 14}, {15, 16}};
    const auto& pr = pairs[rng() % 8];
    frames.push_back(esp_test_frame(rng, pr[0], pr[1]));
  }
  std::string in = tmp("esp-clear.pcap"), sad = tmp("esp.sad");
  write_pcap(in, frames);
  {
    std::ofstream f(sad);
    f << "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x100 reqid 1 mode tunnel "
         "aead 'rfc4106(gcm(aes))' 0x00112233445566778899aabbccddeeff01020304 128\n"
         "ip xfrm state add src 10.3.0.0 dst 10.4.0.0 proto esp spi 0x200 reqid 2 mode transport "
         "enc 'rfc3686(ctr(aes))' 0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f0a0b0c0d "
         "auth-trunc 'hmac(sha256)' 0x"
      << std::string(64, 'a')
      << " 128\n"
         "ip xfrm state add src 2001:db8::1 dst 2001:db8::2 proto esp spi 0x300 reqid 3 mode tunnel "
         "enc 'cbc(aes)' 0x"
      << std::string(32, '5') << " auth-trunc 'hmac(sha1)' 0x" << std::string(40, '6')
      << " 96\n"
         // (IPv6: a host-path IPv4 tunnel's IP IDs would be given in another order than the device's)
         "ip xfrm state add src 2001:db8::1 dst 2001:db8::3 proto esp spi 0x400 reqid 4 mode tunnel "
         "enc 'ecb(cipher_null)' '' auth-trunc 'hmac(sha1)' 0x"
      << std::string(40, '7')
      << " 96\n"
         // ESP in UDP (RFC 3948), on the device too: IPv6 (its UDP checksum over the ciphertext) and IPv4
         "ip xfrm state add src 2001:db8::1 dst 2001:db8::4 proto esp spi 0x500 reqid 5 mode tunnel "
         "aead 'rfc4106(gcm(aes))' 0x00112233445566778899aabbccddee0001020305 128 encap espinudp 4500 4500 ::\n"
         "ip xfrm state add src 192.0.2.1 dst 192.0.2.5 proto esp spi 0x600 reqid 6 mode tunnel "
         "enc 'rfc3686(ctr(aes))' 0x000102030405060708090a0b0c0d0e0f0a0b0c0e auth-trunc 'hmac(sha256)' 0x"
      << std::string(64, 'c')
      << " 128 encap espinudp 4501 4500 0.0.0.0\n"
         "ip xfrm policy add src 10.13.0.0/16 dst 10.14.0.0/16 dir out tmpl src 2001:db8::1 dst 2001:db8::4 proto esp "
         "reqid 5 mode tunnel\n"
         "ip xfrm policy add src 10.13.0.0/16 dst 10.14.0.0/16 dir in tmpl src 2001:db8::1 dst 2001:db8::4 proto esp "
         "reqid 5 mode tunnel\n"
         "ip xfrm policy add src 10.15.0.0/16 dst 10.16.0.0/16 dir out tmpl src 192.0.2.1 dst 192.0.2.5 proto esp "
         "reqid 6 mode tunnel\n"
         "ip xfrm policy add src 10.15.0.0/16 dst 10.16.0.0/16 dir in tmpl src 192.0.2.1 dst 192.0.2.5 proto esp "
         "reqid 6 mode tunnel\n"
         "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir out tmpl src 192.0.2.1 dst 192.0.2.2 proto esp "
         "reqid 1 mode tunnel\n"
         "ip xfrm policy add src 10.3.0.0/16 dst 10.4.0.0/16 dir out tmpl proto esp reqid 2 mode transport\n"
         "ip xfrm policy add src 10.5.0.0/16 dst 10.6.0.0/16 dir out tmpl src 2001:db8::1 dst 2001:db8::2 "
         "proto esp reqid 3 mode tunnel\n"
         "ip xfrm policy add src 10.7.0.0/16 dst 10.8.0.0/16 dir out action block\n"
         "ip xfrm policy add src 10.11.0.0/16 dst 10.12.0.0/16 dir out tmpl src 2001:db8::1 dst 2001:db8::3 proto esp "
         "reqid 4 mode tunnel\n"
         "ip xfrm policy add src 10.11.0.0/16 dst 10.12.0.0/16 dir in tmpl src 2001:db8::1 dst 2001:db8::3 proto esp "
         "reqid 4 mode tunnel\n"
         "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir in tmpl src 192.0.2.1 dst 192.0.2.2 proto esp "
         "reqid 1 mode tunnel\n"
         "ip xfrm policy add src 10.3.0.0/16 dst 10.4.0.0/16 dir in tmpl proto esp reqid 2 mode transport\n"
         "ip xfrm policy add src 10.5.0.0/16 dst 10.6.0.0/16 dir in tmpl src 2001:db8::1 dst 2001:db8::2 "
         "proto esp reqid 3 mode tunnel\n";
  }
  auto cfg = [&](const std::string& out, const std::string& bal) {
    return fmt::format(R"(FromDump({}, STOP true) -> Strip(14) -> {} o :: IPsecOutbound(SAD {}, VERBOSE false);
      o[0] -> ToDump({}, ENCAP IP); o[1] -> ToDump({}-clear, ENCAP IP);)",
                       in, bal, sad, out, out);
  };
  auto cpu = test::run(cfg(tmp("esp-cpu.pcap"), ""));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  auto want = test::read_pcap(tmp("esp-cpu.pcap"));
  ASSERT_GT(want.size(), 1000u);
  // the SAs' own counts: some of each (the transport SA's fragments dropped)
  EXPECT_GT(cpu->n("o.encrypted"), 1000u);
  EXPECT_GT(cpu->n("o.bypassed"), 200u);
  std::string sa_list = cpu->h("o.sa");

  // 1. Every batch on the device: the CPU element's bytes and drops.
  {
    test::Options o = opts(20);
    o.offload.inflight = 256;  // (slots enough that no aggregate finds them all in flight: it would run on the host)
    auto off = test::run_with(cfg(tmp("esp-off.pcap"), "OffloadBalancer(1) ->"), o);
    ASSERT_TRUE(off->ok) << off->errors;
    auto got = test::read_pcap(tmp("esp-off.pcap"));
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i].bytes, want[i].bytes) << "packet " << i;
    auto clear_cpu = test::read_pcap(tmp("esp-cpu.pcap-clear")), clear_off = test::read_pcap(tmp("esp-off.pcap-clear"));
    ASSERT_EQ(clear_cpu.size(), clear_off.size());
    for (size_t i = 0; i < clear_cpu.size(); ++i) ASSERT_EQ(clear_cpu[i].bytes, clear_off[i].bytes);
    EXPECT_EQ(drop_reasons(*off, "o"), drop_reasons(*cpu, "o"));
    EXPECT_EQ(off->n("o.encrypted"), cpu->n("o.encrypted"));
    EXPECT_EQ(off->n("o.bypassed"), cpu->n("o.bypassed"));
    EXPECT_GT(off->n("o.device_sealed"), 1000u) << "the device sealed the GCM, CTR, CBC and ESP-in-UDP SAs' packets";
    EXPECT_GT(off->n("o.host_sealed"), 200u) << "the null cipher SA's on the host";
    EXPECT_LT(off->n("o.host_sealed"), 400u) << "only the null cipher SA's on the host";
    EXPECT_EQ(off->n("o.device_sealed") + off->n("o.host_sealed"), off->n("o.encrypted"));
    EXPECT_EQ(off->n("o.offload_cpu_fault"), 0u);
    EXPECT_EQ(off->h("o.sa"), sa_list) << "the SAs' packets, bytes and sequence numbers";
    test::finish(*off);
  }
  // 2. Half the batches on the CPU, device faults: sequence numbers are taken
  // in another order (and those of failed aggregates skipped), so the bytes
  // differ; IPsecInbound opens every packet, and gives the clear packets back.
  {
    auto off = test::run_with(cfg(tmp("esp-half.pcap"), "OffloadBalancer(0.5) ->"), opts(20, 0.3));
    ASSERT_TRUE(off->ok) << off->errors;
    EXPECT_EQ(drop_reasons(*off, "o"), drop_reasons(*cpu, "o"));
    EXPECT_GT(off->n("o.offload_cpu_fault"), 0u);
    auto back = test::run(fmt::format(R"(FromDump({}, STOP true) -> i :: IPsecInbound(SAD {}, VERBOSE false)
      -> ToDump({}, ENCAP IP);)",
                                      tmp("esp-half.pcap"), sad, tmp("esp-back.pcap")));
    ASSERT_TRUE(back->ok) << back->errors;
    EXPECT_EQ(back->n("i.drops"), 0u) << back->h("i.drops");
    auto opened = test::read_pcap(tmp("esp-back.pcap"));
    std::multiset<Bytes> a, b;
    for (auto& f : opened) a.insert(f.bytes);
    // the clear packets that were sealed: the input's, trimmed to their IP length, TTL as it was
    for (const Bytes& f : frames) {
      uint32_t tot = k::load_be16(&f[16]);
      uint8_t s = f[14 + 13], d = f[14 + 17];
      bool frag = (k::load_be16(&f[14 + 6]) & 0x3fff) != 0;
      if ((s == 1 && d == 2) || (s == 5 && d == 6) || (s == 11 && d == 12) || (s == 13 && d == 14) ||
          (s == 15 && d == 16) || (s == 3 && d == 4 && !frag))
        b.insert(Bytes(f.begin() + 14, f.begin() + 14 + tot));
    }
    EXPECT_EQ(a.size(), b.size());
    EXPECT_TRUE(a == b) << "IPsecInbound gives back exactly the packets sealed";
    test::finish(*back);
    test::finish(*off, false, true);
  }
  // 3. IPsecInbound offloaded (the host checks up to the replay window, the
  // device checks ICVs and decrypts, the host takes packets apart) on the
  // CPU's ESP packets with replays, forgeries and link-layer padding: the
  // CPU element's packets and drops.
  {
    std::vector<Bytes> esp;
    for (size_t i = 0; i < want.size(); ++i) {
      Bytes f(14, 0);
      f[12] = want[i].bytes[0] >> 4 == 4 ? 0x08 : 0x86;
      f[13] = want[i].bytes[0] >> 4 == 4 ? 0x00 : 0xdd;
      f.insert(f.end(), want[i].bytes.begin(), want[i].bytes.end());
      if (i % 11 == 3) f.resize(f.size() + 5, 0);  // link-layer padding
      Bytes forged = f;                            // one flipped bit near the end (the text or the ICV)
      forged[forged.size() - 1 - rng() % 40] ^= uint8_t(1u << (rng() % 8));
      if (i % 13 == 5) esp.push_back(forged);  // before the genuine packet: integrity
      esp.push_back(f);
      if (i % 7 == 2) esp.push_back(f);        // a replay
      if (i % 17 == 6) esp.push_back(forged);  // after it: a replay (the window is checked first)
    }
    esp.push_back(esp.front());  // a late replay
    std::string esp_in = tmp("esp-in.pcap");
    write_pcap(esp_in, esp);
    auto in_cfg = [&](const std::string& out, const std::string& bal) {
      return fmt::format(R"(FromDump({}, STOP true) -> Strip(14) -> {} i :: IPsecInbound(SAD {}, VERBOSE false)
        -> ToDump({}, ENCAP IP);)",
                         esp_in, bal, sad, out);
    };
    auto icpu = test::run(in_cfg(tmp("esp-open-cpu.pcap"), ""));
    ASSERT_TRUE(icpu->ok) << icpu->errors;
    auto opened = test::read_pcap(tmp("esp-open-cpu.pcap"));
    auto reasons = drop_reasons(*icpu, "i");
    EXPECT_EQ(opened.size(), want.size());
    EXPECT_GT(reasons["replay"], 300u);
    EXPECT_GT(reasons["integrity"], 100u);
    for (double faults : {0.0, 0.3}) {
      // (every batch for the device, and slots enough that none finds them
      // all in flight: an aggregate that did would be opened on the host)
      test::Options o = opts(20, faults);
      if (faults == 0) o.offload.inflight = 256;
      auto ioff = test::run_with(
          in_cfg(tmp("esp-open-off.pcap"), faults > 0 ? "OffloadBalancer(0.5) ->" : "OffloadBalancer(1) ->"), o);
      ASSERT_TRUE(ioff->ok) << ioff->errors;
      auto got = test::read_pcap(tmp("esp-open-off.pcap"));
      ASSERT_EQ(got.size(), opened.size());
      if (faults == 0) {
        for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i].bytes, opened[i].bytes) << "packet " << i;
        EXPECT_GT(ioff->n("i.device_opened"), 1000u)
            << "the device checked the GCM, CTR, CBC and ESP-in-UDP SAs' packets";
        EXPECT_GT(ioff->n("i.host_opened"), 200u) << "the null cipher SA's on the host";
        EXPECT_LT(ioff->n("i.host_opened"), 500u) << "only the null cipher SA's on the host";
        EXPECT_EQ(ioff->n("i.offload_cpu_fault"), 0u);
      } else {  // batches on the CPU and on the device interleave differently: the same packets
        std::multiset<Bytes> a, b;
        for (auto& f : got) a.insert(f.bytes);
        for (auto& f : opened) b.insert(f.bytes);
        EXPECT_TRUE(a == b);
      }
      EXPECT_EQ(drop_reasons(*ioff, "i"), reasons) << "faults " << faults;
      EXPECT_EQ(ioff->h("i.sa"), icpu->h("i.sa")) << "each SA's packets, bytes, replays and forgeries";
      test::finish(*ioff, false, faults > 0);
    }
    test::finish(*icpu);
  }
  test::finish(*cpu);
}

// A balancer's CPU batches behind aggregates in flight (and aggregates that
// find every device slot busy) run through the elements' CPU functions
// (intel-ipsec-mb), not the portable kernels on the host: IPsecOutbound's
// when they arrive, as a device aggregate takes its sequence numbers and IP
// IDs when packed, so the bytes are the CPU element's; IPsecInbound's at
// their turn, so the replay window sees packets in arrival order. What the
// device is said to have done is what it did.
TEST(NbaHostDirect, HostAggregatesRunTheIPsecElementsCpuPath) {
  std::mt19937 rng(29);
  std::vector<Bytes> frames;
  for (int i = 0; i < 3000; ++i) {
    static const uint8_t pairs[][2] = {{1, 2}, {15, 16}, {7, 8}, {9, 9}};
    const auto& pr = pairs[rng() % 4];
    frames.push_back(esp_test_frame(rng, pr[0], pr[1]));
  }
  std::string in = tmp("hd-clear.pcap"), sad = tmp("hd.sad");
  write_pcap(in, frames);
  std::ofstream(sad) << "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x100 reqid 1 mode tunnel "
                        "aead 'rfc4106(gcm(aes))' 0x00112233445566778899aabbccddeeff01020304 128\n"
                        "ip xfrm state add src 192.0.2.1 dst 192.0.2.5 proto esp spi 0x600 reqid 6 mode tunnel flag "
                        "esn enc 'rfc3686(ctr(aes))' 0x000102030405060708090a0b0c0d0e0f0a0b0c0e auth-trunc "
                        "'hmac(sha1)' 0x"
                     << std::string(40, 'c')
                     << " 96\n"
                        "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir out tmpl src 192.0.2.1 dst 192.0.2.2 "
                        "proto esp reqid 1 mode tunnel\n"
                        "ip xfrm policy add src 10.15.0.0/16 dst 10.16.0.0/16 dir out tmpl src 192.0.2.1 dst "
                        "192.0.2.5 proto esp reqid 6 mode tunnel\n"
                        "ip xfrm policy add src 10.7.0.0/16 dst 10.8.0.0/16 dir out action block\n"
                        "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir in tmpl src 192.0.2.1 dst 192.0.2.2 "
                        "proto esp reqid 1 mode tunnel\n"
                        "ip xfrm policy add src 10.15.0.0/16 dst 10.16.0.0/16 dir in tmpl src 192.0.2.1 dst "
                        "192.0.2.5 proto esp reqid 6 mode tunnel\n";
  auto out_cfg = [&](const std::string& out, const std::string& bal) {
    return fmt::format(R"(FromDump({}, STOP true) -> Strip(14) -> {} o :: IPsecOutbound(SAD {}, VERBOSE false);
      o[0] -> ToDump({}, ENCAP IP); o[1] -> ToDump({}-clear, ENCAP IP);)",
                       in, bal, sad, out, out);
  };
  auto cpu = test::run(out_cfg(tmp("hd-cpu.pcap"), ""));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  auto want = test::read_pcap(tmp("hd-cpu.pcap"));
  ASSERT_GT(want.size(), 1000u);
  test::Options o = opts(200);  // (aggregates in flight while the next batches come)
  o.offload.batches = 4;        // (the balancer's runs: 4 batches to the device, 4 to the CPU, ...)
  auto off = test::run_with(out_cfg(tmp("hd-off.pcap"), "OffloadBalancer(0.5) ->"), o);
  ASSERT_TRUE(off->ok) << off->errors;
  auto got = test::read_pcap(tmp("hd-off.pcap"));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i].bytes, want[i].bytes) << "packet " << i;
  EXPECT_EQ(drop_reasons(*off, "o"), drop_reasons(*cpu, "o"));
  EXPECT_EQ(off->h("o.sa"), cpu->h("o.sa"));
  EXPECT_GT(off->n("o.offload_host_direct"), 0u) << "CPU batches behind aggregates in flight";
  EXPECT_GT(off->n("o.device_sealed"), 0u);
  EXPECT_GT(off->n("o.host_sealed"), 0u);
  EXPECT_EQ(off->n("o.device_sealed") + off->n("o.host_sealed"), cpu->n("o.encrypted"));
  // the device's count is at most what aggregates on the device held (a
  // quarter of the packets are blocked, a quarter pass in the clear)
  EXPECT_LE(off->n("o.device_sealed"), off->n("o.offload_device_packets"));
  test::finish(*off);

  // Inbound: the CPU's ESP packets with replays, at their turn
  std::vector<Bytes> esp;
  for (size_t i = 0; i < want.size(); ++i) {
    Bytes f(14, 0);
    f[12] = 0x08;
    f.insert(f.end(), want[i].bytes.begin(), want[i].bytes.end());
    esp.push_back(f);
    if (i % 9 == 4) esp.push_back(f);  // a replay
  }
  write_pcap(tmp("hd-esp.pcap"), esp);
  auto in_cfg = [&](const std::string& out, const std::string& bal) {
    return fmt::format(R"(FromDump({}, STOP true) -> Strip(14) -> {} i :: IPsecInbound(SAD {}, VERBOSE false)
      -> ToDump({}, ENCAP IP);)",
                       tmp("hd-esp.pcap"), bal, sad, out);
  };
  auto icpu = test::run(in_cfg(tmp("hd-open-cpu.pcap"), ""));
  ASSERT_TRUE(icpu->ok) << icpu->errors;
  auto ioff = test::run_with(in_cfg(tmp("hd-open-off.pcap"), "OffloadBalancer(0.5) ->"), o);
  ASSERT_TRUE(ioff->ok) << ioff->errors;
  auto a = test::read_pcap(tmp("hd-open-cpu.pcap")), b = test::read_pcap(tmp("hd-open-off.pcap"));
  ASSERT_EQ(a.size(), want.size());
  ASSERT_EQ(b.size(), a.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i].bytes, b[i].bytes) << "packet " << i;
  EXPECT_EQ(drop_reasons(*ioff, "i"), drop_reasons(*icpu, "i"));
  EXPECT_GT(drop_reasons(*icpu, "i")["replay"], 100u);
  EXPECT_EQ(ioff->h("i.sa"), icpu->h("i.sa"));
  EXPECT_GT(ioff->n("i.offload_host_direct"), 0u);
  EXPECT_GT(ioff->n("i.device_opened"), 0u);
  test::finish(*ioff);
  test::finish(*icpu);
  test::finish(*cpu);
}

// ESN on the device, across the wrap of the low half: two SAs with ESN (GCM,
// CTR with HMAC-SHA1; the device splits both among threads) whose senders
// start near 2^31 and then near 2^32, so aggregates hold packets on both
// sides of the wrap (ICV and AAD cover the high half the host infers), with
// forgeries and replays: the offloaded element opens exactly what the CPU
// element does, with its drops and SA counters, all on the device.
TEST(Datablocks, IPsecInboundOnTheDeviceOpensEsnAcrossTheWrap) {
  std::mt19937 rng(31);
  std::string sad_base =
      "ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x100 reqid 1 mode tunnel flag esn aead "
      "'rfc4106(gcm(aes))' 0x00112233445566778899aabbccddeeff01020304 128{}\n"
      "ip xfrm state add src 192.0.2.1 dst 192.0.2.5 proto esp spi 0x600 reqid 6 mode tunnel flag esn enc "
      "'rfc3686(ctr(aes))' 0x000102030405060708090a0b0c0d0e0f0a0b0c0e auth-trunc 'hmac(sha1)' 0x" +
      std::string(40, 'c') +
      " 96{}\n"
      "ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir out tmpl src 192.0.2.1 dst 192.0.2.2 proto esp reqid 1 "
      "mode tunnel\n"
      "ip xfrm policy add src 10.15.0.0/16 dst 10.16.0.0/16 dir out tmpl src 192.0.2.1 dst 192.0.2.5 proto esp "
      "reqid 6 mode tunnel\n";
  // the senders: first from 2^31 - 256, then from 2^32 - 300 (each SA's
  // numbers cross 2^32 in the second part)
  std::vector<Bytes> esp;
  for (auto [oseq, count] : {std::pair{0x7fffff00u, 100}, std::pair{0xfffffed4u, 1200}}) {
    std::vector<Bytes> frames;
    for (int i = 0; i < count; ++i) {
      static const uint8_t pairs[][2] = {{1, 2}, {15, 16}};
      const auto& pr = pairs[rng() % 2];
      Bytes f = esp_test_frame(rng, pr[0], pr[1]);
      k::store_be16(f.data() + 14 + 6, 0);  // (no fragments)
      k::set_ipv4_header_checksum(f.data() + 14, 20);
      frames.push_back(f);
    }
    std::string in = tmp("esn-clear.pcap"), out = tmp("esn-sealed.pcap"), sad = tmp("esn-out.sad");
    write_pcap(in, frames);
    const std::string o = fmt::format(" replay-oseq {:#x}", oseq);
    std::ofstream(sad) << fmt::format(fmt::runtime(sad_base), o, o);
    auto seal = test::run(fmt::format(
        "FromDump({}, STOP true) -> Strip(14) -> IPsecOutbound(SAD {}, VERBOSE false) -> ToDump({}, ENCAP IP);", in,
        sad, out));
    ASSERT_TRUE(seal->ok) << seal->errors;
    for (auto& p : test::read_pcap(out)) {
      Bytes f(14, 0);
      f[12] = 0x08;
      f.insert(f.end(), p.bytes.begin(), p.bytes.end());
      if (rng() % 25 == 0) {  // a forgery first (a bit of the text or ICV)
        Bytes forged = f;
        forged[forged.size() - 1 - rng() % 40] ^= uint8_t(1u << (rng() % 8));
        esp.push_back(forged);
      }
      esp.push_back(f);
      if (rng() % 30 == 0) esp.push_back(f);  // a replay
    }
    test::finish(*seal);
  }
  std::string sad = tmp("esn-in.sad"), esp_in = tmp("esn-esp.pcap");
  std::ofstream(sad) << fmt::format(fmt::runtime(sad_base), "", "");
  write_pcap(esp_in, esp);
  auto in_cfg = [&](const std::string& out, const std::string& bal) {
    return fmt::format(R"(FromDump({}, STOP true) -> Strip(14) -> {} i :: IPsecInbound(SAD {}, VERBOSE false)
      -> ToDump({}, ENCAP IP);)",
                       esp_in, bal, sad, out);
  };
  auto icpu = test::run(in_cfg(tmp("esn-open-cpu.pcap"), ""));
  ASSERT_TRUE(icpu->ok) << icpu->errors;
  auto want = test::read_pcap(tmp("esn-open-cpu.pcap"));
  EXPECT_EQ(want.size(), 1300u) << "every genuine packet opened, on both sides of the wrap";
  auto reasons = drop_reasons(*icpu, "i");
  EXPECT_GT(reasons["integrity"], 20u);
  EXPECT_GT(reasons["replay"], 20u);
  test::Options o = opts(20);
  o.offload.inflight = 256;  // (no batch finds every slot in flight: all on the device)
  auto ioff = test::run_with(in_cfg(tmp("esn-open-off.pcap"), "OffloadBalancer(1) ->"), o);
  ASSERT_TRUE(ioff->ok) << ioff->errors;
  auto got = test::read_pcap(tmp("esn-open-off.pcap"));
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i].bytes, want[i].bytes) << "packet " << i;
  EXPECT_EQ(drop_reasons(*ioff, "i"), reasons);
  EXPECT_EQ(ioff->h("i.sa"), icpu->h("i.sa"));
  // every packet opened by the device's kernels (and copies of a number
  // within one aggregate, which the host's final check calls replays)
  EXPECT_GE(ioff->n("i.device_opened"), want.size());
  EXPECT_LE(ioff->n("i.device_opened"), want.size() + reasons["replay"]);
  EXPECT_EQ(ioff->n("i.host_opened"), 0u);
  test::finish(*ioff);
  test::finish(*icpu);
}

TEST(OffloadRouter, WorkersShareOneDeviceCopyOfTheTables) {
  RouterCase c = make_ipv4_case(31, 4000);
  test::Options o = opts();
  o.threads = 2;
  // Both workers read the capture (FromDump on each), both offload.
  auto r = test::run_with(cpu_v4(c, tmp("shared"), "OffloadBalancer(1) ->"), o);
  ASSERT_TRUE(r->ok) << r->errors;
  ASSERT_GT(r->n("c.offload_packets"), 0u);  // the chain c -> rt -> t0 starts at CheckIPHeader
  if (r->n("c.offload_device_aggregates") > 0) {
    EXPECT_EQ(r->n("rt.offload_uploads"), 1u) << "one 32 MiB DIR-24-8 copy for both workers";
  }
  test::finish(*r);
}

TEST(OffloadRouter, OutOfDeviceMemoryRunsAggregatesOnTheCpu) {
  // The host backend with 64 KiB of "device" memory: the 32 MiB IPv4 table
  // cannot be uploaded and large aggregates cannot be placed; both fall
  // back to the CPU, counted, with the CPU router's output.
  if (test::default_options().offload.device.kind == "cuda") GTEST_SKIP() << "the memory limit is the host backend's";
  RouterCase c = make_ipv4_case(41, 3000);
  auto cpu = test::run(cpu_v4(c, tmp("mcpu")));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  test::Options o = opts();
  o.offload.device.kind = "host";
  o.offload.device.memory_limit = 64 << 10;
  auto r = test::run_with(cpu_v4(c, tmp("mem"), "OffloadBalancer(1) ->"), o);
  ASSERT_TRUE(r->ok) << r->errors;
  expect_same_outputs(tmp("mcpu"), tmp("mem"));
  expect_same_drops(*cpu, *r);
  EXPECT_GT(r->n("c.offload_cpu_fault"), 0u);
  EXPECT_NE(r->h("c.offload_last_error").find("memory"), std::string::npos) << r->h("c.offload_last_error");
  test::finish(*r, false, true);
  // Without the table (CheckIPHeader and DecIPTTL only, about 80 bytes a
  // packet): aggregates of one 32-packet batch fit in 32 KiB, aggregates
  // of 32 batches (a long timeout lets them fill) do not.
  auto cfg = [&](const std::string& bal, const std::string& out) {
    return fmt::format("FromDump({}, STOP true) -> {} c :: CheckIPHeader(14) -> t :: DecIPTTL -> ToDump({}0.pcap);",
                       c.in, bal, out);
  };
  auto cpu2 = test::run(cfg("", tmp("mcpu2")));
  ASSERT_TRUE(cpu2->ok) << cpu2->errors;
  o.offload.device.memory_limit = 32 << 10;
  o.offload.timeout_us = 1000000;
  for (uint32_t batches : {1u, 32u}) {
    o.offload.batches = batches;
    auto r2 = test::run_with(cfg("OffloadBalancer(1) ->", tmp("mem2")), o);
    ASSERT_TRUE(r2->ok) << r2->errors;
    expect_same_outputs(tmp("mcpu2"), tmp("mem2"), 1);
    EXPECT_EQ(cpu2->n("c.drops") + cpu2->n("t.drops"), r2->n("c.drops") + r2->n("t.drops"));
    if (batches == 1) {
      EXPECT_GT(r2->n("c.offload_device_aggregates"), 0u) << r2->h("c.offload_last_error");
      EXPECT_EQ(r2->n("c.offload_cpu_fault"), 0u) << r2->h("c.offload_last_error");
    } else {
      EXPECT_GT(r2->n("c.offload_cpu_fault"), 0u);
      EXPECT_EQ(r2->n("c.offload_device_aggregates"), 0u);
    }
    test::finish(*r2, false, batches > 1);
  }
  test::finish(*cpu2);
  test::finish(*cpu);
}

// A fixed split sends the device runs of batches that fill its aggregates:
// deciding batch by batch, every CPU batch would launch the aggregate being
// filled before it (order), and a split would cost a whole aggregate per
// device batch.
TEST(OffloadBalancer, AFixedSplitSendsTheDeviceWholeAggregates) {
  RouterCase c = make_ipv4_case(23, 12800);
  auto cpu = test::run(cpu_v4(c, tmp("fcpu")));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  test::Options o = opts();
  o.batch_capacity = 64;
  o.offload.batches = 4;
  o.offload.timeout_us = 1000000;  // (no aggregate leaves part-filled on its timer)
  auto r = test::run_with(cpu_v4(c, tmp("fsplit"), "b :: OffloadBalancer(0.5) ->"), o);
  ASSERT_TRUE(r->ok) << r->errors;
  expect_same_outputs(tmp("fcpu"), tmp("fsplit"));
  expect_same_drops(*cpu, *r);
  const uint64_t dev = r->n("b.to_device"), cpu_batches = r->n("b.to_cpu");
  EXPECT_EQ(dev, cpu_batches) << "runs of 4 batches, half each";
  ASSERT_EQ(dev % 4, 0u);
  // Each run marked for the device became one aggregate of its 4 batches
  // (on the device, or on the CPU when every device slot was in flight):
  // the source's batches are alike, 12800 packets in equal bursts.
  const uint64_t per_run = 4 * 12800 / (dev + cpu_batches);
  EXPECT_EQ(r->n("c.offload_device_aggregates") + r->n("c.offload_cpu_busy") + r->n("c.offload_cpu_fault"), dev / 4);
  EXPECT_GT(r->n("c.offload_device_aggregates"), 0u);
  EXPECT_EQ(r->n("c.offload_device_packets"), r->n("c.offload_device_aggregates") * per_run)
      << "every device aggregate holds a run's 4 batches";
  test::finish(*r);
  test::finish(*cpu);
}

// NBA's adaptive balancer (OffloadBalancer MODE adaptive) in the IPv4 router.
TEST(OffloadBalancerAdaptive, OutputsStayTheCpuRoutersWhileTheSplitMoves) {
  RouterCase c = make_ipv4_case(21, 20000);
  auto cpu = test::run(cpu_v4(c, tmp("acpu")));
  ASSERT_TRUE(cpu->ok) << cpu->errors;
  test::Options o = opts(50);
  o.batch_capacity = 64;
  o.offload.batches = 2;
  auto alb =
      test::run_with(cpu_v4(c, tmp("aalb"), "b :: OffloadBalancer(0.5, MODE adaptive, INTERVAL 1ms, STEP 0.1) ->"), o);
  ASSERT_TRUE(alb->ok) << alb->errors;
  expect_same_outputs(tmp("acpu"), tmp("aalb"));
  expect_same_drops(*cpu, *alb);
  EXPECT_GT(alb->n("b.epochs"), 0u) << "no interval was observed";
  EXPECT_GT(alb->n("b.to_device"), 0u);
  EXPECT_GT(alb->n("c.offload_device_aggregates"), 0u);
  EXPECT_EQ(alb->h("b.mode"), "adaptive");
  const double band = std::stod(alb->h("b.band"));
  EXPECT_TRUE(band >= 0.02 && band <= 0.1 + 1e-9) << "NOISE at least, 10% at most: " << band;
  EXPECT_LE(alb->n("b.changes"), alb->n("b.sweeps")) << "a change of traffic begins a sweep";
  // (not `rate`: the last interval's, 0 when a loaded machine let no batch
  // leave in it)
  test::finish(*alb);
  test::finish(*cpu);
}

TEST(OffloadBalancerAdaptive, ALatencyBoundTheDeviceCannotMeetEmptiesItsShare) {
  // A 1 us bound no device batch can meet (a copy there and back alone
  // takes longer on a GPU; on the host backend each operation also waits up
  // to 3 ms) sends everything back to the CPU and keeps it there (RELAX far
  // beyond the run).
  RouterCase c = make_ipv4_case(22, 960000);  // (enough intervals to converge on a loaded machine too)
  test::Options o = opts(3000);
  o.batch_capacity = 64;
  o.offload.batches = 1;
  auto r = test::run_with(
      cpu_v4(c, tmp("alat"),
             "b :: OffloadBalancer(1, MODE adaptive, INTERVAL 1ms, STEP 0.25, LATENCY 1, RELAX 100000) ->"),
      o);
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_GT(r->n("b.over_bound"), 0u);
  // (the run is short: device batches of milliseconds stretch the
  // intervals to twice their p99, about 27 in all, and the first sweep,
  // redone when 0 measured again at its end had moved since the run's
  // start, may still run at the end; under a ceiling of 0 it measures only 0)
  const std::string state = r->h("b.state");
  EXPECT_TRUE(state == "bounded" || state == "sweeping") << state;
  EXPECT_EQ(r->h("b.fraction"), "0.000");
  EXPECT_EQ(r->h("b.ceiling"), "0.000");
  EXPECT_GT(r->n("b.to_cpu"), r->n("b.to_device"));
  test::finish(*r);
}

TEST(OffloadBalancerAdaptive, LightLoadStaysOnTheCpu) {
  // One packet per batch (a slow source): no interval counts as loaded.
  auto r = test::run(R"(RatedSource(RATE 20000, LIMIT 400, BURST 1) -> b :: OffloadBalancer(1, MODE adaptive,
      INTERVAL 1ms, LIGHT 0.5) -> c :: Counter -> Discard;)");
  ASSERT_TRUE(r->ok) << r->errors;
  EXPECT_EQ(r->n("c.count"), 400u);
  EXPECT_EQ(r->h("b.state"), "light");
  EXPECT_EQ(r->h("b.fraction"), "0.000");
  EXPECT_GT(r->n("b.to_cpu"), r->n("b.to_device"));
  test::finish(*r);
}

TEST(OffloadBalancerAdaptive, WorkersShareOneClimber) {
  // Two workers, each generating its half of the flows: one climber for
  // both (SHARED, the default), fed their total rate; SHARED false gives
  // each its own. Every packet is accounted for either way.
  for (bool shared : {true, false}) {
    test::Options o = opts();
    o.threads = 2;
    o.offload.batches = 2;
    auto r = test::run_with(fmt::format(R"(FastUDPFlows(LENGTH 128, FLOWS 64, LIMIT 200000, STOP true)
        -> b :: OffloadBalancer(0.5, MODE adaptive, INTERVAL 1ms, SHARED {}) -> CheckIPHeader(14)
        -> DecIPTTL -> c :: Counter -> Discard;)",
                                        shared),
                            o);
    ASSERT_TRUE(r->ok) << r->errors;
    EXPECT_EQ(r->n("c.count"), 200000u);
    EXPECT_EQ(r->h("b.shared"), shared ? "true" : "false");
    EXPECT_GT(r->n("b.epochs"), 0u) << "no interval was observed";
    test::finish(*r);
  }
}

TEST(OffloadBalancerAdaptive, BadArgumentsAreRefused) {
  for (const char* a : {"MODE sometimes", "MODE adaptive, STEP 0", "MODE adaptive, INTERVAL 10us", "LATENCY 100",
                        "MODE adaptive, LIGHT 2", "MODE adaptive, NOISE -1"}) {
    auto r = test::run(fmt::format("InfiniteSource(LIMIT 1) -> OffloadBalancer({}) -> Discard;", a));
    EXPECT_FALSE(r->ok) << a;
  }
}

namespace shoal {

// GPUNFV's dynamic batch sizing, as a policy: it grows while the device is
// still busy when the next aggregate is ready, never past the most; halves
// on a latency overrun and holds; shrinks slowly while the device idles;
// sends a trickle to the CPU.
TEST(BatchSizer, RampsWhileTheCpuWouldWaitAndHalvesOnLatency) {
  offload::BatchSizer::Config c;
  c.max = 64;
  c.latency_us = 500;
  c.cpu_below = 40;
  offload::BatchSizer s(c);
  EXPECT_EQ(s.target(), 1u);
  uint32_t steps = 0;
  while (s.target() < 64) {
    uint32_t before = s.target();
    s.launched(true);
    ASSERT_GT(s.target(), before);
    ++steps;
  }
  EXPECT_LE(steps, 12u) << "it converges in a few aggregates, not one batch at a time";
  s.launched(true);
  EXPECT_EQ(s.target(), 64u) << "never past the most";
  s.completed(400);
  EXPECT_EQ(s.target(), 64u) << "within the bound";
  s.completed(900);
  EXPECT_EQ(s.target(), 32u) << "over the bound: halved";
  for (uint32_t i = 0; i + 1 < offload::BatchSizer::kHold; ++i) s.launched(true);
  EXPECT_EQ(s.target(), 32u) << "held after an overrun";
  s.launched(false);
  EXPECT_FALSE(s.ramping()) << "the ramp ends when a launch finds the device idle";
  for (int i = 0; i < 20; ++i) s.launched(true);
  EXPECT_EQ(s.target(), 32u) << "past the ramp, only throughput moves it";
  EXPECT_TRUE(s.to_cpu(39));
  EXPECT_FALSE(s.to_cpu(40));
  offload::BatchSizer none({});
  EXPECT_FALSE(none.to_cpu(0)) << "no fallback unless asked";
}

// A device the host never waits for (a GPU): an aggregate costs the host a
// fixed 50 us (launch, copies, completion) plus 200 ns a packet, and past
// 64 batches more (the aggregates no longer fit the device's caches, say).
// The idle rule would shrink it to the least; the climb finds the top.
namespace {
uint64_t host_ns(uint32_t batches, uint64_t fixed = 50000) {
  const uint64_t p = 32ull * batches;
  return fixed + p * 200 + (batches > 64 ? (batches - 64) * 32ull * 150 : 0);
}
// Runs the sizer for `seconds` of simulated time; returns the packets per
// second of each simulated second.
std::vector<double> simulate(offload::BatchSizer& s, double seconds, uint64_t fixed, uint32_t bound_us = 0,
                             uint64_t* over = nullptr) {
  std::vector<double> pps(size_t(seconds), 0);
  uint64_t now = 1;
  const uint64_t end = uint64_t(seconds * 1e9);
  while (now < end) {
    const uint32_t b = s.target();
    s.launched(false);
    const uint64_t d = host_ns(b, fixed);
    now += d;
    if (bound_us) {
      s.completed(d / 1000);
      if (over && d / 1000 > bound_us) ++*over;
    }
    s.delivered(32 * b, now);
    if (now < end) pps[now / 1000000000] += 32 * b;
  }
  return pps;
}
}  // namespace

TEST(BatchSizer, ClimbsToTheThroughputsTopWhereTheDeviceIsAlwaysIdle) {
  offload::BatchSizer::Config c;
  c.max = 1024;
  offload::BatchSizer s(c);
  const std::vector<double> pps = simulate(s, 4, 50000);
  double best = 0;
  for (uint32_t b = 1; b <= 1024; ++b) best = std::max(best, 32.0 * b / (double(host_ns(b)) / 1e9));
  EXPECT_GE(pps[1], 0.95 * best) << "it converges within 2 seconds";
  EXPECT_GE(pps[3], 0.95 * best) << "and stays (its tries cost little)";
  EXPECT_GE(s.target(), 42u);
  EXPECT_LE(s.target(), 94u);
  EXPECT_GT(s.grows(), 8u);
  EXPECT_GT(s.epochs(), 100u);
}

TEST(BatchSizer, AFlatTopDriftsToTheSmallerSize) {
  offload::BatchSizer::Config c;
  c.max = 256;
  offload::BatchSizer s(c);
  while (s.target() < 128) s.launched(true);  // the ramp took it high
  simulate(s, 4, 0);                          // no fixed cost: every size is as fast
  EXPECT_LE(s.target(), 4u) << "smaller waits less, and costs nothing here";
}

TEST(BatchSizer, TheLatencyBoundCapsTheClimb) {
  offload::BatchSizer::Config c;
  c.max = 1024;
  c.latency_us = 400;  // 63 batches take 459 us, 42 take 319 us
  offload::BatchSizer s(c);
  uint64_t over = 0;
  simulate(s, 4, 50000, c.latency_us, &over);
  EXPECT_LE(host_ns(s.target()) / 1000, c.latency_us * 3 / 2) << "target " << s.target();
  EXPECT_GE(s.target(), 19u) << "as large as the bound allows, about";
  EXPECT_LT(over, 200u) << "overruns are tries, not the rule";
}

}  // namespace shoal

// The device's occupancy is the union of its aggregates' spans: overlapping
// spans (two workers' aggregates) count once, gaps not at all, and a span in
// progress counts up to the reading.
TEST(DeviceOccupancy, IsTheUnionOfTheAggregatesSpans) {
  offload::DeviceOccupancy o;
  EXPECT_EQ(o.busy_ns(1000), 0u);
  o.begin(100);  // worker 0's aggregate
  o.begin(150);  // worker 1's, while the first is on the device
  EXPECT_EQ(o.in_flight(), 2u);
  o.end(200);
  EXPECT_EQ(o.busy_ns(250), 150u);  // in progress: 100..250
  o.end(300);                       // busy 100..300
  EXPECT_EQ(o.busy_ns(1000), 200u);
  o.begin(500);  // idle 300..500 is not counted
  o.end(540);
  EXPECT_EQ(o.busy_ns(1000), 240u);
  o.end(600);  // an end without a begin changes nothing
  EXPECT_EQ(o.busy_ns(1000), 240u);
  EXPECT_EQ(o.in_flight(), 0u);
}
