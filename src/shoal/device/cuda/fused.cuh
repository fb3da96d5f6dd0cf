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
__global__ void fused_kernel(const __grid_constant__ FusedArgs a, uint32_t n, const uint32_t* order) {
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= n) return;
  uint32_t i = order ? order[t] : t;
  for (uint32_t s = 0; s < a.count; ++s) a.fn[s](a.params + a.off[s], i);
}
}  // namespace

cudaError_t launch_fused(const FusedArgs& a, uint32_t n, const uint32_t* order, cudaStream_t s) {
  constexpr uint32_t kThreads = 256;
  fused_kernel<<<(n + kThreads - 1) / kThreads, kThreads, 0, s>>>(a, n, order);
  return cudaGetLastError();
}

}  // namespace shoal::cuda
