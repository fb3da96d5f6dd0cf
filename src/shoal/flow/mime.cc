#include "shoal/flow/mime.hh"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace shoal::flow {

namespace {

bool mime_iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(uint8_t(x)) == y; });
}

bool mime_istarts(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && mime_iequals(s.substr(0, prefix.size()), prefix);
}

std::string_view mime_trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

int qp_hex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

}  // namespace

std::string mime_param(std::string_view value, std::string_view name) {
  size_t i = value.find(';');
  while (i != std::string_view::npos && i < value.size()) {
    ++i;  // past the ';'
    while (i < value.size() && (value[i] == ' ' || value[i] == '\t')) ++i;
    size_t eq = i;
    while (eq < value.size() && value[eq] != '=' && value[eq] != ';') ++eq;
    if (eq >= value.size() || value[eq] != '=') {  // a parameter without a value: the next one
      i = eq < value.size() ? eq : std::string_view::npos;
      continue;
    }
    bool ours = mime_iequals(mime_trim(value.substr(i, eq - i)), name);
    size_t v = eq + 1;
    while (v < value.size() && (value[v] == ' ' || value[v] == '\t')) ++v;
    std::string out;
    size_t end = v;
    if (v < value.size() && value[v] == '"') {  // a quoted string (\ escapes the next character)
      for (end = v + 1; end < value.size() && value[end] != '"'; ++end) {
        if (value[end] == '\\' && end + 1 < value.size()) ++end;
        out += value[end];
      }
      if (end < value.size()) ++end;
    } else {
      while (end < value.size() && value[end] != ';') ++end;
      out = std::string(mime_trim(value.substr(v, end - v)));
    }
    if (ours) return out;
    i = value.find(';', std::min(end, value.size()));
  }
  return {};
}

const char* MimeParser::status() const {
  return done_                     ? "PARSE_DONE"
         : state_ == State::Body   ? "BODY_STARTED"
         : state_ == State::Header ? "HEADER_STARTED"
                                   : "HEADER_READY";
}

const std::string* MimeParser::header(std::string_view lname) const {
  for (const MimeHeader& h : main_)
    if (mime_iequals(h.name, lname)) return &h.value;
  return nullptr;
}

std::vector<std::string> MimeParser::all(std::string_view lname) const {
  std::vector<std::string> out;
  for (const MimeHeader& h : main_)
    if (mime_iequals(h.name, lname)) out.push_back(h.value);
  return out;
}

void MimeParser::line(std::string_view l, std::string_view eol) {
  if (done_) return;
  if (l.size() > 998) anomalies_ |= kLongLine;  // (RFC 5322's limit; the line is read all the same)
  if (state_ == State::Body) return body_line(l, eol);
  header_line(l);
}

void MimeParser::header_line(std::string_view l) {
  if (l.empty()) return headers_done();
  std::vector<MimeHeader>& hs = main_done_ ? part_ : main_;
  if ((l[0] == ' ' || l[0] == '\t') && !hs.empty() && state_ == State::Header) {  // a folded line
    std::string& v = hs.back().value;
    l.remove_prefix(1);
    size_t room = kMimeMaxValue > v.size() ? kMimeMaxValue - v.size() : 0;
    if (l.size() > room) anomalies_ |= kLongHeader;
    v.append(l.substr(0, room));
    return;
  }
  size_t colon = l.find(':');
  if (colon == std::string_view::npos || colon == 0) return;  // not a header (Suricata ignores it too)
  if (hs.size() >= kMimeMaxHeaders) {
    anomalies_ |= kTooMany;
    return;
  }
  state_ = State::Header;
  std::string_view v = l.substr(colon + 1);
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  if (v.size() > kMimeMaxValue) anomalies_ |= kLongHeader, v = v.substr(0, kMimeMaxValue);
  hs.push_back({std::string(mime_trim(l.substr(0, colon))), std::string(v)});
}

void MimeParser::headers_done() {
  const std::vector<MimeHeader>& hs = main_done_ ? part_ : main_;
  main_done_ = true;
  std::string filename;
  bool encap = false;
  enc_ = Enc::Plain;
  type_ = Type::Message;
  for (const MimeHeader& h : hs) {
    if (mime_iequals(h.name, "content-disposition")) {
      if (filename.empty()) filename = mime_param(h.value, "filename");
    } else if (mime_iequals(h.name, "content-transfer-encoding")) {
      std::string_view e = mime_trim(h.value);
      if (mime_iequals(e, "base64")) {
        enc_ = Enc::Base64;
        b64_bits_ = b64_n_ = 0;
      } else if (mime_iequals(e, "quoted-printable")) {
        enc_ = Enc::Qp;
      }
    } else if (mime_iequals(h.name, "content-type")) {
      if (filename.empty()) filename = mime_param(h.value, "name");
      if (std::string b = mime_param(h.value, "boundary"); !b.empty()) {
        if (b.size() > 254) anomalies_ |= kLongBoundary;
        if (boundaries_.size() < kMimeMaxBoundaries)
          boundaries_.push_back("--" + b);
        else
          anomalies_ |= kTooMany;
      }
      std::string_view ct = mime_trim(std::string_view(h.value).substr(0, h.value.find(';')));
      if (mime_iequals(ct, "text/plain") || mime_iequals(ct, "text/html")) {
        type_ = Type::Text;
      } else {
        type_ = Type::Unknown;
        encap |= mime_istarts(ct, "message/");
      }
    }
  }
  part_.clear();
  if (encap) {  // an encapsulated message: its headers follow, read as a part's
    state_ = State::Start;
    return;
  }
  state_ = State::Body;
  if (filename.empty()) return;
  if (filename.size() > 255) anomalies_ |= kLongFilename;
  if (files_.size() >= kMimeMaxFiles) {
    anomalies_ |= kTooMany;
    return;
  }
  attachments_.push_back(filename);
  files_.emplace_back();
  files_.back().name = std::move(filename);
  files_.back().digests.start(digests_);
  data_.emplace_back();
  file_open_ = true;
  eol_held_.clear();
}

