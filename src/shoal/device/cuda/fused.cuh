// Fused launches (Device::launch_fused): one kernel whose threads run a
// chain's per-packet steps in turn for their packet, calling each step's
// run() through its device function pointer. Included once, at the end of
// the generated unit that compiles every step (so the pointers and this
// kernel belong to one module). Parameters stay in the kernel's constant
// parameter space (__grid_constant__: no per-thread copy).
#pragma once
#include "shoal/device/cuda/step_launch.cuh"

namespace shoal::cuda {

namespace {
// The last block to get here writes the completion mark, after every
// thread's writes (to host memory too) are visible to the host.
__device__ void signal_done(const FusedArgs& a) {
  if (!a.done) return;
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(a.blocks, 1u) == gridDim.x - 1) {
    __threadfence_system();
    *a.blocks = 0;  // (for the stream's next signalled launch)
    *reinterpret_cast<volatile uint32_t*>(a.done) = a.seq;
  }
}

__global__ void fused_kernel(const __grid_constant__ FusedArgs a, uint32_t n, const uint32_t* order) {
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) {
    uint32_t i = order ? order[t] : t;
    for (uint32_t s = 0; s < a.count; ++s) a.fn[s](a.params + a.off[s], i);
  }
  signal_done(a);
}

// With a split step: a block takes blockDim.x / per packets. Its first
// threads run the steps before the split one (a thread per packet), then
// every thread its part of the split step, then the first ones the steps
// after it; the block's barriers order the three for each packet, and its
// threads see one another's global writes across them.
__global__ void fused_split_kernel(const __grid_constant__ FusedArgs a, uint32_t n, const uint32_t* order) {
  const uint32_t ppb = blockDim.x / a.per, base = blockIdx.x * ppb, tid = threadIdx.x;
  const bool mine = tid < ppb && base + tid < n;
  const uint32_t i = mine ? (order ? order[base + tid] : base + tid) : 0;
  if (mine)
    for (uint32_t s = 0; s < a.split; ++s) a.fn[s](a.params + a.off[s], i);
  __syncthreads();
  const uint32_t pk = base + tid / a.per;
  if (tid < ppb * a.per && pk < n) a.fn[a.split](a.params + a.off[a.split], pk * a.per + tid % a.per);
  __syncthreads();
  if (mine)
    for (uint32_t s = a.split + 1; s < a.count; ++s) a.fn[s](a.params + a.off[s], i);
  signal_done(a);
}
}  // namespace

cudaError_t launch_fused(const FusedArgs& a, uint32_t n, const uint32_t* order, cudaStream_t s) {
  constexpr uint32_t kThreads = FusedArgs::kBlock;
  if (a.split < a.count) {
    const uint32_t ppb = kThreads / a.per;  // (per <= kThreads: the caller's rule)
    fused_split_kernel<<<(n + ppb - 1) / ppb, ppb * a.per, 0, s>>>(a, n, order);
  } else {
    fused_kernel<<<(n + kThreads - 1) / kThreads, kThreads, 0, s>>>(a, n, order);
  }
  return cudaGetLastError();
}

}  // namespace shoal::cuda
