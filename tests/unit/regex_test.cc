// The regex DFA compiler (ids/regex.hh) against PCRE2: random expressions
// from the subset rules use, random strings from each expression's
// alphabet, the DFA's "matches somewhere" against PCRE2's; expressions
// outside the subset are refused with a reason; the state budget holds.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>

#include "regex_gen.hh"
#include "shoal/ids/regex.hh"
#include "shoal/ids/rules.hh"

using namespace shoal::ids;

namespace {

// PCRE2's answer; -1 when it gave up (its backtracking limits).
int pcre(const Pcre& p, const std::string& s) {
  size_t end;
  bool limit;
  bool m = pcre_match(p, reinterpret_cast<const uint8_t*>(s.data()), s.size(), 0, end, &limit);
  return limit ? -1 : m;
}

}  // namespace

TEST(RegexDfa, AgreesWithPcre2OnRandomExpressionsAndStrings) {
  if (!have_pcre()) GTEST_SKIP() << "no PCRE2 in this build";
  std::mt19937 rng(11);
  const std::string alphabet = "abcAB1_ -\n.";
  int compiled = 0, refused = 0, gave_up = 0;
  for (int t = 0; t < 1500; ++t) {
    shoal::test::RegexGen g{rng};
    std::string e = g.expr();
    std::string flags;
    for (char f : std::string("ismE"))
      if (rng() % 3 == 0) flags.push_back(f);
    if (rng() % 8 == 0) flags.push_back('A');
    Pcre p;
    std::string err;
    ASSERT_TRUE(parse_pcre(fmt::format("\"/{}/{}\"", e, flags), p, err)) << e << ": " << err;
    RegexDfa d;
    if (!d.compile(e, flags, err)) {
      // the one construct this generator makes that the DFA refuses, and
      // the state budget
      EXPECT_TRUE(err.find("'$' followed by") != std::string::npos || err.find("DFA states") != std::string::npos)
          << "/" << e << "/" << flags << ": " << err;
      ++refused;
      continue;
    }
    ++compiled;
    for (int k = 0; k < 60; ++k) {
      std::string s;
      for (size_t n = rng() % 14; n-- > 0;) s.push_back(alphabet[rng() % alphabet.size()]);
      int want = pcre(p, s);
      if (want < 0) {
        ++gave_up;
        continue;
      }
      ASSERT_EQ(int(d.search(reinterpret_cast<const uint8_t*>(s.data()), s.size())), want)
          << "/" << e << "/" << flags << " on \"" << s << "\" (" << d.states() << " states)";
    }
  }
  EXPECT_GT(compiled, 1350);
  EXPECT_LT(refused, 150);
  EXPECT_LT(gave_up, 500) << "PCRE2 hit its backtracking limit";
}

TEST(RegexDfa, RuleStyleExpressions) {
  struct Case {
    const char* re;
    const char* flags;
    const char* yes;
    const char* no;
  } cases[] = {
      {"union\\s+select", "i", "1 UNION  SELECT x", "union_select"},
      {"^GET\\s+/[^\\s]{10,}", "", "GET /aaaaaaaaaaaa", "GET /short"},
      {"cmd\\.exe", "", "x cmd.exe", "cmdxexe"},
      {"<script[^>]*>", "i", "<SCRIPT src=x>", "<scrip>"},
      {"\\x2e\\x2e[\\x2f\\x5c]", "", "../etc", ".._"},
      {"^Host:\\s*\\d+\\.\\d+$", "m", "GET /\nHost: 1.2\nX", "Host: 1.2x"},
      {"\\bpasswd\\b", "", "/etc/passwd now", "mypasswds"},
      {"(?i)admin(?-i)Page", "", "ADMINPage", "ADMINPAGE"},
      {"a{3}b{1,2}c{2,}", "", "aaabbccc", "aabbcc"},
      {"x # a comment\n y", "x", "xy", "x y"},
  };
  for (const Case& c : cases) {
    RegexDfa d;
    std::string err;
    ASSERT_TRUE(d.compile(c.re, c.flags, err)) << c.re << ": " << err;
    auto m = [&](const char* s) { return d.search(reinterpret_cast<const uint8_t*>(s), std::strlen(s)); };
    EXPECT_TRUE(m(c.yes)) << c.re << " on " << c.yes;
    EXPECT_FALSE(m(c.no)) << c.re << " on " << c.no;
  }
}

TEST(RegexDfa, RefusesWhatItCannotDoWithAReason) {
  struct Case {
    const char* re;
    const char* why;
  } cases[] = {
      {"(a)\\1", "backreference"},
      {"a(?=b)", "lookahead"},
      {"a(?!b)", "negative lookahead"},
      {"(?<=a)b", "lookbehind"},
      {"(?>a+)b", "atomic group"},
      {"a++", "possessive"},
      {"\\Gabc", "\\G"},
      {"\\p{L}", "\\p"},
      {"a{2000}", "over 1000"},
      {"(abc", "missing ')'"},
      {"abc)", "unmatched ')'"},
      {"*a", "nothing to repeat"},
      {"[abc", "unterminated class"},
      {"[z-a]", "out of order"},
      {"a$\\n", "'$' followed by"},
      {"\\x{100}", "above \\xff"},
  };
  for (const Case& c : cases) {
    RegexDfa d;
    std::string err;
    EXPECT_FALSE(d.compile(c.re, "", err)) << c.re;
    EXPECT_NE(err.find(c.why), std::string::npos) << c.re << ": " << err;
  }
  // the state budget: (a|b)*a(a|b){n} needs 2^n states
  RegexDfa d;
  std::string err;
  EXPECT_TRUE(d.compile("[ab]*a[ab]{6}", "", err)) << err;
  EXPECT_FALSE(d.compile("[ab]*a[ab]{14}", "", err, 4096));
  EXPECT_NE(err.find("DFA states"), std::string::npos) << err;
}
