// A ring of launch work in pinned host memory that the device maps: how a
// persistent kernel takes launches with no driver call (issue 25 item 3;
// the CUDA backend's SHOAL_CUDA_PERSISTENT). Host threads put one item per
// block of a launch; the kernel's blocks take items in ticket order. The
// protocol is written once, for the device and for host threads (the unit
// tests run it with threads as the blocks).
//
//   producers (host threads): take tickets (an atomic add on `tail`), wait
//     until each ticket's slot was freed by the item one lap before, write
//     the item, and publish it by storing its sequence (ticket + 1) last,
//     with release.
//   watcher (one device thread): reads `tail` across the bus and copies it
//     into `seen` (device memory), so idle blocks poll device memory, not
//     the bus. A drain request (`stop`, with the tail at which it was made)
//     becomes `seen` = that tail | kStopBit.
//   consumers (the device's blocks): take tickets from `next` (device memory,
//     an atomic add), wait until `seen` passed the ticket, then until its slot
//     holds the ticket's sequence (acquire), copy the item and free the slot
//     (release). After a drain request a consumer still takes every ticket
//     below the drain's tail and returns on the first one at or past it, so a
//     drain ends with every item put before it taken.
//
// Sequences and frees are 32-bit: a slot only ever holds the tickets of one
// residue, so equality tells its laps apart.
#pragma once
#include <cstdint>

#include "shoal/kernels/hd.hh"

#if !defined(__CUDA_ARCH__)
#include <sched.h>
#endif

