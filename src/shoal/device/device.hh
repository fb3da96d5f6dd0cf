// The device layer: buffers, streams, asynchronous copies, kernel launches
// and completion polling, behind one interface with two backends.
//   host: the step kernels on CPU threads. Every operation is queued on its
//         stream and runs later on a pool thread, in stream order, so an
//         aggregate really completes after the worker moved on (and, with
//         delays injected, aggregates finish out of order).
//   cuda: the CUDA runtime (cuda/cuda_device.cu), compiled whenever nvcc is.
// Both can inject faults (an operation fails, its stream reports it) so the
// CPU fallback is tested without a broken GPU.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "shoal/kernels/step.hh"

namespace shoal {

struct DeviceChoice {
  std::string kind;    // "host" or "cuda"
  std::string detail;  // what was found, or why the host backend was taken
};

// "auto": CUDA when a usable GPU is present, else host. "cuda" fails with err
// when none is usable. "host" always succeeds.
bool select_device(const std::string& want, DeviceChoice& out, std::string& err);
bool cuda_compiled();

namespace dev {

// A step kernel as the backends see it: its name, and its run(params, i)
// for i in [begin, end) on the host (thread t runs packet order[t] when an
// order is given: GASPP's packet scheduling). step_kernel<K>() gives the
// one for kernels/steps/ struct K; the CUDA backend finds its launcher by
// name.
struct StepKernel {
  const char* name;
  void (*host_run)(const void* params, const uint32_t* order, uint32_t begin, uint32_t end);
};
template <class K>
void host_run_step(const void* params, const uint32_t* order, uint32_t begin, uint32_t end) {
  const auto& p = *static_cast<const typename K::Params*>(params);
  if (order)
    for (uint32_t t = begin; t < end; ++t) K::run(p, order[t]);
  else
    for (uint32_t i = begin; i < end; ++i) K::run(p, i);
}
template <class K>
const StepKernel& step_kernel() {
  static constexpr StepKernel s{k::StepName<K>::value, &host_run_step<K>};
  return s;
}

// One step of a fused launch (Device::launch_fused): a kernel and its
// parameters. `per_packet` > 0 makes it a split step: it runs over
// n * per_packet threads (thread t works on the packet at position
// t / per_packet and looks it up through the order itself), after the
// steps before it finished with that packet and before those after it
// start on it.
struct FusedStep {
  const StepKernel* kernel;
  const void* params;
  size_t size;
  uint32_t per_packet = 0;
};

struct DeviceOptions {
  std::string kind = "auto";  // auto, host, cuda
  uint32_t host_threads = 0;  // host backend pool (0: min(4, cores))
  uint32_t delay_us = 0;      // host backend: each operation waits a random 0..delay_us first
  double fault_rate = 0;      // any backend: this fraction of operations fail (tests)
  size_t memory_limit = 0;    // host backend: bytes of device memory (0: unlimited; tests)
  uint64_t seed = 1;
};

enum class Status : uint8_t { Pending, Done, Failed };

// A backend's in-order queue of operations.
class Stream {
 public:
  virtual ~Stream() = default;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const char* kind() const = 0;
  virtual std::string describe() const = 0;

  // Host memory the device copies from and to (pinned under CUDA), and
  // device memory. nullptr when none is left.
  virtual void* host_alloc(size_t bytes) = 0;
  virtual void host_free(void* p) = 0;
  virtual void* dev_alloc(size_t bytes) = 0;
  virtual void dev_free(void* p) = 0;
  // Where kernels reach host memory from host_alloc() in place (zero-copy:
  // their loads and stores cross the bus themselves); nullptr where they
  // cannot.
  virtual void* host_device_pointer(void* host) = 0;

  virtual Stream* stream_create() = 0;
  virtual void stream_destroy(Stream* s) = 0;

