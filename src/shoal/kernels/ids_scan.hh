// The IDS prefilter as an offload step (GASPP §3.2, NBA §4.1): each packet's
// payload is scanned by the Aho-Corasick DFA of kernels/ac.hh, reading the
// payload with aligned 16-byte loads (one global-memory transaction per 16
// bytes on a GPU, as GASPP does), and the distinct fast patterns found go
// back as a short list per packet. The host verifies the candidate rules
// (headers, positions, pcres) where that is cheapest: on the CPU, against
// the packet it still holds.
#pragma once
#include <cstring>

#include "shoal/kernels/ac.hh"
#include "shoal/kernels/atomic.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/regex.hh"

namespace shoal::k {

// Per packet, from the host: where the payload starts in the packet (kAbsent:
// not inspected) and how long it is.
struct IdsScanIn {
  uint32_t off, len;
};
// Per packet, to the host: how many distinct fast patterns were found, and
// the first kIdsFound of them. count > kIdsFound: the list overflowed and
// the scan stopped; the host scans that packet itself.
constexpr uint32_t kIdsFound = 15;
constexpr uint32_t kIdsNotScanned = 0xffffffffu;  // count: the step passed the packet by (predicates)
struct IdsScanOut {
  uint32_t count;
  uint32_t ids[kIdsFound];
};

// 16 bytes from a 16-byte aligned address, as four little-endian words.
SHOAL_HD void load16(const uint8_t* p, uint32_t w[4]) {
#if defined(__CUDA_ARCH__)
  const uint4 v = *reinterpret_cast<const uint4*>(p);
  w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
#else
  std::memcpy(w, p, 16);
#endif
}

// ac_scan with the bulk of s read 16 bytes at a time (bytes before the first
// 16-byte boundary and after the last are read singly). Same results.
template <class F>
SHOAL_HD uint32_t ac_scan16(const AcView& a, const uint8_t* s, uint32_t n, F&& on, uint32_t state = 0) {
  uint32_t row = state * a.nclasses;
  uint32_t i = 0;
  uint32_t head = uint32_t((16 - (reinterpret_cast<uintptr_t>(s) & 15)) & 15);
  if (head > n) head = n;
  for (; i < head; ++i)
    if (!ac_step(a, row, s[i], i + 1, on)) return row / a.nclasses;
  for (; i + 16 <= n; i += 16) {
    uint32_t w[4];
    load16(s + i, w);
    for (uint32_t j = 0; j < 16; ++j)
      if (!ac_step(a, row, (w[j >> 2] >> (8 * (j & 3))) & 0xff, i + j + 1, on)) return row / a.nclasses;
  }
  for (; i < n; ++i)
    if (!ac_step(a, row, s[i], i + 1, on)) break;
  return row / a.nclasses;
}

// The distinct patterns of s, at most kIdsFound (count kIdsFound + 1 when
// there are more: the scan stops there).
SHOAL_HD void ids_scan(const AcView& a, const uint8_t* s, uint32_t n, IdsScanOut& out) {
  uint32_t count = 0;
  ac_scan16(a, s, n, [&](uint32_t id, uint32_t) {
    for (uint32_t k = 0; k < count; ++k)
      if (out.ids[k] == id) return true;
    if (count == kIdsFound) {
      count = kIdsFound + 1;
      return false;
    }
    out.ids[count++] = id;
    return true;
  });
  out.count = count;
}

// The stream rules' scan of one TCP segment (GASPP §5: stream-aware
// matching, the device's part of it): the distinct patterns of the stream
// automaton that occur in the payload, each with the end of its latest
// occurrence (a payload offset, exclusive). The host adds the occurrences
// that start in the stream before the segment by scanning the seam (the
// longest pattern less one byte on each side, ids::StreamPrefilter), so
// both together are what a scan of the stream finds, whatever the segment
// boundaries. count > kStreamFound: the list overflowed and the scan
// stopped (the host scans the segment itself).
constexpr uint32_t kStreamFound = 8;
struct IdsStreamOut {
  uint32_t count;
  uint32_t ids[kStreamFound];
  uint16_t end[kStreamFound];
};

SHOAL_HD void ids_stream_scan(const AcView& a, const uint8_t* s, uint32_t n, IdsStreamOut& out) {
  uint32_t count = 0;
  if (n > 0xffff) {  // (ends would not fit: a jumbogram is the host's)
    out.count = kStreamFound + 1;
    return;
  }
  ac_scan16(a, s, n, [&](uint32_t id, uint32_t end) {
    for (uint32_t k = 0; k < count; ++k)
      if (out.ids[k] == id) {
        out.end[k] = uint16_t(end);  // (the scan goes forward: the latest so far)
        return true;
      }
    if (count == kStreamFound) {
      count = kStreamFound + 1;
      return false;
    }
    out.ids[count] = id;
    out.end[count++] = uint16_t(end);
    return true;
  });
  out.count = count;
}

// GASPP's parallel payload scan (§4): a long payload is cut into chunks and
// each thread scans one, from the automaton's start, over its `chunk` bytes
// and the `overlap` bytes after them (the longest pattern less one), so an
// occurrence is found by the thread of the chunk it starts in. A thread
// adds the distinct patterns of its stretch to the packet's list with one
// atomic add: a pattern two threads both see is listed twice (the host
// ignores repeats), and a list that would pass kIdsFound leaves count over
// kIdsFound, so the host scans that packet itself, as with one thread per
// packet. `out.count` starts at zero. True when the stretch held a pattern.
SHOAL_HD bool ids_scan_chunk(const AcView& a, const uint8_t* s, uint32_t n, uint32_t from, uint32_t chunk,
                             uint32_t overlap, IdsScanOut& out) {
  if (from >= n) return false;
  uint32_t end = n - from > chunk + overlap ? from + chunk + overlap : n;
  uint32_t ids[kIdsFound];
  uint32_t count = 0;
  ac_scan16(a, s + from, end - from, [&](uint32_t id, uint32_t) {
    for (uint32_t k = 0; k < count; ++k)
      if (ids[k] == id) return true;
    if (count == kIdsFound) {
      count = kIdsFound + 1;
      return false;
    }
    ids[count++] = id;
    return true;
  });
  if (!count) return false;
  uint32_t at = atomic_add32(&out.count, count);
  for (uint32_t k = 0; k < count && k < kIdsFound && at + k < kIdsFound; ++k) out.ids[at + k] = ids[k];
  return true;
}

// The candidate rules' yes/no pcres answered on the device (GASPP §6:
// regular expressions as DFAs on the GPU): for each fast pattern the scan
// found, the expressions of its rules that need only "does it match
// somewhere in the payload" (ids::Database::existence_slot) and compiled to
// a DFA, each run once over the payload, at most kRegexAnswers of them per
// packet. The host takes the answers as its own (Engine::match_found) and
// computes those the list has no room for.
constexpr uint32_t kRegexAnswers = 16;
constexpr uint32_t kRegexMatched = 0x80000000u;  // in IdsRegexOut::slot: the expression matches
struct IdsRegexOut {
  uint32_t count;
  uint32_t slot[kRegexAnswers];  // the engine's expression slot, | kRegexMatched
};
struct IdsRegexTables {
  uint32_t npatterns = 0;
  const uint32_t* pat_off = nullptr;    // [npatterns + 1]: pattern p's slots are pat_slots[pat_off[p] ..)
  const uint32_t* pat_slots = nullptr;  // each with a DFA in `set` (indexed by slot)
  RegexSetView set;
};

SHOAL_HD void ids_regex(const IdsRegexTables& t, const uint8_t* s, uint32_t n, const IdsScanOut& found,
                        IdsRegexOut& out) {
  uint32_t count = 0;
  const uint32_t nf = found.count <= kIdsFound ? found.count : 0;
  for (uint32_t f = 0; f < nf && count < kRegexAnswers; ++f) {
    const uint32_t pat = found.ids[f];
    if (pat >= t.npatterns) continue;
    for (uint32_t x = t.pat_off[pat], e = t.pat_off[pat + 1]; x < e && count < kRegexAnswers; ++x) {
      const uint32_t slot = t.pat_slots[x];
      bool seen = false;  // (patterns share expressions; the chunked scan may list a pattern twice)
      for (uint32_t k = 0; k < count && !seen; ++k) seen = (out.slot[k] & ~kRegexMatched) == slot;
      if (!seen) out.slot[count++] = slot | (regex_search(regex_at(t.set, slot), s, n) ? kRegexMatched : 0u);
    }
  }
  out.count = count;
}

}  // namespace shoal::k
