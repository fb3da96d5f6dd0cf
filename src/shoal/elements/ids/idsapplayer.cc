#include "shoal/elements/ids/idsapplayer.hh"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "shoal/flow/tcp_session.hh"
#include "shoal/ids/dns_names.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

struct IdsAppLayer::Conn {
  uint32_t id = 0;        // the flow
  bool dns_port = false;  // a DNS port on either side (DNS is detected by port, then probed)
  bool port21 = false;    // FTP's (its control connection: the port, then the first bytes)
  std::unique_ptr<flow::FtpConn> ftp;
  std::deque<flow::FtpTx> ftp_done;  // replied to, still to be inspected on a packet to the server
  std::deque<std::pair<uint64_t, nlohmann::json>> ftp_recent;  // the last ones replied to: index, ftp object
  bool smtp_port = false;                                      // SMTP's (its server's greeting is looked for)
  std::unique_ptr<flow::SmtpConn> smtp;
  uint64_t dns_tx = 0;  // DNS messages so far (each is a transaction)
  // guess-applayer-tx: the last DNS transactions (each one direction's),
  // and Suricata's inspect id per direction: the transactions there were
  // when a packet that way was last inspected (as the current packet found it)
  std::deque<IdsAppLayer::GuessedTx> guess;
  uint64_t inspected[2] = {0, 0};
  uint64_t inspect_now = 0;
  uint8_t last_dir = 2;  // the previous packet's direction (2: none yet)
  flow::DnsTcpFramer dns_tcp[2];
  std::unique_ptr<flow::TlsConn> tls;
  // rules that alerted on the handshake (one transaction per flow): 2 *
  // rule, plus the direction for a rule that alerts once each way (both_ways)
  std::vector<uint32_t> tls_alerted;
  uint64_t tls_events_logged = 0;  // the TLS decoder events given anomaly records
  bool tls_logged = false;
  uint64_t sip_tx = 0;    // SIP messages so far (each is a transaction)
  uint64_t smtp_txs = 0;  // SMTP transactions counted (the next one's index)
  std::unique_ptr<flow::SshConn> ssh;
  std::vector<uint32_t> ssh_alerted;  // rules (times two, plus the side) that alerted: once a side, per flow
  bool ssh_logged = false;
  flow::SipTcpFramer sip_tcp[2];
  flow::Stream stream;
  flow::TcpSession session;    // Suricata's session checks (stream events)
  uint8_t detect[2] = {0, 0};  // per direction: 0 undecided, 1 HTTP, 2 something else, 3 DNS, 4 TLS, 5 SIP, 6 SSH
  std::string probe[2];        // first bytes held while undecided
  uint16_t app = ids::kAppNone;
  std::unique_ptr<flow::HttpConn> http;
  // per direction, for the stream rules: the window of the stream (the
  // bytes kept from before, then `fresh` new ones not yet inspected)
  std::string raw[2];
  ids::StreamPrefilter pre[2];  // the stream rules' patterns found in each
  uint32_t fresh[2] = {0, 0};
  uint64_t raw_end[2] = {0, 0};  // the stream offset raw[d] ends at
  uint64_t acked[2] = {0, 0};    // the stream offset each direction's receiver acknowledged
  // inline (inspect_held): held data [from, to) within which a direction's
  // inspections found every match
  uint64_t held_from[2] = {0, 0}, held_to[2] = {0, 0};
  // where the stream payload rules' inspection begins: the first data that
  // joined the stream once the connection was established (what came
  // before, a SYN's data, was inspected on its packets)
  uint64_t payload_from[2] = {UINT64_MAX, UINT64_MAX};
  uint8_t past_depth = 0;  // bit per direction: data went past the depth (its event raised)
  // Suricata's IDS mode (stream_acked_): a direction's data waits for its
  // receiver's acknowledgement before the parsers get it, and the alerts of
  // what it advanced are raised on that direction's next packet (Suricata
  // inspects a transaction's rules on packets of their direction)
  std::string app_wait[2];
  uint64_t app_wait_end[2] = {0, 0};  // the stream offset app_wait[d] ends at
  std::vector<IdsAppLayer::TxHit> deferred[2];
  uint8_t fins = 0, seen = 0;  // bit per direction: a FIN was seen; a packet was
};

IdsAppLayer::IdsAppLayer() = default;
IdsAppLayer::~IdsAppLayer() {
  // connections whose flows the table never released (packets completed
  // after the flow layer's shutdown, e.g. an offload drained at the stop)
  for (Conn* c : live_) delete c;
}

void IdsAppLayer::reserve(FlowIPManager& mgr) {
  mgr_ = &mgr;
  off_ = mgr.table().reserve(sizeof(void*), alignof(void*), "IdsAppLayer");  // a Conn*
}

IdsAppLayer::Conn*& IdsAppLayer::slot(uint32_t id) { return *reinterpret_cast<Conn**>(mgr_->table().state(id) + off_); }

void IdsAppLayer::init(std::shared_ptr<const ids::Database> db, bool log_http, bool log_files, bool log_dns,
                       bool log_tls, bool log_sip, bool log_ssh, bool log_anomaly, bool log_ftp, bool log_smtp) {
  db_ = std::move(db);
  log_http_ = log_http, log_files_ = log_files, log_dns_ = log_dns, log_tls_ = log_tls, log_sip_ = log_sip;
  log_ssh_ = log_ssh, log_anomaly_ = log_anomaly, log_ftp_ = log_ftp, log_smtp_ = log_smtp;
  flow::StreamConfig sc;
  sc.midstream = mgr_->table().config().midstream;
  sc.policy = default_policy_;
  if (normalize_) sc.keep = kUnackedCap;
  reasm_.configure(sc);
  reasm_.set_sink(this);
  stream_rules_ = db_ && !db_->stream_rules().empty();
  if (stream_rules_) {
    std::string err;
    if (!scan_.use(db_, err)) throw std::runtime_error(fmt::format("IDSMatcher: the stream's scanner: {}", err));
  }
  stream_payload_ = false;
  if (db_)
    for (uint32_t r : db_->stream_rules()) stream_payload_ |= db_->rules()[r].stream_payload;
  // the files' digests: those the rules read, and those the records must show
  static_assert(int(ids::kFileMd5) == flow::kDigestMd5 && int(ids::kFileSha1) == flow::kDigestSha1 &&
                int(ids::kFileSha256) == flow::kDigestSha256);
  uint8_t digests = force_digests_;
  if (db_)
    for (const ids::Rule& r : db_->rules())
      for (const ids::FileHashCond& c : r.file_hashes) digests |= c.algo;
  http_cfg_.file_digests = digests;
}

namespace {

// A file's digests, where computed, in its fileinfo object (Suricata's md5, sha1, sha256).
void digests_json(nlohmann::json& fi, const flow::FileHasher& h) {
  if (!h.md5().empty()) fi["md5"] = h.md5();
  if (!h.sha1().empty()) fi["sha1"] = h.sha1();
  if (!h.sha256().empty()) fi["sha256"] = h.sha256();
}

}  // namespace

void IdsAppLayer::release(uint32_t id, ids::PacketInfo* at_end, bool dropped) {
  Conn*& c = slot(id);
  released_txs_ = 0;
  if (!c) return;
  if (dropped) at_end = nullptr;
  const size_t logs_before = logs_.size();
  cur_ = nullptr;  // no packet: events at the end raise no alert
  end_info_ = at_end;
  size_t first = end_hits_.size();
  for (uint8_t d = 0; d < 2; ++d) end_shown_[d].clear(), end_gap_[d] = false;
  reasm_.finish(c->stream, id);
  for (uint8_t d = 0; d < 2 && at_end; ++d) {
    raw_inspect(*c, d, at_end[d], end_hits_);
    if (!end_gap_[d]) continue;
    // across holes, each part matched alone; the alerts show them all
    end_shown_[d] += c->raw[d];
    for (size_t i = first; i < end_hits_.size(); ++i)
      if (end_hits_[i].stream && end_hits_[i].dir == d) end_hits_[i].window = end_shown_[d];
  }
  // what still waited for acknowledgement goes to the parsers, each
  // direction on its end's view, then the alerts held for each direction
  std::vector<TxHit>* was_hits = cur_hits_;
  for (uint8_t d = 0; d < 2; ++d) {
    cur_ = at_end ? &at_end[d] : nullptr;
    cur_hits_ = &end_hits_;
    deliver(*c, d, UINT64_MAX);
  }
  cur_ = nullptr;
  cur_hits_ = was_hits;
  for (uint8_t d = 0; d < 2; ++d) {
    if (at_end)
      for (TxHit& h : c->deferred[d]) {
        refresh(*c, h);
        end_hits_.push_back(std::move(h));
      }
    c->deferred[d].clear();
  }
  end_info_ = nullptr;
  if (c->http && at_end && db_) {
    // bodies left incomplete by the flow's end (a capture cut short, a
    // timeout) are final: matched as far as they go (Suricata's flow-timeout
    // pseudo packets inspect them too); the alerts go with the end's
    std::vector<TxHit>* was = cur_hits_;
    cur_hits_ = &end_hits_;
    for (uint8_t d = 0; d < 2; ++d) {
      size_t from = end_hits_.size();
      cur_ = &at_end[d];
      c->http->end(d, cur_ts_);
      for (size_t i = from; i < end_hits_.size(); ++i) end_hits_[i].dir = d;
    }
    cur_ = nullptr;
    cur_hits_ = was;
  }
  // the end's alerts on transactions: their metadata now (the connection goes)
  for (size_t i = first; i < end_hits_.size(); ++i)
    if (const flow::HttpTx* t = end_hits_[i].tx)
      end_hits_[i].meta = http_json(*t), end_hits_[i].tx_id = t->index, end_hits_[i].tx = nullptr;
  if (c->http) c->http->close(0);
  const flow::TlsInfo* ti = c->tls ? &c->tls->info() : nullptr;
  if (ti && (ti->client_hello || ti->server_hello || !ti->certs.empty()) && !c->tls_logged &&
      log_tls_) {  // a handshake that never finished
    c->tls_logged = true;
    logs_.push_back({c->id, TxLog::Tls, 0, 0, tls_json(c->tls->info()), {}});
  }
  if (c->smtp) c->smtp->end();  // (transactions left open: logged, no packet to alert on)
  if (c->ftp && log_ftp_)       // commands without their reply
    for (flow::FtpTx& t : c->ftp->open()) logs_.push_back({c->id, TxLog::Ftp, 0, t.index, ftp_json(t), {}});
  if (c->ssh && !c->ssh_logged && log_ssh_) {  // a handshake that never finished
    c->ssh_logged = true;
    logs_.push_back({c->id, TxLog::Ssh, 0, 0, ssh_json(*c->ssh), {}});
  }
  if (dropped) logs_.erase(logs_.begin() + std::ptrdiff_t(logs_before), logs_.end());
  released_txs_ = c->http  ? c->http->transactions()
                  : c->ftp ? c->ftp->transactions()
                           : c->dns_tx + c->sip_tx + c->smtp_txs + (c->tls || c->ssh ? 1 : 0);
  live_.erase(c);
  for (uint8_t d = 0; d < 2; ++d) held_ -= c->raw[d].size(), waiting_ -= c->fresh[d];
  ss_.memory.set(held_);
  delete c;  // (no hit of this flow is pending: releases happen between packets)
  c = nullptr;
}

nlohmann::json IdsAppLayer::http_json(const flow::HttpTx& tx) {
  nlohmann::json h = nlohmann::json::object();
  if (!tx.host.empty()) h["hostname"] = tx.host;  // (none without a Host header or a URI's host, as Suricata)
  if (tx.port >= 0) h["http_port"] = tx.port;
  h["url"] = tx.uri_raw;
  if (!tx.user_agent.empty()) h["http_user_agent"] = tx.user_agent;
  if (!tx.response_content_type.empty())
    h["http_content_type"] = tx.response_content_type.substr(0, tx.response_content_type.find(';'));
  if (!tx.referer.empty()) h["http_refer"] = tx.referer;
  h["http_method"] = tx.method;
  h["protocol"] = tx.protocol;
  if ((tx.progress & flow::HttpTx::kResponseHeaders) && !tx.stat_code.empty())
    h["status"] = std::atoi(tx.stat_code.c_str());
  if (!tx.location.empty()) h["redirect"] = tx.location;
  h["length"] = tx.response_length;
  return h;
}

