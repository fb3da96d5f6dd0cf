// Random regular expressions from the PCRE subset that rules use, for
// differential tests (the DFA compiler, Hyperscan, PCRE2).
#pragma once
#include <iterator>
#include <random>
#include <string>

namespace shoal::test {

struct RegexGen {
  std::mt19937& rng;
  int depth = 0;
  size_t pick(size_t n) { return rng() % n; }
  std::string atom() {
    static const char* atoms[] = {
        "a",       "b",     "c",   "A",   "1",   "_",   "-",           " ",     "\\n",   ".",   "[abc]",
        "[^a\\n]", "[a-c]", "\\d", "\\w", "\\s", "\\W", "[[:alpha:]]", "\\x41", "[B-b]", "\\.", "[^[:digit:]_]",
        "\\h",     "(?i:a)"};
    if (depth < 3 && pick(6) == 0) {
      ++depth;
      std::string g = pick(2) ? "(" + expr() + ")" : "(?:" + expr() + "|" + expr() + ")";
      --depth;
      return g;
    }
    return atoms[pick(std::size(atoms))];
  }
  std::string quant() {
    static const char* qs[] = {"", "", "", "*", "+", "?", "{2}", "{1,3}", "{2,}", "*?", "{0,2}"};
    return qs[pick(std::size(qs))];
  }
  std::string expr() {
    std::string e;
    if (pick(5) == 0) e += pick(2) ? "^" : "\\A";
    for (size_t n = 1 + pick(4); n-- > 0;) {
      if (pick(8) == 0) e += pick(2) ? "\\b" : "\\B";
      e += atom() + quant();
    }
    if (depth == 0 && pick(5) == 0) e += pick(3) ? "$" : "\\z";
    if (pick(7) == 0) e += "|" + atom();
    return e;
  }
};

}  // namespace shoal::test
