#include "shoal/elements/ids/idsapplayer.hh"

#include <algorithm>

#include "shoal/kernels/bytes.hh"

namespace shoal {

struct IdsAppLayer::Conn {
  uint32_t id = 0;  // the flow
  flow::Stream stream;
  uint8_t detect[2] = {0, 0};  // per direction: 0 undecided, 1 HTTP, 2 something else
  std::string probe[2];        // first bytes held while undecided
  uint16_t app = ids::kAppNone;
  std::unique_ptr<flow::HttpConn> http;
};

IdsAppLayer::IdsAppLayer() = default;
IdsAppLayer::~IdsAppLayer() = default;

void IdsAppLayer::reserve(FlowIPManager& mgr) {
  mgr_ = &mgr;
  off_ = mgr.table().reserve(sizeof(void*), alignof(void*));  // a Conn*
}

IdsAppLayer::Conn*& IdsAppLayer::slot(uint32_t id) { return *reinterpret_cast<Conn**>(mgr_->table().state(id) + off_); }

void IdsAppLayer::init(std::shared_ptr<const ids::Database> db, bool log_http, bool log_files) {
  db_ = std::move(db);
  log_http_ = log_http, log_files_ = log_files;
  flow::StreamConfig sc;
  sc.midstream = mgr_->table().config().midstream;
  reasm_.configure(sc);
  reasm_.set_sink(this);
}

void IdsAppLayer::release(uint32_t id) {
  Conn*& c = slot(id);
  if (!c) return;
  cur_ = nullptr;  // no packet: events at the end raise no alert
  reasm_.finish(c->stream, id);
  if (c->http) c->http->close(0);
  delete c;  // (no hit of this flow is pending: releases happen between packets)
  c = nullptr;
}

nlohmann::json IdsAppLayer::http_json(const flow::HttpTx& tx) {
  nlohmann::json h = {{"hostname", tx.host}};
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

uint16_t IdsAppLayer::app(uint32_t id) {
  Conn* c = slot(id);
  return c ? c->app : uint16_t(ids::kAppNone);
}

void IdsAppLayer::packet(uint32_t id, ids::PacketInfo& info, uint64_t ts, std::vector<TxHit>& hits) {
  if (!info.l4 || info.proto != 6) return;
  Conn*& c = slot(id);
  if (!c) {
    c = new Conn;
    c->id = id;
  }
  if (c->http) c->http->release_done();  // the last packet's alerts are logged: its transactions can go
  cur_ = &info;
  cur_ts_ = ts;
  cur_hits_ = &hits;
  size_t first = hits.size();
  reasm_.segment(c->stream, id, info.dir, k::load_be32(info.l4 + 4), info.l4[13], info.payload, info.plen);
  cur_ = nullptr;
  info.app = c->app;
  // The alerts' metadata, from the transactions as this packet left them
  for (size_t i = first; i < hits.size(); ++i) {
    hits[i].http = http_json(*hits[i].tx);
    hits[i].tx_id = hits[i].tx->index;
  }
}

void IdsAppLayer::stream_data(uint32_t flow, uint8_t dir, uint64_t offset, const uint8_t* data, uint32_t len) {
  Conn* c = slot(flow);
  if (!c || offset >= kDepth) return;
  if (offset + len > kDepth) {
    len = uint32_t(kDepth - offset);
    c_.depth_reached.add();
  }
  if (c->detect[dir] == 0) {
    // protocol detection on the first bytes, whatever the ports
    std::string& pb = c->probe[dir];
    size_t held = pb.size();  // bytes of earlier segments kept while undecided
    pb.append(reinterpret_cast<const char*>(data), std::min<size_t>(len, 16 - std::min<size_t>(held, 16)));
    int d = flow::http_detect(dir, reinterpret_cast<const uint8_t*>(pb.data()), uint32_t(pb.size()));
    if (d < 0 && pb.size() < 16) return;  // more bytes needed
    // a connection already HTTP from the other side: this side goes to the
    // parser too, whatever its first bytes (as Suricata: one protocol per flow)
    if (d <= 0 && c->http) d = 1;
    c->detect[dir] = d > 0 ? 1 : 2;
    if (d > 0 && !c->http) {
      c->app = ids::kAppHttp;
      c->http = std::make_unique<flow::HttpConn>(http_cfg_, c_.http,
                                                 [this, c](flow::HttpTx& tx, uint8_t what) { on_tx(*c, tx, what); });
    }
    if (c->http && c->detect[dir] == 1 && held)
      c->http->data(dir, reinterpret_cast<const uint8_t*>(pb.data()), uint32_t(held), cur_ts_);
    pb.clear();
    pb.shrink_to_fit();
  }
  if (c->http && c->detect[dir] == 1) c->http->data(dir, data, len, cur_ts_);
}

void IdsAppLayer::stream_gap(uint32_t flow, uint8_t dir, uint64_t, uint64_t) {
  Conn* c = slot(flow);
  if (c && c->http) c->http->gap(dir);
  if (c && c->detect[dir] == 0) c->detect[dir] = 2;
}

void IdsAppLayer::log_file(const Conn& c, flow::HttpTx& tx, uint8_t dir) {
  flow::HttpFile& f = tx.files[dir];
  if (!log_files_ || f.logged || f.state == flow::HttpFile::None || f.state == flow::HttpFile::Open) return;
  f.logged = true;
  nlohmann::json fi = {
      {"filename", f.name}, {"gaps", f.gaps}, {"state", f.state == flow::HttpFile::Closed ? "CLOSED" : "TRUNCATED"},
      {"stored", false},    {"size", f.size}, {"tx_id", tx.index}};
  logs_.push_back({c.id, TxLog::File, dir, tx.index, http_json(tx), std::move(fi)});
}

void IdsAppLayer::stream_end(uint32_t flow, uint8_t dir) {
  Conn* c = slot(flow);
  if (c && c->http && cur_) c->http->end(dir, cur_ts_);  // (at the flow's release, close() follows)
}

void IdsAppLayer::on_tx(Conn& c, flow::HttpTx& tx, uint8_t what) {
  if (what != flow::HttpTx::kEnded && cur_ && db_) match_tx(tx);
  // records of what ended (unless a config rule said not to): a file with
  // its body, a transaction when both sides are done or the connection ends
  if (tx.no_log) return;
  if (what == flow::HttpTx::kRequestDone) log_file(c, tx, 0);
  if (what == flow::HttpTx::kResponseDone || what == flow::HttpTx::kEnded) {
    if (what == flow::HttpTx::kEnded) log_file(c, tx, 0);
    log_file(c, tx, 1);
    if (log_http_) logs_.push_back({c.id, TxLog::Http, 0, tx.index, http_json(tx), {}});
  }
}

void IdsAppLayer::match_tx(flow::HttpTx& tx) {
  cur_->app = ids::kAppHttp;  // this packet's data made the transaction progress
  using ids::Buf;
  ids::TxBuffers b;
  if (tx.progress & (flow::HttpTx::kRequestLine | flow::HttpTx::kRequestHeaders)) {
    b.set(Buf::HttpMethod, tx.method);
    b.set(Buf::HttpUri, tx.uri);
    b.set(Buf::HttpUriRaw, tx.uri_raw);
    b.set(Buf::HttpProtocol, tx.protocol);
    b.set(Buf::HttpRequestLine, tx.request_line);
  }
  if (tx.progress & flow::HttpTx::kRequestHeaders) {
    b.set(Buf::HttpHost, tx.host);
    b.set(Buf::HttpHostRaw, tx.host_raw);
    b.set(Buf::HttpUserAgent, tx.user_agent);
    b.set(Buf::HttpReferer, tx.referer);
    b.set(Buf::HttpAccept, tx.accept);
    b.set(Buf::HttpAcceptEnc, tx.accept_enc);
    b.set(Buf::HttpAcceptLang, tx.accept_lang);
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
  }
  if (resp) {
    res.set(Buf::HttpHeader, tx.response_headers);
    res.set(Buf::HttpHeaderRaw, tx.response_headers_raw);
    res.set(Buf::HttpCookie, tx.response_cookie);
    res.set(Buf::HttpContentType, tx.content_type);
    res.set(Buf::HttpConnection, tx.response_connection);
    res.set(Buf::HttpContentLen, tx.response_content_len);
    res.set(Buf::HttpStart, tx.response_start);
  }
  const auto& rules = db_->rules();
  for (uint32_t r : db_->tx_rules()) {
    if (std::find(tx.alerted.begin(), tx.alerted.end(), r) != tx.alerted.end()) continue;
    const ids::Rule& rule = rules[r];
    if (rule.app != ids::kAppHttp) continue;
    const ids::TxBuffers& use = rule.response_side() ? res : req;
    if (!ids::tx_matches(rule, use, *cur_)) continue;
    tx.alerted.push_back(r);
    tx.no_log |= rule.no_tx_log;
    ids::apply_flowbits(rule, *cur_);
    cur_hits_->push_back({r, &tx, {}, tx.index});
  }
}

}  // namespace shoal