  // Queued on the stream, in order; they return before the work is done.
  // A failure (now, or when the work runs) makes poll() report Failed until
  // reset(); later operations on a failed stream are skipped.
  virtual void h2d(Stream* s, void* dst, const void* src, size_t bytes) = 0;
  virtual void d2h(Stream* s, void* dst, const void* src, size_t bytes) = 0;
  virtual void memset(Stream* s, void* dst, int value, size_t bytes) = 0;
  // Runs kernel k's run(params, i) for i in [0, n). params is copied. With
  // `order` (device memory, n entries), thread t runs packet order[t].
  virtual void launch(Stream* s, const StepKernel& k, const void* params, size_t params_size, uint32_t n,
                      const uint32_t* order = nullptr) = 0;
  // Runs the steps over the same n packets as one launch where the backend
  // can: each thread runs every step's run() for its packet, in turn (CUDA:
  // one kernel calling them through device function pointers). Only for
  // per-packet kernels: none may read another packet's results of an
  // earlier one; a split step (FusedStep::per_packet) may divide its
  // packet's work among threads. The default launches them one after
  // another.
  //
  // With `signal` (only where signals() says so, and only as the last
  // operation before record(): for work whose results the kernels write in
  // host memory, zero-copy), the kernel marks the stream's work done itself
  // as its last block finishes (a word in host memory), so record() and
  // poll() make no driver call.
  virtual void launch_fused(Stream* s, const FusedStep* steps, uint32_t count, uint32_t n,
                            const uint32_t* order = nullptr, bool signal = false);
  // Collective operations over n items in device memory, queued in stream
  // order like the rest (CUB on CUDA, its scratch memory kept per stream; the
  // host backend computes the same results on a pool thread).
  // Sorts (key, value) pairs by bits [0, end_bit) of the key, stably: pairs
  // of equal keys keep their order. The outputs must not overlap the inputs.
  virtual void sort_pairs(Stream* s, const uint64_t* keys_in, uint64_t* keys_out, const uint32_t* vals_in,
                          uint32_t* vals_out, uint32_t n, int end_bit) = 0;
  // A max-scan within each run of equal consecutive keys: out[i] is the
  // largest in[j] of i's run before i, or `init` at the run's head
  // (exclusive), or the largest up to and with i (inclusive; init unused).
  // out must not overlap in.
  virtual void max_scan_by_key(Stream* s, const uint32_t* keys, const int64_t* in, int64_t* out, uint32_t n,
                               bool inclusive, int64_t init) = 0;
  // Whether launch_fused(..., signal) can mark completion from the kernel.
  virtual bool signals() const { return false; }
  // Launches a persistent kernel took from its ring instead of the driver
  // (CUDA with SHOAL_CUDA_PERSISTENT; 0 elsewhere).
  virtual uint64_t ring_launches() const { return 0; }
  // Orders two streams: what is queued on s from now on starts only after
  // everything queued on `after` so far has finished (or been skipped
  // after a failure: a failure does not cross over). Only where
  // orders_streams() says so (CUDA: an event and cudaStreamWaitEvent; not
  // with the persistent kernel's ring, which is not ordered with streams).
  virtual bool orders_streams() const { return false; }
  virtual void follow(Stream* s, Stream* after);
  // Marks the end of what was queued so far; poll() reports on it.
  virtual void record(Stream* s) = 0;
  // Never blocks: Done when everything up to the last record() finished.
  virtual Status poll(Stream* s, std::string& err) = 0;
  // Blocks until poll() would not say Pending.
  virtual Status wait(Stream* s, std::string& err) = 0;
  // Clears a failure so the stream can be used again.
  virtual void reset(Stream* s) = 0;

  // Synchronous upload of a read-only table; false with err on failure.
  bool upload(void* dst, const void* src, size_t bytes, std::string& err);

  // Operations so far (all streams) and injected failures.
  uint64_t operations() const { return ops_.load(std::memory_order_relaxed); }
  uint64_t injected_faults() const { return injected_.load(std::memory_order_relaxed); }
  const DeviceOptions& options() const { return opt_; }

 protected:
  explicit Device(const DeviceOptions& o) : opt_(o) {}
  // Counts an operation; true when fault injection makes it fail.
  bool inject_fault();
  DeviceOptions opt_;

 private:
  std::atomic<uint64_t> ops_{0}, injected_{0};
};

// Opens the backend `o.kind` names ("auto" as select_device). `detail` says
// what was taken and why.
std::shared_ptr<Device> open_device(const DeviceOptions& o, std::string& detail, std::string& err);
std::unique_ptr<Device> make_host_device(const DeviceOptions& o);

}  // namespace dev
}  // namespace shoal
