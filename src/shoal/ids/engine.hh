// The rule matching engine: one fast pattern per rule into a single
// multi-pattern matcher (the built-in Aho-Corasick DFA, or Hyperscan), then
// each candidate rule verified against its header, dsize, and all its
// contents and pcres with their positional constraints.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "shoal/ids/ac_build.hh"
#include "shoal/ids/packet.hh"
#include "shoal/ids/port_groups.hh"
#include "shoal/ids/regex.hh"
#include "shoal/ids/rules.hh"

namespace shoal::ids {

// Whether rule r's header and dsize accept the packet, and whether its
// contents and pcres match the payload (Snort semantics, with backtracking
// over earlier contents' occurrences).
bool header_matches(const Rule& r, const PacketInfo& p);
// A matched rule's flowbits set/unset/toggle on the packet's flow.
void apply_flowbits(const Rule& r, const PacketInfo& p);
// A rule's flowints, run in order on the packet's flow once the rest of the
// rule matched: false when a comparison fails (the changes before it stay),
// or the packet has no flow.
bool flowints_hold(const Rule& r, const PacketInfo& p);
bool payload_matches(const Rule& r, const uint8_t* payload, uint32_t plen);
// Whether a transaction rule r matches: its header against the packet that
// completed the transaction's data, urilen, and each run of its items in
// its buffer (packet items in p's payload). Buffers r needs that tx does
// not have yet: no match (the caller tries again as the transaction
// progresses).
bool tx_needs(const Rule& r, const TxBuffers& tx);  // every buffer r reads is ready
// stream_done: r's payload items matched already (on data delivered earlier
// for this transaction: Suricata keeps a rule's inspection engines that
// matched in the transaction's detection state), so they are not run again.
bool tx_matches(const Rule& r, const TxBuffers& tx, const PacketInfo& p, bool stream_done = false);
// A variable a rule's pcre captured (PcreCapture) where it matched.
struct Captured {
  PcreCapture::Scope scope;
  std::string name, value;
};
// The variables r's capturing pcres took where r matched: each run that has
// one is matched again on its buffer (the packet's payload or a header
// buffer, or tx's) and the groups of its pcres on that match are kept
// (appended to out). For a rule that matched: a run that no longer matches
// gives nothing.
void rule_captures(const Rule& r, const TxBuffers* tx, const PacketInfo& p, std::vector<Captured>& out);
// Whether r's payload items (its runs in the packet's payload) match p's
// payload, the rest of the rule aside; false for a rule without any.
bool tx_payload_matches(const Rule& r, const PacketInfo& p);
// The buffer a tx rule's item reads: file.data on a rule for the client's
// side is the request body.
Buf side_buf(const Rule& r, Buf b);

enum class EngineKind { Builtin, Hyperscan };
bool have_hyperscan();

// The compiled rule set: rules, fast patterns, and the prefilter (the
// Aho-Corasick DFA, or a Hyperscan database). Immutable once built, so one
// copy serves every worker (and the device copy is made once from it).
class Database {
 public:
  Database();
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;
  bool build(std::vector<Rule> rules, EngineKind kind, std::string& err);
  // Suricata's action-order (before build): the place of each action class
  // (action_rank: pass, drop, reject, alert); the default is that order.
  void set_action_order(const std::array<uint8_t, 4>& place) { order_ = place; }
  // A rule's priority for the evaluation order (before build): the rule's
  // own, else its classtype's; unset, the rule's priority or 3.
  void set_priority_of(std::function<int(const Rule&)> f) { priority_of_ = std::move(f); }
  EngineKind kind() const { return kind_; }
  // ENGINE auto: built for Hyperscan, the prefilter that scans faster (both
  // timed over 64 KiB of traffic-like bytes in packet-sized scans) becomes
  // the kind; the times stay (ns per KiB: built-in, Hyperscan; 0 untimed).
  EngineKind pick_faster();
  const uint64_t* scan_ns_per_kib() const { return scan_ns_per_kib_; }
  const std::vector<Rule>& rules() const { return rules_; }
  // The fast patterns (deduplicated, case-folded) and, per pattern, its rules.
  const std::vector<std::string>& patterns() const { return patterns_; }
  const std::vector<uint32_t>& pattern_rules(uint32_t pattern) const { return pattern_rules_[pattern]; }
  // Rules without a usable fast pattern: verified on every packet.
  const std::vector<uint32_t>& always() const { return always_; }
  // ... those of them a packet of IP protocol `proto` can match (the
  // rule's protocol read once, at build), in the database's order.
  const std::vector<uint32_t>& always_for(uint8_t proto) const { return always_by_[proto_class(proto)]; }
  static int proto_class(uint8_t proto) { return proto == 6 ? 0 : proto == 17 ? 1 : proto == 1 || proto == 58 ? 2 : 3; }
  // Whether rule r's protocol and port bounds let a packet of protocol
  // class cls (proto_class) with these ports match it: a test made before
  // a candidate is queued, so rules for other protocols and ports cost
  // nothing (header_matches decides the rest).
  struct Quick {
    uint8_t classes = 15;  // the protocol classes it can match
    bool need_ports = false;
    uint16_t slo = 0, shi = 65535, dlo = 0, dhi = 65535;  // bounds on the ports (the whole range when unbounded)
    bool operator==(const Quick&) const = default;
    bool may_match(int cls, bool has_ports, uint16_t sp, uint16_t dp) const {
      if (!(classes & (1u << cls))) return false;
      if (!has_ports) return !need_ports;
      return sp >= slo && sp <= shi && dp >= dlo && dp <= dhi;
    }
  };
  // A fast pattern's rules grouped by their Quick bounds (a test per
  // group), in flat arrays: pattern p's groups are groups_[group_at_[p] ..
  // group_at_[p + 1]), a group's rules group_rules_[first .. end).
  struct PatternGroup {
    Quick q;
    uint32_t first, end;
  };
  const PatternGroup* groups_begin(uint32_t pattern) const { return groups_.data() + group_at_[pattern]; }
  const PatternGroup* groups_end(uint32_t pattern) const { return groups_.data() + group_at_[pattern + 1]; }
  const uint32_t* group_rules() const { return group_rules_.data(); }
  // Rules that read application-layer buffers: matched on transactions
  // (tx_matches), never on packets.
  const std::vector<uint32_t>& tx_rules() const { return tx_rules_; }
  // Transaction rules with payload items too (content before a sticky
  // buffer...): those items read the stream data delivered for the
  // transaction, as it comes.
  const std::vector<uint32_t>& tx_payload_rules() const { return tx_payload_rules_; }
  // The transaction rules that may match tx, in the database's order: those
  // whose fast pattern (a content each must find in an application-layer
  // buffer) is in its buffer, found by one Aho-Corasick scan per buffer,
  // and those without one (Suricata's per-buffer multi-pattern matchers).
  void tx_candidates(const TxBuffers& tx, std::vector<uint32_t>& out) const;
  size_t tx_prefiltered() const { return tx_rules_.size() - tx_always_.size(); }
  // Rules matched on TCP streams (Rule::stream_only), never on packets.
  const std::vector<uint32_t>& stream_rules() const { return stream_rules_; }
  // The stream rules that may match bytes s[0, n): those whose fast pattern
  // is in them (one Aho-Corasick scan) and those without one, in the
  // database's order.
  void stream_candidates(const uint8_t* s, uint32_t n, std::vector<uint32_t>& out) const;
  // The same patterns' occurrences in s[0, n) that end after s[0, from):
  // on(pattern, start) for each (the bytes before `from` only set the
  // automaton's state, so a stream is scanned a piece at a time with the
  // longest pattern's length less one byte of the piece before it: GASPP
  // §5's matching across chunks, exact). stream_rules_of(pattern): its rules.
  template <class F>
  void stream_scan(const uint8_t* s, uint32_t n, uint32_t from, F&& on) const {
    if (stream_of_.empty()) return;
    k::ac_scan(stream_ac_.view(), s, n, [&](uint32_t id, uint32_t end) {
      if (end > from) on(id, end - stream_len_[id]);
      return true;
    });
  }
  uint32_t stream_longest() const { return stream_longest_; }
  uint32_t stream_pattern_len(uint32_t pattern) const { return stream_len_[pattern]; }
  // The automaton stream_scan() runs (the device runs it too: k::ids_stream_scan).
  const AcTable& stream_automaton() const { return stream_ac_; }
  const std::vector<std::string>& stream_patterns() const { return stream_pats_; }
  bool has_stream_patterns() const { return !stream_of_.empty(); }
  // Whether stream rule r's payload is its fast pattern alone (one content,
  // no position, modifier or transform): it matches newly only where its
  // pattern occurs newly.
  bool stream_plain(uint32_t r) const { return r < stream_plain_.size() && stream_plain_[r]; }
  const std::vector<uint32_t>& stream_rules_of(uint32_t pattern) const { return stream_of_[pattern]; }
  const std::vector<uint32_t>& stream_always() const { return stream_always_; }
  // The Aho-Corasick DFA over the fast patterns (built for both kinds: the
  // device scans with it whatever the CPU uses).
  const AcTable& automaton() const { return ac_; }
  // Each rule's pcres compiled to DFAs (ids/regex.hh), in rule order, null
  // where an expression is outside the subset or over the state budget
  // (the reasons in regex_refusals(): "sid N: /re/: why"). The CPU
  // verifies with PCRE2, which also gives a match's end; the DFAs are what
  // a device can run.
  const std::vector<std::shared_ptr<const RegexDfa>>& regex_dfas(uint32_t rule) const { return dfas_[rule]; }
  size_t regex_count() const { return regex_count_; }
  size_t regex_compiled() const { return regex_compiled_; }
  const std::vector<std::string>& regex_refusals() const { return regex_refusals_; }

