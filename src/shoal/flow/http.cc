#include "shoal/flow/http.hh"

#include "shoal/ids/rules.hh"

#include <htp/htp.h>
#include <zlib.h>

#include <strings.h>
#include <algorithm>

#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <vector>

namespace shoal::flow {

namespace {

std::string str(const bstr* b) {
  return b ? std::string(reinterpret_cast<const char*>(bstr_ptr(b)), bstr_len(b)) : std::string();
}

htp_time_t tv(uint64_t ns) {
  htp_time_t t;
  t.tv_sec = time_t(ns / 1000000000ull);
  t.tv_usec = suseconds_t((ns / 1000) % 1000000);
  return t;
}

// "Name: value\r\n" for every header of a table, in order.
std::string headers_text(const htp_table_t* t) {
  std::string s;
  if (!t) return s;
  for (size_t i = 0, n = htp_table_size(t); i < n; ++i) {
    auto* h = static_cast<htp_header_t*>(htp_table_get_index(t, i, nullptr));
    if (!h) continue;
    s += str(h->name) + ": " + str(h->value) + "\r\n";
  }
  return s;
}

std::vector<std::string> header_list(const htp_table_t* t) {
  std::vector<std::string> v;
  if (!t) return v;
  for (size_t i = 0, n = htp_table_size(t); i < n; ++i)
    if (auto* h = static_cast<htp_header_t*>(htp_table_get_index(t, i, nullptr)))
      v.push_back(str(h->name) + ": " + str(h->value));
  return v;
}

// Suricata's http.header_names: each name after a CRLF, then a blank line.
std::string header_names(const htp_table_t* t) {
  std::string s = "\r\n";
  if (t)
    for (size_t i = 0, n = htp_table_size(t); i < n; ++i)
      if (auto* h = static_cast<htp_header_t*>(htp_table_get_index(t, i, nullptr))) s += str(h->name) + "\r\n";
  return s + "\r\n";
}

std::string header(const htp_table_t* t, const char* name) {
  if (!t) return {};
  auto* h = static_cast<htp_header_t*>(htp_table_get_c(t, name));
  return h ? str(h->value) : std::string();
}
bool has_header(const htp_table_t* t, const char* name) { return t && htp_table_get_c(t, name); }

// libhtp's warnings and errors as Suricata reads them: the event of the
// first prefix a message starts with (Suricata 7's tables, then the three
// its next parser names; anything else is an unknown error).
uint8_t event_of(const char* msg) {
  using namespace ids;
  static const std::pair<const char*, HttpEvent> kPrefixes[] = {
      {"Request field invalid: colon missing", kHttpRequestFieldMissingColon},
      {"Response field invalid: missing colon", kHttpResponseFieldMissingColon},
      {"Request chunk encoding: Invalid chunk length", kHttpInvalidRequestChunkLen},
      {"Response chunk encoding: Invalid chunk length", kHttpInvalidResponseChunkLen},
      {"Invalid C-L field in response", kHttpInvalidContentLengthFieldInResponse},
      {"Already seen 100-Continue", kHttp100ContinueAlreadySeen},
      {"Unable to match response to request", kHttpUnableToMatchResponseToRequest},
      {"Invalid server port information in request", kHttpInvalidServerPortInRequest},
      {"Request buffer over", kHttpRequestFieldTooLong},
      {"Response buffer over", kHttpResponseFieldTooLong},
      {"Response the buffer limit", kHttpResponseFieldTooLong},  // (libhtp 0.5's wording of it)
      {"C-T multipart/byteranges in responses not supported", kHttpResponseMultipartByteranges},
      {"Compression bomb:", kHttpCompressionBomb},
      {"GZip decompressor:", kHttpGzipDecompressionFailed},
      {"Request field invalid", kHttpRequestHeaderInvalid},
      {"Response field invalid", kHttpResponseHeaderInvalid},
      {"Request header name is not a token", kHttpRequestHeaderInvalid},
      {"Response header name is not a token", kHttpResponseHeaderInvalid},
      {"Invalid request field folding", kHttpInvalidRequestFieldFolding},
      {"Invalid response field folding", kHttpInvalidResponseFieldFolding},
      {"Request server port=", kHttpRequestServerPortTcpPortMismatch},
      {"Request line: URI contains non-compliant delimiter", kHttpUriDelimNonCompliant},
      {"Request line: non-compliant delimiter between Method and URI", kHttpMethodDelimNonCompliant},
      {"Request line: leading whitespace", kHttpRequestLineLeadingWhitespace},
      {"Too many response content encoding layers", kHttpTooManyEncodingLayers},
      {"C-E gzip has abnormal value", kHttpAbnormalCeHeader},
      {"C-E deflate has abnormal value", kHttpAbnormalCeHeader},
      {"C-E unknown setting", kHttpAbnormalCeHeader},
      {"Excessive request header repetitions", kHttpRequestHeaderRepetition},
      {"Excessive response header repetitions", kHttpResponseHeaderRepetition},
      {"Transfer-encoding has abnormal chunked value", kHttpResponseAbnormalTransferEncoding},
      {"Chunked transfer-encoding on HTTP/0.9 or HTTP/1.0", kHttpResponseChunkedOldProto},
      {"Invalid response line: invalid protocol", kHttpResponseInvalidProtocol},
      {"Invalid response line: invalid response status", kHttpResponseInvalidStatus},
      {"Request line incomplete", kHttpRequestLineIncomplete},
      {"Unexpected request body", kHttpRequestBodyUnexpected},
      {"LZMA decompressor: memory limit reached", kHttpLzmaMemlimitReached},
      {"Ambiguous request C-L value", kHttpDuplicateContentLengthFieldInRequest},
      {"Ambiguous response C-L value", kHttpDuplicateContentLengthFieldInResponse},
      {"Request line: missing protocol", kHttpRequestLineMissingProtocol},
      {"Too many request headers", kHttpRequestTooManyHeaders},
      {"Too many response headers", kHttpResponseTooManyHeaders}};
  for (auto& [prefix, e] : kPrefixes)
    if (std::strncmp(msg, prefix, std::strlen(prefix)) == 0) return e;
  return kHttpUnknownError;
}

}  // namespace

struct HttpConn::Impl {
  const HttpConfig& cfg;
  HttpCounters& c;
  Event on_event;
  htp_connp_t* connp = nullptr;
  std::list<HttpTx> txs;            // live transactions
  std::vector<htp_tx_t*> finished;  // libhtp's, freed after the data call
  bool broken[2] = {false, false};
  bool closed = false;  // htp_connp_close was called
  uint64_t next_index = 0;