// Suricata's guess of a packet or stream rule's transaction
// (detect.guess-applayer-tx): the first transaction of the packet's
// direction not inspected yet, when it is the only one live that way (the
// last one, or followed only by one of the other direction); each is
// guessed at most the limit's times (detect.stream-tx-log-limit).
const IdsAppLayer::GuessedTx* IdsAppLayer::guess_tx(uint32_t id, uint8_t dir) {
  Conn* c = slot(id);
  if (!guess_limit_ || !c || c->app != ids::kAppDns || c->last_dir != (dir & 1)) return nullptr;
  uint64_t at = c->inspect_now, count = c->dns_tx;
  if (count != at + 1 && count != at + 2) return nullptr;
  GuessedTx* tx = nullptr;
  for (GuessedTx& g : c->guess) {
    if (g.tx_id == at) tx = &g;
    if (g.tx_id == at + 1 && g.dir == (dir & 1)) return nullptr;  // (a second one this way)
  }
  if (!tx || tx->logged >= guess_limit_) return nullptr;
  ++tx->logged;
  return tx;
}

uint16_t IdsAppLayer::app(uint32_t id) {
  Conn* c = slot(id);
  return c ? c->app : uint16_t(ids::kAppNone);
}

uint16_t IdsAppLayer::max_regions(uint32_t id, uint8_t dir) {
  Conn* c = slot(id);
  return c ? c->stream.d[dir & 1].max_regions : uint16_t(1);
}

// An alert's metadata as the transaction is when the alert is logged (as
// Suricata's alert reads it then): a connection's one transaction (SSH,
// TLS), or an FTP command's, which may have had more replies since.
void IdsAppLayer::refresh(const Conn& c, TxHit& h) {
  if (h.app == ids::kAppSsh && c.ssh) h.meta = ssh_json(*c.ssh);
  if (h.app == ids::kAppTls && c.tls) h.meta = tls_json(c.tls->info());
  if (h.app == ids::kAppFtp) {
    if (c.ftp)
      for (const flow::FtpTx& t : c.ftp->open())
        if (t.index == h.tx_id) return void(h.meta = ftp_json(t));
    for (const auto& [index, meta] : c.ftp_recent)
      if (index == h.tx_id) return void(h.meta = meta);
  }
}

bool IdsAppLayer::ssh_encrypted(uint32_t id) {
  Conn* c = slot(id);
  return c && c->app == ids::kAppSsh && c->ssh && c->ssh->done();
}

void IdsAppLayer::packet(uint32_t id, ids::PacketInfo& info, uint64_t ts, std::vector<TxHit>& hits,
                         const k::IdsStreamOut* found) {
  failed_ = stream_error_ = false;
  if (!info.l4 || (info.proto != 6 && info.proto != 17)) return;
  Conn*& c = slot(id);
  if (!c) {
    c = new Conn;
    live_.insert(c);
    c->id = id;
    c->dns_port = info.has_ports && (std::find(dns_ports_.begin(), dns_ports_.end(), info.sport) != dns_ports_.end() ||
                                     std::find(dns_ports_.begin(), dns_ports_.end(), info.dport) != dns_ports_.end());
    c->port21 = info.has_ports && (info.sport == 21 || info.dport == 21);
    for (uint16_t p : {25, 587, 2525}) c->smtp_port |= info.has_ports && (info.sport == p || info.dport == p);
  }
  if (guess_limit_) {  // (the previous packet's inspection covered the transactions there were after it)
    if (c->last_dir < 2) c->inspected[c->last_dir] = c->dns_tx;
    c->last_dir = info.dir & 1;
    c->inspect_now = c->inspected[info.dir & 1];
  }
  if (info.proto == 17) {  // a datagram is a message
    if (c->app == ids::kAppNone && c->dns_port && flow::dns_probe(info.payload, info.plen)) c->app = ids::kAppDns;
    if (c->app == ids::kAppNone && flow::sip_probe(info.payload, info.plen) == 1) c->app = ids::kAppSip;
    if (c->app == ids::kAppSip) {
      flow::SipMessage m;
      if (flow::sip_parse(info.payload, info.plen, m, true) > 0) {
        cur_ = &info;
        cur_ts_ = ts;
        cur_hits_ = &hits;
        if (sip_message(*c, info.dir, m)) c_.sip_udp_messages.add();
        cur_ = nullptr;
      } else {
        c_.sip_errors.add();
        failed_ = true;
      }
    }
    if (c->app == ids::kAppDns) {
      cur_ = &info;
      cur_ts_ = ts;
      cur_hits_ = &hits;
      size_t before = c_.dns_messages.get();
      dns_message(*c, info.dir, info.payload, info.plen);
      c_.dns_udp_messages.add(c_.dns_messages.get() - before);
      cur_ = nullptr;
    }
    info.app = c->app;
    info.app_known = true;  // a datagram decides
    return;
  }
  cur_ = &info;
  cur_ts_ = ts;
  cur_hits_ = &hits;
  cur_found_ = found;
  if (c->http) {
    // a transaction whose events the rules have not met on a packet this
    // way is inspected (Suricata inspects every open transaction each way:
    // an event found in a response meets the rules on the client's side at
    // its next packet); once per new event and direction
    size_t from = hits.size();
    if (db_)
      c->http->each([&](flow::HttpTx& t) {
        if ((t.events & ~t.events_seen[info.dir & 1]) && !(t.progress & flow::HttpTx::kEnded)) match_tx(t);
      });
    for (size_t i = from; i < hits.size(); ++i)  // (before the transactions go)
      if (const flow::HttpTx* t = hits[i].tx)
        hits[i].meta = http_json(*t), hits[i].tx_id = t->index, hits[i].tx = nullptr;
    // the last packet's alerts are logged: its transactions can go, but
    // those whose alerts wait for a packet the other way
    if (c->deferred[0].empty() && c->deferred[1].empty())
      c->http->release_done();
    else
      c->http->release_done([c](const flow::HttpTx& t) {
        for (const auto& held : c->deferred)
          for (const TxHit& h : held)
            if (h.tx == &t) return true;
        return false;
      });
  }
  size_t first = hits.size();
  const uint8_t here = info.dir & 1, there = here ^ 1;
  c->seen |= uint8_t(1 << here);
  if (flow::DirStream& ds = c->stream.d[here]; !ds.init && !host_policies_.empty())
    ds.policy = host_policies_.lookup(info.dst.v6, info.dst.b);  // (its receiver's)
  // The session checks: a segment that fails one raises its event, and the
  // stream does not take it (its data, its FIN or reset, its ACK)
  bool take = true;
  {
    const flow::TcpSeg seg = flow::TcpSeg::parse(info.l4, info.l4len, info.plen, uint32_t(ts / 1000000000u));
    const auto& tc = mgr_->table().config();
    flow::TcpSession::Config sc;
    sc.midstream = tc.midstream;
    sc.async_oneside = tc.async_oneside;
    sc.inline_mode = normalize_;
    flow::Overlap rcv = c->stream.d[here].policy;
    bool valid = true;
    const uint32_t isn = c->session.client_isn();
    uint64_t events = c->session.check(seg, here, rcv == flow::Overlap::Default ? default_policy_ : rcv, sc, valid);
    if (c->session.client_isn() != isn) reasm_.restart(c->stream, 0, c->session.client_isn());
    for (uint8_t e = 0; events; ++e, events >>= 1)
      if (events & 1) stream_event(*c, here, e);
    take = c->session.taken();
    if (!valid) c_.stream_rejected.add(), stream_error_ = true;
  }
  if (take) {
    // this packet's ACK acknowledges the other direction's data
    const flow::DirStream& od = c->stream.d[there];
    if ((info.l4[13] & 0x10) && od.init) {
      uint32_t at = k::load_be32(info.l4 + 8) - od.base;  // (within 2^31 of the stream's start: the depth)
      if (at < (1u << 31) && at > c->acked[there]) c->acked[there] = at;
      if (normalize_) reasm_.acknowledged(c->stream, there, c->acked[there]);
    }
  }
  if (stream_acked_) {
    deliver(*c, there, c->acked[there]);  // (to the parsers: what the other side's receiver acknowledged)
    for (TxHit& h : c->deferred[here]) hits.push_back(std::move(h));  // alerts held for this direction
    c->deferred[here].clear();
  }
  uint32_t seq = k::load_be32(info.l4 + 4);
  if (take && normalize_ && info.plen && info.wire && info.payload >= info.wire &&
      info.payload + info.plen <= info.wire + info.wire_len && info.l4 >= info.wire && info.l4len >= 20) {
    // the receiver gets the bytes the stream has (and was inspected with)
    uint8_t* pl = info.wire + (info.payload - info.wire);
    uint32_t before = k::csum_partial(pl, info.plen);
    if (reasm_.normalize(c->stream, here, seq, info.l4[13], pl, info.plen)) {
      uint8_t* check = info.wire + (info.l4 - info.wire) + 16;
      auto fold = [](uint32_t x) {
        while (x >> 16) x = (x & 0xffff) + (x >> 16);
        return uint16_t(x);
      };
      k::store_be16(check, k::csum_update16(k::load_be16(check), fold(before), fold(k::csum_partial(pl, info.plen))));
      info.normalized = true;
      cur_found_ = nullptr;  // (the device scanned the bytes as they came)
    }
  }
  const uint64_t next_before = c->stream.d[here].next, differ_before = reasm_.counters().overlap_differ.get();
  bool added = take && reasm_.segment(c->stream, id, info.dir, seq, info.l4[13], info.payload, info.plen);
  // inline: data over what the stream had, with other bytes (Suricata
  // checks it in inline mode: the receiver may keep either)
  if (normalize_ && (info.normalized || reasm_.counters().overlap_differ.get() != differ_before))
    stream_event(*c, here, ids::kStreamReassemblyOverlapDifferentData);
  if (stream_acked_ && take) {
    // as Suricata's stream engine: a reset's sender's data goes to the
    // parsers at once, as all data once both sides closed, and a one-sided
    // capture's (stream.async-oneside); what waits is bounded
    uint8_t fl = info.l4[13];
    if (fl & k::kTcpFin) c->fins |= uint8_t(1 << here);
    bool async = mgr_->table().config().async_oneside && !(c->seen >> there & 1);
    if ((fl & k::kTcpRst) || async || c->fins == 3) deliver(*c, here, UINT64_MAX);
    if (c->fins == 3) deliver(*c, there, UINT64_MAX);
    for (uint8_t x = 0; x < 2; ++x)
      if (c->app_wait[x].size() > kUnackedCap || app_waiting_ > memcap_) deliver(*c, x, UINT64_MAX);
  }
  // the stream's inspection reads this payload: the data joined the stream
  // of an established connection, within its depth
  const flow::DirStream& sd = c->stream.d[info.dir & 1];
  if (added && stream_payload_ && info.established && sd.init) {
    uint32_t off = seq - sd.base + ((info.l4[13] & k::kTcpSyn) ? 1 : 0);
    info.stream_added = off < depth_;
    if (info.stream_added) c->payload_from[info.dir & 1] = std::min<uint64_t>(c->payload_from[info.dir & 1], off);
  }
  if (!stream_acked_) {
    for (uint8_t d = 0; d < 2; ++d) raw_inspect(*c, d, info, hits);
    if (normalize_ && stream_rules_ && next_before > 0) reinspect(*c, here, info, hits, seq, next_before);
    if (normalize_ && stream_rules_ && added) inspect_held(*c, here, info, hits, seq);
  } else if (stream_rules_) {
    raw_inspect(*c, info.dir & 1, info, hits, false);
    // a receiver that never acknowledges (a capture of one side) holds no
    // more than kUnackedCap bytes back: beyond, they are inspected as they come
    for (uint8_t d = 0; d < 2; ++d)
      if (c->fresh[d] > kUnackedCap) raw_inspect(*c, d, info, hits);
    // over the memcap, nothing more waits
    for (uint8_t d = 0; d < 2 && waiting_ > memcap_; ++d)
      if (c->fresh[d]) {
        ss_.memcap_inspections.add();
        raw_inspect(*c, d, info, hits);
      }
  }
  if (stream_rules_) ss_.memory.set(held_);
  // FTP transactions that ended are inspected once more on a packet to the
  // server (Suricata inspects a transaction each way until it is done)
  if (info.dir == 0 && !c->ftp_done.empty()) {
    for (flow::FtpTx& t : c->ftp_done) match_ftp(t, 0);
    c->ftp_done.clear();
  }
  cur_ = nullptr;
  cur_found_ = nullptr;
  info.app = c->app;
  info.app_known = c->app != ids::kAppNone || c->detect[info.dir & 1] != 0;
  // The alerts' metadata, from the transactions as this packet left them
  for (size_t i = first; i < hits.size(); ++i)
    if (hits[i].tx) {
      hits[i].meta = http_json(*hits[i].tx);
      hits[i].tx_id = hits[i].tx->index;
    } else {
      refresh(*c, hits[i]);
    }
}

