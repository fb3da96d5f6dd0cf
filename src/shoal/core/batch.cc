#include "shoal/core/batch.hh"

#include <cstring>

namespace shoal {

PacketBatch::PacketBatch(uint32_t capacity)
    : cap_(capacity ? capacity : 1),
      pkts_(new Packet*[cap_]),
      res_(new int16_t[cap_]),
      mask_(new uint64_t[(cap_ + 63) / 64]()) {}

void PacketBatch::compact() {
  if (dead_ == 0) return;
  uint32_t j = 0;
  for (uint32_t i = 0; i < n_; ++i)
    if (is_live(i)) pkts_[j++] = pkts_[i];
  std::memset(mask_.get(), 0, sizeof(uint64_t) * ((cap_ + 63) / 64));
  n_ = 0;
  dead_ = 0;
  for (uint32_t i = 0; i < j; ++i) append(pkts_[i]);
}

void PacketBatch::clear() {
  std::memset(mask_.get(), 0, sizeof(uint64_t) * ((n_ + 63) / 64));
  n_ = 0;
  dead_ = 0;
  anno = BatchAnno{};
}

BatchPool::~BatchPool() {
  for (PacketBatch* b : all_) delete b;
}

PacketBatch* BatchPool::make() {
  auto* b = new PacketBatch(cap_);
  all_.push_back(b);
  return b;
}

}  // namespace shoal
