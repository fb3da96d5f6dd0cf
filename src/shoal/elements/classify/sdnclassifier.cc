// SDNClassifier (and GPUSDNClassifier, its Snap form): multi-field
// classification of Ethernet frames against a ClassBench rule set (source and
// destination prefixes, port ranges, protocol and TCP flags under masks,
// Ethernet type, VLAN), first match wins, each rule's action an output. The
// rules and their cut trees (classbench/classify_build.hh) are shared by every
// worker and replaced whole on reload; the lookup is the same function on the
// CPU, the host backend and the GPU.
#include <fmt/format.h>

#include <atomic>
#include <mutex>

#include "shoal/classbench/classbench.hh"
#include "shoal/classbench/classify_build.hh"
#include "shoal/core/diag.hh"
#include "shoal/elements/common.hh"
#include "shoal/kernels/steps/classify.hh"
#include "shoal/offload/element.hh"
#include "shoal/offload/mirror.hh"

namespace shoal {

namespace {

// The live rule set: a snapshot pointer readers copy, swapped on reload.
struct SdnTable {
  std::mutex mu;
  std::shared_ptr<const k::ClsTrees> trees;
  std::atomic<uint64_t> version{0};
  std::shared_ptr<const k::ClsTrees> get() {
    std::lock_guard<std::mutex> g(mu);
    return trees;
  }
  void set(std::shared_ptr<const k::ClsTrees> t) {
    std::lock_guard<std::mutex> g(mu);
    trees = std::move(t);
    version.fetch_add(1);
  }
};

}  // namespace

class SDNClassifier : public offload::OffloadableElement<PacketElement<SDNClassifier>> {
 public:
  void configure(Args& a) override {
    InputPath rules;
    a.read("RULES", rules).read("OFFSET", offset_).read("NOMATCH", nomatch_).read("BINTH", opt_.binth);
    a.read("SPFAC", opt_.spfac);
    for (ArgItem* it : a.rest_positional()) {
      k::ClsRule r;
      std::string err;
      if (!classify::parse_rule(it->text, r, err)) a.fail(*it, err);
      inline_.push_back(r);
    }
    a.complete();
    file_ = rules.path;
    if (file_.empty() && inline_.empty()) a.fail("give the rules: RULES file, or rules as arguments");
    if (!file_.empty() && !inline_.empty()) a.fail("rules come from RULES or from the arguments, not both");
    if (offset_ < 0) a.fail("OFFSET must be >= 0");
    if (opt_.binth < 1 || opt_.binth > 1024) a.fail("BINTH: 1-1024");
    if (opt_.spfac < 1 || opt_.spfac > 64) a.fail("SPFAC: 1-64");
    loc_ = a.element_loc();
  }
  void initialize() override {
    r_runt_ = add_drop_reason("runt");
    r_badip_ = add_drop_reason("bad-ip-header");
    r_nomatch_ = add_drop_reason("no-match");
    if (nomatch_ >= route_ports())
      throw ConfigError(loc_, fmt::format("{}: NOMATCH {} is not an output", name(), nomatch_));
    bool first = false;
    table_ = shared_state<SdnTable>(this, &first);
    if (first) {
      std::string err;
      auto t = load(err);
      if (!t) throw ConfigError(loc_, fmt::format("{}: {}", name(), err));
      table_->set(std::move(t));
    }
    if (!table_->get()) throw ConfigError(loc_, fmt::format("{}: the rules did not load", name()));
    refresh();
  }
  // Outputs a rule may name (the GPU form: predicate bits).
  int route_ports() const { return gpu_form_ ? 32 : noutputs(); }

  void push(int port, PacketBatch* b) override {
    if (table_->version.load(std::memory_order_relaxed) != version_) refresh();
    OffloadableElement::push(port, b);
  }
  int process(Packet* p) {
    uint32_t len = p->length() > uint32_t(offset_) ? p->length() - uint32_t(offset_) : 0;
    if (len > k::kClsKeyBytes) len = k::kClsKeyBytes;  // what the device sees too
    bool missed;
    int r = k::cls_classify(view_, p->data() + offset_, len, nomatch_, r_runt_, r_badip_, r_nomatch_, missed);
    if (missed) nomatch_count_.add();
    return r;
  }

