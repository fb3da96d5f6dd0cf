// Compiles the PCRE subset that Snort/Suricata rules use into the flat DFA
// of kernels/regex.hh, for the device (and as a portable matcher):
// literals and escapes (\xHH, \n, \t...), classes ([a-z], [^...], \d \w \s
// \h \v and their negations, POSIX [:alpha:]), '.', alternation, groups
// ((...), (?:...), named), repetition (* + ? {n} {n,} {n,m}, lazy forms),
// anchors and assertions (^ $ \A \z \Z \b \B, multi-line), flags i s m x E
// and inline (?i) (?s:...) forms. Anything else (backreferences,
// lookaround, atomic groups, possessive repeats, \G, \K, \p, \Q) is refused
// with a reason: never approximated. PCRE's bytes-mode semantics without
// UTF: \w, \d, \s and case folding are ASCII.
//
// Assertions are exact: a DFA state is a set of NFA states together with
// the kind of the previous byte (start, newline, word, other), and each
// transition knows the next byte, so ^ $ \b \B resolve inside the
// subset construction. The answer is whether a match exists (its end is
// not computed: rules that need a pcre's end for a relative content use
// PCRE2 on the host).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/kernels/regex.hh"

namespace shoal::ids {

class RegexDfa {
 public:
  // flags: PCRE/Snort letters (i s m x A E; G R B O are accepted, they do
  // not change whether a match exists). False with err when the expression
  // is outside the subset or needs more than max_states states.
  bool compile(const std::string& pattern, const std::string& flags, std::string& err, uint32_t max_states = 4096);
  k::RegexView view() const;
  bool search(const uint8_t* s, size_t n) const { return k::regex_search(view(), s, uint32_t(n)); }
  uint32_t states() const { return states_; }
  uint32_t classes() const { return nclasses_; }
  size_t memory_bytes() const { return cls_.size() + next_.size() * 4 + accept_end_.size(); }
  const std::vector<uint8_t>& cls() const { return cls_; }
  const std::vector<uint32_t>& next() const { return next_; }
  const std::vector<uint8_t>& accept_end() const { return accept_end_; }

 private:
  uint32_t states_ = 0, nclasses_ = 0, start_ = 0, accept_ = 0;
  std::vector<uint8_t> cls_, accept_end_;
  std::vector<uint32_t> next_;
};

}  // namespace shoal::ids
