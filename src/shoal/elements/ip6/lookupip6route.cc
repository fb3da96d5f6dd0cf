// LookupIP6Route: IPv6 route lookup on the device (Snap form).
#include <fmt/format.h>
#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <mutex>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"
#include "shoal/kernels/steps/route6.hh"
#include "shoal/offload/element.hh"
#include "shoal/offload/mirror.hh"
#include "shoal/routing/lpm6_build.hh"

namespace shoal {

// ---------------------------------------------------------------- routes
struct IP6Route {
  uint8_t addr[16] = {};
  uint8_t len = 0;
  uint8_t gw[16] = {};  // all zero: none
  int port = 0;
  std::string unparse() const {
    std::string s = fmt::format("{}/{}", format_ipv6(addr), len);
    if (!is_zero16(gw)) s += " " + format_ipv6(gw);
    return s + " " + std::to_string(port);
  }
};

static void mask6(uint8_t* a, uint32_t len) {
  for (uint32_t i = 0; i < 16; ++i) {
    uint32_t bits = len > 8 * i ? std::min<uint32_t>(8, len - 8 * i) : 0;
    a[i] &= uint8_t(bits == 8 ? 0xff : (0xff00 >> bits) & 0xff);
  }
}

// "ADDR/LEN [GW] OUT" or Click's "ADDR MASK GW OUT".
static bool parse_route6(std::string_view text, IP6Route& r, std::string& err) {
  std::vector<std::string_view> w;
  for (size_t i = 0; i < text.size();) {
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    size_t b = i;
    while (i < text.size() && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i > b) w.push_back(text.substr(b, i - b));
  }
  auto fail = [&](std::string m) { return err = fmt::format("{} in route '{}'", m, trim(text)), false; };
  if (w.size() < 2 || w.size() > 4) return fail("expected 'ADDR/LEN [GATEWAY] OUTPUT'");
  IPv6Addr a;
  size_t sl = w[0].find('/');
  if (!parse_ipv6(w[0].substr(0, sl), a)) return fail("bad IPv6 address");
  uint64_t len = 128;
  size_t gw_at = 1;
  if (sl != std::string_view::npos) {
    if (!parse_uint(w[0].substr(sl + 1), len) || len > 128) return fail("bad prefix length");
  } else if (w.size() == 4) {  // ADDR MASK GW OUT
    IPv6Addr m;
    if (!parse_ipv6(w[1], m)) return fail("bad mask");
    len = 0;
    while (len < 128 && (m.b[len / 8] >> (7 - len % 8)) & 1) ++len;
    gw_at = 2;
  }
  std::memcpy(r.addr, a.b.data(), 16);
  r.len = uint8_t(len);
  mask6(r.addr, r.len);
  std::memset(r.gw, 0, 16);
  if (w.size() > gw_at + 1) {
    IPv6Addr g;
    if (!parse_ipv6(w[gw_at], g)) return fail("bad gateway");
    std::memcpy(r.gw, g.b.data(), 16);
  }
  int64_t port;
  if (!parse_int(w.back(), port) || port < -1 || port > 65535) return fail("bad output port");
  r.port = int(port);
  return true;
}

struct IP6RouteTable {
  using NextHop = k::NextHop6;
  struct Snapshot {
    std::vector<IP6Route> routes;
    k::Lpm6Table lpm;
    std::vector<NextHop> nexthops;
  };
  std::mutex mu;
  std::shared_ptr<const Snapshot> snap = std::make_shared<Snapshot>();
  std::atomic<uint64_t> version{0};