  void add_handlers() override {
    add_read_handler(
        "rules", [this] { return std::to_string(table_->get()->rules().size()); }, Agg::First, true);
    add_read_handler("table", [this] {
      std::string s;
      for (const k::ClsRule& r : table_->get()->rules()) s += classify::unparse_rule(r) + "\n";
      return s;
    });
    add_read_handler("tree", [this] {
      auto t = table_->get();
      const auto& st = t->stats();
      return fmt::format(
          "{} rules, {} trees, {} nodes, depth {}, {} rule entries ({:.2f} per rule), largest leaf {}, "
          "{} KiB, built in {:.1f} ms\n",
          t->rules().size(), st.trees, st.nodes, st.depth, st.leaf_entries,
          t->rules().empty() ? 0.0 : double(st.leaf_entries) / double(t->rules().size()), st.largest_leaf,
          t->memory_bytes() >> 10, st.build_ms);
    });
    add_read_handler(
        "version", [this] { return std::to_string(table_->version.load()); }, Agg::First, true);
    // Writes reach every worker's copy; the shared table changes once.
    add_write_handler("reload", [this](const std::string&) {
      if (worker().id() != 0) return;
      if (file_.empty()) throw std::runtime_error("the rules came from the arguments: nothing to reload");
      std::string err;
      auto t = load(err);
      if (!t) throw std::runtime_error(err);
      table_->set(std::move(t));
    });
    add_write_handler("load", [this](const std::string& v) {
      if (worker().id() != 0) return;
      std::string path(trim(v)), err;
      auto t = load_from(path, err);
      if (!t) throw std::runtime_error(err);
      file_ = path;
      table_->set(std::move(t));
    });
    add_stat_handler("no_match", nomatch_count_);
    mirror_.add_handler(*this);
  }

  // ---- offload: the frame's key bytes go to the device, verdicts come back
  void offload_declare(offload::Plan& plan) override {
    offload::Range r;
    r.anchor = offload::Anchor::Data;
    r.begin = offset_;
    r.end = offset_ + int32_t(k::kClsKeyBytes);
    range_ = plan.add(r);
    plan.annos.pred |= offload_uses_pred(true);
  }
  bool offload_launch(offload::Launch& L, std::string& err) override {
    if (table_->version.load(std::memory_order_relaxed) != version_) refresh();
    offload_ctl(L, true);
    k::ClassifyStep::Params p{L.view, L.ctl, view_, range_, nomatch_, r_runt_, r_badip_, r_nomatch_};
    if (L.host) {
      L.keep(trees_);
    } else {
      const k::ClsTrees& t = *trees_;  // one copy per rule set, shared by the workers
      auto piece = [](const auto& v) { return offload::TableMirror::Piece{v.data(), v.size() * sizeof(v[0])}; };
      if (!mirror_.sync(
              L, trees_,
              {piece(t.rules()), piece(t.nodes()), piece(t.children()), piece(t.leaf_rules()), piece(t.roots())}, err))
        return false;
      p.t.rules = mirror_.at<k::ClsRule>(0);
      p.t.nodes = mirror_.at<k::ClsNode>(1);
      p.t.children = mirror_.at<uint32_t>(2);
      p.t.leaf_rules = mirror_.at<uint32_t>(3);
      p.t.roots = mirror_.at<uint32_t>(4);
    }
    L.run<k::ClassifyStep>(p);
    return true;
  }
  void offload_left(Packet*, uint32_t v) override {
    if (k::verdict_dropped(v) ? k::verdict_reason(v) == uint32_t(r_nomatch_) : k::verdict_detail(v) == 1)
      nomatch_count_.add();
  }

 protected:
  std::shared_ptr<const k::ClsTrees> load(std::string& err) {
    if (file_.empty()) return build(inline_, err);
    return load_from(file_, err);
  }
  std::shared_ptr<const k::ClsTrees> load_from(const std::string& path, std::string& err) {
    std::vector<k::ClsRule> rules;
    if (!classify::load_rules(path, rules, err)) return nullptr;
    return build(std::move(rules), err);
  }
  std::shared_ptr<const k::ClsTrees> build(std::vector<k::ClsRule> rules, std::string& err) {
    for (size_t i = 0; i < rules.size(); ++i)
      if (rules[i].action >= route_ports())
        return err = fmt::format("rule {} sends to output {}, but {} {} connected", i + 1, rules[i].action,
                                 route_ports(), gpu_form_ ? "predicate bits are" : "outputs are"),
               nullptr;
    auto t = std::make_shared<k::ClsTrees>();
    if (!t->build(std::move(rules), opt_, err)) return nullptr;
    return t;
  }

