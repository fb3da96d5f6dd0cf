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

// A set of such DFAs in one block of memory, for a device: each DFA's
// header gives its tables as byte offsets into `blob` (the transition table
// 4-byte aligned). Header j with nclasses 0 is no DFA.
struct RegexHdr {
  uint32_t nclasses, start, accept;
  uint32_t cls, next, accept_end;  // offsets into the blob
};
struct RegexSetView {
  uint32_t count = 0;  // headers
  const RegexHdr* hdr = nullptr;
  const uint8_t* blob = nullptr;
};

SHOAL_HD RegexView regex_at(const RegexSetView& set, uint32_t j) {
  const RegexHdr h = set.hdr[j];
  RegexView v;
  v.nclasses = h.nclasses, v.start = h.start, v.accept = h.accept;
  v.cls = set.blob + h.cls;
  v.next = reinterpret_cast<const uint32_t*>(set.blob + h.next);
  v.accept_end = set.blob + h.accept_end;
  return v;
}

}  // namespace shoal::k
