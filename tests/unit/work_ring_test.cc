// The persistent kernel's work ring (device/work_ring.hh), its protocol run
// by host threads: producers put programs (copies in, a launch's blocks,
// copies out), a watcher copies the tail, consumers take items, wait for
// those before them in their program, run them, and the last item of each
// program marks it, as the CUDA backend's kernel does. Slots are few, so
// the ring wraps thousands of times and producers wait for free slots;
// drains and restarts happen between rounds, as the device's allocation
// calls cause.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "shoal/device/work_ring.hh"

namespace {

using shoal::dev::WorkItem;
using shoal::dev::WorkRingView;

// A program as the consumers see it (through WorkItem::args): copies into
// `dev`, a launch whose blocks check that every copy in ended before them,
// copies out of `dev`, each checking that every block ended before it.
struct Program {
  std::vector<unsigned char> src, dev, out;
  std::vector<std::atomic<uint32_t>> hits;
  std::atomic<uint32_t> blocks_ended{0}, early{0};
  size_t at = 0, shift = 0, bytes = 0;  // src[at, +bytes) -> dev[at + shift, ...) -> out[at, ...)
  explicit Program(uint32_t nblocks) : hits(nblocks) {}
  bool copied_in() const {
    return std::equal(src.begin() + long(at), src.begin() + long(at + bytes), dev.begin() + long(at + shift));
  }
};

struct Ring {
  explicit Ring(uint32_t slots) : mem(shoal::dev::work_ring_bytes(slots) + 64, 0) {
    void* base = mem.data() + (64 - reinterpret_cast<uintptr_t>(mem.data()) % 64) % 64;
    v = shoal::dev::work_ring_view(base, slots, &dev[0], &dev[1]);
  }
  std::vector<unsigned char> mem;
  alignas(64) unsigned long long dev[2] = {0, 0};  // next, seen
  WorkRingView v;
};

// Consumers: take items until a drain ends them and run them as the
// persistent kernel does (a copy split among 7 "threads"), checking that
// each began after the items it waits for.
void consume(const WorkRingView& v, std::atomic<uint64_t>& taken) {
  WorkItem it{};
  while (shoal::dev::ring_take(v, it)) {
    shoal::dev::ring_wait_deps(it);
    auto* p = reinterpret_cast<Program*>(it.args);  // NOLINT(performance-no-int-to-ptr): the item's address word
    if (it.kind == WorkItem::kCopy) {
      if (it.wait && p->blocks_ended.load() != p->hits.size()) p->early.fetch_add(1);
      for (uint32_t t = 0; t < 7; ++t)
        shoal::dev::ring_copy(t, 7,
                              reinterpret_cast<const unsigned char*>(it.src),       // NOLINT(performance-no-int-to-ptr)
                              reinterpret_cast<unsigned char*>(it.dst), it.bytes);  // NOLINT(performance-no-int-to-ptr)
    } else {
      if (!p->copied_in()) p->early.fetch_add(1);
      p->hits[it.block].fetch_add(1, std::memory_order_relaxed);
      p->blocks_ended.fetch_add(1);
    }
    shoal::dev::ring_finish(it);
    taken.fetch_add(1, std::memory_order_relaxed);
  }
}

// A thread stuck in the protocol (a consumer waiting for an item that never
// comes) cannot be joined: past 90 seconds the test process ends, failed.
class Watchdog {
 public:
  Watchdog()
      : t_([this] {
          std::unique_lock l(m_);
          if (!cv_.wait_for(l, std::chrono::seconds(90), [this] { return done_; })) {
            std::fprintf(stderr, "WorkRing: a round did not end in 90 s (a thread is stuck in the ring)\n");
            std::_Exit(1);
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard l(m_);
      done_ = true;
    }
    cv_.notify_all();
    t_.join();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread t_;
};

// One round: start watcher and consumers at the current tail, let producers
// put their launches (each waits for its mark before the next, as a stream
// does), drain, and check every block ran once.
void round(Ring& r, int producers, int consumers, int launches, uint32_t max_blocks, uint64_t seed) {
  Watchdog dog;
  const uint64_t start = __atomic_load_n(&r.v.head->tail, __ATOMIC_ACQUIRE);
  r.dev[0] = r.dev[1] = start;
  shoal::dev::ring_clear_drain(r.v);
  std::atomic<uint64_t> taken{0};
  std::thread watcher([&] { shoal::dev::ring_watch(r.v); });
  std::vector<std::thread> cons;
  cons.reserve(consumers);
  for (int c = 0; c < consumers; ++c) cons.emplace_back([&] { consume(r.v, taken); });
  std::vector<std::vector<std::unique_ptr<Program>>> done(producers);
  std::atomic<bool> stuck{false};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::vector<std::thread> prods;
  prods.reserve(producers);
  for (int p = 0; p < producers; ++p)
    prods.emplace_back([&, p] {
      std::mt19937_64 rng(seed * 131 + p);
      uint32_t count = 0, done_word = 0;  // (a stream's counter and mark word)
      for (int k = 0; k < launches && !stuck; ++k) {
        const uint32_t nb = 1 + uint32_t(rng() % max_blocks);
        auto l = std::make_unique<Program>(nb);
        const size_t bytes = rng() % 300, at = rng() % 16, shift = rng() % 2 ? 0 : rng() % 16;
        l->at = at, l->shift = shift, l->bytes = bytes;  // (a shift: source and destination aligned differently)
        l->src.resize(bytes + 16);
        for (auto& c : l->src) c = static_cast<unsigned char>(rng());
        l->dev.assign(bytes + 32, 0);
        l->out.assign(bytes + 16, 0);
        const uint32_t chunk = 1 + uint32_t(rng() % 64);
        const uint32_t in = uint32_t((bytes + chunk - 1) / chunk), out = in;
        WorkItem it{};
        it.total = in + nb + out;
        it.count = reinterpret_cast<uint64_t>(&count);
        it.done = reinterpret_cast<uint64_t>(&done_word);
        it.mark = uint32_t(k + 1);
        it.args = reinterpret_cast<uint64_t>(l.get());
        uint64_t t = shoal::dev::ring_tickets(r.v, it.total);
        auto put = [&](const WorkItem& item) {
          while (!shoal::dev::ring_slot_free(r.v, t)) {
            if (std::chrono::steady_clock::now() > deadline) return false;
            std::this_thread::yield();
          }
          shoal::dev::ring_put(r.v, t++, item);
          return true;
        };
        auto copies = [&](const unsigned char* from, unsigned char* to, uint32_t wait) {
          it.kind = WorkItem::kCopy;
          it.wait = wait;
          for (size_t o = at; o < at + bytes; o += chunk) {
            it.src = reinterpret_cast<uint64_t>(from + o);
            it.dst = reinterpret_cast<uint64_t>(to + o);
            it.bytes = std::min<size_t>(chunk, at + bytes - o);
            if (!put(it)) return false;
          }
          return true;
        };
        bool ok = copies(l->src.data(), l->dev.data() + shift, 0);
        it.kind = WorkItem::kLaunch;
        it.wait = in;
        it.nblocks = nb;
        for (uint32_t b = 0; ok && b < nb; ++b) {
          it.block = b;
          ok = put(it);
        }
        ok = ok && copies(l->dev.data() + shift, l->out.data(), in + nb);
        if (!ok) {
          stuck = true;
          return;
        }
        while (__atomic_load_n(&done_word, __ATOMIC_ACQUIRE) != uint32_t(k + 1)) {
          if (std::chrono::steady_clock::now() > deadline) {
            stuck = true;
            return;
          }
          std::this_thread::yield();
        }
        EXPECT_EQ(__atomic_load_n(&count, __ATOMIC_RELAXED), 0u) << "the last item zeroes the counter";
        done[p].push_back(std::move(l));
      }
    });
  for (auto& t : prods) t.join();
  shoal::dev::ring_request_drain(r.v);
  for (auto& t : cons) t.join();
  watcher.join();
  ASSERT_FALSE(stuck) << "a producer waited 60 s for a free slot or a launch's mark";
  for (auto& per : done) {
    ASSERT_EQ(per.size(), size_t(launches));
    for (auto& l : per) {
      for (size_t b = 0; b < l->hits.size(); ++b) ASSERT_EQ(l->hits[b].load(), 1u) << "block " << b;
      EXPECT_EQ(l->early.load(), 0u) << "an item began before those it waits for ended";
      EXPECT_TRUE(l->copied_in()) << l->bytes << " bytes copied in";
      EXPECT_TRUE(std::equal(l->src.begin() + long(l->at), l->src.begin() + long(l->at + l->bytes),
                             l->out.begin() + long(l->at)))
          << l->bytes << " bytes copied out";
    }
  }
  const uint64_t put = __atomic_load_n(&r.v.head->tail, __ATOMIC_ACQUIRE) - start;
  EXPECT_EQ(taken.load(), put);
  // every consumer ended on a ticket at or past the drain's tail
  EXPECT_EQ(r.dev[0], start + put + uint64_t(consumers));
  EXPECT_EQ(r.dev[1], (start + put) | WorkRingView::kStopBit);
}

TEST(WorkRing, EveryItemOfEveryProgramRunsOnceAfterThoseItWaitsForAndTheLastMarksIt) {
  // 16 slots, programs of up to 5 + 40 + 5 items: a program's own items
  // wait for the slots its first ones free; the ring wraps thousands of times.
  Ring r(16);
  for (int k = 0; k < 4; ++k) round(r, 3, 3, 300, 40, uint64_t(k));
}

TEST(WorkRing, ADrainEndsIdleConsumersAndTheRingRestartsAtItsTail) {
  Ring r(8);
  round(r, 1, 4, 0, 1, 7);  // nothing put: the drain alone ends them
  round(r, 2, 1, 200, 3, 8);
  round(r, 4, 2, 50, 20, 9);
  EXPECT_GT(__atomic_load_n(&r.v.head->tail, __ATOMIC_ACQUIRE), 8u * 100);
}

TEST(WorkRing, TicketsBeyondAFullRingWaitForTheirSlot) {
  Ring r(4);
  // no consumers yet: ticket 4 reuses slot 0, which holds ticket 0 untaken
  const uint64_t t = shoal::dev::ring_tickets(r.v, 5);
  WorkItem it{};
  for (uint32_t b = 0; b < 4; ++b) {
    ASSERT_TRUE(shoal::dev::ring_slot_free(r.v, t + b));
    shoal::dev::ring_put(r.v, t + b, it);
  }
  EXPECT_FALSE(shoal::dev::ring_slot_free(r.v, t + 4));
  r.dev[1] = 5;  // (as the watcher would)
  WorkItem got{};
  ASSERT_TRUE(shoal::dev::ring_take(r.v, got));
  EXPECT_EQ(got.seq, 1u);
  EXPECT_TRUE(shoal::dev::ring_slot_free(r.v, t + 4));   // ticket 0 was taken
  EXPECT_FALSE(shoal::dev::ring_slot_free(r.v, t + 5));  // ticket 1 was not
}

}  // namespace