void IdsAppLayer::stream_data(uint32_t flow, uint8_t dir, uint64_t offset, const uint8_t* data, uint32_t len) {
  Conn* c = slot(flow);
  if (!c) return;
  if (offset + len > depth_) {
    if (!(c->past_depth >> dir & 1)) {  // (once a direction, as Suricata)
      c->past_depth |= uint8_t(1 << dir);
      c_.depth_reached.add();
      stream_event(*c, dir, ids::kStreamReassemblyDepthReached);
    }
    if (offset >= depth_) return;
    len = uint32_t(depth_ - offset);
  }
  if (stream_rules_) {
    std::string& w = c->raw[dir];
    // inline: data inspected while it was held, now delivered after a gap
    // (the window starts within that run, nothing waits before it), was
    // inspected with all it follows: only the bytes past it are new
    uint32_t seen = 0;
    if (normalize_ && !c->fresh[dir] && offset >= c->held_from[dir] && offset < c->held_to[dir] &&
        (w.empty() ? offset : c->raw_end[dir] - w.size()) >= c->held_from[dir])
      seen = uint32_t(std::min<uint64_t>(len, c->held_to[dir] - offset));
    w.append(reinterpret_cast<const char*>(data), len);
    c->fresh[dir] += len - seen;
    held_ += len, waiting_ += len - seen;
    c->raw_end[dir] = offset + len;
    // the new bytes' patterns: the device's scan of the segment when these
    // are its payload as it came (the seam scanned here), else a scan here
    const auto* s = reinterpret_cast<const uint8_t*>(w.data());
    auto n = uint32_t(w.size()), old = n - len;
    uint64_t base = c->raw_end[dir] - n;
    if (cur_found_ && cur_ && data == cur_->payload && len == cur_->plen &&
        c->pre[dir].add_found(*db_, *cur_found_, s, old, n, base)) {
      ss_.device_scans.add();
    } else {
      c->pre[dir].add(scan_, s, old, n, base);
      ss_.host_scans.add();
    }
  }
  // (to the parsers once acknowledged: deliver(); a direction no parser
  // takes waits for nothing)
  if (stream_acked_ && !(c->detect[dir] == 2 && c->app_wait[dir].empty())) {
    std::string& w = c->app_wait[dir];
    w.append(reinterpret_cast<const char*>(data), len);
    c->app_wait_end[dir] = offset + len;
    app_waiting_ += len;
    return;
  }
  app_data(*c, dir, data, len);
  if (cur_ && c->http && db_ && !db_->tx_payload_rules().empty()) {  // (the data, as the stream has it)
    ids::PacketInfo* was = cur_;
    ids::PacketInfo view = *cur_;
    view.payload = data, view.plen = len;
    cur_ = &view;
    stream_payload(*c, dir);
    cur_ = was;
  }
}

// A retransmission won delivered bytes (the direction's overlap policy):
// what still waits uninspected takes them, as the receiver did.
void IdsAppLayer::stream_overwrite(uint32_t flow, uint8_t dir, uint64_t offset, const uint8_t* data, uint32_t len) {
  Conn* c = slot(flow);
  if (!c) return;
  // w holds the stream from w_end - w.size() to w_end; its bytes from `from` on wait
  auto take = [&](std::string& w, uint64_t w_end, uint64_t from) {
    uint64_t lo = std::max(offset, from), hi = std::min(offset + len, w_end);
    if (lo >= hi) return false;
    char* at = w.data() + (lo - (w_end - w.size()));
    const auto* src = reinterpret_cast<const char*>(data + (lo - offset));
    if (std::memcmp(at, src, hi - lo) == 0) return false;
    std::memcpy(at, src, hi - lo);
    return true;
  };
  if (stream_rules_ && take(c->raw[dir], c->raw_end[dir], c->raw_end[dir] - c->fresh[dir])) {
    // the window's patterns, found again
    const std::string& w = c->raw[dir];
    c->pre[dir].clear();
    c->pre[dir].add(scan_, reinterpret_cast<const uint8_t*>(w.data()), 0, uint32_t(w.size()),
                    c->raw_end[dir] - w.size());
    ss_.host_scans.add();
  }
  take(c->app_wait[dir], c->app_wait_end[dir], c->app_wait_end[dir] - c->app_wait[dir].size());
}

void IdsAppLayer::deliver_all(Conn& c, uint8_t dir) {
  if (c.app_wait[dir].empty()) return;
  ids::PacketInfo* was = cur_;
  std::vector<TxHit>* was_hits = cur_hits_;
  if (!cur_ && end_info_) cur_ = &end_info_[dir], cur_hits_ = &end_hits_;  // (at the flow's end: its view)
  deliver(c, dir, UINT64_MAX);
  cur_ = was;
  cur_hits_ = was_hits;
}

void IdsAppLayer::deliver(Conn& c, uint8_t dir, uint64_t upto) {
  std::string& w = c.app_wait[dir];
  uint64_t start = c.app_wait_end[dir] - w.size();
  if (w.empty() || upto <= start) return;
  size_t n = upto >= c.app_wait_end[dir] ? w.size() : size_t(upto - start);
  app_waiting_ -= n;
  const auto* part = reinterpret_cast<const uint8_t*>(w.data());  // (nothing appends to it while parsed)
  // on a packet the other way: matched as that direction's packet would
  // be, the alerts held for its next packet
  ids::PacketInfo* was = cur_;
  std::vector<TxHit>* was_hits = cur_hits_;
  ids::PacketInfo view;
  if (cur_) {
    view = *cur_;
    if ((cur_->dir & 1) != dir) {
      std::swap(view.src, view.dst);
      std::swap(view.sport, view.dport);
      view.dir = dir;
      view.first_in_dir = false;
      cur_hits_ = &c.deferred[dir];
    }
    // a rule's payload items read the data delivered (Suricata's stream
    // inspection for rules that mix them with transaction buffers)
    view.payload = part, view.plen = uint32_t(n);
    cur_ = &view;
  }
  size_t from = cur_hits_ ? cur_hits_->size() : 0;
  const bool other_way = was && (was->dir & 1) != dir;
  progressed_.clear();
  collect_ = other_way;
  app_data(c, dir, part, uint32_t(n));
  stream_payload(c, dir);
  w.erase(0, n);
  collect_ = false;
  if (cur_hits_)
    for (size_t i = from; i < cur_hits_->size(); ++i) (*cur_hits_)[i].dir = dir;  // (whose data raised it)
  cur_ = was;
  cur_hits_ = was_hits;
  // the HTTP transactions it advanced are inspected on this packet too, by
  // the rules of its direction (an event in a response meets the client's
  // rules on the client's packet that acknowledged it)
  if (other_way && db_)
    for (size_t i = 0; i < progressed_.size(); ++i)
      if (std::find(progressed_.begin(), progressed_.begin() + std::ptrdiff_t(i), progressed_[i]) ==
              progressed_.begin() + std::ptrdiff_t(i) &&
          !(progressed_[i]->progress & flow::HttpTx::kEnded))
        match_tx(*progressed_[i]);
  progressed_.clear();
}

void IdsAppLayer::app_data(Conn& conn, uint8_t dir, const uint8_t* data, uint32_t len) {
  Conn* c = &conn;
  auto dns = [&](const uint8_t* d, uint32_t n) {
    c->dns_tcp[dir].data(d, n, [&](const uint8_t* m, uint32_t k) { dns_message(*c, dir, m, k); });
  };
  auto tls = [&](const uint8_t* d, uint32_t n) {
    uint32_t before = c->tls->info().anomalies;
    c->tls->data(dir, d, n);
    failed_ |= cur_ && c->tls->info().anomalies != before;  // (a record Suricata's parser fails)
  };
  auto sip_tcp = [&](const uint8_t* d, uint32_t n) {
    if (!c->sip_tcp[dir].data(d, n, [&](const flow::SipMessage& m) { sip_message(*c, dir, m); })) {
      c_.sip_errors.add();
      c->detect[dir] = 2;  // given up
      failed_ |= cur_ != nullptr;
    }
  };
  if (c->detect[dir] == 0) {
    // protocol detection on the first bytes: HTTP whatever the ports, DNS
    // on port 53 when its header is plausible
    std::string& pb = c->probe[dir];
    size_t held = pb.size();  // bytes of earlier segments kept while undecided
    pb.append(reinterpret_cast<const char*>(data), std::min<size_t>(len, 16 - std::min<size_t>(held, 16)));
    const auto* pd = reinterpret_cast<const uint8_t*>(pb.data());
    // SIP first: OPTIONS and others are methods of both; a request names a sip: URI
    int sip = c->app == ids::kAppNone ? flow::sip_probe(pd, uint32_t(pb.size())) : c->app == ids::kAppSip ? 1 : 0;
    if (sip < 0 && pb.size() < 16) return;  // more bytes needed (all of them are in pb)
    if (sip > 0) {
      c->app = ids::kAppSip;
      c->detect[dir] = 5;
      std::string first = std::move(pb);  // (the bytes held, this segment's included)
      pb.clear();
      pb.shrink_to_fit();
      if (held) sip_tcp(reinterpret_cast<const uint8_t*>(first.data()), uint32_t(held));
      return sip_tcp(data, len);
    }
    // a protocol decided: the bytes held while undecided, then this segment's, go to its parser
    auto hand_over = [&](auto& parser) {
      std::string first = std::move(pb);
      pb.clear();
      pb.shrink_to_fit();
      if (held) parser.data(dir, reinterpret_cast<const uint8_t*>(first.data()), uint32_t(held));
      parser.data(dir, data, len);
    };
    // FTP's control connection: its port, then a reply code or a command
    int ftp = c->app == ids::kAppFtp                 ? 1
              : c->app == ids::kAppNone && c->port21 ? flow::ftp_probe(dir, pd, uint32_t(pb.size()))
                                                     : 0;
    if (ftp < 0 && pb.size() < 16) return;
    if (ftp > 0) {
      c->app = ids::kAppFtp;
      c->detect[dir] = 7;
      if (!c->ftp)
        c->ftp = std::make_unique<flow::FtpConn>([this, c](flow::FtpTx& t, uint8_t what) { on_ftp(*c, t, what); });
      return hand_over(*c->ftp);
    }
    // SMTP: a client's EHLO or HELO, or the greeting on an SMTP port
    int smtp = c->app == ids::kAppSmtp   ? 1
               : c->app == ids::kAppNone ? flow::smtp_probe(dir, pd, uint32_t(pb.size()), c->smtp_port)
                                         : 0;
    if (smtp < 0 && pb.size() < 16) return;
    if (smtp > 0) {
      c->app = ids::kAppSmtp;
      c->detect[dir] = 8;
      if (!c->smtp) {
        c->smtp = std::make_unique<flow::SmtpConn>([this, c](flow::SmtpTx& t, uint8_t what) { on_smtp(*c, t, what); });
        c->smtp->set_file_digests(http_cfg_.file_digests);
      }
      return hand_over(*c->smtp);
    }
    // SSH: an identification line, either side first
    int ssh = c->app == ids::kAppNone ? flow::ssh_detect(pd, uint32_t(pb.size())) : c->app == ids::kAppSsh ? 1 : 0;
    if (ssh < 0) return;  // (fewer than 4 bytes, all in pb)
    if (ssh > 0) {
      c->app = ids::kAppSsh;
      c->detect[dir] = 6;
      if (!c->ssh)
        c->ssh = std::make_unique<flow::SshConn>([this, c](uint8_t d, uint8_t what) { on_ssh(*c, d, what); });
      return hand_over(*c->ssh);
    }
    int d = flow::http_detect(dir, pd, uint32_t(pb.size()));
    if (d < 0 && pb.size() < 16) return;  // more bytes needed (all of them are in pb)
    // a connection already HTTP or DNS from the other side: this side goes to
    // the same parser, whatever its first bytes (as Suricata: one protocol
    // per flow)
    if (d <= 0 && c->http) d = 1;
    if (d <= 0 && c->app == ids::kAppNone) {
      int t = flow::tls_detect(pd, uint32_t(pb.size()));
      if (t < 0) return;  // (fewer than 5 bytes, all in pb)
      if (t > 0) {
        c->app = ids::kAppTls;
        c->tls = std::make_unique<flow::TlsConn>(
            c_.tls, [this, c](flow::TlsInfo& info, uint8_t what) { on_tls(*c, info, what); });
      }
    }
    if (d <= 0 && c->app == ids::kAppNone && c->dns_port) {
      if (pb.size() < 14) return;  // a length and a header
      if (flow::dns_tcp_probe(pd, uint32_t(pb.size()))) c->app = ids::kAppDns;
    }
    if (c->app == ids::kAppDns) {
      c->detect[dir] = 3;
      if (held) dns(pd, uint32_t(held));
    } else if (c->app == ids::kAppTls) {
      c->detect[dir] = 4;
      if (held) tls(pd, uint32_t(held));
    } else {
      c->detect[dir] = d > 0 ? 1 : 2;
    }
    if (d > 0 && !c->http) {
      c->app = ids::kAppHttp;
      c->http = std::make_unique<flow::HttpConn>(http_cfg_, c_.http,
                                                 [this, c](flow::HttpTx& tx, uint8_t what) { on_tx(*c, tx, what); });
    }
    if (c->http && c->detect[dir] == 1 && held) c->http->data(dir, pd, uint32_t(held), cur_ts_);
    pb.clear();
    pb.shrink_to_fit();
  }
  if (c->detect[dir] == 3) return dns(data, len);
  if (c->detect[dir] == 5) return sip_tcp(data, len);
  if (c->detect[dir] == 6) {
    c->ssh->data(dir, data, len);
    return;
  }
  if (c->detect[dir] == 7) {
    c->ftp->data(dir, data, len);
    return;
  }
  if (c->detect[dir] == 8) {
    c->smtp->data(dir, data, len);
    return;
  }
  if (c->detect[dir] == 4) return tls(data, len);
  if (c->http && c->detect[dir] == 1) c->http->data(dir, data, len, cur_ts_);
}

