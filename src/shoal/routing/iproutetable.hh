// Routes shared by every worker's copy of one lookup element: Click's route
// syntax ("ADDR/LEN [GATEWAY] OUTPUT"), a file of such lines, run-time add and
// remove through handlers. Each change builds a new snapshot (DIR-24-8 tables
// and the route list) and publishes it; lookups pick it up at their next batch.
#pragma once
#include <array>

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>
#include "shoal/core/args.hh"

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
  // RadixIPLookup's structure: a multibit trie of 256-way nodes (strides
  // 8/8/8/8) with leaf pushing, so a lookup is at most four dependent reads
  // and no best-match bookkeeping. Each slot holds a next hop (>= 0), no
  // route (-1), or a child node (-2 - index). Unlike DIR-24-8 it takes any
  // number of next hops; its memory follows the prefixes longer than /8,
  // /16 and /24 (1 KiB per node).
  struct Radix {
    using Node = std::array<int32_t, 256>;
    std::vector<Node> nodes;  // nodes[0] is the root (the first byte)
    int32_t lookup(uint32_t addr) const {
      int32_t v = nodes[0][addr >> 24];
      if (v >= -1) return v;
      v = nodes[size_t(-2 - v)][(addr >> 16) & 0xff];
      if (v >= -1) return v;
      v = nodes[size_t(-2 - v)][(addr >> 8) & 0xff];
      if (v >= -1) return v;
      return nodes[size_t(-2 - v)][addr & 0xff];
    }
    // Builds the trie from prefixes (host order, masked) and their next hops.
    void build(std::vector<std::pair<k::Prefix4, int32_t>> pfx);
    size_t memory_bytes() const { return nodes.size() * sizeof(Node); }
  };
  // RangeIPLookup's structure: the address space cut into the intervals
  // over which the longest match does not change, as sorted interval starts
  // and their next hops (-1: no route); a lookup is a binary search. The
  // most compact of the tables (8 bytes per interval, at most two intervals
  // per route), for tables read rarely or kept many times over.
  struct Range {
    std::vector<uint32_t> starts;  // starts[0] == 0, increasing
    std::vector<int32_t> hops;     // hops[i] covers [starts[i], starts[i+1])
    int32_t lookup(uint32_t addr) const {
      size_t lo = 0, n = starts.size();  // the last start <= addr (starts[0] is 0)
      while (n > 1) {
        size_t half = n / 2;
        if (starts[lo + half] <= addr) lo += half;
        n -= half;
      }
      return hops[lo];
    }
    // Builds the intervals from prefixes (host order, masked) and their
    // next hops; a prefix given twice keeps its last next hop.
    void build(std::vector<std::pair<k::Prefix4, int32_t>> pfx);
    size_t memory_bytes() const { return starts.size() * (sizeof(uint32_t) + sizeof(int32_t)); }
  };
  enum class Kind : uint8_t { Linear, Dir24_8, Radix, Range };
  using Options = Kind;
  struct Snapshot {
    std::vector<IPRoute> routes;
    k::Lpm4Table lpm;               // built for Kind::Dir24_8
    Radix radix;                    // built for Kind::Radix
    Range range;                    // built for Kind::Range
    std::vector<NextHop> nexthops;  // what lpm, radix and range lookups index
  };
  using Key = uint64_t;
  using KeyHash = std::hash<uint64_t>;
  static Key key(const IPRoute& r) { return (uint64_t(r.addr & k::prefix_mask(r.len)) << 8) | r.len; }
  static bool build(Kind kind, const std::vector<IPRoute>& routes, Snapshot& s, std::string& err);
  static bool parse(std::string_view text, IPRoute& r, std::string& err) { return parse_route(text, r, err); }
  // Click's lookup handler: "PORT [GATEWAY]" of the longest matching route
  // (a scan of the route list, whatever the table kind), "-1" for none;
  // false when `addr` is not an address.
  static bool lookup_text(const Snapshot& s, std::string_view addr, std::string& out) {
    IPv4Addr a;
    if (!parse_ipv4(trim(addr), a)) return false;
    uint32_t x = a.host();
    const IPRoute* best = nullptr;
    for (const IPRoute& r : s.routes)
      if ((x & k::prefix_mask(r.len)) == (r.addr & k::prefix_mask(r.len)) && (!best || r.len > best->len)) best = &r;
    if (!best) return out = "-1", true;
    out = std::to_string(best->port);
    if (best->gw) {
      uint8_t g[4] = {uint8_t(best->gw >> 24), uint8_t(best->gw >> 16), uint8_t(best->gw >> 8), uint8_t(best->gw)};
      out += " " + format_ipv4(g);
    }
    return true;
  }
};

class IPRouteTable : public RouteTable<IPv4Routes> {
 public:
  using Kind = IPv4Routes::Kind;
  using Radix = IPv4Routes::Radix;
  using Range = IPv4Routes::Range;
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
