// `shoal ids`: an IDS/IPS run in Suricata's terms. It builds the graph
// (read, flows, detection, logs) as a Click configuration and runs it; the
// configuration is what --dump-config prints, for those who want to compose.
#include <fmt/format.h>
#include <sys/stat.h>

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "common.hh"
#include "shoal/ids/dataset.hh"
#include "suricata_yaml.hh"

namespace shoal::tool {

namespace {

// A string as a Click configuration argument: double-quoted, escaped.
std::string cquote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') q += '\\';
    q += c;
  }
  return q + "\"";
}

struct IdsArgs {
  std::string pcap, iface, rules, config, logdir = ".", datadir;
  std::vector<std::string> sets;
  bool ips = false, dump = false, quiet = false;
  std::string checksums = "auto", runmode;
  std::string offload;  // a device backend: the payload and stream scans run there (empty: the CPU)
  int threads = 1;
};

constexpr const char* kRequestBodyLimit = "app-layer.protocols.http.libhtp.default-config.request-body-limit";
constexpr const char* kResponseBodyLimit = "app-layer.protocols.http.libhtp.default-config.response-body-limit";
constexpr const char* kDecompressLayers =
    "app-layer.protocols.http.libhtp.default-config.response-body-decompress-layer-limit";

// Suricata's --set settings that change what this graph does, and the
// values they take; the others are reported as not honoured.
bool apply_set(const std::string& kv, std::map<std::string, std::string>& honoured, std::string& err) {
  size_t eq = kv.find('=');
  if (eq == std::string::npos || eq == 0) return err = fmt::format("--set '{}': NAME=VALUE expected", kv), false;
  std::string k = kv.substr(0, eq), v = kv.substr(eq + 1);
  // (shoal.stream-payload is Shoal's own: false puts TCP payload rules on packets, IDSMatcher's STREAM_PAYLOAD)
  static const std::set<std::string> kBool = {"stream.midstream",         "stream.async-oneside",
                                              "vlan.use-for-tracking",    "shoal.stream-payload",
                                              "detect.guess-applayer-tx", "stream.drop-invalid"};
  if (kBool.count(k)) {
    if (v != "true" && v != "false" && v != "yes" && v != "no")
      return err = fmt::format("--set {}: true or false, not '{}'", k, v), false;
    honoured[k] = (v == "true" || v == "yes") ? "true" : "false";
    return true;
  }
  // DNS's detection ports ("53", "[53, 5353]"): a word list
  if (k == "app-layer.protocols.dns.detection-ports.dp" || k == "app-layer.protocols.dns.udp.detection-ports.dp" ||
      k == "app-layer.protocols.dns.tcp.detection-ports.dp") {
    std::string words, w;
    for (char ch : v + " ") {
      if (ch == '[' || ch == ']' || ch == ',' || ch == ' ') {
        if (!w.empty()) words += (words.empty() ? "" : " ") + w;
        w.clear();
      } else {
        w += ch;
      }
    }
    honoured["dns-ports"] = words;
    return true;
  }
  if (k == "packet-alert-max" || k == "detect.stream-tx-log-limit") {  // 1-255
    unsigned n = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < 1 || n > 255)
      return err = fmt::format("--set {}: 1-255, not '{}'", k, v), false;
    honoured[k] = std::to_string(n);
    return true;
  }
  if (k == "shoal.burst") {  // Shoal's own: packets per batch read from the capture (FromDump's BURST)
    unsigned n = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec != std::errc() || end != v.data() + v.size() || n < 1 || n > 256)
      return err = fmt::format("--set {}: 1-256, not '{}'", k, v), false;
    honoured[k] = std::to_string(n);
    return true;
  }
  if (k == "stream.inline") {  // true, false or auto (inline in IPS mode)
    if (v != "auto" && v != "true" && v != "false" && v != "yes" && v != "no")
      return err = fmt::format("--set {}: auto, true or false, not '{}'", k, v), false;
    honoured[k] = v == "auto" ? "auto" : (v == "true" || v == "yes") ? "true" : "false";
    return true;
  }
  if (k == "stream.midstream-policy" || k == "exception-policy") {
    static const std::set<std::string> kPolicies = {"ignore", "auto", "pass-flow", "bypass", "drop-flow", "reject"};
    if (!kPolicies.count(v))
      return err = fmt::format("--set {}: ignore, auto, pass-flow, bypass, drop-flow or reject, not '{}'", k, v), false;
    honoured[k] = v;  // (the specific policies are chosen over the master switch where they are used)
    return true;
  }
  if (k == "app-layer.error-policy") {
    static const std::set<std::string> kPolicies = {"ignore",    "auto",      "drop-packet", "pass-packet",
                                                    "drop-flow", "pass-flow", "bypass",      "reject"};
    if (!kPolicies.count(v))
      return err = fmt::format(
                 "--set {}: ignore, auto, drop-packet, pass-packet, drop-flow, pass-flow, bypass or "
                 "reject, not '{}'",
                 k, v),
             false;
    honoured[k] = v;
    return true;
  }
  if (k == "app-layer.protocols.ssh.encryption-handling") {
    if (v != "track-only" && v != "full" && v != "bypass")
      return err = fmt::format("--set {}: track-only, full or bypass, not '{}'", k, v), false;
    honoured[k] = v;
    return true;
  }
  // libhtp's body limits: Suricata's sizes (100kb, 1mb, 1048576)
  if (k == kRequestBodyLimit || k == kResponseBodyLimit) {
    uint64_t n = 0;
    if (!ids::parse_suricata_size(v, n) || n > (64u << 20))
      return err = fmt::format("--set {}: a size up to 64mb (100kb, 1mb, 1048576), not '{}'", k, v), false;
    honoured[k] = std::to_string(n);
    return true;
  }
  if (k == "threshold-file") {
    honoured[k] = v;
    return true;
  }
  if (k == "stream.reassembly.depth") {  // a size (1mb, 0: all)
    uint64_t n = 0;
    if (!ids::parse_suricata_size(v, n)) return err = fmt::format("--set {}: a size (1mb, 0), not '{}'", k, v), false;
    honoured[k] = std::to_string(n);
    return true;
  }
  // outputs.N.eve-log.types.M.anomaly.types.stream (or .decode): stream
  // (decoder) events as anomaly records
  for (const char* t : {"stream", "decode"})
    if (std::string tail = std::string(".anomaly.types.") + t;
        k.size() > tail.size() && k.compare(k.size() - tail.size(), tail.size(), tail) == 0 &&
        k.rfind("outputs.", 0) == 0) {
      honoured[std::string("anomaly-") + t] = (v == "yes" || v == "true") ? "true" : "false";
      return true;
    }
  static const std::set<std::string> kInt = {kDecompressLayers};
  if (kInt.count(k)) {
    char* end = nullptr;
    long n = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || n < 0 || n > 64) return err = fmt::format("--set {}: 0-64, not '{}'", k, v), false;
    honoured[k] = std::to_string(n);
    return true;
  }
  fmt::print(stderr, "shoal ids: --set {}: not honoured (this setting has no equivalent here yet)\n", k);
  return true;
}

