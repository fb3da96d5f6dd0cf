// A suricata.yaml read with libyaml (Suricata's own YAML library) into a
// tree, for the settings `shoal ids` honours: action-order and the EVE
// alert options (verdict, packet, ethernet, xff), the dns records' version
// and the files' force-hash.
#pragma once
#include <string>
#include <vector>

namespace shoal::tool {

struct YamlNode {
  enum Kind { Scalar, Map, Seq } kind = Scalar;
  std::string value;
  std::vector<std::string> keys;  // a map's keys, and their values in seq; a sequence's items in seq
  std::vector<YamlNode> seq;
  // A map's value for key (null when none, or not a map).
  const YamlNode* get(const std::string& key) const;
  // Whether a scalar says yes (yes, true, on, 1).
  bool yes() const;
};

// Loads path; false (err says why, with the line) when it cannot be read or parsed.
bool load_yaml(const std::string& path, YamlNode& out, std::string& err);

// The settings of a suricata.yaml that shoal ids honours.
struct SuricataSettings {
  std::vector<std::string> action_order;  // empty: Suricata's default
  bool eve_verdict = false, eve_ethernet = false, eve_packet = false;
  bool eve_pcap_file = false;                               // eve-log's pcap-file: records name the capture read
  bool eve_payload = false, eve_payload_printable = false;  // alert: payload, payload-printable
  bool eve_tagged_packets = false;                          // alert: tagged-packets
  bool eve_anomaly_stream = false;
  bool eve_anomaly_decode = false;  // anomaly: types: decode                          // anomaly: types: stream
  std::string stream_depth;         // stream.reassembly.depth, in bytes (empty: not given)
  std::string host_os_policy;       // host-os-policy, as IDSMatcher's HOST_OS_POLICY (empty: none)
  int dns_version = 0;              // eve-log's dns version (0: not given)
  std::string xff_mode, xff_deployment, xff_header;  // alert's xff (mode empty: off)
  std::string midstream_policy;  // stream.midstream-policy, or the exception-policy master switch (empty: not set)
  std::string exception_policy;  // the exception-policy master switch (empty: not set)
  std::string app_error_policy;  // app-layer.error-policy (empty: not set)
  std::string midstream, async_oneside;  // stream.midstream, stream.async-oneside: "true", "false" (empty: not set)
  std::string stream_inline;             // stream.inline: "true", "false", "auto" (empty: not set; auto)
  std::string drop_invalid;              // stream.drop-invalid: "true", "false" (empty: not set; true)
  int packet_alert_max = 0;              // packet-alert-max (0: not set or invalid; Suricata's 15)
  bool guess_applayer_tx = false;        // detect.guess-applayer-tx
  int stream_tx_log_limit = 0;           // detect.stream-tx-log-limit (0: not set or invalid; Suricata's 4)
  std::string vlan_tracking;         // vlan.use-for-tracking: "true", "false" (empty: not set; Suricata's default on)
  bool eve_exception_policy = true;  // flow's exception-policy (Suricata 8 logs it unless told no)
  std::string ssh_encryption;        // app-layer.protocols.ssh.encryption-handling (empty: not set)
  std::vector<std::string> file_hashes;  // eve-log files' force-hash: md5, sha1, sha256
  // The enabled eve-log outputs: each one's file (relative to -l) and the
  // record types it takes that shoal ids writes (Suricata's others, smb or
  // mqtt..., have no records here).
  struct EveLog {
    std::string filename = "eve.json";
    std::vector<std::string> types;
  };
  std::vector<EveLog> eve_logs;
  std::string drop_flows;    // eve-log's drop: flows: start or all (empty: not given)
  bool drop_alerts = false;  // eve-log's drop: alerts
};
SuricataSettings suricata_settings(const YamlNode& root);

}  // namespace shoal::tool
