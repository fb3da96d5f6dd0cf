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

// One element copy's hold on a shared writer: opened through the registry,
// used under its lock, released when the copy is done.
template <class W>
class SharedFile {
 public:
  ~SharedFile() { close(); }
  // Opens (or joins) the writer for key; make(W&) opens a new one and
  // is_open(W&) says whether that worked. False (and nothing held) otherwise.
  template <class Make, class IsOpen>
  bool open(SharedRegistry<W>& reg, const std::string& key, Make&& make, IsOpen&& is_open) {
    reg_ = &reg;
    key_ = key;
    s_ = reg.get(key, std::forward<Make>(make));
    if (!is_open(s_->w)) {
      close();
      return false;
    }
    return true;
  }
  template <class F>
  void with(F&& f) {
    if (!s_) return;
    std::lock_guard<std::mutex> g(s_->mu);
    f(s_->w);
  }
  void close() {
    if (!s_) return;
    s_.reset();
    reg_->release(key_);
  }

 private:
  SharedRegistry<W>* reg_ = nullptr;
  std::string key_;
  std::shared_ptr<Shared<W>> s_;
};

}  // namespace shoal::io