// Whether a -c file is Snort's var lines (var, ipvar, portvar) rather than
// YAML: its first line that is not blank or a comment says.
bool snort_var_lines(const std::string& path) {
  std::ifstream f(path);
  for (std::string line; std::getline(f, line);) {
    size_t i = line.find_first_not_of(" \t\r");
    if (i == std::string::npos || line[i] == '#') continue;
    for (const char* w : {"var ", "ipvar ", "portvar ", "var\t", "ipvar\t", "portvar\t"})
      if (line.compare(i, std::strlen(w), w) == 0) return true;
    return false;
  }
  return true;  // (empty: nothing to read either way)
}

std::string build_config(const IdsArgs& a, const std::map<std::string, std::string>& set, const SuricataSettings& st) {
  auto get = [&](const char* k, const char* def) {
    auto it = set.find(k);
    return it == set.end() ? std::string(def) : it->second;
  };
  std::string burst = set.count("shoal.burst") ? ", BURST " + set.at("shoal.burst") : "";
  // (with several workers, every packet between two hosts on one: fragments
  // and tunnels with their connections, as Suricata advises for RSS)
  std::string src = !a.pcap.empty() ? fmt::format("FromDump({}, DAMAGE warn{}{})", cquote(a.pcap), burst,
                                                  a.threads > 1 ? ", SPREAD hosts" : "")
                                    : fmt::format("FromDevice({}, SNIFFER true, PROMISC true)", cquote(a.iface));
  // EVE: suricata.yaml's eve-log outputs (each file with its types), or
  // every type to eve.json
  auto in_logdir = [&](const std::string& f) { return !f.empty() && f[0] == '/' ? f : a.logdir + "/" + f; };
  auto words = [](const std::vector<std::string>& v) {
    std::string w;
    for (const std::string& x : v) w += (w.empty() ? "" : " ") + x;
    return w;
  };
  std::string ids =
      fmt::format("IDSMatcher(RULES {}, FASTLOG {}, IPS {}", cquote(a.rules), cquote(a.logdir + "/fast.log"), a.ips);
  if (st.eve_logs.empty()) {
    ids += fmt::format(", EVE {}", cquote(a.logdir + "/eve.json"));
  } else {
    ids += fmt::format(", EVE {}, EVE_TYPES {}", cquote(in_logdir(st.eve_logs[0].filename)),
                       cquote(words(st.eve_logs[0].types)));
    std::string more;
    for (size_t i = 1; i < st.eve_logs.size(); ++i)
      more += fmt::format("{}{} {}", more.empty() ? "" : "; ", in_logdir(st.eve_logs[i].filename),
                          words(st.eve_logs[i].types));
    if (!more.empty()) ids += fmt::format(", EVE_OUTPUTS {}", cquote(more));
  }
  // the variables: Suricata's defaults, then the -c file's (later lines win)
  ids += ", SURICATA_VARS true";
  if (!a.config.empty()) ids += fmt::format(", VARS {}", cquote(std::filesystem::absolute(a.config).string()));
  if (set.count("threshold-file")) ids += fmt::format(", THRESHOLD {}", cquote(set.at("threshold-file")));
  if (set.count("dns-ports")) ids += fmt::format(", DNS_PORTS {}", cquote(set.at("dns-ports")));
  if (set.count("shoal.stream-payload")) ids += fmt::format(", STREAM_PAYLOAD {}", set.at("shoal.stream-payload"));
  if (set.count(kDecompressLayers)) ids += fmt::format(", HTTP_DECOMPRESS_LAYERS {}", set.at(kDecompressLayers));
  if (set.count(kRequestBodyLimit)) ids += fmt::format(", HTTP_REQUEST_BODY_LIMIT {}", set.at(kRequestBodyLimit));
  if (set.count(kResponseBodyLimit)) ids += fmt::format(", HTTP_RESPONSE_BODY_LIMIT {}", set.at(kResponseBodyLimit));
  if (!st.action_order.empty()) {
    std::string order;
    for (const std::string& x : st.action_order) order += (order.empty() ? "" : " ") + x;
    ids += fmt::format(", ACTION_ORDER {}", cquote(order));
  }
  // the midstream policy: --set's, over suricata.yaml's, the specific one over the master switch
  std::string mid = set.count("stream.midstream-policy") ? set.at("stream.midstream-policy")
                    : set.count("exception-policy")      ? set.at("exception-policy")
                                                         : st.midstream_policy;
  if (!mid.empty() && mid != "ignore") ids += fmt::format(", MIDSTREAM_POLICY {}", mid);
  // the app-layer error policy: the setting (--set's, then suricata.yaml's), else the master switch
  std::string app_error = set.count("app-layer.error-policy") ? set.at("app-layer.error-policy")
                          : !st.app_error_policy.empty()      ? st.app_error_policy
                          : set.count("exception-policy")     ? set.at("exception-policy")
                                                              : st.exception_policy;
  if (!app_error.empty() && app_error != "ignore") ids += fmt::format(", APP_ERROR_POLICY {}", app_error);
  if (set.count("packet-alert-max") || st.packet_alert_max)
    ids += fmt::format(", PACKET_ALERT_MAX {}", set.count("packet-alert-max") ? set.at("packet-alert-max")
                                                                              : std::to_string(st.packet_alert_max));
  if (set.count("detect.guess-applayer-tx") ? set.at("detect.guess-applayer-tx") == "true" : st.guess_applayer_tx)
    ids += ", GUESS_APPLAYER_TX true";
  if (set.count("detect.stream-tx-log-limit") || st.stream_tx_log_limit)
    ids += fmt::format(", STREAM_TX_LOG_LIMIT {}", set.count("detect.stream-tx-log-limit")
                                                       ? set.at("detect.stream-tx-log-limit")
                                                       : std::to_string(st.stream_tx_log_limit));
  if (st.eve_exception_policy) ids += ", EVE_EXCEPTION_POLICY true";
  ids += fmt::format(", DATA_DIR {}", cquote(a.datadir.empty() ? a.logdir : a.datadir));
  std::string ssh = set.count("app-layer.protocols.ssh.encryption-handling")
                        ? set.at("app-layer.protocols.ssh.encryption-handling")
                        : st.ssh_encryption;
  if (!ssh.empty() && ssh != "track-only") ids += fmt::format(", SSH_ENCRYPTION {}", ssh);
  if (st.eve_verdict) ids += ", EVE_VERDICT true";
  if (st.drop_flows == "all" || st.drop_flows == "start") ids += fmt::format(", EVE_DROP_FLOWS {}", st.drop_flows);
  if (st.drop_alerts) ids += ", EVE_DROP_ALERTS true";
  if (st.eve_ethernet) ids += ", EVE_ETHERNET true";
  if (st.eve_pcap_file && !a.pcap.empty()) ids += fmt::format(", EVE_PCAP_FILENAME {}", cquote(a.pcap));
  if (st.eve_packet) ids += ", EVE_PACKET true";
  if (st.eve_payload) ids += ", EVE_PAYLOAD true";
  // Suricata's stream.inline: auto (inline in IPS mode) or forced; not
  // inline, data is inspected and parsed once acknowledged (IDS mode)
  std::string inl = get("stream.inline", st.stream_inline.empty() ? "auto" : st.stream_inline.c_str());
  if (!(inl == "auto" ? a.ips : inl == "true")) ids += ", STREAM_INSPECT acked";
  if (get("stream.drop-invalid", st.drop_invalid.empty() ? "true" : st.drop_invalid.c_str()) == "false")
    ids += ", STREAM_DROP_INVALID false";
  if (st.eve_payload_printable) ids += ", EVE_PAYLOAD_PRINTABLE true";
  if (st.eve_tagged_packets) ids += ", EVE_TAGGED_PACKETS true";
  if (set.count("anomaly-stream") ? set.at("anomaly-stream") == "true" : st.eve_anomaly_stream)
    ids += ", EVE_ANOMALY_STREAM true";
  if (set.count("anomaly-decode") ? set.at("anomaly-decode") == "true" : st.eve_anomaly_decode)
    ids += ", EVE_ANOMALY_DECODE true";
  if (set.count("stream.reassembly.depth") || !st.stream_depth.empty())
    ids += fmt::format(", STREAM_DEPTH {}",
                       set.count("stream.reassembly.depth") ? set.at("stream.reassembly.depth") : st.stream_depth);
  if (!st.host_os_policy.empty()) ids += fmt::format(", HOST_OS_POLICY {}", cquote(st.host_os_policy));
  if (st.dns_version) ids += fmt::format(", EVE_DNS_VERSION {}", st.dns_version);
  if (!st.file_hashes.empty()) {
    std::string h;
    for (const std::string& x : st.file_hashes) h += (h.empty() ? "" : " ") + x;
    ids += fmt::format(", FILE_HASHES {}", cquote(h));
  }
  if (!st.xff_mode.empty()) ids += fmt::format(", XFF_MODE {}", cquote(st.xff_mode));
  if (!st.xff_mode.empty() && !st.xff_deployment.empty())
    ids += fmt::format(", XFF_DEPLOYMENT {}", cquote(st.xff_deployment));
  if (!st.xff_mode.empty() && !st.xff_header.empty()) ids += fmt::format(", XFF_HEADER {}", cquote(st.xff_header));
  ids += ")";
  // Suricata tracks every flow and, by default, picks up no TCP
  // connection midstream.
  std::string conf = fmt::format(
      "// shoal ids: read, reassemble fragments, decode tunnels (and reassemble theirs), track flows, detect, log{}\n"
      "src :: {}\n"
      "  -> defrag :: IPReassembler(FRAGMENTS true)\n"
      "  -> tunnels :: TunnelDecap\n"
      "  -> inner_defrag :: IPReassembler(FRAGMENTS true, INNER true)\n"
      "  -> flows :: FlowIPManager(MIDSTREAM {}{}{})\n"
      "{}"
      "  -> ids :: {};\n"
      "ids[0] -> Discard;\n",
      a.ips ? " (IPS: dropped packets leave on ids[1])" : "", src,
      get("stream.midstream", st.midstream.empty() ? "false" : st.midstream.c_str()),
      get("stream.async-oneside", st.async_oneside.empty() ? "false" : st.async_oneside.c_str()) == "true"
          ? ", ASYNC_ONESIDE true"
          : "",
      // flows keyed on VLAN ids too, as Suricata's default
      get("vlan.use-for-tracking", st.vlan_tracking.empty() ? "true" : st.vlan_tracking.c_str()) == "true"
          ? ", VLAN true"
          : "",
      a.offload.empty() ? "" : "  -> OffloadBalancer(FRACTION 1)  // the scans on the device, the rest here\n", ids);
  conf += "ids[1] -> dropped :: Discard;\n";
  return conf;
}

}  // namespace

