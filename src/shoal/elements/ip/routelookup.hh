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
#include <string>
#include <vector>

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
    for (auto& r : routes) configured_.push_back(r.unparse());
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
  // Hot swap (a reload): the old configuration's table, with the routes
  // added, set and removed while it ran, when this configuration gives the
  // same routes (arguments and FILE); a configuration whose routes changed
  // brings its own. Worker 0 takes it for the table all copies share.
  void hot_swapped(Element* old) override {
    auto* o = dynamic_cast<RouteLookup*>(old);
    if (!o || o->configured_ != configured_ || this->worker().id() != 0) return;
    auto routes = o->table_->snapshot()->routes;
    for (auto& r : routes)
      if (r.port >= route_ports()) return;  // (its outputs are fewer now: the configuration's routes stand)
    std::string err;
    table_->set(std::vector<Route>(routes.begin(), routes.end()), err);
  }
  // Outputs a route may name (the GPU forms: predicate bits).
  virtual int route_ports() const { return this->noutputs(); }
  void add_handlers() override {
    this->add_read_handler("table", [this] { return table_->unparse(); });
    this->add_read_handler("routes", [this] { return std::to_string(table_->snapshot()->routes.size()); });
    // Writes reach every worker's copy; the shared table changes once.
    this->add_write_handler("add", [this](const std::string& v) { add(v, false); });
    this->add_write_handler("remove", [this](const std::string& v) { remove(v); });
    // Click's ctrl: lines of "add ROUTE", "remove ROUTE" or "set ROUTE".
    this->add_write_handler("ctrl", [this](const std::string& v) {
      size_t b = 0;
      while (b < v.size()) {
        size_t e = v.find('\n', b);
        if (e == std::string::npos) e = v.size();
        std::string_view line = trim(std::string_view(v).substr(b, e - b));
        b = e + 1;
        if (line.empty()) continue;
        size_t sp = line.find_first_of(" \t");
        std::string_view op = line.substr(0, sp), rest = sp == std::string_view::npos ? "" : trim(line.substr(sp));
        if (op == "add" || op == "set") {
          add(std::string(rest), op == "set");
        } else if (op == "remove") {
          remove(std::string(rest));
        } else {
          throw std::runtime_error(fmt::format("ctrl: '{}' is not add, set or remove", op));
        }
      }
    });
    if constexpr (requires(std::string & o) { F::lookup_text(*table_->snapshot(), std::string_view(), o); })
      this->add_read_param_handler("lookup", [this](const std::string& v) {
        std::string out;
        if (!F::lookup_text(*table_->snapshot(), v, out))
          throw std::runtime_error(fmt::format("lookup: '{}' is not an address", std::string(trim(v))));
        return out;
      });
    // Click's set: routes added, each replacing one for the same prefix.
    this->add_write_handler("set", [this](const std::string& v) {
      for (auto& it : split_args(v, {}, false)) add(it.text, true);
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
  // add and set (and ctrl's): a route for a prefix already routed is a
  // conflict for add, replaced by set.
  void add(const std::string& v, bool replace) {
    Route r = parse_or_throw(v);
    if (r.port >= route_ports()) throw std::runtime_error(fmt::format("output {} is not connected", r.port));
    std::string err;
    if (this->worker().id() == 0 && !table_->add(r, err, replace)) throw std::runtime_error(err);
  }
  // remove: a route as Click writes it, or just its prefix.
  void remove(const std::string& v) {
    Route r;
    std::string err;
    if (!F::parse(v, r, err)) r = parse_or_throw(std::string(trim(v)) + " 0");
    if (this->worker().id() == 0 && !table_->remove(r, err)) throw std::runtime_error(err);
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
  std::vector<std::string> configured_;  // the routes the configuration gave, as text
};

}  // namespace shoal
