// IPClassifier and IPFilter: Click's tcpdump-like patterns, compiled once
// into a decision DAG shared by every worker's copy of the element.
#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "shoal/elements/common.hh"
#include "shoal/ipfilter/ipfilter_expr.hh"

namespace shoal {

namespace {

struct Compiled {
  ipf::Program prog;
};

// One base's bytes: from the header annotation to the packet's end.
inline void header_span(Packet* p, bool has, int64_t off, const uint8_t*& base, uint32_t& len) {
  if (!has || off > int64_t(p->length())) return;
  base = p->data() + off;
  len = uint32_t(int64_t(p->length()) - off);
}

}  // namespace

template <class D>
class IPPatternElement : public PacketElement<D> {
 public:
  void initialize() override {
    r_nomatch_ = this->add_drop_reason("no-match");
    r_deny_ = this->add_drop_reason("denied");
    r_noip_ = this->add_drop_reason("no-ip-header");
    for (auto& r : rules_)
      if (r.result >= this->noutputs())
        throw ConfigError(
            r.loc, fmt::format("{}: output {} does not exist ({} outputs)", this->name(), r.result, this->noutputs()));
    bool first = false;
    compiled_ = shared_state<Compiled>(this, &first);
    if (first) {
      std::vector<ipf::Rule> rules;
      for (auto& r : rules_) rules.push_back({r.expr, r.result});
      try {
        compiled_->prog.build(atoms_.atoms(), rules);
      } catch (const std::runtime_error& e) {
        throw ConfigError(rules_.empty() ? Loc{} : rules_.front().loc, fmt::format("{}: {}", this->name(), e.what()));
      }
      for (size_t r : compiled_->prog.dead_rules())
        std::fputs(format_diagnostic(rules_[r].loc,
                                     fmt::format("{}: pattern '{}' can never match (an earlier pattern covers it, "
                                                 "or it contradicts itself)",
                                                 this->name(), rules_[r].text),
                                     "warning")
                       .c_str(),
                   stderr);
    }
    prog_ = &compiled_->prog;
  }

  int process(Packet* p) {
    const uint8_t *ip = nullptr, *mac = nullptr;
    uint32_t iplen = 0, maclen = 0;
    header_span(p, p->has_network_header(), p->network_header_offset(), ip, iplen);
    if (!ip) return this->drop_code(r_noip_);
    header_span(p, p->has_mac_header(), p->mac_header_offset(), mac, maclen);
    ipf::PacketView full = ipf::make_view(mac, maclen, ip, iplen);
    int32_t r = tree_ ? prog_->match(full) : prog_->match_linear(full);
    if (r >= 0) return r;
    return this->drop_code(r == ipf::kDeny ? r_deny_ : r_nomatch_);
  }

  void add_handlers() override {
    this->add_read_handler("program", [this] { return prog_ ? prog_->dump() : std::string(); });
    this->add_read_handler("patterns", [this] {
      std::string s;
      for (size_t i = 0; i < rules_.size(); ++i) s += fmt::format("{}\t{}\n", i, rules_[i].text);
      return s;
    });
  }

 protected:
  struct RuleText {
    std::string text;
    Loc loc;
    ipf::Expr expr;
    int32_t result;
  };
  // TREE (and Click's CACHING) among the arguments; true when `it` was one.
  bool read_option(Args& a, ArgItem& it) {
    if (it.keyword == "TREE" || it.keyword == "CACHING") {
      bool b;
      if (!parse_bool(it.value, b)) a.fail(it, fmt::format("{}: expected true or false", it.keyword));
      if (it.keyword == "TREE") tree_ = b;
      it.used = true;
      return true;
    }
    return false;
  }
  void add_rule(std::string_view text, Loc loc, int32_t result) {
    RuleText r{std::string(text), loc, ipf::parse_pattern(text, loc, atoms_, std::string(this->name()) + ": "), result};
    rules_.push_back(std::move(r));
  }

  std::vector<RuleText> rules_;
  ipf::AtomTable atoms_;
  bool tree_ = true;