void IdsAppLayer::stream_event(Conn& c, uint8_t dir, uint8_t event) {
  if (!cur_) return;  // (a flow's end: no packet to carry it)
  cur_->stream_events |= uint64_t(1) << event;
  if (log_anomaly_ && log_stream_anomalies_)
    logs_.push_back({c.id,
                     TxLog::Anomaly,
                     dir,
                     0,
                     {{"type", "stream"}, {"event", std::string("stream.") + ids::stream_event_name(event)}},
                     {}});
}

void IdsAppLayer::stream_gap(uint32_t flow, uint8_t dir, uint64_t offset, uint64_t len) {
  Conn* c = slot(flow);
  if (c) deliver_all(*c, dir);  // the data before the hole goes to the parsers first
  // a hole the receiver acknowledged past: data the capture lost (Suricata's
  // gap); one it did not (a connection reset before its data was
  // acknowledged) is no gap of the stream, only of what was sent
  if (c && offset < c->acked[dir]) {
    c_.stream_gaps.add();
    stream_event(*c, dir, ids::kStreamReassemblySeqGap);
  }
  if (c && stream_rules_) {  // the data before the hole is inspected, then the window starts over
    if (cur_) raw_inspect(*c, dir, *cur_, *cur_hits_);
    if (!cur_ && end_info_) {
      raw_inspect(*c, dir, end_info_[dir], end_hits_);
      end_shown_[dir] += c->raw[dir];
      end_shown_[dir] += fmt::format("[{} bytes missing]", len);
      end_gap_[dir] = true;
      // (a flow ending with many holes: the last 64 KiB of them shown)
      if (end_shown_[dir].size() > 65536) end_shown_[dir].erase(0, end_shown_[dir].size() - 65536);
    }
    held_ -= c->raw[dir].size(), waiting_ -= c->fresh[dir];
    c->raw[dir].clear();
    c->pre[dir].clear();
    c->fresh[dir] = 0;
  }
  if (c && c->app == ids::kAppDns) c->dns_tcp[dir].gap();
  if (c && c->detect[dir] == 5) c->sip_tcp[dir].gap(), c->detect[dir] = 2;
  if (c && c->tls) c->tls->gap(dir);
  if (c && c->ssh) c->ssh->gap(dir);
  if (c && c->ftp) c->ftp->gap(dir);
  if (c && c->smtp) c->smtp->gap(dir);
  if (c && c->http) c->http->gap(dir);
  if (c && c->detect[dir] == 0) c->detect[dir] = 2;
}

void IdsAppLayer::raw_inspect(Conn& c, uint8_t dir, const ids::PacketInfo& at, std::vector<TxHit>& hits, bool all) {
  std::string& w = c.raw[dir];
  uint32_t fresh = c.fresh[dir];
  if (!all) {  // only what the receiver acknowledged
    uint64_t start = c.raw_end[dir] - fresh;
    fresh = c.acked[dir] > start ? uint32_t(std::min<uint64_t>(fresh, c.acked[dir] - start)) : 0;
  }
  if (!fresh) return;
  c.fresh[dir] -= fresh;
  waiting_ -= fresh;
  uint32_t pending = c.fresh[dir];  // (bytes after the window, not acknowledged yet)
  ss_.bytes.add(fresh);
  auto n = uint32_t(w.size() - pending), old = n - fresh;
  // inline: new bytes inspected while they were held (a hole before them
  // since filled): a rule found there alone alerted then
  uint32_t seen_a = 0, seen_b = 0;
  if (normalize_ && c.held_to[dir] > c.held_from[dir]) {
    uint64_t base = c.raw_end[dir] - w.size();
    uint64_t lo = std::max(c.held_from[dir], base + old), hi = std::min(c.held_to[dir], base + n);
    if (lo < hi) seen_a = uint32_t(lo - base), seen_b = uint32_t(hi - base);
  }
  inspect_window(c, dir, at, hits, old, n, seen_a, seen_b);
  if (n > stream_window_) {
    held_ -= n - stream_window_;
    w.erase(0, n - stream_window_);  // (the pending bytes stay)
  }
}

void IdsAppLayer::reinspect(Conn& c, uint8_t dir, const ids::PacketInfo& info, std::vector<TxHit>& hits, uint32_t seq,
                            uint64_t before) {
  const flow::DirStream& d = c.stream.d[dir];
  const std::string& w = c.raw[dir];
  if (!d.init || !info.plen || w.empty() || (info.l4[13] & (k::kTcpSyn | k::kTcpRst))) return;
  // the packet's bytes the stream had before it, in the window's inspected part
  uint64_t base = c.raw_end[dir] - w.size(), done = std::min(c.raw_end[dir] - c.fresh[dir], before);
  int64_t off = int64_t(d.next) + int64_t(int32_t(seq - (d.base + uint32_t(d.next))));
  int64_t lo = std::max<int64_t>(off, int64_t(base)), hi = std::min<int64_t>(off + info.plen, int64_t(done));
  if (lo >= hi) return;
  ss_.reinspections.add();
  inspect_window(c, dir, info, hits, uint32_t(lo - int64_t(base)), uint32_t(hi - int64_t(base)));
}

void IdsAppLayer::inspect_held(Conn& c, uint8_t dir, const ids::PacketInfo& info, std::vector<TxHit>& hits,
                               uint32_t seq) {
  const flow::DirStream& d = c.stream.d[dir];
  if (!d.init || !info.plen || (info.l4[13] & (k::kTcpSyn | k::kTcpRst))) return;
  int64_t off = int64_t(d.next) + int64_t(int32_t(seq - (d.base + uint32_t(d.next))));
  uint64_t end = uint64_t(off + int64_t(info.plen));
  if (off <= int64_t(d.next) || end > depth_) return;  // (delivered, in part at least: the window has it)
  uint64_t start = flow::Reassembler::held_run(d, end, stream_window_ + info.plen, held_buf_);
  if (start == end) return;  // (not held: past a cap)
  auto n = uint32_t(held_buf_.size()), old = uint32_t(std::max<int64_t>(off - int64_t(start), 0));
  const auto* s = reinterpret_cast<const uint8_t*>(held_buf_.data());
  held_pre_.clear();
  held_pre_.add(scan_, s, 0, n, start);
  ss_.held_inspections.add();
  match_stream(c, dir, info, hits, held_buf_, start, held_pre_, old, n);
  // What is known found: every match within [off, end) (the window covers
  // it); with the range [from, to) known before, when the window reached
  // back to `from` and the segment follows the range without a gap, every
  // match within [from, end). Data held after this segment was inspected
  // without it (its matches across the two are found when delivered): the
  // range is given up.
  auto after = d.ooo.upper_bound(end);
  --after;  // (a piece holds end - 1)
  uint64_t& from = c.held_from[dir];
  uint64_t& to = c.held_to[dir];
  if (after->first + after->second.size() > end)
    from = to = 0;
  else if (to > from && start <= from && uint64_t(off) <= to)
    to = std::max(to, end);
  else
    from = uint64_t(off), to = end;
}

void IdsAppLayer::inspect_window(Conn& c, uint8_t dir, const ids::PacketInfo& at, std::vector<TxHit>& hits,
                                 uint32_t old, uint32_t n, uint32_t seen_a, uint32_t seen_b) {
  match_stream(c, dir, at, hits, c.raw[dir], c.raw_end[dir] - c.raw[dir].size(), c.pre[dir], old, n, seen_a, seen_b);
}

void IdsAppLayer::match_stream(Conn& c, uint8_t dir, const ids::PacketInfo& at, std::vector<TxHit>& hits,
                               const std::string& w, uint64_t base, ids::StreamPrefilter& pre, uint32_t old, uint32_t n,
                               uint32_t seen_a, uint32_t seen_b) {
  ss_.inspections.add();
  // the rules' header is matched against the direction's sender: the
  // packet that delivered the data, or that packet seen the other way
  // (with the connection's protocol as detection left it: an application
  // protocol's rules read its stream)
  ids::PacketInfo view = at;
  const ids::PacketInfo* info = &view;
  view.app = c.app;
  view.app_known = c.app != ids::kAppNone || c.detect[dir] != 0;
  if ((at.dir & 1) != dir) {
    std::swap(view.src, view.dst);
    std::swap(view.sport, view.dport);
    view.dir = dir;
    view.payload = nullptr, view.plen = 0;
  }
  const auto* s = reinterpret_cast<const uint8_t*>(w.data());
  pre.candidates(*db_, base, scand_, base + old);  // (each piece was scanned as it came: stream_data)
  const auto& rules = db_->rules();
  for (uint32_t r : scand_) {
    const ids::Rule& rule = rules[r];
    if (!ids::header_matches(rule, *info)) continue;
    uint32_t read_from = 0;  // the bytes of w the rule read: from here to n
    if (rule.stream_payload) {
      // A TCP payload rule: the data since the last inspection, its offsets
      // and depths counted from there (Suricata's inspection of the stream),
      // or a match that crosses into it from the window before (found
      // nowhere in that window alone); what came before the connection was
      // established was inspected on its packets
      uint64_t lo = std::max<uint64_t>(base, c.payload_from[dir]);
      if (lo >= base + n) continue;
      auto wfrom = uint32_t(lo - base), ffrom = std::max(old, wfrom);
      if (ffrom < n && ids::payload_matches(rule, s + ffrom, n - ffrom)) {
        read_from = ffrom;
      } else if (ffrom > wfrom && ids::payload_matches(rule, s + wfrom, n - wfrom) &&
                 !ids::payload_matches(rule, s + wfrom, ffrom - wfrom)) {
        read_from = wfrom;
      } else {
        continue;
      }
    } else {
      if (!ids::payload_matches(rule, s, n)) continue;
      if (old && ids::payload_matches(rule, s, old)) continue;  // found in the window before (inspected then)
    }
    if (seen_b > seen_a && ids::payload_matches(rule, s + seen_a, seen_b - seen_a)) continue;  // (found inline)
    if (!ids::flowints_hold(rule, *info)) continue;
    ids::apply_flowbits(rule, *info);
    ss_.matches.add();
    TxHit h{r, nullptr, {}, 0, ids::kAppNone};
    h.stream = true;
    h.dir = dir;
    h.window.assign(w, read_from, n - read_from);
    if (rule.captures) {  // (what its pcres took from the stream bytes it matched in)
      ids::PacketInfo v = *info;
      v.payload = reinterpret_cast<const uint8_t*>(h.window.data()), v.plen = uint32_t(h.window.size());
      ids::rule_captures(rule, nullptr, v, h.vars);
    }
    hits.push_back(std::move(h));
  }
}

