// JsonRecord against nlohmann::json, its oracle: the same object built both
// ways gives the same text, byte for byte.
#include "shoal/core/json_record.hh"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace shoal {
namespace {

std::string dump(const nlohmann::json& j) { return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace); }

// Strings of every kind: ASCII, controls, quotes and backslashes, valid
// multi-byte UTF-8 (2, 3 and 4 bytes), and broken sequences (stray
// continuation bytes, truncated leads, overlongs, surrogates, past U+10FFFF).
std::string random_string(std::mt19937& rng) {
  static const std::string pieces[] = {"a",
                                       "Z",
                                       " ",
                                       "\"",
                                       "\\",
                                       "/",
                                       "\n",
                                       "\r",
                                       "\t",
                                       "\b",
                                       "\f",
                                       std::string(1, '\0'),
                                       "\x01",
                                       "\x1f",
                                       "\x7f",
                                       "\xc3\xa9",
                                       "\xe2\x82\xac",
                                       "\xf0\x9f\x90\x9f",
                                       "\x80",
                                       "\xbf",
                                       "\xc3",
                                       "\xe2\x82",
                                       "\xc0\xaf",
                                       "\xed\xa0\x80",
                                       "\xf4\x90\x80\x80",
                                       "\xff",
                                       "\xfe",
                                       "\xe0\x80\xaf"};
  std::string s;
  for (int i = 0, n = int(rng() % 12); i < n; ++i) s += pieces[rng() % std::size(pieces)];
  return s;
}

TEST(JsonRecord, StringsAreWrittenAsNlohmannWritesThem) {
  std::mt19937 rng(5);
  size_t broken = 0;
  for (int t = 0; t < 20000; ++t) {
    std::string s = random_string(rng), out;
    json_string(out, s);
    ASSERT_EQ(out, dump(nlohmann::json(s))) << "string " << t;
    broken += out.find("\xef\xbf\xbd") != std::string::npos;
  }
  EXPECT_GT(broken, 1000u) << "invalid UTF-8 was tried, and replaced";
}

TEST(JsonRecord, ObjectsAreWrittenAsNlohmannWritesThem) {
  std::mt19937 rng(9);
  const char* keys[] = {"timestamp", "flow_id", "src_ip", "dest_ip", "alert", "a", "ab", "B", "_x", "payload", ""};
  for (int t = 0; t < 3000; ++t) {
    JsonRecord r, inner;
    nlohmann::json j = nlohmann::json::object(), ji = nlohmann::json::object();
    for (int f = 0, n = int(rng() % 8); f < n; ++f) {  // (keys may repeat: the last value wins)
      std::string ik = random_string(rng);
      std::string v = random_string(rng);
      inner.str(ik, v);
      ji[ik] = v;
    }
    for (int f = 0, n = int(rng() % 14); f < n; ++f) {
      std::string k = keys[rng() % std::size(keys)];
      switch (rng() % 6) {
        case 0: {
          std::string v = random_string(rng);
          r.str(k, v), j[k] = v;
          break;
        }
        case 1: {
          uint64_t v = rng() % 3 ? uint64_t(rng()) : ~uint64_t(0) - rng();
          r.num(k, v), j[k] = v;
          break;
        }
        case 2: {
          int64_t v = -int64_t(rng());
          r.num(k, v), j[k] = v;
          break;
        }
        case 3: r.boolean(k, t & 1), j[k] = bool(t & 1); break;
        case 4: r.object(k, inner), j[k] = ji; break;
        default: {
          nlohmann::json v = {{"list", {1, 2, 3}}, {"s", random_string(rng)}, {"n", nullptr}};
          r.json(k, v), j[k] = v;
        }
      }
    }
    if (t % 3 == 0) {  // members of an object as the record's own
      nlohmann::json m = {{"tunnel", {{"depth", 0}}}, {"src_ip", "10.0.0.9"}};
      r.merge(m), j.update(m);
    }
    ASSERT_EQ(r.text(), dump(j)) << "object " << t;
  }
  JsonRecord empty;
  EXPECT_EQ(empty.text(), "{}");
}

}  // namespace
}  // namespace shoal
