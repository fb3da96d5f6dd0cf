// IPv6 router elements: CheckIP6Header, LookupIP6Route (binary search on
// prefix lengths), DecIP6HLIM, ICMP6Error.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/kernels/ipfwd.hh"
#include "shoal/kernels/steps/route6.hh"
#include "shoal/offload/element.hh"
#include "shoal/offload/mirror.hh"
#include "shoal/routing/lpm6_build.hh"

namespace shoal {

namespace {
uint64_t load_be64(const uint8_t* p) { return (uint64_t(k::load_be32(p)) << 32) | k::load_be32(p + 4); }
bool is_zero16(const uint8_t* a) {
  for (int i = 0; i < 16; ++i)
    if (a[i]) return false;
  return true;
}
// The IPv6 header through the network header annotation, when whole.
uint8_t* ip6_header(Packet* p) {
  if (!p->has_network_header()) return nullptr;
  int64_t off = p->network_header_offset();
  if (off < 0 || uint64_t(off) + 40 > p->length()) return nullptr;
  return p->network_header();
}
}  // namespace

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
      pfx.push_back({load_be64(r.addr), load_be64(r.addr + 8), r.len, it->second});
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
      hi_.push_back(load_be64(d));
      lo_.push_back(load_be64(d + 8));
    });
    nh_.resize(hi_.size());
    k::lpm6_lookup_batch(view_, uint32_t(hi_.size()), hi_.data(), lo_.data(), nh_.data());
    next_ = 0;
    PacketElement<LookupIP6Route>::push(port, b);
  }
  int process(Packet* p) {
    int32_t nh;
    if (next_ < nh_.size()) {
      nh = nh_[next_++];
    } else {  // not reached through push(): look it up alone
      const uint8_t* d = p->anno().dst_ip6;
      nh = k::lpm6_lookup(view_, load_be64(d), load_be64(d + 8));
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

// ---------------------------------------------------------------- CheckIP6Header
class CheckIP6Header : public PacketElement<CheckIP6Header> {
 public:
  void configure(Args& a) override {
    a.read("OFFSET", off_);
    for (ArgItem* it : a.rest_positional()) {  // BADADDRS, as Click
      std::string_view s = it->text;
      for (size_t i = 0; i < s.size();) {
        size_t e = s.find(' ', i);
        if (e == std::string_view::npos) e = s.size();
        std::string_view one = s.substr(i, e - i);
        i = e + 1;
        if (one.empty()) continue;
        IPv6Addr x;
        if (!parse_ipv6(one, x)) a.fail(*it, fmt::format("bad IPv6 address '{}'", one));
        bad_.push_back(x);
      }
    }
    a.complete();
  }
  void initialize() override {
    r_[0] = add_drop_reason("tiny-packet");
    r_[1] = add_drop_reason("bad-ip-version");
    r_[2] = add_drop_reason("bad-ip-length");
    r_[3] = add_drop_reason("bad-source-address");
  }
  int process(Packet* p) {
    int bad = check(p);
    if (bad < 0) return 0;
    if (noutputs() > 1) return 1;
    return drop_code(r_[bad]);
  }

 private:
  int check(Packet* p) {
    if (uint64_t(off_) + 40 > p->length()) return 0;
    const uint8_t* ip = p->data() + off_;
    if ((ip[0] >> 4) != 6) return 1;
    uint32_t plen = k::load_be16(ip + 4);
    if (uint64_t(off_) + 40 + plen > p->length()) return 2;
    if (ip[8] == 0xff) return 3;  // multicast source (RFC 4291 2.7)
    for (auto& b : bad_)
      if (std::memcmp(ip + 8, b.b.data(), 16) == 0) return 3;
    p->take(p->length() - off_ - 40 - plen);  // link padding
    p->set_network_header(off_);
    p->set_transport_header(off_ + 40);
    std::memcpy(p->anno().dst_ip6, ip + 24, 16);
    return -1;
  }
  uint32_t off_ = 0;
  std::vector<IPv6Addr> bad_;
  uint16_t r_[4] = {};
};
SHOAL_ELEMENT(CheckIP6Header, .name = "CheckIP6Header", .ports = "1/1-2", .processing = "a/ah",
              .summary = "checks IPv6 headers",
              .description =
                  "Checks the IPv6 header at OFFSET: 40 bytes present, version 6, payload length within "
                  "the packet, source not multicast nor one of BADADDRS. Good packets get the network "
                  "header and DST_IP6 annotations, lose link padding, and leave on output 0; bad ones "
                  "leave on output 1 if it exists, else are dropped (tiny-packet, bad-ip-version, "
                  "bad-ip-length, bad-source-address).",
              .args = {{"BADADDRS...", "IPv6 addresses", "source addresses to reject"},
                       {"OFFSET", "unsigned", "where the IPv6 header starts (default 0)"}},
              .example = "FromDump(in.pcap) -> CheckIP6Header(OFFSET 14) -> LookupIP6Route(...);");

// ---------------------------------------------------------------- DecIP6HLIM
class DecIP6HLIM : public PacketElement<DecIP6HLIM> {
 public:
  void initialize() override {
    r_expired_ = add_drop_reason("hlim-expired");
    r_nohdr_ = add_drop_reason("no-ip-header");
  }
  int process(Packet* p) {
    uint8_t* ip = ip6_header(p);
    if (!ip) return drop_code(r_nohdr_);
    if (ip[7] <= 1) {
      expired_.add();
      return noutputs() > 1 ? 1 : drop_code(r_expired_);
    }
    --ip[7];
    return 0;
  }
  void add_handlers() override { add_stat_handler("expired", expired_); }

 private:
  uint16_t r_expired_ = 0, r_nohdr_ = 0;
  Stat expired_;
};
SHOAL_ELEMENT(DecIP6HLIM, .name = "DecIP6HLIM", .ports = "1/1-2", .processing = "a/ah",
              .summary = "decrements the IPv6 hop limit",
              .description =
                  "Decrements the hop limit of the IPv6 header (network header annotation). Packets "
                  "whose hop limit is 1 or 0 leave on output 1 if it exists (for ICMP6Error), else are "
                  "dropped ('hlim-expired').",
              .handlers = {{"expired", "r", "packets whose hop limit expired"}},
              .example = "rt[1] -> dh :: DecIP6HLIM -> ...; dh[1] -> ICMP6Error(fd00:1::1, timeexceeded) -> rt;");

// ---------------------------------------------------------------- ICMP6Error
class ICMP6Error : public Element {
 public:
  void configure(Args& a) override {
    IPv6Addr src;
    std::string type, code = "0";
    a.read_mp("SRC", src).read_mp("TYPE", type).read_p("CODE", code).read("MTU", mtu_);
    a.complete();
    std::memcpy(src_, src.b.data(), 16);
    struct N {
      const char* n;
      int v;
    };
    static const N types[] = {
        {"unreachable", 1}, {"packettoobig", 2}, {"toobig", 2}, {"timeexceeded", 3}, {"parameterproblem", 4}};
    static const N unreach[] = {{"noroute", 0}, {"admin", 1}, {"beyondscope", 2}, {"addr", 3},
                                {"address", 3}, {"port", 4},  {"policy", 5},      {"reject", 6}};
    static const N timeex[] = {{"transit", 0}, {"hlim", 0}, {"reassembly", 1}};
    static const N param[] = {{"header", 0}, {"nextheader", 1}, {"option", 2}};
    auto find = [](auto& table, std::string_view s, int& v) {
      for (auto& e : table)
        if (s == e.n) return v = e.v, true;
      uint64_t x;
      if (parse_uint(s, x) && x < 256) return v = int(x), true;
      return false;
    };
    int t, c = 0;
    if (!find(types, type, t) || t < 1 || t > 4) a.fail(fmt::format("unknown ICMPv6 error type '{}'", type));
    bool ok = t == 1   ? find(unreach, code, c)
              : t == 3 ? find(timeex, code, c)
              : t == 4 ? find(param, code, c)
                       : code == "0";
    if (!ok) a.fail(fmt::format("'{}' is not a code of ICMPv6 type '{}'", code, type));
    type_ = uint8_t(t);
    code_ = uint8_t(c);
    if (mtu_ < 1280) a.fail("MTU must be at least 1280 (RFC 8200)");
  }
  void initialize() override {
    r_sent_ = add_drop_reason("answered-with-icmp");
    r_skip_ = add_drop_reason("no-icmp-allowed");
    r_bad_ = add_drop_reason("no-ip-header");
    r_pool_ = add_drop_reason("pool-exhausted");
  }
  void push(int, PacketBatch* b) override {
    PacketBatch* out = nullptr;
    b->for_each([&](uint32_t i, Packet* p) {
      b->kill(i);
      uint16_t why = r_skip_;
      Packet* q = make_error(p, why);
      if (!q) return drop(p, why);
      drop(p, r_sent_);
      if (!out) out = new_batch(), out->anno = b->anno;
      out->append(q);
      if (out->full()) output_push(0, out), out = nullptr;
    });
    recycle(b);
    if (out) output_push(0, out);
  }
  void add_handlers() override { add_stat_handler("errors", errors_); }

 private:
  // RFC 4443 2.4(e): no error for errors, multicast destinations (but packet
  // too big), link multicasts, or unspecified or multicast sources.
  Packet* make_error(Packet* p, uint16_t& why) {
    const uint8_t* ip = ip6_header(p);
    if (!ip) return why = r_bad_, nullptr;
    if (ip[8] == 0xff || is_zero16(ip + 8)) return nullptr;
    bool mcast =
        ip[24] == 0xff || p->anno().packet_type == Anno::kMulticast || p->anno().packet_type == Anno::kBroadcast;
    if (mcast && type_ != 2) return nullptr;
    uint64_t avail = p->length() - uint64_t(p->network_header_offset());
    if (ip[6] == 58 && avail > 40 && ip[40] < 128) return nullptr;  // an ICMPv6 error itself
    uint32_t quote = uint32_t(std::min<uint64_t>(avail, 1280 - 48));
    uint32_t len = 48 + quote;
    Packet* q = worker().pool().alloc(len);
    if (!q) return why = r_pool_, nullptr;
    created();
    uint8_t* n = q->data();
    std::memset(n, 0, 48);
    n[0] = 0x60;
    k::store_be16(n + 4, uint16_t(8 + quote));
    n[6] = 58;
    n[7] = 255;
    std::memcpy(n + 8, src_, 16);
    std::memcpy(n + 24, ip + 8, 16);
    uint8_t* ic = n + 40;
    ic[0] = type_;
    ic[1] = code_;
    if (type_ == 2) k::store_be32(ic + 4, mtu_);
    if (type_ == 4) k::store_be32(ic + 4, p->anno().param_off);
    std::memcpy(ic + 8, ip, quote);
    uint32_t sum = k::ipv6_pseudo_sum(n + 8, n + 24, 58, 8 + quote);
    k::store_be16(ic + 2, k::csum_fold(k::csum_partial(ic, 8 + quote, sum)));
    q->set_network_header(0);
    q->set_transport_header(40);
    q->anno().timestamp_ns = p->anno().timestamp_ns;
    std::memcpy(q->anno().dst_ip6, ip + 8, 16);
    errors_.add();
    return q;
  }

  uint8_t src_[16] = {}, type_ = 0, code_ = 0;
  uint32_t mtu_ = 1280;
  uint16_t r_sent_ = 0, r_skip_ = 0, r_bad_ = 0, r_pool_ = 0;
  Stat errors_;
};
SHOAL_ELEMENT(ICMP6Error, .name = "ICMP6Error", .ports = "1/1", .processing = "h/h",
              .summary = "answers IPv6 packets with ICMPv6 errors",
              .description =
                  "Replaces each IPv6 packet (network header annotation) by an ICMPv6 error (RFC 4443) from SRC "
                  "to its source, quoting as much as fits 1280 bytes. TYPE: unreachable (codes noroute, admin, "
                  "beyondscope, address, port, policy, reject), packettoobig (MTU), timeexceeded (transit, "
                  "reassembly), parameterproblem (header, nextheader, option; the pointer annotation); numbers "
                  "too. No error answers an ICMPv6 error, an unspecified or multicast source, or a multicast "
                  "(except packet too big): those are dropped ('no-icmp-allowed'). The original is counted as "
                  "dropped ('answered-with-icmp'); the error gets DST_IP6.",
              .args = {{"SRC", "IPv6 address", "the router's address"},
                       {"TYPE", "name | number", "ICMPv6 type"},
                       {"CODE", "name | number", "ICMPv6 code (default 0)"},
                       {"MTU", "unsigned", "the MTU a packettoobig error reports (default 1280)"}},
              .handlers = {{"errors", "r", "errors made"}},
              .example = "dh[1] -> ICMP6Error(fd00:1::1, timeexceeded) -> rt;");

}  // namespace shoal
