// HTTP/1.x over a connection's reassembled streams, parsed by libhtp
// (Suricata's own HTTP parser): transactions with the fields detection
// engines read (Suricata's http.* buffers), announced as they progress.
//
// Protocol detection looks at the first bytes of each direction, not at
// ports: a request method and a space from the client, or "HTTP/" from the
// server. Memory is bounded: bodies are kept up to a limit each (Suricata's
// request-body-limit and response-body-limit), header sizes by libhtp's
// field limit, and a transaction is freed once both its sides are done and
// its events were delivered.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "shoal/core/stat.hh"
#include "shoal/flow/digest.hh"
#include "shoal/flow/mime.hh"

namespace shoal::flow {

struct HttpConfig {
  uint32_t request_body_limit = 100 * 1024;
  uint32_t response_body_limit = 100 * 1024;
  uint32_t max_tx = 512;      // live transactions per connection (requests without responses); past it, parsing stops
  int decompress_layers = 2;  // nested Content-Encodings undone (Suricata's response-body-decompress-layer-limit)
  uint8_t file_digests = 0;   // the files' digests computed (FileDigest bits)
};

// A file carried by a transaction, as Suricata tracks it: a response body,
// or a PUT request's body. Its name comes from Content-Disposition's
// filename, else the URI's path. The bytes are counted and digested as
// HttpConfig::file_digests asks, not kept (detection reads the bodies).
struct HttpFile {
  enum State : uint8_t { None, Open, Closed, Truncated };
  std::string name;
  uint64_t size = 0;  // bytes of the (decompressed) body
  State state = None;
  bool gaps = false;    // a hole in the stream cut it short
  bool logged = false;  // the user's: a record was made of it
  FileHasher digests;   // finished when the file closes whole
};

// A multipart/form-data request's body read as MIME, part by part (RFC
// 7578): each part with a file name is an uploaded file (Suricata's HTTP
// uploads), counted and digested, its content kept up to the request body
// limit for file.data.
struct HttpForm {
  MimeParser mime;
  std::string line;   // a body line not ended yet
  bool cut = false;   // the body ended at a hole or the connection's end, not its own
  size_t logged = 0;  // the user's: files of mime.files() a record was made of
  void data(const uint8_t* d, size_t n);
  void finish(bool cut_short);
  // Whether file i came whole (its digests then hold).
  bool whole(size_t i) const { return mime.files()[i].closed && !(cut && mime.files()[i].at_finish); }
};

// A request body sent with Content-Encoding gzip or deflate, decoded as
// it comes (zlib: a gzip or zlib stream; for deflate, raw deflate too). A
// body whose first bytes do not decode is passed on as sent, as Suricata
// reads clear text under a gzip header; one that stops decoding later ends
// there. The output is bounded: past 1 MiB, no more than 1000 times the
// input consumed (a compression bomb stops).
class BodyInflater {
 public:
  explicit BodyInflater(bool deflate = false);
  ~BodyInflater();
  BodyInflater(const BodyInflater&) = delete;
  BodyInflater& operator=(const BodyInflater&) = delete;
  // Decodes d[0, n), calling out(data, len) for what comes out.
  void data(const uint8_t* d, size_t n, const std::function<void(const uint8_t*, size_t)>& out);
  bool passed_through() const { return state_ == Raw; }
  bool stopped() const { return state_ == Stopped; }  // broken, or a bomb: what follows is dropped
  bool ended() const { return state_ == Ended; }      // the compressed stream's end