  // How the CPU verifies a pcre. Most of the rules' pcres only need an
  // answer to "does it match somewhere in the payload": not relative, and
  // no later item reads its end. Those are answered by Hyperscan (ENGINE
  // hyperscan; one single-match database per distinct expression) or by the
  // DFA (ENGINE builtin, or when Hyperscan refuses the expression), once per
  // packet however many rules share the expression; PCRE2 answers the rest
  // (relative pcres, ones followed by relative contents, and expressions
  // neither engine takes), as Snort does. With Hyperscan, rules without a
  // fast pattern are prefiltered by one of their pcres in a multi-pattern
  // database instead of being verified on every packet.
  struct PcreStats {
    size_t existence = 0;    // pcres that need only the yes/no answer
    size_t hyperscan = 0;    // of those, answered by Hyperscan
    size_t dfa = 0;          // by the DFA
    size_t prefiltered = 0;  // rules without fast pattern prefiltered by a pcre
  };
  const PcreStats& pcre_stats() const { return pcre_stats_; }
  // The expression slot answering rule's item k without PCRE2, or -1.
  int32_t existence_slot(uint32_t rule, uint32_t item) const { return item_slot_[rule][item]; }
  size_t slots() const { return slot_dfa_.size(); }
  const RegexDfa* slot_dfa(uint32_t slot) const { return slot_dfa_[slot]; }
  // The yes/no pcres a device answers after its scan (k::ids_regex): per
  // fast pattern, the expression slots of its rules that have a DFA (each
  // once), and every slot's DFA in one block (k::RegexHdr per slot, no
  // classes where the slot has none). Empty when no rule with a fast
  // pattern has such a pcre.
  struct DeviceRegex {
    std::vector<uint32_t> pat_off, pat_slots;
    std::vector<k::RegexHdr> hdr;
    std::vector<uint8_t> blob;
    bool empty() const { return pat_slots.empty(); }
  };
  const DeviceRegex& device_regex() const { return dev_regex_; }
  // Rules without fast pattern whose candidacy a pcre prefilter decides.
  const std::vector<uint32_t>& slot_prefiltered(uint32_t slot) const { return slot_rules_[slot]; }
  struct Hs;
  const Hs* hs() const { return hs_.get(); }
  // The packet prefilter's port groups (ids/port_groups.hh) and, per set,
  // its Aho-Corasick DFA (ids: positions in the set), none where the set
  // did not fit the memory bound (the whole DFA scans). With `added`, those
  // of a packet whose payload joined its connection's stream
  // (PacketInfo::stream_added): the stream's inspection reads that payload
  // for the stream-payload rules (Rule::stream_payload), so the packet is
  // scanned for the other rules' patterns only (Suricata's packet and
  // stream matchers: each byte scanned once); the same groups when no
  // stream-payload rule has a fast pattern.
  const PortGroups& port_groups(bool added = false) const { return port_groups_[form(added)]; }
  const AcTable* group_automaton(int32_t set, bool added = false) const {
    const std::vector<AcTable>& g = group_ac_[form(added)];
    return set >= 0 && size_t(set) < g.size() && g[size_t(set)].states() ? &g[size_t(set)] : nullptr;
  }
  size_t form(bool added) const { return added && two_forms_ ? 1 : 0; }

