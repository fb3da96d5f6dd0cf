// Copies of a batch, for Tee and PullTee.
#pragma once
#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

// A new batch with a copy of every live packet of b (and b's annotation);
// a packet the pool cannot copy is counted lost (`reason`) and in
// `failures`. nullptr when no copy was made.
inline PacketBatch* copy_batch(Element& e, PacketBatch* b, Stat& failures, uint16_t reason) {
  PacketBatch* c = e.new_batch();
  c->anno = b->anno;
  b->for_each([&](uint32_t, Packet* p) {
    Packet* q = e.worker().pool().clone(p);
    if (!q) {
      failures.add();
      e.count_lost(reason);
      return;
    }
    e.created();
    c->append(q);
  });
  if (!c->empty()) return c;
  e.recycle(c);
  return nullptr;
}

}  // namespace shoal