 private:
  std::shared_ptr<Compiled> compiled_;
  const ipf::Program* prog_ = nullptr;
  uint16_t r_nomatch_ = 0, r_deny_ = 0, r_noip_ = 0;
};

class IPClassifier : public IPPatternElement<IPClassifier> {
 public:
  void configure(Args& a) override {
    int32_t out = 0;
    Args::note_keyword("TREE"), Args::note_keyword("CACHING");  // read_option() finds them
    for (auto& it : a.items()) {
      if (read_option(a, it)) continue;
      it.used = true;
      add_rule(it.text, it.loc, out++);
    }
    // (no pattern and no output, as Click takes it: every packet dropped, as no-match)
  }
  void initialize() override {
    if (noutputs() != int(rules_.size()))
      throw std::runtime_error(fmt::format("{} patterns but {} outputs", rules_.size(), noutputs()));
    IPPatternElement::initialize();
  }
};

class IPFilter : public IPPatternElement<IPFilter> {
 public:
  void configure(Args& a) override {
    Args::note_keyword("TREE"), Args::note_keyword("CACHING");  // read_option() finds them
    for (auto& it : a.items()) {
      if (read_option(a, it)) continue;
      it.used = true;
      add_filter(a, it.text, it.loc, &it);
    }
    // (no rule at all, as Click takes it: every packet dropped, as no-match)
  }