void IdsAppLayer::log_file(const Conn& c, flow::HttpTx& tx, uint8_t dir) {
  flow::HttpFile& f = tx.files[dir];
  if (!log_files_ || f.logged || f.state == flow::HttpFile::None || f.state == flow::HttpFile::Open) return;
  f.logged = true;
  nlohmann::json fi = {
      {"filename", f.name}, {"gaps", f.gaps}, {"state", f.state == flow::HttpFile::Closed ? "CLOSED" : "TRUNCATED"},
      {"stored", false},    {"size", f.size}, {"tx_id", tx.index}};
  digests_json(fi, f.digests);
  logs_.push_back({c.id, TxLog::File, dir, tx.index, http_json(tx), std::move(fi)});
}

void IdsAppLayer::log_uploads(const Conn& c, flow::HttpTx& tx) {
  flow::HttpForm* form = tx.form.get();
  if (!log_files_ || !form) return;
  const std::vector<flow::MimeFile>& up = form->mime.files();
  for (; form->logged < up.size() && up[form->logged].closed; ++form->logged) {
    const flow::MimeFile& f = up[form->logged];
    bool whole = form->whole(form->logged);
    nlohmann::json fi = {{"filename", f.name}, {"gaps", false},  {"state", whole ? "CLOSED" : "TRUNCATED"},
                         {"stored", false},    {"size", f.size}, {"tx_id", tx.index}};
    if (whole) digests_json(fi, f.digests);
    logs_.push_back({c.id, TxLog::File, 0, tx.index, http_json(tx), std::move(fi)});
  }
}

void IdsAppLayer::stream_end(uint32_t flow, uint8_t dir) {
  Conn* c = slot(flow);
  if (c) deliver_all(*c, dir);                           // (all of the direction's data first)
  if (c && c->http && cur_) c->http->end(dir, cur_ts_);  // (at the flow's release, close() follows)
}

void IdsAppLayer::log_app_anomalies(const Conn& c, uint16_t app, uint64_t events, uint64_t& logged, uint64_t tx_id) {
  for (uint64_t e = events & ~logged; e; e &= e - 1) {
    std::string name = ids::app_event_name(app, uint8_t(__builtin_ctzll(e)));
    for (char& ch : name) ch = char(std::toupper(uint8_t(ch)));
    logs_.push_back(
        {c.id,
         TxLog::Anomaly,
         uint8_t(cur_ ? cur_->dir & 1 : 0),
         tx_id,
         {{"app_proto", ids::app_name(app)}, {"type", "applayer"}, {"event", name}, {"layer", "proto_parser"}},
         {}});
    logged |= e & -e;
  }
}

void IdsAppLayer::on_tx(Conn& c, flow::HttpTx& tx, uint8_t what) {
  if (what != flow::HttpTx::kEnded && cur_ && db_) {
    match_tx(tx);
    if (collect_) progressed_.push_back(&tx);
  }
  if (log_anomaly_) log_app_anomalies(c, ids::kAppHttp, tx.events, tx.events_logged, tx.index);
  // records of what ended (unless a config rule said not to): a file with
  // its body, a transaction when both sides are done or the connection ends
  if (tx.no_log) return;
  log_uploads(c, tx);
  if (what == flow::HttpTx::kRequestDone) log_file(c, tx, 0);
  if (what == flow::HttpTx::kResponseDone || what == flow::HttpTx::kEnded) {
    if (what == flow::HttpTx::kEnded) log_file(c, tx, 0);
    log_file(c, tx, 1);
    if (log_http_) logs_.push_back({c.id, TxLog::Http, 0, tx.index, http_json(tx), {}});
  }
}

const std::vector<uint32_t>& IdsAppLayer::tx_candidates(const ids::TxBuffers& a, const ids::TxBuffers* b) {
  db_->tx_candidates(a, cand_);
  if (b) {
    db_->tx_candidates(*b, cand_b_);
    size_t n = cand_.size();
    cand_.insert(cand_.end(), cand_b_.begin(), cand_b_.end());
    std::inplace_merge(cand_.begin(), cand_.begin() + std::ptrdiff_t(n), cand_.end());
    cand_.erase(std::unique(cand_.begin(), cand_.end()), cand_.end());
  }
  return cand_;
}

void IdsAppLayer::stream_payload(Conn& c, uint8_t dir) {
  if (!db_ || !c.http || !cur_ || !cur_->plen || db_->tx_payload_rules().empty()) return;
  const auto& rules = db_->rules();
  c.http->each([&](flow::HttpTx& tx) {
    using T = flow::HttpTx;
    if ((tx.progress & T::kEnded) ||
        !(tx.progress & (dir ? T::kResponseHeaders : T::kRequestLine | T::kRequestHeaders)))
      return;
    bool fresh = false;
    for (uint32_t r : db_->tx_payload_rules()) {
      const ids::Rule& rule = rules[r];
      if (rule.app != ids::kAppHttp || rule.response_side() != (dir == 1) ||
          std::find(tx.stream_matched.begin(), tx.stream_matched.end(), r) != tx.stream_matched.end() ||
          std::find(tx.alerted.begin(), tx.alerted.end(), r) != tx.alerted.end() ||
          !ids::tx_payload_matches(rule, *cur_))
        continue;
      tx.stream_matched.push_back(r);
      fresh = true;
    }
    if (fresh) match_tx(tx);
  });
}

void IdsAppLayer::match_tx(flow::HttpTx& tx) {
  cur_->app = ids::kAppHttp;  // this packet's data made the transaction progress
  using ids::Buf;
  ids::TxBuffers b;
  b.events = tx.events;
  tx.events_seen[cur_->dir & 1] = tx.events;
  if (tx.progress & (flow::HttpTx::kRequestLine | flow::HttpTx::kRequestHeaders)) {
    b.set(Buf::HttpMethod, tx.method);
    b.set(Buf::HttpUri, tx.uri);
    b.set(Buf::HttpUriRaw, tx.uri_raw);
    b.set(Buf::HttpProtocol, tx.protocol);
    b.set(Buf::HttpRequestLine, tx.request_line);
  }
  if (tx.progress & flow::HttpTx::kRequestHeaders) {
    // no host (no Host header, nor one in the URI): no buffer (Suricata's)
    if (!tx.host.empty())
      b.set(Buf::HttpHost, tx.host);
    else
      b.set_absent(Buf::HttpHost);
    if (!tx.host_raw.empty())
      b.set(Buf::HttpHostRaw, tx.host_raw);
    else
      b.set_absent(Buf::HttpHostRaw);
    // a header the request did not send is no buffer (one sent empty is a buffer of length 0)
    auto header = [&](Buf k, const std::string& v, uint32_t bit) {
      if (tx.request_has & bit)
        b.set(k, v);
      else
        b.set_absent(k);
    };
    using T = flow::HttpTx;
    header(Buf::HttpUserAgent, tx.user_agent, T::kUserAgent);
    header(Buf::HttpReferer, tx.referer, T::kReferer);
    header(Buf::HttpAccept, tx.accept, T::kAccept);
    header(Buf::HttpAcceptEnc, tx.accept_enc, T::kAcceptEnc);
    header(Buf::HttpAcceptLang, tx.accept_lang, T::kAcceptLang);
  }
  if (tx.progress & (flow::HttpTx::kRequestDone | flow::HttpTx::kRequestBodyEnd))
    b.set(Buf::HttpRequestBody, tx.request_body);
  bool resp = tx.progress & flow::HttpTx::kResponseHeaders;
  if (resp) {
    b.set(Buf::HttpStatCode, tx.stat_code);
    b.set(Buf::HttpStatMsg, tx.stat_msg);
    b.set(Buf::HttpResponseLine, tx.response_line);
    b.set(Buf::HttpServer, tx.server);
    b.set(Buf::HttpLocation, tx.location);
  }
  if (tx.progress & (flow::HttpTx::kResponseDone | flow::HttpTx::kResponseBodyEnd))
    b.set(Buf::HttpResponseBody, tx.response_body);
  // the files' names once opened, their sizes once ended (either side's,
  // and each side's), their digests once whole
  using F = ids::FieldCond;
  std::vector<std::string> file_names;
  for (int d = 0; d < 2; ++d) {
    const flow::HttpFile& f = tx.files[d];
    if (f.state != flow::HttpFile::None) file_names.push_back(f.name);
    if (f.state == flow::HttpFile::Closed) b.files.push_back({f.digests.md5(), f.digests.sha1(), f.digests.sha256()});
    if (f.state != flow::HttpFile::Closed && f.state != flow::HttpFile::Truncated) continue;
    b.nums[F::FileSize - F::kTxFirst].push_back(f.size);
    b.nums[(d == 0 ? F::FileSizeToServer : F::FileSizeToClient) - F::kTxFirst] = {f.size};
  }
  if (const flow::HttpForm* form = tx.form.get()) {  // a form's uploads: names, and digests once whole
    const std::vector<flow::MimeFile>& up = form->mime.files();
    for (size_t i = 0; i < up.size(); ++i) {
      file_names.push_back(up[i].name);
      if (form->whole(i)) b.files.push_back({up[i].digests.md5(), up[i].digests.sha1(), up[i].digests.sha256()});
    }
  }
  if (!file_names.empty()) b.set_many(Buf::HttpFileName, file_names);
  // buffers either side has: the request's for rules on the request, the
  // response's for rules on the response
  ids::TxBuffers req = b, res = b;
  if (tx.progress & flow::HttpTx::kRequestHeaders) {
    req.set(Buf::HttpHeader, tx.request_headers);
    req.set(Buf::HttpHeaderRaw, tx.request_headers_raw);
    req.set(Buf::HttpCookie, tx.cookie);
    req.set(Buf::HttpContentType, tx.content_type);
    req.set(Buf::HttpConnection, tx.request_connection);
    req.set(Buf::HttpContentLen, tx.request_content_len);
    req.set(Buf::HttpStart, tx.request_start);
    req.set_many(Buf::HttpRequestHeader, tx.request_header_list);
    req.set(Buf::HttpHeaderNames, tx.request_header_names);
  }
  if (resp) {
    res.set(Buf::HttpHeader, tx.response_headers);
    res.set(Buf::HttpHeaderRaw, tx.response_headers_raw);
    res.set(Buf::HttpCookie, tx.response_cookie);
    res.set(Buf::HttpContentType, tx.content_type);
    res.set(Buf::HttpConnection, tx.response_connection);
    res.set(Buf::HttpContentLen, tx.response_content_len);
    res.set(Buf::HttpStart, tx.response_start);
    res.set_many(Buf::HttpResponseHeader, tx.response_header_list);
    res.set(Buf::HttpHeaderNames, tx.response_header_names);
  }
  // file.data with no side: the response's body and the form's files whole
  // (a multi-buffer), for rules that say no side; on the client's side, the
  // form's files, not its body (the buffers point into these vectors)
  ids::TxBuffers either, req_files, req_scan;  // (req_scan: the prefilter's, the body and the files)
  std::vector<std::string> up_files, up_and_body, up_and_response;
  if (const flow::HttpForm* form = tx.form.get()) {
    for (size_t i = 0; i < form->mime.files().size(); ++i)
      if (form->whole(i)) up_files.push_back(form->mime.file_data()[i]);
  }
  const bool uploads = !up_files.empty(), form = tx.form != nullptr;
  if (form) {
    up_and_body = up_files;
    req_files = req;
    req_files.set_many(Buf::HttpRequestBody, up_files);  // (no whole file yet: nothing to match)
    req_scan = req;
    if (req.has(Buf::HttpRequestBody) && !req.absent(Buf::HttpRequestBody)) up_and_body.push_back(tx.request_body);
    req_scan.set_many(Buf::HttpRequestBody, up_and_body);
  }
  if (uploads) {
    up_and_response = up_files;
    either = res;
    if (res.has(Buf::HttpResponseBody) && !res.absent(Buf::HttpResponseBody))
      up_and_response.push_back(tx.response_body);
    either.set_many(Buf::HttpResponseBody, up_and_response);
  }
  const auto& rules = db_->rules();
  for (uint32_t r : tx_candidates(form ? req_scan : req, uploads ? &either : &res)) {
    if (std::find(tx.alerted.begin(), tx.alerted.end(), r) != tx.alerted.end()) continue;
    const ids::Rule& rule = rules[r];
    if (rule.app != ids::kAppHttp) continue;
    const ids::TxBuffers& use = uploads && rule.file_data_either ? either
                                : form && rule.file_data_request ? req_files
                                : rule.response_side()           ? res
                                                                 : req;
    // payload items that matched data delivered for this transaction
    // (stream_payload) stay matched while its buffers come
    bool stream_done = std::find(tx.stream_matched.begin(), tx.stream_matched.end(), r) != tx.stream_matched.end();
    if (!ids::tx_matches(rule, use, *cur_, stream_done) || !ids::flowints_hold(rule, *cur_)) continue;
    tx.alerted.push_back(r);
    tx.no_log |= rule.no_tx_log;
    ids::apply_flowbits(rule, *cur_);
    cur_hits_->push_back({r, &tx, {}, tx.index, ids::kAppHttp});
    if (rule.captures) ids::rule_captures(rule, &use, *cur_, cur_hits_->back().vars);
  }
}

}  // namespace shoal

