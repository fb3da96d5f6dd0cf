// flow::BodyInflater (a request body sent gzip'd or deflated) against zlib's
// own compressor: every framing, fed in pieces of every size, decodes to
// the original; clear text under such a header passes as sent; a bomb stops.
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>

#include "shoal/flow/http.hh"

namespace shoal {
namespace {

// windowBits: 15 + 16 gzip, 15 zlib, -15 raw deflate
std::string squeeze(const std::string& s, int window_bits) {
  z_stream z{};
  EXPECT_EQ(deflateInit2(&z, 6, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY), Z_OK);
  std::string out(deflateBound(&z, uLong(s.size())) + 64, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(s.data()));
  z.avail_in = uInt(s.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  EXPECT_EQ(deflate(&z, Z_FINISH), Z_STREAM_END);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// Feeds `in` in random pieces (1 byte to all of it) and returns what came out.
std::string feed(flow::BodyInflater& f, const std::string& in, std::mt19937& rng) {
  std::string out;
  for (size_t at = 0; at < in.size();) {
    size_t k = std::min(in.size() - at, size_t(1 + rng() % (rng() % 2 ? 7 : 4000)));
    f.data(reinterpret_cast<const uint8_t*>(in.data()) + at, k,
           [&](const uint8_t* p, size_t n) { out.append(reinterpret_cast<const char*>(p), n); });
    at += k;
  }
  return out;
}

TEST(BodyInflater, DecodesGzipZlibAndRawDeflateInAnyPieces) {
  std::mt19937 rng(3);
  for (int t = 0; t < 60; ++t) {
    std::string text;
    for (int i = 0, n = int(rng() % 3000); i < n; ++i) text += char(rng() % 4 ? 'a' + rng() % 6 : rng());
    for (int wb : {15 + 16, 15, -15}) {
      flow::BodyInflater f(wb == -15);  // (raw deflate only for Content-Encoding deflate)
      EXPECT_EQ(feed(f, squeeze(text, wb) + "trailing", rng), text)
          << "window bits " << wb << ", " << text.size() << " bytes";
      EXPECT_FALSE(f.passed_through());
      EXPECT_TRUE(f.ended()) << "the stream's end, what follows it no body";
      EXPECT_FALSE(f.stopped());
    }
  }
}

TEST(BodyInflater, ClearTextUnderAGzipHeaderPassesAsSent) {
  std::mt19937 rng(4);
  for (const std::string& body : {std::string("{\"sdk_version\":\"1.2\",\"app_package\":\"x\"}"),
                                  std::string("a=1&b=2"), std::string(70000, 'q')}) {
    flow::BodyInflater f;
    EXPECT_EQ(feed(f, body, rng), body);
    EXPECT_TRUE(f.passed_through());
    EXPECT_FALSE(f.stopped());
  }
}

TEST(BodyInflater, ABrokenStreamEndsWhereItBreaksAndABombStops) {
  std::mt19937 rng(5);
  std::string text(5000, 'x');
  for (int i = 0; i < 5000; i += 7) text[size_t(i)] = char('a' + i % 26);
  std::string z = squeeze(text, 15 + 16);
  std::string broken = z.substr(0, z.size() / 2) + std::string(64, '\xff');
  flow::BodyInflater f;
  std::string got = feed(f, broken, rng);
  EXPECT_TRUE(f.stopped());
  EXPECT_FALSE(got.empty());
  EXPECT_EQ(text.compare(0, got.size(), got), 0) << "what came out is the body's start";
  // 64 MiB of zeros squeezes to ~64 KiB (1030 to 1): it stops past 1 MiB
  std::string bomb = squeeze(std::string(64u << 20, '\0'), 15 + 16);
  flow::BodyInflater b;
  uint64_t out = 0;
  b.data(reinterpret_cast<const uint8_t*>(bomb.data()), bomb.size(), [&](const uint8_t*, size_t n) { out += n; });
  EXPECT_TRUE(b.stopped());
  EXPECT_GT(out, 1u << 20);
  EXPECT_LT(out, 2u << 20);
}

}  // namespace
}  // namespace shoal
