// IPLookupBase: what Click's IPv4 route lookup elements share (DirectIPLookup,
// RadixIPLookup, LinearIPLookup, StaticIPLookup, LookupIPRoute). The key is
// the DST_IP annotation (CheckIPHeader sets it), a route with a gateway
// rewrites the annotation, and the packet leaves on the route's output. The
// routes are shared by every worker's copy and can change at run time (add,
// remove, set, flush); lookups switch tables between batches.
#pragma once
#include <fmt/format.h>

#include <fstream>
#include <map>
#include <memory>
#include <mutex>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/routing/iproutetable.hh"

namespace shoal {

namespace iplookup_detail {
// One table per (runtime, element name), shared by the workers' copies.
inline std::shared_ptr<IPRouteTable> shared_table(const void* rt, const std::string& name, IPRouteTable::Kind kind,
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
}  // namespace iplookup_detail

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
    table_ = iplookup_detail::shared_table(&this->worker().runtime(), this->name(), D::kKind, first);
    if (first) {
      std::string err;
      if (!table_->set(routes, err)) a.fail(err);
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
      if (!table_->set(routes, err)) throw std::runtime_error(err);
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

// The documentation the lookups share.
#define SHOAL_LOOKUP_DOC(N, SUMMARY, DESC)                                                      \
  .name = N, .ports = "1/-", .processing = "h/h", .summary = SUMMARY, .description = DESC,      \
  .args = {{"ROUTE...", "route", "ADDR/LEN [GATEWAY] OUTPUT (ADDR/MASK too); OUTPUT -1 drops"}, \
           {"FILE", "string", "a file of routes, one per line, '#' comments"}},                 \
  .handlers = {{"table", "r", "the routes"},           {"routes", "r", "number of routes"},     \
               {"add", "w", "add or replace a route"}, {"remove", "w", "remove ADDR/LEN"},      \
               {"set", "w", "replace all routes"},     {"flush", "w", "remove all routes"}},    \
  .example = "CheckIPHeader(14) -> rt :: " N "(10.0.0.0/8 0, 0.0.0.0/0 10.0.0.1 1); rt[0] -> a; rt[1] -> b;"

}  // namespace shoal
