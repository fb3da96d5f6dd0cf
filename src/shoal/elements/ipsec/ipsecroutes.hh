// The route family of Click's IPsecRouteTable (RouteTable<IPsecRoutes>):
// Click's routes, "ADDR/LEN [GATEWAY] OUTPUT", optionally followed by an
// ESP tunnel's SA, "SPI ENCRYPT_KEY AUTH_KEY REPLAY OOSIZE", looked up in a
// multibit trie (RadixIPLookup's). Each snapshot also maps SPIs to the SAs
// of its routes (Click's SA table), for ESP packets arriving.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "shoal/crypto/sadb.hh"
#include "shoal/routing/iproutetable.hh"

namespace shoal {

struct IPsecRoute : IPRoute {
  std::shared_ptr<crypto::SA> sa;  // the tunnel's SA; null for a plain route
  std::string sa_text;             // "SPI ENCRYPT_KEY AUTH_KEY REPLAY OOSIZE" as given
  std::string unparse() const;
};

// Parses a route with or without the SA words (keys: 32, 48 or 64 hex
// digits, or a Click string of 16, 24 or 32 bytes for ENCRYPT_KEY; AUTH_KEY
// likewise, 16 to 64 bytes).
bool parse_ipsec_route(std::string_view text, IPsecRoute& r, std::string& err);

struct IPsecRoutes {
  using Route = IPsecRoute;
  struct Options {};
  struct Snapshot {
    std::vector<IPsecRoute> routes;
    IPv4Routes::Radix radix;                        // a route's index in `routes`
    std::vector<uint32_t> handles;                  // each route's SA handle (0: a plain route)
    std::unordered_map<uint32_t, uint32_t> by_spi;  // SPI -> SA handle
  };
  using Key = uint64_t;
  using KeyHash = std::hash<uint64_t>;
  static Key key(const IPsecRoute& r) { return IPv4Routes::key(r); }
  static bool build(const Options&, const std::vector<IPsecRoute>& routes, Snapshot& s, std::string& err);
  static bool parse(std::string_view text, IPsecRoute& r, std::string& err) { return parse_ipsec_route(text, r, err); }
  // Click's lookup handler: "PORT [GATEWAY]", "-1" for no route.
  static bool lookup_text(const Snapshot& s, std::string_view addr, std::string& out);
};

}  // namespace shoal
