#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "shoal/io/traffic.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

using namespace shoal;

// The prebuilt-frame path with incremental checksums must equal building
// every frame from scratch, for every protocol, both IP versions and IMIX.
TEST(TrafficGen, PrebuiltFramesEqualFromScratch) {
  for (int v6 = 0; v6 < 2; ++v6)
    for (auto proto : {io::Proto::UDP, io::Proto::TCP, io::Proto::ICMP, io::Proto::MIX})
      for (bool imix : {false, true}) {
        io::TrafficSpec s;
        s.ipv6 = v6;
        s.proto = proto;
        s.imix = imix;
        s.flows = 37;
        s.flowsize = 3;
        s.length = 200;
        io::TrafficGen g(s);
        std::vector<uint8_t> a(2048), b(2048);
        for (uint64_t i : {0ull, 1ull, 2ull, 77ull, 65535ull, 65536ull, 1ull << 33, 123456789ull}) {
          uint32_t len = g.length_of(i);
          g.build(i, a.data());
          g.build_slow(i, b.data());
          ASSERT_EQ(0, std::memcmp(a.data(), b.data(), len))
              << "v6 " << v6 << " proto " << int(proto) << " imix " << imix << " i " << i;
        }
      }
}

TEST(TrafficGen, FramesCarryValidChecksumsAndSequence) {
  io::TrafficSpec s;
  s.proto = io::Proto::TCP;
  s.flows = 4;
  io::TrafficGen g(s);
  std::vector<uint8_t> f(2048);
  g.build(4242, f.data());
  const uint8_t* ip = f.data() + 14;
  EXPECT_EQ(k::ip_checksum(ip, 20), 0);
  uint32_t l4len = k::load_be16(ip + 2) - 20u;
  EXPECT_EQ(k::csum_fold(k::csum_partial(ip + 20, l4len, k::ipv4_pseudo_sum(ip + 12, ip + 16, 6, l4len))), 0);
  EXPECT_EQ(k::load_be32(ip + 20 + 20 + 4), 4242u);
  EXPECT_EQ(g.flow_of(4242), 4242u % 4);
}
