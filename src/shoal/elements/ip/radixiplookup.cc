// RadixIPLookup: longest-prefix match in a binary radix trie.
#include "shoal/elements/ip/iplookup.hh"

namespace shoal {

class RadixIPLookup : public IPLookupBase<RadixIPLookup> {
 public:
  static constexpr IPRouteTable::Kind kKind = IPRouteTable::Kind::Radix;
  static int32_t nexthop(const IPRouteTable::Snapshot& s, uint32_t addr) { return s.radix.lookup(addr); }
};
SHOAL_ELEMENT(
    RadixIPLookup,
    SHOAL_LOOKUP_DOC("RadixIPLookup", "IPv4 route lookup in a binary radix trie",
                     "Longest-prefix match walking a binary trie one address bit per level (up to 32 steps): Click's "
                     "RadixIPLookup, for tables DIR-24-8 cannot hold (more than 32766 distinct next hops) and for "
                     "comparison. Same arguments, outputs and handlers as DirectIPLookup."));

}  // namespace shoal
