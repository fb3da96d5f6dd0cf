// Host-side construction of the IPv6 binary-search-on-lengths tables.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/kernels/lpm6.hh"

namespace shoal::k {

struct Prefix6 {
  uint64_t hi, lo;  // masked to len
  uint8_t len;      // 0-128
  int32_t nexthop;
};

class Lpm6Table {
 public:
  // Duplicate prefixes: the last wins.
  void build(const std::vector<Prefix6>& routes);
  Lpm6View view() const {
    return {uint32_t(lens_.size()), lens_.data(), base_.data(), mask_.data(), slots_.data(), dflt_};
  }
  size_t memory_bytes() const { return slots_.size() * sizeof(Lpm6Slot); }
  size_t markers() const { return markers_; }

 private:
  std::vector<uint8_t> lens_;
  std::vector<uint32_t> base_, mask_;
  std::vector<Lpm6Slot> slots_;
  int32_t dflt_ = -1;
  size_t markers_ = 0;
};

// A linear scan: the oracle for tests.
int32_t lpm6_linear(const std::vector<Prefix6>& routes, uint64_t hi, uint64_t lo);

}  // namespace shoal::k
