// DirectIPLookup (DIR-24-8, the fast default, offloadable as GPUIPLookup) and
// Click's StaticIPLookup and LookupIPRoute, served by the same tables.
#include "shoal/elements/ip/iplookup.hh"
#include "shoal/kernels/steps/route4.hh"
#include "shoal/offload/element.hh"
#include "shoal/offload/mirror.hh"

namespace shoal {

// DIR-24-8, offloadable: the DST_IP annotations go to the device, the
// lookup and the gateway/output decision run there (k::Route4Step, the same
// route4_apply process() calls), the rewritten annotations come back.
class DirectIPLookup : public offload::OffloadableElement<IPLookupBase<DirectIPLookup>> {
 public:
  static constexpr IPRouteTable::Kind kKind = IPRouteTable::Kind::Dir24_8;
  static int32_t nexthop(const IPRouteTable::Snapshot& s, uint32_t addr) { return k::lpm4_lookup(s.lpm.view(), addr); }
  void add_handlers() override {
    IPLookupBase::add_handlers();
    mirror_.add_handler(*this);
  }
  int route_ports() const override { return gpu_form_ ? 32 : noutputs(); }
  bool offload_has_host_packet() const override { return true; }
  int offload_host_packet(Packet* p) override {  // Route4Step for one packet
    return k::route4_apply(nexthop(*snap_, k::load_be32(p->anno().dst_ip)), snap_->nexthops.data(), p->anno().dst_ip,
                           route_ports(), r_noroute_, r_discard_);
  }

  // A host aggregate: the same lookup on the packets themselves (nothing packed).
  HostDirect offload_host_direct() override { return gpu_form_ ? HostDirect::No : HostDirect::AtArrival; }
  void offload_host_run(offload::Aggregate& a, size_t step) override {
    refresh_if_changed();
    Offloadable::offload_host_run(a, step);
  }

  void offload_declare(offload::Plan& plan) override {
    plan.annos.dst_ip = true;
    plan.annos.pred |= offload_uses_pred(true);
  }
  bool offload_launch(offload::Launch& L, std::string& err) override {
    refresh_if_changed();
    offload_ctl(L, true);
    k::Route4Step::Params p{L.view,        L.ctl,      snap_->lpm.view(), snap_->nexthops.data(),
                            route_ports(), r_noroute_, r_discard_};
    if (L.host) {
      L.keep(snap_);
    } else {
      // The device copy follows the table: a route change makes a new one at the next aggregate.
      const k::Lpm4View v = snap_->lpm.view();
      if (!mirror_.sync(L, snap_,
                        {{v.tbl24, size_t(2) << 24},
                         {v.tbl8, snap_->lpm.groups() * 256 * 2},
                         {snap_->nexthops.data(), snap_->nexthops.size() * sizeof(k::NextHop4)}},
                        err))
        return false;
      p.t = {mirror_.at<uint16_t>(0), mirror_.at<uint16_t>(1)};
      p.nh = mirror_.at<k::NextHop4>(2);
    }
    L.run<k::Route4Step>(p);
    return true;
  }

 private:
  offload::TableMirror mirror_;
};

// Click's StaticIPLookup and its older name LookupIPRoute: fixed tables in
// Click, served here by the DIR-24-8 structure (same results, faster).
class StaticIPLookup : public DirectIPLookup {};
class LookupIPRoute : public DirectIPLookup {};
// Click's sorted linear table: the same routes and results, from DIR-24-8.
class SortedIPLookup : public DirectIPLookup {};

SHOAL_OFFLOADABLE_ELEMENT(
    DirectIPLookup,
    SHOAL_GPU_FORM(.name = "GPUIPLookup", .summary = "IPv4 route lookup on the device (Snap form)",
                   .description = "DirectIPLookup on the device, with the same arguments: DIR-24-8 on the DST_IP "
                                  "annotation. Only the annotations go to the device and back. A route's output "
                                  "number p (0-31) sets predicate bit p of the packet instead of choosing a port: "
                                  "later device elements can test it (PRED) and a Dispatcher after the Debatcher "
                                  "sends the packets on. No route, or a route to -1: dropped ('no-route', "
                                  "'route-to-discard'). Route changes through the handlers reach the device copy "
                                  "of the tables at the next aggregate; aggregates in flight finish with the "
                                  "tables they started with.",
                   .args = {{"ROUTE...", "route", "ADDR/LEN [GATEWAY] OUTPUT, OUTPUT a predicate bit 0-31"}},
                   .example = "Batcher(4096, 100us) -> HostToDevice -> GPUIPLookup(10.0.0.0/8 0, 0/0 "
                              "10.0.0.1 1) -> DeviceToHost -> CompletionQueue -> Debatcher -> d :: "
                              "Dispatcher(0, 1);",
                   .skip = true),
    SHOAL_LOOKUP_DOC(
        "DirectIPLookup", "IPv4 route lookup with DIR-24-8 tables",
        "Longest-prefix match on the DST_IP annotation in at most two memory reads (a 2^24-entry table "
        "and 256-entry groups for /25-/32). A route with a gateway sets DST_IP to it; the packet leaves on "
        "the route's output. No match: dropped (reason 'no-route'). The tables are shared by all workers "
        "and rebuilt on change: any number of routes, at most 32766 distinct gateway/output pairs and 32768 "
        "/24 blocks holding longer prefixes."));

SHOAL_ELEMENT(StaticIPLookup,
              SHOAL_LOOKUP_DOC(
                  "StaticIPLookup", "IPv4 route lookup (Click's static table)",
                  "Click's StaticIPLookup: routes given as arguments. Served by the DIR-24-8 tables of DirectIPLookup, "
                  "with the same arguments, outputs and handlers."));

SHOAL_ELEMENT(
    LookupIPRoute,
    SHOAL_LOOKUP_DOC("LookupIPRoute", "IPv4 route lookup (Click's older name)",
                     "Click's LookupIPRoute, the older name of StaticIPLookup: same arguments, outputs and handlers as "
                     "DirectIPLookup, served by the same DIR-24-8 tables."));

SHOAL_ELEMENT(SortedIPLookup,
              SHOAL_LOOKUP_DOC("SortedIPLookup", "IPv4 route lookup (Click's sorted linear table)",
                               "Click's SortedIPLookup (deprecated there for LinearIPLookup). Served by the DIR-24-8 "
                               "tables of DirectIPLookup, with the same arguments, outputs and handlers."));

}  // namespace shoal
