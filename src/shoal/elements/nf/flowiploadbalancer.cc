#include "shoal/elements/nf/flowiploadbalancer.hh"

#include <fmt/format.h>

#include <algorithm>

#include "shoal/elements/common.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/kernels/steps/flow_lb.hh"

namespace shoal {

namespace {

std::string addr_text(uint32_t a) {
  return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

}  // namespace

void FlowIPLoadBalancer::configure(Args& a) {
  std::string mode = "maglev";
  std::optional<IPv4Addr> vip;
  a.read("VIP", vip).read("LB_MODE", mode).read("TABLE", table_size_);
  Args::note_keyword("DST");
  for (ArgItem& it : a.items()) {
    if (it.used || it.keyword != "DST") continue;
    it.used = true;
    std::string bad;
    if (!parse_ipv4_list(it.value, initial_, bad)) a.fail(it, fmt::format("DST: '{}' is not an IPv4 address", bad));
  }
  a.complete();
  if (mode == "maglev")
    mode_ = Mode::Maglev;
  else if (mode == "hash")
    mode_ = Mode::Hash;
  else if (mode == "rr")
    mode_ = Mode::RoundRobin;
  else
    a.fail(fmt::format("LB_MODE '{}': maglev, hash or rr", mode));
  if (vip) vip_ = vip->host(), has_vip_ = true;
  std::string err;
  if (!make(initial_, err)) a.fail(err);
  mgr_ = &FlowIPManager::require(this, a);
  off_ = mgr_->table().reserve(sizeof(LbState), 4, FlowIPManager::state_owner(*this));
}

void FlowIPLoadBalancer::initialize() {
  r_no_flow_ = add_drop_reason("no-flow");
  r_no_backend_ = add_drop_reason("no-backend");
  r_not_ipv4_ = add_drop_reason("not-ipv4");
  bool first = false;
  shared_ = shared_state<Shared>(this, &first);
  if (first) {
    std::string err;
    install(make(initial_, err));
  }
  set_ = shared_->set;
}

std::shared_ptr<FlowIPLoadBalancer::Set> FlowIPLoadBalancer::make(std::vector<uint32_t> addrs, std::string& err) const {
  auto s = std::make_shared<Set>();
  s->sorted = addrs;
  std::sort(s->sorted.begin(), s->sorted.end());
  if (std::adjacent_find(s->sorted.begin(), s->sorted.end()) != s->sorted.end())
    return err = "a backend is named twice", nullptr;
  if (std::find(addrs.begin(), addrs.end(), 0u) != addrs.end()) return err = "0.0.0.0 is not a backend", nullptr;
  std::vector<std::string> names;
  names.reserve(addrs.size());
  for (uint32_t x : addrs) names.push_back(addr_text(x));
  if (mode_ == Mode::Maglev && !s->maglev.build(names, table_size_, err)) return nullptr;
  s->flows.reset(new std::atomic<uint64_t>[addrs.size() + 1]());
  s->addrs = std::move(addrs);
  k::LbSet& v = s->view;
  v.addrs = s->addrs.data();
  v.sorted = s->sorted.data();
  v.n = uint32_t(s->addrs.size());
  v.mode = mode_ == Mode::Maglev ? k::kLbMaglev : mode_ == Mode::Hash ? k::kLbHash : k::kLbRoundRobin;
  if (mode_ == Mode::Maglev) v.maglev = s->maglev.view();
  v.has_vip = has_vip_;
  v.vip = vip_;
  return s;
}

void FlowIPLoadBalancer::install(std::shared_ptr<Set> s) {
  std::lock_guard<std::mutex> g(shared_->mu);
  s->version = shared_->version.load() + 1;
  s->view.version = s->version;
  shared_->set = std::move(s);
  shared_->version.store(shared_->set->version, std::memory_order_release);
}

int FlowIPLoadBalancer::balance(flow::FlowTable& t, Packet* p) {
  uint32_t id = p->anno().flow;
  if (!id) return drop_code(r_no_flow_);
  uint32_t len = 0;
  auto* ip = const_cast<uint8_t*>(flow_ip_header(p, len));
  auto* st = reinterpret_cast<LbState*>(t.state(id) + off_);
  uint32_t note = 0;
  int r = k::lb_process(set_->view, *st, ip, len, p->anno().flow_dir, t.flow(id).hash, &rr_, note);
  count(*set_, note);
  return r == k::kLbNotIPv4 ? drop_code(r_not_ipv4_) : r == k::kLbNoBackend ? drop_code(r_no_backend_) : 0;
}

void FlowIPLoadBalancer::count(const Set& s, uint32_t note) {
  if (note & k::kLbReassigned) reassigned_.add();
  if (note & k::kLbPassed) passed_.add();
  if (uint32_t b = note & k::kLbBackendMask) {
    s.flows[b - 1].fetch_add(1, std::memory_order_relaxed);
    balanced_.add();
  }
}

void FlowIPLoadBalancer::refresh() {
  if (shared_->version.load(std::memory_order_acquire) != set_->version) {
    std::lock_guard<std::mutex> g(shared_->mu);
    set_ = shared_->set;
  }
}

// Round robin is sequential (one counter per worker): it stays on the CPU.
void FlowIPLoadBalancer::push(int port, PacketBatch* b) {
  if (mode_ == Mode::RoundRobin) return cpu_push(port, b);
  OffloadableElement::push(port, b);
}

void FlowIPLoadBalancer::cpu_push(int, PacketBatch* b) {
  refresh();
  flow::FlowTable& t = mgr_->table();
  bool uniform = true;
  b->for_each([&](uint32_t i, Packet* p) {
    int out = balance(t, p);
    b->result(i) = int16_t(out);
    uniform &= out == 0;
  });
  if (uniform) return output_push(0, b);
  dispatch(b);
}

void FlowIPLoadBalancer::offload_declare(offload::Plan& plan) {
  offload::Range r;
  r.anchor = offload::Anchor::IP;
  r.begin = 0;
  r.end = 80;  // a 60-byte IPv4 header and the TCP checksum
  r.write = true;
  range_ = plan.add(r);
  state_rec_ = plan.add_flow_state(mgr_, off_, sizeof(LbState));
  block_ = plan.add_block(0, 4);
}

bool FlowIPLoadBalancer::offload_launch(offload::Launch& L, std::string& err) {
  refresh();
  offload_ctl(L);
  launched_ = set_;
  k::FlowLBStep::Params p{L.view,
                          L.ctl,
                          set_->view,
                          range_,
                          state_rec_,
                          {0, drop_code(r_not_ipv4_), drop_code(r_no_backend_)},
                          drop_code(r_no_flow_),
                          reinterpret_cast<uint32_t*>(L.block_out(block_))};
  if (L.host) {
    L.keep(set_);
  } else {
    const Set& s = *set_;
    const k::MaglevView m = s.view.maglev;
    if (!mirror_.sync(L, set_,
                      {{s.addrs.data(), s.addrs.size() * 4},
                       {s.sorted.data(), s.sorted.size() * 4},
                       {m.entry, size_t(m.size) * sizeof(uint16_t)}},
                      err))
      return false;
    p.set.addrs = mirror_.at<uint32_t>(0);
    p.set.sorted = mirror_.at<uint32_t>(1);
    p.set.maglev.entry = mirror_.at<uint16_t>(2);
  }
  L.run_flows<k::FlowLBStep>(p);
  return true;
}

void FlowIPLoadBalancer::offload_post(offload::Aggregate& a, size_t) {
  const auto* out = reinterpret_cast<const uint32_t*>(a.block_out(block_));
  for (uint32_t i = 0; i < a.n; ++i)
    if (out[i]) count(*launched_, out[i] & ~0x80000000u);
}

void FlowIPLoadBalancer::change(const std::string& what, const std::string& v) {
  if (worker().id() != 0) return;  // writes reach every copy; the set changes once
  std::vector<uint32_t> given;
  std::string bad, err;
  if (!parse_ipv4_list(v, given, bad)) throw std::runtime_error(fmt::format("'{}' is not an IPv4 address", bad));
  std::vector<uint32_t> next;
  {
    std::lock_guard<std::mutex> g(shared_->mu);
    next = shared_->set->addrs;
  }
  if (what == "set") {
    next = given;
  } else {
    for (uint32_t x : given) {
      auto at = std::find(next.begin(), next.end(), x);
      if (what == "add") {
        if (at != next.end()) throw std::runtime_error(fmt::format("{} is already a backend", addr_text(x)));
        next.push_back(x);
      } else {
        if (at == next.end()) throw std::runtime_error(fmt::format("{} is not a backend", addr_text(x)));
        next.erase(at);
      }
    }
  }
  auto s = make(std::move(next), err);
  if (!s) throw std::runtime_error(err);
  install(std::move(s));
}

void FlowIPLoadBalancer::add_handlers() {
  mirror_.add_handler(*this);
  add_stat_handler("balanced", balanced_);
  add_stat_handler("reassigned", reassigned_);
  add_stat_handler("passed", passed_);
  add_read_handler(
      "version", [this] { return std::to_string(shared_->version.load()); }, Agg::First, true);
  add_read_handler("backends", [this] {
    std::shared_ptr<const Set> s;
    {
      std::lock_guard<std::mutex> g(shared_->mu);
      s = shared_->set;
    }
    std::vector<uint32_t> entries = mode_ == Mode::Maglev ? s->maglev.counts() : std::vector<uint32_t>();
    std::string out;
    for (size_t i = 0; i < s->addrs.size(); ++i) {
      out += fmt::format("{}\t{} connections", addr_text(s->addrs[i]), s->flows[i].load());
      if (!entries.empty()) out += fmt::format("\t{} of {} table entries", entries[i], table_size_);
      out += "\n";
    }
    return out;
  });
  add_write_handler("add", [this](const std::string& v) { change("add", v); });
  add_write_handler("remove", [this](const std::string& v) { change("remove", v); });
  add_write_handler("set", [this](const std::string& v) { change("set", v); });
}

SHOAL_ELEMENT(
    FlowIPLoadBalancer, .name = "FlowIPLoadBalancer", .ports = "1/1", .processing = "h/h",
    .summary = "spreads connections over backends by rewriting their destination (Maglev hashing), sticky per flow",
    .description =
        "Needs a FlowIPManager upstream. The first packet of a connection picks a backend; the choice stays in "
        "the flow's state (8 bytes in the flow layer), so every later packet of the connection goes to the same "
        "backend whatever happens to the backend set, unless its own backend is removed (then the connection is "
        "given another one, counted in 'reassigned'). The originator's packets get the backend as their "
        "destination, with the IP and TCP/UDP checksums updated; with VIP, only connections to that address are "
        "balanced and the others pass untouched. Replies from the backends go through a "
        "FlowIPLoadBalancerReverse (or return directly to clients, as Maglev's do).\n\n"
        "LB_MODE maglev (the default) is Maglev's consistent hashing (Eisenbud et al., NSDI 2016): a table of "
        "TABLE entries (a prime) in which each backend holds an equal share, give or take one entry; a backend "
        "added or removed moves few of the others' entries, so the choices for new connections hardly change. "
        "'hash' is the flow hash modulo the backend count (most choices change when the count does), 'rr' "
        "round robin per worker (FastClick's names).\n\n"
        "Backends change at run time through add, remove and set, between batches on every worker, losing no "
        "packet. Dropped: packets without a flow (no-flow), non-IPv4 packets (not-ipv4), and new connections "
        "while there is no backend (no-backend).\n\n"
        "Offloadable (NBA's form; maglev and hash modes: round robin is sequential and stays on the CPU): a device "
        "thread takes each flow's packets in order against its state (see Firewall); the decision is one "
        "host+device function, kernels/flowlb.hh.",
    .args = {{"DST", "IPv4 addresses", "backends; repeated, or several in one (space-separated)"},
             {"VIP", "IPv4 address", "the virtual address: only connections to it are balanced (default: all)"},
             {"LB_MODE", "maglev|hash|rr", "how a backend is picked (default maglev)"},
             {"TABLE", "prime",
              "Maglev table entries (default 65537; at least 100x the backends keeps shares "
              "within 1%)"}},
    .handlers = {{"balanced", "r", "connections given a backend"},
                 {"reassigned", "r", "connections moved because their backend was removed"},
                 {"passed", "r",
                  "packets passed untouched: of connections to other addresses than VIP, or replies of connections "
                  "without a backend"},
                 {"backends", "r", "each backend, the connections it was given and its share of the table"},
                 {"version", "r", "how many times the backend set changed (1: as configured)"},
                 {"add", "w", "add backends (addresses, space-separated)"},
                 {"remove", "w", "remove backends"},
                 {"set", "w", "replace the backend set"},
                 {"offload_uploads", "r", "backend sets copied to the device"}},
    .example =
        "FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> FlowIPManager\n"
        "  -> lb :: FlowIPLoadBalancer(VIP 10.0.0.100, DST 10.0.1.1, DST 10.0.1.2, DST 10.0.1.3)\n"
        "  -> ...;\n"
        "// shoal ctl -p 7777 write lb.add 10.0.1.4");

}  // namespace shoal