namespace shoal {

nlohmann::json IdsAppLayer::dns_json(const flow::DnsMessage& m, uint64_t tx_id) {
  nlohmann::json j = {{"version", 3},
                      {"type", m.qr() ? "response" : "request"},
                      {"tx_id", tx_id},
                      {"id", m.id},
                      {"flags", fmt::format("{:x}", m.flags)}};
  for (auto [bit, name] : {std::pair<uint16_t, const char*>{0x8000, "qr"},
                           {0x0400, "aa"},
                           {0x0200, "tc"},
                           {0x0100, "rd"},
                           {0x0080, "ra"},
                           {0x0040, "z"}})
    if (m.flags & bit) j[name] = true;
  j["opcode"] = m.opcode();
  j["rcode"] = ids::dns_rcode_name(m.rcode());
  if (!m.queries.empty()) {
    nlohmann::json q = nlohmann::json::array();
    for (const flow::DnsQuestion& x : m.queries)
      q.push_back({{"rrname", x.name}, {"rrtype", ids::dns_rrtype_name(x.type)}});
    j["queries"] = std::move(q);
  }
  auto records = [](const std::vector<flow::DnsRecord>& rs) {
    nlohmann::json a = nlohmann::json::array();
    for (const flow::DnsRecord& r : rs) {
      nlohmann::json x = {{"rrname", r.name}, {"rrtype", ids::dns_rrtype_name(r.type)}, {"ttl", r.ttl}};
      if (!r.rdata.empty()) x["rdata"] = r.rdata;
      if (r.has_soa)
        x["soa"] = {{"mname", r.soa.mname},     {"rname", r.soa.rname}, {"serial", r.soa.serial},
                    {"refresh", r.soa.refresh}, {"retry", r.soa.retry}, {"expire", r.soa.expire},
                    {"minimum", r.soa.minimum}};
      a.push_back(std::move(x));
    }
    return a;
  };
  if (!m.answers.empty()) {
    j["answers"] = records(m.answers);
    nlohmann::json g = nlohmann::json::object();  // Suricata's "grouped": rdata by type
    for (const flow::DnsRecord& r : m.answers)
      if (!r.rdata.empty()) g[ids::dns_rrtype_name(r.type)].push_back(r.rdata);
    if (!g.empty()) j["grouped"] = std::move(g);
  }
  if (!m.authorities.empty()) j["authorities"] = records(m.authorities);
  if (!m.additionals.empty()) j["additionals"] = records(m.additionals);
  return j;
}

std::vector<nlohmann::json> IdsAppLayer::dns_json_v2(const flow::DnsMessage& m, uint64_t tx_id) {
  std::vector<nlohmann::json> out;
  if (!m.qr()) {
    for (const flow::DnsQuestion& q : m.queries) {
      nlohmann::json j = {{"type", "query"},
                          {"id", m.id},
                          {"rrname", q.name},
                          {"rrtype", ids::dns_rrtype_name(q.type)},
                          {"tx_id", tx_id}};
      if (m.flags & 0x0040) j["z"] = true;
      j["opcode"] = m.opcode();
      out.push_back(std::move(j));
    }
    return out;
  }
  // the answer: the version 3 object's header, first question, records
  nlohmann::json v3 = dns_json(m, tx_id);
  nlohmann::json j = {{"version", 2}, {"type", "answer"}, {"id", m.id}, {"flags", v3["flags"]}};
  for (const char* f : {"qr", "aa", "tc", "rd", "ra", "z"})
    if (v3.contains(f)) j[f] = true;
  j["opcode"] = m.opcode();
  if (!m.queries.empty()) j["rrname"] = m.queries[0].name, j["rrtype"] = ids::dns_rrtype_name(m.queries[0].type);
  j["rcode"] = v3["rcode"];
  for (const char* f : {"answers", "grouped", "authorities"})
    if (v3.contains(f)) j[f] = v3[f];
  out.push_back(std::move(j));
  return out;
}

void IdsAppLayer::dns_message(Conn& c, uint8_t dir, const uint8_t* d, uint32_t n) {
  flow::DnsMessage m;
  if (!flow::dns_parse(d, n, m)) {
    c_.dns_malformed.add();
    failed_ |= cur_ != nullptr;  // (Suricata's DNS parser fails the data)
    return;
  }
  c_.dns_messages.add();
  if (m.malformed) c_.dns_malformed.add();
  uint64_t tx_id = c.dns_tx++;
  nlohmann::json j = dns_json(m, tx_id);
  // Suricata's DNS events: a message the wrong way, the Z bit, an opcode
  // past 6, a section that could not be read, a name past its bound
  uint64_t events = 0;
  auto ev = [&](ids::DnsEvent e) { events |= uint64_t(1) << e; };
  if (dir == 0 && m.qr()) ev(ids::kDnsNotARequest);
  if (dir == 1 && !m.qr()) ev(ids::kDnsNotAResponse);
  if (m.flags & 0x0040) ev(ids::kDnsZFlagSet);
  if (m.opcode() >= 7) ev(ids::kDnsInvalidOpcode);
  if (m.bad_section == 0 || m.bad_section == 1) ev(ids::kDnsMalformedData);
  if (m.bad_section == 2) ev(ids::kDnsInvalidAuthorities);
  if (m.bad_section == 3) ev(ids::kDnsInvalidAdditionals);
  if (m.name_truncated) ev(ids::kDnsNameTooLong);
  if (cur_ && db_ && !db_->tx_rules().empty()) {
    cur_->app = ids::kAppDns;
    // the buffers: names of each section, as multi-buffers
    std::vector<std::string> queries, answers, all;
    for (const auto& q : m.queries) queries.push_back(q.name);
    for (const auto& a : m.answers) answers.push_back(a.name);
    ids::TxBuffers b;
    b.set_many(ids::Buf::DnsQueriesRrname, queries);
    b.set_many(ids::Buf::DnsAnswersRrname, answers);
    if (!m.qr()) b.set_many(ids::Buf::DnsQuery, queries);
    if (m.qr()) {
      all = queries;
      all.insert(all.end(), answers.begin(), answers.end());
      // every name of the response: the records' and those in their rdata
      for (const auto* sec : {&m.answers, &m.authorities, &m.additionals})
        for (const auto& r : *sec) {
          if (sec != &m.answers) all.push_back(r.name);
          all.insert(all.end(), r.rdata_names.begin(), r.rdata_names.end());
        }
      b.set_many(ids::Buf::DnsResponseRrname, all);
    }
    b.events = events;
    b.nums[ids::FieldCond::DnsOpcode - ids::FieldCond::kTxFirst] = {m.opcode()};
    b.nums[ids::FieldCond::DnsRcode - ids::FieldCond::kTxFirst] = {m.rcode()};
    auto& types = b.nums[ids::FieldCond::DnsRrtype - ids::FieldCond::kTxFirst];
    for (const auto& q : m.queries) types.push_back(q.type);
    const auto& rules = db_->rules();
    for (uint32_t r : tx_candidates(b)) {
      const ids::Rule& rule = rules[r];
      if (rule.app != ids::kAppDns || !ids::tx_matches(rule, b, *cur_)) continue;
      if (!ids::flowints_hold(rule, *cur_)) continue;
      ids::apply_flowbits(rule, *cur_);
      cur_hits_->push_back({r, nullptr, j, tx_id, ids::kAppDns});
      if (rule.captures) ids::rule_captures(rule, &b, *cur_, cur_hits_->back().vars);
    }
  }
  if (guess_limit_) {
    c.guess.push_back({tx_id, dir, 0, j});
    if (c.guess.size() > 16) c.guess.pop_front();  // (only the last two can be guessed)
  }
  if (log_dns_ && dns_version_ == 2) {
    // (written the flow's way, as Suricata's version 2 records are)
    for (nlohmann::json& r : dns_json_v2(m, tx_id)) logs_.push_back({c.id, TxLog::Dns, 0, tx_id, std::move(r), {}});
  } else if (log_dns_) {
    logs_.push_back({c.id, TxLog::Dns, dir, tx_id, std::move(j), {}});
  }
  if (log_anomaly_)  // an EVE anomaly record per event, as Suricata's applayer anomalies
    for (uint64_t e = events; e; e &= e - 1)
      logs_.push_back({c.id,
                       TxLog::Anomaly,
                       dir,
                       tx_id,
                       {{"app_proto", "dns"},
                        {"type", "applayer"},
                        {"event", ids::app_event_name(ids::kAppDns, uint8_t(__builtin_ctzll(e)))},
                        {"layer", "proto_parser"}},
                       {}});
}

}  // namespace shoal

