// The DSCP argument and handler that SetIPDSCP and SetIP6DSCP share.
#pragma once
#include <fmt/format.h>

#include <stdexcept>

#include "shoal/elements/common.hh"

namespace shoal {

// DSCP, 0-63, the element's one (mandatory) argument.
inline uint8_t read_dscp_arg(Args& a) {
  uint32_t dscp = 0;
  a.read_mp("DSCP", dscp);
  a.complete();
  if (dscp > 63) a.fail(fmt::format("DSCP: {} is not 0-63", dscp));
  return uint8_t(dscp);
}

// The `dscp` handler, read and written, over the element's value.
inline void add_dscp_handler(Element& e, uint8_t& dscp) {
  e.add_read_handler("dscp", [&dscp] { return std::to_string(dscp); });
  e.add_write_handler("dscp", [&dscp](const std::string& v) {
    uint64_t x;
    if (!parse_uint(trim(v), x) || x > 63) throw std::runtime_error("DSCP is 0-63");
    dscp = uint8_t(x);
  });
}

}  // namespace shoal
