// PacketBatch: packet pointers, a per-packet result (output port or drop
// reason), a live mask and batch annotations. Batches are recycled through a
// per-worker BatchPool; whoever receives a batch in push() owns it.
#pragma once
#include <bit>
#include <cassert>
#include <cstdint>
#include <memory>
#include <vector>

#include "shoal/core/packet.hh"

namespace shoal {

struct BatchAnno {
  uint64_t arrival_ns = 0;  // when the batch was formed (monotonic)
  int16_t device = -1;      // device chosen by a balancer; -1 = CPU
  uint16_t stream = 0;
  uint32_t seq = 0;         // per-source sequence number
  void* offload = nullptr;  // the offload aggregate this batch is (between HostToDevice and CompletionQueue)
  uint64_t flow_epoch = 0;  // the flow layer's epoch of its packets' tracking (FlowIPManager; 0: none)
};

class PacketBatch {
 public:
  explicit PacketBatch(uint32_t capacity);

  uint32_t capacity() const { return cap_; }
  uint32_t slots() const { return n_; }         // used slots, dead ones included
  uint32_t live() const { return n_ - dead_; }  // packets still in the batch
  bool empty() const { return live() == 0; }
  bool full() const { return n_ == cap_; }
  bool dense() const { return dead_ == 0; }

  Packet* at(uint32_t i) const { return pkts_[i]; }
  bool is_live(uint32_t i) const { return (mask_[i >> 6] >> (i & 63)) & 1; }
  int16_t& result(uint32_t i) { return res_[i]; }
  int16_t* results() { return res_.get(); }

  void append(Packet* p) {
    assert(n_ < cap_);
    uint32_t i = n_++;
    pkts_[i] = p;
    mask_[i >> 6] |= uint64_t(1) << (i & 63);
  }
  // The packet in slot i has left the batch (moved elsewhere or freed).
  void kill(uint32_t i) {
    assert(is_live(i));
    mask_[i >> 6] &= ~(uint64_t(1) << (i & 63));
    ++dead_;
  }
  // Removes dead slots, keeping order.
  void compact();
  void clear();

  // Calls f(slot, packet) for each live packet in order.
  template <class F>
  void for_each(F&& f) {
    if (dead_ == 0) {
      for (uint32_t i = 0; i < n_; ++i) f(i, pkts_[i]);
      return;
    }
    for (uint32_t w = 0, nw = (n_ + 63) >> 6; w < nw; ++w) {
      uint64_t m = mask_[w];
      while (m) {
        uint32_t i = (w << 6) + uint32_t(std::countr_zero(m));
        m &= m - 1;
        f(i, pkts_[i]);
      }
    }
  }

  BatchAnno anno;

 private:
  uint32_t cap_, n_ = 0, dead_ = 0;
  std::unique_ptr<Packet*[]> pkts_;
  std::unique_ptr<int16_t[]> res_;
  std::unique_ptr<uint64_t[]> mask_;
};

// Per-worker free list of batches of one capacity.
class BatchPool {
 public:
  explicit BatchPool(uint32_t batch_capacity) : cap_(batch_capacity) {}
  ~BatchPool();
  BatchPool(const BatchPool&) = delete;
  BatchPool& operator=(const BatchPool&) = delete;

  PacketBatch* get() {
    if (free_.empty()) return make();
    PacketBatch* b = free_.back();
    free_.pop_back();
    return b;
  }
  void put(PacketBatch* b) {
    b->clear();
    free_.push_back(b);
  }
  uint32_t batch_capacity() const { return cap_; }
  size_t allocated() const { return all_.size(); }

 private:
  PacketBatch* make();
  uint32_t cap_;
  std::vector<PacketBatch*> free_;
  std::vector<PacketBatch*> all_;
};

}  // namespace shoal
