// IPsec's pieces: the anti-replay window against a brute-force model, the
// ip-xfrm SAD parser and its diagnostics, and the ESP transform against the
// RFC 3686, RFC 2202 and RFC 4231 vectors (../shared/data/crypto, skipped
// without it). The whole transform is checked against scapy by
// tests/scripts/ipsec_oracle.py.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "shoal/crypto/esp.hh"
#include "shoal/crypto/replay.hh"
#include "shoal/crypto/sadb.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal::crypto {
namespace {

// n random bytes (keys, salts)
std::string random_key(std::mt19937& rng, size_t n) {
  std::string s(n, 0);
  for (auto& c : s) c = char(rng());
  return s;
}

// The model: accepted numbers in a set, the top the highest accepted.
struct ReplayModel {
  uint32_t w;
  uint64_t top = 0;
  std::set<uint64_t> seen;
  bool check(uint64_t s, bool esn) const {
    if (!esn && s == 0) return false;
    if (w == 0 || s > top) return true;
    return top - s < w && !seen.count(s);
  }
  void update(uint64_t s) {
    top = std::max(top, s);
    seen.insert(s);
  }
};

TEST(ReplayWindow, MatchesModel) {
  std::mt19937_64 rng(7);
  for (uint32_t w : {0u, 1u, 32u, 64u, 65u, 1024u, 4000u}) {
    ReplayWindow rw(w);
    ReplayModel m{w};
    uint64_t next = 1;
    for (int i = 0; i < 200000; ++i) {
      // mostly in order, some late (within and beyond the window), some duplicates, some jumps
      uint64_t s;
      uint32_t r = uint32_t(rng() % 100);
      if (r < 60)
        s = next++;
      else if (r < 85)
        s = next > 1 ? next - 1 - rng() % std::min<uint64_t>(next - 1, uint64_t(w) * 2 + 3) : 1;
      else if (r < 95)
        s = next > 1 ? next - 1 : 1;
      else
        s = next += rng() % (uint64_t(w) * 3 + 100);
      bool want = m.check(s, false);
      ASSERT_EQ(rw.check(s, false), want) << "w " << w << " seq " << s << " top " << m.top;
      if (want && rng() % 10) {  // nine in ten authenticate
        rw.update(s);
        m.update(s);
      }
    }
  }
}

TEST(ReplayWindow, EsnInfersTheHighHalfAcrossTheWrap) {
  std::mt19937_64 rng(11);
  for (uint32_t w : {64u, 1024u}) {
    ReplayWindow rw(w);
    ReplayModel m{w};
    uint64_t next = 0xffffff00u;  // the low half wraps after 256 packets
    rw.update(next - 1);
    m.update(next - 1);
    for (int i = 0; i < 50000; ++i) {
      // in order, late within the window, or a jump ahead of up to 2^31 (a
      // loss burst): each is inferred exactly (RFC 4303 A2.2 covers numbers
      // from the window's bottom to 2^32 - W above it)
      uint64_t s;
      uint32_t r = uint32_t(rng() % 100);
      if (r < 70) {
        s = next++;
      } else if (r < 97) {
        s = rw.top() - rng() % w;
      } else {
        next += rng() % (1ull << 31);
        s = next++;
      }
      uint64_t got = rw.infer(uint32_t(s), true);
      ASSERT_EQ(got, s) << "w " << w << " low " << uint32_t(s) << " top " << rw.top();
      bool want = m.check(s, true);
      ASSERT_EQ(rw.check(s, true), want);
      if (want) {
        rw.update(s);
        m.update(s);
      }
    }
    EXPECT_GT(rw.top(), 0x300000000ull) << "the run crossed several wraps of the low half";
  }
}

// The check before the ICV's runs without the SA's lock while another
// worker records numbers: it must never refuse a number not yet recorded
// that lies in the window (its slot's bit, set for a number one bitmap
// earlier, is cleared before the top that covers it is published).
TEST(ReplayWindow, AnUnlockedCheckNeverRefusesANumberNotSeen) {
  for (uint32_t w : {64u, 1024u}) {
    ReplayWindow rw(w);
    std::atomic<bool> done{false};
    std::atomic<uint64_t> refused{0}, checked{0};
    std::thread reader([&] {
      std::mt19937_64 rng(3);
      while (!done.load(std::memory_order_relaxed)) {
        uint64_t top = rw.top();
        if (top < 2 * w) continue;
        // a multiple of 7 (never recorded) in or just above the window
        uint64_t s = (top - w / 2 + rng() % w) / 7 * 7;
        bool ok = rw.check(s, false);
        uint64_t after = rw.top();
        if (s + w > after + 1) {  // in the window of every top the check could have read
          checked.fetch_add(1, std::memory_order_relaxed);
          if (!ok) refused.fetch_add(1, std::memory_order_relaxed);
        }
      }
    });
    for (uint64_t s = 1; s < 3'000'000; ++s)
      if (s % 7) rw.update(s);
    done = true;
    reader.join();
    EXPECT_EQ(refused.load(), 0u) << "w " << w;
    EXPECT_GT(checked.load(), 0u);
  }
}

TEST(ReplayWindow, SeqZeroOnlyWithEsn) {
  ReplayWindow rw(64);
  EXPECT_FALSE(rw.check(0, false));
  EXPECT_TRUE(rw.check(1, false));
}

TEST(Sad, ParsesXfrmCommands) {
  Database db;
  std::string err;
  size_t col = 0;
  ASSERT_TRUE(
      db.apply("ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x1001 reqid 3 mode tunnel "
               "replay-window 2048 flag esn aead 'rfc4106(gcm(aes))' "
               "0x0102030405060708090a0b0c0d0e0f1011121314 96",
               err, col))
      << err;
  ASSERT_TRUE(
      db.apply("state add src 2001:db8::1 dst 2001:db8::2 proto esp spi 4098 mode transport enc cbc(aes) "
               "0x000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f auth-trunc hmac(sha256) "
               "0x00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff 128",
               err, col))
      << err;
  ASSERT_TRUE(
      db.apply("ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 proto tcp dport 443 dir out priority 5 "
               "tmpl src 192.0.2.1 dst 192.0.2.2 proto esp reqid 3 mode tunnel",
               err, col))
      << err;
  ASSERT_TRUE(db.apply("ip xfrm policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir out priority 10 action block", err, col))
      << err;
  ASSERT_EQ(db.sas().size(), 2u);
  const SAParams& a = db.sas()[0]->params;
  EXPECT_EQ(a.spi, 0x1001u);
  EXPECT_EQ(a.mode, Mode::Tunnel);
  EXPECT_EQ(a.cipher, Cipher::AesGcm);
  EXPECT_EQ(a.enc_key.size(), 16u);
  EXPECT_EQ(a.salt, std::string("\x11\x12\x13\x14"));
  EXPECT_EQ(a.icv_len, 12);
  EXPECT_TRUE(a.esn);
  EXPECT_EQ(a.replay_window, 2048u);
  EXPECT_EQ(a.suite(), "aes128-gcm12");
  EXPECT_EQ(db.sas()[1]->params.suite(), "aes256-cbc-hmac-sha256-128");

  Selector s;
  uint8_t a1[4] = {10, 1, 2, 3}, a2[4] = {10, 2, 9, 9};
  s.src = Addr::v4(a1);
  s.dst = Addr::v4(a2);
  s.proto = 6;
  s.dport = 443;
  const Policy* p = db.match(Dir::Out, s);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(p->allow);  // priority 5 before 10
  SA* sa = db.find_out(p->tmpl, s.src, s.dst);
  ASSERT_NE(sa, nullptr);
  EXPECT_EQ(sa->params.spi, 0x1001u);
  s.dport = 80;
  p = db.match(Dir::Out, s);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->allow);
  s.dst.b[1] = 3;
  EXPECT_EQ(db.match(Dir::Out, s), nullptr);
  EXPECT_EQ(db.match(Dir::In, s), nullptr);