 private:
  EngineKind kind_ = EngineKind::Builtin;
  uint64_t scan_ns_per_kib_[2] = {0, 0};
  std::vector<Rule> rules_;
  std::vector<std::string> patterns_;
  std::vector<std::vector<uint32_t>> pattern_rules_;
  std::vector<uint32_t> always_, tx_rules_, tx_payload_rules_, stream_rules_;
  AcTable stream_ac_;                             // the stream rules' fast patterns
  std::vector<std::vector<uint32_t>> stream_of_;  // per pattern of stream_ac_, its rules
  std::vector<uint32_t> stream_always_;           // stream rules without a fast pattern
  std::vector<uint32_t> stream_len_;              // per pattern of stream_ac_, its length
  std::vector<std::string> stream_pats_;          // the patterns of stream_ac_ (case-folded)
  std::vector<uint8_t> stream_plain_;             // per rule: stream_plain()
  uint32_t stream_longest_ = 0;
  bool build_stream_prefilter(std::string& err);
  struct TxPrefilter {  // a buffer's fast patterns and, per pattern, its tx rules
    Buf buf;
    AcTable ac;
    std::vector<std::vector<uint32_t>> rules;
  };
  std::vector<TxPrefilter> tx_pf_;
  bool build_tx_prefilter(std::string& err);
  std::vector<uint32_t> tx_always_;                 // tx rules without a fast pattern
  std::array<std::vector<uint32_t>, 4> always_by_;  // always_ by packet protocol: TCP, UDP, ICMP, other
  std::vector<Quick> quick_;                        // per rule
  std::vector<PatternGroup> groups_;
  std::vector<uint32_t> group_at_, group_rules_;
  std::array<uint8_t, 4> order_ = {0, 1, 2, 3};
  std::function<int(const Rule&)> priority_of_;
  AcTable ac_;
  std::vector<std::vector<std::shared_ptr<const RegexDfa>>> dfas_;
  size_t regex_count_ = 0, regex_compiled_ = 0;
  std::vector<std::string> regex_refusals_;
  PcreStats pcre_stats_;
  std::vector<std::vector<int32_t>> item_slot_;
  std::vector<const RegexDfa*> slot_dfa_;  // null where the slot has only Hyperscan
  std::vector<std::vector<uint32_t>> slot_rules_;
  DeviceRegex dev_regex_;
  void build_device_regex();
  std::unique_ptr<Hs> hs_;
  std::array<PortGroups, 2> port_groups_;         // [form(added)]
  std::array<std::vector<AcTable>, 2> group_ac_;  // [form(added)]
  bool two_forms_ = false;                        // a stream-payload rule has a fast pattern