 private:
  void refresh() {
    version_ = table_->version.load();
    trees_ = table_->get();
    view_ = trees_->view();
  }
  std::string file_;
  std::vector<k::ClsRule> inline_;
  int32_t offset_ = 0, nomatch_ = -1;
  k::ClsTrees::Options opt_;
  Loc loc_;
  std::shared_ptr<SdnTable> table_;
  std::shared_ptr<const k::ClsTrees> trees_;
  k::ClsView view_;
  uint64_t version_ = ~0ull;
  uint32_t range_ = 0;
  int32_t r_runt_ = 0, r_badip_ = 0, r_nomatch_ = 0;
  Stat nomatch_count_;
  offload::TableMirror mirror_;
};

#define SHOAL_SDN_ARGS                                                                                \
  {"RULE...", "ClassBench rule", "rules as arguments, one per argument (instead of RULES)"},          \
      {"RULES", "file",                                                                               \
       "ClassBench filter file: '@SRC/LEN DST/LEN SPLO : SPHI DPLO : DPHI PROTO/MASK [FLAGS/MASK]' "  \
       "then 'port N', 'ethertype HEX|any', 'vlan ID|any|none'; '#' comments"},                       \
      {"OFFSET", "bytes", "where the Ethernet header starts (default 0)"},                            \
      {"NOMATCH", "port", "output for frames no rule matches (default: dropped, reason 'no-match')"}, \
      {"BINTH", "1-1024", "rules per tree leaf (default 8)"}, {                                       \
    "SPFAC", "1-64", "rule copies a cut may make, times the node's rules (default 4)"                 \
  }
#define SHOAL_SDN_HANDLERS                                                                                       \
  {"rules", "r", "rules loaded"}, {"table", "r", "the rules, one per line, in ClassBench form"},                 \
      {"tree", "r", "the trees: count, nodes, depth, rule entries, memory, build time"},                         \
      {"version", "r", "how many times the rule set was (re)loaded"},                                            \
      {"reload", "w", "read the RULES file again (the old rules stay if it does not load)"},                     \
      {"load", "w", "load another rule file (and reload from it from now on)"},                                  \
      {"no_match", "r",                                                                                          \
       "frames no rule matched (offloaded ones when they leave: dropped, or on a NOMATCH output other than 0)"}, \
  {                                                                                                              \
    "offload_uploads", "r", "rule sets copied to the device"                                                     \
  }

SHOAL_OFFLOADABLE_ELEMENT(
    SDNClassifier,
    SHOAL_GPU_FORM(.name = "GPUSDNClassifier", .summary = "SDNClassifier on the device (Snap form)",
                   .description = "SDNClassifier on the device, with the same arguments and lookup. Only the "
                                  "frames' first 92 bytes (from OFFSET) go to the device. A rule's output p (0-31) "
                                  "sets predicate bit p of the packet: later device elements test it (PRED) and a "
                                  "Dispatcher after the Debatcher sends packets on by it. Runts, broken IPv4 headers "
                                  "and unmatched frames (without NOMATCH) are dropped with their reasons.",
                   .example = "Batcher(4096, 100us) -> HostToDevice -> GPUSDNClassifier(RULES fw.rules) -> "
                              "DeviceToHost -> CompletionQueue -> Debatcher -> d :: Dispatcher(0, 1, 2);"),
    .name = "SDNClassifier", .ports = "1/-", .processing = "h/h",
    .summary = "multi-field (ClassBench) classification of Ethernet frames, first match wins",
    .description =
        "Matches each frame against a rule set in ClassBench's filter format: IPv4 source and "
        "destination prefixes, source and destination port ranges, protocol and TCP flags under masks "
        "(the flags are the TCP word at offset 12: SYN 0x0002, ACK 0x0010), plus Ethernet type and "
        "802.1Q VLAN. The first rule that matches sends the frame to its 'port' output (0 when the rule "
        "names none). A rule whose address, port, protocol and flag fields are all wildcards tests only "
        "the Ethernet fields, so non-IP frames can be classified ('ethertype 0x0806'); other rules need "
        "IPv4. Ports and flags are 0 for packets without them (other protocols, later fragments). "
        "Dropped: frames shorter than an Ethernet header ('runt'), IPv4 frames with a broken header "
        "('bad-ip-header'), and unmatched frames unless NOMATCH names an output ('no-match'). The "
        "lookup walks cut trees (HiCuts-style cuts, rules split by address width as in EffiCuts, rules "
        "every child would hold pushed up as in HyperCuts): about one stored copy per rule and a few "
        "node visits per tree for 10,000-rule sets. Offloadable: after a balancer that marks batches "
        "for the device, the frames' first 92 bytes go to the device and the same lookup runs there. "
        "The rules are shared by all workers; 'reload' and 'load' replace them between batches.",
    .args = {SHOAL_SDN_ARGS}, .handlers = {SHOAL_SDN_HANDLERS},
    .example =
        "FromDump(trace.pcap) -> c :: SDNClassifier(RULES acl1k.rules, NOMATCH 2);\n"
        "c[0] -> ToDump(a.pcap); c[1] -> ToDump(b.pcap); c[2] -> Discard;");

}  // namespace shoal
