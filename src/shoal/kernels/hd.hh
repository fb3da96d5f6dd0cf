// Host+device annotation for per-packet functions written once and used by the
// CPU elements, the host device backend and the CUDA kernels.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define SHOAL_HD __host__ __device__ __forceinline__
// For a large function called a few times per packet (a hash's block): one
// copy per translation unit that kernels call, not one inlined into every
// kernel and every place in it (nvcc's time and the code's size).
#define SHOAL_HD_CALL __host__ __device__ __noinline__ inline
#else
#define SHOAL_HD inline
#define SHOAL_HD_CALL inline
#endif
