// IPv6 routes for RouteTable (routing/routetable.hh): Click's route syntax
// ("ADDR/LEN [GATEWAY] OUTPUT", or "ADDR MASK GATEWAY OUTPUT"), and the
// binary search on prefix lengths (lpm6_build.hh) as the lookup structure.
#pragma once
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/kernels/ipfwd.hh"
#include "shoal/routing/lpm6_build.hh"
#include "shoal/routing/routetable.hh"

namespace shoal {

struct IP6Route {
  uint8_t addr[16] = {};  // masked to len
  uint8_t len = 0;
  uint8_t gw[16] = {};  // all zero: none
  int port = 0;
  std::string unparse() const;
};

// Parses "ADDR/LEN [GW] OUT" or Click's "ADDR MASK GW OUT".
bool parse_route6(std::string_view text, IP6Route& r, std::string& err);

struct IPv6Routes {
  using Route = IP6Route;
  using NextHop = k::NextHop6;
  struct Options {};
  struct Snapshot {
    std::vector<IP6Route> routes;
    k::Lpm6Table lpm;
    std::vector<NextHop> nexthops;
  };
  using Key = std::pair<std::array<uint8_t, 16>, uint8_t>;
  struct KeyHash {
    size_t operator()(const Key& k) const {
      uint64_t a, b;
      std::memcpy(&a, k.first.data(), 8);
      std::memcpy(&b, k.first.data() + 8, 8);
      return std::hash<uint64_t>()(a * 0x9e3779b97f4a7c15ull ^ b ^ (uint64_t(k.second) << 56));
    }
  };
  static Key key(const IP6Route& r);
  static bool build(const Options&, const std::vector<IP6Route>& routes, Snapshot& s, std::string& err);
  static bool parse(std::string_view text, IP6Route& r, std::string& err) { return parse_route6(text, r, err); }
};

using IP6RouteTable = RouteTable<IPv6Routes>;

}  // namespace shoal
