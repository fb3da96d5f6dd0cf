// The CUDA backend: pinned host memory, device memory, one CUDA stream and
// one event per Stream, asynchronous copies and the step kernels launched
// from the same SHOAL_HD run() functions the host backend calls. Nothing
// here blocks the calling worker except wait().
#include <cuda_runtime.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "shoal/device/cuda/cuda_api.hh"
#include "shoal/device/cuda/step_launch.cuh"

namespace shoal::cuda {

namespace {

// SHOAL_CUDA_STATS=1: how many times each runtime call was made and how long
// the calling workers spent in it (printed when the device closes), to tell
// a saturated device from workers waiting on the driver.
// ("ring": launches put on the persistent kernel's ring, no driver call.)
enum Call { kHostAlloc, kDevAlloc, kFree, kH2d, kD2h, kMemset, kLaunch, kRing, kRecord, kPoll, kWait, kCalls };
constexpr const char* kCallName[kCalls] = {"host_alloc", "dev_alloc", "free",   "h2d",  "d2h", "memset",
                                           "launch",     "ring",      "record", "poll", "wait"};
struct CallStats {
  bool on = [] {
    const char* e = std::getenv("SHOAL_CUDA_STATS");
    return e && *e && *e != '0';
  }();
  std::atomic<uint64_t> count[kCalls] = {}, ns[kCalls] = {}, max_ns[kCalls] = {};
  void print() const {
    if (!on) return;
    std::fprintf(stderr, "shoal: CUDA runtime calls (SHOAL_CUDA_STATS): call count total_ms mean_us max_us\n");
    for (int c = 0; c < kCalls; ++c) {
      uint64_t n = count[c].load(), t = ns[c].load();
      if (n)
        std::fprintf(stderr, "  %-10s %10llu %10.1f %8.2f %8.1f\n", kCallName[c], (unsigned long long)n, t / 1e6,
                     t / 1e3 / double(n), max_ns[c].load() / 1e3);
    }
  }
  void reset() {
    for (int c = 0; c < kCalls; ++c) count[c] = 0, ns[c] = 0, max_ns[c] = 0;
  }
};
CallStats& call_stats() {
  static CallStats s;
  return s;
}
uint64_t now_ns() {
  return uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}
// Times the enclosing scope as call c when the statistics are on.
class Timed {
 public:
  explicit Timed(Call c) : c_(c), t0_(call_stats().on ? now_ns() : 0) {}
  ~Timed() {
    if (!t0_) return;
    uint64_t d = now_ns() - t0_;
    CallStats& s = call_stats();
    s.count[c_].fetch_add(1, std::memory_order_relaxed);
    s.ns[c_].fetch_add(d, std::memory_order_relaxed);
    uint64_t m = s.max_ns[c_].load(std::memory_order_relaxed);
    while (d > m && !s.max_ns[c_].compare_exchange_weak(m, d, std::memory_order_relaxed)) {}
  }
  Timed(const Timed&) = delete;
  Timed& operator=(const Timed&) = delete;

