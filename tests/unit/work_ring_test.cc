// The persistent kernel's work ring (device/work_ring.hh), its protocol run
// by host threads: producers put launches of many blocks, a watcher copies
// the tail, consumers take blocks and the last block of each launch marks
// it, as the CUDA backend's kernel does. Slots are few, so the ring wraps
// thousands of times and producers wait for free slots; drains and
// restarts happen between rounds, as the device's allocation calls cause.
#include <gtest/gtest.h>

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

// A launch as the consumers see it (through WorkItem::args): one hit per
// block, and the completion mark its last block writes.
struct Launch {
  std::vector<std::atomic<uint32_t>> hits;
  std::atomic<uint32_t> finished{0};
  std::atomic<uint32_t> mark{0};
  uint32_t seq = 0;
  explicit Launch(uint32_t nblocks) : hits(nblocks) {}
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

// Consumers: take blocks until a drain ends them; run each (a hit), and the
// launch's last block marks it.
void consume(const WorkRingView& v, std::atomic<uint64_t>& taken) {
  WorkItem it{};
  while (shoal::dev::ring_take(v, it)) {
    auto* l = reinterpret_cast<Launch*>(it.args);  // NOLINT(performance-no-int-to-ptr): the item's address word
    l->hits[it.block].fetch_add(1, std::memory_order_relaxed);
    if (l->finished.fetch_add(1, std::memory_order_acq_rel) == it.nblocks - 1)
      l->mark.store(l->seq, std::memory_order_release);
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
  std::vector<std::vector<std::unique_ptr<Launch>>> done(producers);
  std::atomic<bool> stuck{false};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::vector<std::thread> prods;
  prods.reserve(producers);
  for (int p = 0; p < producers; ++p)
    prods.emplace_back([&, p] {
      std::mt19937_64 rng(seed * 131 + p);
      for (int k = 0; k < launches && !stuck; ++k) {
        const uint32_t nb = 1 + uint32_t(rng() % max_blocks);
        auto l = std::make_unique<Launch>(nb);
        l->seq = uint32_t(k + 1);
        WorkItem it{};
        it.nblocks = nb;
        it.n = nb * 256;
        it.args = reinterpret_cast<uint64_t>(l.get());
        const uint64_t t = shoal::dev::ring_tickets(r.v, nb);
        for (uint32_t b = 0; b < nb; ++b) {
          while (!shoal::dev::ring_slot_free(r.v, t + b)) {
            if (std::chrono::steady_clock::now() > deadline) {
              stuck = true;
              return;
            }
            std::this_thread::yield();
          }
          it.block = b;
          shoal::dev::ring_put(r.v, t + b, it);
        }
        while (l->mark.load(std::memory_order_acquire) != l->seq) {
          if (std::chrono::steady_clock::now() > deadline) {
            stuck = true;
            return;
          }
          std::this_thread::yield();
        }
        done[p].push_back(std::move(l));
      }
    });
  for (auto& t : prods) t.join();
  shoal::dev::ring_request_drain(r.v);
  for (auto& t : cons) t.join();
  watcher.join();
  ASSERT_FALSE(stuck) << "a producer waited 60 s for a free slot or a launch's mark";
  uint64_t blocks = 0;
  for (auto& per : done) {
    ASSERT_EQ(per.size(), size_t(launches));
    for (auto& l : per) {
      for (size_t b = 0; b < l->hits.size(); ++b) ASSERT_EQ(l->hits[b].load(), 1u) << "block " << b;
      EXPECT_EQ(l->finished.load(), l->hits.size());
      blocks += l->hits.size();
    }
  }
  EXPECT_EQ(taken.load(), blocks);
  EXPECT_EQ(__atomic_load_n(&r.v.head->tail, __ATOMIC_ACQUIRE) - start, blocks);
  // every consumer ended on a ticket at or past the drain's tail
  EXPECT_EQ(r.dev[0], start + blocks + uint64_t(consumers));
  EXPECT_EQ(r.dev[1], (start + blocks) | WorkRingView::kStopBit);
}

TEST(WorkRing, EveryBlockOfEveryLaunchRunsOnceAndItsLastBlockMarksIt) {
  // 16 slots, launches of up to 40 blocks: a launch's own blocks wait for
  // the slots its first blocks free; the ring wraps thousands of times.
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
