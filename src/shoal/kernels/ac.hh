// Aho-Corasick as a flat DFA (Aho & Corasick 1975; GASPP §3.2, NBA §4.1):
// a transition table over byte classes (alphabet compression: bytes that
// no pattern tells apart share a class; A-Z fold onto a-z), complete so a
// scan is one table read per byte, and per state the patterns that end
// there. Plain arrays: the CPU engine, the host backend and a CUDA kernel
// scan with the same function. Building lives in ids/ac_build.hh.
#pragma once
#include "shoal/kernels/hd.hh"

namespace shoal::k {

// next[] holds, for each (state, class), the target state's row offset
// (state * nclasses), with kAcHasOutput set when the target ends patterns:
// a scan step is one load and one mask, and out_off is read only on a match.
constexpr uint32_t kAcHasOutput = 0x80000000u;

struct AcView {
  uint32_t nclasses = 0;
  const uint8_t* cls = nullptr;       // 256 entries: byte -> class
  const uint32_t* next = nullptr;     // [state * nclasses + class] -> target row | kAcHasOutput
  const uint32_t* out_off = nullptr;  // [state], [state + 1]: its slice of out_ids
  const uint32_t* out_ids = nullptr;  // pattern ids
};

// One byte: moves `row` on, and calls on(pattern, end) for the patterns that
// end there; false when on() asked to stop.
template <class F>
SHOAL_HD bool ac_step(const AcView& a, uint32_t& row, uint32_t c, uint32_t end, F& on) {
  uint32_t v = a.next[row + a.cls[c]];
  row = v & ~kAcHasOutput;
  if (v & kAcHasOutput) {
    uint32_t st = row / a.nclasses;
    for (uint32_t b = a.out_off[st], e = a.out_off[st + 1]; b < e; ++b)
      if (!on(a.out_ids[b], end)) return false;
  }
  return true;
}

// Calls on(pattern, end) for every pattern occurrence in s[0, n), end being
// one past its last byte; on() returns false to stop. Returns the state
// reached, so a scan can resume across buffers.
template <class F>
SHOAL_HD uint32_t ac_scan(const AcView& a, const uint8_t* s, uint32_t n, F&& on, uint32_t state = 0) {
  uint32_t row = state * a.nclasses;
  for (uint32_t i = 0; i < n; ++i)
    if (!ac_step(a, row, s[i], i + 1, on)) break;
  return row / a.nclasses;
}

}  // namespace shoal::k
