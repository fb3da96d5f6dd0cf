// IPv4 route lookup elements: DirectIPLookup (DIR-24-8, the fast default)
// and LinearIPLookup (a linear longest-match scan, the oracle). Both follow
// Click: the key is the DST_IP annotation (CheckIPHeader sets it), a route
// with a gateway rewrites the annotation, the packet leaves on the route's
// output. The routes are shared by every worker's copy and can change at run
// time (add, remove, set, flush); lookups switch tables between batches.
#include <fmt/format.h>

#include <fstream>
#include <map>

#include "shoal/core/graph.hh"
#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/steps/route4.hh"
#include "shoal/offload/element.hh"
#include "shoal/offload/mirror.hh"
#include "shoal/routing/iproutetable.hh"

namespace shoal {

namespace {
// One table per (runtime, element name), shared by the workers' copies.
std::shared_ptr<IPRouteTable> shared_table(const void* rt, const std::string& name, IPRouteTable::Kind kind,
                                           bool& first) {
  static std::mutex mu;
  static std::map<std::pair<const void*, std::string>, std::weak_ptr<IPRouteTable>> tables;
  std::lock_guard<std::mutex> g(mu);
  auto& w = tables[{rt, name}];
  auto t = w.lock();
  first = !t;
  if (!t) w = t = std::make_shared<IPRouteTable>(kind);
  return t;
}
}  // namespace

template <class D>
class IPLookupBase : public PacketElement<D> {
 public:
  void configure(Args& a) override {
    std::string file;
    a.read("FILE", file);
    std::vector<IPRoute> routes;
    for (ArgItem* it : a.rest_positional()) {
      IPRoute r;
      std::string err;
      if (!parse_route(it->text, r, err)) a.fail(*it, err);
      routes.push_back(r);
    }
    a.complete();
    if (!file.empty()) load_file(a, file, routes);
    bool first;
    table_ = shared_table(&this->worker().runtime(), this->name(), D::kKind, first);
    if (first) {
      std::string err;
      if (!table_->set(std::move(routes), err)) a.fail(err);
    }
  }
  void initialize() override {
    r_noroute_ = this->add_drop_reason("no-route");
    r_discard_ = this->add_drop_reason("route-to-discard");
    for (auto& r : table_->snapshot()->routes)
      if (r.port >= route_ports())
        throw std::runtime_error(
            fmt::format("route {} names output {}, but {} outputs are connected", r.unparse(), r.port, route_ports()));
    refresh();
  }
  // Outputs a route may name (the GPU form: predicate bits).
  virtual int route_ports() const { return this->noutputs(); }
  void push(int port, PacketBatch* b) override {
    if (table_->version() != version_) refresh();
    PacketElement<D>::push(port, b);
  }
  int process(Packet* p) {
    uint32_t dst = k::load_be32(p->anno().dst_ip);
    if constexpr (requires { D::nexthop(*snap_, dst); }) {  // the function the offload step runs too
      return k::route4_apply(D::nexthop(*snap_, dst), snap_->nexthops.data(), p->anno().dst_ip, this->noutputs(),
                             r_noroute_, r_discard_);
    } else {
      uint32_t gw;
      int port;
      if (!static_cast<D*>(this)->lookup(*snap_, dst, gw, port)) return this->drop_code(r_noroute_);
      if (gw) k::store_be32(p->anno().dst_ip, gw);
      if (port < 0 || port >= this->noutputs()) return this->drop_code(r_discard_);
      return port;
    }
  }
  void add_handlers() override {
    this->add_read_handler("table", [this] { return table_->unparse(); });
    this->add_read_handler("routes", [this] { return std::to_string(table_->snapshot()->routes.size()); });
    // Writes reach every worker's copy; the shared table changes once.
    this->add_write_handler("add", [this](const std::string& v) {
      if (this->worker().id() == 0) change(v, true);
    });
    this->add_write_handler("remove", [this](const std::string& v) {
      if (this->worker().id() != 0) return;
      IPRoute r;
      std::string err;
      std::string text(trim(v));
      if (!parse_route(text + " 0", r, err)) throw std::runtime_error(err);
      if (!table_->remove(r.addr, r.len, err)) throw std::runtime_error(err);
    });
    this->add_write_handler("set", [this](const std::string& v) {
      if (this->worker().id() != 0) return;
      std::vector<IPRoute> routes;
      for (auto& it : split_args(v, {}, false)) {
        IPRoute r;
        std::string err;
        if (!parse_route(it.text, r, err)) throw std::runtime_error(err);
        routes.push_back(r);
      }
      std::string err;
      if (!table_->set(std::move(routes), err)) throw std::runtime_error(err);
    });
    this->add_write_handler("flush", [this](const std::string&) {
      std::string err;
      if (this->worker().id() == 0) table_->set({}, err);
    });
  }

