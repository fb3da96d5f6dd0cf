// RadixIPLookup: longest-prefix match in a multibit trie (strides 8/8/8/8).
#include "shoal/elements/ip/iplookup.hh"

namespace shoal {

class RadixIPLookup : public IPLookupBase<RadixIPLookup> {
 public:
  static constexpr IPRouteTable::Kind kKind = IPRouteTable::Kind::Radix;
  static int32_t nexthop(const IPRouteTable::Snapshot& s, uint32_t addr) { return s.radix.lookup(addr); }
};
SHOAL_ELEMENT(
    RadixIPLookup,
    SHOAL_LOOKUP_DOC("RadixIPLookup", "IPv4 route lookup in a multibit trie",
                     "Longest-prefix match in a trie of 256-way nodes (one address byte per level, prefixes "
                     "expanded within their level and pushed down to longer ones): at most four memory reads. "
                     "Click's RadixIPLookup, for tables DIR-24-8 cannot hold (any number of distinct next hops; "
                     "1 KiB per node, a node per distinct /8, /16 and /24 that longer prefixes fall in). Same "
                     "arguments, outputs and handlers as DirectIPLookup."));

}  // namespace shoal
