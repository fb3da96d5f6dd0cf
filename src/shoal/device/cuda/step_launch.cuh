// The CUDA side of step kernels: a __global__ wrapper for each step's
// run(params, i), and the registry the CUDA device launches them from, by
// name. The build includes every kernels/steps/ header in one generated
// translation unit after this one, so SHOAL_STEP registers each launcher.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>

#include "shoal/kernels/step.hh"

namespace shoal::cuda {

// order: nullptr, or n packet indices in device memory (thread t runs packet order[t]).
using StepLauncher = cudaError_t (*)(const void* params, uint32_t n, const uint32_t* order, cudaStream_t s);

// Adds K's launcher under its name (static initialisation); true.
bool register_step(const char* name, StepLauncher l);
// The launcher registered under `name`, or nullptr.
StepLauncher find_step(const char* name);
// How many step kernels are compiled for CUDA (forces the generated unit
// to be linked).
int compiled_steps();

template <class K>
__global__ void step_kernel(const typename K::Params p, uint32_t n, const uint32_t* order) {
  uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < n) K::run(p, order ? order[t] : t);
}

template <class K>
cudaError_t launch_step(const void* params, uint32_t n, const uint32_t* order, cudaStream_t s) {
  constexpr uint32_t kThreads = 256;
  step_kernel<K>
      <<<(n + kThreads - 1) / kThreads, kThreads, 0, s>>>(*static_cast<const typename K::Params*>(params), n, order);
  return cudaGetLastError();
}

}  // namespace shoal::cuda