namespace shoal {

nlohmann::json IdsAppLayer::tls_json(const flow::TlsInfo& t) {
  nlohmann::json j = nlohmann::json::object();
  if (!t.certs.empty()) {
    const flow::TlsCert& c = t.certs[0];
    j["subject"] = c.subject;
    j["issuerdn"] = c.issuer;
    j["serial"] = c.serial;
    j["fingerprint"] = c.fingerprint;
    if (!c.san.empty()) j["subjectaltname"] = c.san;
  }
  // (as Suricata: resumed only when no certificate came)
  if (t.session_resumed && t.certs.empty()) j["session_resumed"] = true;
  if (!t.sni.empty()) j["sni"] = t.sni;
  j["version"] = t.version_text();
  if (!t.certs.empty()) {
    j["notbefore"] = t.certs[0].not_before;
    j["notafter"] = t.certs[0].not_after;
  }
  if (t.client_hello && !t.ja3.empty()) {
    j["ja3"] = {{"hash", t.ja3_hash}, {"string", t.ja3}};
    j["ja4"] = t.ja4;
  }
  if (t.server_hello) j["ja3s"] = {{"hash", t.ja3s_hash}, {"string", t.ja3s}};
  return j;
}

namespace {
// Whether a TLS rule reads only what Suricata inspects in both directions
// (ssl_version, ssl_state: its generic TLS list): such a rule alerts once
// each way. The others read one side's messages (SNI, JA3, certificates,
// ...) and alert once per handshake.
bool both_ways(const ids::Rule& r) {
  for (const ids::Item& it : r.items)
    if (!ids::packet_buf(it.buf)) return false;
  for (const ids::FieldCond& f : r.tx_fields)
    if (f.field != ids::FieldCond::SslVersion && f.field != ids::FieldCond::SslState) return false;
  return !r.tx_fields.empty();
}
}  // namespace

void IdsAppLayer::on_tls(Conn& c, const flow::TlsInfo& t, uint8_t what) {
  // (no packet when the flow's end delivers what reassembly still held: no alert then)
  if (cur_) cur_->app = ids::kAppTls;
  if (cur_ && db_ && !db_->tx_rules().empty()) {
    // the buffers the handshake has so far
    ids::TxBuffers b;
    std::vector<std::string> ders;
    if (t.client_hello) {
      b.set(ids::Buf::TlsSni, t.sni);
      if (!t.ja3.empty()) {  // (none for an SSLv2-format hello)
        b.set(ids::Buf::Ja3Hash, t.ja3_hash);
        b.set(ids::Buf::Ja3String, t.ja3);
        b.set(ids::Buf::Ja4Hash, t.ja4);
      }
    }
    if (t.server_hello) {
      b.set(ids::Buf::Ja3sHash, t.ja3s_hash);
      b.set(ids::Buf::Ja3sString, t.ja3s);
    }
    b.events = t.events;  // (app-layer-event:tls.*)
    // the certificate buffers: the server's chain, and (a second try)
    // the client's, as Suricata reads both
    ids::TxBuffers client = b;
    auto certs = [&](ids::TxBuffers& x, const std::vector<flow::TlsCert>& chain, std::vector<std::string>& der) {
      if (chain.empty()) return;
      x.set(ids::Buf::TlsCertSubject, chain[0].subject);
      x.set(ids::Buf::TlsCertIssuer, chain[0].issuer);
      x.set(ids::Buf::TlsCertSerial, chain[0].serial);
      x.set(ids::Buf::TlsCertFingerprint, chain[0].fingerprint);
      for (const flow::TlsCert& y : chain) der.push_back(y.der);
      x.set_many(ids::Buf::TlsCerts, der);
      x.set_many(ids::Buf::TlsSubjectAltName, chain[0].san);
      x.nums[ids::FieldCond::TlsCertChainLen - ids::FieldCond::kTxFirst] = {chain.size()};
    };
    // the random of this packet's side's hello
    const std::string& random = cur_->dir == 0 ? t.client_random : t.server_random;
    if (random.size() == 32) {
      b.set(ids::Buf::TlsRandom, random);
      b.set(ids::Buf::TlsRandomTime, std::string_view(random).substr(0, 4));
      b.set(ids::Buf::TlsRandomBytes, std::string_view(random).substr(4));
    }
    std::vector<std::string> client_ders;
    // the numbers: the negotiated version, the handshake state this event is,
    // the version of this direction's messages
    using F = ids::FieldCond;
    uint16_t ver = t.server_hello ? t.selected_version : 0;  // negotiated: known from the ServerHello
    uint16_t dir_ver = (cur_->dir == 0 || !t.server_hello) ? t.client_version : t.selected_version;
    uint64_t state = what == flow::TlsConn::kClientHello   ? F::kClientHello
                     : what == flow::TlsConn::kServerHello ? F::kServerHello
                     : what == flow::TlsConn::kClientKeyx  ? F::kClientKeyx
                     : what == flow::TlsConn::kServerKeyx  ? F::kServerKeyx
                                                           : F::kUnknown;
    uint64_t vbit = dir_ver == 0x0002   ? 1
                    : dir_ver == 0x0300 ? 2
                    : dir_ver == 0x0301 ? 4
                    : dir_ver == 0x0302 ? 8
                    : dir_ver == 0x0303 ? 16
                    : dir_ver == 0x0304 ? 32
                                        : 0;
    if (ver) b.nums[F::TlsVersion - F::kTxFirst] = {ver};
    b.nums[F::SslState - F::kTxFirst] = {state};
    if (vbit) b.nums[F::SslVersion - F::kTxFirst] = {vbit};
    client.nums[F::TlsVersion - F::kTxFirst] = b.nums[F::TlsVersion - F::kTxFirst];
    client.nums[F::SslState - F::kTxFirst] = b.nums[F::SslState - F::kTxFirst];
    client.nums[F::SslVersion - F::kTxFirst] = b.nums[F::SslVersion - F::kTxFirst];
    certs(b, t.certs, ders);
    certs(client, t.client_certs, client_ders);
    nlohmann::json meta;
    const auto& rules = db_->rules();
    for (uint32_t r : tx_candidates(b, t.client_certs.empty() ? nullptr : &client)) {
      const ids::Rule& rule = rules[r];
      if (rule.app != ids::kAppTls) continue;
      uint32_t key = 2 * r + (both_ways(rule) ? cur_->dir & 1 : 0);
      if (std::find(c.tls_alerted.begin(), c.tls_alerted.end(), key) != c.tls_alerted.end()) continue;
      if (!ids::tx_matches(rule, b, *cur_) && (t.client_certs.empty() || !ids::tx_matches(rule, client, *cur_)))
        continue;
      c.tls_alerted.push_back(key);
      if (!ids::flowints_hold(rule, *cur_)) continue;
      ids::apply_flowbits(rule, *cur_);
      if (meta.is_null()) meta = tls_json(t);
      cur_hits_->push_back({r, nullptr, meta, 0, ids::kAppTls});
    }
  }
  if (log_anomaly_) log_app_anomalies(c, ids::kAppTls, t.events, c.tls_events_logged, 0);
  if (what == flow::TlsConn::kHandshakeDone && log_tls_ && !c.tls_logged) {
    c.tls_logged = true;
    logs_.push_back({c.id, TxLog::Tls, 0, 0, tls_json(t), {}});
  }
}

}  // namespace shoal

namespace shoal {

nlohmann::json IdsAppLayer::sip_json(const flow::SipMessage& m) {
  if (m.request) return {{"method", m.method}, {"uri", m.uri}, {"version", m.version}, {"request_line", m.first_line}};
  return {{"version", m.version}, {"code", m.code}, {"reason", m.reason}, {"response_line", m.first_line}};
}

bool IdsAppLayer::sip_message(Conn& c, uint8_t dir, const flow::SipMessage& m) {
  if (m.request != (dir == 0)) {  // (Suricata parses requests to the server, responses to the client)
    c_.sip_errors.add();
    failed_ |= cur_ != nullptr;
    return false;
  }
  c_.sip_messages.add();
  uint64_t tx_id = c.sip_tx++;
  nlohmann::json j = sip_json(m);
  if (cur_ && db_ && !db_->tx_rules().empty()) {
    cur_->app = ids::kAppSip;
    using ids::Buf;
    ids::TxBuffers b;
    if (m.request) {
      b.set(Buf::SipMethod, m.method);
      b.set(Buf::SipUri, m.uri);
      b.set(Buf::SipRequestLine, m.first_line);
    } else {
      b.set(Buf::SipStatCode, m.code);
      b.set(Buf::SipStatMsg, m.reason);
      b.set(Buf::SipResponseLine, m.first_line);
    }
    b.set(Buf::SipProtocol, m.version);
    // the headers: every value of each (a header may repeat)
    static constexpr std::pair<Buf, const char*> kHeaders[] = {{Buf::SipFrom, "from"},
                                                               {Buf::SipTo, "to"},
                                                               {Buf::SipVia, "via"},
                                                               {Buf::SipUserAgent, "user-agent"},
                                                               {Buf::SipContentType, "content-type"},
                                                               {Buf::SipContentLength, "content-length"}};
    std::vector<std::string> values[std::size(kHeaders)];
    for (size_t i = 0; i < std::size(kHeaders); ++i) {
      values[i] = m.values(kHeaders[i].second);
      b.set_many(kHeaders[i].first, values[i]);
    }
    const auto& rules = db_->rules();
    for (uint32_t r : tx_candidates(b)) {
      const ids::Rule& rule = rules[r];
      if (rule.app != ids::kAppSip || !ids::tx_matches(rule, b, *cur_)) continue;
      if (!ids::flowints_hold(rule, *cur_)) continue;
      ids::apply_flowbits(rule, *cur_);
      cur_hits_->push_back({r, nullptr, j, tx_id, ids::kAppSip});
      if (rule.captures) ids::rule_captures(rule, &b, *cur_, cur_hits_->back().vars);
    }
  }
  if (log_sip_) logs_.push_back({c.id, TxLog::Sip, dir, tx_id, std::move(j), {}});
  return true;
}

}  // namespace shoal

namespace shoal {

nlohmann::json IdsAppLayer::ssh_json(const flow::SshConn& s) {
  nlohmann::json j = nlohmann::json::object();
  for (uint8_t dir : {0, 1}) {
    const flow::SshSide& x = s.side(dir);
    if (!x.banner) continue;
    nlohmann::json side = {{"proto_version", x.proto_version}, {"software_version", x.software_version}};
    if (x.kexinit) side["hassh"] = {{"hash", x.hassh}, {"string", x.hassh_string}};
    j[dir == 0 ? "client" : "server"] = std::move(side);
  }
  return j;
}

void IdsAppLayer::on_ssh(Conn& c, uint8_t dir, uint8_t what) {
  if (cur_) cur_->app = ids::kAppSsh;
  const flow::SshConn& s = *c.ssh;
  if (cur_ && db_ && !db_->tx_rules().empty() && what != flow::SshConn::kNewkeys) {
    // the buffers of this side (the one whose data this is)
    using ids::Buf;
    ids::TxBuffers b;
    const flow::SshSide& x = s.side(dir);
    if (x.banner) {
      b.set(Buf::SshProto, x.proto_version);
      b.set(Buf::SshSoftware, x.software_version);
    }
    if (x.kexinit) {
      b.set(dir == 0 ? Buf::SshHassh : Buf::SshHasshServer, x.hassh);
      b.set(dir == 0 ? Buf::SshHasshString : Buf::SshHasshServerString, x.hassh_string);
    }
    nlohmann::json meta;
    const auto& rules = db_->rules();
    for (uint32_t r : tx_candidates(b)) {
      const ids::Rule& rule = rules[r];
      if (rule.app != ids::kAppSsh) continue;
      uint32_t key = r * 2 + dir;  // (a rule may alert once for each side, as Suricata's)
      if (std::find(c.ssh_alerted.begin(), c.ssh_alerted.end(), key) != c.ssh_alerted.end()) continue;
      if (!ids::tx_matches(rule, b, *cur_)) continue;
      c.ssh_alerted.push_back(key);
      if (!ids::flowints_hold(rule, *cur_)) continue;
      ids::apply_flowbits(rule, *cur_);
      if (meta.is_null()) meta = ssh_json(s);
      cur_hits_->push_back({r, nullptr, meta, 0, ids::kAppSsh});
    }
  }
  if (s.done() && log_ssh_ && !c.ssh_logged) {
    c.ssh_logged = true;
    logs_.push_back({c.id, TxLog::Ssh, 0, 0, ssh_json(s), {}});
  }
}

}  // namespace shoal

