// Aho-Corasick as a flat DFA (Aho & Corasick 1975; GASPP §3.2, NBA §4.1):
// a transition table over byte classes (alphabet compression: bytes that
// no pattern tells apart share a class; A-Z fold onto a-z), complete so a
// scan is one table read per byte, and per state the patterns that end
// there. Plain arrays: the CPU engine, the host backend and a CUDA kernel
// scan with the same function. Building lives in ids/ac_build.hh.
#pragma once
#include "shoal/kernels/hd.hh"

namespace shoal::k {

struct AcView {
  uint32_t nclasses = 0;
  const uint8_t* cls = nullptr;       // 256 entries: byte -> class
  const uint32_t* next = nullptr;     // [state * nclasses + class] -> state
  const uint32_t* out_off = nullptr;  // [state], [state + 1]: its slice of out_ids
  const uint32_t* out_ids = nullptr;  // pattern ids
};

// Calls on(pattern, end) for every pattern occurrence in s[0, n), end being
// one past its last byte; on() returns false to stop. Returns the state
// reached, so a scan can resume across buffers.
template <class F>
SHOAL_HD uint32_t ac_scan(const AcView& a, const uint8_t* s, uint32_t n, F&& on, uint32_t state = 0) {
  for (uint32_t i = 0; i < n; ++i) {
    state = a.next[state * a.nclasses + a.cls[s[i]]];
    uint32_t b = a.out_off[state], e = a.out_off[state + 1];
    for (; b < e; ++b)
      if (!on(a.out_ids[b], i + 1)) return state;
  }
  return state;
}

}  // namespace shoal::k
