// IDSMatcher's application layer, per worker: each TCP connection's streams
// reassembled in order (flow::Reassembler), the protocol detected from its
// first bytes, HTTP parsed by libhtp (flow::HttpConn), and the rules that
// read transaction buffers matched as each transaction progresses, on the
// packet whose data completed it. A rule alerts at most once per
// transaction. Transactions and files, as they end, become log records
// (Suricata's http and fileinfo events) when logging is on.
#pragma once
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>
#include <vector>

#include "shoal/elements/flow/flowipmanager.hh"
#include "shoal/flow/dns.hh"
#include "shoal/flow/ftp.hh"
#include "shoal/flow/http.hh"
#include "shoal/flow/reassembly.hh"
#include "shoal/flow/sip.hh"
#include "shoal/flow/smtp.hh"
#include "shoal/flow/ssh.hh"
#include "shoal/flow/tls.hh"
#include "shoal/ids/engine.hh"
#include "shoal/ids/stream_prefilter.hh"
#include "shoal/kernels/ids_scan.hh"

namespace shoal {

class IdsAppLayer : private flow::StreamSink {
 public:
  struct TxHit {
    uint32_t rule;
    const flow::HttpTx* tx;  // HTTP's: valid until the connection's next packet (null for DNS)
    nlohmann::json meta;     // the transaction's metadata, as Suricata adds it to alerts
    uint64_t tx_id = 0;
    uint16_t app = ids::kAppHttp;     // whose metadata (the alert's "http" or "dns" object)
    bool stream = false;              // a stream rule's match (no transaction)
    uint8_t dir = 0;                  // ... in this direction's stream
    std::string window;               // ... the stream bytes it was found in
    std::vector<ids::Captured> vars;  // what its pcres captured (pktvars, flowvars, alert context)
  };
  // A transaction, a file or a DNS message: an http, fileinfo or dns record.
  struct TxLog {
    enum Kind : uint8_t { Http, File, Dns, Tls, Sip, Ssh, Anomaly, Ftp, Smtp, SmtpFile };
    uint32_t flow;
    Kind kind;
    uint8_t dir;  // the file's or message's direction: 0 to the server, 1 to the client
    uint64_t tx_id;
    nlohmann::json meta;      // the transaction's http object, the message's dns object... (Smtp, SmtpFile:
                              // an object of the smtp and email objects)
    nlohmann::json fileinfo;  // File: Suricata's fileinfo object
  };
  struct Counters {
    flow::HttpCounters http;
    flow::TlsCounters tls;
    Stat dns_messages;       // DNS messages parsed (UDP and TCP)
    Stat dns_udp_messages;   // ... of them over UDP
    Stat dns_malformed;      // ... whose sections could not all be read
    Stat depth_reached;      // directions past the reassembly depth (not parsed further)
    Stat stream_gaps;        // holes in a stream its receiver acknowledged past (Suricata's tcp.reassembly_gap)
    Stat stream_rejected;    // TCP segments the session checks found wrong: the stream did not take them
    Stat sip_messages;       // SIP messages parsed (UDP and TCP)
    Stat sip_udp_messages;   // ... of them over UDP
    Stat sip_errors;         // ... messages the wrong way, or directions given up (not SIP, past bounds, a gap)
    Stat ftp_transactions;   // FTP commands (each a transaction)
    Stat smtp_transactions;  // SMTP transactions begun
  };
  IdsAppLayer();
  ~IdsAppLayer() override;
  // At configure: per-flow state in the flow layer.
  void reserve(FlowIPManager& mgr);
  // At initialize: the rules (may be null: logging only), and which
  // records are made.
  void init(std::shared_ptr<const ids::Database> db, bool log_http, bool log_files, bool log_dns, bool log_tls,
            bool log_sip, bool log_ssh, bool log_anomaly, bool log_ftp, bool log_smtp);
  // Flow `id` leaves the table: its streams and parser end (transactions
  // still open are logged as they are). With `at_end` (each direction's
  // view of the flow, as a packet of that direction would show it), the
  // stream rules are matched on the data its end delivers (held past a
  // hole): the hits go to end_hits().
  // dropped: the flow was dropped (IPS): nothing is inspected at its end
  // and what it left open is not logged.
  void release(uint32_t id, ids::PacketInfo* at_end = nullptr, bool dropped = false);
  std::vector<TxHit>& end_hits() { return end_hits_; }
  // Stream rules (ids::Rule::stream_only) see each direction's data in
  // order, as it is delivered: the new bytes with the `window` bytes before
  // them (a match that ends in the new bytes is found if it starts within
  // them); a hole starts the window over.
  void set_stream_window(uint32_t w) { stream_window_ = w; }
  // Suricata's IDS mode: a direction's data is inspected once its receiver
  // acknowledged it, on the direction's next packet (or at a hole or the
  // flow's end); otherwise on arrival.
  void set_stream_acked(bool on) { stream_acked_ = on; }
  static constexpr uint32_t kUnackedCap = 64 << 10;  // bytes a direction's stream waits for acknowledgement
  // The bytes all connections' directions may hold back waiting for an
  // acknowledgement (Suricata's stream memcap): past it, a connection's new
  // data is inspected as it comes, so what waits grows no further.
  void set_stream_memcap(uint64_t bytes) { memcap_ = bytes; }
  struct StreamStats {
    Stat inspections;         // stream windows matched against the stream rules
    Stat bytes;               // new stream bytes inspected
    Stat matches;             // stream rules that matched
    Stat memory;              // bytes held now for stream rules (windows and data waiting)
    Stat memcap_inspections;  // inspections made early because the data waiting was over the memcap
    Stat reinspections;       // inline: retransmitted stream bytes inspected again on their packet
    Stat held_inspections;    // inline: data held past a hole inspected on the segment that ends it
    Stat device_scans;        // pieces of streams whose patterns the device found (the host scanned the seam)
    Stat host_scans;          // pieces the host scanned (no device scan, a list overflowed, a piece not
                              // delivered as its packet came)
  };
  const StreamStats& stream_stats() const { return ss_; }
  // The records made since the last call (the caller writes and clears them).
  std::vector<TxLog>& logs() { return logs_; }
  // Suricata's http object of a transaction (alerts, http and fileinfo records).
  static nlohmann::json http_json(const flow::HttpTx& tx);
  // Suricata's dns object (version 3) of a message (alerts and dns records).
  static nlohmann::json dns_json(const flow::DnsMessage& m, uint64_t tx_id);
  // Suricata's version 2 dns records of a message: one per question of a
  // request, one answer record for a response.
  static std::vector<nlohmann::json> dns_json_v2(const flow::DnsMessage& m, uint64_t tx_id);
  // The dns records' format: 2 or 3 (Suricata's eve-log dns version).
  void set_dns_version(int v) { dns_version_ = v; }
  // The transactions the flow last released had begun (Suricata's tx_cnt:
  // HTTP's, DNS's and SIP's messages, FTP's commands, SMTP's mails; TLS and
  // SSH one), as release() left it.
  uint64_t released_transactions() const { return released_txs_; }
  // A transaction a packet or stream rule's alert may be given
  // (guess_tx): its id, direction, times given, and its alert metadata.
  struct GuessedTx {
    uint64_t tx_id;
    uint8_t dir;
    uint8_t logged;
    nlohmann::json meta;
  };
  // Suricata's detect.guess-applayer-tx, with stream-tx-log-limit (0: off;
  // DNS's transactions; before init).
  void set_guess_tx(uint8_t limit) { guess_limit_ = limit; }
  // Flow id's transaction for an alert of a packet or stream rule on its
  // current packet (direction dir), if one can be guessed (null if not).
  const GuessedTx* guess_tx(uint32_t id, uint8_t dir);
  // The ports DNS is looked for on (either side; default 53).
  void set_dns_ports(std::vector<uint16_t> ports) { dns_ports_ = std::move(ports); }
  // Suricata's tls object of a handshake.
  static nlohmann::json tls_json(const flow::TlsInfo& t);
  // Suricata's sip object of a message.
  static nlohmann::json sip_json(const flow::SipMessage& m);
  // Suricata's ssh object of a connection.
  static nlohmann::json ssh_json(const flow::SshConn& s);
  // Suricata's ftp object of a command's transaction.
  static nlohmann::json ftp_json(const flow::FtpTx& t);
  // Suricata's smtp and email objects of a transaction, as {"smtp": ..., "email": ...}.
  static nlohmann::json smtp_json(const flow::SmtpTx& t);
  // The files' digests every fileinfo record shows (flow::FileDigest bits,
  // Suricata's force-hash; before init): those the rules read are computed
  // anyway.
  void set_force_digests(uint8_t which) { force_digests_ = which; }
  // Content-Encoding layers undone (before init).
  void set_decompress_layers(int n) { http_cfg_.decompress_layers = n; }
  void set_body_limits(uint32_t request, uint32_t response) {
    http_cfg_.request_body_limit = request, http_cfg_.response_body_limit = response;
  }
  // One TCP or UDP packet of flow `id`: a TCP segment goes through
  // reassembly and the parsers, a DNS datagram is parsed; rules of transactions that progressed are matched against
  // `info` (its flow fields filled) and appended to `hits`. info.app gets the
  // flow's application protocol. `found`: the device's scan of the payload
  // with the stream rules' automaton (k::ids_stream_scan), used when the
  // segment is delivered to its stream as it came (else the host scans).
  void packet(uint32_t id, ids::PacketInfo& info, uint64_t ts, std::vector<TxHit>& hits,
              const k::IdsStreamOut* found = nullptr);
  // The last packet()'s data failed a parser (a SIP message the wrong way
  // or that does not parse, a DNS message that does not parse, a TLS record
  // that cannot be read): Suricata's app-layer error, which its
  // app-layer.error-policy acts on.
  bool packet_failed() const { return failed_; }
  // The last packet() failed a TCP session check (flow::TcpSession: a
  // stream event), Suricata's stream error: its stream did not take it, and
  // an inline IPS drops it (stream.drop-invalid).
  bool packet_stream_error() const { return stream_error_; }
  // The flow's application protocol (ids::App), 0 when unknown.
  uint16_t app(uint32_t id);
  // Suricata's max_regions of a direction's stream (1 for a flow without
  // reassembled data).
  uint16_t max_regions(uint32_t id, uint8_t dir);
  // The connection is SSH and both sides sent NEWKEYS: encrypted from here on.
  bool ssh_encrypted(uint32_t id);
  const Counters& counters() const { return c_; }
  const flow::StreamCounters& stream_counters() const { return reasm_.counters(); }
  // Bytes per direction parsed and inspected (Suricata's stream.reassembly.depth; 1 MiB; before init).
  void set_depth(uint64_t bytes) { depth_ = bytes; }
  uint64_t depth() const { return depth_; }
  // Stream events become EVE anomaly records (Suricata's anomaly types.stream).
  void set_log_stream_anomalies(bool on) { log_stream_anomalies_ = on; }
  // An inline IPS (Suricata's stream.inline): a TCP segment's bytes that
  // the stream already has (held, or delivered and not yet acknowledged)
  // are set to the stream's in the packet (ids::PacketInfo::wire), its
  // checksum updated, and a segment of stream data inspected before has
  // that part of the stream inspected again on it, as Suricata's inline
  // inspection does. Before init.
  void set_normalize(bool on) { normalize_ = on; }
  // Overlapping TCP data is resolved as each direction's receiver would
  // (Suricata's host-os-policy: its range's policy, else `def`; Suricata's
  // default is bsd). Before init.
  void set_overlap_policies(flow::HostPolicies hosts, flow::Overlap def) {
    host_policies_ = std::move(hosts);
    default_policy_ = def;
  }

