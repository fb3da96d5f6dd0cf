// IPLookupBase: the IPv4 route lookups (DirectIPLookup, RadixIPLookup,
// LinearIPLookup, StaticIPLookup, LookupIPRoute) on RouteLookup. The key is
// the DST_IP annotation (CheckIPHeader sets it), a route with a gateway
// rewrites the annotation, and the packet leaves on the route's output.
#pragma once
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/ip/routelookup.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/routing/iproutetable.hh"

namespace shoal {

template <class D>
class IPLookupBase : public RouteLookup<D, IPv4Routes, IPRouteTable> {
 public:
  void push(int port, PacketBatch* b) override {
    this->refresh_if_changed();
    PacketElement<D>::push(port, b);
  }
  int process(Packet* p) {
    uint32_t dst = k::load_be32(p->anno().dst_ip);
    const auto& snap = *this->snap_;
    if constexpr (requires { D::nexthop(snap, dst); }) {  // the function the offload step runs too
      return k::route4_apply(D::nexthop(snap, dst), snap.nexthops.data(), p->anno().dst_ip, this->noutputs(),
                             this->r_noroute_, this->r_discard_);
    } else {
      uint32_t gw;
      int port;
      if (!static_cast<D*>(this)->lookup(snap, dst, gw, port)) return this->drop_code(this->r_noroute_);
      if (gw) k::store_be32(p->anno().dst_ip, gw);
      if (port < 0 || port >= this->noutputs()) return this->drop_code(this->r_discard_);
      return port;
    }
  }
};

// The documentation the lookups share.
#define SHOAL_LOOKUP_DOC(N, SUMMARY, DESC)                                                      \
  .name = N, .ports = "1/-", .processing = "h/h", .summary = SUMMARY, .description = DESC,      \
  .args = {{"ROUTE...", "route", "ADDR/LEN [GATEWAY] OUTPUT (ADDR/MASK too); OUTPUT -1 drops"}, \
           {"FILE", "string", "a file of routes, one per line, '#' comments"}},                 \
  .handlers = {{"table", "r", "the routes"},                                                    \
               {"routes", "r", "number of routes"},                                             \
               {"add", "w", "add a route (an error if its prefix is routed)"},                  \
               {"remove", "w", "remove ADDR/LEN"},                                              \
               {"set", "w", "add routes, replacing those for the same prefixes"},               \
               {"flush", "w", "remove all routes"}},                                            \
  .example = "CheckIPHeader(14) -> rt :: " N "(10.0.0.0/8 0, 0.0.0.0/0 10.0.0.1 1); rt[0] -> a; rt[1] -> b;"

}  // namespace shoal
