// L7 protocol classification with l7-filter's patterns (the .pat files of
// the l7-filter project: a protocol name, then a regular expression over the
// first bytes of a connection). Each pattern is compiled to a flat DFA
// (ids::RegexDfa, kernels/regex.hh: the same tables run on a device), and a
// flow keeps one DFA state per pattern, so classification streams over the
// connection's bytes as they come without buffering them (l7-filter keeps
// and rescans a 2 KB buffer).
//
// l7-filter's rules: the data of both directions, in the order it comes,
// NUL bytes removed, matched without regard to case and with '.' matching
// any byte (GNU regex without REG_NEWLINE, as l7-filter), over the first BYTES
// bytes or PACKETS packets; '$' matches at the end of the data seen so far.
// When several patterns match by the same packet, the first listed wins.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/ids/regex.hh"

namespace shoal::flow {

struct L7Pattern {
  std::string name, file, regex;
  ids::RegexDfa dfa;
};

class L7Set {
 public:
  // Loads NAME.pat for each name from dir (all .pat files when names is
  // empty, sorted by name; those outside the regex subset are skipped and
  // listed in `skipped` with the reason). A named protocol that cannot be
  // loaded is an error.
  bool load(const std::string& dir, const std::vector<std::string>& names, std::string& err,
            std::vector<std::string>* skipped = nullptr);
  size_t size() const { return pats_.size(); }
  const L7Pattern& at(size_t i) const { return pats_[i]; }

  // Per-flow matching state: one DFA state per pattern.
  size_t state_words() const { return pats_.size(); }
  void start(uint32_t* st) const;
  // Feeds bytes (NULs skipped); returns the first pattern (in list order)
  // that has matched by the end of them, or -1.
  int feed(uint32_t* st, const uint8_t* data, uint32_t n) const;

 private:
  std::vector<L7Pattern> pats_;
};

// Parses one .pat file's text: the protocol name and its pattern.
bool parse_l7_pattern(const std::string& text, std::string& name, std::string& regex, std::string& err);

}  // namespace shoal::flow
