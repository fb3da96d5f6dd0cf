// IDSMatcher: Snort/Suricata rules over IP packets, alerts to fast.log and
// EVE JSON, alerted packets to output 1.
#include <fmt/format.h>

#include <ctime>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>

#include "shoal/elements/common.hh"
#include "shoal/ids/engine.hh"
#include "shoal/io/shared_file.hh"

namespace shoal {

namespace {

std::string addr_text(const ids::Addr& a) {
  return a.v6 ? format_ipv6(a.b) : fmt::format("{}.{}.{}.{}", a.b[0], a.b[1], a.b[2], a.b[3]);
}

std::string proto_name(uint8_t p) {
  switch (p) {
    case 6: return "TCP";
    case 17: return "UDP";
    case 1: return "ICMP";
    case 58: return "IPV6-ICMP";
  }
  return fmt::format("PROTO:{:03}", p);
}

// "11/22/2026-11:35:27.123456" (fast.log) or "2026-11-22T11:35:27.123456+0000" (EVE), UTC.
std::string time_text(uint64_t ns, bool eve) {
  time_t sec = time_t(ns / 1000000000ull);
  struct tm tm;
  gmtime_r(&sec, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, eve ? "%Y-%m-%dT%H:%M:%S" : "%m/%d/%Y-%H:%M:%S", &tm);
  return fmt::format("{}.{:06}{}", buf, (ns / 1000) % 1000000, eve ? "+0000" : "");
}

}  // namespace

class IDSMatcher : public Element {
 public:
  void configure(Args& a) override {
    std::string engine = ids::have_hyperscan() ? "hyperscan" : "builtin";
    a.read_mp("RULES", rules_file_).read("VARS", vars_file_).read("ENGINE", engine).read("FASTLOG", fastlog_file_);
    a.read("EVE", eve_file_).read("STRICT", strict_).read("QUIET", quiet_);
    a.complete();
    if (engine == "builtin") kind_ = ids::EngineKind::Builtin;
    else if (engine == "hyperscan") kind_ = ids::EngineKind::Hyperscan;
    else a.fail(fmt::format("ENGINE '{}': hyperscan or builtin", engine));
    if (kind_ == ids::EngineKind::Hyperscan && !ids::have_hyperscan())
      a.fail("ENGINE hyperscan: this build has no Hyperscan (libhyperscan-dev); use ENGINE builtin");
    loc_ = a.element_loc();
  }
  void initialize() override {
    // Files are read here (configure() opens none); errors point at the element.
    ids::Vars vars;
    std::string err;
    if ((!vars_file_.empty() && !vars.load_file(vars_file_, err)) || !set_.load_file(rules_file_, vars, strict_, err) ||
        !engine_.build(set_.rules(), kind_, err))
      throw ConfigError(loc_, fmt::format("{}: {}", name(), err));
    if (worker().id() == 0 && !quiet_) {
      fmt::print(stderr, "shoal: {}: {} rules from {} ({} fast patterns, {} checked on every packet); {} skipped{}\n",
                 name(), set_.rules().size(), rules_file_, engine_.patterns().size(), engine_.always_checked(),
                 set_.problems().size(), set_.problems().empty() ? "" : " (handler 'problems'), the first:");
      for (size_t i = 0; i < set_.problems().size() && i < 5; ++i)
        fmt::print(stderr, "  {}\n", set_.problems()[i].str());
    }
    auto open = [&](io::SharedFile<std::ofstream>& f, const std::string& path) {
      if (path.empty()) return;
      if (!f.open(registry(), path, [&](std::ofstream& o) { o.open(path, std::ios::app); },
                  [](std::ofstream& o) { return bool(o); }))
        throw std::runtime_error(fmt::format("{}: cannot open '{}' for writing", name(), path));
    };
    open(fast_, fastlog_file_);
    open(eve_, eve_file_);
  }
  void push(int, PacketBatch* b) override {
    PacketBatch* alerted = nullptr;
    std::string fast, eve;
    b->for_each([&](uint32_t i, Packet* p) {
      const uint8_t* ip = nullptr;
      uint32_t len = 0;
      if (p->has_network_header() && p->network_header_offset() >= 0 &&
          uint64_t(p->network_header_offset()) < p->length()) {
        ip = p->network_header();
        len = p->length() - uint32_t(p->network_header_offset());
      } else if (p->length() >= 14) {  // an Ethernet frame
        uint16_t t = uint16_t(p->data()[12] << 8 | p->data()[13]);
        if (t == 0x0800 || t == 0x86dd) ip = p->data() + 14, len = p->length() - 14;
      }
      ids::PacketInfo info;
      if (!ip || !ids::parse_packet(ip, len, info)) {
        uninspected_.add();
        return;
      }
      inspected_.add();
      engine_.match(info, hits_);
      verified_.add(engine_.verified());
      if (hits_.empty()) return;
      alerted_packets_.add();
      alerts_.add(hits_.size());
      uint64_t ts = p->timestamp_ns() ? p->timestamp_ns() : worker().now_ns();
      for (uint32_t r : hits_) log(engine_.rules()[r], info, ts, fast, eve);
      if (noutputs() > 1) {
        if (!alerted) alerted = new_batch();
        alerted->append(p);
        b->kill(i);
      }
    });
    if (!fast.empty()) fast_.with([&](std::ofstream& o) { o << fast; });
    if (!eve.empty()) eve_.with([&](std::ofstream& o) { o << eve; });
    if (b->live()) output_push(0, b);
    else recycle(b);
    if (alerted) output_push(1, alerted);
  }
  void on_stop() override {
    fast_.with([](std::ofstream& o) { o.flush(); });
    eve_.with([](std::ofstream& o) { o.flush(); });
  }
  void cleanup() override {
    fast_.close();
    eve_.close();
  }
  void add_handlers() override {
    add_read_handler("rules", [this] { return std::to_string(set_.rules().size()); }, Agg::First, true);
    add_read_handler("skipped", [this] { return std::to_string(set_.problems().size()); }, Agg::First, true);
    add_read_handler("problems", [this] {
      std::string s;
      for (auto& p : set_.problems()) s += p.str() + "\n";
      return s;
    });
    add_read_handler("patterns", [this] { return std::to_string(engine_.patterns().size()); }, Agg::First, true);
    add_read_handler("engine", [this] {
      return kind_ == ids::EngineKind::Builtin
                 ? fmt::format("builtin (Aho-Corasick DFA: {} states, {} byte classes, {} KiB)",
                               engine_.automaton().states(), engine_.automaton().classes(),
                               engine_.automaton().memory_bytes() >> 10)
                 : std::string("hyperscan");
    });
    add_stat_handler("inspected", inspected_);
    add_stat_handler("uninspected", uninspected_);
    add_stat_handler("alerts", alerts_);
    add_stat_handler("alerted_packets", alerted_packets_);
    add_stat_handler("verified", verified_);
  }

