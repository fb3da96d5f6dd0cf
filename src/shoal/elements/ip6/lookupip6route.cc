// LookupIP6Route: IPv6 route lookup by binary search on prefix lengths, on
// RouteLookup (the IPv4 lookups' base); offloadable, GPUIP6Lookup in Snap form.
#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"
#include "shoal/elements/ip/routelookup.hh"
#include "shoal/kernels/steps/route6.hh"
#include "shoal/offload/element.hh"
#include "shoal/offload/mirror.hh"
#include "shoal/routing/ip6routetable.hh"

namespace shoal {

// ---------------------------------------------------------------- LookupIP6Route
class LookupIP6Route : public offload::OffloadableElement<RouteLookup<LookupIP6Route, IPv6Routes>> {
 public:
  int route_ports() const override { return gpu_form_ ? 32 : noutputs(); }
  void cpu_push(int port, PacketBatch* b) override {
    refresh_if_changed();
    // The whole batch's lookups first, in lock-step (their cache misses
    // overlap); process() then takes the results in the same order.
    hi_.clear(), lo_.clear();
    b->for_each([&](uint32_t, Packet* p) {
      const uint8_t* d = p->anno().dst_ip6;
      hi_.push_back(k::load_be64(d));
      lo_.push_back(k::load_be64(d + 8));
    });
    nh_.resize(hi_.size());
    k::lpm6_lookup_batch(view_, uint32_t(hi_.size()), hi_.data(), lo_.data(), nh_.data());
    next_ = 0;
    PacketElement<LookupIP6Route>::push(port, b);  // NOLINT(bugprone-parent-virtual-call): the CPU path itself
  }
  int process(Packet* p) {
    int32_t nh;
    if (next_ < nh_.size()) {
      nh = nh_[next_++];
    } else {  // not reached through push(): look it up alone
      const uint8_t* d = p->anno().dst_ip6;
      nh = k::lpm6_lookup(view_, k::load_be64(d), k::load_be64(d + 8));
    }
    return k::route6_apply(nh, snap_->nexthops.data(), p->anno().dst_ip6, noutputs(), r_noroute_, r_discard_);
  }

  // ---- offload: the DST_IP6 annotations go to the device and back.
  void offload_declare(offload::Plan& plan) override {
    plan.annos.dst_ip6 = true;
    plan.annos.pred |= offload_uses_pred(true);
  }
  bool offload_launch(offload::Launch& L, std::string& err) override {
    refresh_if_changed();
    offload_ctl(L, true);
    k::Route6Step::Params p{L.view, L.ctl, view_, snap_->nexthops.data(), route_ports(), r_noroute_, r_discard_};
    if (L.host) {
      L.keep(snap_);
    } else {
      const k::Lpm6View& v = view_;  // one device copy per table version, shared by the workers
      if (!mirror_.sync(L, snap_,
                        {{v.lens, v.nlens},
                         {v.base, v.nlens * 4},
                         {v.mask, v.nlens * 4},
                         {v.slots, snap_->lpm.memory_bytes()},
                         {snap_->nexthops.data(), snap_->nexthops.size() * sizeof(k::NextHop6)}},
                        err))
        return false;
      p.t = v;
      p.t.lens = mirror_.at<uint8_t>(0);
      p.t.base = mirror_.at<uint32_t>(1);
      p.t.mask = mirror_.at<uint32_t>(2);
      p.t.slots = mirror_.at<k::Lpm6Slot>(3);
      p.nh = mirror_.at<k::NextHop6>(4);
    }
    L.run<k::Route6Step>(p);
    return true;
  }

  void add_handlers() override {
    RouteLookup::add_handlers();
    mirror_.add_handler(*this);
  }

 private:
  void refreshed() override { view_ = snap_->lpm.view(); }
  k::Lpm6View view_;
  std::vector<uint64_t> hi_, lo_;  // this batch's destinations
  std::vector<int32_t> nh_;        // and their next hops
  size_t next_ = 0;
  offload::TableMirror mirror_;
};
SHOAL_OFFLOADABLE_ELEMENT(
    LookupIP6Route,
    SHOAL_GPU_FORM(.name = "GPUIP6Lookup", .summary = "IPv6 route lookup on the device (Snap form)",
                   .description = "LookupIP6Route on the device, with the same arguments: binary search on prefix "
                                  "lengths over the DST_IP6 annotation, which alone goes to the device and back. A "
                                  "route's output number p (0-31) sets predicate bit p; a Dispatcher after the "
                                  "Debatcher sends the packets on. No route: dropped ('no-route').",
                   .args = {{"ROUTE...", "route", "ADDR/LEN [GATEWAY] OUTPUT, OUTPUT a predicate bit 0-31"}},
                   .example = "Batcher(4096, 100us) -> HostToDevice -> GPUIP6Lookup(fd00::/16 0, ::/0 1) "
                              "-> DeviceToHost -> CompletionQueue -> Debatcher -> Dispatcher(0, 1);"),
    .name = "LookupIP6Route", .ports = "1/-", .processing = "h/h",
    .summary = "IPv6 route lookup by binary search on prefix lengths",
    .description =
        "Longest-prefix match on the DST_IP6 annotation (CheckIP6Header sets it) with Waldvogel's "
        "binary search on prefix lengths: a hash table per distinct length with markers and "
        "precomputed best matches, about log2(lengths) probes per lookup. A route with a gateway sets "
        "DST_IP6 to it; the packet leaves on the route's output. No match: dropped ('no-route'). The "
        "table is shared by all workers and rebuilt on change.",
    .args = {{"ROUTE...", "route", "ADDR/LEN [GATEWAY] OUTPUT, or Click's ADDR MASK GATEWAY OUTPUT"},
             {"FILE", "string", "a file of routes, one per line, '#' comments"}},
    .handlers = {{"table", "r", "the routes"},
                 {"routes", "r", "number of routes"},
                 {"add", "w", "add a route (an error if its prefix is routed)"},
                 {"remove", "w", "remove ADDR/LEN"},
                 {"set", "w", "add routes, replacing those for the same prefixes"},
                 {"flush", "w", "remove all routes"}},
    .example = "CheckIP6Header(OFFSET 14) -> rt :: LookupIP6Route(fd00:1::/64 0, ::/0 fd00:2::2 1);");

}  // namespace shoal
