// IDSMatcher: Snort/Suricata rules over IP packets, alerts to fast.log and
// EVE JSON, alerted packets to output 1; GPUIDSMatcher in Snap's form.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <strings.h>

#include <openssl/evp.h>
#include <pcap/dlt.h>
#include <array>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <string_view>
#include <type_traits>
#include <unordered_map>

#include "shoal/core/json_record.hh"
#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/flow/flowipmanager.hh"
#include "shoal/elements/ids/idsapplayer.hh"
#include "shoal/ids/decode_events.hh"
#include "shoal/ids/engine.hh"
#include "shoal/ids/hostbits.hh"
#include "shoal/ids/tags.hh"
#include "shoal/ids/threshold.hh"
#include "shoal/io/outfile.hh"
#include "shoal/io/pcap.hh"
#include "shoal/io/shared_file.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/steps/ids_scan.hh"
#include "shoal/offload/element.hh"
#include "shoal/offload/mirror.hh"

namespace shoal {

namespace {

// Addresses as Suricata writes them: IPv6 in full (eight groups of four hex digits).
std::string addr_text(const ids::Addr& a) {
  if (!a.v6) return fmt::format("{}.{}.{}.{}", a.b[0], a.b[1], a.b[2], a.b[3]);
  std::string s;
  for (int i = 0; i < 16; i += 2) s += fmt::format("{}{:02x}{:02x}", i ? ":" : "", a.b[i], a.b[i + 1]);
  return s;
}

// Protocol names as Suricata's EVE writes them; others by number.
std::string proto_name(uint8_t p) {
  switch (p) {
    case 1: return "ICMP";
    case 2: return "IGMP";
    case 4: return "IP-in-IP";
    case 6: return "TCP";
    case 17: return "UDP";
    case 41: return "IPv6";
    case 47: return "GRE";
    case 50: return "ESP";
    case 51: return "AH";
    case 58: return "IPv6-ICMP";
    case 103: return "PIM";
    case 132: return "SCTP";
  }
  return std::to_string(p);
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

// Where the IP header of p starts (the network header annotation, else
// after an Ethernet header) and its parse; false when p is not IP.
bool locate(Packet* p, ids::PacketInfo& info, uint32_t& ip_off, int32_t ip_at = -1) {
  uint32_t len = 0;
  if (ip_at >= 0) {  // an earlier device step checked the IP header there
    if (uint64_t(ip_at) >= p->length()) return false;
    ip_off = uint32_t(ip_at);
    len = p->length() - ip_off;
    if (!ids::parse_packet(p->data() + ip_off, len, info)) return false;
    if (p->anno().flags & Anno::kTunnelOuter) info.plen = 0;  // (as below)
    return true;
  }
  // the network header annotation, else an Ethernet frame's (802.1Q and
  // QinQ tags skipped), else raw IP
  const uint8_t* ip = flow_ip_header(p, len);
  if (!ip) return false;
  ip_off = uint32_t(ip - p->data());
  if (!ids::parse_packet(ip, len, info)) return false;
  if (p->anno().flags & Anno::kTunnelOuter) info.plen = 0;  // a tunnel's root: its inner packet is inspected
  return true;
}

// One EVE line. Fields taken from traffic (URIs, headers, file names) may
// hold bytes that are not UTF-8: they are written as U+FFFD, never abort the
// record.
std::string eve_text(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

// The rule set and its compiled database, shared by every worker's copy.
struct IdsShared {
  ids::RuleSet set;
  ids::Classifications classes;
  std::shared_ptr<const ids::Database> db;
  // Suricata's stats counters ("decoder.pkts", ...), summed over the copies
  // as they stop; the last one writes the stats record.
  std::mutex stats_mu;
  std::map<std::string, uint64_t> stats;
  int copies = 0, stopped = 0;  // (under stats_mu) the last copy to stop saves the datasets
  uint64_t loaded_ns = 0;       // when the rules were loaded (wall clock)
  // The state Suricata keeps per host or across flows, one for the
  // workers' copies (each locks its own): a host's flows go to any worker.
  ids::ThresholdState threshold;
  ids::HostBits hostbits;  // hostbits and xbits
  ids::TagState tags;      // the sessions and hosts tag rules started
};

// Suricata's stats object from dotted counter names.
nlohmann::json stats_json(const std::map<std::string, uint64_t>& counters) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [name, v] : counters) {
    nlohmann::json* at = &j;
    size_t from = 0;
    for (size_t dot = name.find('.'); dot != std::string::npos; from = dot + 1, dot = name.find('.', from))
      at = &(*at)[name.substr(from, dot - from)];
    (*at)[name.substr(from)] = v;
  }
  return j;
}

class IDSMatcher : public offload::OffloadableElement<Element> {
 public:
  void configure(Args& a) override {
    if (gpu_form_) {
      int64_t bit = -1;
      a.read("ALERT", bit);
      if (bit > 31) a.fail("ALERT: a predicate bit is 0-31");
      if (bit >= 0) alert_bit_ = 1u << bit;
    }
    std::string engine = ids::have_hyperscan() ? "auto" : "builtin";
    InputPath rules, vars, classification;
    OutputPath fastlog, eve;
    a.read_mp("RULES", rules).read("VARS", vars).read("SURICATA_VARS", suricata_vars_);
    a.read("ENGINE", engine).read("FASTLOG", fastlog);
    a.read("CLASSIFICATION", classification);
    InputPath threshold;
    a.read("THRESHOLD", threshold);
    std::string types = "alert drop flow http files dns tls sip ssh ftp smtp anomaly stats";
    a.read("EVE", eve).read("EVE_TYPES", types).read("STRICT", strict_).read("QUIET", quiet_).read("IPS", ips_);
    std::string outputs, drop_flows = "start";
    a.read("EVE_OUTPUTS", outputs).read("EVE_DROP_FLOWS", drop_flows).read("EVE_DROP_ALERTS", drop_alerts_);
    if (drop_flows != "start" && drop_flows != "all") a.fail("EVE_DROP_FLOWS: start or all");
    drop_all_ = drop_flows == "all";
    int layers = 2;
    a.read("HTTP_DECOMPRESS_LAYERS", layers);
    uint32_t req_body = 100 * 1024, resp_body = 100 * 1024;
    a.read("HTTP_REQUEST_BODY_LIMIT", req_body).read("HTTP_RESPONSE_BODY_LIMIT", resp_body);
    if (req_body > (64u << 20) || resp_body > (64u << 20)) a.fail("HTTP_*_BODY_LIMIT: at most 64 MiB");
    app_.set_body_limits(req_body, resp_body);
    std::string order;
    a.read("ACTION_ORDER", order).read("EVE_VERDICT", eve_verdict_).read("EVE_ETHERNET", eve_ethernet_);
    a.read("EVE_PACKET", eve_packet_).read("SCAN_CHUNK", scan_chunk_);
    a.read("EVE_PAYLOAD", eve_payload_).read("EVE_PAYLOAD_PRINTABLE", eve_printable_);
    a.read("EVE_TAGGED_PACKETS", eve_tagged_);
    std::string pcap_filename;
    a.read("EVE_PCAP_FILENAME", pcap_filename);
    // (the member closing each record: Suricata's pcap-file)
    pcap_suffix_ = pcap_filename.empty() ? "" : ",\"pcap_filename\":" + nlohmann::json(pcap_filename).dump() + "}\n";
    a.read("PACKET_ALERT_MAX", alert_max_);
    if (alert_max_ < 1 || alert_max_ > 255) a.fail("PACKET_ALERT_MAX: 1-255 (Suricata's packet-alert-max)");
    bool guess = false;
    uint32_t guess_limit = 4;
    a.read("GUESS_APPLAYER_TX", guess).read("STREAM_TX_LOG_LIMIT", guess_limit);
    if (guess_limit < 1 || guess_limit > 255) a.fail("STREAM_TX_LOG_LIMIT: 1-255 (Suricata's stream-tx-log-limit)");
    app_.set_guess_tx(guess ? uint8_t(guess_limit) : 0);
    guess_tx_ = guess;
    bool stream_anomalies = false;
    a.read("EVE_ANOMALY_STREAM", stream_anomalies).read("EVE_ANOMALY_DECODE", decode_anomalies_);
    app_.set_log_stream_anomalies(stream_anomalies);
    uint64_t depth = app_.depth();
    a.read("STREAM_DEPTH", depth);
    app_.set_depth(depth ? depth : UINT64_MAX);  // (0: no depth, as Suricata's)
    {
      // "POLICY NET...; POLICY NET..." (suricata.yaml's host-os-policy)
      std::string spec;
      a.read("HOST_OS_POLICY", spec);
      flow::HostPolicies hosts;
      std::string_view rest = spec;
      while (!rest.empty()) {
        size_t semi = rest.find(';');
        std::string_view entry = rest.substr(0, semi);
        rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
        std::vector<std::string> words;
        for (size_t i = 0; i < entry.size();) {
          size_t j = entry.find_first_of(" \t,", i);
          if (j == std::string_view::npos) j = entry.size();
          if (j > i) words.emplace_back(entry.substr(i, j - i));
          i = j + 1;
        }
        if (words.empty()) continue;
        flow::Overlap p;
        if (!flow::parse_overlap(words[0], p))
          a.fail(
              fmt::format("HOST_OS_POLICY: '{}' is not a policy (bsd, bsd-right, linux, old-linux, solaris, "
                          "old-solaris, hpux10, hpux11, irix, macos, windows, vista, windows2k3, first, last)",
                          words[0]));
        for (size_t i = 1; i < words.size(); ++i)
          if (std::string err; !hosts.add(words[i], p, err)) a.fail(fmt::format("HOST_OS_POLICY: {}", err));
      }
      app_.set_overlap_policies(std::move(hosts), flow::Overlap::Bsd);
    }
    a.read("DATA_DIR", data_dir_);
    std::string ssh_enc = "track-only";
    a.read("SSH_ENCRYPTION", ssh_enc);
    if (ssh_enc != "track-only" && ssh_enc != "full" && ssh_enc != "bypass")
      a.fail(fmt::format("SSH_ENCRYPTION '{}': track-only, full or bypass", ssh_enc));
    ssh_bypass_ = ssh_enc == "bypass";
    std::string app_error = "ignore";
    a.read("APP_ERROR_POLICY", app_error);
    app_error_auto_ = app_error == "auto";
    if (app_error == "auto") app_error = "ignore";
    auto ae = std::find(std::begin(kAppErrorNames), std::end(kAppErrorNames), app_error);
    if (ae == std::end(kAppErrorNames))
      a.fail(
          fmt::format("APP_ERROR_POLICY '{}': ignore, auto, drop-packet, pass-packet, drop-flow, pass-flow, bypass "
                      "or reject",
                      app_error));
    app_error_ = AppError(ae - std::begin(kAppErrorNames));
    std::string mid = "ignore";
    a.read("MIDSTREAM_POLICY", mid).read("EVE_EXCEPTION_POLICY", eve_exception_);
    midstream_auto_ = mid == "auto";
    if (mid == "ignore" || mid == "auto")
      midstream_ = Midstream::Ignore;
    else if (mid == "pass-flow")
      midstream_ = Midstream::PassFlow;
    else if (mid == "bypass")
      midstream_ = Midstream::Bypass;
    else if (mid == "drop-flow")
      midstream_ = Midstream::DropFlow;
    else if (mid == "reject")
      midstream_ = Midstream::Reject;
    else
      a.fail(fmt::format("MIDSTREAM_POLICY '{}': ignore, auto, pass-flow, bypass, drop-flow or reject", mid));
    uint32_t window = 2048;
    a.read("STREAM_WINDOW", window);
    if (window > (16u << 20)) a.fail("STREAM_WINDOW: at most 16 MiB");
    app_.set_stream_window(window);
    std::string when = "arrival";
    a.read("STREAM_INSPECT", when).read("STREAM_PAYLOAD", stream_payload_);
    if (when != "arrival" && when != "acked") a.fail(fmt::format("STREAM_INSPECT '{}': arrival or acked", when));
    app_.set_stream_acked(when == "acked");
    app_.set_normalize(ips_ && when == "arrival");  // (Suricata's stream.inline)
    bool drop_invalid = true;
    a.read("STREAM_DROP_INVALID", drop_invalid);
    drop_invalid_ = drop_invalid && ips_ && when == "arrival";
    uint64_t memcap = 64ull << 20;
    a.read("STREAM_MEMCAP", memcap);
    app_.set_stream_memcap(memcap);
    std::string xff_mode, xff_deploy = "reverse";
    a.read("XFF_MODE", xff_mode).read("XFF_DEPLOYMENT", xff_deploy).read("XFF_HEADER", xff_header_);
    int dns_version = 3;
    a.read("EVE_DNS_VERSION", dns_version);
    std::string dns_ports = "53";
    a.read("DNS_PORTS", dns_ports);
    std::string file_hashes;
    a.read("FILE_HASHES", file_hashes);
    a.complete();
    uint8_t digests = 0;
    for (std::string_view w : split_words(file_hashes)) {
      if (w == "md5")
        digests |= flow::kDigestMd5;
      else if (w == "sha1")
        digests |= flow::kDigestSha1;
      else if (w == "sha256")
        digests |= flow::kDigestSha256;
      else
        a.fail(fmt::format("FILE_HASHES: '{}' is not md5, sha1 or sha256", w));
    }
    app_.set_force_digests(digests);
    if (!order.empty()) {
      // Suricata's action-order: each of pass, drop, reject, alert once
      std::vector<std::string> seen;
      for (std::string_view w : split_words(order)) {
        std::string act(w);
        int cls = act == "pass" ? 0 : act == "drop" ? 1 : act == "reject" ? 2 : act == "alert" ? 3 : -1;
        if (cls < 0) a.fail(fmt::format("ACTION_ORDER: '{}' is not pass, drop, reject or alert", act));
        if (std::find(seen.begin(), seen.end(), act) != seen.end())
          a.fail(fmt::format("ACTION_ORDER: '{}' twice", act));
        if (cls >= 0) action_order_[size_t(cls)] = uint8_t(seen.size());
        seen.push_back(act);
      }
      if (seen.size() != 4) a.fail("ACTION_ORDER: pass, drop, reject and alert, each once");
    }
    if (layers < 0 || layers > 64) a.fail("HTTP_DECOMPRESS_LAYERS: 0-64");
    app_.set_decompress_layers(layers);
    if (!xff_mode.empty() && xff_mode != "extra-data" && xff_mode != "overwrite")
      a.fail(fmt::format("XFF_MODE: extra-data or overwrite, not '{}'", xff_mode));
    if (xff_deploy != "reverse" && xff_deploy != "forward")
      a.fail(fmt::format("XFF_DEPLOYMENT: reverse or forward, not '{}'", xff_deploy));
    if (xff_header_.empty()) a.fail("XFF_HEADER: a header name");
    xff_mode_ = xff_mode.empty() ? 0 : xff_mode == "extra-data" ? 1 : 2;
    xff_last_ = xff_deploy == "reverse";
    if (dns_version != 2 && dns_version != 3) a.fail("EVE_DNS_VERSION: 2 or 3");
    app_.set_dns_version(dns_version);
    std::vector<uint16_t> ports;
    for (std::string_view w : split_words(dns_ports)) {
      unsigned v = 0;
      auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), v);
      if (ec != std::errc() || end != w.data() + w.size() || v == 0 || v > 65535)
        a.fail(fmt::format("DNS_PORTS: '{}' is not a port", w));
      ports.push_back(uint16_t(v));
    }
    if (ports.empty()) a.fail("DNS_PORTS: at least one port");
    app_.set_dns_ports(std::move(ports));
    // EVE's outputs: EVE with EVE_TYPES, then each of EVE_OUTPUTS
    // ("FILE TYPE...; FILE TYPE..."), as Suricata's eve-log outputs
    eves_.clear();
    if (uint16_t t = eve_type_bits(a, "EVE_TYPES", split_words(types)); !eve.path.empty()) add_eve(a, eve.path, t);
    for (size_t at = 0; at <= outputs.size();) {
      size_t end = std::min(outputs.find(';', at), outputs.size());
      std::vector<std::string_view> w = split_words(std::string_view(outputs).substr(at, end - at));
      at = end + 1;
      if (w.empty()) continue;
      std::string path(w[0]), why;
      if (!check_output_path(path, why)) a.fail(fmt::format("EVE_OUTPUTS: {}", why));
      if (w.size() == 1) a.fail(fmt::format("EVE_OUTPUTS: '{}' has no types", path));
      add_eve(a, path, eve_type_bits(a, "EVE_OUTPUTS", {w.begin() + 1, w.end()}));
    }
    eve_types_ = 0;
    for (const auto& e : eves_) eve_types_ |= e->types;
    // The flow layer, when there is one upstream: the flow options and
    // flowbits, and whole-flow pass and drop verdicts, live there.
    if (ninputs()) mgr_ = FlowIPManager::upstream(this, 0);
    if (mgr_) {
      state_off_ =
          mgr_->table().reserve(sizeof(FlowState), alignof(FlowState), FlowIPManager::state_owner(*this, false));
      app_.reserve(*mgr_);
    }
    rules_file_ = rules.path, vars_file_ = vars.path, fastlog_file_ = fastlog.path;
    class_file_ = classification.path;
    threshold_file_ = threshold.path;
    auto_engine_ = engine == "auto";
    if (engine == "builtin" || (auto_engine_ && !ids::have_hyperscan()))
      kind_ = ids::EngineKind::Builtin;
    else if (engine == "hyperscan" || auto_engine_)
      kind_ = ids::EngineKind::Hyperscan;
    else
      a.fail(fmt::format("ENGINE '{}': auto, hyperscan or builtin", engine));
    if (kind_ == ids::EngineKind::Hyperscan && !ids::have_hyperscan())
      a.fail("ENGINE hyperscan: this build has no Hyperscan (libhyperscan-dev); use ENGINE builtin");
    loc_ = a.element_loc();
  }
  void initialize() override {
    // Files are read here (configure() opens none), once for all workers;
    // errors point at the element.
    bool first = false;
    shared_ = shared_state<IdsShared>(this, &first);
    {
      std::lock_guard<std::mutex> g(shared_->stats_mu);
      ++shared_->copies;
    }
    std::string err;
    if (first) {
      shared_->loaded_ns = realtime_ns();
      ids::Vars vars;
      auto db = std::make_shared<ids::Database>();
      if (suricata_vars_) vars.load_suricata_defaults();
      if ((!vars_file_.empty() && !vars.load_file(vars_file_, err)) ||
          (!class_file_.empty() && !shared_->classes.load_file(class_file_, err)) ||
          (shared_->set.set_data_dir(data_dir_), !shared_->set.load_file(rules_file_, vars, strict_, err)) ||
          (!threshold_file_.empty() && !shared_->set.load_threshold_config(threshold_file_, vars, err)))
        throw ConfigError(loc_, fmt::format("{}: {}", name(), err));
      if (!mgr_) {
        const char* why =
            "flow, flowbits, streams and application protocols need flow tracking: put a FlowIPManager before the "
            "IDSMatcher";
        auto needs = [](const ids::Rule& r) { return r.uses_flow() || r.app != ids::kAppNone; };
        if (strict_)
          for (const ids::Rule& r : shared_->set.rules())
            if (needs(r))
              throw ConfigError(loc_, fmt::format("{}: {}:{}: sid {}: {}", name(), r.file, r.line, r.sid, why));
        shared_->set.refuse_if(needs, why);
      }
      db->set_action_order(action_order_);
      db->set_priority_of([this](const ids::Rule& r) { return priority(r); });
      std::vector<ids::Rule> rules = shared_->set.rules();
      if (!mgr_ || !stream_payload_)  // (no streams: every payload rule reads packets)
        for (ids::Rule& r : rules) r.stream_payload = false;
      if (!db->build(std::move(rules), kind_, err)) throw ConfigError(loc_, fmt::format("{}: {}", name(), err));
      if (auto_engine_) db->pick_faster();
      shared_->db = std::move(db);
      if (!quiet_) {
        const ids::RuleSet& set = shared_->set;
        fmt::print(stderr,
                   "shoal: {}: {} rules from {} ({} fast patterns, {} checked on every packet; {} on transactions, "
                   "{} of them prefiltered by their buffer's fast pattern; {} on TCP streams); {} skipped{}\n",
                   name(), set.rules().size(), rules_file_, shared_->db->patterns().size(),
                   shared_->db->always().size(), shared_->db->tx_rules().size(), shared_->db->tx_prefiltered(),
                   shared_->db->stream_rules().size(), set.problems().size(),
                   set.problems().empty() ? "" : " (handler 'problems'), the first:");
        for (size_t i = 0; i < set.problems().size() && i < 5; ++i)
          fmt::print(stderr, "  {}\n", set.problems()[i].str());
      }
    }
    if (!shared_->db) throw ConfigError(loc_, fmt::format("{}: the rules did not load", name()));
    captures_ = std::any_of(shared_->db->rules().begin(), shared_->db->rules().end(),
                            [](const ids::Rule& r) { return r.captures; });
    if (!engine_.use(shared_->db, err)) throw ConfigError(loc_, fmt::format("{}: {}", name(), err));
    kind_ = shared_->db->kind();  // (ENGINE auto: the one measured faster)
    // Suricata's traffic tagging: flowbits named traffic/id/NAME and
    // traffic/label/NAME, written as the traffic object of alerts and flows
    for (const auto& [fb, bit] : shared_->set.flowbit_ids())
      for (const char* kind : {"id", "label"})
        if (std::string pre = fmt::format("traffic/{}/", kind); fb.size() > pre.size() && fb.rfind(pre, 0) == 0)
          traffic_bits_.push_back({bit, kind, fb.substr(pre.size())});
    // the others by name, for EVE's metadata (flowbits, flowints)
    flowbit_names_.clear(), flowint_names_.clear();
    for (const auto& [fb, bit] : shared_->set.flowbit_ids())
      if (fb.rfind("traffic/id/", 0) != 0 && fb.rfind("traffic/label/", 0) != 0) flowbit_names_.push_back({bit, fb});
    for (const auto& [fi, var] : shared_->set.flowint_ids()) flowint_names_.push_back({var, fi});
    std::sort(flowbit_names_.begin(), flowbit_names_.end());
    std::sort(flowint_names_.begin(), flowint_names_.end());
    // The application layer runs when rules ask for it, or its records are
    // logged.
    bool log_http = eve(kEveHttp), log_files = eve(kEveFiles), log_dns = eve(kEveDns), log_tls = eve(kEveTls);
    for (const ids::Rule& r : shared_->db->rules())
      app_on_ |=
          mgr_ && (r.app != ids::kAppNone || r.has_app_cond || r.stream_only() || r.stream_payload || r.stream_events);
    bool log_sip = eve(kEveSip), log_ssh = eve(kEveSsh), log_anomaly = eve(kEveAnomaly), log_ftp = eve(kEveFtp),
         log_smtp = eve(kEveSmtp);
    app_on_ |= mgr_ && (log_http || log_files || log_dns || log_tls || log_sip || log_ssh || log_ftp || log_smtp);
    if (app_on_)
      app_.init(shared_->db, log_http, log_files, log_dns, log_tls, log_sip, log_ssh, log_anomaly, log_ftp, log_smtp);
    // A flow that ends: its transactions' records, then its flow record
    if (mgr_ && (app_on_ || eve(kEveFlow) || eve(kEveNetflow) || captures_))
      mgr_->table().on_release([this](uint32_t id, const flow::Flow& f, flow::Release why) {
        uint16_t app = app_on_ ? app_.app(id) : uint16_t(ids::kAppNone);
        count_flow(f, app, reinterpret_cast<const FlowState*>(mgr_->table().state(id) + state_off_));
        uint16_t regions[2] = {0, 0};  // (0: not known: no reassembly)
        uint64_t txs = 0;
        if (app_on_) {
          regions[0] = app_.max_regions(id, 0), regions[1] = app_.max_regions(id, 1);
          // each direction as its packets showed it, for the stream rules
          // that match data the end delivers
          ids::PacketInfo at[2];
          uint8_t l4[2][20] = {};
          for (uint8_t d = 0; d < 2; ++d) end_view(id, f, d, at[d], l4[d]);
          // a flow dropped (IPS) ends without its end's inspection or the
          // records of what was left open (Suricata makes no flow-end
          // pseudo packets for it)
          const auto* fs = reinterpret_cast<const FlowState*>(mgr_->table().state(id) + state_off_);
          app_.release(id, at, ips_ && fs->verdict == uint8_t(Verdict::Drop));
          txs = app_.released_transactions();
          tx_logs(nullptr, f.last_ns);
          end_alerts(id, f, app);
        }
        if (eve(kEveFlow)) flow_record(id, f, why, app, regions, txs);
        if (eve(kEveNetflow)) netflow_records(id, f, app);
        if (!flowvars_.empty()) flowvars_.erase(flow_id_of(id));
      });
    auto open = [&](io::SharedFile<io::OutFile>& f, const std::string& path) {
      if (path.empty()) return;
      std::string why;
      if (!f.open(
              registry(), path, [&](io::OutFile& o) { o.open(path, true, why); },
              [](io::OutFile& o) { return o.is_open(); }))
        throw std::runtime_error(fmt::format("{}: cannot open for writing: {}", name(), why.empty() ? path : why));
    };
    open(fast_, fastlog_file_);
    for (auto& e : eves_) open(e->file, e->path);
    r_drop_ = add_drop_reason("ips-drop");
  }
  void cpu_push(int, PacketBatch* b) override {
    PacketBatch* out1 = nullptr;
    b->for_each([&](uint32_t i, Packet* p) {
      const int r = inspect(p);
      if (r == 0) return;
      b->kill(i);
      if (r < 0) return drop(p, r_drop_);
      if (!out1) out1 = new_batch();
      out1->append(p);
    });
    write_logs();
    if (b->live())
      output_push(0, b);
    else
      recycle(b);
    if (out1) output_push(1, out1);
  }
  // Decodes p for the rules (its view of the packet, its events counted);
  // false when it cannot be inspected (counted).
  bool decode_for_rules(Packet* p, ids::PacketInfo& info) {
    uint32_t ip_off;
    bool ok = locate(p, info, ip_off);
    decoded(p, info, ok, ok ? ip_off : 0);
    if (ok) {
      rules_view(p, info, p->data() + ip_off, p->length() - ip_off);
      if (ips_) info.wire = p->data(), info.wire_len = p->length();   // (the stream may normalize its payload)
      if (info.events & ids::kPacketInvalid) ++pkt_stats_[kInvalid];  // (decoded, with an invalid event)
      return true;
    }
    if (invalid_view(p, info)) return true;
    uninspected_.add();
    return false;
  }
  // The CPU path for one packet: 0 (it goes on), 1 (output 1: alerted, or
  // an IPS's drop there) or a drop code (an IPS's drop without output 1).
  int inspect(Packet* p) {
    ids::PacketInfo info;
    if (!decode_for_rules(p, info)) return 0;
    FlowState* fs = flow_of(p, info);
    const bool tagged = shared_->tags.tagged(info, flow_id_of(p), p->length(), p->timestamp_ns());
    Verdict v = Verdict::None;
    if (fs && fs->verdict) {  // the flow was passed, dropped or bypassed: not inspected again
      v = settled(p, info, fs, nullptr);
    } else {
      if (fs && app_on_) {
        app_.packet(p->anno().flow, info, p->timestamp_ns(), tx_hits_);
        tx_logs(p, p->timestamp_ns());
      }
      v = fs && app_on_ && app_.packet_failed() ? app_error(p, info, fs) : Verdict::None;
      if (v == Verdict::None) {
        engine_.match(info, hits_);
        v = record(p, info, fs);
        if (fs && app_on_) encrypted(p, fs);
      }
      v = stream_error(p, info, fs, v);
    }
    if (tagged) tagged_record(p, info);
    // IPS: dropped packets leave on output 1 (or are dropped, counted), and
    // packets that only alerted go on (Suricata forwards them);
    // IDS: alerted packets leave on output 1 when it is connected.
    bool drop_it = v == Verdict::Drop, alerted = !ips_ && (v == Verdict::Alert || drop_it);
    if (!ips_) drop_it = false;
    if (!drop_it && !(alerted && noutputs() > 1)) return 0;
    return noutputs() < 2 ? drop_code(r_drop_) : 1;
  }
  // An aggregate that stays on the host: the CPU path (Hyperscan's scan,
  // or the built-in engine's), not the portable prefilter kernel.
  HostDirect offload_host_direct() override { return gpu_form_ ? HostDirect::No : HostDirect::AtTurn; }
  void offload_host_run(offload::Aggregate& a, size_t step) override {
    for (uint32_t i = 0; i < a.n; ++i)
      if (a.reached(i, step)) a.set_result(i, step, inspect(a.batch->at(i)));
    write_logs();
  }
  void on_stop() override {
    write_logs();  // flow records of the flows that ended at the stop
    add_stats();
    // datasets with a save or state file, written once the last copy stopped
    // (a hot swap's new configuration goes on with its own sets)
    bool all_stopped;
    {
      std::lock_guard<std::mutex> g(shared_->stats_mu);
      all_stopped = ++shared_->stopped == shared_->copies;
    }
    if (std::string err; all_stopped && !shared_->set.datasets().save_all(err))
      run_error(fmt::format("{}: {}", name(), err));
    // Every copy writes what it holds; the last one to stop on a file closes
    // it, so an error at the close is reported too. For a hot swap the new
    // configuration's IDSMatcher of the same files goes on writing them:
    // flushed, not closed, and the stats record waits for the run's end.
    bool swap = worker().runtime().swap_pending();
    std::vector<std::pair<io::SharedFile<io::OutFile>*, bool>> files = {{&fast_, false}};
    for (auto& e : eves_) files.push_back({&e->file, (e->types & kEveStats) != 0});
    for (const auto& [file, with_stats] : files) {
      io::SharedFile<io::OutFile>* f = file;
      const bool stats = with_stats;  // (clang 14, clang-tidy's, lets no lambda capture a structured binding)
      std::string err;
      f->with([&](io::OutFile& o) {
        if (!o.is_open()) return;
        bool was = o.failed();  // (errors of earlier writes were reported with them)
        bool last = !swap && last_copy(o.path());
        if (last && stats) {  // the run's stats record, as Suricata's at its end
          o.put(stats_record());
          o.end_record();
        }
        o.flush();
        if (!was && o.failed()) err = o.error();
        if (last && !o.close() && err.empty() && !was) err = o.error();
      });
      if (!err.empty()) run_error(err);
    }
  }
  void cleanup() override {
    OffloadableElement::cleanup();
    fast_.close();
    for (auto& e : eves_) e->file.close();
  }
  void add_handlers() override {
    add_read_handler(
        "rules", [this] { return std::to_string(shared_->set.rules().size()); }, Agg::First, true);
    add_read_handler(
        "skipped", [this] { return std::to_string(shared_->set.problems().size()); }, Agg::First, true);
    add_read_handler("problems", [this] {
      std::string s;
      for (auto& p : shared_->set.problems()) s += p.str() + "\n";
      return s;
    });
    add_read_handler(
        "patterns", [this] { return std::to_string(engine_.patterns().size()); }, Agg::First, true);
    add_read_handler("engine", [this] {
      const ids::AcTable& ac = engine_.automaton();
      std::string dfa = fmt::format("Aho-Corasick DFA: {} states, {} byte classes, {} KiB", ac.states(), ac.classes(),
                                    ac.memory_bytes() >> 10);
      // the port groups: each packet scanned for the patterns its ports can need
      const ids::PortGroups& pg = engine_.database()->port_groups();
      if (!pg.sets.empty()) {
        size_t most = 0;
        for (const auto& set : pg.sets) most = std::max(most, set.size());
        dfa += fmt::format("; {} port groups of at most {} of the {} patterns", pg.sets.size(), most,
                           engine_.patterns().size());
      }
      std::string picked;
      if (const uint64_t* t = engine_.database()->scan_ns_per_kib(); auto_engine_ && t[0] && t[1])
        picked = fmt::format("; auto: built-in {} ns/KiB, Hyperscan {} ns/KiB", t[0], t[1]);
      return kind_ == ids::EngineKind::Builtin ? fmt::format("builtin ({}{})", dfa, picked)
                                               : fmt::format("hyperscan (device: {}{})", dfa, picked);
    });
    add_read_handler("regex", [this] {
      const ids::Database& db = *engine_.database();
      const auto& st = db.pcre_stats();
      std::string s = fmt::format("{} of {} pcres compile to DFAs\n", db.regex_compiled(), db.regex_count());
      s += fmt::format(
          "{} need only whether they match: {} answered by Hyperscan, {} by the DFA, {} by PCRE2; "
          "{} rules without fast pattern prefiltered by a pcre\n",
          st.existence, st.hyperscan, st.dfa, st.existence - st.hyperscan - st.dfa, st.prefiltered);
      for (auto& r : db.regex_refusals()) s += r + "\n";
      return s;
    });
    add_stat_handler("inspected", inspected_);
    add_stat_handler("uninspected", uninspected_);
    add_stat_handler("alerts", alerts_);
    add_stat_handler("alerted_packets", alerted_packets_);
    add_stat_handler("alerts_discarded", discarded_);
    add_stat_handler("alerts_suppressed", suppressed_);
    add_stat_handler("verified", verified_);
    add_stat_handler("device_overflows", overflows_);
    add_stat_handler("device_chunked", chunked_);
    add_stat_handler("device_regex", device_regex_answers_);
    add_stat_handler("log_lost", log_lost_);
    add_stat_handler("passed", passed_);
    add_stat_handler("dropped", dropped_);
    add_stat_handler("flow_passed", flow_passed_);
    add_stat_handler("flow_dropped", flow_dropped_);
    add_stat_handler("app_error_dropped", app_error_dropped_);
    add_stat_handler("stream_error_dropped", stream_error_dropped_);
    add_stat_handler("flow_bypassed", flow_bypassed_);
    // (the workers' copies share these tables: one answers)
    auto shared_stat = [this](const char* name, const Stat& (*of)(const IdsShared&)) {
      add_read_handler(
          name, [this, of] { return std::to_string(shared_ ? of(*shared_).get() : 0); }, Agg::First, true);
    };
    shared_stat("threshold_untracked", [](const IdsShared& s) -> const Stat& { return s.threshold.untracked; });
    shared_stat("hostbits_untracked", [](const IdsShared& s) -> const Stat& { return s.hostbits.untracked; });
    shared_stat("tags_untracked", [](const IdsShared& s) -> const Stat& { return s.tags.untracked; });
    add_stat_handler("tagged", tagged_);
    const IdsAppLayer::Counters& ac = app_.counters();
    add_stat_handler("http_connections", ac.http.connections);
    add_stat_handler("http_transactions", ac.http.transactions);
    add_stat_handler("http_parse_errors", ac.http.parse_errors);
    add_stat_handler("http_gaps", ac.http.gaps);
    add_stat_handler("http_tx_limit", ac.http.tx_limit);
    add_stat_handler("http_body_undecoded", ac.http.body_undecoded);
    add_stat_handler("stream_depth_reached", ac.depth_reached);
    add_stat_handler("stream_rejected", ac.stream_rejected);
    const IdsAppLayer::StreamStats& ss = app_.stream_stats();
    add_stat_handler("stream_inspections", ss.inspections);
    add_stat_handler("stream_bytes", ss.bytes);
    add_stat_handler("stream_matches", ss.matches);
    add_stat_handler("stream_memory", ss.memory);
    add_stat_handler("stream_memcap_inspections", ss.memcap_inspections);
    add_stat_handler("stream_device_scans", ss.device_scans);
    add_stat_handler("stream_host_scans", ss.host_scans);
    add_stat_handler("stream_reinspections", ss.reinspections);
    add_stat_handler("stream_held_inspections", ss.held_inspections);
    const flow::StreamCounters& rc = app_.stream_counters();
    add_stat_handler("stream_normalized", rc.normalized);
    add_stat_handler("stream_normalized_bytes", rc.normalized_bytes);
    add_stat_handler("stream_overwritten", rc.overwritten);
    add_stat_handler("dns_messages", ac.dns_messages);
    add_stat_handler("tls_connections", ac.tls.connections);
    add_stat_handler("tls_anomalies", ac.tls.anomalies);
    add_stat_handler("dns_malformed", ac.dns_malformed);
    mirror_.add_handler(*this);
  }

