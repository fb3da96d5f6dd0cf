// shoal bench-ids: IDS scan throughput on one core. Content sets made to
// (or, with --rules-file, a real rule file such as Snort's community rules)
// resemble Snort web-attack rules (HTTP paths, SQL and script fragments),
// HTTP-like payloads with 0%, 1% or 10% of packets holding a rule's content.
// Rows, all in the same run over the same packets:
//   hs-bare      a bare Hyperscan loop: hs_scan over each payload with the
//                same literal database, a counting callback (the baseline)
//   hs-bare-groups the same loop, each packet scanned with its port
//                group's database (the patterns its ports can need: the
//                engine's matchers, ids/port_groups.hh)
//   hyperscan    the IDS engine with Hyperscan: IP parse, port group,
//                prefilter, candidate verification (what IDSMatcher runs
//                per packet)
//   builtin      the same with the built-in Aho-Corasick DFA
//   element      IDSMatcher in a running graph (FromDump -> IDSMatcher ->
//                Discard, less the same graph without it; with --rules-file
//                a FlowIPManager in front in both, so the rules that need
//                flows load: the packets repeat round after round, so the
//                application layer parses each flow's first round only, and
//                payload rules read packets (STREAM_PAYLOAD false: a
//                replayed round is a retransmission to a stream);
//                element-hs-packet-rules: the set's packet rules alone, so
//                no parser runs; applayer: the difference, as packets per
//                second of parsing and transaction rules)
//   offload      with a device (--device; CUDA when there is one):
//                FromDump -> OffloadBalancer(1) -> IDSMatcher -> Discard,
//                with the PCIe-bound limit beside it; the candidates' yes/no
//                pcres answered on the device, and (offload-host-pcre) on
//                the host, SHOAL_DEVICE_REGEX=0 (GASPP §6, issue 25)
#include <fmt/format.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <thread>

#include "common.hh"
#include "shoal/core/version.hh"
#include "shoal/device/device.hh"
#include "shoal/ids/engine.hh"
#include "shoal/io/pcap.hh"

#ifdef SHOAL_HAVE_HYPERSCAN
#include <hs/hs.h>

#include "shoal/ids/hs_types.hh"
#endif

