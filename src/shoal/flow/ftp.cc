#include "shoal/flow/ftp.hh"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>

namespace shoal::flow {

namespace {

bool digits3(const std::string& l) {
  return l.size() >= 3 && std::isdigit(uint8_t(l[0])) && std::isdigit(uint8_t(l[1])) && std::isdigit(uint8_t(l[2]));
}

// "h1,h2,h3,h4,p1,p2" somewhere in s (PORT's argument, PASV's reply): the port.
int32_t six_numbers_port(const std::string& s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (!std::isdigit(uint8_t(s[i])) || (i > 0 && std::isdigit(uint8_t(s[i - 1])))) continue;
    long v[6];
    size_t at = i;
    int k = 0;
    for (; k < 6; ++k) {
      if (at >= s.size() || !std::isdigit(uint8_t(s[at]))) break;
      char* end = nullptr;
      v[k] = std::strtol(s.c_str() + at, &end, 10);
      at = size_t(end - s.c_str());
      if (v[k] > 255) break;
      if (k < 5) {
        if (at >= s.size() || s[at] != ',') break;
        ++at;
      }
    }
    if (k == 6) return int32_t(v[4] * 256 + v[5]);
  }
  return -1;
}

// EPRT's "|proto|addr|port|" and EPSV's "(|||port|)": the last field.
int32_t extended_port(const std::string& s) {
  size_t a = s.find('|');
  if (a == std::string::npos || a + 1 >= s.size()) return -1;
  char d = s[a];
  // the delimiter, then three fields: proto, address, port
  size_t p1 = s.find(d, a + 1), p2 = p1 == std::string::npos ? p1 : s.find(d, p1 + 1),
         p3 = p2 == std::string::npos ? p2 : s.find(d, p2 + 1);
  if (p3 == std::string::npos) return -1;
  long port = std::strtol(s.c_str() + p2 + 1, nullptr, 10);
  return port > 0 && port < 65536 ? int32_t(port) : -1;
}

}  // namespace

int ftp_probe(uint8_t dir, const uint8_t* d, uint32_t n) {
  std::string_view s(reinterpret_cast<const char*>(d), n);
  if (dir & 1) {  // the server: a reply code
    if (n < 4) {
      for (char c : s)
        if (!std::isdigit(uint8_t(c))) return 0;
      return -1;
    }
    return std::isdigit(uint8_t(s[0])) && std::isdigit(uint8_t(s[1])) && std::isdigit(uint8_t(s[2])) &&
                   (s[3] == ' ' || s[3] == '-')
               ? 1
               : 0;
  }
  static constexpr const char* kCommands[] = {"USER", "PASS", "AUTH", "FEAT", "SYST", "PORT", "PASV",
                                              "EPSV", "EPRT", "RETR", "STOR", "LIST", "QUIT", "TYPE",
                                              "CWD ", "PWD",  "NOOP", "OPTS", "SIZE", "MDTM", "ACCT"};
  for (const char* c : kCommands) {
    size_t k = std::min<size_t>(std::strlen(c), n);
    bool same = true;
    for (size_t i = 0; i < k; ++i) same &= std::toupper(uint8_t(s[i])) == c[i];
    if (!same) continue;
    if (n < std::strlen(c)) return -1;
    return 1;
  }
  return 0;
}

void FtpConn::data(uint8_t dir, const uint8_t* d, uint32_t n) {
  dir &= 1;
  std::string& b = buf_[dir];
  for (uint32_t i = 0; i < n; ++i) {
    char c = char(d[i]);
    if (c == '\n') {
      if (!b.empty() && b.back() == '\r') b.pop_back();
      bool was_cut = cut_[dir];
      cut_[dir] = false;
      std::string l = std::move(b);
      b.clear();
      line(dir, std::move(l), was_cut);
      continue;
    }
    if (b.size() >= kFtpMaxLine) {  // too long: the start is kept, the rest skipped
      cut_[dir] = true;
      continue;
    }
    b.push_back(c);
  }
}

void FtpConn::line(uint8_t dir, std::string l, bool too_long) {
  if (dir == 0) {
    if (l.empty()) return;
    if (txs_.size() >= kFtpMaxTx) txs_.pop_front();  // (a client that never waits: the oldest are given up)
    txs_.emplace_back();
    FtpTx& t = txs_.back();
    t.index = next_++;
    t.request_too_long = too_long;
    size_t sp = l.find(' ');
    t.command = l.substr(0, sp);
    for (char& c : t.command) c = char(std::toupper(uint8_t(c)));
    if (sp != std::string::npos) t.command_data = l.substr(sp + 1);
    if (t.command == "PORT") {
      t.mode = 1, t.dynamic_port = six_numbers_port(t.command_data);
    } else if (t.command == "EPRT") {
      t.mode = 1, t.dynamic_port = extended_port(t.command_data);
    }
    // a data command takes the data connection agreed (Suricata's checks)
    const std::string& c = t.command;
    const bool named = c == "RETR" || c == "STOR" || c == "APPE";
    if (named || c == "STOU" || c == "LIST" || c == "NLST" || c == "MLSD") {
      if (named && t.command_data.empty())
        t.file_without_name = true;
      else if (data_port_ <= 0)
        t.file_before_port = true;
      else
        data_port_ = 0;
    }
    on_(t, kRequest);
    return;
  }
  // a reply: "NNN text", or a multi-line one "NNN-..." up to "NNN text"
  if (!multi_code_.empty()) {
    multi_text_.push_back(l);
    if (!(l.size() >= 4 && l.compare(0, 3, multi_code_) == 0 && l[3] == ' ')) return;
  } else if (digits3(l) && l.size() >= 4 && l[3] == '-') {
    multi_code_ = l.substr(0, 3);
    multi_text_ = {l};
    return;
  } else {
    multi_text_ = {l};
  }
  std::string code = digits3(multi_text_.front()) ? multi_text_.front().substr(0, 3) : std::string();
  multi_code_.clear();
  if (txs_.empty()) {  // a reply no command asked for (the greeting): no transaction, as Suricata's
    multi_text_.clear();
    return;
  }
  FtpTx& t = txs_.front();
  t.reply_received = true;
  t.response_too_long |= too_long;
  for (const std::string& x : multi_text_) {
    t.codes.push_back(code);
    t.replies.push_back(x.size() > 4 && digits3(x) && (x[3] == ' ' || x[3] == '-') ? x.substr(4) : x);
  }
  if (code == "227") {
    t.mode = 2, t.dynamic_port = six_numbers_port(multi_text_.back().substr(3));
  } else if (code == "229") {
    t.mode = 2, t.dynamic_port = extended_port(multi_text_.back());
  }
  // the data connection is agreed: PORT or EPRT accepted (200), or the
  // server's passive port
  if ((code == "227" || code == "229" || (code == "200" && t.mode == 1)) && t.dynamic_port > 0)
    data_port_ = t.dynamic_port;
  multi_text_.clear();
  bool preliminary = !code.empty() && code[0] == '1';  // 1yz: more replies follow
  on_(t, preliminary ? kReply : kDone);
  if (!preliminary) txs_.pop_front();
}

}  // namespace shoal::flow