 private:
  void log(const ids::Rule& r, const ids::PacketInfo& p, uint64_t ts, std::string& fast, std::string& eve) {
    int prio = r.priority ? r.priority : 3;
    std::string proto = proto_name(p.proto);
    if (!fastlog_file_.empty()) {
      auto ep = [&](const ids::Addr& a, uint16_t port) {
        return p.has_ports ? fmt::format("{}:{}", addr_text(a), port) : addr_text(a);
      };
      fast += fmt::format("{}  [**] [{}:{}:{}] {} [**] [Classification: {}] [Priority: {}] {{{}}} {} -> {}\n",
                          time_text(ts, false), r.gid, r.sid, r.rev, r.msg,
                          r.classtype.empty() ? "(null)" : r.classtype, prio, proto, ep(p.src, p.sport),
                          ep(p.dst, p.dport));
    }
    if (!eve_file_.empty()) {
      nlohmann::json j = {{"timestamp", time_text(ts, true)}, {"event_type", "alert"}, {"src_ip", addr_text(p.src)},
                          {"dest_ip", addr_text(p.dst)},        {"proto", proto}};
      if (p.has_ports) j["src_port"] = p.sport, j["dest_port"] = p.dport;
      j["alert"] = {{"action", "allowed"}, {"gid", r.gid},         {"signature_id", r.sid}, {"rev", r.rev},
                    {"signature", r.msg},  {"category", r.classtype}, {"severity", prio}};
      eve += j.dump() + "\n";
    }
  }
  static io::SharedRegistry<std::ofstream>& registry() {
    static io::SharedRegistry<std::ofstream> r;
    return r;
  }

