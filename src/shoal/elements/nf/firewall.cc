// Firewall: a stateful firewall on the flow layer. Ordered ClassBench rules
// decide each connection once, at its first packet; the verdict stays in
// the flow's state, the replies of admitted connections (and ICMP errors
// about them) come back, nothing else does.
#include <fmt/format.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "shoal/classbench/classify_build.hh"
#include "shoal/core/diag.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/flow/flowipmanager.hh"
#include "shoal/kernels/firewall.hh"
#include "shoal/kernels/flowkey.hh"
#include "shoal/kernels/steps/firewall.hh"
#include "shoal/nf/fwrules.hh"
#include "shoal/offload/element.hh"
#include "shoal/offload/mirror.hh"

namespace shoal {

namespace {

// One rule set: its trees and the connections each rule decided.
struct FwSet {
  k::ClsTrees trees;
  std::unique_ptr<std::atomic<uint64_t>[]> hits;  // per rule, then the default policy
  uint32_t gen = 1;
};

// The live rule set, shared by every worker's copy, replaced whole.
struct FwTable {
  std::mutex mu;
  std::shared_ptr<const FwSet> set;
  std::atomic<uint32_t> gen{0};
  std::shared_ptr<const FwSet> get() {
    std::lock_guard<std::mutex> g(mu);
    return set;
  }
};

}  // namespace

class Firewall : public offload::OffloadableElement<Element> {
 public:
  void configure(Args& a) override {
    InputPath rules;
    std::string dflt = "deny";
    bool window = true;
    a.read("RULES", rules).read("DEFAULT", dflt).read("MIDSTREAM", midstream_).read("TCP_WINDOW", window);
    for (ArgItem* it : a.rest_positional()) {
      k::ClsRule r;
      std::string err, text = it->text;
      if (!text.empty() && text[0] == '"' && !parse_string(text, text)) a.fail(*it, "unterminated string");
      if (!nf::parse_fw_rule(text, r, err)) a.fail(*it, err);
      inline_.push_back(r);
    }
    a.complete();
    file_ = rules.path;
    if (file_.empty() && inline_.empty()) a.fail("give the rules: RULES file, or rules as arguments");
    if (!file_.empty() && !inline_.empty()) a.fail("rules come from RULES or from the arguments, not both");
    if (dflt == "allow" || dflt == "accept")
      default_accept_ = true;
    else if (dflt != "deny" && dflt != "drop")
      a.fail(fmt::format("DEFAULT '{}': allow or deny", dflt));
    mgr_ = &FlowIPManager::require(this, a);
    off_ = mgr_->table().reserve(sizeof(k::FwState), 4, FlowIPManager::state_owner(*this));
    if (window) mgr_->want_tcp_window();
    loc_ = a.element_loc();
  }
  void initialize() override {
    r_denied_ = add_drop_reason("denied");
    r_invalid_ = add_drop_reason("invalid");
    r_not_admitted_ = add_drop_reason("not-admitted");
    r_no_flow_ = add_drop_reason("no-flow");
    reason_[k::kFwDenied] = r_denied_;
    reason_[k::kFwInvalid] = r_invalid_;
    reason_[k::kFwNotAdmitted] = r_not_admitted_;
    reason_[k::kFwNoFlow] = r_no_flow_;
    bool first = false;
    table_ = shared_state<FwTable>(this, &first);
    if (first) {
      std::string err;
      auto s = file_.empty() ? build(inline_, err) : load(file_, err);
      if (!s) throw ConfigError(loc_, fmt::format("{}: {}", name(), err));
      install(std::move(s));
    }
    if (!table_->get()) throw ConfigError(loc_, fmt::format("{}: the rules did not load", name()));
    refresh();
  }

  void cpu_push(int, PacketBatch* b) override {
    if (table_->gen.load(std::memory_order_acquire) != rules_.gen) refresh();
    flow::FlowTable& t = mgr_->table();
    bool uniform = true;
    b->for_each([&](uint32_t i, Packet* p) {
      int out = result_code(decide(t, p));
      b->result(i) = int16_t(out);
      uniform &= out == 0;
    });
    if (uniform) return output_push(0, b);
    dispatch(b);
  }

