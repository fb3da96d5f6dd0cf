// Maglev's lookup table (Eisenbud et al., "Maglev: A Fast and Reliable
// Software Network Load Balancer", NSDI 2016, section 3.4). Each backend has
// a permutation of the M entries, fixed by two hashes of its name (offset and
// skip); backends take turns claiming their next preferred free entry until
// the table is full. So every backend holds M/N entries, give or take one,
// and adding or removing one backend moves few entries of the others: the
// table changes little when the backend set does.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/kernels/maglev.hh"

namespace shoal::nf {

bool is_prime(uint64_t n);

class MaglevTable {
 public:
  // Fills a table of `size` entries (a prime, larger than the number of
  // backends) for `names` (distinct). False with err otherwise.
  bool build(const std::vector<std::string>& names, uint32_t size, std::string& err);
  k::MaglevView view() const { return {entry_.data(), uint32_t(entry_.size())}; }
  const std::vector<uint16_t>& entries() const { return entry_; }
  const std::vector<std::string>& names() const { return names_; }
  // Entries each backend holds, in names() order.
  std::vector<uint32_t> counts() const;
  // The share of entries that name a different backend than in `o` (same size).
  double changed(const MaglevTable& o) const;

 private:
  std::vector<uint16_t> entry_;
  std::vector<std::string> names_;
};

}  // namespace shoal::nf