 private:
  enum State : uint8_t { Start, Inflating, Raw, Stopped, Ended };
  State state_ = Start;
  bool deflate_ = false;      // Content-Encoding deflate: raw deflate is tried when a zlib header fails
  bool raw_deflate_ = false;  // (tried)
  uint64_t out_ = 0;
  std::string held_;  // the input while nothing came out of it (replayed if the decoder refuses it)
  struct Z;
  std::unique_ptr<Z> z_;
  bool begin(bool raw);
};

// One request/response exchange, Suricata's buffers filled in as the
// parser gets them (empty until then).
struct HttpTx {
  uint64_t index = 0;  // within the connection, from 0
  // request
  std::string method, uri, uri_raw, protocol, request_line, host, host_raw, user_agent, cookie, referer;
  std::string accept, accept_enc, accept_lang, request_connection, request_content_len;
  // which of the request's headers above were sent (an empty value is a header all the same)
  static constexpr uint32_t kUserAgent = 1, kReferer = 2, kAccept = 4, kAcceptEnc = 8, kAcceptLang = 16;
  uint32_t request_has = 0;
  std::string request_start, response_start;         // the first line and the headers, as sent (http.start)
  std::string request_headers, request_headers_raw;  // "Name: value\r\n" each (raw: as sent)
  std::vector<std::string> request_header_list, response_header_list;  // "Name: value" each
  std::string request_header_names, response_header_names;             // "\r\nName\r\n...\r\n\r\n" (Suricata's)
  std::string request_body;
  // response
  std::string stat_code, stat_msg, response_line, server, response_cookie;
  std::string location, response_connection, response_content_len;
  std::string response_headers, response_headers_raw;
  std::string response_body;  // decompressed, as file.data sees it
  std::string content_type;   // of the response (request's until then)
  std::string response_content_type;
  uint64_t response_length = 0;                   // the response's message body as sent so far (before decoding)
  int port = -1;                                  // the request's port (URI or Host header), -1 when none was given
  HttpFile files[2];                              // by direction: 0 the request's, 1 the response's
  std::unique_ptr<HttpForm> form;                 // a multipart/form-data request's uploads (null for other requests)
  std::unique_ptr<BodyInflater> request_inflate;  // a gzip'd or deflated request body's decoder (else null)
  // progress
  static constexpr uint8_t kRequestHeaders = 1, kRequestDone = 2, kResponseHeaders = 4, kResponseDone = 8,
                           kRequestLine = 16;
  // not progress: the connection ended before the transaction completed
  // (fired once, its open files truncated)
  static constexpr uint8_t kEnded = 32;
  // a direction's stream ended before its message completed: its body, as
  // far as it goes, is final (detection inspects it, as Suricata at EOF)
  static constexpr uint8_t kRequestBodyEnd = 64, kResponseBodyEnd = 128;
  uint8_t progress = 0;
  // what went wrong in its parsing: ids::HttpEvent bits (libhtp's warnings
  // and errors, and its transaction flags, as Suricata reads them)
  uint64_t events = 0;
  // the detection engine's: rules that already alerted on this transaction,
  // and whether a config rule turned its logging off
  std::vector<uint32_t> alerted;
  std::vector<uint32_t> stream_matched;  // rules whose payload items matched data delivered for it
  bool no_log = false;
  uint64_t events_logged = 0;    // the events an anomaly record was made of
  uint64_t events_seen[2] = {};  // the events the rules were matched with, on a packet each way
};

// What the parser saw, over all connections of a worker.
struct HttpCounters {
  Stat connections;     // connections detected as HTTP
  Stat transactions;    // transactions started
  Stat parse_errors;    // directions the parser gave up on
  Stat gaps;            // directions given up because of a stream gap
  Stat body_truncated;  // bodies cut at their limit
  Stat body_undecoded;  // gzip'd or deflated request bodies whose decoding broke or stopped (a bomb): cut there
  Stat tx_limit;        // connections whose parsing stopped at max_tx live transactions
};

class HttpConn {
 public:
  // progress: one of HttpTx's k* bits reached by tx; 0: only its events
  // changed (a warning libhtp gave after the transaction's last step).
  using Event = std::function<void(HttpTx& tx, uint8_t progress)>;
  HttpConn(const HttpConfig& cfg, HttpCounters& counters, Event on_event);
  ~HttpConn();
  HttpConn(const HttpConn&) = delete;
  HttpConn& operator=(const HttpConn&) = delete;

  // Stream data in order: dir 0 from the client, 1 from the server. ts: ns.
  // Transactions stay valid until release_done().
  void data(uint8_t dir, const uint8_t* d, uint32_t n, uint64_t ts);
  // Frees the transactions that completed (their events were delivered),
  // but those `keep` says are still needed (they go at a later call).
  void release_done(const std::function<bool(const HttpTx&)>& keep = {});
  // Each live transaction (those release_done() frees included), oldest first.
  void each(const std::function<void(HttpTx&)>& f);
  // A hole in a direction's stream: that direction is not parsed further.
  void gap(uint8_t dir);
  // A direction ended (its FIN): a response delimited by the connection's
  // close completes now (Suricata's EOF handling).
  void end(uint8_t dir, uint64_t ts);
  // The connection ended: whatever is pending completes, and transactions
  // still incomplete get kEnded.
  void close(uint64_t ts);
  // Transactions begun so far (Suricata's tx count).
  uint64_t transactions() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

// The filename parameter of a Content-Disposition value, unquoted; empty
// when there is none.
std::string content_disposition_filename(const std::string& value);

// Whether the first bytes of a direction look like HTTP: 1 yes, 0 no, -1
// not enough bytes yet.
int http_detect(uint8_t dir, const uint8_t* d, uint32_t n);

}  // namespace shoal::flow
