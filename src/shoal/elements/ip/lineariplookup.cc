// LinearIPLookup: a linear longest-match scan, the oracle the fast lookups
// are tested against.
#include "shoal/elements/ip/iplookup.hh"

namespace shoal {

class LinearIPLookup : public IPLookupBase<LinearIPLookup> {
 public:
  static constexpr IPRouteTable::Kind kKind = IPRouteTable::Kind::Linear;
  bool lookup(const IPRouteTable::Snapshot& s, uint32_t addr, uint32_t& gw, int& port) const {
    const IPRoute* best = nullptr;
    for (const IPRoute& r : s.routes)
      if ((addr & k::prefix_mask(r.len)) == r.addr && (!best || r.len > best->len)) best = &r;
    if (!best) return false;
    gw = best->gw;
    port = best->port;
    return true;
  }
};
SHOAL_ELEMENT(
    LinearIPLookup,
    SHOAL_LOOKUP_DOC(
        "LinearIPLookup", "IPv4 route lookup by linear scan (reference)",
        "Checks every route for each packet and keeps the longest match: slow, obviously correct, the "
        "oracle the fast lookups are tested against. Same arguments, outputs and handlers as DirectIPLookup."));

}  // namespace shoal
