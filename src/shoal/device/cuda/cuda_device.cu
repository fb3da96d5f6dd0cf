// The CUDA backend: pinned host memory, device memory, one CUDA stream and
// one event per Stream, asynchronous copies and the step kernels launched
// from the same SHOAL_HD run() functions the host backend calls. Nothing
// here blocks the calling worker except wait().
#include <cuda_runtime.h>

#include <cstring>
#include <string>

#include "shoal/device/cuda/cuda_api.hh"
#include "shoal/device/cuda/step_launch.cuh"

namespace shoal::cuda {

namespace {

class CudaStream : public dev::Stream {
 public:
  cudaStream_t s = nullptr;
  cudaEvent_t ev = nullptr;
  bool failed = false, recorded = false;
  std::string error;
};

class CudaDevice final : public dev::Device {
 public:
  CudaDevice(int dev, const dev::DeviceOptions& o) : Device(o), dev_(dev) {}
  const char* kind() const override { return "cuda"; }
  std::string describe() const override {
    std::string s = "CUDA device " + std::to_string(dev_) + ": " + device_description(dev_);
    if (opt_.fault_rate > 0) s += ", fault injection " + std::to_string(opt_.fault_rate);
    return s;
  }
  void* host_alloc(size_t bytes) override {
    void* p = nullptr;
    cudaSetDevice(dev_);
    return cudaHostAlloc(&p, bytes ? bytes : 1, cudaHostAllocPortable | cudaHostAllocMapped) == cudaSuccess ? p
                                                                                                            : nullptr;
  }
  void host_free(void* p) override {
    if (p) cudaFreeHost(p);
  }
  void* dev_alloc(size_t bytes) override {
    void* p = nullptr;
    cudaSetDevice(dev_);
    return cudaMalloc(&p, bytes ? bytes : 1) == cudaSuccess ? p : nullptr;
  }
  void dev_free(void* p) override {
    if (p) cudaFree(p);
  }
  void* host_device_pointer(void* host) override {
    void* d = nullptr;
    return cudaHostGetDevicePointer(&d, host, 0) == cudaSuccess ? d : nullptr;
  }
  dev::Stream* stream_create() override {
    cudaSetDevice(dev_);
    auto* c = new CudaStream;
    if (cudaStreamCreateWithFlags(&c->s, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreateWithFlags(&c->ev, cudaEventDisableTiming) != cudaSuccess) {
      fail(c, "cudaStreamCreate", cudaGetLastError());
    }
    return c;
  }
  void stream_destroy(dev::Stream* s) override {
    auto* c = static_cast<CudaStream*>(s);
    if (c->s) cudaStreamSynchronize(c->s);
    if (c->ev) cudaEventDestroy(c->ev);
    if (c->s) cudaStreamDestroy(c->s);
    delete c;
  }
  void h2d(dev::Stream* s, void* dst, const void* src, size_t bytes) override {
    auto* c = static_cast<CudaStream*>(s);
    if (ok(c, "host-to-device copy") && bytes)
      check(c, "cudaMemcpyAsync(HostToDevice)", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, c->s));
  }
  void d2h(dev::Stream* s, void* dst, const void* src, size_t bytes) override {
    auto* c = static_cast<CudaStream*>(s);
    if (ok(c, "device-to-host copy") && bytes)
      check(c, "cudaMemcpyAsync(DeviceToHost)", cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, c->s));
  }
  void memset(dev::Stream* s, void* dst, int value, size_t bytes) override {
    auto* c = static_cast<CudaStream*>(s);
    if (ok(c, "memset") && bytes) check(c, "cudaMemsetAsync", cudaMemsetAsync(dst, value, bytes, c->s));
  }
  void launch(dev::Stream* s, const dev::StepKernel& k, const void* params, size_t, uint32_t n,
              const uint32_t* order) override {
    auto* c = static_cast<CudaStream*>(s);
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
  void launch_fused(dev::Stream* s, const dev::FusedStep* steps, uint32_t count, uint32_t n,
                    const uint32_t* order) override {
    auto* c = static_cast<CudaStream*>(s);
    if (!n) return;
    // one kernel for as many steps as fit in its parameters, in order
    for (uint32_t j = 0; j < count;) {
      FusedArgs a;
      size_t off = 0;
      uint32_t k = j;
      for (; k < count && a.count < FusedArgs::kMaxSteps; ++k) {
        size_t at = (off + 15) & ~size_t(15);
        if (at + steps[k].size > FusedArgs::kBytes) break;
        if (!ok(c, steps[k].kernel->name)) return;
        cudaError_t e = step_device_fn(steps[k].kernel->name, &a.fn[a.count]);
        if (e != cudaSuccess) return check(c, steps[k].kernel->name, e);
        std::memcpy(a.params + at, steps[k].params, steps[k].size);
        a.off[a.count++] = uint16_t(at);
        off = at + steps[k].size;
      }
      if (k == j) {  // a step whose parameters alone do not fit: launched by itself
        launch(s, *steps[j].kernel, steps[j].params, steps[j].size, n, order);
        ++j;
        continue;
      }
      check(c, "fused steps", cuda::launch_fused(a, n, order, c->s));
      j = k;
    }
  }
  void record(dev::Stream* s) override {
    auto* c = static_cast<CudaStream*>(s);
    c->recorded = true;
    if (c->ev && c->s) check(c, "cudaEventRecord", cudaEventRecord(c->ev, c->s));
  }
  dev::Status poll(dev::Stream* s, std::string& err) override {
    auto* c = static_cast<CudaStream*>(s);
    if (c->recorded && c->ev) {
      cudaError_t e = cudaEventQuery(c->ev);
      if (e == cudaErrorNotReady) return dev::Status::Pending;
      if (e != cudaSuccess) fail(c, "kernel or copy", e);
    }
    return finish(c, err);
  }
  dev::Status wait(dev::Stream* s, std::string& err) override {
    auto* c = static_cast<CudaStream*>(s);
    if (c->recorded && c->ev) {
      cudaError_t e = cudaEventSynchronize(c->ev);
      if (e != cudaSuccess) fail(c, "kernel or copy", e);
    }
    return finish(c, err);
  }
  void reset(dev::Stream* s) override {
    auto* c = static_cast<CudaStream*>(s);
    c->failed = false;
    c->error.clear();
  }

 private:
  static dev::Status finish(CudaStream* c, std::string& err) {
    if (!c->failed) return dev::Status::Done;
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
