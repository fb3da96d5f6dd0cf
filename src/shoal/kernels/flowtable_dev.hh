// The flow table as a device keeps it (GASPP §4: the connection table lives
// in device memory and kernels update it): open addressing with linear
// probing over 64-bit slots (hash << 32 | id), the keys and counters in an
// entry array, lock-free insertion (an entry is claimed with an atomic add,
// its key written, then published into a slot with a compare-and-swap), and
// counters updated with atomic adds. The same functions run in CUDA kernels
// and, with the compiler's atomics, on the host backend's threads.
//
// Three passes per batch, so the result does not depend on which thread
// wins a race: (1) find or insert each packet's flow and note the earliest
// packet of the flow (atomic min of its sequence number); (2) that earliest
// packet names the originator's direction; (3) each packet's direction and
// the per-direction counters. Flow ids depend on the race; the flows, their
// originators and their counters do not (they equal the CPU table's).
#pragma once
#include "shoal/kernels/atomic.hh"
#include "shoal/kernels/flowkey.hh"

namespace shoal::k {

struct DevFlow {
  ConnKey key;
  unsigned long long first_seq;  // the earliest packet's sequence number
  unsigned long long pkts[2], bytes[2];
  uint32_t orig_dir;  // canonical direction of the originator
  uint32_t pad;
};

struct DevFlowView {
  unsigned long long* slots = nullptr;  // mask + 1 of them; 0: empty
  DevFlow* flows = nullptr;             // capacity of them
  uint32_t* used = nullptr;             // entries claimed (may pass capacity: then full)
  uint32_t* full = nullptr;             // packets that found no room
  uint32_t mask = 0, capacity = 0;
};

SHOAL_HD unsigned long long atomic_cas64(unsigned long long* p, unsigned long long expect, unsigned long long want) {
#if defined(__CUDA_ARCH__)
  return atomicCAS(p, expect, want);
#else
  __atomic_compare_exchange_n(p, &expect, want, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return expect;
#endif
}
SHOAL_HD unsigned long long atomic_load64(const unsigned long long* p) {
#if defined(__CUDA_ARCH__)
  return *(volatile const unsigned long long*)p;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}
SHOAL_HD void atomic_add64(unsigned long long* p, unsigned long long v) {
#if defined(__CUDA_ARCH__)
  atomicAdd(p, v);
#else
  __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}
SHOAL_HD void atomic_min64(unsigned long long* p, unsigned long long v) {
#if defined(__CUDA_ARCH__)
  atomicMin(p, v);
#else
  unsigned long long cur = __atomic_load_n(p, __ATOMIC_RELAXED);
  while (v < cur && !__atomic_compare_exchange_n(p, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {}
#endif
}
// Makes an entry's key visible before the slot that names it. On the host
// the publishing CAS has release order (and lookups load slots with
// acquire), which is all that is needed.
SHOAL_HD void publish_fence() {
#if defined(__CUDA_ARCH__)
  __threadfence();
#endif
}

// The flow of `key` (1-based id), inserting it when absent; 0 when the table
// is full. `seq` is this packet's sequence number (for the earliest-packet
// rule).
SHOAL_HD uint32_t dev_flow_find_or_insert(const DevFlowView& t, const ConnKey& key, uint32_t hash,
                                          unsigned long long seq) {
  uint32_t mine = 0;  // an entry claimed and filled, not yet published
  uint32_t i = hash & t.mask;
  for (uint32_t probes = 0; probes <= t.mask; ++probes, i = (i + 1) & t.mask) {
    unsigned long long s = atomic_load64(&t.slots[i]);
    while (s == 0) {
      if (!mine) {
        uint32_t e = atomic_add32(t.used, 1);
        if (e >= t.capacity) {
          atomic_add32(t.full, 1);
          return 0;
        }
        DevFlow& f = t.flows[e];
        f.key = key;
        f.first_seq = ~0ull;
        f.pkts[0] = f.pkts[1] = f.bytes[0] = f.bytes[1] = 0;
        f.orig_dir = 0;
        mine = e + 1;
        publish_fence();  // the key is visible before the slot that names it
      }
      unsigned long long want = (static_cast<unsigned long long>(hash) << 32) | mine;
      unsigned long long was = atomic_cas64(&t.slots[i], 0ull, want);
      if (was == 0) {
        atomic_min64(&t.flows[mine - 1].first_seq, seq);
        return mine;
      }
      s = was;  // another thread took the slot: look at what it put there
    }
    if (uint32_t(s >> 32) == hash && t.flows[uint32_t(s) - 1].key == key) {
      // (an entry this thread claimed and did not publish stays unused)
      atomic_min64(&t.flows[uint32_t(s) - 1].first_seq, seq);
      return uint32_t(s);
    }
  }
  atomic_add32(t.full, 1);
  return 0;
}

}  // namespace shoal::k