  // ---- offload (NBA's form): the device scans, the host verifies
  void offload_declare(offload::Plan& plan) override {
    offload::Range whole;
    whole.anchor = offload::Anchor::Data;
    whole.begin = 0;
    whole.end = offload::kToEnd;
    range_ = plan.add(whole);
    block_ = plan.add_block(sizeof(k::IdsScanIn), sizeof(k::IdsScanOut));
    // the stream rules' scan of each TCP payload (GASPP §5), when there are
    // stream rules and the application layer that feeds them
    stream_block_ = kNoBlock;
    if (app_on_ && shared_ && shared_->db && shared_->db->has_stream_patterns())
      stream_block_ = plan.add_block(1, sizeof(k::IdsStreamOut));
    // the candidates' yes/no pcres, run on the device after the scan
    regex_block_ = kNoBlock;
    if (device_regex_ && shared_ && shared_->db && !shared_->db->device_regex().empty())
      regex_block_ = plan.add_block(0, sizeof(k::IdsRegexOut));
    ip_at_ = plan.ip_at;
    plan.annos.pred |= offload_uses_pred() || alert_bit_;
  }
  bool offload_ends_chain() const override { return true; }
  void offload_pre(offload::Aggregate& a) override {
    auto* in = reinterpret_cast<k::IdsScanIn*>(a.block_in(block_));
    for (uint32_t i = 0; i < a.n; ++i) {
      ids::PacketInfo info;
      uint32_t ip_off;
      Packet* p = a.batch->at(i);
      bool ok = locate(p, info, ip_off, ip_at_);
      if (ok) {
        in[i] = {uint32_t(info.payload - p->data()), info.plen};
      } else {
        in[i] = {k::kAbsent, 0};
      }
      if (stream_block_ != kNoBlock) a.block_in(stream_block_)[i] = ok && info.proto == 6 && info.l4;
    }
  }
  bool offload_launch(offload::Launch& L, std::string& err) override {
    offload_ctl(L);
    k::IdsScanStep::Params prm{L.view,
                               L.ctl,
                               range_,
                               reinterpret_cast<const k::IdsScanIn*>(L.block_in(block_)),
                               reinterpret_cast<k::IdsScanOut*>(L.block_out(block_)),
                               engine_.automaton().view(),
                               alert_bit_};
    // one copy per device and rule set, shared by the workers
    if (!automaton_on(L, mirror_, engine_.database(), engine_.automaton(), prm.ac, err)) return false;
    if (stream_block_ != kNoBlock && !stream_scan(L, prm, err)) return false;
    // One thread per packet, or GASPP's chunks when the longest payload of
    // the aggregate spans several.
    // (the aggregate's own longest payload: an aggregate redone on the host
    // after a device fault is launched again after others were prepared)
    uint32_t max_plen = 0;
    const auto* host_in = reinterpret_cast<const k::IdsScanIn*>(L.agg->block_in(block_));
    for (uint32_t i = 0; i < L.view.n; ++i)
      if (host_in[i].off != k::kAbsent) max_plen = std::max(max_plen, host_in[i].len);
    uint32_t chunks = scan_chunk_ ? (max_plen + scan_chunk_ - 1) / scan_chunk_ : 1;
    if (chunks <= 1) {
      L.run<k::IdsScanStep>(prm);
    } else {
      if (longest_for_ != engine_.database().get()) {
        longest_for_ = engine_.database().get();
        longest_ = 1;
        for (const std::string& pat : engine_.patterns()) longest_ = std::max(longest_, uint32_t(pat.size()));
      }
      L.run_split<k::IdsScanChunkStep>({prm, scan_chunk_, longest_ - 1, chunks}, chunks);
      chunked_.add();
    }
    return regex_block_ == kNoBlock || regex_scan(L, prm, err);
  }
  // The candidates' yes/no pcres (k::IdsRegexStep), after the scan: the
  // database's DFAs, on the device once per device and rule set.
  bool regex_scan(offload::Launch& L, const k::IdsScanStep::Params& scan, std::string& err) {
    const std::shared_ptr<const ids::Database>& db = engine_.database();
    const ids::Database::DeviceRegex& rx = db->device_regex();
    if (rx.empty()) return true;  // (the block stays zeroed: no answers)
    k::IdsRegexStep::Params prm{
        L.view, range_, scan.in, scan.out, reinterpret_cast<k::IdsRegexOut*>(L.block_out(regex_block_)), {}};
    prm.t.npatterns = uint32_t(rx.pat_off.size() - 1);
    prm.t.set.count = uint32_t(rx.hdr.size());
    if (L.host) {
      L.keep(db);
      prm.t.pat_off = rx.pat_off.data(), prm.t.pat_slots = rx.pat_slots.data();
      prm.t.set.hdr = rx.hdr.data(), prm.t.set.blob = rx.blob.data();
    } else {
      if (!regex_mirror_.sync(L, std::shared_ptr<const void>(db, &rx),
                              {{rx.pat_off.data(), rx.pat_off.size() * 4},
                               {rx.pat_slots.data(), rx.pat_slots.size() * 4},
                               {rx.hdr.data(), rx.hdr.size() * sizeof(k::RegexHdr)},
                               {rx.blob.data(), rx.blob.size()}},
                              err))
        return false;
      prm.t.pat_off = regex_mirror_.at<uint32_t>(0), prm.t.pat_slots = regex_mirror_.at<uint32_t>(1);
      prm.t.set.hdr = regex_mirror_.at<k::RegexHdr>(2), prm.t.set.blob = regex_mirror_.at<uint8_t>(3);
    }
    L.run<k::IdsRegexStep>(prm);
    return true;
  }
  // The stream step (before the packet scan, whose predicate bits it must not see).
  bool stream_scan(offload::Launch& L, const k::IdsScanStep::Params& scan, std::string& err) {
    const ids::Database& db = *shared_->db;
    k::IdsStreamScanStep::Params prm{L.view,
                                     L.ctl,
                                     range_,
                                     scan.in,
                                     L.block_in(stream_block_),
                                     reinterpret_cast<k::IdsStreamOut*>(L.block_out(stream_block_)),
                                     db.stream_automaton().view()};
    // (keyed by the automaton, owned by the database: the packet one is keyed by the database)
    const ids::AcTable& ac = db.stream_automaton();
    if (!automaton_on(L, stream_mirror_, std::shared_ptr<const void>(shared_->db, &ac), ac, prm.ac, err)) return false;
    L.run<k::IdsStreamScanStep>(prm);
    return true;
  }
  // Where the kernel finds automaton `ac` (owned by `owner`): the host's
  // copy, kept for the aggregate, or the device's (uploaded once per device
  // and `owner`).
  static bool automaton_on(offload::Launch& L, offload::TableMirror& m, std::shared_ptr<const void> owner,
                           const ids::AcTable& ac, k::AcView& v, std::string& err) {
    if (L.host) {
      L.keep(std::move(owner));
      return true;
    }
    if (!m.sync(L, std::move(owner),
                {{ac.cls().data(), ac.cls().size()},
                 {ac.next().data(), ac.next().size() * 4},
                 {ac.out_off().data(), ac.out_off().size() * 4},
                 {ac.out_ids().data(), ac.out_ids().size() * 4}},
                err))
      return false;
    v.cls = m.at<uint8_t>(0);
    v.next = m.at<uint32_t>(1);
    v.out_off = m.at<uint32_t>(2);
    v.out_ids = m.at<uint32_t>(3);
    return true;
  }
  void offload_post(offload::Aggregate& a, size_t step) override {
    const auto* out = reinterpret_cast<const k::IdsScanOut*>(a.block_out(block_));
    const auto* sout =
        stream_block_ == kNoBlock ? nullptr : reinterpret_cast<const k::IdsStreamOut*>(a.block_out(stream_block_));
    const auto* rout =
        regex_block_ == kNoBlock ? nullptr : reinterpret_cast<const k::IdsRegexOut*>(a.block_out(regex_block_));
    const auto* in = reinterpret_cast<const k::IdsScanIn*>(a.block_in(block_));
    for (uint32_t i = 0; i < a.n; ++i) {
      if (!a.reached(i, step) || out[i].count == k::kIdsNotScanned) continue;
      Packet* p = a.batch->at(i);
      ids::PacketInfo info;
      if (!decode_for_rules(p, info)) continue;
      FlowState* fs = flow_of(p, info);  // before matching: the flow options read it
      const bool tagged = shared_->tags.tagged(info, flow_id_of(p), p->length(), p->timestamp_ns());
      Verdict v;
      if (fs && fs->verdict) {
        v = settled(p, info, fs, sout ? &sout[i] : nullptr);
      } else {
        if (fs && app_on_) {
          app_.packet(p->anno().flow, info, p->timestamp_ns(), tx_hits_, sout ? &sout[i] : nullptr);
          tx_logs(p, p->timestamp_ns());
        }
        v = fs && app_on_ && app_.packet_failed() ? app_error(p, info, fs) : Verdict::None;
        if (v != Verdict::None) {
          // (the app-layer error policy decided the packet: not inspected)
        } else if (out[i].count > k::kIdsFound || info.normalized) {  // (the device scanned the bytes as they came)
          if (!info.normalized) overflows_.add();
          engine_.match(info, hits_);
        } else {
          // the device's pcre answers hold for the payload it was given:
          // the one verified here (decoded again, the same unless a tunnel
          // or the packet changed)
          const uint32_t* ans = nullptr;
          uint32_t nans = 0;
          if (rout && rout[i].count && rout[i].count <= k::kRegexAnswers && in[i].off != k::kAbsent &&
              info.payload == p->data() + in[i].off && info.plen == in[i].len) {
            ans = rout[i].slot, nans = rout[i].count;
            device_regex_answers_.add(nans);
          }
          engine_.match_found(info, out[i].ids, out[i].count, hits_, ans, nans);
        }
        if (v == Verdict::None) {
          v = record(p, info, fs);
          if (fs && app_on_) encrypted(p, fs);
        }
        v = stream_error(p, info, fs, v);
      }
      if (tagged) tagged_record(p, info);
      bool alerted = v == Verdict::Drop || (!ips_ && v == Verdict::Alert);  // (IPS: alerts only go on)
      if (gpu_form_) {  // the ALERT bit now means verified: set or cleared
        if (alerted)
          p->anno().predicates |= alert_bit_;
        else
          p->anno().predicates &= ~alert_bit_;
      } else if (alerted && noutputs() > 1) {
        a.set_port(i, step, 1);
      } else if (ips_ && v == Verdict::Drop) {  // (IPS with no output 1: dropped here, counted, as on the CPU)
        a.set_result(i, step, drop_code(r_drop_));
      }
    }
    write_logs();
  }

