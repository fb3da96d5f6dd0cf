// Host-side construction of the DIR-24-8 tables from a route list. Routes
// are rebuilt into fresh tables on change, so readers keep using the old
// tables until an atomic swap (see IPRouteTable).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shoal/kernels/lpm4.hh"

namespace shoal::k {

struct Prefix4 {
  uint32_t addr;     // host order, masked to len
  uint8_t len;       // 0-32
  uint16_t nexthop;  // what the lookup returns for it
};

class Lpm4Table {
 public:
  static constexpr uint32_t kMaxNexthops = 0x7ffe;  // next hop + 1 fits 15 bits
  static constexpr uint32_t kMaxGroups = 0x8000;
  // Builds from prefixes; any number of them. Duplicate prefixes: the last
  // wins. False with err when a limit is exceeded (next hop numbers, or /24
  // blocks holding longer prefixes).
  bool build(const std::vector<Prefix4>& routes, std::string& err);
  Lpm4View view() const { return {tbl24_.get(), tbl8_.data()}; }
  size_t groups() const { return tbl8_.size() / 256; }
  size_t memory_bytes() const { return (size_t(1) << 24) * 2 + tbl8_.size() * 2; }

 private:
  // tbl24 is 32 MiB read at random: it lives on 2 MiB pages where the
  // kernel gives them (transparent huge pages), so lookups do not miss the TLB.
  struct Unmap {
    void operator()(uint16_t* p) const;
  };
  std::unique_ptr<uint16_t[], Unmap> tbl24_;
  std::vector<uint16_t> tbl8_;
};

inline uint32_t prefix_mask(uint8_t len) { return len == 0 ? 0 : ~uint32_t(0) << (32 - len); }

}  // namespace shoal::k
