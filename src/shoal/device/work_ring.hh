// A ring of device work in pinned host memory that the device maps: how a
// persistent kernel takes an aggregate's copies and launch with no driver
// call (issue 25 item 3; the CUDA backend's SHOAL_CUDA_PERSISTENT). A
// *program* is one stream's work up to its record(): copies in, one fused
// launch, copies out. Host threads put it as items (a chunk of a copy, or a
// block of the launch) under consecutive tickets; the kernel's blocks take
// items in ticket order. The protocol is written once, for the device and
// for host threads (the unit tests run it with threads as the blocks).
//
//   producers (host threads): take a program's tickets (an atomic add on
//     `tail`), wait until each ticket's slot was freed by the item one lap
//     before, write the item, and publish it by storing its sequence
//     (ticket + 1) last, with release.
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
//   order within a program: an item begins once the program's counter (device
//     memory) reached its `wait` (the launch's blocks wait for every copy in,
//     the copies out for every block), and adds one when it ends; the item
//     that brings the counter to `total` zeroes it and writes `mark` to
//     `done` (mapped host memory), which the host polls. An item waits only
//     for items of lower tickets, which blocks took before it and run
//     without waiting on higher ones: no wait can close a cycle.
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

// One item of a program (128 bytes: two lines a slot).
struct alignas(64) WorkItem {
  static constexpr uint32_t kLaunch = 0, kCopy = 1;
  uint32_t seq;    // ticket + 1, stored last
  uint32_t kind;   // kLaunch or kCopy
  uint32_t wait;   // begin once the program's counter reached this
  uint32_t total;  // the program's items
  uint64_t count;  // the program's counter (device memory, zero between programs)
  uint64_t done;   // where the last item writes `mark` (mapped host memory)
  uint32_t mark;
  uint32_t block;  // launch: which block, of `nblocks`, over `n` packets
  uint32_t nblocks;
  uint32_t n;
  uint64_t args;        // launch: the fused launch's arguments (mapped host memory)
  uint64_t order;       // launch: packet order, or 0
  uint32_t args_bytes;  // launch: how many bytes of `args` to read (a multiple of 16)
  uint32_t pad0_;
  uint64_t src, dst, bytes;  // copy: this chunk
  uint32_t pad1_[8];
};
static_assert(sizeof(WorkItem) == 128);
constexpr uint32_t kWorkItemWords = sizeof(WorkItem) / 4;

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
  __nanosleep(spins < 16 ? 64 : spins < 64 ? 512 : 2048);  // (idle blocks: a few polls a microsecond in all)
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
  auto* d = reinterpret_cast<uint32_t*>(&r.items[t & r.mask]);
  const auto* w = reinterpret_cast<const uint32_t*>(&it);
  for (uint32_t k = 1; k < kWorkItemWords; ++k) d[k] = w[k];
  ring_store_sys(d, uint32_t(t + 1));
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

// Takes the next ticket into `t` and waits until its item is published;
// false when a drain ended this consumer. Read the item (r.items[t & mask],
// whose seq is t + 1), then ring_release() its slot.
SHOAL_HD bool ring_claim(const WorkRingView& r, unsigned long long& t) {
  t = ring_fetch_add_dev(r.next);
  uint32_t spins = 0;
  for (;;) {  // until the watcher saw ticket t handed out
    const unsigned long long s = ring_load_dev(r.seen);
    const unsigned long long tail = s & ~WorkRingView::kStopBit;
    if (t < tail) break;
    if (s & WorkRingView::kStopBit) return false;  // past the drain's tail: nothing more comes
    ring_pause(spins++);
  }
  const auto* seq = reinterpret_cast<const uint32_t*>(&r.items[t & r.mask]);
  while (ring_load_sys(seq) != uint32_t(t + 1)) ring_pause(spins++);  // handed out, being written
  return true;
}
SHOAL_HD void ring_release(const WorkRingView& r, unsigned long long t) {
  ring_store_sys(&r.freed[t & r.mask], uint32_t(t + 1));
}
// Claims, copies and releases the next item; false when a drain ended this
// consumer.
SHOAL_HD bool ring_take(const WorkRingView& r, WorkItem& out) {
  unsigned long long t = 0;
  if (!ring_claim(r, t)) return false;
  const auto* w = reinterpret_cast<const uint32_t*>(&r.items[t & r.mask]);
  auto* o = reinterpret_cast<uint32_t*>(&out);
  for (uint32_t k = 0; k < kWorkItemWords; ++k) o[k] = w[k];
  ring_release(r, t);
  return true;
}