 private:
  enum class Verdict : uint8_t { None, Pass, Drop, Alert, Bypass };
  // A flow's id in EVE: unique over the run (worker, entry reuse, entry).
  uint64_t flow_id_of(uint32_t id) {
    return uint64_t(worker().id()) << 52 | uint64_t(mgr_->table().flow(id).gen & 0xfffff) << 32 | id;
  }
  uint64_t flow_id_of(Packet* p) { return mgr_ && p->anno().flow ? flow_id_of(p->anno().flow) : 0; }
  // The EVE header of a record about packet p: time, flow, where it was
  // read, its tunnel, its addresses and ports.
  // A packet's Ethernet addresses (Suricata's ether object): false without a whole MAC header.
  static bool macs(const Packet* pkt, std::string& dst, std::string& src) {
    if (!pkt->has_mac_header() || pkt->mac_header_offset() < 0 ||
        pkt->mac_header_offset() + 14 > int64_t(pkt->length()))
      return false;
    const uint8_t* e = pkt->data() + pkt->mac_header_offset();
    auto mac = [](const uint8_t* m) {
      return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5]);
    };
    dst = mac(e), src = mac(e + 6);
    return true;
  }
  nlohmann::json packet_head(Packet* p, const ids::PacketInfo& info, uint64_t flow_id, const char* type) {
    nlohmann::json j = {{"timestamp", time_text(p->timestamp_ns(), true)}};
    if (flow_id) j["flow_id"] = flow_id;
    if (p->source_index()) j["pcap_cnt"] = p->source_index();
    j["pkt_src"] = pkt_src(p);
    tunnel_json(p, j);
    j["event_type"] = type;
    if (!info.no_l3)
      j.update({{"src_ip", addr_text(info.src)},
                {"dest_ip", addr_text(info.dst)},
                {"ip_v", info.src.v6 ? 6 : 4},
                {"proto", proto_name(info.proto)}});
    ports_json(info, j);
    vlan_json(info.vlan_layers, info.vlan, j);
    if (std::string d, sm; eve_ethernet_ && macs(p, d, sm)) j["ether"] = {{"dest_mac", d}, {"src_mac", sm}};
    return j;
  }
  // Suricata's anomaly records of a packet's decoder events (anomaly types
  // decode): one a event, "decode" for an IP packet, "packet" for one whose
  // IP header is not whole.
  void decode_anomalies(Packet* p, const ids::PacketInfo& info) {
    const bool ip = !((info.events & ids::kL3Invalid) || info.no_l3);
    for (uint64_t e = info.events; e; e &= e - 1) {
      auto ev = ids::DecodeEvent(__builtin_ctzll(e));
      nlohmann::json j = packet_head(p, info, flow_id_of(p), "anomaly");
      j["anomaly"] = {{"type", ip ? "decode" : "packet"},
                      {"event", fmt::format("decoder.{}", ids::decode_event_name(ev))}};
      std::string text = eve_text(j);
      for (uint8_t k = 0; k < event_counts_[ev]; ++k) eve_put(kEveAnomaly, text);  // (once an occurrence)
    }
  }
  // An EVE drop record (IPS): the rule that dropped the packet, or its
  // flow's earlier drop.
  void drop_record(Packet* p, const ids::PacketInfo& info, const ids::Rule* r, uint64_t flow_id,
                   const char* reason = nullptr) {
    if (!eve(kEveDrop)) return;
    // EVE_DROP_FLOWS start (Suricata's default): a dropped flow's packets
    // are logged once a direction; a packet a rule drops always is
    if (!drop_all_ && mgr_ && p->anno().flow) {
      auto* fs = reinterpret_cast<FlowState*>(mgr_->table().state(p->anno().flow) + state_off_);
      const uint8_t bit = uint8_t(1u << (info.dir & 1));
      if (!r && (fs->drop_logged & bit)) return;
      fs->drop_logged |= bit;
    }
    nlohmann::json j = packet_head(p, info, flow_id, "drop");
    nlohmann::json d = {{"len", p->length()},
                        {"ttl", info.ttl},
                        {"reason", reason ? reason
                                   : r    ? "rules"
                                          : "flow drop"}};
    if (info.proto == 6 && info.l4) {
      uint8_t fl = info.l4[13];
      d["tcpseq"] = k::load_be32(info.l4 + 4);
      d["tcpack"] = k::load_be32(info.l4 + 8);
      d["syn"] = bool(fl & 2), d["ack"] = bool(fl & 0x10), d["psh"] = bool(fl & 8), d["rst"] = bool(fl & 4);
      d["urg"] = bool(fl & 0x20), d["fin"] = bool(fl & 1);
    }
    j["drop"] = d;
    if (r && drop_alerts_) {  // (EVE_DROP_ALERTS: the rule that dropped it)
      const ids::Classifications::Class* cls = r->classtype.empty() ? nullptr : shared_->classes.find(r->classtype);
      j["alert"] = {{"action", "blocked"},     {"gid", r->gid},
                    {"signature_id", r->sid},  {"rev", r->rev},
                    {"signature", r->msg},     {"category", cls ? cls->description : r->classtype},
                    {"severity", priority(*r)}};
    }
    eve_put(kEveDrop, eve_text(j));
  }
  // A tagged packet's EVE record (Suricata's alert output with
  // tagged-packets): its header fields, and the packet as read.
  void tagged_record(Packet* p, const ids::PacketInfo& info) {
    tagged_.add();
    if (!eve(kEveAlert) || !eve_tagged_) return;
    nlohmann::json j = packet_head(p, info, flow_id_of(p), "packet");
    packet_json(p, j);
    eve_put(kEveAlert, eve_text(j));  // (Suricata's alert output writes them)
  }
  // The EVE header of a flow's record: its addresses from the client's
  // side (from_client) or the server's.
  nlohmann::json flow_head(uint32_t id, const flow::Flow& f, bool from_client, uint64_t ts, const char* type) {
    nlohmann::json j = {{"timestamp", time_text(ts, true)},
                        {"flow_id", flow_id_of(id)},
                        {"event_type", type},
                        {"ip_v", f.key.family == 6 ? 6 : 4},
                        {"proto", proto_name(f.key.proto)}};
    flow_ends(f, from_client, j);
    const auto* fs = reinterpret_cast<const FlowState*>(mgr_->table().state(id) + state_off_);
    vlan_json(fs->vlan_layers, fs->vlan, j);
    return j;
  }
  // A flow's addresses and ports into j, from the client's side
  // (from_client) or the server's.
  template <class J>  // (a nlohmann::json or a JsonRecord)
  static void flow_ends(const flow::Flow& f, bool from_client, J& j) {
    const k::ConnKey& key = f.key;
    bool ab = (f.orig_dir == 0) == from_client;
    auto addr = [&](const uint32_t* a) {
      ids::Addr x;
      x.v6 = key.family == 6;
      for (int i = 0; i < 4; ++i) k::store_be32(x.b + 4 * i, a[i]);
      return addr_text(x);
    };
    std::string src = addr(ab ? key.a : key.b), dst = addr(ab ? key.b : key.a);
    bool ports = key.proto == 6 || key.proto == 17 || key.proto == 132;
    if constexpr (std::is_same_v<J, JsonRecord>) {
      j.str("src_ip", src), j.str("dest_ip", dst);
      if (ports) j.num("src_port", ab ? key.pa : key.pb), j.num("dest_port", ab ? key.pb : key.pa);
    } else {
      j["src_ip"] = src, j["dest_ip"] = dst;
      if (ports) j["src_port"] = ab ? key.pa : key.pb, j["dest_port"] = ab ? key.pb : key.pa;
    }
  }
  // The application layer's records (http, fileinfo) made by packet p (null
  // at a flow's end).
  void tx_logs(Packet* p, uint64_t ts) {
    auto& logs = app_.logs();
    if (eves_.empty()) logs.clear();
    for (IdsAppLayer::TxLog& l : logs) {
      using K = IdsAppLayer::TxLog;
      // http records go from the client; files and DNS messages the way they went
      static const char* const kType[] = {"http", "fileinfo", "dns", "tls",  "sip",
                                          "ssh",  "anomaly",  "ftp", "smtp", "fileinfo"};
      static const uint16_t kOutput[] = {kEveHttp, kEveFiles,   kEveDns, kEveTls,  kEveSip,
                                         kEveSsh,  kEveAnomaly, kEveFtp, kEveSmtp, kEveFiles};
      const char* type = kType[l.kind];
      nlohmann::json j = flow_head(l.flow, mgr_->table().flow(l.flow), l.kind == K::Http || l.dir == 0, ts, type);
      if (p && p->source_index()) j["pcap_cnt"] = p->source_index();
      if (l.kind != K::Dns && !(l.kind == K::Anomaly && l.meta.value("type", "") == "stream")) j["tx_id"] = l.tx_id;
      j["pkt_src"] = p ? pkt_src(p) : "stream (flow timeout)";  // (at the flow's end: its pseudo packet's)
      if (l.kind == K::File) j["app_proto"] = "http";
      if (l.kind == K::Sip || l.kind == K::Ssh || l.kind == K::Ftp) j["app_proto"] = kType[l.kind];
      if (l.kind == K::Smtp || l.kind == K::SmtpFile) {  // the smtp and email objects
        if (l.kind == K::SmtpFile) j["app_proto"] = "smtp";
        for (auto& [k, v] : l.meta.items()) j[k] = std::move(v);
      } else {
        j[kType[l.kind == K::File ? K::Http : l.kind]] = std::move(l.meta);
      }
      if (l.kind == K::File || l.kind == K::SmtpFile) j["fileinfo"] = std::move(l.fileinfo);
      // the flow's variables, as Suricata's common options add them to every record of a flow
      const auto* fs = reinterpret_cast<const FlowState*>(mgr_->table().state(l.flow) + state_off_);
      if (std::string m = vars_metadata(flow_id_of(l.flow), false, fs); !m.empty())
        j["metadata"] = nlohmann::json::parse(m);
      eve_put(kOutput[l.kind], eve_text(j));
    }
    logs.clear();
  }
  // An EVE flow record as a flow leaves the table (Suricata's fields).
  void flow_record(uint32_t id, const flow::Flow& f, flow::Release why, uint16_t app, const uint16_t regions[2],
                   uint64_t txs) {
    const k::ConnKey& key = f.key;
    nlohmann::json j = flow_head(id, f, true, f.first_ns, "flow");
    const auto* fs = reinterpret_cast<const FlowState*>(mgr_->table().state(id) + state_off_);
    if (const char* a = ids::app_name(app)) j["app_proto"] = a;
    static const char* const kReason[] = {"timeout", "forced", "tcp_reuse", "shutdown", "forced"};
    nlohmann::json fl = {
        {"pkts_toserver", f.pkts[0]},
        {"pkts_toclient", f.pkts[1]},
        {"bytes_toserver", fs->frame_bytes[0]},
        {"bytes_toclient", fs->frame_bytes[1]},
        {"start", time_text(f.first_ns, true)},
        {"end", time_text(f.last_ns, true)},
        {"age", f.last_ns / 1000000000ull - f.first_ns / 1000000000ull},  // (whole seconds, as Suricata)
        // (Suricata's flow is closed once its session is: a second FIN or a reset)
        {"state", key.proto == 6 ? (k::tcp_closed(fs->tcp.state) ? "closed"
                                    : fs->established            ? "established"
                                                                 : "new")
                                 : (f.pkts[0] && f.pkts[1] ? "established" : "new")},
        {"reason", kReason[int(why)]},
        {"alerted", fs->alerted != 0}};
    if (fs->verdict == uint8_t(Verdict::Pass)) fl["action"] = "pass";
    if (fs->verdict == uint8_t(Verdict::Drop) && ips_) fl["action"] = "drop";
    if (fs->verdict == uint8_t(Verdict::Bypass)) fl["state"] = "bypassed";
    if ((fs->exception || fs->picked_up) && eve_exception_)  // (a pickup Suricata 8 names, policy ignore)
      fl["exception_policy"].push_back({{"target", "stream_midstream"}, {"policy", kMidstreamNames[fs->exception]}});
    if (fs->app_exception && eve_exception_) {
      std::string name = kAppErrorNames[fs->app_exception];
      std::replace(name.begin(), name.end(), '-', '_');
      fl["exception_policy"].push_back({{"target", "app_layer_error"}, {"policy", name}});
    }
    if (txs) fl["tx_cnt"] = txs;  // (Suricata 8's: the application layer's transactions)
    if (key.proto == 1 || key.proto == 58) {
      // the first packet's type and code; once answered, the type an answer
      // has (Suricata's counterpart: 0 for an echo request; 0 where there is none)
      j["icmp_type"] = fs->icmp[0], j["icmp_code"] = fs->icmp[1];
      if (f.pkts[1]) j["response_icmp_type"] = icmp_counterpart(key.proto, fs->icmp[0]), j["response_icmp_code"] = 0;
    }
    j["flow"] = fl;
    traffic_json(fs->bits, j);
    if (std::string m = vars_metadata(flow_id_of(id), false, fs); !m.empty()) j["metadata"] = nlohmann::json::parse(m);
    if (key.proto == 6) {
      auto hex = [](uint8_t x) { return fmt::format("{:02x}", x); };
      uint8_t all = f.tcp_flags[0] | f.tcp_flags[1];
      j["tcp"] = {
          {"tcp_flags", hex(all)}, {"tcp_flags_ts", hex(f.tcp_flags[0])}, {"tcp_flags_tc", hex(f.tcp_flags[1])}};
      tcp_flag_bools(all, j["tcp"]);
      if (const char* st = tcp_state_name(fs->tcp)) {
        j["tcp"]["state"] = st;
        // the session's stream buffers: each direction's most regions
        // (Suricata's streaming buffer; the flow is not reassembled without
        // an application layer, and they are not known)
        if (regions[0]) j["tcp"]["ts_max_regions"] = regions[0];
        if (regions[1]) j["tcp"]["tc_max_regions"] = regions[1];
      }
    }
    eve_put(kEveFlow, eve_text(j));
  }
  // Suricata's TCP flag booleans (syn, fin, rst, psh, ack, urg: those set).
  static void tcp_flag_bools(uint8_t flags, nlohmann::json& t) {
    for (auto [bit, name] :
         {std::pair<uint8_t, const char*>{2, "syn"}, {1, "fin"}, {4, "rst"}, {8, "psh"}, {0x10, "ack"}, {0x20, "urg"}})
      if (flags & bit) t[name] = true;
  }
  // Suricata's netflow records of a flow: one a direction (the server's
  // only when it sent packets), each with its own packets, bytes, TTLs and
  // TCP flags, from that direction's sender.
  void netflow_records(uint32_t id, const flow::Flow& f, uint16_t app) {
    const auto* fs = reinterpret_cast<const FlowState*>(mgr_->table().state(id) + state_off_);
    for (uint8_t d = 0; d < 2; ++d) {
      if (d == 1 && !f.pkts[1]) break;
      nlohmann::json j = flow_head(id, f, d == 0, f.first_ns, "netflow");
      if (const char* a = ids::app_name(app)) j["app_proto"] = a;
      j["netflow"] = {{"pkts", f.pkts[d]},
                      {"bytes", fs->frame_bytes[d]},
                      {"start", time_text(f.first_ns, true)},
                      {"end", time_text(f.last_ns, true)},
                      {"age", f.last_ns / 1000000000ull - f.first_ns / 1000000000ull},
                      {"min_ttl", fs->ttl[d][0]},
                      {"max_ttl", fs->ttl[d][1]}};
      traffic_json(fs->bits, j);
      if (std::string m = vars_metadata(flow_id_of(id), false, fs); !m.empty())
        j["metadata"] = nlohmann::json::parse(m);
      if (f.key.proto == 6) {
        j["tcp"] = {{"tcp_flags", fmt::format("{:02x}", f.tcp_flags[d])}};
        tcp_flag_bools(f.tcp_flags[d], j["tcp"]);
      }
      eve_put(kEveNetflow, eve_text(j));
    }
  }
  // The ICMP type answering `type` (its request for a reply), as Suricata
  // pairs them; 0 for a type without one.
  static uint8_t icmp_counterpart(uint8_t proto, uint8_t type) {
    static constexpr std::pair<uint8_t, uint8_t> kV4[] = {{8, 0}, {13, 14}, {15, 16}, {17, 18}};
    static constexpr std::pair<uint8_t, uint8_t> kV6[] = {{128, 129}, {135, 136}, {133, 134}, {130, 131}, {139, 140},
                                                          {144, 145}, {146, 147}, {148, 149}, {151, 152}, {157, 158}};
    for (auto [a, b] : proto == 1 ? std::span<const std::pair<uint8_t, uint8_t>>(kV4) : std::span(kV6)) {
      if (type == a) return b;
      if (type == b) return a;
    }
    return 0;
  }
  // Suricata's name for the session's TCP state (tcp.state in flow records)
  // from the flow layer's conntrack-like one; none without a session (not
  // picked up midstream). Suricata names them from the server's side: the
  // client's FIN first puts it in CLOSE_WAIT (then LAST_ACK at the server's
  // FIN), the server's in FIN_WAIT1, FIN_WAIT2 once acknowledged (then
  // TIME_WAIT at the client's FIN).
  static const char* tcp_state_name(const k::TcpTrack& t) {
    bool client_closed = t.first_fin == 0;  // the originator's FIN came first
    switch (t.state) {
      case k::kTcpSynSent:
      case k::kTcpSynSent2: return "syn_sent";
      case k::kTcpSynRecv: return "syn_recv";
      case k::kTcpEstablished: return "established";
      case k::kTcpFinWait: return client_closed ? "close_wait" : "fin_wait1";
      case k::kTcpCloseWait: return client_closed ? "close_wait" : "fin_wait2";
      case k::kTcpLastAck: return client_closed ? "last_ack" : "time_wait";
      case k::kTcpTimeWait:
      case k::kTcpClose: return "closed";
      default: return nullptr;
    }
  }
  // What the IDS keeps per flow, in the flow layer's state block.
  struct FlowState {
    uint8_t verdict;    // Verdict::Pass or Drop once the flow has one (no more inspection)
    uint8_t alerted;    // an alert was raised on the flow
    uint8_t ttl[2][2];  // per direction: the lowest and highest TTL (hop limit) seen (in the padding here)
    uint8_t picked_up;  // a TCP connection the flow layer picked up midstream (its exception policy: ignore)
    uint64_t bits[ids::kMaxFlowbits / 64];
    ids::FlowInts ints;
    uint64_t frame_bytes[2];  // per direction, with the link header (Suricata's flow bytes; the table counts IP bytes)
    uint64_t pkts[2];         // per direction, as of the packet inspected (the table's are the batch's end)
    uint32_t isn[2], next_seq[2];  // TCP, per direction: the first sequence number, and past the last byte seen
    uint8_t seq_seen;              // bit per direction: isn set
    uint8_t exception;             // the midstream policy applied to the flow (Midstream), 0: none
    uint8_t app_exception;         // the first app-layer error policy applied to it (AppError), 0: none
    uint8_t drop_logged;           // bit per direction: a drop record was written (EVE_DROP_FLOWS start)
    uint8_t vlan_layers;           // the first packet's VLAN tags (its EVE records' vlan)
    uint16_t vlan[3];
    uint8_t icmp[2];  // an ICMP flow's first packet's type and code (its flow record's icmp_type, icmp_code)
    // the session as this element saw it: a dropped flow's later packets
    // (IPS) do not move it, as they never reach Suricata's stream engine,
    // and neither do those the session checks reject (a stream error)
    k::TcpTrack tcp;
    uint8_t established;  // tcp reached ESTABLISHED (the flow record's state)
  };
  k::TcpTrack tcp_before_;  // (the packet being inspected's flow's session before it)
  uint8_t established_before_ = 0;
  // A packet of a flow with a verdict: not inspected. A passed flow is
  // still parsed and logged (Suricata); a bypassed one is not; a dropped
  // one's packets are dropped (IPS), the packet that met the midstream
  // policy with that reason.
  Verdict settled(Packet* p, ids::PacketInfo& info, FlowState* fs, const k::IdsStreamOut* found) {
    Verdict v = Verdict(fs->verdict);
    (v == Verdict::Pass ? flow_passed_ : v == Verdict::Drop ? flow_dropped_ : flow_bypassed_).add();
    if (v == Verdict::Drop && ips_)
      drop_record(p, info, nullptr, flow_id_of(p), midstream_now_ ? "stream midstream" : nullptr);
    if (v == Verdict::Pass && app_on_) {
      app_.packet(p->anno().flow, info, p->timestamp_ns(), tx_hits_, found);
      tx_logs(p, p->timestamp_ns());
    }
    tx_hits_.clear();
    return v;
  }
  // Suricata's ssh encryption-handling bypass: once both sides of an SSH
  // connection sent NEWKEYS, its later packets are neither inspected nor
  // parsed (this one still is: inspected, its verdict applied).
  void encrypted(Packet* p, FlowState* fs) {
    if (ssh_bypass_ && !fs->verdict && app_.ssh_encrypted(p->anno().flow)) fs->verdict = uint8_t(Verdict::Bypass);
  }
  // Suricata's app-layer.error-policy: what happens to a packet whose data
  // a parser could not take (IdsAppLayer::packet_failed) and to its flow.
  // drop-packet: the packet is dropped (IPS), pass-packet: it goes on;
  // neither is inspected. drop-flow and reject (IPS) drop it and the
  // flow's later packets, pass-flow passes the flow (parsed, not
  // inspected), bypass leaves it alone. ignore (auto: drop-flow in IPS
  // mode) changes nothing; in IDS mode the drops are ignored, as Suricata's.
  // Verdict::None: inspect the packet as usual.
  enum class AppError : uint8_t { Ignore, DropPacket, PassPacket, DropFlow, PassFlow, Bypass, Reject };
  static constexpr const char* kAppErrorNames[] = {"ignore",    "drop-packet", "pass-packet", "drop-flow",
                                                   "pass-flow", "bypass",      "reject"};
  Verdict app_error(Packet* p, const ids::PacketInfo& info, FlowState* fs) {
    AppError m = app_error_auto_ && ips_ ? AppError::DropFlow : app_error_;
    const bool drops = m == AppError::DropPacket || m == AppError::DropFlow || m == AppError::Reject;
    if (m == AppError::Ignore || (drops && !ips_)) return Verdict::None;
    ++app_error_applied_[size_t(m)];
    if (!fs->app_exception) fs->app_exception = uint8_t(m);  // (the flow record's exception_policy)
    tx_hits_.clear();                                        // (what the parsers matched on it goes with it)
    if (m != AppError::DropPacket && m != AppError::PassPacket && !fs->verdict)
      fs->verdict = uint8_t(m == AppError::PassFlow ? Verdict::Pass
                            : m == AppError::Bypass ? Verdict::Bypass
                                                    : Verdict::Drop);
    if (!drops) return Verdict::Pass;
    app_error_dropped_.add();
    drop_record(p, info, nullptr, flow_id_of(p), "applayer error");
    return Verdict::Drop;
  }
  // Suricata's stream.drop-invalid: an inline IPS drops a packet that
  // failed a TCP session check (its rules were matched: a stream-event
  // rule alerts on it), drop reason "stream error".
  Verdict stream_error(Packet* p, const ids::PacketInfo& info, FlowState* fs, Verdict v) {
    if (!app_on_ || !app_.packet_stream_error()) return v;
    if (fs) fs->tcp = tcp_before_, fs->established = established_before_;  // (the session did not take it)
    if (!drop_invalid_ || v == Verdict::Drop) return v;
    stream_error_dropped_.add();
    drop_record(p, info, nullptr, flow_id_of(p), "stream error");
    return Verdict::Drop;
  }
  // Suricata's stream.midstream-policy: what happens to a TCP connection
  // picked up without its handshake. With pick-up off (the flow layer's
  // MIDSTREAM false) the session is not tracked and the policy decides the
  // flow: pass-flow (no detection), bypass (nothing more), drop-flow or
  // reject (IPS; ignore in IDS mode). With pick-up on, only pass-flow
  // applies (tracked and parsed, no detection). ignore (and auto, except
  // auto in IPS mode without pick-up: drop-flow) changes nothing.
  enum class Midstream : uint8_t { Ignore, PassFlow, Bypass, DropFlow, Reject };
  static constexpr const char* kMidstreamNames[] = {"ignore", "pass_flow", "bypass", "drop_flow", "reject"};
  void midstream(FlowState* fs) {
    bool pickup = mgr_->table().config().midstream;
    Midstream m = midstream_auto_ && ips_ && !pickup ? Midstream::DropFlow : midstream_;
    if (pickup ? m != Midstream::PassFlow : (!ips_ && (m == Midstream::DropFlow || m == Midstream::Reject)))
      m = Midstream::Ignore;
    if (m == Midstream::Ignore) return;
    if (fs->exception) {
      // not tracked, a passed flow's every packet meets the policy again
      // (Suricata counts each); the others settled the flow for good
      if (!pickup && m == Midstream::PassFlow) ++midstream_applied_[size_t(m)];
      return;
    }
    fs->exception = uint8_t(m);
    ++midstream_applied_[size_t(m)];
    if (fs->verdict) return;
    fs->verdict = uint8_t(m == Midstream::PassFlow ? Verdict::Pass
                          : m == Midstream::Bypass ? Verdict::Bypass
                                                   : Verdict::Drop);
    midstream_now_ = m == Midstream::DropFlow || m == Midstream::Reject;
  }
  // p's flow state, with the flow's facts filled into info; null without a
  // flow layer or a flow.
  FlowState* flow_of(Packet* p, ids::PacketInfo& info) {
    uint32_t id = p->anno().flow;
    if (!mgr_ || !id || info.invalid) return nullptr;
    flow::FlowTable& t = mgr_->table();
    info.has_flow = true;
    info.dir = p->anno().flow_dir;
    // as of this packet, not the batch's end; and as Suricata's flow keyword
    // sees it: the packet completing a handshake is not yet established
    info.established = p->anno().flow_facts & flow::kFactEstablishedBefore;
    info.first_in_dir = p->anno().flow_facts & flow::kFactFirstInDir;
    auto* fs = reinterpret_cast<FlowState*>(t.state(id) + state_off_);
    info.flowbits = fs->bits;
    info.flowints = &fs->ints;
    fs->frame_bytes[info.dir & 1] += flow_bytes(p);
    if (fs->pkts[0] + fs->pkts[1] == 0) {  // (the flow's first packet)
      fs->vlan_layers = info.vlan_layers;
      std::copy(info.vlan, info.vlan + 3, fs->vlan);
      if ((info.proto == 1 || info.proto == 58) && info.l4 && info.l4len >= 2)
        fs->icmp[0] = info.l4[0], fs->icmp[1] = info.l4[1];
    }
    {  // each direction's TTLs (netflow records)
      uint8_t* tt = fs->ttl[info.dir & 1];
      if (!fs->pkts[info.dir & 1] || info.ttl < tt[0]) tt[0] = info.ttl;
      tt[1] = std::max(tt[1], info.ttl);
    }
    ++fs->pkts[info.dir & 1];
    if (info.proto == 6 && info.l4) {  // the sequence space seen each way (stream_size)
      int d = info.dir & 1;
      uint8_t fl = info.l4[13];
      tcp_before_ = fs->tcp, established_before_ = fs->established;
      if (!(ips_ && fs->verdict == uint8_t(Verdict::Drop)))
        k::tcp_track(fs->tcp, fl, uint8_t(d), t.config().midstream, t.config().async_oneside);
      if (fs->tcp.state == k::kTcpEstablished) fs->established = 1;
      uint32_t seq = k::load_be32(info.l4 + 4);
      uint32_t end = seq + info.plen + ((fl & 0x02) ? 1 : 0) + ((fl & 0x01) ? 1 : 0);
      if (!(fs->seq_seen >> d & 1)) {
        fs->isn[d] = seq, fs->next_seq[d] = end;
        fs->seq_seen |= uint8_t(1 << d);
      } else if (int32_t(end - fs->next_seq[d]) > 0) {
        fs->next_seq[d] = end;
      }
      for (int s = 0; s < 2; ++s) info.stream_size[s] = fs->seq_seen >> s & 1 ? fs->next_seq[s] - fs->isn[s] : 0;
      info.has_stream = true;
    }
    midstream_now_ = false;
    if (info.proto == 6 && (p->anno().flow_facts & flow::kFactMidstream)) {  // (as of this packet)
      fs->picked_up = t.config().midstream;
      if (midstream_ != Midstream::Ignore || midstream_auto_) midstream(fs);
    }
    return fs;
  }
  // Flow id's view from direction d at its end: its addresses, ports and
  // flow fields (a pure ACK's TCP header in l4) as a packet would carry them.
  void end_view(uint32_t id, const flow::Flow& f, uint8_t d, ids::PacketInfo& info, uint8_t* l4) {
    const k::ConnKey& key = f.key;
    bool ab = (f.orig_dir == 0) == (d == 0);  // a -> b is this direction
    auto addr = [&](const uint32_t* a) {
      ids::Addr x;
      x.v6 = key.family == 6;
      for (int i = 0; i < 4; ++i) k::store_be32(x.b + 4 * i, a[i]);
      return x;
    };
    info.src = addr(ab ? key.a : key.b), info.dst = addr(ab ? key.b : key.a);
    info.proto = key.proto;
    info.has_ports = true;
    info.sport = ab ? key.pa : key.pb, info.dport = ab ? key.pb : key.pa;
    k::store_be16(l4, info.sport), k::store_be16(l4 + 2, info.dport);
    l4[12] = 5 << 4, l4[13] = 0x10;
    info.l4 = l4, info.l4len = 20;
    info.has_flow = true, info.dir = d, info.first_in_dir = false;
    info.established = flow::FlowTable::established(f);
    auto* fs = reinterpret_cast<FlowState*>(mgr_->table().state(id) + state_off_);
    info.flowbits = fs->bits;
    info.flowints = &fs->ints;
    info.vlan_layers = fs->vlan_layers;
    std::copy(fs->vlan, fs->vlan + 3, info.vlan);
    info.hostbits = &shared_->hostbits, info.ts_ns = f.last_ns;
    info.app = app_.app(id), info.app_known = true;
  }
  // The stream rules' matches on the data a flow's end delivered: alerts
  // without a packet (Suricata's pkt_src "stream (flow timeout)"); a drop
  // has no packet to drop.
  void end_alerts(uint32_t id, const flow::Flow& f, uint16_t app) {
    auto& hits = app_.end_hits();
    if (hits.empty()) return;
    auto* fs = reinterpret_cast<FlowState*>(mgr_->table().state(id) + state_off_);
    const auto& rules = engine_.rules();
    // each direction's matches as one packet's (Suricata's flow-end pseudo
    // packets, the client's first): in the rules' order, packet-alert-max
    // of them logged
    std::stable_sort(hits.begin(), hits.end(), [](const IdsAppLayer::TxHit& a, const IdsAppLayer::TxHit& b) {
      return a.dir != b.dir ? a.dir < b.dir : a.rule < b.rule;
    });
    uint32_t logged = 0, in_dir[2] = {0, 0};
    for (const IdsAppLayer::TxHit& h : hits) {
      const ids::Rule& rule = rules[h.rule];
      ids::PacketInfo info;
      uint8_t l4[20] = {};
      end_view(id, f, h.dir, info, l4);
      info.app = app;  // (the application layer let the flow go already)
      if (fs->verdict || rule.action == "pass") continue;
      if (rule.noalert ||
          (rule.threshold.type != ids::Threshold::None &&
           !shared_->threshold.allow(rule, h.rule, info, flow_id_of(id), f.last_ns)) ||
          (!rule.suppress.empty() && ids::ThresholdState::suppressed(rule, info))) {
        suppressed_.add();
        continue;
      }
      if (in_dir[h.dir & 1]++ >= alert_max_) {
        discarded_.add();
        continue;
      }
      verdict_ = "alert";
      pkt_vars_.clear();  // (no packet)
      keep_vars(h.vars, flow_id_of(id));
      cur_vars_ = &h.vars;
      log(rule, info, f.last_ns, false, &h, nullptr, flow_id_of(id), id);
      cur_vars_ = nullptr;
      ++logged;
    }
    hits.clear();
    if (logged) alerts_.add(logged), fs->alerted = 1;
    write_logs();
  }
  // Whether a pass or drop rule's match applies to the whole flow, as
  // Suricata decides (FlowApplySignatureActions): a match on a transaction or
  // on the stream, or a rule whose kind says so (Rule::flow_scope). A TCP
  // packet's payload matched once its connection is established counts as
  // the stream's (Suricata inspects the reassembled stream there). Anything
  // else (a SYN's payload, a header check) acts on the packet only.
  static bool flow_scoped(const ids::Rule& rule, const IdsAppLayer::TxHit* tx, const ids::PacketInfo& info) {
    if (tx || rule.flow_scope) return true;
    bool payload = false;
    for (const ids::Item& it : rule.items) payload |= it.buf == ids::Buf::Packet;
    return payload && info.proto == 6 && info.established;
  }
  // Applies the verdict of hits_ for p (rules in action order: a pass rule
  // first means no alert, and the flow is passed), and counts and logs the
  // alerts.
  Verdict record(Packet* p, const ids::PacketInfo& info, FlowState* fs) {
    inspected_.add();
    verified_.add(engine_.verified());
    if (fs && fs->verdict) {
      tx_hits_.clear();
      return Verdict(fs->verdict);
    }
    // packet and transaction matches together, in the rules' (action) order
    all_.clear();
    for (uint32_t r : hits_) all_.push_back({r, nullptr});
    for (const auto& h : tx_hits_) all_.push_back({h.rule, &h});
    std::sort(all_.begin(), all_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    // threshold and detection_filter: matches that do not become alerts
    // take no action either
    uint64_t now = p->timestamp_ns();
    size_t matched = all_.size();
    std::erase_if(all_, [&](const auto& h) {
      const ids::Rule& rule = engine_.rules()[h.first];
      return (rule.threshold.type != ids::Threshold::None &&
              !shared_->threshold.allow(rule, h.first, info, flow_id_of(p), now)) ||
             (!rule.suppress.empty() && ids::ThresholdState::suppressed(rule, info));  // threshold.config suppress
    });
    if (matched != all_.size()) suppressed_.add(matched - all_.size());
    struct Clear {
      std::vector<IdsAppLayer::TxHit>& v;
      ~Clear() { v.clear(); }
    } clear{tx_hits_};
    if (all_.empty()) return Verdict::None;
    const auto& rules = engine_.rules();
    // what the matches' pcres captured: flowvars and pktvars before any
    // alert is logged (each alert shows them), the alert context per match
    pkt_vars_.clear();
    hit_vars_.resize(all_.size());
    for (size_t i = 0; i < all_.size() && captures_; ++i) {
      hit_vars_[i].clear();
      const ids::Rule& rule = engine_.rules()[all_[i].first];
      if (!rule.captures) continue;
      if (all_[i].second)
        hit_vars_[i] = all_[i].second->vars;
      else
        ids::rule_captures(rule, nullptr, info, hit_vars_[i]);
      keep_vars(hit_vars_[i], flow_id_of(p));
    }
    if (!pkt_vars_.empty() && eve(kEveMetadata)) {  // Suricata's metadata record: a packet with pktvars
      nlohmann::json j = packet_head(p, info, flow_id_of(p), "metadata");
      j["metadata"] = nlohmann::json::parse(vars_metadata(flow_id_of(p), true, fs));
      eve_put(kEveMetadata, eve_text(j));
    }
    // each match's action: the rule's, or its rate_filter's while that holds
    actions_.clear();
    for (const auto& [r, tx] : all_)
      actions_.push_back(&shared_->threshold.action(rules[r], r, info, flow_id_of(p), now));
    uint64_t ts = p->timestamp_ns();  // the packet's time, as Suricata logs it (0 is 1970-01-01)
    // a flow's id in EVE: unique over the run (worker, entry reuse, entry)
    uint64_t flow_id = flow_id_of(p);
    if (*actions_[0] == "pass") {
      passed_.add();
      const ids::Rule& pr = rules[all_[0].first];
      // a pass rule passes the flow where Suricata applies it to the flow; a
      // rate_filter's pass, this packet
      if (fs && pr.action == "pass" && flow_scoped(pr, all_[0].second, info)) fs->verdict = uint8_t(Verdict::Pass);
      if (pr.force_alert && !pr.noalert) {  // alert then pass
        verdict_ = "pass";
        cur_vars_ = &hit_vars_[0];
        log(pr, info, ts, false, all_[0].second, p, flow_id);
        cur_vars_ = nullptr;
        alerted_packets_.add();
        alerts_.add();
        if (fs) fs->alerted = 1;
      }
      return Verdict::Pass;
    }
    bool dropped = false, drop_flow = false;
    uint32_t logged = 0;
    const ids::Rule* dropper = nullptr;
    bool by_rate = false;  // the drop is a rate_filter's new action
    // the packet's verdict, for EVE: matches after a pass rule do not count
    // (the pass rule's own `alert` does)
    size_t end = all_.size();
    for (size_t i = 1; i < all_.size(); ++i)
      if (rules[all_[i].first].action == "pass") {
        end = i;
        break;
      }
    bool will_drop = false;
    for (size_t i = 0; i < end; ++i) will_drop |= ids::is_drop_action(*actions_[i]);
    // a pass rule after other matches (an action-order putting alerts
    // first) still passes the packet, and the flow where it applies to it
    bool pass_after = end < all_.size() && *actions_[end] == "pass" && !(will_drop && ips_);
    verdict_ = will_drop && ips_ ? "drop" : pass_after ? "pass" : "alert";
    for (size_t i = 0; i < end; ++i) {
      const auto& [r, tx] = all_[i];
      const ids::Rule& rule = rules[r];
      if (*actions_[i] == "pass") continue;  // (a rate_filter's pass after the first match)
      bool d = ids::is_drop_action(*actions_[i]);
      dropped |= d;
      drop_flow |= d && flow_scoped(rule, tx, info);
      if (d && !dropper) dropper = &rule, by_rate = actions_[i] != &rule.action;
      if (rule.noalert) {
        suppressed_.add();
        continue;
      }
      if (!rule.tags.empty()) shared_->tags.start(rule, info, flow_id, ts);
      // packet-alert-max: the first matches (in the rules' order) are
      // logged, the rest counted; their actions stand
      if (logged >= alert_max_) {
        discarded_.add();
        continue;
      }
      cur_vars_ = &hit_vars_[i];
      log(rule, info, ts, ips_ && d, tx, p, flow_id);
      cur_vars_ = nullptr;
      ++logged;
    }
    if (end < all_.size()) {  // alert then pass, the pass after other matches
      const ids::Rule& pr = rules[all_[end].first];
      if (pr.force_alert && !pr.noalert) {
        if (logged < alert_max_) {
          cur_vars_ = &hit_vars_[end];
          log(pr, info, ts, false, all_[end].second, p, flow_id);
          cur_vars_ = nullptr;
          ++logged;
        } else {
          discarded_.add();
        }
      }
    }
    if (logged) {
      alerted_packets_.add();
      alerts_.add(logged);
      if (fs) fs->alerted = 1;
    }
    if (dropped && ips_) {
      dropped_.add();
      if (fs && drop_flow) fs->verdict = uint8_t(Verdict::Drop);
      drop_record(p, info, dropper, flow_id, by_rate ? "threshold detection_filter" : nullptr);
      return Verdict::Drop;
    }
    if (pass_after) {
      passed_.add();
      const ids::Rule& pr = rules[all_[end].first];
      if (fs && pr.action == "pass" && flow_scoped(pr, all_[end].second, info)) fs->verdict = uint8_t(Verdict::Pass);
      return Verdict::Pass;
    }
    return logged ? Verdict::Alert : Verdict::None;
  }
  // The batch's log lines, written and checked: alerts that could not be
  // logged are counted (handler log_lost) and the run fails.
  void write_logs() {
    auto put = [&](io::SharedFile<io::OutFile>& f, std::string& buf, uint64_t lines) {
      if (buf.empty()) return;
      uint64_t lost = 0;
      std::string err;
      f.with([&](io::OutFile& o) {
        uint64_t before = o.records_lost();
        o.put(buf);
        o.end_record();
        o.flush();
        lost = o.records_lost() - before;
        if (lost) err = o.error();
      });
      buf.clear();
      if (!lost) return;
      log_lost_.add(lines);
      run_error(err);
    };
    put(fast_, fast_buf_, fast_lines_);
    fast_lines_ = 0;
    for (auto& e : eves_) put(e->file, e->buf, e->lines), e->lines = 0;
  }
  // What the rules see of a packet, as Suricata's decoder leaves it: a
  // fragment passed on (its datagram follows) has no transport to read; a
  // packet whose IP header cannot be right (cut short, bad lengths) has no
  // addresses; one whose transport header cannot be has no ports and no
  // payload; neither has a flow. Its decoder events are counted.
  // A packet's decoder events, each occurrence counted (some come more than
  // once; the reassembler's overlap once): event_counts_ and the stats.
  [[gnu::noinline]] void count_events(uint64_t events, const uint8_t* ip, uint32_t len) {
    event_counts_.fill(0);
    ids::decode_events(ip, len, event_counts_.data());
    for (uint64_t e = events; e; e &= e - 1) {
      uint8_t& n = event_counts_[size_t(__builtin_ctzll(e))];
      n = std::max<uint8_t>(n, 1);
      event_stats_[size_t(__builtin_ctzll(e))] += n;
    }
  }
  void rules_view(Packet* p, ids::PacketInfo& info, const uint8_t* ip, uint32_t len) {
    vlan_tags(p, info);
    info.hostbits = &shared_->hostbits;
    info.ts_ns = p->timestamp_ns();
    info.events = ids::decode_events(ip, len);
    if (p->anno().flags & Anno::kFragOverlap)
      info.events |= ids::event_bit(info.src.v6 ? ids::kIpv6FragOverlap : ids::kIpv4FragOverlap);
    if (info.events) [[unlikely]]
      count_events(info.events, ip, len);
    if (info.events & ids::kL3Invalid) {
      info.src = info.dst = ids::Addr();
      info.no_l3 = info.invalid = true;
    }
    if ((p->anno().flags & Anno::kFragment) || (info.events & (ids::kL3Invalid | ids::kL4Invalid))) {
      info.invalid |= (info.events & ids::kL4Invalid) != 0;
      info.l4 = nullptr, info.l4len = 0;
      info.has_ports = false, info.sport = info.dport = 0;
      info.payload = ip, info.plen = 0;
    }
    if (info.events && decode_anomalies_ && eve(kEveAnomaly)) decode_anomalies(p, info);
  }
  // The packet's VLAN ids (vlan_stack: its frame's tags; a tunnel's inner
  // packet's also its ERSPAN header's and inner frame's).
  static void vlan_tags(const Packet* p, ids::PacketInfo& info) {
    info.vlan_layers = uint8_t(vlan_stack(p, info.vlan));
  }
  // The bytes a packet adds to its flow's count (Suricata's packet length):
  // the frame, or for a tunnel's inner packet what its tunnel carried (the
  // inner IP packet, or the inner frame with an ERSPAN header before it).
  static uint32_t flow_bytes(const Packet* p) {
    const Anno& a = p->anno();
    if (!(a.flags & Anno::kTunnelInner) || !p->has_network_header()) return p->length();
    uint32_t eth = uint32_t(a.user[1]) | uint32_t(a.user[2]) << 8;
    uint32_t from = eth ? a.user16 + eth - (a.user[3] == 1 && eth >= 8 ? 8 : 0) : uint32_t(p->network_header_offset());
    return from < p->length() ? p->length() - from : 0;
  }
  // Suricata's vlan array of EVE records.
  template <class J>  // (a nlohmann::json or a JsonRecord)
  static void vlan_json(uint8_t n, const uint16_t* ids, J& j) {
    if (!n) return;
    if constexpr (std::is_same_v<J, JsonRecord>) {
      std::string a = "[";
      for (uint8_t i = 0; i < n; ++i) a += (i ? "," : "") + std::to_string(ids[i]);
      j.raw("vlan", a + "]");
    } else {
      j["vlan"] = std::vector<uint16_t>(ids, ids + n);
    }
  }
  // A packet the IP parse refused (too short, headers cut): its decoder
  // events, and addresses and protocol where its IP header is whole.
  bool invalid_view(Packet* p, ids::PacketInfo& info) {
    uint32_t len = 0;
    const uint8_t* ip = flow_ip_header(p, len);
    if (!ip || !len) return false;
    bool v4 = ip[0] >> 4 == 4;
    info = ids::PacketInfo();
    if (len >= (v4 ? 20u : 40u)) {
      info.src.v6 = info.dst.v6 = !v4;
      std::memcpy(info.src.b, ip + (v4 ? 12 : 8), v4 ? 4 : 16);
      std::memcpy(info.dst.b, ip + (v4 ? 16 : 24), v4 ? 4 : 16);
      info.proto = ip[v4 ? 9 : 6];
      info.ttl = ip[v4 ? 8 : 7];
    }
    rules_view(p, info, ip, len);
    if (!info.events) return false;  // (not IP at all)
    info.invalid = true;
    info.no_l3 |= len < (v4 ? 20u : 40u);
    info.payload = ip, info.plen = 0;
    return true;
  }
  // Suricata's decoder counters, for each packet that reaches the IDS (an
  // inner packet of a tunnel is one, as Suricata's; fragments taken into a
  // datagram upstream are not).
  void decoded(const Packet* p, const ids::PacketInfo& info, bool ok, uint32_t ip_off) {
    ++pkt_stats_[kPkts];
    pkt_stats_[kBytes] += p->length();
    if (!(p->anno().flags & Anno::kTunnelInner)) {  // the link it was read with (a tunnel's inner packet: none)
      switch (io::link_dlt(p->anno().link)) {
        case DLT_EN10MB: {
          ++pkt_stats_[kEthernet];
          // a Network Service Header after the tags (decoded with the frame)
          // (looked for only where something sits between the Ethernet header and IP, or no IP was found)
          int64_t mac = p->has_mac_header() ? p->mac_header_offset() : 0;
          if ((!ok || ip_off > uint64_t(mac) + 14) && mac >= 0 && uint64_t(mac) < p->length()) {
            const uint8_t* d = p->data() + mac;
            uint32_t n = p->length() - uint32_t(mac), at = 12;
            uint16_t type = n >= 14 ? k::load_be16(d + at) : 0;
            while ((type == k::kEthVLAN || type == k::kEthQinQ) && at + 6 <= n) type = k::load_be16(d + (at += 4));
            if (type == k::kEthNsh) ++pkt_stats_[kNsh];
          }
          break;
        }
        case DLT_C_HDLC: ++pkt_stats_[kChdlc]; break;
        case DLT_RAW:
        case DLT_IPV4:
        case DLT_IPV6: ++pkt_stats_[kRaw]; break;
        case DLT_NULL:
        case DLT_LOOP: ++pkt_stats_[kNull]; break;
        case DLT_LINUX_SLL: ++pkt_stats_[kSll]; break;
        case DLT_LINUX_SLL2: ++pkt_stats_[kSll2]; break;
        case DLT_PPP:
        case DLT_PPP_SERIAL: ++pkt_stats_[kPpp]; break;
        default: break;
      }
    }
    if (!ok) return void(++pkt_stats_[kInvalid]);
    ++pkt_stats_[info.src.v6 ? kIpv6 : kIpv4];
    if ((p->anno().flags & Anno::kTunnelInner) && (p->anno().user[0] == 1 || p->anno().user[0] == 2))  // IP in IP
      ++pkt_stats_[p->anno().user[0] == 1 ? (info.src.v6 ? kIpv6InIpv4 : kIpv4InIpv4)
                                          : (info.src.v6 ? kIpv6InIpv6 : kIpv4InIpv6)];
    switch (info.proto) {
      case 6: ++pkt_stats_[kTcp]; break;
      case 17: ++pkt_stats_[kUdp]; break;
      case 132: ++pkt_stats_[kSctp]; break;
      case 1: ++pkt_stats_[kIcmpv4]; break;
      case 58: ++pkt_stats_[kIcmpv6]; break;
    }
  }
  // Suricata's flow and app_layer.flow counters, as each flow ends.
  void count_flow(const flow::Flow& f, uint16_t app, const FlowState* fs) {
    uint8_t proto = f.key.proto;
    const char* p = proto == 6 ? "tcp" : proto == 17 ? "udp" : proto == 1 ? "icmpv4" : proto == 58 ? "icmpv6" : nullptr;
    if (p) ++flow_stats_[fmt::format("flow.{}", p)];
    if (proto == 6) {  // Suricata's flow.end.state and flow.end.tcp_state: the session as the flow ended
      const char* st = fs->verdict == uint8_t(Verdict::Bypass) ? "bypassed"
                       : k::tcp_closed(fs->tcp.state)          ? "closed"
                       : fs->established                       ? "established"
                                                               : "new";
      ++flow_stats_[fmt::format("flow.end.state.{}", st)];
      const char* ts = tcp_state_name(fs->tcp);
      ++flow_stats_[fmt::format("flow.end.tcp_state.{}", ts ? ts : "none")];
    }
    if (const char* a = ids::app_name(app)) {
      // (protocols over both transports are counted per transport, as Suricata's dns_udp)
      bool both = app == ids::kAppDns || app == ids::kAppSip;
      std::string name = both ? fmt::format("{}_{}", a, proto == 6 ? "tcp" : "udp") : std::string(a);
      ++flow_stats_["app_layer.flow." + name];
    }
  }
  // This copy's counters into the run's.
  void add_stats() {
    static constexpr const char* kNames[] = {
        "decoder.pkts",         "decoder.bytes",        "decoder.invalid",      "decoder.ipv4",
        "decoder.ipv6",         "decoder.tcp",          "decoder.udp",          "decoder.sctp",
        "decoder.icmpv4",       "decoder.icmpv6",       "decoder.ipv4_in_ipv4", "decoder.ipv6_in_ipv4",
        "decoder.ipv4_in_ipv6", "decoder.ipv6_in_ipv6", "decoder.ethernet",     "decoder.chdlc",
        "decoder.raw",          "decoder.null",         "decoder.sll",          "decoder.sll2",
        "decoder.ppp",          "decoder.nsh"};
    static_assert(std::size(kNames) == kPktStats);
    std::lock_guard<std::mutex> g(shared_->stats_mu);
    auto& s = shared_->stats;
    for (size_t i = 0; i < kPktStats; ++i) s[kNames[i]] += pkt_stats_[i];
    for (const auto& [k, v] : flow_stats_) s[k] += v;
    for (size_t e = 0; e < event_stats_.size(); ++e)  // (the events seen)
      if (event_stats_[e])
        s[fmt::format("decoder.event.{}", ids::decode_event_name(ids::DecodeEvent(e)))] += event_stats_[e];
    event_stats_.fill(0);
    s["detect.alert"] += alerts_.get();
    s["detect.alert_queue_overflow"] += discarded_.get();
    s["detect.alerts_suppressed"] += suppressed_.get();
    if (app_on_) {
      s["tcp.reassembly_gap"] += app_.counters().stream_gaps.get();
      s["app_layer.tx.http"] += app_.counters().http.transactions.get();
      s["app_layer.tx.dns_udp"] += app_.counters().dns_udp_messages.get();
      s["app_layer.tx.dns_tcp"] += app_.counters().dns_messages.get() - app_.counters().dns_udp_messages.get();
      s["app_layer.tx.sip_udp"] += app_.counters().sip_udp_messages.get();
      s["app_layer.tx.sip_tcp"] += app_.counters().sip_messages.get() - app_.counters().sip_udp_messages.get();
      s["app_layer.tx.ftp"] += app_.counters().ftp_transactions.get();
      s["app_layer.tx.smtp"] += app_.counters().smtp_transactions.get();
      // Suricata counts the transactions each parse adds; a TLS or SSH
      // connection is one transaction from its start, so those stay 0
      s["app_layer.tx.tls"] += 0;
      s["app_layer.tx.ssh"] += 0;
    }
    for (size_t m = 1; m < midstream_applied_.size(); ++m)
      if (midstream_applied_[m])
        s[fmt::format("exception_policy.tcp.midstream.{}", kMidstreamNames[m])] += midstream_applied_[m];
    midstream_applied_.fill(0);
    for (size_t m = 1; m < app_error_applied_.size(); ++m)
      if (app_error_applied_[m]) {
        std::string name = kAppErrorNames[m];
        std::replace(name.begin(), name.end(), '-', '_');
        s[fmt::format("exception_policy.app_layer.error.{}", name)] += app_error_applied_[m];
      }
    app_error_applied_.fill(0);
    if (ips_) {  // packets dropped by a rule, an app-layer error's policy, or their flow's earlier drop
      uint64_t blocked = dropped_.get() + flow_dropped_.get() + app_error_dropped_.get() + stream_error_dropped_.get();
      s["ips.blocked"] += blocked;
      s["ips.accepted"] += pkt_stats_[kPkts] - blocked;
      s["ips.drop_reason.rules"] += dropped_.get();
      s["ips.drop_reason.flow_drop"] += flow_dropped_.get();
      s["ips.drop_reason.applayer_error"] += app_error_dropped_.get();
      s["ips.drop_reason.stream_error"] += stream_error_dropped_.get();
    }
    pkt_stats_.fill(0);
    flow_stats_.clear();
  }
  std::string stats_record() {
    std::lock_guard<std::mutex> g(shared_->stats_mu);
    nlohmann::json j = {{"timestamp", time_text(realtime_ns(), true)}, {"event_type", "stats"}};
    nlohmann::json st = stats_json(shared_->stats);
    st["uptime"] = (monotonic_ns() - started_ns_) / 1000000000ull;
    // the rule set, as Suricata's detect.engines: rules refused for their
    // `requires` are skipped, the others failed
    uint64_t failed = 0, skipped = 0;
    for (const ids::RuleProblem& pr : shared_->set.problems())
      if (!pr.threshold) ++(pr.what.starts_with("requires:") ? skipped : failed);
    st["detect"]["engines"] = nlohmann::json::array({{{"id", 0},
                                                      {"last_reload", time_text(shared_->loaded_ns, true)},
                                                      {"rules_loaded", shared_->set.rules().size()},
                                                      {"rules_failed", failed},
                                                      {"rules_skipped", skipped}}});
    j["stats"] = std::move(st);
    std::string text = eve_text(j);
    if (!pcap_suffix_.empty()) text.replace(text.size() - 2, 2, pcap_suffix_);
    return text;
  }
  // The transport's end points: ports, or ICMP's type and code (Suricata).
  template <class J>  // (a nlohmann::json or a JsonRecord)
  static void ports_json(const ids::PacketInfo& p, J& j) {
    auto set = [&](const char* k, unsigned v) {
      if constexpr (std::is_same_v<J, JsonRecord>)
        j.num(k, v);
      else
        j[k] = v;
    };
    if (p.has_ports) {
      set("src_port", p.sport), set("dest_port", p.dport);
    } else if ((p.proto == 1 || p.proto == 58) && p.l4) {
      set("icmp_type", p.l4[0]), set("icmp_code", p.l4[1]);
    }
  }
  // Suricata's pkt_src: where the packet came from
  static const char* pkt_src(const Packet* p) {
    if (p->anno().flags & Anno::kTunnelInner) {
      static const char* const kKinds[] = {"wire/pcap",           "ipv4 tunnel",   "ipv6 tunnel",         "gre tunnel",
                                           "vxlan encapsulation", "teredo tunnel", "geneve encapsulation"};
      uint8_t k = p->anno().user[0];
      return k < std::size(kKinds) ? kKinds[k] : "wire/pcap";
    }
    return (p->anno().flags & Anno::kDefragmented) ? "defrag" : "wire/pcap";
  }
  // Suricata's packet and packet_info: the frame as read, with its link
  // header (from the MAC header, or kept in the headroom: Anno::link_hdr);
  // a reassembled datagram with its first fragment's link header; the
  // inner packet of a tunnel from its IP header, as raw IP.
  static void packet_json(const Packet* p, nlohmann::json& j) {
    const uint8_t* end = p->data() + p->length();
    const uint8_t* at = p->data();
    int dlt = io::link_dlt(p->anno().link);
    if (const Anno& a = p->anno(); a.flags & Anno::kTunnelInner) {
      // (Suricata's tunnel packet: from the inner IP header, or from the PPP header GRE carried)
      uint32_t ppp = a.user[3] == 2 ? uint32_t(a.user16) + (uint32_t(a.user[1]) | uint32_t(a.user[2]) << 8) : 0;
      if (ppp && ppp < p->length())
        at = p->data() + ppp;
      else if (p->has_network_header() && p->network_header_offset() >= 0)
        at = p->data() + p->network_header_offset();
      dlt = DLT_RAW;
    } else if (p->has_mac_header() && p->mac_header_offset() >= -int64_t(p->headroom())) {
      at = p->data() + p->mac_header_offset();
      if (dlt < 0) dlt = DLT_EN10MB;
    } else if (p->has_network_header() && p->network_header_offset() >= -int64_t(p->headroom())) {
      int64_t from = p->network_header_offset() - p->anno().link_hdr;
      at = p->data() + (from >= -int64_t(p->headroom()) ? from : p->network_header_offset());
      if (dlt < 0) dlt = DLT_RAW;
    } else if (dlt < 0) {
      dlt = DLT_RAW;
    }
    if (at > end) at = end;
    size_t n = size_t(end - at);
    std::string b64(4 * ((n + 2) / 3) + 1, '\0');
    b64.resize(size_t(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()), at, int(n))));
    j["packet"] = std::move(b64);
    j["packet_info"] = {{"linktype", dlt}};
    // Suricata's names (util-datalink.c), which are not all libpcap's
    static const std::pair<int, const char*> kNames[] = {{DLT_NULL, "NULL"},
                                                         {DLT_EN10MB, "EN10MB"},
                                                         {DLT_LINUX_SLL, "LINUX_SLL"},
                                                         {DLT_LINUX_SLL2, "LINUX_SLL2"},
                                                         {DLT_PPP, "PPP"},
                                                         {DLT_RAW, "RAW"},
                                                         {101, "RAW2"},
                                                         {DLT_C_HDLC, "C_HDLC"},
                                                         {DLT_IPV4, "IPv4"},
                                                         {DLT_IPV6, "IPv6"}};
    for (const auto& [v, name] : kNames)
      if (v == dlt) j["packet_info"]["linktype_name"] = name;
  }
  // The client's address an HTTP request's XFF_HEADER names (Suricata's
  // xff): its last address (reverse deployment) or first (forward), when
  // that is an IPv4 or IPv6 address; empty otherwise.
  std::string xff_address(const flow::HttpTx& tx) const {
    for (const std::string& h : tx.request_header_list) {
      size_t colon = h.find(':');
      if (colon != xff_header_.size() || strncasecmp(h.data(), xff_header_.data(), colon) != 0) continue;
      std::string_view v(h);
      v.remove_prefix(colon + 1);
      size_t at = xff_last_ ? v.rfind(',') : std::string_view::npos;
      v = xff_last_ ? (at == std::string_view::npos ? v : v.substr(at + 1)) : v.substr(0, v.find(','));
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
      std::string ip(v);
      unsigned char buf[16];
      if (inet_pton(AF_INET, ip.c_str(), buf) == 1 || inet_pton(AF_INET6, ip.c_str(), buf) == 1) return ip;
      return {};
    }
    return {};
  }
  // Suricata's tunnel object of an inner packet (TunnelDecap): the outer
  // packet's addresses and protocol.
  static void tunnel_json(const Packet* p, nlohmann::json& j) {
    if (!(p->anno().flags & Anno::kTunnelInner) || p->anno().user16 >= p->length()) return;
    ids::PacketInfo o;
    if (!ids::parse_packet(p->data() + p->anno().user16, p->length() - p->anno().user16, o)) return;
    j["tunnel"] = {{"src_ip", addr_text(o.src)},
                   {"dest_ip", addr_text(o.dst)},
                   {"proto", proto_name(o.proto)},
                   {"depth", 0},
                   {"pkt_src", "wire/pcap"}};
    if (o.has_ports) j["tunnel"]["src_port"] = o.sport, j["tunnel"]["dest_port"] = o.dport;
  }
  // One JSON value's text, as EVE writes it (non-UTF-8 replaced).
  static std::string eve_json(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  // Suricata's metadata object (EVE's metadata: yes, its default): the
  // flow's flowbits (other than traffic/ ones) and flowints set, the
  // flowvars its rules' pcres captured and (with_pkt) the packet's pktvars;
  // empty when there are none.
  std::string vars_metadata(uint64_t flow_id, bool with_pkt, const FlowState* fs) const {
    if (flowvars_.empty() && (!with_pkt || pkt_vars_.empty()) &&
        (!fs || (flowbit_names_.empty() && flowint_names_.empty())))
      return {};  // (the common case: nothing to say)
    nlohmann::json m = nlohmann::json::object();
    if (fs) {
      for (const auto& [bit, name] : flowbit_names_)
        if (fs->bits[bit >> 6] >> (bit & 63) & 1) m["flowbits"].push_back(name);
      for (const auto& [var, name] : flowint_names_)
        if (fs->ints.set >> var & 1) m["flowints"][name] = fs->ints.v[var];
    }
    auto list = [](const std::vector<std::pair<std::string, std::string>>& vs) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& [k, v] : vs) a.push_back({{k, v}});
      return a;
    };
    if (auto it = flowvars_.find(flow_id); flow_id && it != flowvars_.end() && !it->second.empty())
      m["flowvars"] = list(it->second);
    if (with_pkt && !pkt_vars_.empty()) m["pktvars"] = list(pkt_vars_);
    return m.empty() ? std::string() : eve_json(m);
  }
  // A match's captures: flowvars kept with the flow (a name set again takes
  // the new value), pktvars with the packet.
  void keep_vars(const std::vector<ids::Captured>& vars, uint64_t flow_id) {
    for (const ids::Captured& v : vars) {
      if (v.scope == ids::PcreCapture::Pkt) {
        pkt_vars_.emplace_back(v.name, v.value);
      } else if (v.scope == ids::PcreCapture::Flow && flow_id) {
        auto& fv = flowvars_[flow_id];
        auto at = std::find_if(fv.begin(), fv.end(), [&](const auto& x) { return x.first == v.name; });
        if (at != fv.end())
          at->second = v.value;
        else if (fv.size() < 64)  // (bounded: a flow keeps 64 at most)
          fv.emplace_back(v.name, v.value);
      }
    }
  }
  // A rule's priority: its own, else its classtype's, else 3 (Suricata's).
  int priority(const ids::Rule& r) const {
    if (r.priority) return r.priority;
    const ids::Classifications::Class* cls = r.classtype.empty() ? nullptr : shared_->classes.find(r.classtype);
    return cls ? cls->priority : 3;
  }
  // An alert: of packet pkt, or (pkt null) of flow entry `end`'s stream at its end.
  void log(const ids::Rule& r, const ids::PacketInfo& p, uint64_t ts, bool blocked, const IdsAppLayer::TxHit* tx,
           const Packet* pkt, uint64_t flow_id, uint32_t end = 0) {
    uint64_t pcap_cnt = pkt ? pkt->source_index() : 0;
    // category and severity from classification.config, as Suricata
    const ids::Classifications::Class* cls = r.classtype.empty() ? nullptr : shared_->classes.find(r.classtype);
    std::string category = cls ? cls->description : r.classtype;
    int prio = priority(r);
    std::string proto = proto_name(p.proto);
    if (!fastlog_file_.empty()) {
      auto ep = [&](const ids::Addr& a, uint16_t port) {
        return p.has_ports ? fmt::format("{}:{}", addr_text(a), port) : addr_text(a);
      };
      fast_buf_ +=
          fmt::format("{}  {}[**] [{}:{}:{}] {} [**] [Classification: {}] [Priority: {}] {{{}}} {} -> {}\n",
                      time_text(ts, false), blocked ? "[Drop] " : "", r.gid, r.sid, r.rev, r.msg,
                      category.empty() ? "(null)" : category, prio, proto, ep(p.src, p.sport), ep(p.dst, p.dport));
      ++fast_lines_;
    }
    if (eve(kEveAlert)) {
      // (written field by field: the text nlohmann::json would give, at a
      // fraction of its cost; the rarer parts come as json values)
      JsonRecord& j = rec_;
      j.clear();
      j.str("timestamp", time_text(ts, true));
      if (flow_id) j.num("flow_id", flow_id);
      if (pcap_cnt) j.num("pcap_cnt", pcap_cnt);
      j.str("pkt_src", pkt ? pkt_src(pkt) : "stream (flow timeout)");
      if (pkt && (pkt->anno().flags & Anno::kTunnelInner)) {
        nlohmann::json t;
        tunnel_json(pkt, t);
        j.merge(t);
      }
      j.str("event_type", "alert");
      if (!p.no_l3) {  // (a packet whose IP header could not be read has none, as Suricata's)
        j.str("src_ip", addr_text(p.src));
        j.str("dest_ip", addr_text(p.dst));
        j.num("ip_v", p.src.v6 ? 6 : 4);
        j.str("proto", proto);
      }
      ports_json(p, j);
      if (p.has_flow) j.str("direction", p.dir == 0 ? "to_server" : "to_client");
      JsonRecord& al = alert_rec_;
      al.clear();
      al.str("action", blocked ? "blocked" : "allowed");
      al.num("gid", r.gid);
      al.num("signature_id", r.sid);
      al.num("rev", r.rev);
      al.str("signature", r.msg);
      al.str("category", category);
      al.num("severity", prio);
      if (const char* a = ids::app_name(p.app)) j.str("app_proto", a);
      if (tx && !tx->stream) {
        j.num("tx_id", tx->tx_id);
        if (tx->app == ids::kAppSmtp)  // (its smtp and email objects)
          j.merge(tx->meta);
        else
          j.json(ids::app_name(tx->app), tx->meta);
      } else if (const IdsAppLayer::GuessedTx* g =
                     guess_tx_ && pkt && p.has_flow && !end ? app_.guess_tx(pkt->anno().flow, p.dir) : nullptr) {
        j.num("tx_id", g->tx_id);
        if (p.proto != 17) j.raw("tx_guessed", "true");
        j.json("dns", g->meta);
      }
      if (eve_verdict_) j.raw("verdict", fmt::format("{{\"action\":\"{}\"}}", verdict_));
      vlan_json(p.vlan_layers, p.vlan, j);
      if (std::string d, sm; eve_ethernet_ && pkt && macs(pkt, d, sm))
        j.raw("ether", fmt::format("{{\"dest_mac\":\"{}\",\"src_mac\":\"{}\"}}", d, sm));
      if (eve_packet_ && pkt) {
        nlohmann::json pj;
        packet_json(pkt, pj);
        j.merge(pj);
      }
      if (eve_payload_ || eve_printable_) {  // Suricata's: the packet's payload, or a stream match's bytes
        bool stream = tx && tx->stream;
        std::string_view pl = stream
                                  ? std::string_view(tx->window)
                                  : std::string_view(reinterpret_cast<const char*>(p.payload), p.payload ? p.plen : 0);
        pl = pl.substr(0, 4096);  // (Suricata's payload-buffer-size)
        if (eve_payload_) {
          std::string b64(4 * ((pl.size() + 2) / 3) + 1, '\0');
          b64.resize(size_t(EVP_EncodeBlock(reinterpret_cast<unsigned char*>(b64.data()),
                                            reinterpret_cast<const unsigned char*>(pl.data()), int(pl.size()))));
          j.str("payload", b64);
        }
        if (eve_printable_) {
          std::string t(pl);
          for (char& c : t)
            if (!std::isprint(static_cast<unsigned char>(c)) && c != '\n' && c != '\r') c = '.';
          j.str("payload_printable", t);
        }
        j.num("stream", stream ? 1 : 0);
      }
      if (xff_mode_ && tx && tx->tx) {
        std::string ip = xff_address(*tx->tx);
        if (!ip.empty() && xff_mode_ == 1) al.str("xff", ip);
        if (!ip.empty() && xff_mode_ == 2) j.str(p.has_flow && p.dir == 1 ? "dest_ip" : "src_ip", ip);
      }
      if (cur_vars_ && !cur_vars_->empty()) {  // the alert's own captures (Suricata's alert context)
        nlohmann::json ctx = nlohmann::json::object();
        for (const ids::Captured& v : *cur_vars_)
          if (v.scope == ids::PcreCapture::Alert) ctx[v.name] = v.value;
        if (!ctx.empty()) al.raw("context", eve_json(ctx));
      }
      j.object("alert", al);
      // the flow as of this packet (Suricata's alert flow object)
      uint32_t fid = pkt ? pkt->anno().flow : end;
      if (p.has_flow && mgr_ && fid) {
        const flow::Flow& f = mgr_->table().flow(fid);
        const auto* fs = reinterpret_cast<const FlowState*>(mgr_->table().state(fid) + state_off_);
        JsonRecord& fl = flow_rec_;
        fl.clear();
        fl.num("pkts_toserver", fs->pkts[0]);
        fl.num("pkts_toclient", fs->pkts[1]);
        fl.num("bytes_toserver", fs->frame_bytes[0]);
        fl.num("bytes_toclient", fs->frame_bytes[1]);
        fl.str("start", time_text(f.first_ns, true));
        flow_ends(f, true, fl);
        j.object("flow", fl);
        nlohmann::json tr;
        traffic_json(fs->bits, tr);
        j.merge(tr);
      }
      const FlowState* mfs = p.has_flow && mgr_ && fid
                                 ? reinterpret_cast<const FlowState*>(mgr_->table().state(fid) + state_off_)
                                 : nullptr;
      if (std::string m = vars_metadata(flow_id, true, mfs); !m.empty()) j.raw("metadata", m);
      eve_scratch_.clear();
      j.write(eve_scratch_);
      eve_scratch_.push_back('\n');
      eve_put(kEveAlert, eve_scratch_);
    }
  }
  static io::SharedRegistry<io::OutFile>& registry() {
    static io::SharedRegistry<io::OutFile> r;
    return r;
  }
  // Whether this is the last copy of the element on this file to stop.
  // Called under the shared file's lock.
  bool last_copy(const std::string& file) {
    static std::map<std::string, int> stopped;
    int& n = stopped[file];
    if (++n < worker().nworkers()) return false;
    stopped.erase(file);
    return true;
  }

  static constexpr uint8_t kEveAlert = 1, kEveDrop = 2, kEveFlow = 4, kEveHttp = 8, kEveFiles = 16, kEveDns = 32,
                           kEveTls = 64, kEveStats = 128;
  static constexpr uint16_t kEveSip = 256, kEveSsh = 512, kEveAnomaly = 1024, kEveFtp = 2048, kEveSmtp = 4096;
  static constexpr uint16_t kEveNetflow = 8192, kEveMetadata = 16384;
  bool eve(uint16_t type) const { return eve_types_ & type; }
  // An EVE output: its file and the record types it takes.
  struct EveOutput {
    std::string path;
    uint16_t types = 0;
    io::SharedFile<io::OutFile> file;
    std::string buf;     // the batch's records
    uint64_t lines = 0;  // (as many)
  };
  // The type bits of names (`arg` names the argument in errors).
  static uint16_t eve_type_bits(Args& a, const char* arg, const std::vector<std::string_view>& names) {
    static const std::pair<const char*, uint16_t> kTypes[] = {
        {"alert", kEveAlert}, {"drop", kEveDrop},      {"flow", kEveFlow},       {"http", kEveHttp},
        {"files", kEveFiles}, {"fileinfo", kEveFiles}, {"dns", kEveDns},         {"tls", kEveTls},
        {"stats", kEveStats}, {"sip", kEveSip},        {"ssh", kEveSsh},         {"anomaly", kEveAnomaly},
        {"ftp", kEveFtp},     {"smtp", kEveSmtp},      {"netflow", kEveNetflow}, {"metadata", kEveMetadata}};
    uint16_t bits = 0;
    for (std::string_view t : names) {
      auto it = std::find_if(std::begin(kTypes), std::end(kTypes), [&](const auto& k) { return t == k.first; });
      if (it == std::end(kTypes))
        a.fail(
            fmt::format("{}: unknown type '{}' (alert, drop, flow, netflow, http, files, dns, tls, sip, ssh, ftp, "
                        "smtp, anomaly, stats, metadata)",
                        arg, t));
      bits |= it->second;
    }
    return bits;
  }
  // Adds an output of path for the types.
  void add_eve(Args& a, const std::string& path, uint16_t types) {
    for (const auto& e : eves_)
      if (e->path == path) a.fail(fmt::format("EVE_OUTPUTS: '{}' is an EVE output already", path));
    auto out = std::make_unique<EveOutput>();
    out->path = path;
    out->types = types;
    eves_.push_back(std::move(out));
  }
  // A record (a line) of type for the outputs that take it.
  void eve_put(uint16_t type, const std::string& line) {
    for (auto& e : eves_)
      if (e->types & type) {
        if (!pcap_suffix_.empty() && line.size() >= 2) {  // (the record's closing "}\n" replaced)
          e->buf.append(line, 0, line.size() - 2);
          e->buf += pcap_suffix_;
        } else {
          e->buf += line;
        }
        ++e->lines;
      }
  }

  std::string rules_file_, vars_file_, class_file_, threshold_file_, fastlog_file_;
  std::vector<std::unique_ptr<EveOutput>> eves_;
  uint16_t eve_types_ = 0;         // the types any output takes
  bool drop_all_ = false;          // EVE_DROP_FLOWS all: every dropped packet of a flow logged
  bool decode_anomalies_ = false;  // EVE_ANOMALY_DECODE: a packet's decoder events as anomaly records
  bool drop_alerts_ = false;       // EVE_DROP_ALERTS: the dropping rule in drop records
  std::string eve_scratch_;        // an alert record's line
  std::string pcap_suffix_;        // EVE_PCAP_FILENAME: the member ending each record (empty: none)
  bool strict_ = false, quiet_ = false, ips_ = false, suricata_vars_ = false;
  FlowIPManager* mgr_ = nullptr;
  uint32_t state_off_ = 0;
  uint16_t r_drop_ = 0;
  Loc loc_;
  ids::EngineKind kind_ = ids::EngineKind::Builtin;
  bool auto_engine_ = false;  // ENGINE auto: the faster prefilter, measured at load
  std::shared_ptr<IdsShared> shared_;
  ids::Engine engine_;
  std::vector<uint32_t> hits_;
  IdsAppLayer app_;
  Stat tagged_;              // packets a tag covered
  bool eve_tagged_ = false;  // tagged packets become EVE packet records
  bool app_on_ = false;
  std::array<uint8_t, 4> action_order_ = {0, 1, 2, 3};
  bool stream_payload_ = true;  // TCP payload rules read the reassembled stream (STREAM_PAYLOAD)
  bool eve_verdict_ = false, eve_ethernet_ = false, eve_packet_ = false;
  bool eve_payload_ = false, eve_printable_ = false;
  struct TrafficBit {
    uint16_t bit;
    const char* kind;  // "id" or "label"
    std::string value;
  };
  std::vector<TrafficBit> traffic_bits_;
  std::vector<std::pair<uint16_t, std::string>> flowbit_names_, flowint_names_;  // (by bit or variable)
  // The traffic object of a flow's tagging flowbits, into j (none set: none).
  void traffic_json(const uint64_t* bits, nlohmann::json& j) const {
    for (const TrafficBit& t : traffic_bits_)
      if (bits[t.bit >> 6] >> (t.bit & 63) & 1) j["traffic"][t.kind].push_back(t.value);
  }
  uint8_t xff_mode_ = 0;  // X-Forwarded-For in alerts: 0 no, 1 extra-data, 2 overwrite
  bool xff_last_ = true;  // reverse deployment: the last address (forward: the first)
  std::string xff_header_ = "X-Forwarded-For";
  const char* verdict_ = "alert";  // the packet being logged's verdict (EVE_VERDICT)
  std::vector<IdsAppLayer::TxHit> tx_hits_;
  std::vector<std::pair<uint32_t, const IdsAppLayer::TxHit*>> all_;
  std::vector<std::vector<ids::Captured>> hit_vars_;           // all_'s captures (when captures_)
  bool captures_ = false;                                      // some rule's pcre captures
  const std::vector<ids::Captured>* cur_vars_ = nullptr;       // the alert being logged's
  std::vector<std::pair<std::string, std::string>> pkt_vars_;  // the packet's pktvars
  // flowvars by EVE flow id (erased with the flow)
  std::unordered_map<uint64_t, std::vector<std::pair<std::string, std::string>>> flowvars_;
  std::vector<const std::string*> actions_;  // all_'s actions after rate filters
  std::string fast_buf_;
  JsonRecord rec_, alert_rec_, flow_rec_;  // an alert record's, kept for their buffers
  uint64_t fast_lines_ = 0;
  io::SharedFile<io::OutFile> fast_;
  static constexpr uint32_t kNoBlock = UINT32_MAX;
  uint32_t range_ = 0, block_ = 0, stream_block_ = kNoBlock, regex_block_ = kNoBlock, alert_bit_ = 0;
  // SHOAL_DEVICE_REGEX=0: the host answers every pcre (for A/B runs)
  bool device_regex_ = [] {
    const char* e = std::getenv("SHOAL_DEVICE_REGEX");
    return !e || std::string_view(e) != "0";
  }();
  Stat device_regex_answers_;
  int32_t ip_at_ = -1;  // where an earlier step of the chain checked the IP header
  offload::TableMirror mirror_, stream_mirror_, regex_mirror_;
  Stat inspected_, uninspected_, alerts_, alerted_packets_, verified_, overflows_, log_lost_;
  Stat discarded_, suppressed_;  // matches over packet-alert-max; thresholded or noalert
  uint32_t alert_max_ = 15;      // PACKET_ALERT_MAX: alerts logged per packet (Suricata's packet-alert-max)
  bool guess_tx_ = false;        // GUESS_APPLAYER_TX
  // Offloaded scan: chunk bytes (0: a thread per packet), the aggregate's
  // longest payload, the longest fast pattern (of the database it was
  // measured for), aggregates scanned in chunks.
  uint32_t scan_chunk_ = 128, longest_ = 1;
  const void* longest_for_ = nullptr;
  Stat chunked_;
  Stat passed_, dropped_, flow_passed_, flow_dropped_, flow_bypassed_;
  Midstream midstream_ = Midstream::Ignore;
  bool midstream_auto_ = false;  // MIDSTREAM_POLICY auto
  bool ssh_bypass_ = false;      // SSH_ENCRYPTION bypass
  std::string data_dir_;         // DATA_DIR: datasets' save and state files
  bool midstream_now_ = false;   // the packet being looked at met the midstream policy's drop
  bool eve_exception_ = false;   // flow records name the exception policy applied
  std::array<uint64_t, 5> midstream_applied_{};
  AppError app_error_ = AppError::Ignore;
  bool app_error_auto_ = false;                  // APP_ERROR_POLICY auto
  std::array<uint64_t, 7> app_error_applied_{};  // packets each app-layer error policy met
  Stat app_error_dropped_;
  bool drop_invalid_ = false;  // STREAM_DROP_INVALID, inline IPS only
  Stat stream_error_dropped_;
  enum PktStat {
    kPkts,
    kBytes,
    kInvalid,
    kIpv4,
    kIpv6,
    kTcp,
    kUdp,
    kSctp,
    kIcmpv4,
    kIcmpv6,
    kIpv4InIpv4,
    kIpv6InIpv4,
    kIpv4InIpv6,
    kIpv6InIpv6,
    kEthernet,
    kChdlc,
    kRaw,
    kNull,
    kSll,
    kSll2,
    kPpp,
    kNsh,
    kPktStats
  };
  std::array<uint64_t, kPktStats> pkt_stats_{};
  std::array<uint64_t, ids::kDecodeEventCount> event_stats_{};
  std::array<uint8_t, ids::kDecodeEventCount> event_counts_{};  // the packet's events' occurrences (rules_view)
  std::map<std::string, uint64_t> flow_stats_;
  uint64_t started_ns_ = monotonic_ns();
};
#define SHOAL_IDS_ARGS                                                                                                 \
  {"RULES", "file", "the rules"}, {"VARS", "file", "variables (Suricata YAML vars, or Snort var lines)"},              \
      {"SURICATA_VARS", "bool",                                                                                        \
       "first Suricata's default variables (those of the suricata.yaml it ships: HOME_NET, EXTERNAL_NET, HTTP_PORTS, " \
       "...), which VARS adds to or overrides (default false; shoal ids sets it)"},                                    \
      {"ENGINE", "auto|hyperscan|builtin",                                                                             \
       "the prefilter; auto (the default when Hyperscan is built in) times both over traffic-like bytes at load "      \
       "and keeps the faster (handler engine)"},                                                                       \
      {"FASTLOG", "file", "fast.log alert lines (appended)"}, {"EVE", "file", "EVE JSON records (appended)"},          \
      {"EVE_TYPES", "list",                                                                                            \
       "the EVE event types written, of alert, drop, flow, http, files, dns, tls, sip, ssh, ftp, smtp, anomaly and "   \
       "stats (default these), netflow (a record per direction of each flow) and metadata (a packet whose rules' "     \
       "pcres captured pktvars)"},                                                                                     \
      {"EVE_DROP_FLOWS", "word",                                                                                       \
       "drop records of a dropped flow: start (once a direction, and every packet a rule drops; Suricata's default) "  \
       "or all"},                                                                                                      \
      {"EVE_DROP_ALERTS", "bool", "drop records name the rule that dropped the packet (default false)"},               \
      {"EVE_OUTPUTS", "string",                                                                                        \
       "more EVE files, each with its types, as Suricata's eve-log outputs: \"FILE TYPE...; FILE TYPE...\" (a record " \
       "goes to every output that takes its type)"},                                                                   \
      {"ACTION_ORDER", "list",                                                                                         \
       "Suricata's action-order: pass, drop, reject and alert in the order wanted (default that)"},                    \
      {"EVE_VERDICT", "boolean", "alerts carry the packet's verdict (Suricata's verdict: yes; default false)"},        \
      {"EVE_ETHERNET", "boolean",                                                                                      \
       "alerts and other packets' records (anomaly, drop) carry the Ethernet addresses (Suricata's ethernet: yes; "    \
       "default false)"},                                                                                              \
      {"EVE_PCAP_FILENAME", "string",                                                                                  \
       "every EVE record ends with pcap_filename, this (Suricata's eve-log pcap-file: true, reading a capture)"},      \
      {"XFF_MODE", "string",                                                                                           \
       "the HTTP request's X-Forwarded-For in alerts (Suricata's xff): extra-data (alert.xff) or overwrite (the "      \
       "client's address replaced); default none"},                                                                    \
      {"XFF_DEPLOYMENT", "string", "reverse (the header's last address; default) or forward (its first)"},             \
      {"XFF_HEADER", "string", "the header read (default X-Forwarded-For)"},                                           \
      {"EVE_PAYLOAD", "boolean",                                                                                       \
       "alerts carry the payload, base64 (a stream rule's: the stream bytes it was found in), and 'stream' (0 or 1) "  \
       "(Suricata's alert payload: yes; default false)"},                                                              \
      {"EVE_PAYLOAD_PRINTABLE", "boolean",                                                                             \
       "alerts carry the payload as text, bytes other than printable ones, CR and LF as '.' (Suricata's "              \
       "payload-printable; default false)"},                                                                           \
      {"EVE_PACKET", "boolean",                                                                                        \
       "alerts carry the packet as read, base64, and its link type (Suricata's alert packet: yes; default false)"},    \
      {"EVE_ANOMALY_STREAM", "boolean",                                                                                \
       "stream events (stream-event) become EVE anomaly records (Suricata's anomaly types.stream; default false)"},    \
      {"EVE_ANOMALY_DECODE", "boolean",                                                                                \
       "a packet's decoder events (decode-event) become EVE anomaly records, one an event, type decode (packet for "   \
       "one whose IP header is not whole), event decoder.NAME (Suricata's anomaly types.decode; default false)"},      \
      {"STREAM_DEPTH", "integer",                                                                                      \
       "bytes of each direction's stream reassembled, parsed and inspected (Suricata's stream.reassembly.depth; "      \
       "0: all; default 1048576)"},                                                                                    \
      {"HOST_OS_POLICY", "string",                                                                                     \
       "how overlapping TCP data is resolved, by each direction's receiver: 'POLICY NET...; ...' (Suricata's "         \
       "host-os-policy; a policy is first, last or a system's: bsd, bsd-right, linux, old-linux, solaris, "            \
       "old-solaris, hpux10, hpux11, irix, macos, windows, vista, windows2k3; the longest prefix holding the "         \
       "receiver "                                                                                                     \
       "wins; default bsd, Suricata's)"},                                                                              \
      {"EVE_TAGGED_PACKETS", "boolean",                                                                                \
       "packets a tag rule covers become EVE packet records (Suricata's alert tagged-packets: yes; default false)"},   \
      {"DNS_PORTS", "string", "the ports DNS is looked for on, either side (default 53; Suricata's detection-ports)"}, \
      {"EVE_DNS_VERSION", "integer",                                                                                   \
       "the dns records' format, Suricata's eve-log dns version: 3 (default, one record per message) or 2 (one per "   \
       "question of a request, an answer record per response)"},                                                       \
      {"FILE_HASHES", "string",                                                                                        \
       "the digests every fileinfo record shows: md5, sha1, sha256 (Suricata's files force-hash; default none: those " \
       "the rules' filemd5, filesha1 and filesha256 read are computed and shown anyway)"},                             \
      {"HTTP_DECOMPRESS_LAYERS", "integer",                                                                            \
       "nested Content-Encodings of HTTP bodies undone (Suricata's response-body-decompress-layer-limit; default 2)"}, \
      {"HTTP_REQUEST_BODY_LIMIT", "bytes",                                                                             \
       "the bytes of each request body inspected and tracked (Suricata's request-body-limit; default 100 KiB; at "     \
       "most 64 MiB)"},                                                                                                \
      {"HTTP_RESPONSE_BODY_LIMIT", "bytes",                                                                            \
       "the bytes of each response body inspected and tracked (Suricata's response-body-limit; default 100 KiB)"},     \
      {"STRICT", "boolean", "fail on the first unusable rule (default false)"},                                        \
      {"PACKET_ALERT_MAX", "integer",                                                                                  \
       "alerts logged per packet, 1-255: the first matches in the rules' order; the others counted "                   \
       "(alerts_discarded, Suricata's detect.alert_queue_overflow), their actions applied (Suricata's "                \
       "packet-alert-max; default 15)"},                                                                               \
      {"GUESS_APPLAYER_TX", "boolean",                                                                                 \
       "a packet or stream rule's alert is given the transaction Suricata would guess (detect.guess-applayer-tx: "     \
       "the first one of the packet's direction not yet inspected, when it is the only one live that way; DNS's; "     \
       "tx_id, tx_guessed and its dns object; default false)"},                                                        \
      {"STREAM_TX_LOG_LIMIT", "integer",                                                                               \
       "alerts a transaction is guessed for at most, 1-255 (Suricata's detect.stream-tx-log-limit; default 4)"},       \
      {"STREAM_DROP_INVALID", "boolean",                                                                               \
       "Suricata's stream.drop-invalid: an inline IPS (IPS true, STREAM_INSPECT arrival) drops a TCP packet that "     \
       "fails a session check (a stream event: a stale timestamp, a handshake packet the wrong way or with wrong "     \
       "numbers, a SYN on an established connection), drop reason \"stream error\" (default true). The checks run "    \
       "where the IDS follows TCP streams: stream, application-layer or stream-event rules, or application logs"},     \
      {"MIDSTREAM_POLICY", "word",                                                                                     \
       "Suricata's stream.midstream-policy, for TCP connections seen without their handshake: ignore (default), "      \
       "pass-flow (no detection; parsed and logged when the flow layer picks connections up midstream), bypass, "      \
       "drop-flow or reject (IPS, without midstream pick-up: the flow is dropped; reject sends nothing more), auto "   \
       "(drop-flow in IPS mode without pick-up, else ignore)"},                                                        \
      {"APP_ERROR_POLICY", "word",                                                                                     \
       "Suricata's app-layer.error-policy, for a packet whose data a parser could not take (a SIP message the wrong "  \
       "way or that does not parse, a DNS message that does not parse, a TLS record that cannot be read): ignore "     \
       "(default), drop-packet or pass-packet "                                                                        \
       "(the packet is dropped (IPS) or goes on, not inspected), drop-flow or reject (IPS: it and the flow's later "   \
       "packets are dropped), pass-flow (the flow is not inspected any more), bypass, auto (drop-flow in IPS mode, "   \
       "else ignore); drops are ignored in IDS mode"},                                                                 \
      {"DATA_DIR", "directory",                                                                                        \
       "where datasets' relative save and state files are (Suricata's data directory; default the rules file's)"},     \
      {"SSH_ENCRYPTION", "word",                                                                                       \
       "Suricata's ssh encryption-handling: track-only (default) or full (the parser stops at NEWKEYS; packet rules "  \
       "go on), or bypass (once both sides sent NEWKEYS, the flow's packets are neither inspected nor parsed: flow "   \
       "state bypassed)"},                                                                                             \
      {"EVE_EXCEPTION_POLICY", "boolean",                                                                              \
       "flow records name the exception policy applied to the flow (Suricata's flow: exception-policy: yes)"},         \
      {"IPS", "boolean",                                                                                               \
       "drop and reject rules drop packets, and their flows (default false: alerts only); with STREAM_INSPECT "        \
       "arrival (inline), TCP data the stream already has, held or not yet acknowledged, is normalized in the "        \
       "packets: a segment's bytes are set to the stream's (the checksum updated), so the receiver gets what was "     \
       "inspected, and stream rules are inspected again on a retransmission's bytes, as Suricata's stream.inline"},    \
      {"CLASSIFICATION", "file",                                                                                       \
       "classification.config (classtype descriptions and priorities; the standard table is built in)"},               \
      {"THRESHOLD", "file", "threshold.config: threshold, event_filter, suppress and rate_filter lines"},              \
      {"STREAM_INSPECT", "word",                                                                                       \
       "when stream rules and the application layer see a direction's data: arrival (default; on the packet that "     \
       "completed it, as Suricata inline) or acked (Suricata's IDS mode, what shoal ids uses unless stream.inline: "   \
       "stream rules once the data's receiver acknowledged it, on that direction's next packet, at a hole or at the "  \
       "flow's end; the parsers get the data on the packet that acknowledged it, a reset's sender's at once, all "     \
       "once both sides closed, and a transaction's rules are inspected on packets of their direction: the "           \
       "request's on the client's next packet, the response's on the server's)"},                                      \
      {"STREAM_PAYLOAD", "boolean",                                                                                    \
       "TCP payload rules read the reassembled stream where a packet's data joined it (the data since the last "       \
       "inspection, across segments; Suricata's inspection), and packets otherwise; false: every payload rule reads "  \
       "packets, as Snort 2 (default true; needs a FlowIPManager)"},                                                   \
      {"STREAM_WINDOW", "bytes",                                                                                       \
       "stream rules (flow:only_stream, tcp-stream) see each direction's new data with this many bytes before it, so " \
       "a match across segments is found when it fits in them (default 2048)"},                                        \
      {"STREAM_MEMCAP", "bytes",                                                                                       \
       "the data all flows may hold back waiting for its acknowledgement (STREAM_INSPECT acked; Suricata's stream "    \
       "memcap): past it, new data is inspected as it comes (default 64 MiB per worker)"},                             \
      {"SCAN_CHUNK", "bytes",                                                                                          \
       "offloaded: payloads longer than this are scanned by several device threads, one per chunk of this many "       \
       "bytes plus the longest pattern less one (GASPP's parallel scan; default 128; 0: one thread per packet)"},      \
  {                                                                                                                    \
    "QUIET", "boolean", "no load summary on stderr (default false)"                                                    \
  }
