// Step kernels TcpSpanStep, TcpHoleStep, TcpPlaceStep, TcpAheadStep: where
// each TCP segment of a batch goes in its stream, decided for the whole batch
// at once (GASPP's batch reassembly, §4.2, without its hash table of
// consecutive pairs). flow/batch_reassembly.hh drives them:
//
//   sort    the segments by (group, offset), stably: a group is one direction
//           of one connection, the offset is relative to the direction's next
//           expected byte (0), and equal offsets keep their arrival order;
//   Span    end = offset + length, per sorted position;
//   scan    cover = exclusive max-scan of the ends within each group (from 0):
//           how far the stream reaches before this segment;
//   Hole    a segment past its cover starts past a hole;
//   scan    inclusive max-scan of that: every segment from the first hole on;
//   Place   each segment's place: old (all before 0: a retransmission),
//           in order (it starts where its cover ends), overlapping another
//           segment of the batch, or past a hole;
//   scan    exclusive max-scan of the in-order segments' arrival indices;
//   Ahead   an in-order segment that came before one preceding it in the
//           stream arrived ahead of a hole when it came (the one-by-one
//           reassembler would have held it until the hole filled).
//
// Threads work on sorted positions r; perm[r] is the segment's arrival index.
#pragma once
#include <cstdint>

#include "shoal/kernels/step.hh"

namespace shoal::k {

enum : uint8_t {
  kPlaceInOrder = 1,   // delivered in order by the batch
  kPlaceOld = 2,       // all of it before the next expected byte: dropped, counted
  kPlaceOverlap = 3,   // overlaps another segment of the batch past the next expected byte
  kPlacePastHole = 4,  // at or past the first hole the batch leaves
  kPlaceAhead = 0x10,  // (with kPlaceInOrder) arrived before a segment preceding it
};

struct TcpPlaceParams {
  const uint64_t* keys;  // sorted: group << 32 | (offset ^ 0x80000000)
  const uint32_t* perm;  // sorted position -> arrival index
  const int32_t* rel;    // per arrival index: the offset
  const uint32_t* len;   // per arrival index: the length (> 0)
  uint32_t* group;       // per sorted position
  int64_t* a;            // scan inputs, per sorted position
  int64_t* cover;        // the first scan's result
  int64_t* c;            // the second and third scans' results
  uint8_t* place;        // per arrival index
};

struct TcpSpanStep {
  using Params = TcpPlaceParams;
  static SHOAL_HD void run(const Params& p, uint32_t r) {
    uint32_t i = p.perm[r];
    p.group[r] = uint32_t(p.keys[r] >> 32);
    p.a[r] = int64_t(p.rel[i]) + int64_t(p.len[i]);
  }
};
SHOAL_STEP(TcpSpanStep)

struct TcpHoleStep {
  using Params = TcpPlaceParams;
  static SHOAL_HD void run(const Params& p, uint32_t r) {
    uint32_t i = p.perm[r];
    int64_t start = p.rel[i] > 0 ? p.rel[i] : 0, end = int64_t(p.rel[i]) + int64_t(p.len[i]);
    p.a[r] = end > 0 && start > p.cover[r] ? 1 : 0;
  }
};
SHOAL_STEP(TcpHoleStep)

struct TcpPlaceStep {
  using Params = TcpPlaceParams;
  static SHOAL_HD void run(const Params& p, uint32_t r) {
    uint32_t i = p.perm[r];
    int64_t start = p.rel[i] > 0 ? p.rel[i] : 0, end = int64_t(p.rel[i]) + int64_t(p.len[i]);
    uint8_t place = p.c[r]                ? kPlacePastHole
                    : end <= 0            ? kPlaceOld
                    : start == p.cover[r] ? kPlaceInOrder
                                          : kPlaceOverlap;
    p.place[i] = place;
    p.a[r] = place == kPlaceInOrder ? int64_t(i) : -1;
  }
};
SHOAL_STEP(TcpPlaceStep)

struct TcpAheadStep {
  using Params = TcpPlaceParams;
  static SHOAL_HD void run(const Params& p, uint32_t r) {
    uint32_t i = p.perm[r];
    if (p.place[i] == kPlaceInOrder && p.c[r] > int64_t(i)) p.place[i] = kPlaceInOrder | kPlaceAhead;
  }
};
SHOAL_STEP(TcpAheadStep)

}  // namespace shoal::k
