// Host+device annotation for per-packet functions written once and used by the
// CPU elements, the host device backend and the CUDA kernels.
#pragma once
#include <cstdint>

#if defined(__CUDACC__)
#define SHOAL_HD __host__ __device__ __forceinline__
#else
#define SHOAL_HD inline
#endif