namespace shoal::tool {

namespace {
std::string token(std::mt19937& rng, size_t lo, size_t hi) {
  std::string t;
  for (size_t n = lo + rng() % (hi - lo + 1); t.size() < n;) t.push_back(char('a' + rng() % 26));
  return t;
}
}  // namespace

// Web-attack-like contents, distinct by a random token.
std::vector<std::string> make_ids_contents(size_t n, std::mt19937& rng) {
  static const char* forms[] = {"/cgi-bin/{}.cgi",  "union select {}",    "<script>{}",      "{}.php?id=",
                                "../../{}/",        "cmd.exe /c {}",      "' or '{}'='",     "xp_{}",
                                "javascript:{}",    "onerror={}(",        "/etc/{}",         "wp-admin/{}.php",
                                "select * from {}", "document.cookie={}", "/scripts/{}.asp", "exec({})"};
  std::vector<std::string> out;
  std::set<std::string> seen;
  while (out.size() < n) {
    std::string c = fmt::format(fmt::runtime(forms[rng() % std::size(forms)]), token(rng, 3, 8));
    if (seen.insert(c).second) out.push_back(c);
  }
  return out;
}

std::string ids_rule_text(const std::vector<std::string>& contents, double pcre_share) {
  std::string r;
  const size_t every = pcre_share > 0 ? size_t(std::max(1.0, 1 / pcre_share)) : 0;
  for (size_t i = 0; i < contents.size(); ++i) {
    std::string esc;
    for (char c : contents[i]) {
      if (c == '"' || c == ';' || c == '\\' || c == '|' || c == ':')
        esc += fmt::format("|{:02x}|", uint8_t(c));
      else
        esc.push_back(c);
    }
    std::string pcre = every && i % every == 0 ? fmt::format(" pcre:\"/[a-z]{{{}}}=\\d{{2}}/i\";", 3 + i % 5) : "";
    r += fmt::format(
        "alert tcp any any -> any 80 (msg:\"web attack {}\"; content:\"{}\"; nocase;{} "
        "classtype:web-application-attack; sid:{}; rev:1;)\n",
        i, esc, pcre, 2000000 + i);
  }
  return r;
}

// HTTP-like requests, padded with lowercase words to the frame length.
IdsTraffic make_ids_traffic(const std::vector<std::string>& contents, uint32_t frame_len, double frac, size_t count,
                            std::mt19937& rng, double to_client) {
  IdsTraffic t;
  const uint32_t hdr = 14 + 20 + 20;
  for (size_t i = 0; i < count; ++i) {
    std::vector<uint8_t> f(std::max(frame_len, hdr), 0);
    f[12] = 0x08;
    uint8_t* ip = f.data() + 14;
    ip[0] = 0x45, ip[8] = 64, ip[9] = 6;
    uint32_t tot = uint32_t(f.size() - 14);
    ip[2] = uint8_t(tot >> 8), ip[3] = uint8_t(tot);
    ip[12] = 10, ip[13] = 1, ip[14] = uint8_t(i >> 8), ip[15] = uint8_t(i);
    ip[16] = 10, ip[17] = 2, ip[18] = 0, ip[19] = 1;
    uint8_t* tcp = ip + 20;
    uint16_t sp = uint16_t(1024 + i % 60000);
    tcp[0] = uint8_t(sp >> 8), tcp[1] = uint8_t(sp), tcp[2] = 0, tcp[3] = 80, tcp[12] = 0x50;
    if (double(i % 1000) < to_client * 1000) {  // from the server: addresses and ports the other way
      for (int k = 0; k < 4; ++k) std::swap(ip[12 + k], ip[16 + k]);
      std::swap(tcp[0], tcp[2]), std::swap(tcp[1], tcp[3]);
    }
    std::string p = fmt::format(
        "GET /{}/{}.html HTTP/1.1\r\nHost: www.{}.com\r\nUser-Agent: Mozilla/5.0\r\n"
        "Accept: */*\r\n\r\n",
        token(rng, 3, 8), token(rng, 3, 8), token(rng, 4, 9));
    while (p.size() < f.size() - hdr) p += token(rng, 2, 9) + " ";
    p.resize(f.size() - hdr);
    if (std::uniform_real_distribution<double>(0, 1)(rng) < frac && !p.empty()) {
      const std::string& c = contents[rng() % contents.size()];
      if (c.size() <= p.size()) {
        size_t at = rng() % (p.size() - c.size() + 1);
        for (size_t k = 0; k < c.size(); ++k) p[at + k] = rng() % 2 ? char(std::toupper(uint8_t(c[k]))) : c[k];
        ++t.planted;
      }
    }
    std::memcpy(f.data() + hdr, p.data(), p.size());
    t.bytes += f.size();
    t.frames.push_back(std::move(f));
  }
  return t;
}

namespace {

using clk = std::chrono::steady_clock;

// Runs fn(frame) over the traffic, round after round, for about `seconds`;
// packets per second.
template <class F>
double packets_per_sec(const IdsTraffic& t, double seconds, F&& fn) {
  size_t done = 0;
  auto t0 = clk::now();
  double el = 0;
  do {
    for (const auto& f : t.frames) fn(f);
    done += t.frames.size();
    el = std::chrono::duration<double>(clk::now() - t0).count();
  } while (el < seconds);
  return double(done) / el;
}

}  // namespace

int cmd_bench_ids(int argc, char** argv) {
  CLI::App app{"shoal bench-ids: IDS scan throughput per core (built-in DFA, Hyperscan, bare Hyperscan, element)"};
  std::string out = "bench/results/ids-latest.json";
  double seconds = 0.5;
  std::vector<size_t> rule_counts{2000, 10000};
  std::vector<uint32_t> lengths{64, 512, 1500};
  std::vector<double> fracs{0, 0.01, 0.10};
  size_t packets = 20000;
  bool element = true;
  app.add_option("--out", out, "JSON output file");
  app.add_option("--seconds", seconds, "run time per point");
  app.add_option("--rules", rule_counts, "content rules per set");
  app.add_option("--length", lengths, "frame lengths (bytes)");
  app.add_option("--match", fracs, "fractions of packets holding a rule's content");
  app.add_option("--packets", packets, "distinct packets per point");
  app.add_option("--element", element, "also time the IDSMatcher element in a graph (default true)");
  std::string rules_in, vars_in;
  bool commented = false;
  app.add_option("--rules-file", rules_in,
                 "a real rule file instead of the made-up sets (e.g. Snort's community.rules); the payloads hold "
                 "its fast patterns, the bare loop scans for them");
  app.add_option("--vars", vars_in, "variables for --rules-file (a snort.conf's var lines or a suricata.yaml)");
  app.add_flag("--commented", commented, "also read --rules-file's commented-out rules ('# alert ...')");
  double to_client = 0;
  app.add_option("--to-client", to_client,
                 "the share of packets sent from port 80 to the client (the rest go to port 80; default 0)")
      ->check(CLI::Range(0.0, 1.0));
  double pcre_share = 0;
  app.add_option("--pcre", pcre_share,
                 "the share of the made-up rules that also have a yes/no pcre after their content (default 0)")
      ->check(CLI::Range(0.0, 1.0));
  std::string device = "auto";
  app.add_option("--device", device,
                 "the offload rows' device: auto (CUDA when there is one, else none), cuda, host (the host "
                 "backend: the machinery, not a GPU's speed), none")
      ->check(CLI::IsMember({"auto", "cuda", "host", "none"}));
  CLI11_PARSE(app, argc, argv);

  nlohmann::json j = bench_record("ids");
  j["device"] = cuda_device_record();
  double pcie = j["device"].value("pcie_h2d_bytes_per_sec", 0.0);
  if (device == "auto") device = pcie > 0 ? "cuda" : "none";
  if (device == "host") j["device"] = {{"kind", "host"}};
  j["settings"] = {{"seconds", seconds}, {"packets", packets}, {"to_client", to_client}, {"pcre_share", pcre_share}};
  std::string dir = std::filesystem::temp_directory_path() / ("shoal-bench-ids-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  ids::Vars vars;
  std::string rules_copy;  // --rules-file, as read (its commented rules too with --commented)
  if (!rules_in.empty()) {
    std::ifstream in(rules_in);
    if (!in) return fmt::print(stderr, "bench-ids: cannot read {}\n", rules_in), 1;
    std::string verr;
    if (!vars_in.empty() && !vars.load_file(vars_in, verr)) return fmt::print(stderr, "bench-ids: {}\n", verr), 1;
    rules_copy = dir + "/rules";
    std::ofstream outf(rules_copy);
    for (std::string line; std::getline(in, line);) {
      if (commented) {
        size_t at = line.find_first_not_of("# \t");
        if (line.rfind('#', 0) == 0 && at != std::string::npos)
          for (const char* act : {"alert ", "drop ", "pass ", "reject ", "sdrop ", "log "})
            if (line.compare(at, std::strlen(act), act) == 0) line = line.substr(at);
      }
      outf << line << "\n";
    }
    rule_counts = {0};  // one set: the file's
    j["settings"]["rules_file"] = rules_in;
    j["settings"]["commented"] = commented;
  }

  fmt::print("shoal bench-ids on {}, one core, {} distinct packets per point\n", cpu_model(), packets);
  fmt::print("{:>6} {:>6} {:>6}  {:<10} {:>9} {:>8} {:>10} {:>9}\n", "rules", "bytes", "match", "engine", "Gbps",
             "Mpps", "vs hs-bare", "alerts/pkt");
  std::mt19937 rng(42);
  int status = 0;
  std::string ids_args = vars_in.empty() ? "" : fmt::format(", VARS \"{}\"", vars_in);
  // a real rule set's rules mostly need flows (flow:, application-layer
  // buffers): with --rules-file both graphs track them
  std::string flows = rules_copy.empty() ? "" : " -> FlowIPManager(MIDSTREAM true)";
  // the replayed rounds resend each flow's segment: to a stream they are
  // retransmissions, inspected once; payload rules on packets keep every
  // round inspected (STREAM_PAYLOAD false), as the rows before streams did
  if (!rules_copy.empty()) ids_args += ", STREAM_PAYLOAD false";
  for (size_t nrules : rule_counts) {
    std::vector<std::string> contents;
    std::string rules_file = rules_copy;
    if (rules_copy.empty()) {
      contents = make_ids_contents(nrules, rng);
      rules_file = dir + "/web.rules";
      std::ofstream(rules_file) << ids_rule_text(contents, pcre_share);
    }
    ids::RuleSet set;
    std::string err;
    auto t0 = clk::now();
    if (!set.load_file(rules_file, vars, rules_copy.empty(), err)) {
      fmt::print(stderr, "bench-ids: {}\n", err);
      return 1;
    }
    double load_s = std::chrono::duration<double>(clk::now() - t0).count();
    std::string packet_rules;  // --rules-file's rules that need no application layer
    if (!rules_copy.empty()) {
      nrules = set.rules().size();
      fmt::print("{}: {} rules loaded, {} refused\n", rules_in, nrules, set.problems().size());
      packet_rules = dir + "/packet.rules";
      std::ofstream pr(packet_rules);
      // (nor an application protocol, app-layer-protocol or the stream:
      // those turn the parsers on)
      for (const ids::Rule& r : set.rules())
        if (!r.uses_tx() && r.app == ids::kAppNone && !r.has_app_cond && !r.stream_only()) pr << r.text << "\n";
    }
    ids::Engine builtin, hs;
    t0 = clk::now();
    if (!builtin.build(set.rules(), ids::EngineKind::Builtin, err)) {
      fmt::print(stderr, "bench-ids: {}\n", err);
      return 1;
    }
    double build_builtin_s = std::chrono::duration<double>(clk::now() - t0).count();
    bool have_hs = ids::have_hyperscan();
    double build_hs_s = 0;
    if (have_hs) {
      t0 = clk::now();
      if (!hs.build(set.rules(), ids::EngineKind::Hyperscan, err)) {
        fmt::print(stderr, "bench-ids: {}\n", err);
        return 1;
      }
      build_hs_s = std::chrono::duration<double>(clk::now() - t0).count();
    }
    // a real rule file: the payloads hold its fast patterns (as the made-up
    // sets' hold their contents)
    if (contents.empty()) contents = builtin.patterns();
    if (contents.empty()) return fmt::print(stderr, "bench-ids: {}: no rule has a fast pattern\n", rules_in), 1;
    const ids::AcTable& ac = builtin.automaton();
    fmt::print(
        "{} rules: parsed in {:.3f} s; built-in DFA {} states x {} classes ({:.1f} MiB) in {:.3f} s; "
        "Hyperscan database in {:.3f} s\n",
        nrules, load_s, ac.states(), ac.classes(), double(ac.memory_bytes()) / (1 << 20), build_builtin_s, build_hs_s);
    j["rule_sets"].push_back({{"rules", nrules},
                              {"parse_s", load_s},
                              {"builtin_build_s", build_builtin_s},
                              {"dfa_states", ac.states()},
                              {"dfa_classes", ac.classes()},
                              {"dfa_bytes", ac.memory_bytes()},
                              {"hyperscan_build_s", build_hs_s}});
#ifdef SHOAL_HAVE_HYPERSCAN
    // The bare loop's own database: the same fast patterns, the same flags.
    hs_database_t* bare_db = nullptr;
    hs_scratch_t* bare_scratch = nullptr;
    {
      const auto& pats = hs.patterns();
      std::vector<const char*> ex;
      std::vector<size_t> lens;
      std::vector<unsigned> fl, ids;
      for (uint32_t i = 0; i < pats.size(); ++i)
        ex.push_back(pats[i].data()), lens.push_back(pats[i].size()),
            fl.push_back(HS_FLAG_CASELESS | HS_FLAG_SINGLEMATCH), ids.push_back(i);
      hs_compile_error_t* ce = nullptr;
      if (hs_compile_lit_multi(ex.data(), fl.data(), ids.data(), lens.data(), unsigned(ex.size()), HS_MODE_BLOCK,
                               nullptr, &bare_db, &ce) != HS_SUCCESS ||
          hs_alloc_scratch(bare_db, &bare_scratch) != HS_SUCCESS) {
        fmt::print(stderr, "bench-ids: Hyperscan: {}\n", ce ? ce->message : "no scratch");
        return 1;
      }
      for (hs_database_t* g : hs.database()->hs()->group[0])
        if (g && hs_alloc_scratch(g, &bare_scratch) != HS_SUCCESS)
          return fmt::print(stderr, "bench-ids: Hyperscan: no scratch\n"), 1;
    }
#endif
    for (uint32_t len : lengths)
      for (double frac : fracs) {
        IdsTraffic t = make_ids_traffic(contents, len, frac, packets, rng, to_client);
        double avg = double(t.bytes) / double(t.frames.size());
        std::vector<uint32_t> hits;
        uint64_t alerts = 0, pk = 0;
        auto engine_fn = [&](ids::Engine& e) {
          return [&](const std::vector<uint8_t>& f) {
            ids::PacketInfo info;
            if (!ids::parse_packet(f.data() + 14, uint32_t(f.size() - 14), info)) return;
            e.match(info, hits);
            alerts += hits.size();
            ++pk;
          };
        };
        struct Row {
          std::string engine;
          double pps;
          double alerts_per_pkt;
          double regex_per_pkt = -1, verified_per_pkt = -1;  // offloaded: pcres the device answered, rules verified
        };
        std::vector<Row> rows;
        double bare = 0;
#ifdef SHOAL_HAVE_HYPERSCAN
        uint64_t found = 0;
        bare = packets_per_sec(t, seconds, [&](const std::vector<uint8_t>& f) {
          hs_scan(
              bare_db, reinterpret_cast<const char*>(f.data()) + 54, unsigned(f.size() - 54), 0, bare_scratch,
              [](unsigned, unsigned long long, unsigned long long, unsigned, void* c) -> int {
                ++*static_cast<uint64_t*>(c);
                return 0;
              },
              &found);
        });
        rows.push_back({"hs-bare", bare, -1});
        // the same loop over each packet's port group (ids/port_groups.hh):
        // the matchers the engine scans with, without its verification
        const ids::Database& hdb = *hs.database();
        const ids::PortGroups& pg = hdb.port_groups();
        if (!pg.sets.empty()) {
          found = 0;
          double grouped = packets_per_sec(t, seconds, [&](const std::vector<uint8_t>& f) {
            uint16_t sp = uint16_t(f[34] << 8 | f[35]), dp = uint16_t(f[36] << 8 | f[37]);
            int32_t g = pg.pick(0, true, sp, dp, hdb.patterns().size());
            if (g >= 0 && pg.sets[size_t(g)].empty()) return;
            hs_database_t* d = g >= 0 && hdb.hs()->group[0][size_t(g)] ? hdb.hs()->group[0][size_t(g)] : hdb.hs()->db;
            hs_scan(
                d, reinterpret_cast<const char*>(f.data()) + 54, unsigned(f.size() - 54), 0, bare_scratch,
                [](unsigned, unsigned long long, unsigned long long, unsigned, void* c) -> int {
                  ++*static_cast<uint64_t*>(c);
                  return 0;
                },
                &found);
          });
          rows.push_back({"hs-bare-groups", grouped, -1});
        }
        alerts = pk = 0;
        double h = packets_per_sec(t, seconds, engine_fn(hs));
        rows.push_back({"hyperscan", h, double(alerts) / double(std::max<uint64_t>(pk, 1))});
#endif
        alerts = pk = 0;
        double b = packets_per_sec(t, seconds, engine_fn(builtin));
        rows.push_back({"builtin", b, double(alerts) / double(std::max<uint64_t>(pk, 1))});
        if (element) {
          // The element in a graph, less the graph without it (same pcap).
          std::string pcap = dir + "/t.pcap";
          {
            io::PcapWriter w;
            if (!w.open(pcap, 1, 65535, false, err)) return fmt::print(stderr, "bench-ids: {}\n", err), 1;
            // enough for about `seconds` of the engine's work, at most 96 MiB
            double fastest = 0;
            for (const Row& r : rows) fastest = std::max(fastest, r.pps);
            double est = fastest * seconds;
            size_t reps = size_t(std::clamp(est / double(t.frames.size()), 1.0,
                                            double(96u << 20) / double(t.bytes + 16 * t.frames.size())));
            for (size_t rep = 0; rep < reps; ++rep)
              for (const auto& f : t.frames) w.write(f.data(), uint32_t(f.size()), uint32_t(f.size()), 0);
          }
          // median of three runs each
          auto median3 = [&](const std::string& cfg, bool off) {
            double v[3];
            uint64_t n;
            for (double& x : v) x = graph_pps(cfg, off, n, err);
            std::sort(v, v + 3);
            return v[1];
          };
          for (const char* eng : {"hyperscan", "builtin"}) {
            if (std::string(eng) == "hyperscan" && !have_hs) continue;
            double base =
                median3(fmt::format("FromDump({}, STOP true){} -> c :: Counter -> Discard;", pcap, flows), false);
            double with = median3(fmt::format("FromDump({}, STOP true){} -> IDSMatcher(RULES {}, ENGINE {}, QUIET "
                                              "true{}) -> c :: Counter -> Discard;",
                                              pcap, flows, rules_file, eng, ids_args),
                                  false);
            if (base <= 0 || with <= 0) return fmt::print(stderr, "bench-ids: {}\n", err), 1;
            double per = 1 / with - 1 / base;  // the element's seconds per packet
            rows.push_back({fmt::format("element-{}", eng == std::string("hyperscan") ? "hs" : "builtin"),
                            per > 0 ? 1 / per : with, -1});
            if (!packet_rules.empty() && eng == std::string("hyperscan")) {
              // the application layer's cost apart: the packet rules alone
              // (no transaction rule, so no parser runs), and the difference
              double pk = median3(fmt::format("FromDump({}, STOP true){} -> IDSMatcher(RULES {}, ENGINE {}, QUIET "
                                              "true{}) -> c :: Counter -> Discard;",
                                              pcap, flows, packet_rules, eng, ids_args),
                                  false);
              double per_pk = pk > 0 ? 1 / pk - 1 / base : 0;
              if (per_pk > 0) rows.push_back({"element-hs-packet-rules", 1 / per_pk, -1});
              if (per_pk > 0 && per > per_pk) rows.push_back({"applayer", 1 / (per - per_pk), -1});
            }
          }
          if (device != "none") {
            // the pcres on the device, then on the host (median of three each)
            for (bool dev_regex : {true, false}) {
              std::string cfg = fmt::format(
                  "FromDump({}, STOP true){} -> OffloadBalancer(1) -> i :: IDSMatcher(RULES {}, ENGINE builtin, "
                  "QUIET true{}) -> c :: Counter -> Discard;",
                  pcap, flows, rules_file, ids_args);
              if (!dev_regex) setenv("SHOAL_DEVICE_REGEX", "0", 1);
              double v[3];
              uint64_t n = 0;
              std::map<std::string, std::string> got;
              for (double& x : v) x = graph_run(cfg, device, {"i.device_regex", "i.verified"}, &got, n, err);
              unsetenv("SHOAL_DEVICE_REGEX");
              std::sort(v, v + 3);
              if (v[0] <= 0) return fmt::print(stderr, "bench-ids: offloaded: {}\n", err), 1;
              Row r{dev_regex ? "offload" : "offload-host-pcre", v[1], -1};
              if (n) {
                r.regex_per_pkt = std::strtod(got["i.device_regex"].c_str(), nullptr) / double(n);
                r.verified_per_pkt = std::strtod(got["i.verified"].c_str(), nullptr) / double(n);
              }
              rows.push_back(r);
            }
          }
        }
        for (const Row& r : rows) {
          double gbps = r.pps * avg * 8 / 1e9;
          fmt::print("{:>6} {:>6} {:>5.0f}%  {:<10} {:>9.2f} {:>8.3f} {:>9.0f}% {:>9}{}\n", nrules, len, frac * 100,
                     r.engine, gbps, r.pps / 1e6, bare > 0 ? 100 * r.pps / bare : 0.0,
                     r.alerts_per_pkt >= 0 ? fmt::format("{:.3f}", r.alerts_per_pkt) : std::string("-"),
                     r.regex_per_pkt >= 0
                         ? fmt::format("   {:.2f} rules verified, {:.2f} pcres answered on the device, a packet",
                                       r.verified_per_pkt, r.regex_per_pkt)
                         : std::string());
          nlohmann::json row = {{"rules", nrules},        {"frame_bytes", len},
                                {"match_fraction", frac}, {"engine", r.engine},
                                {"gbps", gbps},           {"mpps", r.pps / 1e6},
                                {"planted", t.planted},   {"vs_hs_bare", bare > 0 ? r.pps / bare : 0}};
          if (r.alerts_per_pkt >= 0) row["alerts_per_packet"] = r.alerts_per_pkt;
          if (r.engine.starts_with("offload") && device == "cuda") row["pcie_limit_mpps"] = pcie / avg / 1e6;
          if (r.regex_per_pkt >= 0) row["device_regex_per_packet"] = r.regex_per_pkt;
          if (r.verified_per_pkt >= 0) row["verified_per_packet"] = r.verified_per_pkt;
          j["results"].push_back(row);
        }
      }
#ifdef SHOAL_HAVE_HYPERSCAN
    hs_free_scratch(bare_scratch);
    hs_free_database(bare_db);
#endif
  }
  std::filesystem::remove_all(dir);
  if (!out.empty()) {
    std::ofstream f(out);
    f << j.dump(2) << "\n";
    if (!f) return fmt::print(stderr, "shoal bench-ids: cannot write {}\n", out), 1;
    fmt::print("wrote {}\n", out);
  }
  return status;
}

}  // namespace shoal::tool