// ---- order within a program (one thread of the block running the item)

SHOAL_HD uint32_t ring_load_dev32(const uint32_t* p) {
#if defined(__CUDA_ARCH__)
  uint32_t v;
  asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}
// (The item's address words become pointers here: NOLINT below.)
// Until the items `it` waits for ended.
SHOAL_HD void ring_wait_deps(const WorkItem& it) {
  const auto* count = reinterpret_cast<const uint32_t*>(it.count);  // NOLINT(performance-no-int-to-ptr)
  for (uint32_t spins = 0; it.wait && ring_load_dev32(count) < it.wait;) ring_pause(spins++);
}
// `it` ended (its block's writes made visible before: device-wide for later
// items, system-wide for the host); the last of its program marks it.
SHOAL_HD void ring_finish(const WorkItem& it) {
  auto* count = reinterpret_cast<uint32_t*>(it.count);  // NOLINT(performance-no-int-to-ptr)
#if defined(__CUDA_ARCH__)
  const uint32_t before = atomicAdd(count, 1u);
#else
  const uint32_t before = __atomic_fetch_add(count, 1u, __ATOMIC_ACQ_REL);
#endif
  if (before + 1 != it.total) return;
#if defined(__CUDA_ARCH__)
  __threadfence_system();
  *reinterpret_cast<volatile uint32_t*>(count) = 0;  // (the program's stream waits for the mark before its next)
#else
  __atomic_store_n(count, 0u, __ATOMIC_RELAXED);
#endif
  ring_store_sys(reinterpret_cast<uint32_t*>(it.done), it.mark);  // NOLINT(performance-no-int-to-ptr)
}

// Thread `tid` of `threads`: its share of a copy chunk. Where source and
// destination agree modulo 16, the middle goes 16 bytes at a time, four
// loads in flight a thread (the source may be across the bus).
struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};
// (on the device: read again from memory, not from a line an earlier item
// left in L1; the source may be pinned host memory the host rewrote)
SHOAL_HD Bytes16 ring_load16(const Bytes16* p) {
#if defined(__CUDA_ARCH__)
  const uint4 v = __ldcv(reinterpret_cast<const uint4*>(p));
  return Bytes16{uint64_t(v.x) | uint64_t(v.y) << 32, uint64_t(v.z) | uint64_t(v.w) << 32};
#else
  return *p;
#endif
}
SHOAL_HD void ring_copy(uint32_t tid, uint32_t threads, const unsigned char* src, unsigned char* dst, uint64_t bytes) {
  uint64_t head = bytes, body = 0;
  if (((reinterpret_cast<uintptr_t>(src) ^ reinterpret_cast<uintptr_t>(dst)) & 15) == 0) {
    head = (16 - (reinterpret_cast<uintptr_t>(src) & 15)) & 15;
    if (head > bytes) head = bytes;
    body = (bytes - head) / 16;
  }
  for (uint64_t k = tid; k < head; k += threads) dst[k] = src[k];
  const auto* s16 = reinterpret_cast<const Bytes16*>(src + head);
  auto* d16 = reinterpret_cast<Bytes16*>(dst + head);
  uint64_t k = tid;
  for (; k + 3 * uint64_t(threads) < body; k += 4 * uint64_t(threads)) {
    const Bytes16 a = ring_load16(s16 + k), b = ring_load16(s16 + k + threads), c = ring_load16(s16 + k + 2 * threads),
                  d = ring_load16(s16 + k + 3 * threads);
    d16[k] = a;
    d16[k + threads] = b;
    d16[k + 2 * threads] = c;
    d16[k + 3 * threads] = d;
  }
  for (; k < body; k += threads) d16[k] = ring_load16(s16 + k);
  const uint64_t done = head + body * 16;
  for (uint64_t j = done + tid; j < bytes; j += threads) dst[j] = src[j];
}

}  // namespace shoal::dev