namespace shoal {

nlohmann::json IdsAppLayer::ftp_json(const flow::FtpTx& t) {
  nlohmann::json j = nlohmann::json::object();
  if (!t.command.empty()) j["command"] = t.command;
  if (!t.command_data.empty()) {
    j["command_data"] = t.command_data;
    j["command_truncated"] = t.request_too_long;  // (Suricata's: beside the data)
  }
  if (!t.replies.empty()) j["reply"] = t.replies;
  if (!t.codes.empty()) j["completion_code"] = t.codes;
  if (t.dynamic_port >= 0) j["dynamic_port"] = t.dynamic_port;
  if (t.mode) j["mode"] = t.mode == 1 ? "active" : "passive";
  j["reply_received"] = t.reply_received ? "yes" : "no";
  j["reply_truncated"] = t.response_too_long;
  return j;
}

// Which way a rule on FTP transactions is inspected (1 to the server, 2 to
// the client): the command's buffers to the server, the replies' to the
// client, mode and port either way (as Suricata registers them).
static uint8_t ftp_rule_dirs(const ids::Rule& r) {
  uint8_t d = 3;
  for (const ids::Item& it : r.items) {
    if (it.buf == ids::Buf::FtpCommand || it.buf == ids::Buf::FtpCommandData) d &= 1;
    if (it.buf == ids::Buf::FtpCompletionCode || it.buf == ids::Buf::FtpReply) d &= 2;
  }
  for (const ids::FieldCond& f : r.tx_fields)
    if (f.field == ids::FieldCond::FtpReplyReceived) d &= 2;
  if (r.app_events >> ids::kFtpRequestCommandTooLong & 1) d &= 1;
  if (r.app_events >> ids::kFtpResponseCommandTooLong & 1) d &= 2;
  return d;
}

// A transaction's events (ids::FtpEvent bits).
static uint64_t ftp_events(const flow::FtpTx& t) {
  auto bit = [](bool on, ids::FtpEvent e) { return on ? uint64_t(1) << e : 0; };
  return bit(t.request_too_long, ids::kFtpRequestCommandTooLong) |
         bit(t.response_too_long, ids::kFtpResponseCommandTooLong) | bit(t.file_before_port, ids::kFtpFileBeforePort) |
         bit(t.file_without_name, ids::kFtpFileWithoutName);
}

void IdsAppLayer::match_ftp(flow::FtpTx& t, uint8_t dir) {
  if (!cur_ || !db_ || db_->tx_rules().empty()) return;
  cur_->app = ids::kAppFtp;
  using ids::Buf;
  using F = ids::FieldCond;
  ids::TxBuffers b;
  if (!t.command.empty()) {
    b.set(Buf::FtpCommand, t.command);
    b.set(Buf::FtpCommandData, t.command_data);
  }
  if (t.reply_received) {
    b.set_many(Buf::FtpCompletionCode, t.codes);
    b.set_many(Buf::FtpReply, t.replies);
  }
  if (t.mode) b.nums[F::FtpMode - F::kTxFirst] = {t.mode};
  if (t.dynamic_port >= 0) b.nums[F::FtpDynamicPort - F::kTxFirst] = {uint64_t(t.dynamic_port)};
  b.nums[F::FtpReplyReceived - F::kTxFirst] = {t.reply_received ? 1u : 0u};
  b.events = ftp_events(t);
  nlohmann::json meta;
  const auto& rules = db_->rules();
  for (uint32_t r : tx_candidates(b)) {
    const ids::Rule& rule = rules[r];
    uint32_t key = r * 2 + dir;  // (a rule may alert once each way)
    if (rule.app != ids::kAppFtp || !(ftp_rule_dirs(rule) >> dir & 1)) continue;
    if (std::find(t.alerted.begin(), t.alerted.end(), key) != t.alerted.end()) continue;
    if (!ids::tx_matches(rule, b, *cur_)) continue;
    t.alerted.push_back(key);
    if (!ids::flowints_hold(rule, *cur_)) continue;
    ids::apply_flowbits(rule, *cur_);
    if (meta.is_null()) meta = ftp_json(t);
    cur_hits_->push_back({r, nullptr, meta, t.index, ids::kAppFtp});
    if (rule.captures) ids::rule_captures(rule, &b, *cur_, cur_hits_->back().vars);
  }
}

void IdsAppLayer::on_ftp(Conn& c, flow::FtpTx& t, uint8_t what) {
  uint64_t events = ftp_events(t);
  if (cur_) cur_->app = ids::kAppFtp;
  if (what == flow::FtpConn::kRequest) c_.ftp_transactions.add();  // (a command's transaction begins)
  match_ftp(t, what == flow::FtpConn::kRequest ? 0 : 1);
  if (what == flow::FtpConn::kDone && c.ftp_done.size() < flow::kFtpMaxTx) c.ftp_done.push_back(t);
  if (what == flow::FtpConn::kDone && db_ && !db_->tx_rules().empty()) {  // (what its alerts to be logged show)
    c.ftp_recent.emplace_back(t.index, ftp_json(t));
    if (c.ftp_recent.size() > 4) c.ftp_recent.pop_front();
  }
  // the events once (at the command, or at the reply for a reply's), as anomaly records
  constexpr uint64_t kReplyEvents = uint64_t(1) << ids::kFtpResponseCommandTooLong;
  uint64_t fresh = what == flow::FtpConn::kRequest ? events & ~kReplyEvents : events & kReplyEvents;
  if (log_anomaly_ && what != flow::FtpConn::kDone) fresh &= ~(uint64_t(1) << ids::kFtpResponseCommandTooLong);
  if (log_anomaly_)
    for (uint64_t e = fresh; e; e &= e - 1)
      logs_.push_back({c.id,
                       TxLog::Anomaly,
                       uint8_t(what == flow::FtpConn::kRequest ? 0 : 1),
                       t.index,
                       {{"app_proto", "ftp"},
                        {"type", "applayer"},
                        {"event", ids::app_event_name(ids::kAppFtp, uint8_t(__builtin_ctzll(e)))},
                        {"layer", "proto_parser"}},
                       {}});
  if (what == flow::FtpConn::kDone && log_ftp_) logs_.push_back({c.id, TxLog::Ftp, 0, t.index, ftp_json(t), {}});
}

nlohmann::json IdsAppLayer::smtp_json(const flow::SmtpTx& t) {
  nlohmann::json smtp = nlohmann::json::object();
  if (!t.helo.empty()) smtp["helo"] = t.helo;
  if (!t.mail_from.empty()) smtp["mail_from"] = t.mail_from;
  if (!t.rcpt_to.empty()) smtp["rcpt_to"] = t.rcpt_to;
  nlohmann::json j = {{"smtp", std::move(smtp)}};
  if (!t.has_message) return j;
  const flow::MimeParser& m = t.mime;
  // Suricata's email object: the addresses (To and Cc split at their commas),
  // then the extended and custom fields, the attachments and the URLs
  nlohmann::json e = {{"status", m.status()}};
  // an address list at its commas, those within quotes or angle brackets not
  // (blanks before each dropped, empty ones left out)
  auto list = [](const std::string& v) {
    nlohmann::json a = nlohmann::json::array();
    std::string cur;
    bool quoted = false;
    int angle = 0;
    auto push = [&] {
      size_t lead = cur.find_first_not_of(" \t");
      if (lead != std::string::npos) a.push_back(cur.substr(lead));
      cur.clear();
    };
    for (char ch : v) {
      if (ch == '"') quoted = !quoted;
      if (!quoted && ch == '<') ++angle;
      if (!quoted && ch == '>' && angle > 0) --angle;
      if (ch == ',' && !quoted && angle == 0) {
        push();
        continue;
      }
      cur += ch;
    }
    push();
    return a;
  };
  if (const std::string* v = m.header("from")) e["from"] = *v;
  if (const std::string* v = m.header("to")) e["to"] = list(*v);
  if (const std::string* v = m.header("cc")) e["cc"] = list(*v);
  if (const std::string* v = m.header("bcc")) e["bcc"] = list(*v);
  static const std::pair<const char*, const char*> kFields[] = {
      {"reply-to", "reply_to"},       {"message-id", "message_id"}, {"subject", "subject"},
      {"x-mailer", "x_mailer"},       {"user-agent", "user_agent"}, {"x-originating-ip", "x_originating_ip"},
      {"in-reply-to", "in_reply_to"}, {"references", "references"}, {"date", "date"}};
  for (const auto& [header, field] : kFields)
    if (const std::string* v = m.header(header)) e[field] = *v;
  if (std::vector<std::string> r = m.all("received"); !r.empty()) e["received"] = std::move(r);
  if (!m.attachments().empty()) e["attachment"] = m.attachments();
  if (!m.urls().empty()) e["url"] = std::vector<std::string>(m.urls().rbegin(), m.urls().rend());  // (newest first)
  j["email"] = std::move(e);
  return j;
}

void IdsAppLayer::match_smtp(flow::SmtpTx& t) {
  if (!cur_ || !db_ || db_->tx_rules().empty()) return;
  using ids::Buf;
  ids::TxBuffers b;
  if (!t.helo.empty()) b.set(Buf::SmtpHelo, t.helo);
  if (!t.mail_from.empty()) b.set(Buf::SmtpMailFrom, t.mail_from);
  if (!t.rcpt_to.empty()) b.set_many(Buf::SmtpRcptTo, t.rcpt_to);
  const flow::MimeParser& m = t.mime;
  static const std::pair<Buf, const char*> kHeaders[] = {
      {Buf::EmailFrom, "from"},       {Buf::EmailTo, "to"},     {Buf::EmailCc, "cc"},
      {Buf::EmailSubject, "subject"}, {Buf::EmailDate, "date"}, {Buf::EmailMessageId, "message-id"},
      {Buf::EmailXMailer, "x-mailer"}};
  for (const auto& [buf, name] : kHeaders)
    if (const std::string* v = m.header(name)) b.set(buf, *v);
  std::vector<std::string> received = m.all("received"), names, closed;
  if (!received.empty()) b.set_many(Buf::EmailReceived, received);
  if (!m.urls().empty()) b.set_many(Buf::EmailUrl, m.urls());
  for (const flow::MimeFile& f : m.files()) names.push_back(f.name);
  if (!names.empty()) b.set_many(Buf::SmtpFileName, names);
  // a file's content is matched once, when it is complete (not again at each
  // packet of a long message: the cost stays linear in its size)
  for (; t.files_matched < m.files().size() && m.files()[t.files_matched].closed; ++t.files_matched)
    closed.push_back(m.file_data()[t.files_matched]);
  if (!closed.empty()) b.set_many(Buf::SmtpFileData, closed);
  for (const flow::MimeFile& f : m.files())  // the digests of the attachments whole
    if (f.closed && !(t.cut && f.at_finish)) b.files.push_back({f.digests.md5(), f.digests.sha1(), f.digests.sha256()});
  nlohmann::json meta;
  const auto& rules = db_->rules();
  for (uint32_t r : tx_candidates(b)) {
    const ids::Rule& rule = rules[r];
    if (rule.app != ids::kAppSmtp) continue;
    if (std::find(t.alerted.begin(), t.alerted.end(), r) != t.alerted.end()) continue;
    if (!ids::tx_matches(rule, b, *cur_)) continue;
    t.alerted.push_back(r);
    if (!ids::flowints_hold(rule, *cur_)) continue;
    ids::apply_flowbits(rule, *cur_);
    if (meta.is_null()) {
      meta = smtp_json(t);
      // the transaction's files as the alert sees them (Suricata's alert "files")
      for (const flow::MimeFile& f : m.files()) {
        nlohmann::json fi = {{"filename", f.name},
                             {"gaps", false},
                             {"state", !f.closed ? "OPEN" : t.cut && f.at_finish ? "TRUNCATED" : "CLOSED"},
                             {"stored", false},
                             {"size", f.size},
                             {"tx_id", t.index}};
        if (f.closed && !(t.cut && f.at_finish)) digests_json(fi, f.digests);
        meta["files"].push_back(std::move(fi));
      }
    }
    cur_hits_->push_back({r, nullptr, meta, t.index, ids::kAppSmtp});
  }
}

void IdsAppLayer::on_smtp(Conn& c, flow::SmtpTx& t, uint8_t what) {
  if (cur_) cur_->app = ids::kAppSmtp;
  if (t.index >= c.smtp_txs) c_.smtp_transactions.add(t.index + 1 - c.smtp_txs), c.smtp_txs = t.index + 1;
  if (what == flow::SmtpConn::kRequest) match_smtp(t);
  // the content of files closed (matched, or with no rule to match) is not kept
  const bool rules = cur_ && db_ && !db_->tx_rules().empty();
  for (size_t i = 0; i < t.mime.files().size() && t.mime.files()[i].closed; ++i)
    if (!rules || i < t.files_matched) t.mime.drop_data(i);
  // the attachments closed since, as fileinfo records; the transaction's own when it ends
  const std::vector<flow::MimeFile>& files = t.mime.files();
  for (; t.files_logged < files.size() && files[t.files_logged].closed; ++t.files_logged) {
    if (!log_files_) continue;
    const flow::MimeFile& f = files[t.files_logged];
    nlohmann::json fi = {
        {"filename", f.name}, {"gaps", false},  {"state", t.cut && f.at_finish ? "TRUNCATED" : "CLOSED"},
        {"stored", false},    {"size", f.size}, {"tx_id", t.index}};
    if (!(t.cut && f.at_finish)) digests_json(fi, f.digests);
    logs_.push_back({c.id, TxLog::SmtpFile, 0, t.index, smtp_json(t), std::move(fi)});
  }
  if (what == flow::SmtpConn::kDone && log_smtp_) logs_.push_back({c.id, TxLog::Smtp, 0, t.index, smtp_json(t), {}});
}

}  // namespace shoal
