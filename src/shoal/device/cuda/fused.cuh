// Fused launches (Device::launch_fused): one kernel whose threads run a
// chain's per-packet steps in turn for their packet, calling each step's
// run() through its device function pointer. Included once, at the end of
// the generated unit that compiles every step (so the pointers and this
// kernel belong to one module). Parameters stay in the kernel's constant
// parameter space (__grid_constant__: no per-thread copy).
#pragma once
#include "shoal/device/cuda/step_launch.cuh"
#include "shoal/device/work_ring.hh"

namespace shoal::cuda {

namespace {
// The last of a launch's `nblocks` blocks to get here writes the completion
// mark, after every thread's writes (to host memory too) are visible to the
// host.
__device__ void signal_done(const FusedArgs& a, uint32_t nblocks) {
  if (!a.done) return;
  __threadfence_system();
  __syncthreads();
  if (threadIdx.x == 0 && atomicAdd(a.blocks, 1u) == nblocks - 1) {
    __threadfence_system();
    *a.blocks = 0;  // (for the stream's next signalled launch)
    *reinterpret_cast<volatile uint32_t*>(a.done) = a.seq;
  }
}

// Block `block` of a fused launch over n packets: its threads run the steps
// in turn for their packet.
__device__ void fused_block(const FusedArgs& a, uint32_t n, const uint32_t* order, uint32_t block) {
  uint32_t t = block * FusedArgs::kBlock + threadIdx.x;
  if (threadIdx.x < FusedArgs::kBlock && t < n) {
    uint32_t i = order ? order[t] : t;
    for (uint32_t s = 0; s < a.count; ++s) a.fn[s](a.params + a.off[s], i);
  }
}

// With a split step: a block takes kBlock / per packets. Its first threads
// run the steps before the split one (a thread per packet), then every
// thread its part of the split step, then the first ones the steps after
// it; the block's barriers order the three for each packet, and its threads
// see one another's global writes across them.
__device__ void fused_split_block(const FusedArgs& a, uint32_t n, const uint32_t* order, uint32_t block) {
  const uint32_t ppb = FusedArgs::kBlock / a.per, base = block * ppb, tid = threadIdx.x;
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
}

__global__ void fused_kernel(const __grid_constant__ FusedArgs a, uint32_t n, const uint32_t* order) {
  fused_block(a, n, order, blockIdx.x);
  signal_done(a, gridDim.x);
}

__global__ void fused_split_kernel(const __grid_constant__ FusedArgs a, uint32_t n, const uint32_t* order) {
  fused_split_block(a, n, order, blockIdx.x);
  signal_done(a, gridDim.x);
}

// The persistent kernel (launch_persistent): each block takes items from
// the work ring until a drain ends it: a chunk of a copy (all threads), or
// a block of a fused launch, which runs as launch_fused's block would. A
// launch's arguments are read from mapped host memory into shared memory
// once per item, so the steps' parameter reads do not cross the bus.
__global__ void __launch_bounds__(FusedArgs::kBlock) persistent_kernel(dev::WorkRingView r) {
  __shared__ dev::WorkItem it;
  __shared__ unsigned long long ticket;
  __shared__ bool go;
  __shared__ __align__(16) unsigned char raw[sizeof(FusedArgs)];
  const FusedArgs& a = *reinterpret_cast<const FusedArgs*>(raw);
  constexpr uint32_t kItemLoads = sizeof(dev::WorkItem) / 16;
  for (;;) {
    if (threadIdx.x == 0) go = dev::ring_claim(r, ticket);
    __syncthreads();
    if (!go) return;
    // the item, 16 bytes a thread (a load across the bus each, in parallel),
    // read again from memory, not from a line an earlier item left in L1
    if (threadIdx.x < kItemLoads)
      reinterpret_cast<uint4*>(&it)[threadIdx.x] =
          __ldcv(reinterpret_cast<const uint4*>(&r.items[ticket & r.mask]) + threadIdx.x);
    __syncthreads();
    if (threadIdx.x == 0) {
      dev::ring_release(r, ticket);
      dev::ring_wait_deps(it);
    }
    __syncthreads();
    if (it.kind == dev::WorkItem::kCopy) {
      dev::ring_copy(threadIdx.x, blockDim.x, reinterpret_cast<const unsigned char*>(it.src),
                     reinterpret_cast<unsigned char*>(it.dst), it.bytes);
    } else {
      const uint4* src = reinterpret_cast<const uint4*>(it.args);
      uint4* dst = reinterpret_cast<uint4*>(raw);
      for (uint32_t k = threadIdx.x; k < it.args_bytes / 16; k += blockDim.x) dst[k] = __ldcv(src + k);
      __syncthreads();
      const uint32_t* order = reinterpret_cast<const uint32_t*>(it.order);
      if (a.split < a.count)
        fused_split_block(a, it.n, order, it.block);
      else
        fused_block(a, it.n, order, it.block);
    }
    __threadfence_system();  // (this item's writes before the counter says it ended)
    __syncthreads();
    if (threadIdx.x == 0) dev::ring_finish(it);
    __syncthreads();  // (before the next item overwrites `it` and the arguments)
  }
}

__global__ void watch_kernel(dev::WorkRingView r) {
  if (threadIdx.x == 0 && blockIdx.x == 0) dev::ring_watch(r);
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

uint32_t fused_blocks(const FusedArgs& a, uint32_t n) {
  const uint32_t ppb = a.split < a.count ? FusedArgs::kBlock / a.per : FusedArgs::kBlock;
  return (n + ppb - 1) / ppb;
}

cudaError_t persistent_occupancy(int* blocks_per_sm) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, persistent_kernel, FusedArgs::kBlock, 0);
}

cudaError_t launch_persistent(const dev::WorkRingView& r, uint32_t blocks, cudaStream_t work, cudaStream_t watch) {
  watch_kernel<<<1, 32, 0, watch>>>(r);
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) return e;
  persistent_kernel<<<blocks, FusedArgs::kBlock, 0, work>>>(r);
  return cudaGetLastError();
}

}  // namespace shoal::cuda