#define SHOAL_IDS_HANDLERS                                                                                           \
  {"rules", "r", "rules loaded"}, {"skipped", "r", "rules skipped"},                                                 \
      {"problems", "r", "why each skipped rule was skipped (file:line: sid: reason)"},                               \
      {"patterns", "r", "distinct fast patterns"}, {"engine", "r", "the prefilter, its size and port groups"},       \
      {"regex", "r",                                                                                                 \
       "how many pcres compile to DFAs (the subset a device can run), and why the others do "                        \
       "not; which engine answers the pcres that need only a yes/no (Hyperscan, the DFA, "                           \
       "PCRE2), and how many rules without fast pattern a pcre prefilters"},                                         \
      {"inspected", "r", "packets matched against the rules"},                                                       \
      {"uninspected", "r", "packets that were not IP (sent on uninspected)"}, {"alerts", "r", "alerts raised"},      \
      {"log_lost", "r", "alert lines that could not be written (the run fails)"},                                    \
      {"alerted_packets", "r", "packets with at least one alert"},                                                   \
      {"alerts_discarded", "r", "matches not logged: over PACKET_ALERT_MAX on their packet"},                        \
      {"alerts_suppressed", "r", "matches not logged: thresholded, suppressed or noalert"},                          \
      {"passed", "r", "packets a pass rule matched (their flows are passed)"},                                       \
      {"dropped", "r", "packets a drop or reject rule dropped (IPS)"},                                               \
      {"flow_passed", "r", "later packets of passed flows, not inspected"},                                          \
      {"flow_dropped", "r", "later packets of dropped flows, dropped uninspected (IPS)"},                            \
      {"app_error_dropped", "r", "packets dropped for an app-layer error (APP_ERROR_POLICY, IPS)"},                  \
      {"stream_error_dropped", "r", "packets dropped for failing a TCP session check (STREAM_DROP_INVALID)"},        \
      {"flow_bypassed", "r",                                                                                         \
       "packets of flows bypassed (midstream policy, SSH encryption), not inspected nor parsed"},                    \
      {"threshold_untracked", "r", "threshold matches not tracked (the table of 65,536 keys was full): they alert"}, \
      {"http_connections", "r", "TCP connections detected as HTTP"},                                                 \
      {"http_transactions", "r", "HTTP transactions parsed"},                                                        \
      {"http_parse_errors", "r", "HTTP directions libhtp gave up on"},                                               \
      {"http_gaps", "r", "HTTP directions given up at a stream gap"},                                                \
      {"http_tx_limit", "r", "HTTP connections stopped at 512 live transactions"},                                   \
      {"http_body_undecoded", "r", "gzip'd request bodies cut where decoding broke (or a bomb)"},                    \
      {"stream_depth_reached", "r", "stream directions past the 1 MiB inspected (not parsed further)"},              \
      {"stream_rejected", "r",                                                                                       \
       "TCP segments the session checks found wrong (a stream event: a stale timestamp, a handshake packet the "     \
       "wrong way or with wrong numbers, a SYN on an established connection...): the stream did not take them"},     \
      {"stream_inspections", "r", "stream windows matched against the stream rules"},                                \
      {"stream_bytes", "r", "new stream bytes the stream rules were matched against"},                               \
      {"stream_matches", "r", "stream rules that matched (before thresholds)"},                                      \
      {"stream_memory", "r", "bytes held now for stream rules (windows, and data waiting for its acknowledgement)"}, \
      {"stream_memcap_inspections", "r",                                                                             \
       "stream inspections made before the acknowledgement because the data waiting was over STREAM_MEMCAP"},        \
      {"stream_device_scans", "r",                                                                                   \
       "offloaded: segments whose stream-rule patterns the device found (GASPP's stream-aware matching; the host "   \
       "scanned only the seam with the bytes before)"},                                                              \
      {"stream_host_scans", "r",                                                                                     \
       "pieces of streams the host scanned for the stream rules' patterns (not offloaded, a device list over 8 "     \
       "patterns, data delivered otherwise than its segment came)"},                                                 \
      {"stream_reinspections", "r",                                                                                  \
       "IPS, inline: retransmitted stream bytes inspected again on their packet (as Suricata's inline inspection)"}, \
      {"stream_held_inspections", "r",                                                                               \
       "IPS, inline: segments held past a hole inspected with the held data before them (a drop rule stops the "     \
       "packet that completes its match, before the hole fills or becomes a gap)"},                                  \
      {"stream_normalized", "r",                                                                                     \
       "IPS, inline: TCP segments whose bytes were set to those the stream already had (held, or delivered and not " \
       "yet acknowledged: the receiver gets what was inspected; the checksum is updated)"},                          \
      {"stream_normalized_bytes", "r", "the bytes they changed"},                                                    \
      {"stream_overwritten", "r",                                                                                    \
       "delivered stream bytes a retransmission won by the receiver's overlap policy (HOST_OS_POLICY; what was "     \
       "still uninspected takes them)"},                                                                             \
      {"dns_messages", "r", "DNS messages parsed (UDP, and TCP by port 53)"},                                        \
      {"dns_malformed", "r", "DNS messages with sections that could not be read"},                                   \
      {"tls_connections", "r", "TCP connections detected as TLS"},                                                   \
      {"tls_anomalies", "r", "TLS directions given up (a record that cannot be TLS, a message over its bound)"},     \
      {"verified", "r", "candidate rules verified"},                                                                 \
      {"device_overflows", "r",                                                                                      \
       "packets with more distinct fast patterns than a device list holds (15), rescanned "                          \
       "on the CPU"},                                                                                                \
      {"device_regex", "r",                                                                                          \
       "offloaded: yes/no pcre answers the device gave (the candidates' expressions as DFAs, run after the scan; "   \
       "SHOAL_DEVICE_REGEX=0 leaves them to the host)"},                                                             \
  {                                                                                                                  \
    "offload_uploads", "r", "copies of the automaton made on a device"                                               \
  }