  // On a device (NBA's form): one thread per flow, kernels/steps/firewall.hh.
  void offload_declare(offload::Plan& plan) override {
    offload::Range r;
    r.anchor = offload::Anchor::IP;
    r.begin = 0;
    r.end = int32_t(k::kFwHeaderBytes);
    range_ = plan.add(r);
    state_rec_ = plan.add_flow_state(mgr_, off_, sizeof(k::FwState));
    block_ = plan.add_block(0, 4);
  }
  bool offload_launch(offload::Launch& L, std::string& err) override {
    if (table_->gen.load(std::memory_order_acquire) != rules_.gen) refresh();
    offload_ctl(L);
    launched_ = set_;
    k::FirewallStep::Params p{
        L.view, L.ctl, rules_, range_, state_rec_, {}, reinterpret_cast<uint32_t*>(L.block_out(block_))};
    for (int r = 0; r < 5; ++r) p.code[r] = result_code(r);
    if (L.host) {
      L.keep(set_);
    } else {
      const k::ClsTrees& t = set_->trees;
      auto piece = [](const auto& v) { return offload::TableMirror::Piece{v.data(), v.size() * sizeof(v[0])}; };
      if (!mirror_.sync(
              L, set_,
              {piece(t.rules()), piece(t.nodes()), piece(t.children()), piece(t.leaf_rules()), piece(t.roots())}, err))
        return false;
      p.rules.view.rules = mirror_.at<k::ClsRule>(0);
      p.rules.view.nodes = mirror_.at<k::ClsNode>(1);
      p.rules.view.children = mirror_.at<uint32_t>(2);
      p.rules.view.leaf_rules = mirror_.at<uint32_t>(3);
      p.rules.view.roots = mirror_.at<uint32_t>(4);
    }
    L.run_flows<k::FirewallStep>(p);
    return true;
  }
  void offload_post(offload::Aggregate& a, size_t) override {
    const auto* out = reinterpret_cast<const uint32_t*>(a.block_out(block_));
    for (uint32_t i = 0; i < a.n; ++i) {
      uint32_t w = out[i];
      if (!w) continue;  // the packet did not reach this step
      int res = int(w & 0xff) - 1;
      if (res == k::kFwNoFlow)
        no_flow_.add();
      else
        n_[res].add();
      if (w >> 8) count_evaluation(*launched_, int32_t(w >> 8) - 2);
    }
  }

  void add_handlers() override {
    mirror_.add_handler(*this);
    add_stat_handler("passed", n_[k::kFwPass]);
    add_stat_handler("denied", n_[k::kFwDenied]);
    add_stat_handler("invalid", n_[k::kFwInvalid]);
    add_stat_handler("not_admitted", n_[k::kFwNotAdmitted]);
    add_stat_handler("no_flow", no_flow_);
    add_stat_handler("evaluations", evaluations_);
    add_read_handler(
        "rules", [this] { return std::to_string(table_->get()->trees.rules().size()); }, Agg::First, true);
    add_read_handler(
        "generation", [this] { return std::to_string(table_->gen.load()); }, Agg::First, true);
    add_read_handler("table", [this] {
      auto s = table_->get();
      const auto& rules = s->trees.rules();
      std::string out;
      for (size_t i = 0; i < rules.size(); ++i)
        out += fmt::format("{}\t# {} connections\n", nf::unparse_fw_rule(rules[i]), s->hits[i].load());
      out += fmt::format("# default {}: {} connections\n", default_accept_ ? "allow" : "deny",
                         s->hits[rules.size()].load());
      return out;
    });
    // Writes reach every worker's copy; the shared set changes once.
    add_write_handler("reload", [this](const std::string&) {
      if (worker().id() != 0) return;
      if (file_.empty()) throw std::runtime_error("the rules came from the arguments: nothing to reload");
      replace(load(file_, err_));
    });
    add_write_handler("load", [this](const std::string& v) {
      if (worker().id() != 0) return;
      std::string path(trim(v));
      replace(load(path, err_));
      file_ = path;
    });
    add_write_handler("rules", [this](const std::string& v) {
      if (worker().id() != 0) return;
      std::vector<k::ClsRule> rules;
      if (!nf::parse_fw_rules(v, "rules", rules, err_)) throw std::runtime_error(err_);
      replace(build(std::move(rules), err_));
    });
  }

