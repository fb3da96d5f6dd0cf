// The CUDA side of step kernels: a __global__ wrapper for each step's
// run(params, i), and the registry the CUDA device launches them from, by
// name. The build includes every kernels/steps/ header in one generated
// translation unit after this one, so SHOAL_STEP registers each launcher.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "shoal/device/work_ring.hh"
#include "shoal/kernels/step.hh"

namespace shoal::cuda {

// order: nullptr, or n packet indices in device memory (thread t runs packet order[t]).
using StepLauncher = cudaError_t (*)(const void* params, uint32_t n, const uint32_t* order, cudaStream_t s);
// A step's run(params, i) as a device function, for fused launches.
using StepDeviceFn = void (*)(const void* params, uint32_t i);
using StepFnGetter = cudaError_t (*)(StepDeviceFn* out);

// Adds K's launcher and the getter of its device function under its name
// (static initialisation); true.
bool register_step(const char* name, StepLauncher l, StepFnGetter g);
// The launcher registered under `name`, or nullptr.
StepLauncher find_step(const char* name);
// The device address of the run() of the step registered under `name`
// (fetched once, then remembered).
cudaError_t step_device_fn(const char* name, StepDeviceFn* out);

// The steps of a fused launch: their device functions and parameters (each
// at a 16-byte aligned offset in `params`), passed by value to the kernel.
// At most one of them may be a split step (dev::FusedStep::per_packet):
// `split` is its index (kMaxSteps: none) and `per` its threads per packet.
struct FusedArgs {
  static constexpr uint32_t kMaxSteps = 8, kBytes = 3072;
  static constexpr uint32_t kBlock = 256;  // threads per block (a split step's packets share one)
  uint32_t count = 0;
  uint32_t split = kMaxSteps, per = 0;
  // Completion signalled by the kernel (Device::launch_fused's signal): the
  // last block to finish writes `seq` to `done` (host memory, mapped) after
  // every block's writes; `blocks` (device memory, zero between launches)
  // counts the finished blocks. done == nullptr: no signal.
  uint32_t* done = nullptr;
  uint32_t* blocks = nullptr;
  uint32_t seq = 0;
  StepDeviceFn fn[kMaxSteps] = {};
  uint16_t off[kMaxSteps] = {};
  alignas(16) unsigned char params[kBytes];
};
// One kernel over n packets running the steps in turn for each (defined in
// the generated unit, beside the step functions it calls).
cudaError_t launch_fused(const FusedArgs& a, uint32_t n, const uint32_t* order, cudaStream_t s);
// How many blocks launch_fused(a, n, ...) runs.
uint32_t fused_blocks(const FusedArgs& a, uint32_t n);
// The persistent kernel: `blocks` blocks on `work` taking launch blocks from
// the ring (each runs as launch_fused's block would), and its watcher on
// `watch`; both return when the ring is drained (work_ring.hh).
cudaError_t launch_persistent(const dev::WorkRingView& r, uint32_t blocks, cudaStream_t work, cudaStream_t watch);
// How many of its blocks fit on one multiprocessor.
cudaError_t persistent_occupancy(int* blocks_per_sm);
// Fetches every registered step's device function now (their first fetch is
// a synchronous copy from the device, which must not happen while the
// persistent kernel runs: it would wait for the device).
cudaError_t resolve_step_fns();
// How many step kernels are compiled for CUDA (forces the generated unit
// to be linked).
int compiled_steps();

template <class K>
__global__ void step_kernel(const typename K::Params p, uint32_t n, const uint32_t* order) {
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) K::run(p, order ? order[t] : t);
}

template <class K>
__device__ void step_erased(const void* params, uint32_t i) {
  K::run(*static_cast<const typename K::Params*>(params), i);
}
// K's device function's address, a device variable's initial value, read
// from the host (CUDA's way to a device function's address: only device
// code knows it). Not taken by a kernel: whole-program ptxas gives every
// kernel that takes or calls through a function's address its own copy of
// every such function, and a one-thread kernel per step taking its address
// had made 31 copies of the 28 step functions (a 28 MB cubin, 280 s of
// ptxas); now the three kernels that call through them have them (3.4 MB,
// 25 s).
template <class K>
__device__ StepDeviceFn step_fn_addr = &step_erased<K>;
template <class K>
cudaError_t get_step_fn(StepDeviceFn* out) {
  return cudaMemcpyFromSymbol(out, step_fn_addr<K>, sizeof *out);
}

template <class K>
cudaError_t launch_step(const void* params, uint32_t n, const uint32_t* order, cudaStream_t s) {
  constexpr uint32_t kThreads = 256;
  step_kernel<K>
      <<<(n + kThreads - 1) / kThreads, kThreads, 0, s>>>(*static_cast<const typename K::Params*>(params), n, order);
  return cudaGetLastError();
}

}  // namespace shoal::cuda