 private:
  Call c_;
  uint64_t t0_;
};

class CudaStream : public dev::Stream {
 public:
  cudaStream_t s = nullptr;
  cudaEvent_t ev = nullptr;
  cudaEvent_t order_ev = nullptr;  // Device::follow's mark on this stream (made at its first use)
  bool failed = false, recorded = false;
  std::string error;
  // Completion marked by the kernel (launch_fused's signal): the word in
  // pinned host memory its last block writes, its device address, the
  // blocks' counter, the mark expected; armed while the last operation
  // queued is a signalling launch; signalled when record() relied on it.
  uint32_t* done_host = nullptr;
  uint32_t* done_dev = nullptr;
  uint32_t* blocks = nullptr;
  uint32_t seq = 0, quiet_polls = 0;
  bool armed = false, signalled = false;
  // Work queued on the CUDA stream whose end no poll or wait has seen yet
  // (a ring launch must not overtake it), and a ring launch whose mark no
  // poll or wait has seen yet (nothing may be queued behind it: the ring is
  // not ordered with the stream). ring_args: the launch's arguments, in
  // mapped host memory (host and device addresses).
  bool busy = false, ring_inflight = false, recorded_all = true;
  FusedArgs* ring_args = nullptr;
  uint64_t ring_args_dev = 0;
  // Work held for the ring until record(): a program of copies in, one
  // fused launch (its arguments in ring_args) and copies out. Where it
  // cannot go there, it is issued as ordinary calls, in the same order.
  struct Held {
    enum Kind : uint8_t { kH2d, kD2h, kFused } kind;
    void* dst = nullptr;
    const void* src = nullptr;
    size_t bytes = 0;
    uint32_t n = 0;
    const uint32_t* order = nullptr;
    size_t params_end = 0;
    bool signal = false;
  };
  std::vector<Held> held;
  uint8_t held_phase = 0;  // 0: copies in so far; 1: the launch held; 2: copies out after it
  // CUB's temporary storage for sort_pairs and max_scan_by_key, grown in
  // stream order
  void* scratch = nullptr;
  size_t scratch_cap = 0;
};

struct MaxOp {
  __device__ int64_t operator()(int64_t a, int64_t b) const { return a > b ? a : b; }
};

class CudaDevice final : public dev::Device {
 public:
  CudaDevice(int dev, const dev::DeviceOptions& o) : Device(o), dev_(dev) { ring_setup(); }
  ~CudaDevice() override {
    {
      std::lock_guard g(quiet_mu());
      auto& all = ring_devices();
      all.erase(std::remove(all.begin(), all.end(), this), all.end());
      std::unique_lock l(ring_mu_);
      ring_drain_locked();
    }
    if (ring_work_) cudaStreamDestroy(ring_work_);
    if (ring_watch_) cudaStreamDestroy(ring_watch_);
    if (ring_host_) cudaFreeHost(ring_host_);
    if (ring_dev_) cudaFree(ring_dev_);
    if (ring_blocks_ && call_stats().on)
      std::fprintf(stderr, "shoal: persistent kernel: %u blocks, %llu launches through its ring\n", ring_blocks_,
                   (unsigned long long)ring_launches_.load());
    call_stats().print();
    call_stats().reset();
  }
  uint64_t ring_launches() const override { return ring_launches_.load(std::memory_order_relaxed); }
  const char* kind() const override { return "cuda"; }
  std::string describe() const override {
    std::string s = "CUDA device " + std::to_string(dev_) + ": " + device_description(dev_);
    if (opt_.fault_rate > 0) s += ", fault injection " + std::to_string(opt_.fault_rate);
    if (ring_blocks_) s += ", persistent kernel of " + std::to_string(ring_blocks_) + " blocks";
    return s;
  }
  void* host_alloc(size_t bytes) override {
    Timed timed(kHostAlloc);
    Quiet q(*this);
    void* p = nullptr;
    cudaSetDevice(dev_);
    if (cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocPortable | cudaHostAllocMapped) != cudaSuccess)
      return nullptr;
    std::unique_lock l(pinned_mu_);
    pinned_[reinterpret_cast<uintptr_t>(p)] = bytes ? bytes : 1;
    return p;
  }
  void host_free(void* p) override {
    Timed timed(kFree);
    Quiet q(*this);
    if (!p) return;
    {
      std::unique_lock l(pinned_mu_);
      pinned_.erase(reinterpret_cast<uintptr_t>(p));
    }
    cudaFreeHost(p);
  }
  void* dev_alloc(size_t bytes) override {
    Timed timed(kDevAlloc);
    Quiet q(*this);
    void* p = nullptr;
    cudaSetDevice(dev_);
    return cudaMalloc(&p, bytes ? bytes : 1) == cudaSuccess ? p : nullptr;
  }
  void dev_free(void* p) override {
    Timed timed(kFree);
    Quiet q(*this);
    if (p) cudaFree(p);
  }
  void* host_device_pointer(void* host) override {
    void* d = nullptr;
    return cudaHostGetDevicePointer(&d, host, 0) == cudaSuccess ? d : nullptr;
  }
  dev::Stream* stream_create() override {
    Quiet q(*this);
    cudaSetDevice(dev_);
    auto* c = new CudaStream;
    if (cudaStreamCreateWithFlags(&c->s, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreateWithFlags(&c->ev, cudaEventDisableTiming) != cudaSuccess) {
      fail(c, "cudaStreamCreate", cudaGetLastError());
    }
    if (signals_) {  // (without them, completion goes through the event)
      void* h = nullptr;
      void* d = nullptr;
      if (cudaHostAlloc(&h, 64, cudaHostAllocPortable | cudaHostAllocMapped) == cudaSuccess) {
        c->done_host = static_cast<uint32_t*>(h);
        *c->done_host = 0;
        if (cudaHostGetDevicePointer(&d, h, 0) == cudaSuccess) c->done_dev = static_cast<uint32_t*>(d);
      }
      if (c->done_dev && cudaMalloc(&d, sizeof(uint32_t)) == cudaSuccess) {
        c->blocks = static_cast<uint32_t*>(d);
        if (cudaMemset(c->blocks, 0, sizeof(uint32_t)) != cudaSuccess) c->done_dev = nullptr;
      } else {
        c->done_dev = nullptr;
      }
      cudaGetLastError();  // (a failure here only turns the signal off)
    }
    if (ring_blocks_ && c->done_dev) {  // (else this stream's launches never go through the ring)
      void* h = nullptr;
      void* d = nullptr;
      if (cudaHostAlloc(&h, sizeof(FusedArgs), cudaHostAllocPortable | cudaHostAllocMapped) == cudaSuccess) {
        if (cudaHostGetDevicePointer(&d, h, 0) == cudaSuccess) {
          c->ring_args = static_cast<FusedArgs*>(h);
          c->ring_args_dev = reinterpret_cast<uint64_t>(d);
        } else {
          cudaFreeHost(h);
        }
      }
      cudaGetLastError();
    }
    return c;
  }
  void stream_destroy(dev::Stream* s) override {
    auto* c = static_cast<CudaStream*>(s);
    c->held.clear();  // (never recorded: nothing waits for it)
    if (c->ring_inflight && !c->failed) {
      std::string err;
      ring_wait(c, err);
    }
    Quiet q(*this);
    if (c->s) cudaStreamSynchronize(c->s);
    if (c->ring_args) cudaFreeHost(c->ring_args);
    if (c->ev) cudaEventDestroy(c->ev);
    if (c->order_ev) cudaEventDestroy(c->order_ev);
    if (c->s) cudaStreamDestroy(c->s);
    if (c->done_host) cudaFreeHost(c->done_host);
    if (c->blocks) cudaFree(c->blocks);
    if (c->scratch) cudaFree(c->scratch);
    delete c;
  }
  void h2d(dev::Stream* s, void* dst, const void* src, size_t bytes) override {
    Timed timed(kH2d);
    if (auto* h = holding(s, 0, src, bytes)) {
      if (ok(h, "host-to-device copy") && bytes) h->held.push_back({CudaStream::Held::kH2d, dst, src, bytes});
      return;
    }
    auto* c = queue_on(s);
    if (ok(c, "host-to-device copy") && bytes)
      check(c, "cudaMemcpyAsync(HostToDevice)", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->s));
  }
  void d2h(dev::Stream* s, void* dst, const void* src, size_t bytes) override {
    Timed timed(kD2h);
    if (auto* h = holding(s, 1, dst, bytes)) {
      if (ok(h, "device-to-host copy") && bytes) {
        h->held.push_back({CudaStream::Held::kD2h, dst, src, bytes});
        h->held_phase = 2;
      }
      return;
    }
    auto* c = queue_on(s);
    if (ok(c, "device-to-host copy") && bytes)
      check(c, "cudaMemcpyAsync(DeviceToHost)", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->s));
  }
  void memset(dev::Stream* s, void* dst, int value, size_t bytes) override {
    Timed timed(kMemset);
    auto* c = queue_on(s);
    if (ok(c, "memset") && bytes) check(c, "cudaMemsetAsync", cudaMemsetAsync(dst, value, bytes, c->s));
  }
  void launch(dev::Stream* s, const dev::StepKernel& k, const void* params, size_t size, uint32_t n,
              const uint32_t* order) override {
    auto* c = static_cast<CudaStream*>(s);
    if (c->ring_inflight) ring_settle(c);
    if (n && can_hold(c) && c->held_phase == 0 && size <= FusedArgs::kBytes) {  // a program's launch of one step
      const dev::FusedStep f{&k, params, size, 0};
      return launch_fused(s, &f, 1, n, order, false);
    }
    Timed timed(kLaunch);
    launch_one(queue_on(s), k, params, n, order);
  }
  void sort_pairs(dev::Stream* s, const uint64_t* keys_in, uint64_t* keys_out, const uint32_t* vals_in,
                  uint32_t* vals_out, uint32_t n, int end_bit) override {
    Timed timed(kLaunch);
    auto* c = queue_on(s);
    if (!ok(c, "sort") || !n) return;
    size_t need = 0;
    cudaError_t e =
        cub::DeviceRadixSort::SortPairs(nullptr, need, keys_in, keys_out, vals_in, vals_out, n, 0, end_bit, c->s);
    if (e == cudaSuccess && scratch(c, need))
      e = cub::DeviceRadixSort::SortPairs(c->scratch, need, keys_in, keys_out, vals_in, vals_out, n, 0, end_bit, c->s);
    check(c, "cub::DeviceRadixSort::SortPairs", e);
  }
  void max_scan_by_key(dev::Stream* s, const uint32_t* keys, const int64_t* in, int64_t* out, uint32_t n,
                       bool inclusive, int64_t init) override {
    Timed timed(kLaunch);
    auto* c = queue_on(s);
    if (!ok(c, "scan") || !n) return;
    size_t need = 0;
    auto run = [&](void* tmp) {
      return inclusive ? cub::DeviceScan::InclusiveScanByKey(tmp, need, keys, in, out, MaxOp{}, n,
                                                             ::cuda::std::equal_to<>{}, c->s)
                       : cub::DeviceScan::ExclusiveScanByKey(tmp, need, keys, in, out, MaxOp{}, init, n,
                                                             ::cuda::std::equal_to<>{}, c->s);
    };
    cudaError_t e = run(nullptr);
    if (e == cudaSuccess && scratch(c, need)) e = run(c->scratch);
    check(c, "cub::DeviceScan::ScanByKey", e);
  }
  bool signals() const override { return signals_; }
  void launch_fused(dev::Stream* s, const dev::FusedStep* steps, uint32_t count, uint32_t n, const uint32_t* order,
                    bool signal) override {
    Timed timed(kLaunch);
    auto* c = static_cast<CudaStream*>(s);
    if (c->ring_inflight) ring_settle(c);
    const bool hold = n && can_hold(c) && c->held_phase == 0;
    if (!hold) flush_held(c);
    c->armed = false;
    signal = signal && signals_ && c->done_dev;
    if (!n) return;
    auto alone = [&](const dev::FusedStep& f) {
      if (f.per_packet)
        launch_one(c, *f.kernel, f.params, n * f.per_packet, nullptr);
      else
        launch_one(c, *f.kernel, f.params, n, order);
    };
    // one kernel for as many steps as fit in its parameters, in order, with
    // at most one split step (of at most a block's threads per packet)
    for (uint32_t j = 0; j < count;) {
      FusedArgs a;
      size_t off = 0;
      uint32_t k = j;
      for (; k < count && a.count < FusedArgs::kMaxSteps; ++k) {
        const uint32_t per = steps[k].per_packet;
        if (per && (per > FusedArgs::kBlock || a.split < a.count || !fuse_split_)) break;
        size_t at = (off + 15) & ~size_t(15);
        if (at + steps[k].size > FusedArgs::kBytes) break;
        if (!ok(c, steps[k].kernel->name)) return;
        cudaError_t e = step_device_fn(steps[k].kernel->name, &a.fn[a.count]);
        if (e != cudaSuccess) return check(c, steps[k].kernel->name, e);
        std::memcpy(a.params + at, steps[k].params, steps[k].size);
        if (per) a.split = a.count, a.per = per;
        a.off[a.count++] = uint16_t(at);
        off = at + steps[k].size;
      }
      if (k == j) {  // too large a split, or parameters that alone do not fit: launched by itself
        if (hold) flush_held(c);
        c->busy = true;
        c->recorded_all = false;
        alone(steps[j]);
        ++j;
        continue;
      }
      const bool mark = signal && k == count;  // the last kernel marks the end
      if (mark) a.done = c->done_dev, a.blocks = c->blocks, a.seq = ++c->seq;
      // The whole launch, alone on its stream, marking its end: the
      // persistent kernel takes it from the ring (no driver call) when it runs.
      if (hold && j == 0 && k == count) {  // the whole launch in one kernel: held for the ring
        std::memcpy(static_cast<void*>(c->ring_args), &a, sizeof a);
        c->held.push_back({CudaStream::Held::kFused, nullptr, nullptr, 0, n, order, off, mark});
        c->held_phase = 1;
        if (mark) --c->seq;  // (given out again when it is issued)
        return;
      }
      if (hold) flush_held(c);
      c->busy = true;
      c->recorded_all = false;
      if (a.count == 1 && a.split == 0 && !mark) {
        alone(steps[j]);
      } else {
        cudaError_t e = cuda::launch_fused(a, n, order, c->s);
        check(c, "fused steps", e);
        c->armed = mark && e == cudaSuccess && !c->failed;
      }
      j = k;
    }
  }
  // (the persistent kernel's ring is not ordered with the streams)
  bool orders_streams() const override { return ring_blocks_ == 0; }
  void follow(dev::Stream* s, dev::Stream* after) override {
    auto* c = static_cast<CudaStream*>(s);
    auto* a = static_cast<CudaStream*>(after);
    if (c->failed || !c->s || a->failed || !a->s) return;  // (a failed stream's work is redone by its owner)
    if (!a->order_ev) check(c, "cudaEventCreate", cudaEventCreateWithFlags(&a->order_ev, cudaEventDisableTiming));
    if (c->failed) return;
    check(c, "cudaEventRecord", cudaEventRecord(a->order_ev, a->s));
    if (!c->failed) check(c, "cudaStreamWaitEvent", cudaStreamWaitEvent(c->s, a->order_ev, 0));
  }
  void record(dev::Stream* s) override {
    Timed timed(kRecord);
    auto* c = static_cast<CudaStream*>(s);
    c->recorded = true;
    c->recorded_all = true;
    if (!c->held.empty()) {
      if (c->failed) {  // (never issued: the stream reports its failure)
        c->held.clear();
        c->held_phase = 0;
      } else if (c->held_phase >= 1 && submit_program(c)) {
        c->signalled = true;
        c->armed = false;
        c->quiet_polls = 0;
        return;
      } else {
        flush_held(c);
      }
    }
    c->signalled = c->armed;
    c->armed = false;
    c->quiet_polls = 0;
    if (c->signalled) return;  // the kernel marks the end
    if (c->ev && c->s) check(c, "cudaEventRecord", cudaEventRecord(c->ev, c->s));
  }
  dev::Status poll(dev::Stream* s, std::string& err) override {
    Timed timed(kPoll);
    auto* c = static_cast<CudaStream*>(s);
    if (c->recorded && c->signalled && !c->failed) {
      if (marked(c)) return finish(c, err);
      // a kernel that faults never marks: the driver is asked now and then
      if (++c->quiet_polls % 64) return dev::Status::Pending;
      if (c->ring_inflight) {
        if (ring_alive(c)) return dev::Status::Pending;
        return finish(c, err);
      }
      cudaError_t e = cudaStreamQuery(c->s);
      if (e == cudaErrorNotReady) return dev::Status::Pending;
      if (e != cudaSuccess)
        fail(c, "kernel", e);
      else if (!marked(c))
        fail_text(c, "the kernel ended without its completion mark");
      return finish(c, err);
    }
    if (c->recorded && c->ev && !c->signalled) {
      cudaError_t e = cudaEventQuery(c->ev);
      if (e == cudaErrorNotReady) return dev::Status::Pending;
      if (e != cudaSuccess) fail(c, "kernel or copy", e);
    }
    return finish(c, err);
  }
  dev::Status wait(dev::Stream* s, std::string& err) override {
    Timed timed(kWait);
    auto* c = static_cast<CudaStream*>(s);
    if (c->recorded && c->signalled && !c->failed && c->ring_inflight) {
      ring_wait(c, err);
    } else if (c->recorded && c->signalled && !c->failed) {
      cudaError_t e = cudaStreamSynchronize(c->s);
      if (e != cudaSuccess)
        fail(c, "kernel", e);
      else if (!marked(c))
        fail_text(c, "the kernel ended without its completion mark");
    } else if (c->recorded && c->ev && !c->signalled) {
      cudaError_t e = cudaEventSynchronize(c->ev);
      if (e != cudaSuccess) fail(c, "kernel or copy", e);
    }
    return finish(c, err);
  }
  void reset(dev::Stream* s) override {
    auto* c = static_cast<CudaStream*>(s);
    c->failed = false;
    c->error.clear();
    c->held.clear();
    c->held_phase = 0;
  }

