// Step kernels: an offloadable element's per-packet function, applied to
// packet i of an aggregate as `static SHOAL_HD void run(const Params&, uint32_t i)`.
// The CPU element, the host backend and CUDA all call the same function.
//
// Each step kernel lives in its own header under kernels/steps/ and names
// itself after its struct with SHOAL_STEP(Name), inside namespace shoal::k.
// That is all the registration there is: the build compiles every header
// of kernels/steps/ into the CUDA backend (a generated translation unit in
// which SHOAL_STEP also registers the kernel's launcher), and the host
// backend instantiates the step where an element launches it.
#pragma once
#include "shoal/kernels/hd.hh"

namespace shoal::k {

// The name of step kernel K (SHOAL_STEP specialises it).
template <class K>
struct StepName;

}  // namespace shoal::k

// Defined by the CUDA backend's generated translation unit to register a
// launcher for K; empty everywhere else.
#ifndef SHOAL_STEP_CUDA_REGISTER
#define SHOAL_STEP_CUDA_REGISTER(K)
#endif

#define SHOAL_STEP(K)                        \
  template <>                                \
  struct StepName<K> {                       \
    static constexpr const char* value = #K; \
  };                                         \
  SHOAL_STEP_CUDA_REGISTER(K)