 private:
  // "ACTION PATTERN"; ACTION is allow, deny, drop, an output number, or
  // "file" with a file of such rules (one per line, '#' or '//' comments).
  void add_filter(Args& a, std::string_view text, Loc loc, const ArgItem* it) {
    size_t sp = 0;
    while (sp < text.size() && !std::isspace(static_cast<unsigned char>(text[sp]))) ++sp;
    std::string_view action = text.substr(0, sp);
    size_t rest = sp;
    while (rest < text.size() && std::isspace(static_cast<unsigned char>(text[rest]))) ++rest;
    std::string_view pattern = text.substr(rest);
    Loc ploc = SourceManager::advance(loc, text.substr(0, rest));
    auto bad = [&](const std::string& msg) {
      if (it) a.fail(*it, msg);
      throw ConfigError(loc, fmt::format("{}: {}", name(), msg));
    };
    int32_t result = 0;  // every other path fails (bad() throws)
    uint64_t port;
    if (action == "allow")
      result = 0;
    else if (action == "deny" || action == "drop")
      result = ipf::kDeny;
    else if (parse_uint(action, port) && port < 65536)
      result = int32_t(port);
    else if (action == "file") {
      if (!it) bad("a rule file cannot include another");
      read_file(a, std::string(trim(pattern)), *it);
      return;
    } else {
      bad(fmt::format("'{}' is not an action (allow, deny, drop, an output number, or file)", action));
    }
    if (pattern.empty()) bad(fmt::format("rule '{}' has no pattern", text));
    add_rule(pattern, ploc, result);
  }
  void read_file(Args& a, const std::string& path, const ArgItem& it) {
    std::ifstream in(path);
    if (!in) a.fail(it, fmt::format("file {}: {}", path, std::strerror(errno)));
    std::stringstream ss;
    ss << in.rdbuf();
    std::string body = ss.str();
    int32_t id = SourceManager::instance().add(path, body);
    uint32_t line = 0;
    for (size_t i = 0; i <= body.size();) {
      size_t e = body.find('\n', i);
      if (e == std::string::npos) e = body.size();
      std::string_view l(body.data() + i, e - i);
      ++line;
      size_t lead = 0;
      while (lead < l.size() && std::isspace(static_cast<unsigned char>(l[lead]))) ++lead;
      std::string_view t = trim(l);
      if (size_t c = t.find("//"); c != std::string_view::npos) t = trim(t.substr(0, c));
      if (!t.empty() && t[0] != '#') {
        if (t.back() == ',') t.remove_suffix(1);
        add_filter(a, t, Loc{id, line, uint32_t(lead + 1), 1}, nullptr);
      }
      i = e + 1;
    }
  }
};

#define SHOAL_IPPATTERN_DOC                                                                                          \
  "Patterns are built from primitives: 'ip proto PROTO', '[src|dst|src or dst|src and dst] host ADDR', "             \
  "'[SRCDST] net ADDR/LEN' (or 'ADDR mask MASK'), '[SRCDST] [tcp|udp|tcpudp] port PORT', 'ip "                       \
  "vers|hl|id|tos|dscp|ttl|len|"                                                                                     \
  "csum VALUE', 'ip ect', 'ip ce', 'ip frag', 'ip unfrag', 'tcp opt syn|fin|ack|rst|psh|urg', 'tcp win N', "         \
  "'icmp type TYPE', 'ip[POS:LEN] VALUE', 'transp[POS:LEN] VALUE' (also tcp[..], udp[..], icmp[..], which require "  \
  "that protocol), '[SRCDST] ether host ETH' (or, as in Click, an Ethernet address after 'host', 'src' or 'dst', "   \
  "or alone), 'tcpudp' (TCP or UDP, also as 'ip proto tcpudp'), 'true', 'false'; '-', 'any' and 'all' match "        \
  "everything. Connectives: "                                                                                        \
  "and (&&, or nothing between two primitives), or (||), not (!), parentheses and 'A ? B : C'. Fields take an "      \
  "optional '& MASK' and an operator (==, !=, <, >, <=, >=); without a field name a value repeats the previous "     \
  "primitive's ('src port 80 or 81') or is recognised by its form ('tcp', '10.0.0.0/8', 'www', 'syn'). Port, ICMP "  \
  "type and TCP tests hold only on first fragments of their protocol, so 'src tcp port != 5' does not match UDP. A " \
  "field past the packet's end fails its test (its negation holds). Input packets need the IP header annotation "    \
  "(CheckIPHeader, MarkIPHeader); packets without it are dropped (reason 'no-ip-header'). The patterns compile "     \
  "once into a decision DAG: each node reads one field and binary-searches its value intervals, so the cost per "    \
  "packet follows the DAG's depth, not the number of patterns. TREE false tests the patterns one by one instead "    \
  "(Click's linear program, for comparison); CACHING is accepted for Click configurations and has no effect."

SHOAL_ELEMENT(IPClassifier, .name = "IPClassifier", .ports = "1/-", .processing = "h/h",
              .summary = "classifies IP packets by tcpdump-like patterns",
              .description =
                  "One output per pattern; a packet leaves on the output of the first pattern it matches, "
                  "and one matching none is dropped (reason 'no-match'). " SHOAL_IPPATTERN_DOC,
              .args = {{"PATTERN...", "pattern", "one per output"},
                       {"TREE", "bool", "compile to a decision DAG (default true)"},
                       {"CACHING", "bool", "accepted for Click compatibility; no effect"}},
              .handlers = {{"program", "r", "the compiled decision DAG"}, {"patterns", "r", "the patterns by output"}},
              .example = "c :: IPClassifier(tcp dst port www or 8080, src net 10.0.0.0/8 and not icmp, ip frag, -);");

SHOAL_ELEMENT(IPFilter, .name = "IPFilter", .ports = "1/-", .processing = "h/h",
              .summary = "filters IP packets by tcpdump-like rules",
              .description =
                  "Each argument is a rule 'ACTION PATTERN'. ACTION is 'allow' (output 0), 'deny' or "
                  "'drop' (dropped, reason 'denied'), an output number, or 'file' with a file of rules, "
                  "one per line ('#' and '//' comments). The first matching rule decides; a packet "
                  "matching none is dropped (reason 'no-match'): with no rules at all (Click takes that too), "
                  "every packet. " SHOAL_IPPATTERN_DOC,
              .args = {{"RULE...", "action pattern", "in order"},
                       {"TREE", "bool", "compile to a decision DAG (default true)"},
                       {"CACHING", "bool", "accepted for Click compatibility; no effect"}},
              .handlers = {{"program", "r", "the compiled decision DAG"}, {"patterns", "r", "the rules' patterns"}},
              .example = "IPFilter(allow tcp dst port 22 and src net 10.0.0.0/8, deny tcp dst port 22, allow all);");

}  // namespace shoal