  std::shared_ptr<const Snapshot> snapshot() const { return std::atomic_load(&snap); }
  void publish(std::vector<IP6Route> routes) {
    auto s = std::make_shared<Snapshot>();
    std::vector<k::Prefix6> pfx;
    pfx.reserve(routes.size());
    std::map<std::pair<std::string, int>, int32_t> ids;
    for (auto& r : routes) {
      auto [it, fresh] =
          ids.try_emplace({std::string(reinterpret_cast<const char*>(r.gw), 16), r.port}, int32_t(s->nexthops.size()));
      if (fresh) {
        NextHop nh;
        std::memcpy(nh.gw, r.gw, 16);
        nh.port = r.port;
        s->nexthops.push_back(nh);
      }
      pfx.push_back({k::load_be64(r.addr), k::load_be64(r.addr + 8), r.len, it->second});
    }
    s->lpm.build(pfx);
    s->routes = std::move(routes);
    std::atomic_store(&snap, std::shared_ptr<const Snapshot>(std::move(s)));
    version.fetch_add(1, std::memory_order_acq_rel);
  }
  static bool same(const IP6Route& a, const IP6Route& b) {
    return a.len == b.len && std::memcmp(a.addr, b.addr, 16) == 0;
  }
  void set(std::vector<IP6Route> routes) {
    std::lock_guard<std::mutex> g(mu);
    std::vector<IP6Route> uniq;
    std::map<std::pair<std::string, uint8_t>, size_t> at;
    for (auto& r : routes) {
      auto [it, fresh] = at.try_emplace({std::string(reinterpret_cast<const char*>(r.addr), 16), r.len}, uniq.size());
      if (fresh)
        uniq.push_back(r);
      else
        uniq[it->second] = r;
    }
    publish(std::move(uniq));
  }
  void add(const IP6Route& r) {
    std::lock_guard<std::mutex> g(mu);
    auto routes = snapshot()->routes;
    auto it = std::find_if(routes.begin(), routes.end(), [&](const IP6Route& u) { return same(u, r); });
    if (it != routes.end())
      *it = r;
    else
      routes.push_back(r);
    publish(std::move(routes));
  }
  bool remove(const IP6Route& r) {
    std::lock_guard<std::mutex> g(mu);
    auto routes = snapshot()->routes;
    auto it = std::find_if(routes.begin(), routes.end(), [&](const IP6Route& u) { return same(u, r); });
    if (it == routes.end()) return false;
    routes.erase(it);
    publish(std::move(routes));
    return true;
  }
};

// ---------------------------------------------------------------- LookupIP6Route
class LookupIP6Route : public offload::OffloadableElement<PacketElement<LookupIP6Route>> {
 public:
  void configure(Args& a) override {
    std::string file;
    a.read("FILE", file);
    std::vector<IP6Route> routes;
    for (ArgItem* it : a.rest_positional()) {
      IP6Route r;
      std::string err;
      if (!parse_route6(it->text, r, err)) a.fail(*it, err);
      routes.push_back(r);
    }
    a.complete();
    if (!file.empty())
      for (auto& [n, text] : read_config_lines(a, "FILE", file)) {
        IP6Route r;
        std::string err;
        if (!parse_route6(text, r, err)) a.fail(fmt::format("{}:{}: {}", file, n, err));
        routes.push_back(r);
      }
    bool first;
    table_ = shared_state<IP6RouteTable>(this, &first);
    if (first) table_->set(std::move(routes));
  }
  void initialize() override {
    r_noroute_ = add_drop_reason("no-route");
    r_discard_ = add_drop_reason("route-to-discard");
    for (auto& r : table_->snapshot()->routes)
      if (r.port >= route_ports())
        throw std::runtime_error(
            fmt::format("route {} names output {}, but {} outputs are connected", r.unparse(), r.port, route_ports()));
    refresh();
  }
  int route_ports() const { return gpu_form_ ? 32 : noutputs(); }
  void cpu_push(int port, PacketBatch* b) override {
    if (table_->version.load(std::memory_order_acquire) != version_) refresh();
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
    if (table_->version.load(std::memory_order_acquire) != version_) refresh();
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
    mirror_.add_handler(*this);
    add_read_handler("table", [this] {
      std::string s;
      for (auto& r : table_->snapshot()->routes) s += r.unparse() + "\n";
      return s;
    });
    add_read_handler("routes", [this] { return std::to_string(table_->snapshot()->routes.size()); });
    add_write_handler("add", [this](const std::string& v) {
      IP6Route r;
      std::string err;
      if (!parse_route6(v, r, err)) throw std::runtime_error(err);
      if (r.port >= route_ports()) throw std::runtime_error(fmt::format("output {} is not connected", r.port));
      if (worker().id() == 0) table_->add(r);
    });
    add_write_handler("remove", [this](const std::string& v) {
      IP6Route r;
      std::string err;
      if (!parse_route6(std::string(trim(v)) + " 0", r, err)) throw std::runtime_error(err);
      if (worker().id() == 0 && !table_->remove(r)) throw std::runtime_error("no such route");
    });
    add_write_handler("flush", [this](const std::string&) {
      if (worker().id() == 0) table_->set({});
    });
  }

 private:
  void refresh() {
    version_ = table_->version.load(std::memory_order_acquire);
    snap_ = table_->snapshot();
    view_ = snap_->lpm.view();
  }
  std::shared_ptr<IP6RouteTable> table_;
  std::shared_ptr<const IP6RouteTable::Snapshot> snap_;
  k::Lpm6View view_;
  uint64_t version_ = ~0ull;
  uint16_t r_noroute_ = 0, r_discard_ = 0;
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
                 {"add", "w", "add or replace a route"},
                 {"remove", "w", "remove ADDR/LEN"},
                 {"flush", "w", "remove all routes"}},
    .example = "CheckIP6Header(OFFSET 14) -> rt :: LookupIP6Route(fd00:1::/64 0, ::/0 fd00:2::2 1);");

}  // namespace shoal