  std::string rules_file_, vars_file_, fastlog_file_, eve_file_;
  bool strict_ = false, quiet_ = false;
  Loc loc_;
  ids::EngineKind kind_ = ids::EngineKind::Builtin;
  ids::RuleSet set_;
  ids::Engine engine_;
  std::vector<uint32_t> hits_;
  io::SharedFile<std::ofstream> fast_, eve_;
  Stat inspected_, uninspected_, alerts_, alerted_packets_, verified_;
};
SHOAL_ELEMENT(IDSMatcher, .name = "IDSMatcher", .ports = "1/1-2", .processing = "h/h",
              .summary = "matches Snort/Suricata rules; alerts to fast.log and EVE JSON",
              .description =
                  "Loads Snort 2 / Suricata rules from RULES (variables from VARS: Suricata YAML or Snort "
                  "var/ipvar/portvar lines) and matches every IPv4/IPv6 packet (at the network header "
                  "annotation, else after an Ethernet header): each rule's longest (or fast_pattern) content goes "
                  "into one multi-pattern prefilter, Hyperscan or the built-in Aho-Corasick DFA (ENGINE), and "
                  "each candidate is verified against its header (addresses, ports, direction), dsize, and all "
                  "contents (offset, depth, distance, within, nocase, negation) and pcres (PCRE2) in order, with "
                  "Snort's backtracking. Rules with options the engine cannot honour (HTTP buffers, byte_test, "
                  "flowbits...) are skipped and listed (handler 'problems'; STRICT fails the load instead). "
                  "Alerts go to FASTLOG (Suricata's fast.log lines) and EVE (event_type alert records). Packets "
                  "that match any rule leave on output 1 if it exists (log and forward: connect it on; an inline "
                  "IPS: Discard), the rest on output 0. flow is accepted without stream semantics (a later "
                  "issue); packets that are not IP pass uninspected (counted).",
              .args = {{"RULES", "file", "the rules"},
                       {"VARS", "file", "variables (Suricata YAML vars, or Snort var lines)"},
                       {"ENGINE", "hyperscan|builtin", "the prefilter (default hyperscan when built in)"},
                       {"FASTLOG", "file", "fast.log alert lines (appended)"},
                       {"EVE", "file", "EVE JSON alert records (appended)"},
                       {"STRICT", "boolean", "fail on the first unusable rule (default false)"},
                       {"QUIET", "boolean", "no load summary on stderr (default false)"}},
              .handlers = {{"rules", "r", "rules loaded"},
                           {"skipped", "r", "rules skipped"},
                           {"problems", "r", "why each skipped rule was skipped (file:line: sid: reason)"},
                           {"patterns", "r", "distinct fast patterns"},
                           {"engine", "r", "the prefilter and its size"},
                           {"inspected", "r", "packets matched against the rules"},
                           {"uninspected", "r", "packets that were not IP (sent on uninspected)"},
                           {"alerts", "r", "alerts raised"},
                           {"alerted_packets", "r", "packets with at least one alert"},
                           {"verified", "r", "candidate rules verified"}},
              .example = "FromDump(in.pcap) -> CheckIPHeader(14) -> ids :: IDSMatcher(RULES rules/local.rules, "
                         "FASTLOG fast.log, EVE eve.json); ids[0] -> ToDump(clean.pcap); ids[1] -> Discard;");

}  // namespace shoal