  Impl(const HttpConfig& cf, HttpCounters& cn, Event e) : cfg(cf), c(cn), on_event(std::move(e)) {}

  static Impl* of(htp_tx_t* tx) { return static_cast<Impl*>(htp_connp_get_user_data(tx->connp)); }
  HttpTx& tx_of(htp_tx_t* tx) {
    if (auto* t = static_cast<HttpTx*>(htp_tx_get_user_data(tx))) return *t;
    txs.emplace_back();
    HttpTx& t = txs.back();
    t.index = next_index++;
    c.transactions.add();
    htp_tx_set_user_data(tx, &t);
    return t;
  }
  void fire(HttpTx& t, uint8_t what) {
    t.progress |= what;
    drain(nullptr);  // what libhtp found wrong on the way here
    on_event(t, what);
  }
  // libhtp's new warnings and errors, as events of the transactions they
  // name (else the newest); `changed` gets the transactions that got a new
  // one. Past kMaxMessages on a connection, too_many_warnings and no more.
  static constexpr size_t kMaxMessages = 512;
  size_t msg_seen = 0;
  bool msg_capped = false;
  void drain(std::vector<HttpTx*>* changed) {
    htp_conn_t* conn = htp_connp_get_connection(connp);
    if (!conn || !conn->messages || msg_capped) return;
    size_t n = htp_list_size(conn->messages);
    auto add = [&](HttpTx* t, uint8_t e) {
      uint64_t bit = uint64_t(1) << e;
      if (!t || (t->events & bit)) return;
      t->events |= bit;
      if (changed) changed->push_back(t);
    };
    if (n >= kMaxMessages) {
      msg_capped = true;
      if (!txs.empty()) add(&txs.back(), ids::kHttpTooManyWarnings);
      return;
    }
    for (; msg_seen < n; ++msg_seen) {
      auto* log = static_cast<htp_log_t*>(htp_list_get(conn->messages, msg_seen));
      if (!log || !log->msg) continue;
      auto* t = log->tx ? static_cast<HttpTx*>(htp_tx_get_user_data(log->tx)) : nullptr;
      // (libhtp 0.5.42's own defect where a response ends inside its
      // headers: see headers_at_close)
      if (strstr(log->msg, "Invalid tx->response_content_encoding_processing")) continue;
      uint8_t e = event_of(log->msg);
      // (libhtp 0.5.42 calls Content-Encoding identity an unknown setting; Suricata's libhtp does not)
      if (e == ids::kHttpAbnormalCeHeader) {
        htp_tx_t* ht[] = {log->tx, htp_connp_get_out_tx(connp), htp_connp_get_in_tx(connp)};
        if (std::any_of(std::begin(ht), std::end(ht), [](const htp_tx_t* x) {
              return x && (strcasecmp(header(x->response_headers, "content-encoding").c_str(), "identity") == 0 ||
                           strcasecmp(header(x->request_headers, "content-encoding").c_str(), "identity") == 0);
            }))
          continue;
      }
      add(t ? t : txs.empty() ? nullptr : &txs.back(), e);
    }
  }
  // libhtp's findings kept in a request's flags (Suricata's reading of them)
  static void request_flags(HttpTx& t, const htp_tx_t* tx) {
    auto set = [&](bool on, uint8_t e) { t.events |= on ? uint64_t(1) << e : 0; };
    set(tx->flags & HTP_REQUEST_INVALID_T_E, ids::kHttpInvalidTransferEncodingValueInRequest);
    set(tx->flags & HTP_REQUEST_INVALID_C_L, ids::kHttpInvalidContentLengthFieldInRequest);
    set(tx->flags & HTP_HOST_MISSING, ids::kHttpMissingHostHeader);
    set(tx->flags & HTP_HOST_AMBIGUOUS, ids::kHttpHostHeaderAmbiguous);
    set(tx->flags & HTP_HOSTU_INVALID, ids::kHttpRequestUriHostInvalid);
    set(tx->flags & HTP_HOSTH_INVALID, ids::kHttpRequestHeaderHostInvalid);
    // (a bearer token is a scheme libhtp 0.5.42 does not know, and Suricata's libhtp does)
    std::string auth = header(tx->request_headers, "authorization");
    bool bearer = auth.size() >= 6 && strncasecmp(auth.c_str(), "bearer", 6) == 0 &&
                  (auth.size() == 6 || auth[6] == ' ' || auth[6] == '\t');
    set(tx->request_auth_type == HTP_AUTH_UNRECOGNIZED && !bearer, ids::kHttpRequestAuthUnrecognized);
    set(tx->is_protocol_0_9 && tx->request_method_number == HTP_M_UNKNOWN &&
            (tx->request_protocol_number == HTP_PROTOCOL_INVALID ||
             tx->request_protocol_number == HTP_PROTOCOL_UNKNOWN),
        ids::kHttpRequestLineInvalid);
  }
  // After a call into libhtp: its new findings, and the transactions they
  // changed inspected again (event 0).
  void after_call() {
    std::vector<HttpTx*> changed;
    drain(&changed);
    for (HttpTx* t : changed) on_event(*t, 0);
  }
  // The configuration: callbacks and limits are the same for every
  // connection (libhtp allows one configuration for many parsers); one per
  // decompression layer limit.
  static htp_cfg_t* config(const HttpConfig& hc) {
    struct Made {
      std::mutex mu;
      std::map<int, htp_cfg_t*> cfg;
      ~Made() {
        for (auto& kv : cfg) htp_config_destroy(kv.second);
      }
    };
    static Made made;  // (no connection outlives the program's statics)
    std::lock_guard lock(made.mu);
    htp_cfg_t*& c = made.cfg[hc.decompress_layers];
    if (c) return c;
    c = htp_config_create();
    htp_config_set_server_personality(c, HTP_SERVER_IDS);
    // "GET /a b HTTP/1.1": the URI is "/a b", as Suricata reads it (suricata-verify http-uri-spaces)
    htp_config_set_allow_space_uri(c, 1);
    htp_config_set_response_decompression(c, 1);
    htp_config_set_response_decompression_layer_limit(c, hc.decompress_layers);
    htp_config_set_field_limits(c, 9000, 18000);
    htp_config_set_compression_bomb_limit(c, 1u << 20);
    htp_config_register_request_line(c, on_request_line);
    htp_config_register_request_headers(c, on_request_headers);
    htp_config_register_request_header_data(c, on_request_header_data);
    htp_config_register_request_body_data(c, on_request_body);
    htp_config_register_request_complete(c, on_request_complete);
    htp_config_register_response_headers(c, on_response_headers);
    htp_config_register_response_header_data(c, on_response_header_data);
    htp_config_register_response_body_data(c, on_response_body);
    htp_config_register_response_complete(c, on_response_complete);
    return c;
  }
  // A body's bytes go to its file, opened at the first of them: the
  // response's always, the request's for PUT (Suricata's files).
  static void file_bytes(Impl* im, HttpTx& t, htp_tx_t* tx, uint8_t dir, const uint8_t* d, size_t n) {
    HttpFile& f = t.files[dir];
    if (f.state == HttpFile::None) {
      // a request's body is a file for PUT, and for POST when it is no form
      // (whose parts are the files: HttpForm), as Suricata's
      // HtpRequestBodyHandlePOSTorPUT; named by the path
      if (dir == 0 && tx->request_method_number != HTP_M_PUT && (tx->request_method_number != HTP_M_POST || t.form))
        return;
      // junk before the response line that libhtp passes on as body
      // (" \t\r\nHTTP/1.1 200 ..."): no file yet, the real response's
      // headers name it (Suricata's HtpResponseBodyHandle)
      if (dir == 1 && !tx->response_line && !tx->is_protocol_0_9) return;
      if (dir == 1) f.name = content_disposition_filename(header(tx->response_headers, "content-disposition"));
      if (f.name.empty() && tx->parsed_uri) f.name = str(tx->parsed_uri->path);
      f.state = HttpFile::Open;
      f.digests.start(im->cfg.file_digests);
    }
    if (f.state != HttpFile::Open) return;
    f.size += n;
    if (!f.gaps) f.digests.update(d, n);
  }
  static void file_close(HttpTx& t, uint8_t dir) {
    HttpFile& f = t.files[dir];
    if (f.state != HttpFile::Open) return;
    f.state = f.gaps ? HttpFile::Truncated : HttpFile::Closed;
    if (f.state == HttpFile::Closed) f.digests.finish();
  }
  // The request line's fields (the URI, normalized by libhtp, is ready here).
  static void line_fields(HttpTx& t, htp_tx_t* tx) {
    t.method = str(tx->request_method);
    t.uri_raw = str(tx->request_uri);
    t.protocol = str(tx->request_protocol);
    t.request_line = str(tx->request_line);
    if (const htp_uri_t* u = tx->parsed_uri) {
      t.uri = str(u->path);
      if (u->query) t.uri += "?" + str(u->query);
      if (u->fragment) t.uri += "#" + str(u->fragment);
    }
    if (t.uri.empty()) t.uri = t.uri_raw;
  }
  static int on_request_line(htp_tx_t* tx) {
    Impl* im = of(tx);
    if (!htp_tx_get_user_data(tx) && im->txs.size() >= im->cfg.max_tx) {
      im->c.tx_limit.add();
      return HTP_ERROR;  // libhtp stops: the direction is given up (a parse error)
    }
    HttpTx& t = im->tx_of(tx);
    line_fields(t, tx);
    request_flags(t, tx);
    im->fire(t, HttpTx::kRequestLine);
    return HTP_OK;
  }
  static int on_request_headers(htp_tx_t* tx) {
    Impl* im = of(tx);
    HttpTx& t = im->tx_of(tx);
    line_fields(t, tx);  // normalization may have gone on (the Host header)
    t.host = str(tx->request_hostname);
    // a CONNECT target that is no authority ("CONNECT /") names no host
    if (t.host.find('/') != std::string::npos) t.host.clear();
    t.port = tx->request_port_number;
    t.host_raw = header(tx->request_headers, "host");
    if (t.host_raw.empty() && tx->parsed_uri_raw) t.host_raw = str(tx->parsed_uri_raw->hostname);
    t.user_agent = header(tx->request_headers, "user-agent");
    t.cookie = header(tx->request_headers, "cookie");
    t.referer = header(tx->request_headers, "referer");
    t.accept = header(tx->request_headers, "accept");
    t.accept_enc = header(tx->request_headers, "accept-encoding");
    t.accept_lang = header(tx->request_headers, "accept-language");
    t.request_has = 0;
    for (auto [name, bit] : {std::pair{"user-agent", HttpTx::kUserAgent},
                             {"referer", HttpTx::kReferer},
                             {"accept", HttpTx::kAccept},
                             {"accept-encoding", HttpTx::kAcceptEnc},
                             {"accept-language", HttpTx::kAcceptLang}})
      if (has_header(tx->request_headers, name)) t.request_has |= bit;
    t.request_connection = header(tx->request_headers, "connection");
    t.request_content_len = header(tx->request_headers, "content-length");
    t.content_type = header(tx->request_headers, "content-type");
    std::string enc = header(tx->request_headers, "content-encoding");
    for (const char* e : {"gzip", "x-gzip", "deflate"})
      if (strcasecmp(enc.c_str(), e) == 0 && !t.request_inflate)
        t.request_inflate = std::make_unique<BodyInflater>(e[0] == 'd');
    t.request_headers = headers_text(tx->request_headers);
    t.request_header_list = header_list(tx->request_headers);
    t.request_header_names = header_names(tx->request_headers);
    t.request_start = t.request_line + "\r\n" + t.request_headers_raw;
    // a form's uploads: its body read as the MIME message its type announces
    if (!t.form && tx->request_method_number != HTP_M_PUT && t.content_type.size() >= 19 &&
        strncasecmp(t.content_type.c_str(), "multipart/form-data", 19) == 0) {
      t.form = std::make_unique<HttpForm>();
      t.form->mime.set_file_digests(im->cfg.file_digests);
      // (what file.data inspects: no more than the request body limit, all files together)
      t.form->mime.set_file_keep(im->cfg.request_body_limit, im->cfg.request_body_limit);
      t.form->mime.line("Content-Type: " + t.content_type, "\r\n");
      t.form->mime.line("", "\r\n");
    }
    request_flags(t, tx);
    im->fire(t, HttpTx::kRequestHeaders);
    return HTP_OK;
  }
  static int on_request_header_data(htp_tx_data_t* d) {
    Impl* im = of(d->tx);
    HttpTx& t = im->tx_of(d->tx);
    if (d->data && t.request_headers_raw.size() < 64 * 1024)
      t.request_headers_raw.append(reinterpret_cast<const char*>(d->data), d->len);
    return HTP_OK;
  }
  static void body(Impl* im, std::string& b, uint32_t limit, const uint8_t* data, size_t len) {
    if (!data || !len) return;
    if (b.size() >= limit) return;
    size_t room = limit - b.size();
    if (len > room) im->c.body_truncated.add();
    b.append(reinterpret_cast<const char*>(data), std::min(room, len));
  }
  static void body(Impl* im, std::string& b, uint32_t limit, const htp_tx_data_t* d) {
    body(im, b, limit, d->data, d->len);
  }
  static int on_request_body(htp_tx_data_t* d) {
    Impl* im = of(d->tx);
    HttpTx& t = im->tx_of(d->tx);
    if (!d->data || !d->len) return HTP_OK;
    // (a gzip'd or deflated body: its decoded bytes)
    auto take = [&](const uint8_t* p, size_t n) {
      file_bytes(im, t, d->tx, 0, p, n);
      if (t.form) t.form->data(p, n);
      body(im, t.request_body, im->cfg.request_body_limit, p, n);
    };
    if (!t.request_inflate) {
      take(d->data, d->len);
      return HTP_OK;
    }
    bool was = t.request_inflate->stopped();
    t.request_inflate->data(d->data, d->len, take);
    if (!was && t.request_inflate->stopped()) im->c.body_undecoded.add();  // (counted once per body)
    return HTP_OK;
  }
  // A side that closes inside its headers ("Server: x\r\n", then the FIN):
  // libhtp 0.5.42 parses the headers it has and completes the message
  // without its headers hook (and, for a response, with an internal error
  // about the content encoding), where Suricata inspects and logs them
  // (suricata-verify http-close-headers): they are given as if the empty
  // line had come.
  static void headers_at_close(HttpTx& t, htp_tx_t* tx, int dir) {
    uint8_t seen = dir == 0 ? HttpTx::kRequestHeaders : HttpTx::kResponseHeaders;
    if (t.progress & seen) return;
    if (dir == 0 ? tx->request_line == nullptr : tx->response_line == nullptr) return;
    if (dir == 0)
      on_request_headers(tx);
    else
      on_response_headers(tx);
  }
  static int on_request_complete(htp_tx_t* tx) {
    Impl* im = of(tx);
    // a request of which nothing was seen (libhtp's at the request side's
    // close, when only responses were captured) is no transaction
    if (!htp_tx_get_user_data(tx)) return HTP_OK;
    HttpTx& t = im->tx_of(tx);
    headers_at_close(t, tx, 0);
    file_close(t, 0);
    // (a body shorter than its Content-Length ended with the connection)
    if (t.form)
      t.form->finish(tx->request_transfer_coding == HTP_CODING_IDENTITY && tx->request_content_length >= 0 &&
                     tx->request_message_len < tx->request_content_length);
    im->fire(t, HttpTx::kRequestDone);
    return HTP_OK;
  }
  static int on_response_headers(htp_tx_t* tx) {
    Impl* im = of(tx);
    HttpTx& t = im->tx_of(tx);
    t.stat_code = str(tx->response_status);
    t.stat_msg = str(tx->response_message);
    t.response_line = str(tx->response_line);
    t.server = header(tx->response_headers, "server");
    t.response_cookie = header(tx->response_headers, "set-cookie");
    t.location = header(tx->response_headers, "location");
    t.response_connection = header(tx->response_headers, "connection");
    t.response_content_len = header(tx->response_headers, "content-length");
    std::string ct = header(tx->response_headers, "content-type");
    if (!ct.empty()) t.content_type = ct;
    t.response_content_type = ct;
    t.response_headers = headers_text(tx->response_headers);
    t.response_header_list = header_list(tx->response_headers);
    t.response_header_names = header_names(tx->response_headers);
    t.response_start = t.response_line + "\r\n" + t.response_headers_raw;
    im->fire(t, HttpTx::kResponseHeaders);
    return HTP_OK;
  }
  static int on_response_header_data(htp_tx_data_t* d) {
    Impl* im = of(d->tx);
    HttpTx& t = im->tx_of(d->tx);
    if (d->data && t.response_headers_raw.size() < 64 * 1024)
      t.response_headers_raw.append(reinterpret_cast<const char*>(d->data), d->len);
    return HTP_OK;
  }
  static int on_response_body(htp_tx_data_t* d) {
    Impl* im = of(d->tx);
    HttpTx& t = im->tx_of(d->tx);
    if (d->data && d->len) file_bytes(im, t, d->tx, 1, d->data, d->len);
    body(im, t.response_body, im->cfg.response_body_limit, d);
    t.response_length = uint64_t(d->tx->response_message_len);  // (so far, as Suricata's alerts show it)
    return HTP_OK;
  }
  static int on_response_complete(htp_tx_t* tx) {
    Impl* im = of(tx);
    HttpTx& t = im->tx_of(tx);
    headers_at_close(t, tx, 1);
    t.response_length = uint64_t(tx->response_message_len);
    // a body shorter than its Content-Length (the connection closed early)
    // leaves its file cut short
    if (tx->response_transfer_coding == HTP_CODING_IDENTITY && tx->response_content_length >= 0 &&
        tx->response_message_len < tx->response_content_length && t.files[1].state == HttpFile::Open)
      t.files[1].state = HttpFile::Truncated;
    file_close(t, 1);
    im->fire(t, HttpTx::kResponseDone);
    im->finished.push_back(tx);
    return HTP_OK;
  }
  // Frees what completed during the last data call.
  void reap(const std::function<bool(const HttpTx&)>& keep) {
    size_t kept = 0;
    for (htp_tx_t* tx : finished) {
      auto* t = static_cast<HttpTx*>(htp_tx_get_user_data(tx));
      if (t && keep && keep(*t)) {
        finished[kept++] = tx;
        continue;
      }
      htp_tx_set_user_data(tx, nullptr);
      htp_tx_destroy(tx);
      if (t) txs.remove_if([t](const HttpTx& x) { return &x == t; });
    }
    finished.resize(kept);
  }
};

HttpConn::HttpConn(const HttpConfig& cfg, HttpCounters& counters, Event on_event)
    : impl_(std::make_unique<Impl>(cfg, counters, std::move(on_event))) {
  impl_->connp = htp_connp_create(Impl::config(cfg));
  htp_connp_set_user_data(impl_->connp, impl_.get());
  htp_time_t t = tv(0);
  htp_connp_open(impl_->connp, nullptr, 0, nullptr, 0, &t);
  counters.connections.add();
}

HttpConn::~HttpConn() {
  if (!impl_->connp) return;
  // the transactions libhtp still holds go with the parser
  htp_connp_destroy_all(impl_->connp);
}

void HttpConn::data(uint8_t dir, const uint8_t* d, uint32_t n, uint64_t ts) {
  if (impl_->broken[dir] || !n) return;
  htp_time_t t = tv(ts);
  int r = dir == 0 ? htp_connp_req_data(impl_->connp, &t, d, n) : htp_connp_res_data(impl_->connp, &t, d, n);
  if (r == HTP_STREAM_ERROR) {
    impl_->broken[dir] = true;
    impl_->c.parse_errors.add();
  }
  impl_->after_call();
}

void HttpConn::release_done(const std::function<bool(const HttpTx&)>& keep) { impl_->reap(keep); }

void HttpConn::each(const std::function<void(HttpTx&)>& f) {
  for (HttpTx& t : impl_->txs) f(t);
}

void HttpConn::gap(uint8_t dir) {
  impl_->c.gaps.add();
  impl_->broken[dir] = true;
  for (HttpTx& t : impl_->txs) {
    if (t.files[dir].state == HttpFile::Open) t.files[dir].gaps = true;
    if (dir == 0 && t.form) t.form->finish(true);
  }
}

void HttpConn::end(uint8_t dir, uint64_t ts) {
  if (impl_->closed) return;
  htp_time_t t = tv(ts);
  // as Suricata: the request side's end closes it, the response side's
  // closes the connection
  if (dir == 0) {
    htp_connp_req_close(impl_->connp, &t);
  } else {
    htp_connp_close(impl_->connp, &t);
    impl_->closed = true;
  }
  impl_->after_call();
  // messages of that direction left incomplete: their bodies are final
  uint8_t started = dir == 0 ? HttpTx::kRequestHeaders : HttpTx::kResponseHeaders;
  uint8_t done = dir == 0 ? HttpTx::kRequestDone : HttpTx::kResponseDone;
  uint8_t end = dir == 0 ? HttpTx::kRequestBodyEnd : HttpTx::kResponseBodyEnd;
  for (HttpTx& x : impl_->txs)
    if ((x.progress & started) && !(x.progress & (done | end | HttpTx::kEnded))) impl_->fire(x, end);
}

uint64_t HttpConn::transactions() const { return impl_->next_index; }

void HttpConn::close(uint64_t ts) {
  htp_time_t t = tv(ts);
  if (!impl_->closed) htp_connp_close(impl_->connp, &t);
  impl_->closed = true;
  impl_->drain(nullptr);  // (nothing is inspected at the close: kEnded follows)
  impl_->reap({});
  // what never completed ends here: its files are cut short
  for (HttpTx& x : impl_->txs) {
    // (nor is one of which nothing was seen: libhtp's at a side's close)
    if (x.progress == 0 || (x.progress & (HttpTx::kResponseDone | HttpTx::kEnded))) continue;
    for (HttpFile& f : x.files)
      if (f.state == HttpFile::Open) f.state = HttpFile::Truncated;
    if (x.form) x.form->finish(true);
    impl_->fire(x, HttpTx::kEnded);
  }
}

void HttpForm::data(const uint8_t* d, size_t n) {
  if (mime.done()) return;
  for (size_t i = 0; i < n; ++i) {
    char c = char(d[i]);
    if (c == '\n') {
      bool cr = !line.empty() && line.back() == '\r';
      if (cr) line.pop_back();
      mime.line(line, cr ? "\r\n" : "\n");
      line.clear();
    } else {
      line.push_back(c);
      // a very long line goes in pieces (a binary upload's), keeping a CR that may end it
      if (line.size() >= kMimeMaxLine && line.back() != '\r') mime.line(line, {}), line.clear();
    }
  }
}

void HttpForm::finish(bool cut_short) {
  if (mime.done()) return;
  if (!line.empty()) mime.line(line, {}), line.clear();
  cut = cut_short;
  mime.finish();
}

struct BodyInflater::Z {
  z_stream s{};
  bool init = false;
  ~Z() {
    if (init) inflateEnd(&s);
  }
};

BodyInflater::BodyInflater(bool deflate) : deflate_(deflate) {}
BodyInflater::~BodyInflater() = default;

bool BodyInflater::begin(bool raw) {
  z_ = std::make_unique<Z>();
  if (inflateInit2(&z_->s, raw ? -15 : 15 + 32) != Z_OK) return false;  // (15 + 32: a gzip or zlib header)
  z_->init = true;
  raw_deflate_ = raw;
  return true;
}

void BodyInflater::data(const uint8_t* d, size_t n, const std::function<void(const uint8_t*, size_t)>& out) {
  if (state_ == Raw) {
    if (n) out(d, n);
    return;
  }
  if (state_ == Stopped || state_ == Ended || n == 0) return;
  if (state_ == Start) {
    if (!begin(false)) {
      state_ = Raw;
      return out(d, n);
    }
    state_ = Inflating;
  }
  // Feeds p[0, k) to the decoder: false when it refused the data.
  auto feed = [&](const uint8_t* p, size_t k) {
    z_stream& z = z_->s;
    z.next_in = const_cast<Bytef*>(p);
    z.avail_in = uInt(k);
    uint8_t buf[16384];
    do {
      z.next_out = buf;
      z.avail_out = sizeof buf;
      int rc = inflate(&z, Z_NO_FLUSH);
      size_t got = sizeof buf - z.avail_out;
      if (got) {
        out_ += got;
        out(buf, got);
        if (out_ > (1u << 20) && out_ > 1000 * uint64_t(z.total_in)) return state_ = Stopped, true;  // a bomb
      }
      if (rc == Z_STREAM_END) return state_ = Ended, true;  // (what follows the stream is no body)
      if (rc != Z_OK && !(rc == Z_BUF_ERROR && !got)) return false;
      if (!got && z.avail_in == 0) break;  // it needs more input
    } while (z.avail_in > 0 || z.avail_out == 0);
    return true;
  };
  if (out_ == 0) held_.append(reinterpret_cast<const char*>(d), n);  // (what a fallback replays)
  bool ok = feed(d, n);
  if (ok) {
    if (out_ > 0) held_.clear(), held_.shrink_to_fit();
    if (out_ == 0 && held_.size() > 65536) ok = false;  // nothing decoded from 64 KiB: not what it claims
    if (ok) return;
  }
  if (out_ > 0) {  // it decoded, then broke: the body ends there
    state_ = Stopped;
    return;
  }
  // nothing decoded: raw deflate (a "deflate" body without its zlib
  // header), else the bytes as sent
  std::string h = std::move(held_);
  held_.clear();
  if (deflate_ && !raw_deflate_ && begin(true)) {
    held_ = h;
    if (feed(reinterpret_cast<const uint8_t*>(h.data()), h.size())) {
      if (out_ > 0) held_.clear();
      return;  // decoding (or waiting for more of its first block)
    }
    if (out_ > 0) {
      state_ = Stopped;
      return;
    }
    h = std::move(held_);
    held_.clear();
  }
  state_ = Raw;
  z_.reset();
  out(reinterpret_cast<const uint8_t*>(h.data()), h.size());
}

std::string content_disposition_filename(const std::string& v) {
  // "attachment; filename=\"a.txt\"": parameters after ';', the first
  // named filename (Suricata's reading: filename*= is not decoded)
  size_t at = 0;
  while (at < v.size()) {
    size_t end = v.find(';', at);
    if (end == std::string::npos) end = v.size();
    size_t b = v.find_first_not_of(" \t", at);
    if (b < end && v.compare(b, 9, "filename=") == 0) {
      std::string name = v.substr(b + 9, end - b - 9);
      while (!name.empty() && (name.back() == ' ' || name.back() == '\t')) name.pop_back();
      if (name.size() >= 2 && name.front() == '"' && name.back() == '"') name = name.substr(1, name.size() - 2);
      return name;
    }
    at = end + 1;
  }
  return {};
}

int http_detect(uint8_t dir, const uint8_t* d, uint32_t n) {
  if (dir == 1) {
    static const char kHttp[] = "HTTP/";
    uint32_t m = std::min<uint32_t>(n, 5);
    if (strncasecmp(reinterpret_cast<const char*>(d), kHttp, m) != 0) return 0;
    return n >= 5 ? 1 : -1;
  }
  static const char* const kMethods[] = {"GET",   "POST",    "HEAD",   "PUT",      "DELETE",   "OPTIONS",
                                         "TRACE", "CONNECT", "PATCH",  "PROPFIND", "MKCOL",    "COPY",
                                         "MOVE",  "LOCK",    "UNLOCK", "SEARCH",   "PROPPATCH"};
  bool more = false;
  for (const char* m : kMethods) {
    uint32_t len = uint32_t(std::strlen(m));
    uint32_t k = std::min(n, len + 1);
    std::string want = std::string(m) + " ";
    if (strncasecmp(reinterpret_cast<const char*>(d), want.data(), k) != 0) continue;
    if (n >= len + 1) return 1;
    more = true;
  }
  return more ? -1 : 0;
}

}  // namespace shoal::flow
