// What the device flow table's tests share with the CPU table's.
#pragma once
#include <cstdint>

#include "shoal/flow/flowtable.hh"

namespace shoal::test {

// A table of `capacity` flows whose timeouts (0.3 to 5 s, a different one
// per class) let flows come and go over a few simulated seconds, with exact
// expiry (the device table's is).
inline flow::Config short_timeouts(uint32_t capacity) {
  flow::Config c;
  c.capacity = capacity;
  c.granularity_ns = 0;
  const uint64_t ms = 1000000;
  const uint64_t timeouts[k::kFlowClasses] = {900 * ms,  1200 * ms, 5000 * ms, 1500 * ms, 1800 * ms,
                                              700 * ms,  400 * ms,  300 * ms,  2000 * ms, 4000 * ms,
                                              1000 * ms, 3000 * ms, 2500 * ms, 2500 * ms};
  for (int i = 0; i < k::kFlowClasses; ++i) c.timeouts.ns[i] = timeouts[i];
  return c;
}

}  // namespace shoal::test
