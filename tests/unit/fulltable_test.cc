// The lookups over a full Internet routing table (../shared/data/routes, 900k
// IPv4 and 160k IPv6 prefixes), against an oracle that probes one hash set
// per prefix length from the longest down. Skipped when the data is absent.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <random>
#include <unordered_map>

#include "shoal/core/args.hh"
#include "shoal/routing/iproutetable.hh"
#include "shoal/routing/lpm4_build.hh"
#include "shoal/routing/lpm6_build.hh"

using namespace shoal;

namespace {

const std::string kTable = std::string(SHOAL_SOURCE_DIR) + "/../shared/data/routes/internet-table-prefixes.txt.gz";

struct PrefixTable {
  std::vector<IPRoute> v4;
  std::vector<k::Prefix6> v6;
};

bool load(PrefixTable& t) {
  if (!std::filesystem::exists(kTable)) return false;
  FILE* f = popen(("gzip -dc '" + kTable + "'").c_str(), "r");
  if (!f) return false;
  char line[128];
  uint32_t i = 0;
  while (fgets(line, sizeof line, f)) {
    std::string_view s = trim(line);
    size_t sl = s.find('/');
    if (sl == std::string_view::npos) continue;
    uint64_t len;
    if (!parse_uint(s.substr(sl + 1), len)) continue;
    IPv4Addr a4;
    IPv6Addr a6;
    ++i;
    if (parse_ipv4(s.substr(0, sl), a4) && len <= 32) {
      IPRoute r;
      r.len = uint8_t(len);
      r.addr = a4.host() & k::prefix_mask(r.len);
      r.gw = 0x0a000000u + i % 500;  // a router has few next hops (DIR-24-8 holds 32766)
      r.port = int(i % 8);
      t.v4.push_back(r);
    } else if (parse_ipv6(s.substr(0, sl), a6) && len <= 128) {
      uint64_t hi = 0, lo = 0;
      for (int b = 0; b < 8; ++b) hi = hi << 8 | a6.b[size_t(b)], lo = lo << 8 | a6.b[size_t(8 + b)];
      uint64_t mh, ml;
      k::lpm6_mask(~0ull, ~0ull, uint8_t(len), mh, ml);
      t.v6.push_back({hi & mh, lo & ml, uint8_t(len), int32_t(i % 1000)});
    }
  }
  pclose(f);
  return !t.v4.empty();
}

double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

TEST(FullTable, Ipv4LookupsMatchThePerLengthOracle) {
  PrefixTable t;
  if (!load(t)) GTEST_SKIP() << "no " << kTable << " (optional public data)";
  // The oracle: (masked address, length) -> route, probed /32 down to /0.
  std::unordered_map<uint64_t, size_t> by;
  for (size_t i = 0; i < t.v4.size(); ++i) by[uint64_t(t.v4[i].addr) << 6 | t.v4[i].len] = i;  // last wins, as set()
  auto oracle = [&](uint32_t a) -> const IPRoute* {
    for (int len = 32; len >= 0; --len) {
      auto it = by.find(uint64_t(a & k::prefix_mask(uint8_t(len))) << 6 | uint64_t(len));
      if (it != by.end()) return &t.v4[it->second];
    }
    return nullptr;
  };
  std::string err;
  auto t0 = std::chrono::steady_clock::now();
  IPRouteTable dir(IPRouteTable::Kind::Dir24_8);
  ASSERT_TRUE(dir.set(t.v4, err)) << err;
  double dir_s = since(t0);
  t0 = std::chrono::steady_clock::now();
  IPRouteTable rad(IPRouteTable::Kind::Radix);
  ASSERT_TRUE(rad.set(t.v4, err)) << err;
  double rad_s = since(t0);
  t0 = std::chrono::steady_clock::now();
  IPRouteTable rng_t(IPRouteTable::Kind::Range);
  ASSERT_TRUE(rng_t.set(t.v4, err)) << err;
  double range_s = since(t0);
  auto sd = dir.snapshot(), sr = rad.snapshot(), sg = rng_t.snapshot();
  std::printf(
      "  %zu IPv4 prefixes: DIR-24-8 built in %.2f s, radix in %.2f s (%.1f MB), ranges in %.2f s (%zu, %.1f MB)\n",
      t.v4.size(), dir_s, rad_s, double(sr->radix.memory_bytes()) / 1e6, range_s, sg->range.starts.size(),
      double(sg->range.memory_bytes()) / 1e6);
  auto v = sd->lpm.view();
  std::mt19937 rng(3);
  size_t routed = 0;
  for (int i = 0; i < 400000; ++i) {
    // Half inside a random prefix, half anywhere.
    uint32_t a = uint32_t(rng());
    if (i & 1) {
      const IPRoute& r = t.v4[rng() % t.v4.size()];
      a = r.addr | (a & ~k::prefix_mask(r.len));
    }
    const IPRoute* want = oracle(a);
    int32_t d = k::lpm4_lookup(v, a), r = sr->radix.lookup(a), g = sg->range.lookup(a);
    if (!want) {
      ASSERT_LT(d, 0) << format_ipv4(reinterpret_cast<const uint8_t*>(&a));
      ASSERT_LT(r, 0);
      ASSERT_LT(g, 0);
      continue;
    }
    ++routed;
    ASSERT_GE(d, 0);
    ASSERT_GE(r, 0);
    EXPECT_EQ(sd->nexthops[size_t(d)].gw, want->gw);
    EXPECT_EQ(sd->nexthops[size_t(d)].port, want->port);
    ASSERT_EQ(sr->nexthops[size_t(r)].gw, want->gw);
    ASSERT_EQ(sr->nexthops[size_t(r)].port, want->port);
    ASSERT_GE(g, 0);
    ASSERT_EQ(sg->nexthops[size_t(g)].gw, want->gw);
    ASSERT_EQ(sg->nexthops[size_t(g)].port, want->port);
  }
  EXPECT_GT(routed, 200000u);
}

TEST(FullTable, Ipv6LookupsMatchThePerLengthOracle) {
  PrefixTable t;
  if (!load(t)) GTEST_SKIP() << "no " << kTable << " (optional public data)";
  ASSERT_FALSE(t.v6.empty());
  struct H {
    size_t operator()(const std::tuple<uint64_t, uint64_t, int>& x) const {
      return std::hash<uint64_t>()(std::get<0>(x) * 31 + std::get<1>(x)) ^ size_t(std::get<2>(x));
    }
  };
  std::unordered_map<std::tuple<uint64_t, uint64_t, int>, int32_t, H> by;
  for (auto& p : t.v6) by[{p.hi, p.lo, p.len}] = p.nexthop;
  auto t0 = std::chrono::steady_clock::now();
  k::Lpm6Table l6;
  l6.build(t.v6);
  std::printf("  %zu IPv6 prefixes: built in %.2f s, %zu markers\n", t.v6.size(), since(t0), size_t(l6.markers()));
  auto v = l6.view();
  std::mt19937_64 rng(4);
  size_t routed = 0;
  for (int i = 0; i < 200000; ++i) {
    uint64_t hi = rng(), lo = rng();
    if (i & 1) {
      const auto& p = t.v6[rng() % t.v6.size()];
      uint64_t mh, ml;
      k::lpm6_mask(~0ull, ~0ull, p.len, mh, ml);
      hi = p.hi | (hi & ~mh), lo = p.lo | (lo & ~ml);
    } else {
      hi = (hi & 0x1fffffffffffffffull) | 0x2000000000000000ull;  // 2000::/3, where the table lives
    }
    int32_t want = -1;
    for (int len = 128; len >= 0; --len) {
      uint64_t mh, ml;
      k::lpm6_mask(~0ull, ~0ull, uint8_t(len), mh, ml);
      auto it = by.find({hi & mh, lo & ml, len});
      if (it != by.end()) {
        want = it->second;
        break;
      }
    }
    routed += want >= 0;
    ASSERT_EQ(k::lpm6_lookup(v, hi, lo), want) << std::hex << hi << ":" << lo;
  }
  EXPECT_GT(routed, 100000u);
}