  struct Conn;

 private:
  static void refresh(const Conn& c, TxHit& h);
  void stream_data(uint32_t flow, uint8_t dir, uint64_t offset, const uint8_t* data, uint32_t len) override;
  void stream_gap(uint32_t flow, uint8_t dir, uint64_t offset, uint64_t len) override;
  void stream_end(uint32_t flow, uint8_t dir) override;
  void stream_overwrite(uint32_t flow, uint8_t dir, uint64_t offset, const uint8_t* data, uint32_t len) override;
  Conn*& slot(uint32_t id);
  void on_tx(Conn& c, flow::HttpTx& tx, uint8_t what);
  void log_file(const Conn& c, flow::HttpTx& tx, uint8_t dir);
  void log_uploads(const Conn& c, flow::HttpTx& tx);  // a form's files closed since
  void match_tx(flow::HttpTx& tx);
  // The HTTP transactions open in direction dir whose rules' payload items
  // match the data just parsed (cur_'s payload): noted, and the
  // transaction matched again (Suricata inspects a transaction's payload
  // items on the raw stream of each packet, and keeps what matched).
  void stream_payload(Conn& c, uint8_t dir);
  void dns_message(Conn& c, uint8_t dir, const uint8_t* d, uint32_t n);
  void on_tls(Conn& c, const flow::TlsInfo& t, uint8_t what);
  // An EVE anomaly record for each of `events` not in `logged` (then added),
  // as Suricata's applayer anomalies of its C parsers (upper-case names).
  void log_app_anomalies(const Conn& c, uint16_t app, uint64_t events, uint64_t& logged, uint64_t tx_id);
  // False for a message the wrong way (a response to the server, a
  // request to the client): a parser error, as Suricata's parsers take it.
  bool sip_message(Conn& c, uint8_t dir, const flow::SipMessage& m);
  void on_ssh(Conn& c, uint8_t dir, uint8_t what);
  void on_ftp(Conn& c, flow::FtpTx& t, uint8_t what);
  void match_ftp(flow::FtpTx& t, uint8_t dir);
  void on_smtp(Conn& c, flow::SmtpTx& t, uint8_t what);
  void match_smtp(flow::SmtpTx& t);
  void raw_inspect(Conn& c, uint8_t dir, const ids::PacketInfo& info, std::vector<TxHit>& hits, bool all = true);
  // The stream rules on the window's bytes up to n, those before `old`
  // inspected before (a match must end past them); a rule that matches
  // within [seen_a, seen_b) alone was found there before (inline, while
  // those bytes were held).
  void inspect_window(Conn& c, uint8_t dir, const ids::PacketInfo& at, std::vector<TxHit>& hits, uint32_t old,
                      uint32_t n, uint32_t seen_a = 0, uint32_t seen_b = 0);
  // The same on w[0, n), the stream from offset `base` on, whose patterns
  // `pre` found.
  void match_stream(Conn& c, uint8_t dir, const ids::PacketInfo& at, std::vector<TxHit>& hits, const std::string& w,
                    uint64_t base, ids::StreamPrefilter& pre, uint32_t old, uint32_t n, uint32_t seen_a = 0,
                    uint32_t seen_b = 0);
  // Inline: a segment held past a hole is inspected with the held data that
  // runs up to it, within the window (Suricata's inline raw inspection: a
  // drop rule stops the packet that completes its match, before the hole
  // fills or becomes a gap); a match must end in the segment. What was
  // found so is not reported again when the data is delivered (after a gap
  // or once the hole fills).
  void inspect_held(Conn& c, uint8_t dir, const ids::PacketInfo& info, std::vector<TxHit>& hits, uint32_t seq);
  // Inline: the packet's bytes of the stream, within the window, that the
  // stream had before it (up to `before`) and were inspected (a
  // retransmission's) are inspected again on it.
  void reinspect(Conn& c, uint8_t dir, const ids::PacketInfo& info, std::vector<TxHit>& hits, uint32_t seq,
                 uint64_t before);

