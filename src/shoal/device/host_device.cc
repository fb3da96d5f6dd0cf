// The host backend: "device" memory is ordinary memory owned by the device,
// streams are FIFO queues, and a pool of threads runs queued operations
// later, one at a time per stream and round-robin across streams, so
// aggregates in flight overlap and complete in any order. The kernels are
// the same step functions the CUDA backend launches; fused steps are one
// operation, as they are one kernel there.
#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <thread>
#include <unordered_map>
#include <vector>

#include "shoal/device/device.hh"

namespace shoal::dev {

namespace {

enum class OpType : uint8_t { H2D, D2H, Memset, Launch, Fused, Sort, Scan, Wait };

class HostStream;

struct Op {
  OpType type;
  bool fail = false;  // an injected fault
  void* dst = nullptr;
  const void* src = nullptr;
  size_t bytes = 0;
  int value = 0;
  const StepKernel* kernel = nullptr;
  uint32_t n = 0;
  const uint32_t* order = nullptr;
  std::vector<unsigned char> params;
  // Sort and Scan: their arrays (Sort: src/dst keys, src2/dst2 values; Scan:
  // src2 keys, src values, dst out), end_bit or inclusive, init
  const void* src2 = nullptr;
  void* dst2 = nullptr;
  int bits = 0;
  int64_t init = 0;
  // Wait (Device::follow): the stream whose first `bytes` operations must
  // have finished first
  HostStream* after = nullptr;
  // Fused: the steps, in turn (each over its threads; params at offsets)
  struct Part {
    const StepKernel* kernel;
    size_t off;
    uint32_t n;
    bool ordered;
  };
  std::vector<Part> parts;
};

const char* op_name(const Op& o) {
  switch (o.type) {
    case OpType::H2D: return "host-to-device copy";
    case OpType::D2H: return "device-to-host copy";
    case OpType::Memset: return "memset";
    case OpType::Launch: return o.kernel->name;
    case OpType::Fused: return o.parts.empty() ? "fused steps" : o.parts.front().kernel->name;
    case OpType::Sort: return "sort";
    case OpType::Scan: return "scan";
    case OpType::Wait: return "wait for another stream";
  }
  return "?";
}

class HostStream : public Stream {
 public:
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Op> ops;
  bool scheduled = false;  // waiting in the ready queue or running
  bool failed = false;
  std::string error;
  uint64_t queued = 0, done = 0, mark = 0;
  // Streams whose next operation waits for this one's (Device::follow):
  // back in the ready queue as this one's operations finish.
  std::vector<HostStream*> waiters;
  uint64_t followers = 0;  // Wait operations on other streams not yet past (this stream outlives them)
};

class HostDevice final : public Device {
 public:
  explicit HostDevice(const DeviceOptions& o) : Device(o) {
    uint32_t n = o.host_threads ? o.host_threads : std::min(4u, std::max(1u, std::thread::hardware_concurrency()));
    for (uint32_t i = 0; i < n; ++i) threads_.emplace_back([this, i] { loop(i); });
  }
  ~HostDevice() override {
    {
      std::lock_guard<std::mutex> g(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  const char* kind() const override { return "host"; }
  std::string describe() const override {
    std::string s = "host backend on " + std::to_string(threads_.size()) + " CPU threads";
    if (opt_.delay_us) s += ", random delays up to " + std::to_string(opt_.delay_us) + " us";
    if (opt_.fault_rate > 0) s += ", fault injection " + std::to_string(opt_.fault_rate);
    if (opt_.memory_limit) s += ", " + std::to_string(opt_.memory_limit) + " bytes of device memory";
    return s;
  }
  void* host_alloc(size_t bytes) override { return alloc(bytes); }
  void host_free(void* p) override { std::free(p); }
  // "Device" memory, limited to opt_.memory_limit bytes when set (tests of
  // running out of device memory).
  void* dev_alloc(size_t bytes) override {
    std::lock_guard<std::mutex> g(mem_mu_);
    if (opt_.memory_limit && dev_bytes_ + bytes > opt_.memory_limit) return nullptr;
    void* p = alloc(bytes);
    if (p) dev_bytes_ += bytes, dev_sizes_[p] = bytes;
    return p;
  }
  void dev_free(void* p) override {
    if (!p) return;
    std::lock_guard<std::mutex> g(mem_mu_);
    if (auto it = dev_sizes_.find(p); it != dev_sizes_.end()) dev_bytes_ -= it->second, dev_sizes_.erase(it);
    std::free(p);
  }
  void* host_device_pointer(void* host) override { return host; }  // (device memory is host memory here)

  Stream* stream_create() override { return new HostStream; }
  void stream_destroy(Stream* s) override {
    auto* h = static_cast<HostStream*>(s);
    {
      std::unique_lock<std::mutex> g(h->mu);
      h->cv.wait(g, [h] { return h->done == h->queued && h->followers == 0; });
    }
    delete h;
  }
  void h2d(Stream* s, void* dst, const void* src, size_t bytes) override {
    enqueue(s, Op{OpType::H2D, false, dst, src, bytes});
  }
  void d2h(Stream* s, void* dst, const void* src, size_t bytes) override {
    enqueue(s, Op{OpType::D2H, false, dst, src, bytes});
  }
  void memset(Stream* s, void* dst, int value, size_t bytes) override {
    enqueue(s, Op{OpType::Memset, false, dst, nullptr, bytes, value});
  }
  void launch(Stream* s, const StepKernel& k, const void* params, size_t size, uint32_t n,
              const uint32_t* order) override {
    Op o{OpType::Launch};
    o.kernel = &k;
    o.n = n;
    o.order = order;
    o.params.assign(static_cast<const unsigned char*>(params), static_cast<const unsigned char*>(params) + size);
    enqueue(s, std::move(o));
  }
  // One operation (as CUDA's one kernel): the steps run in turn over the
  // packets, so each packet's earlier steps are done before its later ones
  // start, as the fused kernel guarantees.
  void launch_fused(Stream* s, const FusedStep* steps, uint32_t count, uint32_t n, const uint32_t* order,
                    bool /*signal: record() marks the end here*/) override {
    Op o{OpType::Fused};
    o.order = order;
    for (uint32_t j = 0; j < count; ++j) {
      const FusedStep& f = steps[j];
      const size_t off = (o.params.size() + 15) & ~size_t(15);
      o.params.resize(off + f.size);
      std::memcpy(o.params.data() + off, f.params, f.size);
      o.parts.push_back({f.kernel, off, f.per_packet ? n * f.per_packet : n, f.per_packet == 0});
    }
    enqueue(s, std::move(o));
  }
  void sort_pairs(Stream* s, const uint64_t* keys_in, uint64_t* keys_out, const uint32_t* vals_in, uint32_t* vals_out,
                  uint32_t n, int end_bit) override {
    Op o{OpType::Sort, false, keys_out, keys_in, n};
    o.src2 = vals_in, o.dst2 = vals_out, o.bits = end_bit;
    enqueue(s, std::move(o));
  }
  void max_scan_by_key(Stream* s, const uint32_t* keys, const int64_t* in, int64_t* out, uint32_t n, bool inclusive,
                       int64_t init) override {
    Op o{OpType::Scan, false, out, in, n};
    o.src2 = keys, o.bits = inclusive, o.init = init;
    enqueue(s, std::move(o));
  }
  bool orders_streams() const override { return true; }
  void follow(Stream* s, Stream* after) override {
    auto* a = static_cast<HostStream*>(after);
    Op o{OpType::Wait};
    o.after = a;
    {
      std::lock_guard<std::mutex> g(a->mu);
      o.bytes = a->queued;
      ++a->followers;
    }
    enqueue(s, std::move(o));
  }
  void record(Stream* s) override {
    auto* h = static_cast<HostStream*>(s);
    std::lock_guard<std::mutex> g(h->mu);
    h->mark = h->queued;
  }
  Status poll(Stream* s, std::string& err) override {
    auto* h = static_cast<HostStream*>(s);
    std::lock_guard<std::mutex> g(h->mu);
    return status(h, err);
  }
  Status wait(Stream* s, std::string& err) override {
    auto* h = static_cast<HostStream*>(s);
    std::unique_lock<std::mutex> g(h->mu);
    h->cv.wait(g, [h] { return h->done >= h->mark; });
    return status(h, err);
  }
  void reset(Stream* s) override {
    auto* h = static_cast<HostStream*>(s);
    std::lock_guard<std::mutex> g(h->mu);
    h->failed = false;
    h->error.clear();
  }

 private:
  static void* alloc(size_t bytes) { return std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) & ~size_t(63)); }
  static Status status(HostStream* h, std::string& err) {
    if (h->done < h->mark) return Status::Pending;
    if (h->failed) {
      err = h->error;
      return Status::Failed;
    }
    return Status::Done;
  }
  void enqueue(Stream* s, Op o) {
    o.fail = o.type != OpType::Wait && inject_fault();
    auto* h = static_cast<HostStream*>(s);
    bool wake = false;
    {
      std::lock_guard<std::mutex> g(h->mu);
      h->ops.push_back(std::move(o));
      ++h->queued;
      if (!h->scheduled) wake = h->scheduled = true;
    }
    if (wake) {
      {
        std::lock_guard<std::mutex> g(mu_);
        ready_.push_back(h);
      }
      cv_.notify_one();
    }
  }
  // Each pool thread takes the stream at the head of the ready queue, runs
  // its first operation and puts it back at the tail if more are queued.
  void loop(uint32_t id) {
    std::mt19937_64 rng(opt_.seed * 7919 + id);
    std::vector<HostStream*> woken;
    for (;;) {
      HostStream* h;
      {
        std::unique_lock<std::mutex> g(mu_);
        cv_.wait(g, [this] { return stop_ || !ready_.empty(); });
        if (ready_.empty()) return;
        h = ready_.front();
        ready_.pop_front();
      }
      // A wait for another stream's operations parks this stream with that
      // one until they have finished (no pool thread blocks). Only this
      // thread takes h's operations, and others only append to them: its
      // first one stays put while h->mu is let go (the two streams' locks
      // are never held together: they may follow each other in turn).
      HostStream* after = nullptr;
      uint64_t target = 0;
      {
        std::lock_guard<std::mutex> g(h->mu);
        if (const Op& w = h->ops.front(); w.type == OpType::Wait) after = w.after, target = w.bytes;
      }
      if (after) {
        std::lock_guard<std::mutex> ga(after->mu);
        if (after->done < target) {
          after->waiters.push_back(h);
          continue;
        }
        --after->followers;
        after->cv.notify_all();
      }
      Op op;
      bool skip;
      {
        std::lock_guard<std::mutex> g(h->mu);
        op = std::move(h->ops.front());
        h->ops.pop_front();
        skip = h->failed;
      }
      if (opt_.delay_us && op.type != OpType::Wait)
        std::this_thread::sleep_for(std::chrono::microseconds(rng() % (opt_.delay_us + 1)));
      if (!skip && !op.fail) execute(op);
      bool requeue;
      {
        std::lock_guard<std::mutex> g(h->mu);
        if (!skip && op.fail) {
          h->failed = true;
          h->error = std::string("injected fault in ") + op_name(op);
        }
        ++h->done;
        requeue = !h->ops.empty();
        if (!requeue) h->scheduled = false;
        woken.swap(h->waiters);
        h->cv.notify_all();
      }
      if (requeue) woken.push_back(h);
      if (!woken.empty()) {
        {
          std::lock_guard<std::mutex> g(mu_);
          for (HostStream* w : woken) ready_.push_back(w);
        }
        cv_.notify_all();
        woken.clear();
      }
    }
  }
  static void execute(const Op& o) {
    switch (o.type) {
      case OpType::H2D:
      case OpType::D2H:
        if (o.bytes) std::memcpy(o.dst, o.src, o.bytes);
        break;
      case OpType::Memset:
        if (o.bytes) std::memset(o.dst, o.value, o.bytes);
        break;
      case OpType::Launch: o.kernel->host_run(o.params.data(), o.order, 0, o.n); break;
      case OpType::Fused:
        for (const Op::Part& p : o.parts)
          p.kernel->host_run(o.params.data() + p.off, p.ordered ? o.order : nullptr, 0, p.n);
        break;
      case OpType::Sort: sort(o); break;
      case OpType::Scan: scan(o); break;
      case OpType::Wait: break;  // (its stream waited in loop())
    }
  }
  // A stable sort by the key's low `bits` bits, as CUB's radix sort orders.
  static void sort(const Op& o) {
    auto* keys = static_cast<const uint64_t*>(o.src);
    auto* vals = static_cast<const uint32_t*>(o.src2);
    uint64_t mask = o.bits >= 64 ? ~uint64_t(0) : (uint64_t(1) << o.bits) - 1;
    std::vector<uint32_t> idx(o.bytes);
    for (uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(),
                     [&](uint32_t a, uint32_t b) { return (keys[a] & mask) < (keys[b] & mask); });
    auto* ko = static_cast<uint64_t*>(o.dst);
    auto* vo = static_cast<uint32_t*>(o.dst2);
    for (size_t i = 0; i < idx.size(); ++i) ko[i] = keys[idx[i]], vo[i] = vals[idx[i]];
  }
  static void scan(const Op& o) {
    auto* keys = static_cast<const uint32_t*>(o.src2);
    auto* in = static_cast<const int64_t*>(o.src);
    auto* out = static_cast<int64_t*>(o.dst);
    int64_t run = o.init;
    for (size_t i = 0; i < o.bytes; ++i) {
      int64_t v = in[i];
      bool head = i == 0 || keys[i] != keys[i - 1];
      if (o.bits) {  // inclusive
        run = head ? v : std::max(run, v);
        out[i] = run;
      } else {
        if (head) run = o.init;
        out[i] = run;
        run = std::max(run, v);
      }
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::mutex mem_mu_;
  size_t dev_bytes_ = 0;
  std::unordered_map<void*, size_t> dev_sizes_;
  std::condition_variable cv_;
  std::deque<HostStream*> ready_;
  bool stop_ = false;
};

}  // namespace

std::unique_ptr<Device> make_host_device(const DeviceOptions& o) { return std::make_unique<HostDevice>(o); }

}  // namespace shoal::dev