  uint8_t d[4] = {192, 0, 2, 2};
  EXPECT_EQ(db.find_in(Addr::v4(d), 0x1001), db.sas()[0].get());
  EXPECT_EQ(db.find_in(Addr::v4(d), 0x1002), nullptr);
  ASSERT_TRUE(db.apply("ip xfrm state delete src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x1001", err, col)) << err;
  EXPECT_EQ(db.find_in(Addr::v4(d), 0x1001), nullptr);
  EXPECT_EQ(db.sas().size(), 1u);
  ASSERT_TRUE(db.apply("ip xfrm policy flush", err, col));
  EXPECT_TRUE(db.policies().empty());

  // 0.0.0.0/0 is every IPv4 address and no IPv6 one (as Linux keeps it), ::/0 the converse
  ASSERT_TRUE(db.apply("ip xfrm policy add src 0.0.0.0/0 dst 0.0.0.0/0 dir out action block", err, col)) << err;
  ASSERT_EQ(db.policies().size(), 1u);
  EXPECT_EQ(db.policies()[0].src.a.family, 4);
  EXPECT_EQ(db.policies()[0].src.a.b, (std::array<uint8_t, 16>{}));
  s.dst.b[1] = 77;
  EXPECT_NE(db.match(Dir::Out, s), nullptr);
  uint8_t v6a[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, v6b[16] = {0xfd};
  Selector s6;
  s6.src = Addr::v6(v6a);
  s6.dst = Addr::v6(v6b);
  s6.proto = 17;
  EXPECT_EQ(db.match(Dir::Out, s6), nullptr);
  ASSERT_TRUE(db.apply("ip xfrm policy add src ::/0 dst ::/0 dir out action block", err, col)) << err;
  EXPECT_EQ(db.match(Dir::Out, s6), &db.policies()[1]);
  EXPECT_EQ(db.match(Dir::Out, s), &db.policies()[0]);
}

// The inbound SA lookup (an open-addressed table rebuilt per change) against
// the SAs the commands left: thousands of SAs, IPv4 and IPv6, the same SPI
// under other destinations, deletions and replacements between lookups.
TEST(Sad, InboundLookupAgreesWithTheSAsAdded) {
  Database db;
  std::string err;
  size_t col = 0;
  std::mt19937_64 rng(5);
  std::map<std::pair<std::string, uint32_t>, uint32_t> live;  // (dst, spi) -> reqid of the SA there now
  auto dst_of = [](uint32_t i) {
    return i % 3 ? fmt::format("198.51.{}.{}", (i >> 8) & 255, i & 255) : fmt::format("2001:db8::{:x}", i);
  };
  const char* alg = "aead 'rfc4106(gcm(aes))' 0x000102030405060708090a0b0c0d0e0f10111213 128";
  for (uint32_t round = 0; round < 6; ++round) {
    for (int k = 0; k < 600; ++k) {
      uint32_t i = uint32_t(rng() % 900), spi = 0x100 + uint32_t(rng() % 4);
      std::string dst = dst_of(i), src = i % 3 ? "192.0.2.1" : "2001:db8::1";
      if (rng() % 4 == 0) {
        bool there = live.erase({dst, spi}) > 0;
        EXPECT_EQ(db.apply(fmt::format("ip xfrm state delete src {} dst {} proto esp spi {}", src, dst, spi), err, col),
                  there)
            << err;
        continue;
      }
      uint32_t reqid = uint32_t(rng() % 1000) + 1;
      ASSERT_TRUE(db.apply(fmt::format("ip xfrm state add src {} dst {} proto esp spi {} reqid {} mode tunnel {}", src,
                                       dst, spi, reqid, alg),
                           err, col))
          << err;
      live[{dst, spi}] = reqid;
    }
    EXPECT_EQ(db.sas().size(), live.size());
    for (uint32_t i = 0; i < 900; ++i)
      for (uint32_t spi = 0x100; spi < 0x106; ++spi) {
        std::string dst = dst_of(i);
        uint8_t b[16];
        Addr a = dst.find(':') != std::string::npos ? (inet_pton(AF_INET6, dst.c_str(), b), Addr::v6(b))
                                                    : (inet_pton(AF_INET, dst.c_str(), b), Addr::v4(b));
        SA* sa = db.find_in(a, spi);
        auto it = live.find({dst, spi});
        if (it == live.end()) {
          EXPECT_EQ(sa, nullptr) << dst << " spi " << spi;
        } else {
          ASSERT_NE(sa, nullptr) << dst << " spi " << spi;
          EXPECT_EQ(sa->params.spi, spi);
          EXPECT_EQ(sa->params.dst, a);
          EXPECT_EQ(sa->params.reqid, it->second);
        }
      }
  }
}

TEST(Sad, EspInUdp) {
  Database db;
  std::string err;
  size_t col = 0;
  ASSERT_TRUE(
      db.apply("ip xfrm state add src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x1001 mode tunnel "
               "encap espinudp 4500 4501 0.0.0.0 aead 'rfc4106(gcm(aes))' "
               "0x0102030405060708090a0b0c0d0e0f1011121314 128",
               err, col))
      << err;
  const SAParams& p = db.sas().at(0)->params;
  EXPECT_TRUE(p.encap);
  EXPECT_EQ(p.encap_sport, 4500);
  EXPECT_EQ(p.encap_dport, 4501);
  EXPECT_TRUE(db.natt_port(4501));  // the destination port is the one packets arrive on
  EXPECT_FALSE(db.natt_port(4500));
  EXPECT_NE(db.list_sas().find("encap espinudp 4500 4501"), std::string::npos) << db.list_sas();
  k::EspKeys keys;
  std::string why;
  ASSERT_TRUE(esp_device_keys(p, keys, why)) << why;  // the device lays the UDP header out too
  EXPECT_EQ(keys.encap, 1);
  EXPECT_EQ(keys.encap_sport, 4500);
  EXPECT_EQ(keys.encap_dport, 4501);
  ASSERT_TRUE(db.apply("ip xfrm state flush", err, col)) << err;
  EXPECT_FALSE(db.natt_port(4501));
}

TEST(Sad, PrefixContainsMatchesABitByBitReference) {
  std::mt19937 rng(9);
  for (int t = 0; t < 20000; ++t) {
    bool v6 = rng() % 2;
    uint8_t a[16], x[16];
    for (auto& b : a) b = uint8_t(rng());
    std::memcpy(x, a, 16);
    uint32_t len = rng() % ((v6 ? 128 : 32) + 1);
    x[rng() % (v6 ? 16 : 4)] ^= uint8_t(1u << (rng() % 8));  // one bit differs somewhere
    Prefix p;
    p.a = v6 ? Addr::v6(a) : Addr::v4(a);
    p.len = uint8_t(len);
    Addr ax = v6 ? Addr::v6(x) : Addr::v4(x);
    bool want = true;
    for (uint32_t i = 0; i < len; ++i)
      if (((a[i / 8] ^ x[i / 8]) >> (7 - i % 8)) & 1) want = false;
    ASSERT_EQ(p.contains(ax), want) << "len " << len << (v6 ? " v6" : " v4");
    Prefix other{v6 ? Addr::v4(a) : Addr::v6(a), 0};
    EXPECT_FALSE(other.contains(ax)) << "another family never matches";
  }
}

// The policy lookup (tuple space search) against trying every policy in
// turn: random policies (both families, either address left out, prefixes
// of every length with host bits set, protocols, ports, ICMP type and code,
// equal priorities where insertion order decides, replaced and deleted
// ones) over a small address space so that most packets match several.
TEST(Sad, PolicyIndexAgreesWithTheScan) {
  std::mt19937 rng(21);
  auto v4 = [&] { return fmt::format("10.{}.{}.{}", rng() % 4, rng() % 4, rng() % 256); };
  auto v6 = [&] { return fmt::format("2001:db8:{:x}::{:x}:{:x}", rng() % 4, rng() % 4, rng() % 256); };
  const char* dirs[] = {"in", "out", "fwd"};
  for (int round = 0; round < 4; ++round) {
    Database db;
    std::string err;
    size_t col = 0;
    int policies = 50 + round * 400;
    for (int i = 0; i < policies; ++i) {
      bool six = rng() % 3 == 0;
      std::string cmd = rng() % 10 == 0 ? "ip xfrm policy delete" : "ip xfrm policy add";
      auto prefix = [&] {
        uint32_t max = six ? 128 : 32;
        uint32_t len = rng() % 3 == 0 ? rng() % (max + 1) : (six ? 32 + 16 * (rng() % 7) : 8 * (rng() % 5));
        return fmt::format("{}/{}", six ? v6() : v4(), std::min(len, max));
      };
      if (rng() % 6) cmd += " src " + prefix();
      if (rng() % 6) cmd += " dst " + prefix();
      switch (rng() % 5) {
        case 0: cmd += fmt::format(" proto tcp dport {}", rng() % 2 ? 80 : 443); break;
        case 1: cmd += fmt::format(" proto udp sport {}", rng() % 2 ? 53 : 1234); break;
        case 2: cmd += fmt::format(" proto icmp type 8 code {}", rng() % 2); break;
        case 3: cmd += " proto tcp"; break;
        default: break;
      }
      cmd += fmt::format(" dir {} priority {}", dirs[rng() % 3], rng() % 4);
      if (cmd.find("delete") == std::string::npos) cmd += rng() % 2 ? " action block" : " action allow";
      db.apply(cmd, err, col);  // (a delete of a policy not there is refused: fine)
    }
    ASSERT_GT(db.policies().size(), size_t(policies / 2));
    EXPECT_GT(db.index().groups(Dir::Out), size_t(8)) << "masks of many kinds";
    size_t matched = 0, n = 60000;
    for (size_t t = 0; t < n; ++t) {
      Selector s;
      bool six = rng() % 3 == 0;
      auto addr = [&] {
        uint8_t b[16] = {};
        if (six) {
          b[0] = 0x20, b[1] = 0x01, b[2] = 0x0d, b[3] = 0xb8, b[5] = uint8_t(rng() % 4), b[13] = uint8_t(rng() % 4);
          b[15] = uint8_t(rng());
          return Addr::v6(b);
        }
        b[0] = 10, b[1] = uint8_t(rng() % 4), b[2] = uint8_t(rng() % 4), b[3] = uint8_t(rng());
        return Addr::v4(b);
      };
      s.src = addr(), s.dst = addr();
      const uint8_t protos[] = {6, 17, 1, 50};
      s.proto = protos[rng() % 4];
      const uint16_t ports[] = {0, 1, 53, 80, 443, 1234};
      s.sport = ports[rng() % 6], s.dport = ports[rng() % 6];
      for (Dir d : {Dir::In, Dir::Out, Dir::Fwd}) {
        const Policy* want = db.match_linear(d, s);
        ASSERT_EQ(db.match(d, s), want) << "round " << round << ": " << s.src.str() << " -> " << s.dst.str()
                                        << " proto " << int(s.proto) << " ports " << s.sport << " " << s.dport
                                        << ": the scan picks " << (want ? want->str() : "none");
        matched += want != nullptr;
      }
    }
    EXPECT_GT(matched, n) << "most lookups find a policy (the case worth checking)";
  }
}

// Policies come in any order of priority (sorted once loaded), a policy
// with a selector already held replaces it, and a template without an SPI
// picks the first SA added between its addresses (with its reqid).
TEST(Sad, PolicyOrderReplacementAndTemplates) {
  Database db;
  std::string err;
  size_t col = 0;
  const char* gcm = "aead 'rfc4106(gcm(aes))' 0x0102030405060708090a0b0c0d0e0f1011121314 128";
  for (auto [spi, reqid] : {std::pair{0x101, 1}, {0x102, 2}, {0x103, 1}})
    ASSERT_TRUE(db.apply(
        fmt::format("state add src 192.0.2.1 dst 192.0.2.2 proto esp spi {} reqid {} mode tunnel {}", spi, reqid, gcm),
        err, col))
        << err;
  ASSERT_TRUE(
      db.apply("policy add src 10.0.0.0/8 dst 10.2.0.0/16 dir out priority 9 tmpl src 192.0.2.1 dst "
               "192.0.2.2 proto esp reqid 2 mode tunnel",
               err, col))
      << err;
  ASSERT_TRUE(
      db.apply("policy add src 10.1.0.0/16 dst 10.2.0.0/16 dir out priority 3 tmpl src 192.0.2.1 dst "
               "192.0.2.2 proto esp mode tunnel",
               err, col))
      << err;
  Selector s;
  const uint8_t a[4] = {10, 1, 0, 1}, b[4] = {10, 2, 0, 1}, c[4] = {10, 3, 0, 1};
  s.src = Addr::v4(a), s.dst = Addr::v4(b), s.proto = 6;
  const Policy* p = db.match(Dir::Out, s);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->priority, 3u) << "added second, tried first";
  ASSERT_NE(p->sa, nullptr);
  EXPECT_EQ(p->sa->params.spi, 0x101u) << "no reqid: the first SA added between the addresses";
  s.src = Addr::v4(c);
  p = db.match(Dir::Out, s);
  ASSERT_NE(p, nullptr);
  ASSERT_NE(p->sa, nullptr);
  EXPECT_EQ(p->sa->params.spi, 0x102u) << "reqid 2";
  // the same selector again: replaced, now blocking
  ASSERT_TRUE(db.apply("policy add src 10.0.0.0/8 dst 10.2.0.0/16 dir out priority 1 action block", err, col)) << err;
  EXPECT_EQ(db.policies().size(), 2u);
  p = db.match(Dir::Out, s);
  ASSERT_NE(p, nullptr);
  EXPECT_FALSE(p->allow);
  s.src = Addr::v4(a);
  EXPECT_EQ(db.match(Dir::Out, s), p) << "priority 1 now comes first";
  ASSERT_TRUE(db.apply("policy delete src 10.0.0.0/8 dst 10.2.0.0/16 dir out", err, col)) << err;
  EXPECT_EQ(db.match(Dir::Out, s)->priority, 3u);
  EXPECT_FALSE(db.apply("policy delete src 10.0.0.0/8 dst 10.2.0.0/16 dir out", err, col)) << "gone already";
  // the first SA removed: the template (no reqid) picks the next one added
  ASSERT_TRUE(db.apply("state delete src 192.0.2.1 dst 192.0.2.2 proto esp spi 0x101", err, col)) << err;
  ASSERT_NE(db.match(Dir::Out, s)->sa, nullptr);
  EXPECT_EQ(db.match(Dir::Out, s)->sa->params.spi, 0x102u);
  EXPECT_EQ(db.find_out(Template{{}, {}, 1, 0, Mode::Tunnel}, s.src, s.dst), nullptr)
      << "a template without addresses takes the packet's, and no SA joins 10.1.0.1 and 10.2.0.1";
}