namespace shoal::dev {

// One block of a launch (64 bytes: a slot per line).
struct alignas(64) WorkItem {
  uint32_t seq;         // ticket + 1, stored last
  uint32_t block;       // which block of the launch
  uint32_t nblocks;     // the launch's blocks
  uint32_t n;           // the launch's packets
  uint64_t args;        // the launch's arguments (address as the consumer sees it)
  uint64_t order;       // packet order, or 0
  uint32_t args_bytes;  // how many bytes of `args` to read (a multiple of 16)
  uint32_t pad_[7];
};
static_assert(sizeof(WorkItem) == 64);

// The host-side words (mapped): tickets handed out, and a drain request.
struct alignas(64) WorkRingHead {
  uint64_t tail;  // producers' tickets
  uint64_t pad0_[7];
  uint32_t stop;  // 1: drain at stop_tail
  uint32_t pad1_;
  uint64_t stop_tail;
};

struct WorkRingView {
  static constexpr uint64_t kStopBit = 1ull << 63;
  WorkRingHead* head = nullptr;  // mapped host memory, as the side using the view addresses it
  WorkItem* items = nullptr;     // mask + 1 slots
  uint32_t* freed = nullptr;     // per slot: the sequence of the last item taken from it
  uint32_t mask = 0;
  unsigned long long* next = nullptr;  // device memory: consumers' tickets
  unsigned long long* seen = nullptr;  // device memory: tail as the watcher last read it
};

// Bytes of host memory a ring of `slots` (a power of two) needs, and the view
// over such a block at `base` (zeroed by the caller).
inline size_t work_ring_bytes(uint32_t slots) {
  return sizeof(WorkRingHead) + size_t(slots) * sizeof(WorkItem) + size_t(slots) * sizeof(uint32_t);
}
inline WorkRingView work_ring_view(void* base, uint32_t slots, unsigned long long* next, unsigned long long* seen) {
  WorkRingView v;
  auto* p = static_cast<unsigned char*>(base);
  v.head = reinterpret_cast<WorkRingHead*>(p);
  v.items = reinterpret_cast<WorkItem*>(p + sizeof(WorkRingHead));
  v.freed = reinterpret_cast<uint32_t*>(p + sizeof(WorkRingHead) + size_t(slots) * sizeof(WorkItem));
  v.mask = slots - 1;
  v.next = next;
  v.seen = seen;
  return v;
}

// ---- memory operations: system scope for the mapped words, device scope
// for `next` and `seen`; the compiler's atomics on host threads.
SHOAL_HD uint32_t ring_load_sys(const uint32_t* p) {
#if defined(__CUDA_ARCH__)
  uint32_t v;
  asm volatile("ld.acquire.sys.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}
SHOAL_HD uint64_t ring_load_sys64(const uint64_t* p) {
#if defined(__CUDA_ARCH__)
  uint64_t v;
  asm volatile("ld.acquire.sys.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}
SHOAL_HD void ring_store_sys(uint32_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.release.sys.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}
SHOAL_HD unsigned long long ring_load_dev(const unsigned long long* p) {
#if defined(__CUDA_ARCH__)
  unsigned long long v;
  asm volatile("ld.acquire.gpu.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
  return v;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}
SHOAL_HD void ring_store_dev(unsigned long long* p, unsigned long long v) {
#if defined(__CUDA_ARCH__)
  asm volatile("st.release.gpu.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
#endif
}
SHOAL_HD unsigned long long ring_fetch_add_dev(unsigned long long* p) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(p, 1ull);
#else
  return __atomic_fetch_add(p, 1ull, __ATOMIC_RELAXED);
#endif
}
// A pause in a polling loop: short first, longer once it has waited a while.
SHOAL_HD void ring_pause(uint32_t spins) {
#if defined(__CUDA_ARCH__)
  __nanosleep(spins < 16 ? 64 : 512);
#else
  (void)spins;
  sched_yield();
#endif
}

// ---- producer (host threads)

// `count` consecutive tickets; the first.
inline uint64_t ring_tickets(const WorkRingView& r, uint32_t count) {
  return __atomic_fetch_add(&r.head->tail, uint64_t(count), __ATOMIC_ACQ_REL);
}
// Whether ticket t's slot is free: its item of one lap before was taken.
inline bool ring_slot_free(const WorkRingView& r, uint64_t t) {
  return t <= r.mask || ring_load_sys(&r.freed[t & r.mask]) == uint32_t(t - r.mask);
}
// Writes `it` as ticket t's item (its slot free) and publishes it.
inline void ring_put(const WorkRingView& r, uint64_t t, const WorkItem& it) {
  WorkItem& s = r.items[t & r.mask];
  s.block = it.block;
  s.nblocks = it.nblocks;
  s.n = it.n;
  s.args = it.args;
  s.order = it.order;
  s.args_bytes = it.args_bytes;
  ring_store_sys(&s.seq, uint32_t(t + 1));
}
// Asks the consumers and the watcher to return once every ticket below the
// tail now was taken. No producer may take tickets from here until the
// ring restarts (the caller excludes them).
inline void ring_request_drain(const WorkRingView& r) {
  __atomic_store_n(&r.head->stop_tail, __atomic_load_n(&r.head->tail, __ATOMIC_ACQUIRE), __ATOMIC_RELAXED);
  __atomic_store_n(&r.head->stop, 1u, __ATOMIC_RELEASE);
}
// Before a (re)start: consumers and watcher begin at the current tail
// (the caller sets `next` and `seen` to it in device memory first).
inline void ring_clear_drain(const WorkRingView& r) { __atomic_store_n(&r.head->stop, 0u, __ATOMIC_RELEASE); }

// ---- watcher (one device thread)
SHOAL_HD void ring_watch(const WorkRingView& r) {
  unsigned long long last = ring_load_dev(r.seen);
  for (uint32_t idle = 0;;) {
    if (ring_load_sys(&r.head->stop)) {
      ring_store_dev(r.seen, ring_load_sys64(&r.head->stop_tail) | WorkRingView::kStopBit);
      return;
    }
    const unsigned long long t = ring_load_sys64(&r.head->tail);
    if (t != last) {
      ring_store_dev(r.seen, t);
      last = t;
      idle = 0;
    } else {
      ring_pause(idle++);
    }
  }
}

// ---- consumer (one thread of each device block)

// Takes the next item into `out`; false when a drain ended this consumer.
SHOAL_HD bool ring_take(const WorkRingView& r, WorkItem& out) {
  const unsigned long long t = ring_fetch_add_dev(r.next);
  uint32_t spins = 0;
  for (;;) {  // until the watcher saw ticket t handed out
    const unsigned long long s = ring_load_dev(r.seen);
    const unsigned long long tail = s & ~WorkRingView::kStopBit;
    if (t < tail) break;
    if (s & WorkRingView::kStopBit) return false;  // past the drain's tail: nothing more comes
    ring_pause(spins++);
  }
  const WorkItem& s = r.items[t & r.mask];
  while (ring_load_sys(&s.seq) != uint32_t(t + 1)) ring_pause(spins++);  // handed out, being written
  out.seq = s.seq;
  out.block = s.block;
  out.nblocks = s.nblocks;
  out.n = s.n;
  out.args = s.args;
  out.order = s.order;
  out.args_bytes = s.args_bytes;
  ring_store_sys(&r.freed[t & r.mask], uint32_t(t + 1));
  return true;
}

}  // namespace shoal::dev
