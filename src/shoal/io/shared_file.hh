// Output files shared by the copies of one sink element across workers
// (ToDump, ToIPSummaryDump): opened once, written under a mutex, one lock
// per batch.
#pragma once
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace shoal::io {

template <class W>
struct Shared {
  std::mutex mu;
  W w;
  int refs = 0;
};

template <class W>
class SharedRegistry {
 public:
  // The shared writer for key, created by make() the first time.
  template <class Make>
  std::shared_ptr<Shared<W>> get(const std::string& key, Make&& make) {
    std::lock_guard<std::mutex> g(mu_);
    auto& s = map_[key];
    if (!s) {
      s = std::make_shared<Shared<W>>();
      make(s->w);
    }
    ++s->refs;
    return s;
  }
  void release(const std::string& key) {
    std::lock_guard<std::mutex> g(mu_);
    auto it = map_.find(key);
    if (it != map_.end() && --it->second->refs == 0) map_.erase(it);
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::shared_ptr<Shared<W>>> map_;
};

}  // namespace shoal::io