TEST(Sad, RefusesWithTheColumn) {
  struct Case {
    const char* line;
    size_t col;
    const char* says;
  };
  const Case cases[] = {
      {"ip xfrm state add src 1.1.1.1 dst 1.1.1.2 proto ah spi 0x100 auth sha1 0x00", 49, "only esp"},
      {"ip xfrm state add src 1.1.1.1 dst 1.1.1.2 proto esp spi 5 enc aes 0x00", 57, "256"},
      {"ip xfrm state add src 1.1.1.1 dst 1.1.1.2 proto esp spi 0x100 enc aes 0x0011", 71, "16, 24 or 32"},
      {"ip xfrm state add src 1.1.1.1 dst 1.1.1.2 proto esp spi 0x100 enc des 0x0011", 67, "cbc(aes)"},
      {"ip xfrm state add src 1.1.1.1 dst 1.1.1.2 proto esp spi 0x100 enc aes 0x00112233445566778899aabbccddeeff", 19,
       "without integrity"},
      {"ip xfrm state add src 1.1.1.1 dst ::1 proto esp spi 0x100 aead rfc4106(gcm(aes)) "
       "0x00112233445566778899aabbccddeeff00112233 128",
       19, "families"},
      {"ip xfrm state add src 1.1.1.1 dst 1.1.1.2 proto esp spi 0x100 mark 7 aead rfc4106(gcm(aes)) 0x00 128", 63,
       "'mark' is not supported"},
      {"ip xfrm state add src 1.1.1.1 dst 1.1.1.2 proto esp spi 0x100 aead rfc4106(gcm(aes)) "
       "0x00112233445566778899aabbccddeeff00112233 100",
       129, "64, 96 or 128"},
      {"ip xfrm policy add src 10.0.0.0/33 dir out", 24, "ADDR[/PLEN]"},
      {"ip xfrm policy add src 10.0.0.0/8", 20, "dir in|out|fwd"},
      {"ip xfrm policy add dir out tmpl proto esp mode tunnel", 20, "needs src and dst"},
      {"ip xfrm state add src 'a", 23, "unterminated"},
      {"ip xfrm monitor", 9, "'state' or 'policy'"},
      {"ip xfrm state add src 1.1.1.1 dst 1.1.1.2 proto esp spi 0x100 encap espinudp-nonike 4500 4500 0.0.0.0", 69,
       "espinudp (RFC 3948)"},
      {"ip xfrm state add src 1.1.1.1 dst 1.1.1.2 proto esp spi 0x100 encap espinudp 0 4500 0.0.0.0", 78,
       "source port"},
  };
  for (const Case& c : cases) {
    Database db;
    std::string err;
    size_t col = 0;
    EXPECT_FALSE(db.apply(c.line, err, col)) << c.line;
    EXPECT_EQ(col, c.col) << c.line << ": " << err;
    EXPECT_NE(err.find(c.says), std::string::npos) << c.line << ": " << err;
  }
}

