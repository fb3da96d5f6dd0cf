#include "shoal/flow/sip.hh"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace shoal::flow {

namespace {

constexpr const char* kMethods[] = {"INVITE",    "ACK",    "BYE",     "CANCEL", "OPTIONS", "REGISTER", "PRACK",
                                    "SUBSCRIBE", "NOTIFY", "PUBLISH", "INFO",   "REFER",   "MESSAGE",  "UPDATE"};

// RFC 3261 7.3.3's compact header names.
std::string long_name(std::string n) {
  for (char& c : n) c = char(std::tolower(uint8_t(c)));
  if (n.size() != 1) return n;
  switch (n[0]) {
    case 'i': return "call-id";
    case 'm': return "contact";
    case 'e': return "content-encoding";
    case 'l': return "content-length";
    case 'c': return "content-type";
    case 'f': return "from";
    case 's': return "subject";
    case 'k': return "supported";
    case 't': return "to";
    case 'v': return "via";
    case 'r': return "refer-to";
    case 'o': return "event";
  }
  return n;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool is_token(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(uint8_t(c)) || std::strchr("-.!%*_+`'~", c))) return false;
  return true;
}

// The first line: a request (METHOD URI SIP/2.0) or a status line
// (SIP/2.0 CODE REASON).
bool first_line(std::string_view l, SipMessage& m) {
  m.first_line = std::string(l);
  if (l.substr(0, 8) == "SIP/2.0 ") {
    std::string_view rest = l.substr(8);
    if (rest.size() < 3 || !std::isdigit(uint8_t(rest[0])) || !std::isdigit(uint8_t(rest[1])) ||
        !std::isdigit(uint8_t(rest[2])) || (rest.size() > 3 && rest[3] != ' '))
      return false;
    m.request = false;
    m.version = "SIP/2.0";
    m.code = std::string(rest.substr(0, 3));
    m.reason = std::string(rest.size() > 4 ? rest.substr(4) : std::string_view());
    return true;
  }
  size_t a = l.find(' ');
  if (a == std::string_view::npos) return false;
  size_t b = l.find(' ', a + 1);
  if (b == std::string_view::npos) return false;
  std::string_view method = l.substr(0, a), uri = l.substr(a + 1, b - a - 1), ver = l.substr(b + 1);
  if (!is_token(method) || uri.empty() || ver.substr(0, 4) != "SIP/") return false;
  m.request = true;
  m.method = std::string(method);
  m.uri = std::string(uri);
  m.version = std::string(ver);
  return true;
}

}  // namespace

std::vector<std::string> SipMessage::values(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : headers)
    if (k == name) out.push_back(v);
  return out;
}

int sip_probe(const uint8_t* d, uint32_t n) {
  std::string_view s(reinterpret_cast<const char*>(d), n);
  if (s.size() >= 8) {
    if (s.substr(0, 8) == "SIP/2.0 ") return 1;
  } else if (std::string_view("SIP/2.0 ").substr(0, s.size()) == s) {
    return -1;
  }
  bool prefix = false;  // the bytes so far could still start a request
  for (const char* meth : kMethods) {
    std::string want = std::string(meth) + " sip";
    size_t k = std::min(want.size(), s.size());
    if (s.substr(0, k) != std::string_view(want).substr(0, k)) continue;
    if (s.size() < want.size() + 1) {
      prefix = true;
      continue;
    }
    char c = s[want.size()];
    if (c == ':' || (c == 's' && (s.size() < want.size() + 2 || s[want.size() + 1] == ':'))) return 1;
  }
  return prefix ? -1 : 0;
}

int64_t sip_parse(const uint8_t* d, uint32_t n, SipMessage& m, bool complete) {
  std::string_view s(reinterpret_cast<const char*>(d), n);
  size_t start = 0;
  while (start + 1 < s.size() && s[start] == '\r' && s[start + 1] == '\n') start += 2;  // keep-alive CRLFs
  size_t end = s.find("\r\n\r\n", start);
  size_t head_end;  // where the blank line starts
  size_t body_at;
  if (end != std::string_view::npos) {
    head_end = end, body_at = end + 4;
  } else if (complete) {
    head_end = s.size(), body_at = s.size();  // a datagram without its blank line: headers to its end
  } else {
    if (s.size() - start > kSipMaxHead) return -1;
    return 0;
  }
  if (head_end - start > kSipMaxHead) return -1;
  std::string_view head = s.substr(start, head_end - start);
  size_t eol = head.find("\r\n");
  if (!first_line(head.substr(0, eol), m)) return -1;
  // headers: name ':' value, folded lines (leading white space) continue the last
  size_t pos = eol == std::string_view::npos ? head.size() : eol + 2;
  while (pos < head.size()) {
    size_t e = head.find("\r\n", pos);
    std::string_view line = head.substr(pos, e == std::string_view::npos ? std::string_view::npos : e - pos);
    pos = e == std::string_view::npos ? head.size() : e + 2;
    if (line.empty()) continue;
    if ((line[0] == ' ' || line[0] == '\t') && !m.headers.empty()) {
      m.headers.back().second += " " + std::string(trim(line));
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;  // (a broken line: skipped, as parsers that go on do)
    m.headers.emplace_back(long_name(std::string(trim(line.substr(0, colon)))),
                           std::string(trim(line.substr(colon + 1))));
  }
  // the body: Content-Length bytes (a datagram: what it has)
  uint64_t want = 0;
  bool has_len = false;
  for (const auto& [k, v] : m.headers)
    if (k == "content-length") {
      has_len = true;
      want = std::strtoull(v.c_str(), nullptr, 10);
    }
  if (want > kSipMaxBody) return -1;
  size_t have = s.size() - body_at;
  if (complete) {
    m.body = std::string(s.substr(body_at, has_len ? std::min<size_t>(have, want) : have));
    return int64_t(s.size());
  }
  if (have < want) return 0;
  m.body = std::string(s.substr(body_at, want));
  return int64_t(body_at + want);
}

}  // namespace shoal::flow