 private:
  int decide(flow::FlowTable& t, Packet* p) {
    uint32_t id = p->anno().flow;
    if (!id) {
      no_flow_.add();
      return k::kFwNoFlow;
    }
    uint32_t len = 0;
    const uint8_t* ip = flow_ip_header(p, len);
    const Anno& an = p->anno();
    k::FwPacket fp =
        k::fw_packet(ip, len, uint8_t(an.flow_dir | (an.flow_facts & flow::kFactInvalid ? k::kFlowDirInvalid : 0)));
    auto* st = reinterpret_cast<k::FwState*>(t.state(id) + off_);
    bool evaluated;
    int r = k::fw_process(rules_, *st, fp, evaluated);
    if (evaluated) count_evaluation(*set_, st->rule);
    n_[r].add();
    return r;
  }
  void count_evaluation(const FwSet& s, int32_t rule) {
    evaluations_.add();
    s.hits[rule >= 0 ? size_t(rule) : s.trees.rules().size()].fetch_add(1, std::memory_order_relaxed);
  }
  // What the element does with a packet decide() gave `r`: 0 (on), output
  // 1 when connected, else a drop with the reason.
  int result_code(int r) const {
    if (r == 0) return 0;
    return noutputs() > 1 ? 1 : drop_code(reason_[r]);
  }
  std::shared_ptr<FwSet> load(const std::string& path, std::string& err) {
    std::vector<k::ClsRule> rules;
    if (!nf::load_fw_rules(path, rules, err)) return nullptr;
    return build(std::move(rules), err);
  }
  std::shared_ptr<FwSet> build(std::vector<k::ClsRule> rules, std::string& err) {
    auto s = std::make_shared<FwSet>();
    size_t n = rules.size();
    if (!s->trees.build(std::move(rules), err)) return nullptr;
    s->hits.reset(new std::atomic<uint64_t>[n + 1]());
    return s;
  }
  void install(std::shared_ptr<FwSet> s) {
    std::lock_guard<std::mutex> g(table_->mu);
    s->gen = table_->gen.load() + 1;
    table_->set = std::move(s);
    table_->gen.store(table_->set->gen, std::memory_order_release);
  }
  void replace(std::shared_ptr<FwSet> s) {
    if (!s) throw std::runtime_error(err_);
    install(std::move(s));
  }
  void refresh() {
    set_ = table_->get();
    rules_.view = set_->trees.view();
    rules_.gen = set_->gen;
    rules_.default_accept = default_accept_;
    rules_.midstream = midstream_;
  }

