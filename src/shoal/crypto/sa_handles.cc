#include "shoal/crypto/sa_handles.hh"

#include <array>
#include <atomic>
#include <mutex>
#include <unordered_map>

namespace shoal::crypto {

namespace {
// Chunks of 1024 slots, made as needed and never freed; readers take a
// chunk's pointer with one atomic load (no lock on the data path).
constexpr uint32_t kChunk = 1024;
struct Registry {
  std::mutex mu;
  std::unordered_map<const SA*, uint32_t> by_sa;
  std::array<std::atomic<std::shared_ptr<SA>*>, kMaxSaHandles / kChunk> chunks{};
  uint32_t next = 1;
};
Registry& registry() {
  static Registry* r = new Registry;  // (never destroyed: handles outlive every element)
  return *r;
}
}  // namespace

uint32_t sa_handle(const std::shared_ptr<SA>& sa) {
  if (!sa) return 0;
  Registry& r = registry();
  std::lock_guard<std::mutex> g(r.mu);
  auto it = r.by_sa.find(sa.get());
  if (it != r.by_sa.end()) return it->second;
  if (r.next >= kMaxSaHandles) return 0;
  uint32_t h = r.next++;
  auto& c = r.chunks[h / kChunk];
  std::shared_ptr<SA>* slots = c.load(std::memory_order_acquire);
  if (!slots) {
    slots = new std::shared_ptr<SA>[kChunk];
    c.store(slots, std::memory_order_release);
  }
  slots[h % kChunk] = sa;
  r.by_sa.emplace(sa.get(), h);
  return h;
}

SA* sa_by_handle(uint32_t h) {
  if (h == 0 || h >= kMaxSaHandles) return nullptr;
  std::shared_ptr<SA>* slots = registry().chunks[h / kChunk].load(std::memory_order_acquire);
  return slots ? slots[h % kChunk].get() : nullptr;
}

}  // namespace shoal::crypto