int cmd_ids(int argc, char** argv) {
  CLI::App app{"shoal ids: Suricata-style IDS/IPS over a capture or an interface"};
  IdsArgs a;
  auto* r = app.add_option("-r", a.pcap, "read packets from this pcap or pcapng file");
  auto* i = app.add_option("-i", a.iface, "capture on this interface");
  r->excludes(i);
  app.add_option("-S", a.rules, "the rules file")->required();
  app.add_option("-c", a.config, "variables: a suricata.yaml (vars:) or Snort var lines");
  app.add_option("-l", a.logdir, "log directory: eve.json and fast.log (default .)");
  app.add_option("--data-dir", a.datadir, "where datasets' save and state files go (default the log directory)");
  app.add_option("--set", a.sets,
                 "NAME=VALUE Suricata setting (stream.midstream, stream.async-oneside, stream.midstream-policy, "
                 "stream.drop-invalid, "
                 "app-layer.error-policy, "
                 "exception-policy, vlan.use-for-tracking, stream.inline, packet-alert-max, detect.guess-applayer-tx, "
                 "detect.stream-tx-log-limit, "
                 "app-layer.protocols.ssh.encryption-handling, threshold-file, DNS's detection ports and the HTTP "
                 "body and decompression layer limits are honoured; Shoal's own shoal.stream-payload=false puts TCP "
                 "payload rules on packets, and shoal.burst=N reads N packets a batch from a capture)");
  app.add_flag("--ips,--simulate-ips", a.ips, "IPS mode: drop and reject rules drop packets");
  app.add_option("-k", a.checksums, "checksum checks (accepted: checksums are not validated)")
      ->check(CLI::IsMember({"auto", "all", "none"}));
  app.add_option("--runmode", a.runmode, "accepted (the run mode is -t)");
  app.add_option("-t,--threads", a.threads, "worker threads")->check(CLI::Range(1, 256));
  app.add_flag("--dump-config", a.dump, "print the Click configuration instead of running it");
  app.add_option("--offload", a.offload,
                 "scan the payloads and the TCP streams on this device backend (the host verifies the candidates: "
                 "the same alerts)")
      ->check(CLI::IsMember({"auto", "host", "cuda"}));
  app.add_flag("-q,--quiet", a.quiet, "no status line, no summary");
  CLI11_PARSE(app, argc, argv);
  if (a.pcap.empty() && a.iface.empty()) {
    fmt::print(stderr, "shoal ids: -r FILE or -i IFACE is needed\n");
    return 2;
  }
  std::map<std::string, std::string> set;
  for (auto& kv : a.sets) {
    std::string err;
    if (!apply_set(kv, set, err)) {
      fmt::print(stderr, "shoal ids: {}\n", err);
      return 2;
    }
  }
  if (!a.config.empty() && !std::ifstream(a.config)) {
    fmt::print(stderr, "shoal ids: -c {}: cannot read it\n", a.config);
    return 2;
  }
  // the settings of a suricata.yaml this graph honours (a file of Snort var
  // lines is not YAML: it gives variables only)
  SuricataSettings settings;
  if (!a.config.empty()) {
    YamlNode root;
    std::string yerr;
    if (load_yaml(a.config, root, yerr)) {
      settings = suricata_settings(root);
    } else if (!snort_var_lines(a.config)) {  // a suricata.yaml that does not parse: said, not ignored
      fmt::print(stderr, "shoal ids: -c {}\n", yerr);
      return 2;
    }
  }
  // Suricata's environment override of the dns records' format
  if (const char* v = std::getenv("SURICATA_EVE_DNS_VERSION")) {
    if (std::string(v) != "2" && std::string(v) != "3") {
      fmt::print(stderr, "shoal ids: SURICATA_EVE_DNS_VERSION: 2 or 3, not '{}'\n", v);
      return 2;
    }
    settings.dns_version = std::atoi(v);
  }
  std::string conf = build_config(a, set, settings);
  if (a.dump) {
    fmt::print("{}", conf);
    return 0;
  }
  struct stat st;
  if (::stat(a.logdir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    fmt::print(stderr, "shoal ids: -l {}: not a directory\n", a.logdir);
    return 2;
  }
  if (!a.datadir.empty() && (::stat(a.datadir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))) {
    fmt::print(stderr, "shoal ids: --data-dir {}: not a directory\n", a.datadir);
    return 2;
  }
  RunArgs ra;
  ra.text = conf;
  ra.text_name = "shoal-ids";
  ra.threads = a.threads;
  ra.quiet = a.quiet;
  if (!a.offload.empty()) ra.device = a.offload;
  return cmd_run(ra);
}

}  // namespace shoal::tool
