// A regular expression as a flat DFA (GASPP §6: regular expressions run on
// the GPU as DFAs): byte classes, a complete transition table, an absorbing
// accept state, and per state whether the end of the subject accepts. It
// answers "does the expression match anywhere in s" (or, anchored, at its
// start) with one table read per byte; the same function runs on the CPU,
// the host backend and in CUDA kernels. ids/regex.hh compiles the PCRE
// subset that rules use into it.
#pragma once
#include "shoal/kernels/hd.hh"

namespace shoal::k {

struct RegexView {
  uint32_t nclasses = 0;
  uint32_t start = 0;                   // the state before the first byte
  uint32_t accept = 0;                  // absorbing: a match was found
  const uint8_t* cls = nullptr;         // 256 entries: byte -> class
  const uint32_t* next = nullptr;       // [state * nclasses + class]
  const uint8_t* accept_end = nullptr;  // [state]: the end of the subject completes a match
};

SHOAL_HD bool regex_search(const RegexView& r, const uint8_t* s, uint32_t n) {
  uint32_t st = r.start;
  for (uint32_t i = 0; i < n; ++i) {
    st = r.next[st * r.nclasses + r.cls[s[i]]];
    if (st == r.accept) return true;
  }
  return r.accept_end[st] != 0;
}

}  // namespace shoal::k
