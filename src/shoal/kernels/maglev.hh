// Maglev's consistent hashing (Eisenbud et al., NSDI 2016, section 3.4):
// a lookup table of M entries (M prime), each naming a backend; a flow's
// hash picks an entry. nf/maglev.hh fills the table.
#pragma once
#include "shoal/kernels/hd.hh"

namespace shoal::k {

constexpr uint16_t kMaglevNone = 0xffff;

struct MaglevView {
  const uint16_t* entry = nullptr;
  uint32_t size = 0;  // M; 0: no backend
};

// The backend index for a flow hash, or kMaglevNone.
SHOAL_HD uint16_t maglev_pick(const MaglevView& v, uint32_t hash) {
  return v.size ? v.entry[hash % v.size] : kMaglevNone;
}

}  // namespace shoal::k
