// Step kernel IdsScanStep (see kernels/step.hh).
#pragma once
#include "shoal/kernels/ids_scan.hh"
#include "shoal/kernels/offload_abi.hh"
#include "shoal/kernels/step.hh"

namespace shoal::k {

// IDSMatcher's device step. Leaves every packet in the chain: the host
// decides the port once it has verified the candidates. With `suspect` (the
// Snap form's ALERT bit), packets with candidates get that predicate bit, so
// later device steps can pass them by (SKIP) until the host has verified.
struct IdsScanStep {
  struct Params {
    AggView a;
    StepCtl c;
    uint32_t range;  // the whole packet (read-only)
    const IdsScanIn* in;
    IdsScanOut* out;
    AcView ac;
    uint32_t suspect;  // predicate bits set on packets with candidates (0: none)
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) {
      p.out[i].count = kIdsNotScanned;
      return;
    }
    const IdsScanIn in = p.in[i];
    const uint8_t* pkt = range_ptr(p.a, p.range, i);
    p.out[i].count = 0;
    if (in.off == kAbsent || p.ac.nclasses == 0) return;
    if (!pkt || uint64_t(in.off) + in.len > range_len(p.a, p.range, i)) {
      p.out[i].count = kIdsFound + 1;  // not all there: the host scans it
    } else {
      ids_scan(p.ac, pkt + in.off, in.len, p.out[i]);
    }
    if (p.suspect && p.out[i].count) p.a.pred[i] |= p.suspect;
  }
};

SHOAL_STEP(IdsScanStep)

// IDSMatcher's stream scan (GASPP §5): each TCP payload scanned with the
// stream rules' automaton (ids_stream_scan), so the host, as it delivers
// the segment to the stream in order, takes the patterns found here and
// scans only the seam with the bytes before it.
struct IdsStreamScanStep {
  struct Params {
    AggView a;
    StepCtl c;
    uint32_t range;       // the whole packet (read-only)
    const IdsScanIn* in;  // the payloads (IdsScanStep's)
    const uint8_t* tcp;   // per packet: nonzero for TCP
    IdsStreamOut* out;
    AcView ac;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    if (!step_enter(p.a, p.c, i)) {
      p.out[i].count = kIdsNotScanned;
      return;
    }
    const IdsScanIn in = p.in[i];
    p.out[i].count = 0;
    if (in.off == kAbsent || !p.tcp[i] || in.len == 0 || p.ac.nclasses == 0) return;
    const uint8_t* pkt = range_ptr(p.a, p.range, i);
    if (!pkt || uint64_t(in.off) + in.len > range_len(p.a, p.range, i))
      p.out[i].count = kStreamFound + 1;  // not all there: the host scans it
    else
      ids_stream_scan(p.ac, pkt + in.off, in.len, p.out[i]);
  }
};

SHOAL_STEP(IdsStreamScanStep)

// The same step with each payload cut into chunks (ids_scan_chunk): thread t
// scans chunk t % chunks of the packet t / chunks (in the order of packet
// scheduling when the aggregate has one). Launched over n * chunks threads.
struct IdsScanChunkStep {
  struct Params {
    IdsScanStep::Params s;
    uint32_t chunk, overlap, chunks;  // bytes per chunk, bytes scanned past it, chunks per packet
  };
  static SHOAL_HD void run(const Params& p, uint32_t t) {
    const IdsScanStep::Params& q = p.s;
    uint32_t i = t / p.chunks, c = t % p.chunks;
    if (q.a.order) i = q.a.order[i];
    if (!step_enter(q.a, q.c, i)) {
      if (c == 0) q.out[i].count = kIdsNotScanned;
      return;
    }
    const IdsScanIn in = q.in[i];
    if (in.off == kAbsent || q.ac.nclasses == 0) return;
    const uint8_t* pkt = range_ptr(q.a, q.range, i);
    if (!pkt || uint64_t(in.off) + in.len > range_len(q.a, q.range, i)) {
      if (c == 0) {  // not all there: the host scans it
        atomic_add32(&q.out[i].count, kIdsFound + 1);
        if (q.suspect) atomic_or32(&q.a.pred[i], q.suspect);
      }
      return;
    }
    uint64_t from = uint64_t(c) * p.chunk;
    if (from >= in.len) return;
    if (ids_scan_chunk(q.ac, pkt + in.off, in.len, uint32_t(from), p.chunk, p.overlap, q.out[i]) && q.suspect)
      atomic_or32(&q.a.pred[i], q.suspect);
  }
};

SHOAL_STEP(IdsScanChunkStep)

// The candidates' pcres after the scan (ids_regex): one thread per packet,
// over the patterns the scan (either form) found for it.
struct IdsRegexStep {
  struct Params {
    AggView a;
    uint32_t range;           // the whole packet (read-only)
    const IdsScanIn* in;      // the payloads
    const IdsScanOut* found;  // the scan's results
    IdsRegexOut* out;
    IdsRegexTables t;
  };
  static SHOAL_HD void run(const Params& p, uint32_t i) {
    p.out[i].count = 0;
    const IdsScanOut& f = p.found[i];
    if (f.count == 0 || f.count > kIdsFound) return;  // nothing found, overflowed, or not scanned
    const IdsScanIn in = p.in[i];
    const uint8_t* pkt = range_ptr(p.a, p.range, i);
    if (in.off == kAbsent || !pkt || uint64_t(in.off) + in.len > range_len(p.a, p.range, i)) return;
    ids_regex(p.t, pkt + in.off, in.len, f, p.out[i]);
  }
};

SHOAL_STEP(IdsRegexStep)

}  // namespace shoal::k