SHOAL_OFFLOADABLE_ELEMENT(
    IDSMatcher,
    SHOAL_GPU_FORM(.name = "GPUIDSMatcher", .summary = "IDSMatcher with the payload scan on the device (Snap form)",
                   .description = "IDSMatcher with the same rules, engines and logs, its payload scan on the "
                                  "device: the Aho-Corasick DFA runs there and at completion the host verifies the "
                                  "candidate rules in packet order and logs the alerts. With ALERT b, packets with "
                                  "candidates get predicate bit b on the device, so later device elements can pass "
                                  "them by (SKIP b); the host then keeps the bit on packets that alert and clears it "
                                  "on the others, whose skipped steps run on the host at completion. After the "
                                  "Debatcher, a Dispatcher with b as its first argument takes the alerted packets "
                                  "(Snap's Figure 10).",
                   .args = {{"ALERT", "0-31", "the predicate bit of suspect (device) and alerted (host) packets"}},
                   .example = "... -> HostToDevice -> GPUCheckIPHeader(14) -> GPUIDSMatcher(RULES "
                              "local.rules, ALERT 7) -> GPUIPLookup(10.0.0.0/8 0, 0/0 1, SKIP 7) -> "
                              "DeviceToHost -> CompletionQueue -> Debatcher -> d :: Dispatcher(7, 0, 1);"),
    .name = "IDSMatcher", .ports = "1/1-2", .processing = "h/h",
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
        "Alerts go to FASTLOG (Suricata's fast.log lines) and EVE (event_type alert records). Rules run in "
        "Suricata's order (by action: pass, drop, reject, alert; then flowbits, flowint, hostbits and xbits setters "
        "before readers; then priority; then sid): a pass rule that matches stops inspection of the "
        "packet and its flow, with no alert; the first PACKET_ALERT_MAX matches of a packet are logged. With IPS true, "
        "drop and reject rules drop the packet and every later "
        "packet of its flow (alert action 'blocked'; output 1, or a counted drop 'ips-drop' without it), and a "
        "packet that only alerted goes on, on output 0; without "
        "IPS they only alert ('allowed'), and packets that alert leave on output 1 if it exists (log and "
        "forward: connect it on), the rest on output 0. With a FlowIPManager upstream, flow (established, "
        "not_established, to_server, to_client) and flowbits follow Suricata (TCP is established once the "
        "handshake completes; other protocols once both directions were seen); without one, rules that use them "
        "are refused. Flowbits named traffic/id/NAME and traffic/label/NAME tag the flow: alerts and flow records "
        "carry them as Suricata's traffic object. Frames may carry 802.1Q/QinQ tags; packets that are not IP pass "
        "uninspected (counted). "
        "Offloadable (NBA's form): after an "
        "OffloadBalancer, batches for the device have their payloads scanned there by the Aho-Corasick DFA "
        "(16-byte loads), the distinct fast patterns of each packet come back as a short list, and the "
        "host verifies those rules and logs in packet order; the chain ends here. The DFA is uploaded "
        "once per device for all workers, who share one compiled rule set.",
    .args = {SHOAL_IDS_ARGS},
    .handlers = {SHOAL_IDS_HANDLERS,
                 {"offload_chain", "r", "the device chain (NBA form)"},
                 {"offload_packets", "r", "packets that went through the chain"}},
    .example =
        "FromDump(in.pcap) -> CheckIPHeader(14) -> ids :: IDSMatcher(RULES rules/local.rules, "
        "FASTLOG fast.log, EVE eve.json); ids[0] -> ToDump(clean.pcap); ids[1] -> Discard;");

}  // namespace shoal
