// Routes shared by every worker's copy of one lookup element: Click's route
// syntax ("ADDR/LEN [GATEWAY] OUTPUT"), a file of such lines, run-time add and
// remove through handlers. Each change builds a new snapshot (DIR-24-8 tables
// and the route list) and publishes it; lookups pick it up at their next batch.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "shoal/kernels/ipfwd.hh"
#include "shoal/routing/lpm4_build.hh"
#include "shoal/routing/routetable.hh"

namespace shoal {

struct IPRoute {
  uint32_t addr = 0;  // host order, masked
  uint8_t len = 0;
  uint32_t gw = 0;  // host order; 0 = none
  int port = 0;
  std::string unparse() const;
};

// Parses "ADDR/LEN [GATEWAY] OUTPUT" (ADDR/MASK accepted too).
bool parse_route(std::string_view text, IPRoute& r, std::string& err);

// The IPv4 family of RouteTable: DIR-24-8 tables, a binary radix trie, or
// nothing (the linear scan reads the route list).
struct IPv4Routes {
  using Route = IPRoute;
  using NextHop = k::NextHop4;  // gw (host order, 0 = none) and port
  // A binary radix trie (one bit per level): Click's RadixIPLookup
  // structure, slower than DIR-24-8 but small and cheap to build.
  struct Radix {
    struct Node {
      int32_t child[2] = {-1, -1};
      int32_t nexthop = -1;
    };
    std::vector<Node> nodes;  // nodes[0] is the root (the /0 prefix)
    int32_t lookup(uint32_t addr) const {
      int32_t best = nodes[0].nexthop, n = 0;
      for (int bit = 31; bit >= 0; --bit) {
        n = nodes[size_t(n)].child[(addr >> bit) & 1];
        if (n < 0) break;
        if (nodes[size_t(n)].nexthop >= 0) best = nodes[size_t(n)].nexthop;
      }
      return best;
    }
  };
  enum class Kind : uint8_t { Linear, Dir24_8, Radix };
  using Options = Kind;
  struct Snapshot {
    std::vector<IPRoute> routes;
    k::Lpm4Table lpm;               // built for Kind::Dir24_8
    Radix radix;                    // built for Kind::Radix
    std::vector<NextHop> nexthops;  // what lpm and radix lookups index
  };
  using Key = uint64_t;
  using KeyHash = std::hash<uint64_t>;
  static Key key(const IPRoute& r) { return (uint64_t(r.addr & k::prefix_mask(r.len)) << 8) | r.len; }
  static bool build(Kind kind, const std::vector<IPRoute>& routes, Snapshot& s, std::string& err);
  static bool parse(std::string_view text, IPRoute& r, std::string& err) { return parse_route(text, r, err); }
};

class IPRouteTable : public RouteTable<IPv4Routes> {
 public:
  using Kind = IPv4Routes::Kind;
  using Radix = IPv4Routes::Radix;
  using NextHop = IPv4Routes::NextHop;
  explicit IPRouteTable(Kind kind) : RouteTable(kind) {}
  using RouteTable::remove;
  bool remove(uint32_t addr, uint8_t len, std::string& err) {
    IPRoute r;
    r.addr = addr;
    r.len = len;
    return remove(r, err);
  }
};

}  // namespace shoal
