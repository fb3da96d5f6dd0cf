// 32-bit atomics for per-packet functions that several threads of one
// launch update together: CUDA's atomics on the device, the compiler's on
// the host backend's threads and the CPU.
#pragma once
#include <cstdint>

#include "shoal/kernels/hd.hh"

namespace shoal::k {

SHOAL_HD uint32_t atomic_add32(uint32_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  return atomicAdd(p, v);
#else
  return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
#endif
}
SHOAL_HD void atomic_xor32(uint32_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  atomicXor(p, v);
#else
  __atomic_fetch_xor(p, v, __ATOMIC_RELAXED);
#endif
}
SHOAL_HD void atomic_or32(uint32_t* p, uint32_t v) {
#if defined(__CUDA_ARCH__)
  atomicOr(p, v);
#else
  __atomic_fetch_or(p, v, __ATOMIC_RELAXED);
#endif
}

}  // namespace shoal::k