  bool build_hyperscan(std::string& err);
  bool build_port_groups(std::string& err);
  void build_group_automata();  // group_ac_ (ENGINE builtin, or auto picking it)
  void clear_group_automata() { group_ac_[0].clear(), group_ac_[1].clear(); }
};

// A matcher over a Database: its scratch state. Not thread-safe: one per
// thread; any number share one Database.
class Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  // Builds a Database of its own.
  bool build(std::vector<Rule> rules, EngineKind kind, std::string& err);
  // Uses a shared one.
  bool use(std::shared_ptr<const Database> db, std::string& err);
  const std::shared_ptr<const Database>& database() const { return db_; }
  // Indices (into rules()) of the rules that match, ascending: rules are in
  // Suricata's order (action: pass, drop, reject, alert; then flowbit
  // setters before readers), and a match's flowbits act before the next
  // rule is tried.
  void match(const PacketInfo& p, std::vector<uint32_t>& hits);
  // The same, with the prefilter's work already done elsewhere (a device
  // scan): `patterns` are the fast patterns found in the payload.
  // `answers` (k::IdsRegexOut::slot, n_answers of them): yes/no pcres the
  // device already ran over this payload; verification takes them as its own.
  void match_found(const PacketInfo& p, const uint32_t* patterns, uint32_t n, std::vector<uint32_t>& hits,
                   const uint32_t* answers = nullptr, uint32_t n_answers = 0);
  const std::vector<Rule>& rules() const { return db_->rules(); }
  const std::vector<std::string>& patterns() const { return db_->patterns(); }
  const AcTable& automaton() const { return db_->automaton(); }
  size_t always_checked() const { return db_->always().size(); }
  // Candidate rules the last match() verified (statistics).
  uint64_t verified() const { return verified_; }
  // The stream automaton's patterns that occur in s[0, n), ending after
  // s[0, from): on(pattern, start) for the latest occurrence of each (what
  // a stream prefilter keeps; Database::stream_scan reports every one),
  // found by Hyperscan's literal matcher where the database has it
  // (several times the DFA's speed on a CPU: the DFA is what a device
  // runs), else by the DFA.
  template <class F>
  void stream_scan(const uint8_t* s, uint32_t n, uint32_t from, F&& on) {
    if (!hs_stream_scan(s, n, from)) return db_->stream_scan(s, n, from, on);
    for (const auto& [id, start] : stream_found_) on(id, start);
  }
  uint64_t hs_stream_scans() const { return hs_stream_scans_; }  // (of them, by Hyperscan)

