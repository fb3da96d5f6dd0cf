// RouteLookup<D, F>: what Click's route lookup elements share, for IPv4
// (DirectIPLookup, RadixIPLookup, LinearIPLookup, StaticIPLookup,
// LookupIPRoute) and IPv6 (LookupIP6Route), as Click's IPRouteTable base:
// routes as arguments ("ADDR/LEN [GATEWAY] OUTPUT") or from FILE, one table
// per element shared by every worker's copy (routing/routetable.hh), the
// handlers table, routes, add, remove, set and flush, and the drop reasons
// no-route and route-to-discard. D looks packets up in snap_; it calls
// refresh_if_changed() before a batch to pick up route changes.
#pragma once
#include <fmt/format.h>

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"
#include "shoal/routing/routetable.hh"

namespace shoal {

template <class D, class F, class Table = RouteTable<F>>
class RouteLookup : public PacketElement<D> {
 public:
  using Route = typename F::Route;
  void configure(Args& a) override {
    std::string file;
    a.read("FILE", file);
    std::vector<Route> routes;
    for (ArgItem* it : a.rest_positional()) {
      Route r;
      std::string err;
      if (!F::parse(it->text, r, err)) a.fail(*it, err);
      routes.push_back(r);
    }
    a.complete();
    if (!file.empty())
      for (auto& [n, text] : read_config_lines(a, "FILE", file)) {
        Route r;
        std::string err;
        if (!F::parse(text, r, err)) a.fail(fmt::format("{}:{}: {}", file, n, err));
        routes.push_back(r);
      }
    bool first;
    table_ = shared_table(first);
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
  // Outputs a route may name (the GPU forms: predicate bits).
  virtual int route_ports() const { return this->noutputs(); }
  void add_handlers() override {
    this->add_read_handler("table", [this] { return table_->unparse(); });
    this->add_read_handler("routes", [this] { return std::to_string(table_->snapshot()->routes.size()); });
    // Writes reach every worker's copy; the shared table changes once.
    this->add_write_handler("add", [this](const std::string& v) {
      Route r = parse_or_throw(v);
      if (r.port >= route_ports()) throw std::runtime_error(fmt::format("output {} is not connected", r.port));
      std::string err;
      if (this->worker().id() == 0 && !table_->add(r, err)) throw std::runtime_error(err);
    });
    this->add_write_handler("remove", [this](const std::string& v) {
      Route r = parse_or_throw(std::string(trim(v)) + " 0");
      std::string err;
      if (this->worker().id() == 0 && !table_->remove(r, err)) throw std::runtime_error(err);
    });
    this->add_write_handler("set", [this](const std::string& v) {
      std::vector<Route> routes;
      for (auto& it : split_args(v, {}, false)) routes.push_back(parse_or_throw(it.text));
      for (const Route& r : routes)
        if (r.port >= route_ports()) throw std::runtime_error(fmt::format("output {} is not connected", r.port));
      std::string err;
      if (this->worker().id() == 0 && !table_->set(routes, err)) throw std::runtime_error(err);
    });
    this->add_write_handler("flush", [this](const std::string&) {
      std::string err;
      if (this->worker().id() == 0) table_->set({}, err);
    });
  }

 protected:
  std::shared_ptr<const typename Table::Snapshot> snap_;
  std::shared_ptr<Table> table_;
  uint16_t r_noroute_ = 0, r_discard_ = 0;
  void refresh_if_changed() {
    if (table_->version() != version_) refresh();
  }
  // After snap_ changed (D caches views of it).
  virtual void refreshed() {}

 private:
  void refresh() {
    version_ = table_->version();
    snap_ = table_->snapshot();
    refreshed();
  }
  static Route parse_or_throw(const std::string& text) {
    Route r;
    std::string err;
    if (!F::parse(text, r, err)) throw std::runtime_error(err);
    return r;
  }
  // One table per (runtime, element name), shared by the workers' copies.
  std::shared_ptr<Table> shared_table(bool& first) {
    static std::mutex mu;
    static std::map<std::pair<const void*, std::string>, std::weak_ptr<Table>> tables;
    std::lock_guard<std::mutex> g(mu);
    auto& w = tables[{&this->worker().runtime(), this->name()}];
    auto t = w.lock();
    first = !t;
    if (!t) {
      if constexpr (requires { D::kKind; })
        t = std::make_shared<Table>(D::kKind);
      else
        t = std::make_shared<Table>();
      w = t;
    }
    return t;
  }
  uint64_t version_ = ~0ull;
};

}  // namespace shoal