void MimeParser::body_line(std::string_view l, std::string_view eol) {
  // a boundary: the innermost one, or an outer one (the parts inside it end too)
  for (size_t k = boundaries_.size(); k-- > 0;) {
    const std::string& b = boundaries_[k];
    if (l.size() < b.size() || l.compare(0, b.size(), b) != 0) continue;
    if (enc_ == Enc::Base64 && file_open_) file_data(b64_decode("="));  // (the last group, padded)
    close_file();
    find_urls({}, true);
    boundaries_.resize(k + 1);
    if (l.size() >= b.size() + 2 && l[b.size()] == '-' && l[b.size() + 1] == '-') boundaries_.pop_back();
    state_ = State::Start;
    part_.clear();
    enc_ = Enc::Plain;
    type_ = Type::Message;
    return;
  }
  if (!file_open_ && type_ == Type::Unknown) return;  // (neither text nor a file: skipped)
  std::string decoded;
  switch (enc_) {
    case Enc::Plain:
      find_urls(std::string(l) + std::string(eol), false);
      if (file_open_) {
        file_data(eol_held_);
        file_data(l);
        eol_held_ = std::string(eol);
      }
      return;
    case Enc::Base64: decoded = b64_decode(l); break;
    case Enc::Qp: {
      bool soft = false;
      for (size_t c = 0; c < l.size();) {
        if (l[c] != '=') {
          decoded += l[c++];
          continue;
        }
        if (c + 1 == l.size()) {
          soft = true;
          break;
        }
        int h1 = c + 2 < l.size() ? qp_hex(l[c + 1]) : -1, h2 = c + 2 < l.size() ? qp_hex(l[c + 2]) : -1;
        if (h1 < 0 || h2 < 0) {
          anomalies_ |= kInvalidQp;
          if (c + 2 >= l.size()) break;
        } else {
          decoded += char(h1 << 4 | h2);
        }
        c += 3;
      }
      // the line's end held back as a plain line's: the one before a
      // boundary belongs to the boundary (RFC 2046)
      find_urls(soft ? decoded : decoded + std::string(eol), false);
      if (file_open_) {
        file_data(eol_held_);
        file_data(decoded);
        eol_held_ = soft ? std::string() : std::string(eol);
      }
      return;
    }
  }
  find_urls(decoded, false);
  if (file_open_) file_data(decoded);
}

std::string MimeParser::b64_decode(std::string_view in) {
  std::string out;
  for (char c : in) {
    if (c == '=') {  // padding: the group ends
      if (b64_n_ == 2) out += char(b64_bits_ >> 4);
      if (b64_n_ == 3) out += char(b64_bits_ >> 10), out += char(b64_bits_ >> 2);
      b64_bits_ = b64_n_ = 0;
      continue;
    }
    int v = b64_value(c);
    if (v < 0) {
      if (c != ' ' && c != '\t' && c != '\r' && c != '\n') anomalies_ |= kInvalidBase64;
      continue;
    }
    b64_bits_ = (b64_bits_ << 6 | uint32_t(v)) & 0xffffff;
    if (++b64_n_ == 4) {
      out += char(b64_bits_ >> 16), out += char(b64_bits_ >> 8), out += char(b64_bits_);
      b64_bits_ = b64_n_ = 0;
    }
  }
  return out;
}

void MimeParser::file_data(std::string_view d) {
  if (!file_open_ || d.empty()) return;
  files_.back().size += d.size();
  files_.back().digests.update(d.data(), d.size());
  std::string& kept = data_.back();
  if (kept.size() < keep_ && kept_total_ < keep_total_) {
    size_t take = std::min({d.size(), keep_ - kept.size(), keep_total_ - kept_total_});
    kept.append(d.substr(0, take));
    kept_total_ += take;
  }
}

void MimeParser::close_file() {
  if (!file_open_) return;
  files_.back().closed = true;
  files_.back().digests.finish();
  file_open_ = false;
  eol_held_.clear();
}

void MimeParser::find_urls(std::string_view decoded, bool flush) {
  url_line_.append(decoded);
  size_t upto = url_line_.size();
  if (!flush && !url_line_.empty() && url_line_.back() != '\n' && url_line_.size() <= 8192) {
    size_t nl = url_line_.rfind('\n');
    if (nl == std::string::npos) return;  // no line ended yet
    upto = nl + 1;
  }
  std::string_view s(url_line_.data(), upto);
  static constexpr std::string_view kScheme = "http://";
  for (size_t at = 0; at + kScheme.size() <= s.size();) {
    auto it = std::search(s.begin() + std::ptrdiff_t(at), s.end(), kScheme.begin(), kScheme.end(),
                          [](char a, char b) { return std::tolower(uint8_t(a)) == b; });
    if (it == s.end()) break;
    size_t start = size_t(it - s.begin()), end = start + kScheme.size();
    while (end < s.size() && !std::strchr(" \"'<>]\t\r\n", s[end])) ++end;
    if (urls_.size() < kMimeMaxUrls)
      urls_.emplace_back(s.substr(start + kScheme.size(), end - start - kScheme.size()));
    else
      anomalies_ |= kTooMany;
    at = end;
  }
  url_line_.erase(0, upto);
}

void MimeParser::finish() {
  if (done_) return;
  if (enc_ == Enc::Base64 && file_open_) file_data(b64_decode("="));
  if (file_open_) files_.back().at_finish = true;
  close_file();
  find_urls({}, true);
  done_ = true;
}

}  // namespace shoal::flow