TEST(Sad, FileErrorsHaveLineAndColumn) {
  auto path = std::filesystem::temp_directory_path() / "shoal-sad-test.sad";
  {
    std::ofstream f(path);
    f << "# a comment\n\n"
         "ip xfrm state add src 1.1.1.1 dst 1.1.1.2 proto esp spi 0x100 \\\n"
         "    aead rfc4106(gcm(aes)) 0x00112233445566778899aabbccddeeff00112233 128\n"
         "ip xfrm policy add src 10.0.0.0/8 dir sideways\n";
  }
  Database db;
  std::string err;
  EXPECT_FALSE(db.load_file(path.string(), err));
  EXPECT_EQ(err, path.string() + ":5:39: 'dir' is in, out or fwd");
  EXPECT_EQ(db.sas().size(), 1u);  // the continued command before it loaded
  std::filesystem::remove(path);
  EXPECT_FALSE(db.load_file(path.string(), err));
  EXPECT_NE(err.find("cannot open"), std::string::npos);
}

std::vector<Engine> engines() {
  std::vector<Engine> e{Engine::OpenSsl};
  if (have_ipsec_mb()) e.push_back(Engine::IpsecMb);
  return e;
}

// ../shared/data/crypto's vector files: records of "NAME = hex" lines.
std::vector<std::map<std::string, std::string>> vectors(const char* file) {
  std::vector<std::map<std::string, std::string>> out;
  std::ifstream in(std::string(SHOAL_SOURCE_DIR) + "/../shared/data/crypto/" + file);
  std::string line;
  std::map<std::string, std::string> cur;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    size_t eq = line.find(" = ");
    if (line.empty() || line[0] == '#' || line[0] == '[' || eq == std::string::npos) {
      if (line.empty() && !cur.empty()) out.push_back(std::move(cur)), cur.clear();
      continue;
    }
    std::string hex = line.substr(eq + 3), bytes;
    for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes += char(std::stoi(hex.substr(i, 2), nullptr, 16));
    cur[line.substr(0, eq)] = line.substr(0, eq) == "Len" || line.substr(0, eq) == "COUNT" ? hex : bytes;
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

TEST(Esp, Rfc3686AesCtrVectors) {
  auto vs = vectors("rfc3686-aes-128-ctr.txt");
  if (vs.empty()) GTEST_SKIP() << "../shared/data/crypto is not here";
  int n = 0;
  for (auto& v : vs) {
    if (!v.count("KEY") || !v.count("IV") || v["IV"].size() != 16) continue;
    SAParams p;
    p.cipher = Cipher::AesCtr;
    p.enc_key = v["KEY"];
    p.salt = v["IV"].substr(0, 4);  // nonce | IV | counter (1)
    ASSERT_EQ(k::load_be32(reinterpret_cast<const uint8_t*>(v["IV"].data()) + 12), 1u);
    uint64_t seq = k::load_be64(reinterpret_cast<const uint8_t*>(v["IV"].data()) + 4);  // the IV is the sequence number
    for (Engine e : engines()) {
      EspCipher c(p, e);
      const std::string& pt = v["PLAINTEXT"];
      std::vector<uint8_t> pkt(8 + 8 + pt.size());
      std::memcpy(pkt.data() + 16, pt.data(), pt.size());
      ASSERT_TRUE(c.seal(pkt.data(), uint32_t(pt.size()), seq));
      EXPECT_EQ(std::string(reinterpret_cast<char*>(pkt.data()) + 16, pt.size()), v["CIPHERTEXT"]) << "COUNT " << n;
      ASSERT_TRUE(c.open(pkt.data(), uint32_t(pt.size()), seq));
      EXPECT_EQ(std::string(reinterpret_cast<char*>(pkt.data()) + 16, pt.size()), pt);
    }
    ++n;
  }
  EXPECT_EQ(n, 3);
}

// The ICV of a null-cipher SA is the HMAC of the ESP header and text: the
// RFC 2202 and RFC 4231 vectors through it, the long keys hashed first.
void hmac_vectors(const char* file, Integ integ, uint8_t full) {
  auto vs = vectors(file);
  if (vs.empty()) GTEST_SKIP() << "../shared/data/crypto is not here";
  int n = 0;
  for (auto& v : vs) {
    if (!v.count("Key") || !v.count("Msg") || !v.count("MD") || v["Msg"].size() < 8) continue;
    SAParams p;
    p.cipher = Cipher::Null;
    p.integ = integ;
    p.auth_key = v["Key"];
    p.icv_len = full;
    for (Engine e : engines()) {
      EspCipher c(p, e);
      std::string m = v["Msg"];
      std::vector<uint8_t> pkt(m.begin(), m.end());
      pkt.resize(m.size() + full);
      ASSERT_TRUE(c.seal(pkt.data(), uint32_t(m.size() - 8), 1));
      EXPECT_EQ(std::string(reinterpret_cast<char*>(pkt.data()) + m.size(), full), v["MD"].substr(0, full))
          << file << " vector " << n;
      EXPECT_TRUE(c.open(pkt.data(), uint32_t(m.size() - 8), 1));
      pkt[3] ^= 0x40;  // any bit of the header changes the ICV
      EXPECT_FALSE(c.open(pkt.data(), uint32_t(m.size() - 8), 1));
    }
    ++n;
  }
  EXPECT_GE(n, 5);
}
TEST(Esp, Rfc2202HmacSha1Vectors) { hmac_vectors("rfc2202-hmac-sha1.txt", Integ::HmacSha1, 20); }
TEST(Esp, Rfc4231HmacSha256Vectors) { hmac_vectors("rfc4231-hmac-sha256.txt", Integ::HmacSha256, 32); }

TEST(Esp, GcmTagAndEsnAreChecked) {
  SAParams p;
  p.cipher = Cipher::AesGcm;
  p.enc_key = std::string(16, '\x42');
  p.salt = "salt";
  p.icv_len = 16;
  p.esn = true;
  for (Engine e : engines()) {
    EspCipher c(p, e);
    std::vector<uint8_t> pkt(8 + 8 + 64 + 16, 0x5a);
    k::store_be32(pkt.data(), 0x1234);
    uint64_t seq = 0x500000007ull;
    k::store_be32(pkt.data() + 4, uint32_t(seq));
    ASSERT_TRUE(c.seal(pkt.data(), 64, seq));
    auto copy = pkt;
    EXPECT_TRUE(c.open(copy.data(), 64, seq));
    EXPECT_EQ(copy[16], 0x5a);
    copy = pkt;
    EXPECT_FALSE(c.open(copy.data(), 64, seq + (1ull << 32))) << "the high half is authenticated";
    copy = pkt;
    copy[20] ^= 1;
    EXPECT_FALSE(c.open(copy.data(), 64, seq));
    copy = pkt;
    copy[pkt.size() - 1] ^= 0x80;
    EXPECT_FALSE(c.open(copy.data(), 64, seq));
  }
}

// Both engines seal the same packets to the same bytes, and each opens the
// other's, for every suite, ESN or not, on random lengths.
TEST(Esp, EnginesAgree) {
  if (!have_ipsec_mb()) GTEST_SKIP() << "intel-ipsec-mb is not built in";
  std::mt19937 rng(5);
  auto bytes = [&](size_t n) { return random_key(rng, n); };
  for (Cipher ci : {Cipher::AesGcm, Cipher::AesCtr, Cipher::AesCbc, Cipher::Null})
    for (size_t kl : {16, 24, 32})
      for (bool esn : {false, true}) {
        SAParams p;
        p.cipher = ci;
        p.enc_key = ci == Cipher::Null ? "" : bytes(kl);
        p.salt = bytes(4);
        p.integ = ci == Cipher::AesGcm ? Integ::None : kl == 24 ? Integ::HmacSha256 : Integ::HmacSha1;
        p.auth_key = bytes(kl == 32 ? 100 : 20);  // a key longer than a block is hashed first
        p.icv_len = ci == Cipher::AesGcm ? (kl == 24 ? 8 : 16) : 12;
        p.esn = esn;
        EspCipher a(p, Engine::IpsecMb), b(p, Engine::OpenSsl);
        for (int t = 0; t < 20; ++t) {
          uint32_t text = uint32_t(rng() % 90 + 1) * a.align();
          uint64_t seq = (uint64_t(rng() % 3) << 32) | rng();
          std::vector<uint8_t> x(8 + a.iv_len() + text + a.icv_len());
          for (auto& c : x) c = uint8_t(rng());
          auto y = x;
          ASSERT_TRUE(a.seal(x.data(), text, seq));
          ASSERT_TRUE(b.seal(y.data(), text, seq));
          ASSERT_EQ(x, y) << int(ci) << " key " << kl << " esn " << esn;
          auto x2 = x;
          EXPECT_TRUE(a.open(x.data(), text, seq));
          EXPECT_TRUE(b.open(x2.data(), text, seq));
          EXPECT_EQ(x, x2);
          y[8 + a.iv_len() + rng() % text] ^= 4;
          auto y2 = y;
          EXPECT_FALSE(a.open(y.data(), text, seq));
          EXPECT_FALSE(b.open(y2.data(), text, seq));
        }
      }
}

// A queue of many packets' transforms over SAs of every suite (ESN or
// not) interleaved, more of them than the multi-buffer manager holds at
// once: the bytes OpenSSL's engine makes one at a time, each result back
// with its tag in the order added, and forged packets (one bit of the text
// or of the ICV) refused among genuine ones.
TEST(Esp, QueueAgreesWithOneAtATime) {
  if (!have_ipsec_mb()) GTEST_SKIP() << "intel-ipsec-mb is not built in";
  std::mt19937 rng(11);
  auto bytes = [&](size_t n) { return random_key(rng, n); };
  std::vector<SAParams> sas;
  for (Cipher ci : {Cipher::AesCtr, Cipher::AesCbc, Cipher::Null, Cipher::AesGcm})
    for (Integ in : {Integ::HmacSha1, Integ::HmacSha256})
      for (bool esn : {false, true}) {
        SAParams p;
        p.cipher = ci;
        p.enc_key = ci == Cipher::Null ? "" : bytes(ci == Cipher::AesCbc ? 32 : 16);
        p.salt = bytes(4);
        p.integ = ci == Cipher::AesGcm ? Integ::None : in;
        p.auth_key = bytes(in == Integ::HmacSha1 ? 20 : 32);
        p.icv_len = ci == Cipher::AesGcm ? 16 : in == Integ::HmacSha1 ? 12 : 16;
        p.esn = esn;
        sas.push_back(p);
      }
  std::vector<std::unique_ptr<EspCipher>> mb, ossl;
  for (const auto& p : sas) {
    mb.push_back(std::make_unique<EspCipher>(p, Engine::Auto, true));
    ossl.push_back(std::make_unique<EspCipher>(p, Engine::OpenSsl));
    EXPECT_EQ(mb.back()->mb_jobs(), p.cipher != Cipher::AesGcm);
  }
  struct Pkt {
    size_t sa;
    uint32_t text;
    uint64_t seq;
    std::vector<uint8_t> b;
  };
  const int n = 700;  // > the queue's slots
  std::vector<Pkt> pk;
  for (int i = 0; i < n; ++i) {
    Pkt k;
    k.sa = rng() % sas.size();
    EspCipher& c = *mb[k.sa];
    k.text = uint32_t(rng() % 100 + 1) * c.align();
    k.seq = (uint64_t(rng() % 3) << 32) | (rng() | 1);
    k.b.resize(8 + c.iv_len() + k.text + c.icv_len() + 4);  // (+4: ESN's high half goes after the text)
    for (auto& x : k.b) x = uint8_t(rng());
    k::store_be32(k.b.data(), 0x1000 + uint32_t(k.sa));
    k::store_be32(k.b.data() + 4, uint32_t(k.seq));
    pk.push_back(std::move(k));
  }
  auto want = pk;
  for (auto& k : want) ASSERT_TRUE(ossl[k.sa]->seal(k.b.data(), k.text, k.seq));
  EspQueue q;
  for (int i = 0; i < n; ++i)
    q.add(*mb[pk[size_t(i)].sa], true, pk[size_t(i)].b.data(), pk[size_t(i)].text, pk[size_t(i)].seq, uint32_t(i));
  uint32_t next = 0;
  q.finish([&](uint32_t tag, bool ok, bool failed) {
    EXPECT_EQ(tag, next++);
    EXPECT_TRUE(ok && !failed);
  });
  EXPECT_EQ(next, uint32_t(n));
  EXPECT_TRUE(q.empty());
  for (int i = 0; i < n; ++i) {
    const Pkt& k = pk[size_t(i)];
    size_t used = k.b.size() - 4;
    ASSERT_TRUE(std::equal(k.b.begin(), k.b.begin() + long(used), want[size_t(i)].b.begin()))
        << "packet " << i << " sa " << k.sa;
  }
  // open them again, a third forged
  std::vector<bool> forged(size_t(n), false);
  auto plain = pk;
  for (int i = 0; i < n; ++i) {
    Pkt& k = pk[size_t(i)];
    if (rng() % 3 == 0) {
      forged[size_t(i)] = true;
      EspCipher& c = *mb[k.sa];
      k.b[8 + c.iv_len() + rng() % (k.text + c.icv_len())] ^= uint8_t(1 << (rng() % 8));
    }
    q.add(*mb[k.sa], false, k.b.data(), k.text, k.seq, uint32_t(i));
  }
  next = 0;
  q.finish([&](uint32_t tag, bool ok, bool failed) {
    EXPECT_EQ(tag, next);
    EXPECT_FALSE(failed);
    EXPECT_EQ(ok, !forged[tag]) << "packet " << tag << " sa " << pk[tag].sa;
    ++next;
  });
  EXPECT_EQ(next, uint32_t(n));
  for (int i = 0; i < n; ++i) {  // genuine packets decrypted to what OpenSSL opens
    if (forged[size_t(i)]) continue;
    Pkt& w = want[size_t(i)];
    ASSERT_TRUE(ossl[w.sa]->open(w.b.data(), w.text, w.seq));
    uint32_t off = 8 + mb[w.sa]->iv_len();
    EXPECT_TRUE(std::equal(w.b.begin() + off, w.b.begin() + off + w.text, pk[size_t(i)].b.begin() + off)) << i;
  }
}

// The per-packet functions of the device path (kernels/esp.hh) seal every
// device suite to the bytes EspCipher (OpenSSL) seals, open what it seals,
// refuse what it refuses, and leave a refused packet untouched.
TEST(EspKernel, AgreesWithOpenSsl) {
  std::mt19937 rng(7);
  auto bytes = [&](size_t n) { return random_key(rng, n); };
  int cases = 0;
  const std::pair<Cipher, Integ> suites[] = {{Cipher::AesGcm, Integ::None},
                                             {Cipher::AesCtr, Integ::HmacSha1},
                                             {Cipher::AesCtr, Integ::HmacSha256},
                                             {Cipher::AesCbc, Integ::HmacSha1},
                                             {Cipher::AesCbc, Integ::HmacSha256}};
  for (auto [ci, in] : suites)
    for (size_t kl : {16, 24, 32})
      for (bool esn : {false, true}) {
        SAParams p;
        p.cipher = ci;
        p.enc_key = bytes(kl);
        p.salt = bytes(4);
        p.integ = in;
        p.auth_key = bytes(kl == 32 ? 100 : kl);  // a key longer than a block is hashed first
        p.icv_len = in == Integ::None ? (kl == 24 ? 8 : 16) : in == Integ::HmacSha1 ? 12 : 16;
        p.esn = esn;
        k::EspKeys keys;
        std::string why;
        ASSERT_TRUE(esp_device_keys(p, keys, why)) << why;
        EspCipher ref(p, Engine::OpenSsl);
        for (int t = 0; t < 25; ++t) {
          uint32_t text = uint32_t(rng() % 120 + 1) * ref.align();
          uint64_t seq = (uint64_t(rng() % 3) << 32) | rng();
          std::vector<uint8_t> x(8 + ref.iv_len() + text + ref.icv_len());
          for (auto& c : x) c = uint8_t(rng());
          auto y = x;
          k::esp_seal(aes_te0(), keys, x.data(), text, seq);
          ASSERT_TRUE(ref.seal(y.data(), text, seq));
          ASSERT_EQ(x, y) << p.suite() << " esn " << esn << " text " << text;
          auto x2 = x;
          EXPECT_TRUE(k::esp_open(aes_te0(), keys, x.data(), text, seq));
          EXPECT_TRUE(ref.open(x2.data(), text, seq));
          EXPECT_EQ(x, x2);
          // a flipped bit anywhere (header, IV, text, ICV) or another high half
          auto z = y;
          z[rng() % z.size()] ^= uint8_t(1u << (rng() % 8));
          auto z2 = z;
          EXPECT_FALSE(k::esp_open(aes_te0(), keys, z.data(), text, seq));
          EXPECT_EQ(z, z2) << "a refused packet is not decrypted";
          if (esn) {
            EXPECT_FALSE(k::esp_open(aes_te0(), keys, y.data(), text, seq + (1ull << 32)));
          }
          ++cases;
        }
      }
  EXPECT_EQ(cases, 5 * 3 * 2 * 25);
}

// The suites the device splits among threads (GCM, CTR with HMAC-SHA1 and
// HMAC-SHA-256), 128- and 256-bit keys, with and without ESN, each over
// short and long texts (past the largest power table: 20,000 bytes are 157
// chunks): fn(p, keys, text).
template <class F>
void for_each_split_case(std::mt19937& rng, F fn) {
  for (auto [ci, in] : {std::pair{Cipher::AesGcm, Integ::None}, std::pair{Cipher::AesCtr, Integ::HmacSha1},
                        std::pair{Cipher::AesCtr, Integ::HmacSha256}})
    for (size_t kl : {16, 32})
      for (bool esn : {false, true}) {
        SAParams p;
        p.cipher = ci;
        p.enc_key = random_key(rng, kl);
        p.salt = random_key(rng, 4);
        p.integ = in;
        p.auth_key = random_key(rng, 20);
        p.icv_len = in == Integ::None ? 16 : 12;
        p.esn = esn;
        k::EspKeys keys;
        std::string why;
        ASSERT_TRUE(esp_device_keys(p, keys, why)) << why;
        for (uint32_t text :
             {1u, 15u, 16u, 17u, 112u, 127u, 128u, 129u, 1402u, 4096u, 20000u, uint32_t(rng() % 3000 + 1)})
          fn(p, keys, text);
      }
}

// The sealing split among threads (k::esp_seal_chunk, one call per chunk in
// any order, then k::esp_seal_end) gives esp_seal's bytes (OpenSSL's, by the
// test above), for GCM and CTR, short and long texts (past the largest
// power table: 20,000 bytes are 157 chunks), with and without ESN.
TEST(EspKernel, SealingSplitAmongThreadsEqualsTheWholeTransform) {
  std::mt19937 rng(13);
  int cases = 0;
  for_each_split_case(rng, [&](const SAParams& p, const k::EspKeys& keys, uint32_t text) {
    const bool esn = p.esn;
    const uint64_t seq = (uint64_t(rng() % 3) << 32) | rng();
    std::vector<uint8_t> x(16 + text + 16);
    for (auto& c : x) c = uint8_t(rng());
    auto y = x;
    k::esp_seal(aes_te0(), keys, x.data(), text, seq);
    k::store_be64(y.data() + 8, seq);  // (EspOutStep writes the IV)
    const uint32_t chunks = k::esp_chunks(keys, text);
    std::vector<uint32_t> order(chunks);
    for (uint32_t c = 0; c < chunks; ++c) order[c] = c;
    std::shuffle(order.begin(), order.end(), rng);
    uint32_t acc[4] = {};
    for (uint32_t c : order) k::esp_seal_chunk(aes_te0(), keys, y.data(), text, seq, c, acc);
    k::esp_seal_chunk(aes_te0(), keys, y.data(), text, seq, chunks, acc);  // past the last: nothing
    k::esp_seal_end(aes_te0(), keys, y.data(), text, seq, acc);
    ASSERT_EQ(x, y) << p.suite() << " key " << p.enc_key.size() << " esn " << esn << " text " << text;
    ++cases;
  });
  EXPECT_EQ(cases, 3 * 2 * 2 * 12);
}

// The opening split among threads (k::esp_open_chunk per chunk in any
// order, k::esp_open_check, then k::esp_open_crypt_chunk per chunk) gives
// esp_open's verdicts and bytes: genuine packets decrypted, a flipped bit
// anywhere refused with the packet untouched, and with ESN a packet sealed
// in the next epoch authenticated by the check's second guess (GCM's AAD
// holds the high half: the check moves the difference into the sum) and
// refused by the first.
TEST(EspKernel, OpeningSplitAmongThreadsEqualsTheWholeTransform) {
  std::mt19937 rng(17);
  int cases = 0, refused = 0, next = 0;
  auto split_open = [&](const k::EspKeys& keys, std::vector<uint8_t>& x, uint32_t text, uint64_t seq,
                        bool try_next) -> int {  // 0 refused, 1 with seq, 2 with seq + 2^32
    const uint32_t chunks = k::esp_chunks(keys, text);
    std::vector<uint32_t> order(chunks);
    for (uint32_t c = 0; c < chunks; ++c) order[c] = c;
    std::shuffle(order.begin(), order.end(), rng);
    uint32_t acc[4] = {};
    for (uint32_t c : order) k::esp_open_chunk(aes_te0(), keys, x.data(), text, seq, c, acc);
    int r = k::esp_open_check(aes_te0(), keys, x.data(), text, seq, acc, false)              ? 1
            : try_next && k::esp_open_check(aes_te0(), keys, x.data(), text, seq, acc, true) ? 2
                                                                                             : 0;
    if (!r) return 0;
    std::shuffle(order.begin(), order.end(), rng);
    for (uint32_t c : order) k::esp_open_crypt_chunk(aes_te0(), keys, x.data(), text, c);
    return r;
  };
  for_each_split_case(rng, [&](const SAParams& p, const k::EspKeys& keys, uint32_t text) {
    const bool esn = p.esn;
    const uint64_t seq = (uint64_t(rng() % 3) << 32) | rng();
    std::vector<uint8_t> sealed(16 + text + 16);
    for (auto& c : sealed) c = uint8_t(rng());
    k::esp_seal(aes_te0(), keys, sealed.data(), text, seq);
    auto whole = sealed, split = sealed;
    ASSERT_TRUE(k::esp_open(aes_te0(), keys, whole.data(), text, seq));
    ASSERT_EQ(split_open(keys, split, text, seq, esn), 1) << p.suite() << " text " << text;
    ASSERT_EQ(split, whole) << p.suite() << " key " << p.enc_key.size() << " esn " << esn << " text " << text;
    // a flipped bit in the header, IV, text or ICV
    auto forged = sealed;
    forged[rng() % (8 + 8 + text + keys.icv_len)] ^= uint8_t(1u << (rng() % 8));
    auto kept = forged;
    EXPECT_EQ(split_open(keys, forged, text, seq, esn), 0);
    EXPECT_EQ(forged, kept) << "a refused packet is not decrypted";
    ++refused;
    if (esn) {  // sealed at seq + 2^32, opened with the host's guess seq
      auto later = sealed;
      k::esp_seal(aes_te0(), keys, later.data(), text, seq + (1ull << 32));
      auto whole2 = later;
      ASSERT_TRUE(k::esp_open(aes_te0(), keys, whole2.data(), text, seq + (1ull << 32)));
      auto first = later;
      EXPECT_EQ(split_open(keys, first, text, seq, false), 0) << "the first guess alone refuses it";
      EXPECT_EQ(split_open(keys, later, text, seq, true), 2) << p.suite() << " text " << text;
      EXPECT_EQ(later, whole2);
      ++next;
    }
    ++cases;
  });
  EXPECT_EQ(cases, 3 * 2 * 2 * 12);
  EXPECT_EQ(refused, cases);
  EXPECT_EQ(next, cases / 2);
}

// AES decryption (CBC's) against OpenSSL's on single blocks, every key length.
TEST(EspKernel, AesDecryptsAsOpenSsl) {
  std::mt19937 rng(11);
  for (size_t kl : {16, 24, 32})
    for (int t = 0; t < 50; ++t) {
      uint8_t key[32], in[16], want[16], got[16];
      for (auto& c : key) c = uint8_t(rng());
      for (auto& c : in) c = uint8_t(rng());
      uint32_t rk[60], drk[60], rounds = 0;
      ASSERT_TRUE(k::aes_expand(aes_te0(), key, uint32_t(kl), rk, rounds));
      k::aes_decrypt_keys(aes_te0(), rk, rounds, drk);
      k::aes_decrypt(aes_te0(), drk, rounds, in, got);
      EVP_CIPHER_CTX* c = EVP_CIPHER_CTX_new();
      int n = 0;
      ASSERT_EQ(EVP_DecryptInit_ex(c,
                                   kl == 16   ? EVP_aes_128_ecb()
                                   : kl == 24 ? EVP_aes_192_ecb()
                                              : EVP_aes_256_ecb(),
                                   nullptr, key, nullptr),
                1);
      EVP_CIPHER_CTX_set_padding(c, 0);
      ASSERT_EQ(EVP_DecryptUpdate(c, want, &n, in, 16), 1);
      EVP_CIPHER_CTX_free(c);
      ASSERT_EQ(0, std::memcmp(got, want, 16)) << "key " << kl;
      uint8_t back[16];
      k::aes_encrypt(aes_te0(), rk, rounds, got, back);
      ASSERT_EQ(0, std::memcmp(back, in, 16));
    }
}

TEST(EspKernel, RefusesWhatItDoesNotDo) {
  SAParams p;
  p.cipher = Cipher::Null;
  p.integ = Integ::HmacSha1;
  p.enc_key = std::string(16, 'k');
  p.auth_key = std::string(20, 'a');
  p.icv_len = 12;
  k::EspKeys keys;
  std::string why;
  EXPECT_FALSE(esp_device_keys(p, keys, why));
  EXPECT_NE(why.find("not a device suite"), std::string::npos) << why;
  p.cipher = Cipher::AesGcm;
  p.integ = Integ::None;
  p.salt = "salt";
  p.icv_len = 10;
  EXPECT_FALSE(esp_device_keys(p, keys, why));
  EXPECT_NE(why.find("10-byte GCM ICV"), std::string::npos) << why;
  p.icv_len = 16;
  p.enc_key = std::string(17, 'k');
  EXPECT_FALSE(esp_device_keys(p, keys, why));
  EXPECT_NE(why.find("17-byte AES key"), std::string::npos) << why;
}

}  // namespace
}  // namespace shoal::crypto
