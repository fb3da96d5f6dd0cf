#include "shoal/core/packet.hh"

#include <cstdlib>
#include <new>

namespace shoal {

namespace {
// aligned_alloc needs a size that is a multiple of the alignment.
constexpr uint32_t kJumboBytes = (256 + PacketPool::kMaxFrame + 256 + 63) & ~63u;
}  // namespace

PacketPool::PacketPool(const PoolConfig& cfg) : cfg_(cfg) {
  if (cfg_.buf_size < cfg_.headroom + 64) cfg_.buf_size = cfg_.headroom + 64;
  cfg_.buf_size = (cfg_.buf_size + 63) & ~63u;
  // Buffers lie an odd number of cache lines apart. At a power-of-two
  // stride every packet's headers sit at the same offset in a page, so in
  // the same few sets of the L1 cache (a 32 KB 8-way L1 held 16 of them):
  // a batch of 32 evicted its own headers, and each element after the first
  // read them again from L2. (DPDK's mempool pads its objects for the same
  // reason.)
  const size_t stride = cfg_.buf_size % 128 ? cfg_.buf_size : cfg_.buf_size + 64;
  arena_ = static_cast<uint8_t*>(std::aligned_alloc(64, size_t(cfg_.count) * stride));
  headers_ = static_cast<Packet*>(std::aligned_alloc(64, sizeof(Packet) * size_t(cfg_.count)));
  if (!arena_ || !headers_) throw std::bad_alloc();
  free_.reserve(cfg_.count);
  for (uint32_t i = cfg_.count; i-- > 0;) {
    Packet* p = new (&headers_[i]) Packet();
    p->buf_ = arena_ + size_t(i) * stride;
    p->cap_ = cfg_.buf_size;
    p->pool_ = this;
    free_.push_back(p);
  }
}

PacketPool::~PacketPool() {
  for (Packet* p : jumbo_all_) {
    std::free(p->buf_);
    delete p;
  }
  std::free(headers_);
  std::free(arena_);
}

Packet* PacketPool::alloc_slow(uint32_t len, uint32_t headroom) {
  if (uint64_t(len) + headroom <= cfg_.buf_size) {
    if (free_.empty()) {
      ++failures_;
      return nullptr;
    }
    Packet* p = free_.back();
    free_.pop_back();
    init_packet(p, len, headroom);
    return p;
  }
  if (uint64_t(len) + headroom > kJumboBytes) {
    ++failures_;
    return nullptr;
  }
  Packet* p = nullptr;
  if (!jumbo_free_.empty()) {
    p = jumbo_free_.back();
    jumbo_free_.pop_back();
  } else if (jumbo_all_.size() < cfg_.jumbo_count) {
    p = new Packet();
    p->buf_ = static_cast<uint8_t*>(std::aligned_alloc(64, kJumboBytes));
    if (!p->buf_) {
      delete p;
      ++failures_;
      return nullptr;
    }
    p->cap_ = kJumboBytes;
    p->pool_ = this;
    p->jumbo_ = true;
    jumbo_all_.push_back(p);
  } else {
    ++failures_;
    return nullptr;
  }
  init_packet(p, len, headroom);
  return p;
}

Packet* PacketPool::clone(const Packet* src) {
  Packet* p = alloc(src->len_, src->off_);
  if (!p) return nullptr;
  // The headroom too, as Click's clones share it: Unstrip after a Tee finds
  // the link header it stripped before.
  std::memcpy(p->buf_, src->buf_, size_t(src->off_) + src->len_);
  p->mac_ = src->mac_;
  p->net_ = src->net_;
  p->trans_ = src->trans_;
  p->src_index_ = src->src_index_;
  p->trace_ns_ = src->trace_ns_;
  p->anno_ = src->anno_;
  return p;
}

}  // namespace shoal
