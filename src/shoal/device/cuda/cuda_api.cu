#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "shoal/device/cuda/cuda_api.hh"
#include "shoal/kernels/flowhash.hh"

namespace shoal::cuda {

namespace {
bool check(cudaError_t e, const char* what, std::string& err) {
  if (e == cudaSuccess) return true;
  err = std::string(what) + ": " + cudaGetErrorString(e);
  return false;
}

__global__ void flow_hash_kernel(const uint8_t* frames, const uint32_t* offsets, const uint32_t* lens, uint32_t n,
                                 uint32_t* out) {
  uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = k::flow_hash(frames + offsets[i], lens[i]);
}

// Frees device allocations on every exit path.
struct DevPtrs {
  void* p[4] = {};
  ~DevPtrs() {
    for (void* x : p)
      if (x) cudaFree(x);
  }
};
}  // namespace

int device_count(std::string& err) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    err = cudaGetErrorString(e);
    return 0;
  }
  if (n == 0) err = "no CUDA device";
  return n;
}

std::string device_description(int dev) {
  cudaDeviceProp p;
  if (cudaGetDeviceProperties(&p, dev) != cudaSuccess) return "unknown CUDA device";
  char tail[96];
  std::snprintf(tail, sizeof tail, " (sm_%d%d, %d SMs, %.1f GiB)", p.major, p.minor, p.multiProcessorCount,
                double(p.totalGlobalMem) / (1024.0 * 1024 * 1024));
  return std::string(p.name, strnlen(p.name, sizeof p.name)) + tail;
}

bool flow_hash_batch(int dev, const uint8_t* frames, uint64_t frames_bytes, const uint32_t* offsets,
                     const uint32_t* lens, uint32_t n, uint32_t* out, std::string& err) {
  if (!check(cudaSetDevice(dev), "cudaSetDevice", err)) return false;
  if (n == 0) return true;
  DevPtrs d;
  if (!check(cudaMalloc(&d.p[0], frames_bytes), "cudaMalloc", err) ||
      !check(cudaMalloc(&d.p[1], n * sizeof(uint32_t)), "cudaMalloc", err) ||
      !check(cudaMalloc(&d.p[2], n * sizeof(uint32_t)), "cudaMalloc", err) ||
      !check(cudaMalloc(&d.p[3], n * sizeof(uint32_t)), "cudaMalloc", err))
    return false;
  if (!check(cudaMemcpy(d.p[0], frames, frames_bytes, cudaMemcpyHostToDevice), "copy frames", err) ||
      !check(cudaMemcpy(d.p[1], offsets, n * sizeof(uint32_t), cudaMemcpyHostToDevice), "copy offsets", err) ||
      !check(cudaMemcpy(d.p[2], lens, n * sizeof(uint32_t), cudaMemcpyHostToDevice), "copy lengths", err))
    return false;
  uint32_t threads = 256, blocks = (n + threads - 1) / threads;
  flow_hash_kernel<<<blocks, threads>>>(static_cast<const uint8_t*>(d.p[0]), static_cast<const uint32_t*>(d.p[1]),
                                        static_cast<const uint32_t*>(d.p[2]), n, static_cast<uint32_t*>(d.p[3]));
  if (!check(cudaGetLastError(), "flow_hash_kernel launch", err)) return false;
  if (!check(cudaDeviceSynchronize(), "flow_hash_kernel", err)) return false;
  return check(cudaMemcpy(out, d.p[3], n * sizeof(uint32_t), cudaMemcpyDeviceToHost), "copy hashes", err);
}

}  // namespace shoal::cuda