 private:
  // ---- the persistent kernel (SHOAL_CUDA_PERSISTENT=blocks per
  // multiprocessor, 0: off). A stream's work up to record() that is copies
  // in from pinned memory, one fused launch and copies out to pinned memory
  // (an aggregate, copied or zero-copy) is held, then put as a program on a
  // ring in mapped host memory (work_ring.hh) that the kernel's blocks take
  // from: no driver call per aggregate. It leaves room for ordinary launches
  // (a block per multiprocessor, or half of them). Calls that wait for the whole
  // device (cudaFree and the other allocation calls) drain it first (Quiet);
  // the next ring launch starts it again.
  // Every device's persistent kernel in the process, drained (a cudaFree
  // for one device waits for another's kernel too); one Quiet at a time.
  class Quiet {
   public:
    explicit Quiet(CudaDevice&) : g_(quiet_mu()) {
      for (CudaDevice* d : ring_devices()) {
        l_.emplace_back(d->ring_mu_);
        d->ring_drain_locked();
      }
    }

   private:
    std::lock_guard<std::mutex> g_;
    std::vector<std::unique_lock<std::shared_mutex>> l_;
  };
  static std::mutex& quiet_mu() {
    static std::mutex m;
    return m;
  }
  static std::vector<CudaDevice*>& ring_devices() {  // (under quiet_mu)
    static std::vector<CudaDevice*> v;
    return v;
  }
  void ring_setup() {
    const char* e = std::getenv("SHOAL_CUDA_PERSISTENT");
    const int want = e ? std::atoi(e) : 0;
    if (want <= 0) return;
    int per_sm = 0, sms = 0, uva = 0;
    cudaSetDevice(dev_);
    if (persistent_occupancy(&per_sm) != cudaSuccess ||
        cudaDeviceGetAttribute(&uva, cudaDevAttrUnifiedAddressing, dev_) != cudaSuccess || !uva ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev_) != cudaSuccess || per_sm < 1 ||
        resolve_step_fns() != cudaSuccess) {
      cudaGetLastError();
      std::fprintf(stderr,
                   "shoal: SHOAL_CUDA_PERSISTENT: the persistent kernel cannot run here; launches stay ordinary\n");
      return;
    }
    // room for ordinary launches: a block per multiprocessor, or half of them
    // where only one of its blocks fits
    const uint32_t blocks =
        per_sm >= 2 ? uint32_t(std::min(want, per_sm - 1)) * uint32_t(sms) : std::max(1u, uint32_t(sms) / 2);
    void* h = nullptr;
    void* hd = nullptr;
    void* d = nullptr;
    const size_t bytes = dev::work_ring_bytes(kRingSlots);
    if (cudaHostAlloc(&h, bytes, cudaHostAllocPortable | cudaHostAllocMapped) != cudaSuccess ||
        cudaHostGetDevicePointer(&hd, h, 0) != cudaSuccess ||
        cudaMalloc(&d, 2 * sizeof(unsigned long long)) != cudaSuccess ||
        cudaStreamCreateWithFlags(&ring_work_, cudaStreamNonBlocking) != cudaSuccess ||
        cudaStreamCreateWithFlags(&ring_watch_, cudaStreamNonBlocking) != cudaSuccess) {
      cudaGetLastError();
      std::fprintf(stderr, "shoal: SHOAL_CUDA_PERSISTENT: no memory for the persistent kernel's ring\n");
      if (h) cudaFreeHost(h);
      if (d) cudaFree(d);
      return;
    }
    std::memset(h, 0, bytes);
    ring_host_ = h;
    ring_dev_ = static_cast<unsigned long long*>(d);
    ring_hv_ = dev::work_ring_view(h, kRingSlots, nullptr, nullptr);
    ring_dv_ = dev::work_ring_view(hd, kRingSlots, ring_dev_, ring_dev_ + 1);
    ring_blocks_ = blocks;
    std::lock_guard g(quiet_mu());
    ring_devices().push_back(this);
  }
  // Ends the persistent kernel once it took every item put so far (the
  // caller holds ring_mu_ exclusively: no producer is between its tickets and
  // its items).
  void ring_drain_locked() {
    if (!ring_running_) return;
    dev::ring_request_drain(ring_hv_);
    cudaError_t e = cudaStreamSynchronize(ring_work_);
    cudaError_t w = cudaStreamSynchronize(ring_watch_);
    ring_running_ = false;
    if (e != cudaSuccess || w != cudaSuccess) ring_fail(e != cudaSuccess ? e : w);
  }
  // Starts it (caller holds ring_mu_ exclusively); false when it cannot run.
  bool ring_start_locked() {
    if (ring_running_ || ring_dead_) return ring_running_;
    const unsigned long long t = __atomic_load_n(&ring_hv_.head->tail, __ATOMIC_ACQUIRE);
    const unsigned long long init[2] = {t, t};  // consumers and watcher begin at the tail
    dev::ring_clear_drain(ring_hv_);
    cudaError_t e = cudaMemcpyAsync(ring_dev_, init, sizeof init, cudaMemcpyHostToDevice, ring_work_);
    if (e == cudaSuccess) e = cudaStreamSynchronize(ring_work_);
    if (e == cudaSuccess) e = launch_persistent(ring_dv_, ring_blocks_, ring_work_, ring_watch_);
    if (e != cudaSuccess) {
      ring_fail(e);
      return false;
    }
    ring_running_ = true;
    return true;
  }
  void ring_fail(cudaError_t e) {
    if (!ring_dead_.exchange(true))
      std::fprintf(stderr, "shoal: the persistent kernel failed (%s); launches stay ordinary\n", cudaGetErrorString(e));
  }
  // Whether the persistent kernel still runs, for a stream waiting on a
  // ring launch's mark; a stream whose launch it can no longer mark fails.
  bool ring_alive(CudaStream* c) {
    cudaError_t e = cudaStreamQuery(ring_work_);
    if (marked(c)) return false;  // (asked after the query: a drain marks before the kernel ends)
    if (e == cudaErrorNotReady) return true;
    if (e != cudaSuccess) {
      fail(c, "persistent kernel", e);
      ring_fail(e);
    } else
      fail_text(c, "the persistent kernel ended without the launch's completion mark");
    return false;
  }
  // Until c's ring launch is marked (or can no longer be).
  void ring_wait(CudaStream* c, std::string& err) {
    for (uint32_t i = 1; !marked(c); ++i) {
      if (i % 256 == 0 && !ring_alive(c)) break;
      std::this_thread::yield();
    }
    finish(c, err);
  }
  // Before queuing behind a ring launch on c's stream: its end (the chain
  // never does this: it polls an aggregate done before reusing its stream).
  void ring_settle(CudaStream* c) {
    std::string err;
    if (!c->failed) ring_wait(c, err);
    c->ring_inflight = false;
  }
  CudaStream* queue_on(dev::Stream* s) {
    auto* c = static_cast<CudaStream*>(s);
    if (c->ring_inflight) ring_settle(c);
    flush_held(c);
    c->armed = false;
    c->busy = true;
    c->recorded_all = false;
    return c;
  }
  // Whether c's next operations may be held for the ring: a persistent
  // kernel, a stream with nothing of its own in flight.
  bool can_hold(const CudaStream* c) const {
    return ring_blocks_ && !ring_dead_ && c->ring_args && !c->busy && !c->failed && !c->ring_inflight;
  }
  // The stream, when a copy in (phase 0: before the launch) or out (1: after
  // it) between host memory [host, +bytes) and the device can be held: the
  // device reads and writes that memory itself only where it is pinned.
  CudaStream* holding(dev::Stream* s, int out, const void* host, size_t bytes) {
    auto* c = static_cast<CudaStream*>(s);
    if (c->ring_inflight) ring_settle(c);
    if (!can_hold(c) || (out ? c->held_phase == 0 : c->held_phase != 0) || !pinned(host, bytes)) return nullptr;
    c->armed = false;
    return c;
  }
  bool pinned(const void* p, size_t bytes) {
    const auto a = reinterpret_cast<uintptr_t>(p);
    std::shared_lock l(pinned_mu_);
    auto it = pinned_.upper_bound(a);
    if (it == pinned_.begin()) return false;
    --it;
    return a + bytes <= it->first + it->second;
  }
  // Issues c's held work as ordinary calls, in order.
  void flush_held(CudaStream* c) {
    if (c->held.empty()) return;
    std::vector<CudaStream::Held> held;
    held.swap(c->held);
    c->held_phase = 0;
    for (const CudaStream::Held& h : held) {
      c->busy = true;
      c->recorded_all = false;
      c->armed = false;
      if (c->failed) break;
      if (h.kind == CudaStream::Held::kH2d) {
        check(c, "cudaMemcpyAsync(HostToDevice)", cudaMemcpyAsync(h.dst, h.src, h.bytes, cudaMemcpyHostToDevice, c->s));
      } else if (h.kind == CudaStream::Held::kD2h) {
        check(c, "cudaMemcpyAsync(DeviceToHost)", cudaMemcpyAsync(h.dst, h.src, h.bytes, cudaMemcpyDeviceToHost, c->s));
      } else {
        FusedArgs& a = *c->ring_args;
        a.done = nullptr;
        if (h.signal) a.done = c->done_dev, a.blocks = c->blocks, a.seq = ++c->seq;
        cudaError_t e = cuda::launch_fused(a, h.n, h.order, c->s);
        check(c, "fused steps", e);
        c->armed = h.signal && e == cudaSuccess && !c->failed;
      }
    }
    held.clear();
    held.swap(c->held);  // (keeps the vector's memory)
  }
  // Puts c's held program on the ring: its copies in chunks, the launch's
  // blocks, the copies out, under consecutive tickets; its last item marks
  // it done. False when the persistent kernel cannot run (issue it as usual).
  bool submit_program(CudaStream* c) {
    if (!ring_blocks_ || ring_dead_) return false;
    Timed timed(kRing);
    FusedArgs& a = *c->ring_args;
    a.done = nullptr;  // (the ring's counter marks the end, not the launch)
    const CudaStream::Held* launch = nullptr;
    uint32_t in = 0, blocks = 0, out = 0;
    for (const CudaStream::Held& h : c->held) {
      const uint32_t chunks = uint32_t((h.bytes + kChunk - 1) / kChunk);
      if (h.kind == CudaStream::Held::kH2d) in += chunks;
      if (h.kind == CudaStream::Held::kD2h) out += chunks;
      if (h.kind == CudaStream::Held::kFused) launch = &h, blocks = fused_blocks(a, h.n);
    }
    if (!launch || !blocks) return false;
    const size_t args_bytes = (offsetof(FusedArgs, params) + launch->params_end + 15) & ~size_t(15);
    std::shared_lock l(ring_mu_);
    while (!ring_running_) {
      l.unlock();
      {
        std::unique_lock x(ring_mu_);
        if (!ring_start_locked()) return false;
      }
      l.lock();
    }
    dev::WorkItem it{};
    it.total = in + blocks + out;
    it.count = reinterpret_cast<uint64_t>(c->blocks);
    it.done = reinterpret_cast<uint64_t>(c->done_dev);
    it.mark = ++c->seq;
    uint64_t t = dev::ring_tickets(ring_hv_, it.total);
    auto put = [&](const dev::WorkItem& item) {
      for (uint32_t i = 1; !dev::ring_slot_free(ring_hv_, t); ++i) {
        if (i % 4096 == 0 && cudaStreamQuery(ring_work_) != cudaErrorNotReady) return false;
        std::this_thread::yield();
      }
      dev::ring_put(ring_hv_, t++, item);
      return true;
    };
    // (pinned host memory has one address for the host and the device:
    // ring_setup asked for unified addressing)
    auto copies = [&](CudaStream::Held::Kind kind, uint32_t wait) {
      it.kind = dev::WorkItem::kCopy;
      it.wait = wait;
      for (const CudaStream::Held& h : c->held) {
        if (h.kind != kind) continue;
        for (size_t at = 0; at < h.bytes; at += kChunk) {
          it.src = reinterpret_cast<uint64_t>(h.src) + at;
          it.dst = reinterpret_cast<uint64_t>(h.dst) + at;
          it.bytes = std::min<size_t>(kChunk, h.bytes - at);
          if (!put(it)) return false;
        }
      }
      return true;
    };
    bool alive = copies(CudaStream::Held::kH2d, 0);
    it.kind = dev::WorkItem::kLaunch;
    it.wait = in;
    it.nblocks = blocks;
    it.n = launch->n;
    it.args = c->ring_args_dev;
    it.order = reinterpret_cast<uint64_t>(launch->order);
    it.args_bytes = uint32_t(args_bytes);
    it.src = it.dst = it.bytes = 0;
    for (uint32_t b = 0; alive && b < blocks; ++b) {
      it.block = b;
      alive = put(it);
    }
    alive = alive && copies(CudaStream::Held::kD2h, in + blocks);
    c->held.clear();
    c->held_phase = 0;
    if (!alive) {
      fail_text(c, "the persistent kernel stopped taking work");
      return true;  // (the stream reports the failure)
    }
    c->ring_inflight = true;
    c->recorded_all = false;
    ring_launches_.fetch_add(1, std::memory_order_relaxed);
    return true;
  }
  static constexpr uint32_t kRingSlots = 8192;
  static constexpr size_t kChunk = 64 << 10;  // bytes of a copy per ring item
  std::shared_mutex pinned_mu_;
  std::map<uintptr_t, size_t> pinned_;  // host_alloc()'s blocks: where the device may read and write
  std::shared_mutex ring_mu_;           // shared: putting a launch; exclusive: start, drain, device-wide calls
  bool ring_running_ = false;           // (under ring_mu_)
  std::atomic<bool> ring_dead_{false};
  uint32_t ring_blocks_ = 0;  // 0: no persistent kernel
  void* ring_host_ = nullptr;
  unsigned long long* ring_dev_ = nullptr;  // next, seen
  dev::WorkRingView ring_hv_, ring_dv_;     // as the host and as the device address it
  cudaStream_t ring_work_ = nullptr, ring_watch_ = nullptr;
  std::atomic<uint64_t> ring_launches_{0};

  void launch_one(CudaStream* c, const dev::StepKernel& k, const void* params, uint32_t n, const uint32_t* order) {
    if (!ok(c, k.name) || !n) return;
    StepLauncher l = find_step(k.name);
    if (!l) {  // a step header outside kernels/steps/: never built for CUDA
      c->failed = true;
      c->error =
          std::string("step kernel ") + k.name + " is not compiled for CUDA (its header is not in kernels/steps/)";
      return;
    }
    check(c, k.name, l(params, n, order, c->s));
  }
  // At least `bytes` of scratch on c's stream (the old block freed in
  // stream order, after the work that used it).
  bool scratch(CudaStream* c, size_t bytes) {
    if (bytes <= c->scratch_cap) return true;
    bytes = std::max(bytes, c->scratch_cap * 2);
    if (c->scratch) cudaFreeAsync(c->scratch, c->s);
    c->scratch = nullptr;
    c->scratch_cap = 0;
    cudaError_t e = cudaMallocAsync(&c->scratch, bytes, c->s);
    if (e != cudaSuccess) {
      c->scratch = nullptr;
      fail(c, "cudaMallocAsync", e);
      return false;
    }
    c->scratch_cap = bytes;
    return true;
  }
  static bool marked(const CudaStream* c) { return __atomic_load_n(c->done_host, __ATOMIC_ACQUIRE) == c->seq; }
  static void fail_text(CudaStream* c, const char* what) {
    if (c->failed) return;
    c->failed = true;
    c->error = what;
  }
  static dev::Status finish(CudaStream* c, std::string& err) {
    if (!c->failed) {
      if (c->recorded_all) c->busy = c->ring_inflight = false;  // everything queued so far has ended
      return dev::Status::Done;
    }
    err = c->error;
    return dev::Status::Failed;
  }
  // Whether to queue the next operation: not after a failure; an injected
  // fault fails the stream instead.
  bool ok(CudaStream* c, const char* what) {
    if (c->failed) return false;
    if (!c->s) return false;
    if (inject_fault()) {
      c->failed = true;
      c->error = std::string("injected fault in ") + what;
      return false;
    }
    return true;
  }
  static void check(CudaStream* c, const char* what, cudaError_t e) {
    if (e != cudaSuccess) fail(c, what, e);
  }
  static void fail(CudaStream* c, const char* what, cudaError_t e) {
    if (c->failed) return;
    c->failed = true;
    c->error = std::string(what) + ": " + cudaGetErrorString(e);
  }
  int dev_;
  // SHOAL_CUDA_SIGNAL=0: completion always through events (to measure what
  // the kernels' own marks save)
  bool signals_ = [] {
    const char* e = std::getenv("SHOAL_CUDA_SIGNAL");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  // SHOAL_CUDA_FUSE_SPLIT=0 launches split steps by themselves (to measure
  // what fusing them saves)
  bool fuse_split_ = [] {
    const char* e = std::getenv("SHOAL_CUDA_FUSE_SPLIT");
    return !(e && std::strcmp(e, "0") == 0);
  }();
};

}  // namespace

std::unique_ptr<dev::Device> make_device(int dev, const dev::DeviceOptions& o, std::string& err) {
  if (compiled_steps() == 0) {
    err = "no step kernel was compiled for CUDA";
    return nullptr;
  }
  int n = device_count(err);
  if (dev >= n) {
    if (err.empty()) err = "no CUDA device " + std::to_string(dev);
    return nullptr;
  }
  cudaError_t e = cudaSetDevice(dev);
  if (e == cudaSuccess) e = cudaFree(nullptr);  // creates the context now, not on the first batch
  if (e != cudaSuccess) {
    err = std::string("cannot use CUDA device: ") + cudaGetErrorString(e);
    return nullptr;
  }
  return std::make_unique<CudaDevice>(dev, o);
}

}  // namespace shoal::cuda
