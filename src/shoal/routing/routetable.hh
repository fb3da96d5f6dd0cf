// RouteTable<F>: the routes shared by every worker's copy of one lookup
// element, for any address family F (Click's IPRouteTable, which its IPv4
// and IPv6 lookups share). Each change (set, add, remove) builds a new
// snapshot of the family's lookup structure beside the old one and
// publishes it atomically; lookups pick it up at their next batch, and a
// build that fails (a structure's capacity) leaves the table unchanged.
//
// F provides: Route (with port and unparse()), Key, KeyHash and key(route)
// (the prefix: an equal key replaces), Options, Snapshot (with
// `std::vector<Route> routes`), and
//   static bool build(const Options&, const std::vector<Route>&, Snapshot&, std::string& err).
#pragma once
#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

namespace shoal {

template <class F>
class RouteTable {
 public:
  using Route = typename F::Route;
  using Snapshot = typename F::Snapshot;
  using Options = typename F::Options;

  explicit RouteTable(Options o = {}) : opt_(o) {}
  // Replaces every route; an equal prefix given twice: the last one stands.
  bool set(const std::vector<Route>& routes, std::string& err) {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<Route> uniq;
    std::unordered_map<typename F::Key, size_t, typename F::KeyHash> at;
    at.reserve(routes.size());
    for (const Route& r : routes) {
      auto [it, fresh] = at.try_emplace(F::key(r), uniq.size());
      if (fresh)
        uniq.push_back(r);
      else
        uniq[it->second] = r;
    }
    return publish(std::move(uniq), err);
  }
  // Adds r; a route for the same prefix is replaced when `replace` (Click's
  // set), else r is refused (Click's add: "conflict with existing route").
  bool add(const Route& r, std::string& err, bool replace = true) {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<Route> routes = snapshot()->routes;
    auto it = std::find_if(routes.begin(), routes.end(), [&](const Route& u) { return F::key(u) == F::key(r); });
    if (it != routes.end() && !replace) {
      std::string words;  // the route as Click writes it in messages: one space between fields
      for (char c : it->unparse())
        if (c != '\t' && c != ' ')
          words += c;
        else if (!words.empty() && words.back() != ' ')
          words += ' ';
      err = "conflict with existing route '" + words + "'";
      return false;
    }
    if (it != routes.end())
      *it = r;
    else
      routes.push_back(r);
    return publish(std::move(routes), err);
  }
  // Removes the route with r's prefix; false ("no such route") when none.
  bool remove(const Route& r, std::string& err) {
    std::lock_guard<std::mutex> g(mu_);
    std::vector<Route> routes = snapshot()->routes;
    auto it = std::find_if(routes.begin(), routes.end(), [&](const Route& u) { return F::key(u) == F::key(r); });
    if (it == routes.end()) {
      err = "no such route";
      return false;
    }
    routes.erase(it);
    return publish(std::move(routes), err);
  }
  std::shared_ptr<const Snapshot> snapshot() const { return std::atomic_load(&snap_); }
  uint64_t version() const { return version_.load(std::memory_order_acquire); }
  // One route per line.
  std::string unparse() const {
    std::string s;
    for (const Route& r : snapshot()->routes) s += r.unparse() + "\n";
    return s;
  }
  const Options& options() const { return opt_; }

 private:
  bool publish(std::vector<Route> routes, std::string& err) {
    auto s = std::make_shared<Snapshot>();
    if (!F::build(opt_, routes, *s, err)) return false;
    s->routes = std::move(routes);
    std::atomic_store(&snap_, std::shared_ptr<const Snapshot>(std::move(s)));
    version_.fetch_add(1, std::memory_order_acq_rel);
    return true;
  }
  Options opt_;
  std::mutex mu_;
  std::shared_ptr<const Snapshot> snap_ = std::make_shared<Snapshot>();
  std::atomic<uint64_t> version_{0};
};

}  // namespace shoal
