// RangeIPLookup: longest-prefix match by binary search over the intervals
// on which the match does not change.
#include "shoal/elements/ip/iplookup.hh"

namespace shoal {

class RangeIPLookup : public IPLookupBase<RangeIPLookup> {
 public:
  static constexpr IPRouteTable::Kind kKind = IPRouteTable::Kind::Range;
  static int32_t nexthop(const IPRouteTable::Snapshot& s, uint32_t addr) { return s.range.lookup(addr); }
};
SHOAL_ELEMENT(
    RangeIPLookup,
    SHOAL_LOOKUP_DOC("RangeIPLookup", "IPv4 route lookup by binary search in a compact range table",
                     "Click's RangeIPLookup: the routes are flattened into the address intervals over which the "
                     "longest match does not change (at most two per route, 8 bytes each), and a lookup is a "
                     "binary search for the interval holding the destination. The smallest of the tables "
                     "(900,000 routes of a full Internet table in 8 MB), at about 20 dependent reads per lookup; "
                     "DirectIPLookup is faster, RadixIPLookup in between. Same arguments, outputs and handlers "
                     "as DirectIPLookup."));

}  // namespace shoal
