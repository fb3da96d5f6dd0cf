// SIP (RFC 3261) messages, as an IDS reads them: the request or status line,
// the headers (compact forms expanded, names case-folded, every value kept:
// a header may repeat) and the body Content-Length says. Over UDP a datagram
// is a message; over TCP, SipTcpFramer cuts the stream into messages.
// Bounded: a message's header block at most kMaxHead bytes, its body at most
// kMaxBody; past them the direction is given up (counted by the caller).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace shoal::flow {

struct SipMessage {
  bool request = false;
  std::string method, uri, version;  // a request's line (version: "SIP/2.0")
  std::string code, reason;          // a response's
  std::string first_line;            // the request or status line as sent, without its CRLF
  // (name case-folded, compact form expanded: "f" is "from"), value trimmed
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Every value of header `name` (case-folded long name), in order.
  std::vector<std::string> values(std::string_view name) const;
};

constexpr uint32_t kSipMaxHead = 64 * 1024, kSipMaxBody = 1024 * 1024;

// Whether the bytes start a SIP message: a request line naming a SIP method
// and a sip: or sips: URI, or a "SIP/2.0 " status line. 1 yes, 0 no, -1 too
// few bytes to say.
int sip_probe(const uint8_t* d, uint32_t n);

// One message at d. Returns the bytes it took, 0 when it is not all there
// yet (TCP), -1 when it is not SIP or breaks the bounds. A datagram
// (complete = true) is one message: a body shorter than Content-Length is
// taken as it is.
int64_t sip_parse(const uint8_t* d, uint32_t n, SipMessage& m, bool complete);

// A TCP direction cut into messages.
class SipTcpFramer {
 public:
  // Appends data; calls on(message) for each whole one. False once the
  // direction is given up (not SIP, or past the bounds).
  template <class F>
  bool data(const uint8_t* d, uint32_t n, F&& on) {
    if (failed_) return false;
    buf_.append(reinterpret_cast<const char*>(d), n);
    size_t off = 0;
    while (off < buf_.size()) {
      SipMessage m;
      int64_t used =
          sip_parse(reinterpret_cast<const uint8_t*>(buf_.data()) + off, uint32_t(buf_.size() - off), m, false);
      if (used < 0) return failed_ = true, buf_.clear(), false;
      if (used == 0) break;
      off += size_t(used);
      on(m);
    }
    buf_.erase(0, off);
    if (buf_.size() > kSipMaxHead + kSipMaxBody) return failed_ = true, buf_.clear(), false;
    return true;
  }
  void gap() { failed_ = true, buf_.clear(); }

 private:
  std::string buf_;
  bool failed_ = false;
};

}  // namespace shoal::flow