 protected:
  std::shared_ptr<const IPRouteTable::Snapshot> snap_;
  std::shared_ptr<IPRouteTable> table_;
  uint16_t r_noroute_ = 0, r_discard_ = 0;
  void refresh_if_changed() {
    if (table_->version() != version_) refresh();
  }

 private:
  void refresh() {
    version_ = table_->version();
    snap_ = table_->snapshot();
  }
  void change(const std::string& v, bool) {
    IPRoute r;
    std::string err;
    if (!parse_route(v, r, err)) throw std::runtime_error(err);
    if (r.port >= route_ports()) throw std::runtime_error(fmt::format("output {} is not connected", r.port));
    if (!table_->add(r, err)) throw std::runtime_error(err);
  }
  void load_file(Args& a, const std::string& file, std::vector<IPRoute>& routes) {
    for (auto& [n, text] : read_config_lines(a, "FILE", file)) {
      IPRoute r;
      std::string err;
      if (!parse_route(text, r, err)) a.fail(fmt::format("{}:{}: {}", file, n, err));
      routes.push_back(r);
    }
  }

  uint64_t version_ = ~0ull;
};

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

class RadixIPLookup : public IPLookupBase<RadixIPLookup> {
 public:
  static constexpr IPRouteTable::Kind kKind = IPRouteTable::Kind::Radix;
  static int32_t nexthop(const IPRouteTable::Snapshot& s, uint32_t addr) { return s.radix.lookup(addr); }
};

// Click's StaticIPLookup and its older name LookupIPRoute: fixed tables in
// Click, served here by the DIR-24-8 structure (same results, faster).
class StaticIPLookup : public DirectIPLookup {};
class LookupIPRoute : public DirectIPLookup {};

#define SHOAL_LOOKUP_DOC(N, SUMMARY, DESC)                                                      \
  .name = N, .ports = "1/-", .processing = "h/h", .summary = SUMMARY, .description = DESC,      \
  .args = {{"ROUTE...", "route", "ADDR/LEN [GATEWAY] OUTPUT (ADDR/MASK too); OUTPUT -1 drops"}, \
           {"FILE", "string", "a file of routes, one per line, '#' comments"}},                 \
  .handlers = {{"table", "r", "the routes"},           {"routes", "r", "number of routes"},     \
               {"add", "w", "add or replace a route"}, {"remove", "w", "remove ADDR/LEN"},      \
               {"set", "w", "replace all routes"},     {"flush", "w", "remove all routes"}},    \
  .example = "CheckIPHeader(14) -> rt :: " N "(10.0.0.0/8 0, 0.0.0.0/0 10.0.0.1 1); rt[0] -> a; rt[1] -> b;"

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
SHOAL_ELEMENT(
    LinearIPLookup,
    SHOAL_LOOKUP_DOC(
        "LinearIPLookup", "IPv4 route lookup by linear scan (reference)",
        "Checks every route for each packet and keeps the longest match: slow, obviously correct, the "
        "oracle the fast lookups are tested against. Same arguments, outputs and handlers as DirectIPLookup."));

SHOAL_ELEMENT(
    RadixIPLookup,
    SHOAL_LOOKUP_DOC("RadixIPLookup", "IPv4 route lookup in a binary radix trie",
                     "Longest-prefix match walking a binary trie one address bit per level (up to 32 steps): Click's "
                     "RadixIPLookup, for tables DIR-24-8 cannot hold (more than 32766 distinct next hops) and for "
                     "comparison. Same arguments, outputs and handlers as DirectIPLookup."));
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

}  // namespace shoal