  FlowIPManager* mgr_ = nullptr;
  uint32_t off_ = 0;
  std::shared_ptr<const ids::Database> db_;
  ids::Engine scan_;  // over db_: the streams' pieces scanned by it (Hyperscan where db_ has it)
  flow::Reassembler reasm_;
  flow::HostPolicies host_policies_;
  bool normalize_ = false;
  flow::Overlap default_policy_ = flow::Overlap::Bsd;
  flow::HttpConfig http_cfg_;
  uint8_t force_digests_ = 0;
  bool stream_payload_ = false;  // some stream rules are TCP payload rules (ids::Rule::stream_payload)
  Counters c_;
  // the packet being processed, for the events its data raises
  ids::PacketInfo* cur_ = nullptr;
  const k::IdsStreamOut* cur_found_ = nullptr;  // the current packet's device scan (packet())
  uint64_t cur_ts_ = 0;
  std::vector<TxHit>* cur_hits_ = nullptr;
  // The tx rules that may match a transaction's buffers (a's, and b's
  // when given), in the database's order (ids::Database::tx_candidates).
  const std::vector<uint32_t>& tx_candidates(const ids::TxBuffers& a, const ids::TxBuffers* b = nullptr);
  std::vector<uint32_t> cand_, cand_b_;
  int dns_version_ = 3;
  uint8_t guess_limit_ = 0;
  uint64_t released_txs_ = 0;
  std::vector<uint16_t> dns_ports_ = {53};
  bool log_http_ = false, log_files_ = false, log_dns_ = false, log_tls_ = false, log_sip_ = false, log_ssh_ = false;
  bool log_anomaly_ = false, log_ftp_ = false, log_smtp_ = false;
  bool log_stream_anomalies_ = false;
  uint64_t depth_ = 1u << 20;
  // A stream event on the packet being processed (ids::StreamEvent), and its anomaly record.
  void stream_event(Conn& c, uint8_t dir, uint8_t event);
  // In-order data of a direction to protocol detection and the parsers.
  void app_data(Conn& c, uint8_t dir, const uint8_t* data, uint32_t len);
  // Suricata's IDS mode: the data of `dir` waiting for acknowledgement, up
  // to stream offset `upto`, goes to the parsers on the packet cur_ (null:
  // none). Data of the other way than that packet's advances transactions
  // whose alerts wait for dir's next packet (Conn::deferred).
  void deliver(Conn& c, uint8_t dir, uint64_t upto);
  // All of it, on the packet cur_, or at the flow's end on its view of dir.
  void deliver_all(Conn& c, uint8_t dir);
  std::vector<flow::HttpTx*> progressed_;  // HTTP transactions advanced by deliver() (when collect_)
  bool collect_ = false;
  uint64_t app_waiting_ = 0;  // bytes all connections hold for the parsers, waiting for acknowledgement
  std::vector<TxLog> logs_;
  bool stream_rules_ = false;
  uint32_t stream_window_ = 2048;
  uint64_t memcap_ = 64ull << 20;
  uint64_t held_ = 0, waiting_ = 0;  // bytes in the windows; of them, not inspected yet (fresh)
  bool stream_acked_ = false;
  StreamStats ss_;
  std::vector<uint32_t> scand_;
  bool failed_ = false;            // (packet_failed())
  bool stream_error_ = false;      // (packet_stream_error())
  std::string held_buf_;           // (inspect_held's scratch: the held run)
  ids::StreamPrefilter held_pre_;  // (its patterns)
  std::vector<TxHit> end_hits_;
  ids::PacketInfo* end_info_ = nullptr;  // at a release: each direction's view
  // At a release, each direction's stream as its end inspection saw it: the
  // windows before holes, each hole as Suricata logs it ("[N bytes
  // missing]"); the stream alerts raised then carry it whole as their payload
  std::string end_shown_[2];
  bool end_gap_[2] = {false, false};
  std::unordered_set<Conn*> live_;  // every connection held, freed at the end if its flow never was
};

}  // namespace shoal