 private:
  bool hs_stream_scan(const uint8_t* s, uint32_t n, uint32_t from);  // into stream_found_; false: no such database
  std::vector<std::pair<uint32_t, uint32_t>> stream_found_;          // (pattern, latest start), one per pattern
  std::vector<uint32_t> stream_at_;  // per stream pattern: its place in stream_found_ + 1 (0: none this scan)
  uint32_t stream_from_ = 0;
  uint64_t hs_stream_scans_ = 0;
  void start();
  void verify(const PacketInfo& p, std::vector<uint32_t>& hits);
  // (added: the payload joined its connection's stream, Database::port_groups)
  void candidates(const uint8_t* s, uint32_t n, bool added = false);
  void add_candidates(uint32_t pattern);
  void add_rule(uint32_t rule);
  void packet_filter(const PacketInfo& p);  // the packet's protocol class and ports, for may_match
  void prefilter(const uint8_t* s, uint32_t n);
  int exists(uint32_t slot, const uint8_t* s, uint32_t n);

  std::shared_ptr<const Database> db_;
  struct Scratch;
  std::unique_ptr<Scratch> hs_scratch_;
  std::vector<uint32_t> seen_, cand_, merged_;
  int cls_ = 3;
  bool has_ports_ = false;
  uint16_t sport_ = 0, dport_ = 0;
  std::vector<uint32_t> slot_epoch_;  // slot answered for this packet when == epoch_
  std::vector<uint8_t> slot_answer_;
  uint32_t epoch_ = 0;
  uint64_t verified_ = 0;
};

}  // namespace shoal::ids
