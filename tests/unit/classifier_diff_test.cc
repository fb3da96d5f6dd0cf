// Differential test: Classifier (compiled to masked word compares) against a
// naive first-match oracle written here, on random patterns and packets.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "helpers.hh"

using namespace shoal;

namespace {
struct OTerm {
  uint32_t off;
  std::vector<uint8_t> val, mask;
  bool neg;
};
using OPattern = std::vector<OTerm>;  // empty: "-"

int oracle(const std::vector<OPattern>& pats, const std::vector<uint8_t>& pkt) {
  for (size_t i = 0; i < pats.size(); ++i) {
    bool ok = true;
    for (auto& t : pats[i]) {
      bool eq = t.off + t.val.size() <= pkt.size();
      for (size_t j = 0; eq && j < t.val.size(); ++j) eq = (pkt[t.off + j] & t.mask[j]) == t.val[j];
      if (eq == t.neg) ok = false;
    }
    if (ok) return int(i);
  }
  return -1;
}
}  // namespace

TEST(ClassifierDiff, MatchesNaiveOracleOnRandomPatterns) {
  std::mt19937 rng(12345);
  uint64_t matched = 0, partial_words = 0;
  for (int round = 0; round < 30; ++round) {
    int npat = 1 + int(rng() % 6);
    std::vector<OPattern> pats;
    std::string cfg;
    for (int p = 0; p < npat; ++p) {
      OPattern pat;
      std::string text;
      if (rng() % 9 == 0) {
        text = "-";
      } else {
        int nterms = 1 + int(rng() % 3);
        for (int t = 0; t < nterms; ++t) {
          OTerm term;
          term.off = rng() % 40;
          term.neg = rng() % 5 == 0;
          size_t n = 1 + rng() % 7;
          std::string v, m;
          for (size_t j = 0; j < n; ++j) {
            uint8_t mask = rng() % 3 == 0 ? uint8_t(rng()) : 0xff;
            uint8_t val = uint8_t(rng() % 4) & mask;  // a small alphabet, so matches happen
            term.val.push_back(val);
            term.mask.push_back(mask);
            v += fmt::format("{:02x}", val);
            m += fmt::format("{:02x}", mask);
          }
          text += fmt::format("{}{}{}/{}%{}", t ? " " : "", term.neg ? "!" : "", term.off, v, m);
          pat.push_back(term);
        }
      }
      pats.push_back(pat);
      cfg += (p ? ", " : "") + text;
    }
    // Random packets over the same alphabet, 0..60 bytes, then cut by
    // Truncate(cut): the bytes just past each packet's end stay in its buffer
    // and look like matches, so a classifier reading past the end is caught.
    std::string in = test::tmpdir() + fmt::format("/cdiff-in-{}.pcap", round);
    std::vector<std::vector<uint8_t>> pkts;
    uint32_t cut = rng() % 48;
    {
      io::PcapWriter w;
      std::string err;
      ASSERT_TRUE(w.open(in, 1, 65535, true, err)) << err;
      for (int i = 0; i < 400; ++i) {
        std::vector<uint8_t> p(rng() % 61);
        for (auto& b : p) b = uint8_t(rng() % 4);
        w.write(p.data(), uint32_t(p.size()), uint32_t(p.size()), uint64_t(i));
        if (p.size() > cut) p.resize(cut);
        pkts.push_back(p);
      }
    }
    std::string conf = fmt::format("FromDump({}, STOP true) -> Truncate({}) -> c :: Classifier({});", in, cut, cfg);
    for (int p = 0; p < npat; ++p)
      conf += fmt::format(" c[{}] -> ToDump({}/cdiff-{}-{}.pcap);", p, test::tmpdir(), round, p);
    auto r = test::run(conf);
    ASSERT_TRUE(r->ok) << r->errors << "\n" << conf;
    uint64_t dropped = r->n("c.drops");
    test::finish(*r);
    std::vector<std::vector<std::vector<uint8_t>>> want(static_cast<size_t>(npat));
    uint64_t want_drops = 0;
    for (auto& p : pkts) {
      int o = oracle(pats, p);
      if (o < 0)
        ++want_drops;
      else
        want[size_t(o)].push_back(p), ++matched;
    }
    EXPECT_EQ(dropped, want_drops) << cfg;
    for (int p = 0; p < npat; ++p) {
      auto got = test::read_pcap(fmt::format("{}/cdiff-{}-{}.pcap", test::tmpdir(), round, p));
      ASSERT_EQ(got.size(), want[size_t(p)].size()) << "output " << p << " of Classifier(" << cfg << ")";
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i].bytes, want[size_t(p)][i]);
        partial_words += got[i].bytes.size() < 44;  // matched near the end
      }
    }
  }
  // Not vacuous: many packets matched a pattern, some of them short ones.
  EXPECT_GT(matched, 1000u);
  EXPECT_GT(partial_words, 50u);
}