  std::string file_, err_;
  std::vector<k::ClsRule> inline_;
  bool default_accept_ = false, midstream_ = false;
  FlowIPManager* mgr_ = nullptr;
  uint32_t off_ = 0;
  Loc loc_;
  std::shared_ptr<FwTable> table_;
  std::shared_ptr<const FwSet> set_;
  std::shared_ptr<const FwSet> launched_;  // the rules the aggregate being processed was launched with
  offload::TableMirror mirror_;
  uint32_t range_ = 0, state_rec_ = 0, block_ = 0;
  k::FwRules rules_;
  uint16_t r_denied_ = 0, r_invalid_ = 0, r_not_admitted_ = 0, r_no_flow_ = 0;
  uint16_t reason_[5] = {};
  Stat n_[4], no_flow_, evaluations_;
};
SHOAL_ELEMENT(
    Firewall, .name = "Firewall", .ports = "1/1-2", .processing = "h/h",
    .summary =
        "stateful firewall: ordered rules decide each connection once; only admitted connections' replies "
        "come back",
    .description =
        "Needs a FlowIPManager upstream. The first packet of each connection (its originator's) is matched against "
        "ordered rules, first match wins; the verdict is kept in the flow's state (12 bytes in the flow layer), so "
        "later packets cost one state read. Packets from the responder pass only when the connection was "
        "admitted (the return traffic of established connections), and so do ICMP errors that quote an admitted "
        "connection (conntrack's RELATED); a reply to a connection never admitted is 'not-admitted'. TCP follows "
        "conntrack: segments whose flags no valid segment carries (SYN+FIN, SYN+RST, no flags, FIN without ACK, "
        "...: Linux's tcp_valid_flags) are 'invalid', and so is a new connection whose first segment is not a SYN, "
        "unless MIDSTREAM is true (then such a connection is decided by the rules like any other). With TCP_WINDOW "
        "(the default) the flow layer checks each segment against its connection's windows as conntrack does "
        "(see FlowIPManager), and a segment it finds INVALID is dropped 'invalid': one beyond the receiver's "
        "window, one that acknowledges data never sent, a reset before the number the other side acknowledged "
        "(a blind reset); such a segment does not close or move the connection either, so the firewall's "
        "conntrack-like state stays the endpoints' (iptables' '-m conntrack --ctstate INVALID -j DROP').\n\n"
        "A rule is its action (allow or deny; accept and drop mean the same) then a ClassBench filter: "
        "'allow @SRC/LEN DST/LEN SPLO : SPHI DPLO : DPHI PROTO/MASK [FLAGS/MASK]' (see SDNClassifier); rules "
        "without 'ethertype' are for IPv4, and IPv6 connections are decided by rules that name 'ethertype "
        "0x86dd' (or any), else by DEFAULT. The lookup is SDNClassifier's cut trees; the per-packet decision "
        "is one host+device function (kernels/firewall.hh).\n\n"
        "Changing the rules (the reload, load and rules handlers) takes effect between batches on every worker; "
        "each connection already decided is decided again at its next packet, against the new rules, so a new "
        "deny rule cuts live connections too. Packets that are not admitted are dropped with their reason "
        "(denied, invalid, not-admitted, and no-flow for packets the flow layer gave no flow), or leave on output "
        "1 when it is connected.\n\n"
        "Offloadable (NBA's form, after an OffloadBalancer): with the offloadable flow functions after it "
        "(FlowIPLoadBalancer, FlowRateLimiter) it forms one device chain, in which the packets of each flow are "
        "grouped and one device thread runs the chain over a flow's packets in arrival order against its state "
        "(GPUNFV's flow actors), the state going to the device and back with the aggregate; the same packets "
        "and state result as on the CPU.",
    .args = {{"RULE...", "firewall rule", "rules as arguments, one per argument (instead of RULES)"},
             {"RULES", "file", "rule file: one rule a line, '#' comments"},
             {"DEFAULT", "allow|deny", "verdict for connections no rule matches (default deny)"},
             {"MIDSTREAM", "boolean", "decide TCP connections first seen after their SYN (default false: invalid)"},
             {"TCP_WINDOW", "boolean",
              "have the flow layer track TCP windows, and drop segments outside them as invalid (default true; "
              "false: TCP states follow the flags alone)"}},
    .handlers = {{"passed", "r", "packets admitted"},
                 {"denied", "r", "packets of denied connections"},
                 {"invalid", "r", "invalid TCP packets (flags, a new connection without SYN, outside the window)"},
                 {"not_admitted", "r", "replies and ICMP errors for connections never admitted"},
                 {"no_flow", "r", "packets without a flow"},
                 {"evaluations", "r", "times a connection was matched against the rules"},
                 {"rules", "rw", "rules loaded; a write replaces the rules with the text written (a rule a line)"},
                 {"generation", "r", "how many times the rules were (re)loaded"},
                 {"table", "r", "the rules with the connections each decided, and the default's"},
                 {"reload", "w", "read the RULES file again (the old rules stay if it does not load)"},
                 {"load", "w", "load another rule file (and reload from it from now on)"},
                 {"offload_uploads", "r", "rule sets copied to the device"}},
    .example =
        "FromDump(in.pcap, STOP true) -> FlowIPManager\n"
        "  -> Firewall(\"allow @10.0.0.0/8 0.0.0.0/0 0 : 65535 80 : 80 0x06/0xFF\",\n"
        "              \"allow @10.0.0.0/8 0.0.0.0/0 0 : 65535 53 : 53 0x11/0xFF\")\n"
        "  -> ToDump(out.pcap);");

}  // namespace shoal
