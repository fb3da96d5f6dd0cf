#include "shoal/flow/smtp.hh"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace shoal::flow {

namespace {

bool smtp_istarts(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::toupper(uint8_t(s[i])) != prefix[i]) return false;
  return true;
}

// The argument after a command's `prefix` ("MAIL FROM:"): blanks skipped,
// then up to the next blank (Suricata's: parameters like SIZE= are not in it).
std::string smtp_argument(std::string_view line, size_t prefix) {
  size_t i = std::min(prefix, line.size());
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  size_t e = i;
  while (e < line.size() && line[e] != ' ' && line[e] != '\t') ++e;
  return std::string(line.substr(i, e - i));
}

bool reply_code(std::string_view l) {
  return l.size() >= 3 && std::isdigit(uint8_t(l[0])) && std::isdigit(uint8_t(l[1])) && std::isdigit(uint8_t(l[2]));
}

}  // namespace

int smtp_probe(uint8_t dir, const uint8_t* d, uint32_t n, bool greeting_ok) {
  std::string_view s(reinterpret_cast<const char*>(d), n);
  if (dir & 1) {
    if (!greeting_ok) return 0;
    static constexpr std::string_view kGreeting = "220";
    size_t k = std::min<size_t>(n, 3);
    if (s.substr(0, k) != kGreeting.substr(0, k)) return 0;
    if (n < 4) return -1;
    return s[3] == ' ' || s[3] == '-' ? 1 : 0;
  }
  for (std::string_view verb : {"EHLO", "HELO"}) {
    size_t k = std::min<size_t>(n, 4);
    if (!smtp_istarts(s.substr(0, k), verb.substr(0, k))) continue;
    if (n < 5) return -1;
    return s[4] == ' ' || s[4] == '\r' || s[4] == '\n' ? 1 : 0;
  }
  return 0;
}

void SmtpConn::data(uint8_t dir, const uint8_t* d, uint32_t n) {
  if (tls_) return;
  dir &= 1;
  if (dir == 1) {  // replies: "NNN-text" lines up to "NNN text"
    std::string& b = buf_[1];
    for (uint32_t i = 0; i < n; ++i) {
      char c = char(d[i]);
      if (c != '\n') {
        if (b.size() < kSmtpMaxLine) b.push_back(c);
        continue;
      }
      if (!b.empty() && b.back() == '\r') b.pop_back();
      if (reply_code(b) && !(b.size() > 3 && b[3] == '-')) {  // (a multi-line reply's last line)
        reply(b.substr(0, 3));
        if (tls_) return;
      }
      b.clear();
    }
    return;
  }
  std::string& b = buf_[0];
  uint32_t i = 0;
  while (i < n) {
    if (bdat_left_) {
      auto k = uint32_t(std::min<uint64_t>(bdat_left_, n - i));
      for (uint32_t j = 0; j < k; ++j) message_byte(d[i + j], false);
      i += k;
      bdat_left_ -= k;
      if (!bdat_left_ && bdat_last_) end_message();
      continue;
    }
    uint8_t c = d[i++];
    if (data_mode_) {
      message_byte(c, true);
      continue;
    }
    if (c == '\n') {
      if (!b.empty() && b.back() == '\r') b.pop_back();
      std::string line = std::move(b);
      b.clear();
      bool was_cut = cut_[0];
      cut_[0] = false;
      command(line, was_cut);
      continue;
    }
    if (b.size() >= kSmtpMaxLine) {
      cut_[0] = true;
      continue;
    }
    b.push_back(char(c));
  }
  if (!txs_.empty()) on_(txs_.back(), kRequest);
}

void SmtpConn::command(const std::string& line, bool cut) {
  if (cut) events_ |= kLineTooLong;
  if (line.empty()) return;
  std::string verb = line.substr(0, line.find(' '));
  for (char& ch : verb) ch = char(std::toupper(uint8_t(ch)));
  bool no_new = verb == "RSET" || verb == "QUIT";
  if (!any_tx_ || (last_ended_ && !no_new)) {
    if (txs_.size() >= kSmtpMaxTx) {  // (a client that never waits: the oldest end now)
      events_ |= kTooMany;
      txs_.front().message_done = true;
      finish_tx();
    }
    txs_.emplace_back();
    txs_.back().index = next_++;
    txs_.back().helo = helo_;
    txs_.back().mime.set_file_digests(digests_);
    any_tx_ = true, last_ended_ = false;
  }
  SmtpTx* tx = txs_.empty() || last_ended_ ? nullptr : &txs_.back();
  Cmd cmd = kOther;
  if (verb == "HELO" || verb == "EHLO") {
    helo_ = smtp_argument(line, 4);
    if (tx) tx->helo = helo_;
  } else if (smtp_istarts(line, "MAIL FROM:")) {
    if (tx) tx->mail_from = smtp_argument(line, 10);
  } else if (smtp_istarts(line, "RCPT TO:")) {
    if (tx && tx->rcpt_to.size() < kSmtpMaxRcpt)
      tx->rcpt_to.push_back(smtp_argument(line, 8));
    else if (tx)
      events_ |= kTooMany;
  } else if (verb == "DATA") {
    cmd = kData;
    data_mode_ = true;  // (Suricata's too: the data follows without waiting for the 354)
    if (tx) tx->has_message = true;
  } else if (verb == "BDAT") {
    char* end = nullptr;
    std::string size = smtp_argument(line, 4);
    unsigned long long k = std::strtoull(size.c_str(), &end, 10);
    std::string last = smtp_argument(line, 5 + size.size());
    for (char& ch : last) ch = char(std::toupper(uint8_t(ch)));
    bdat_last_ = last == "LAST";
    bdat_left_ = end && *end == '\0' && !size.empty() ? k : 0;
    cmd = bdat_last_ ? kBdatLast : kBdat;
    if (tx) tx->has_message = true;
    if (!bdat_left_ && bdat_last_) end_message();
  } else if (verb == "STARTTLS") {
    cmd = kStartTls;
  } else if (verb == "RSET") {
    cmd = kRset;
  } else if (verb == "QUIT") {
    cmd = kQuit;
  }
  if (pending_.size() >= kSmtpMaxPending) {
    events_ |= kTooMany;
    pending_.pop_front();
  }
  pending_.push_back(cmd);
}

void SmtpConn::message_byte(uint8_t c, bool dot) {
  if (c != '\n') {
    mline_.push_back(char(c));
    if (mline_.size() >= kMimeMaxLine) {  // a piece of a longer line
      if (!txs_.empty() && !last_ended_) txs_.back().mime.line(mline_, {});
      mline_.clear();
    }
    return;
  }
  bool cr = !mline_.empty() && mline_.back() == '\r';
  if (cr) mline_.pop_back();
  std::string_view l(mline_);
  if (dot && l == ".") {  // the message's end
    mline_.clear();
    data_mode_ = false;
    end_message();
    if (pending_.size() < kSmtpMaxPending) pending_.push_back(kDataEnd);
    return;
  }
  if (dot && !l.empty() && l[0] == '.') l.remove_prefix(1);  // dot-stuffing undone
  if (!txs_.empty() && !last_ended_) txs_.back().mime.line(l, cr ? "\r\n" : "\n");
  mline_.clear();
}

void SmtpConn::end_message() {
  if (!mline_.empty() && !txs_.empty() && !last_ended_) txs_.back().mime.line(mline_, {});
  mline_.clear();
  bdat_left_ = 0, bdat_last_ = false;
  if (txs_.empty() || last_ended_) return;
  txs_.back().mime.finish();
  txs_.back().message_done = true;
  last_ended_ = true;
}

void SmtpConn::reply(const std::string& code) {
  if (pending_.empty()) {  // the greeting, or a reply no command asked for
    if (any_tx_) events_ |= kNoCommand;
    return;
  }
  Cmd cmd = pending_.front();
  pending_.pop_front();
  switch (cmd) {
    case kData:
      if (code != "354" && data_mode_) {  // refused: no message follows
        data_mode_ = false;
        mline_.clear();
      }
      break;
    case kDataEnd:
    case kBdatLast: finish_tx(); break;
    case kStartTls:
      if (code[0] == '2') tls_ = true;
      break;
    default: break;
  }
}

void SmtpConn::finish_tx() {
  auto it = std::find_if(txs_.begin(), txs_.end(), [](const SmtpTx& t) { return t.message_done; });
  if (it == txs_.end()) return;
  it->done = true;
  on_(*it, kDone);
  txs_.erase(it);
}

void SmtpConn::gap(uint8_t dir) {
  dir &= 1;
  buf_[dir].clear();
  cut_[dir] = dir == 0 && !data_mode_ && !bdat_left_;  // (the rest of a command line is skipped)
  if (dir == 1) return;
  if (data_mode_ || bdat_left_) {  // a hole in a message: it ends there
    data_mode_ = false;
    if (!txs_.empty() && !last_ended_) txs_.back().cut = true;
    end_message();
  }
}

void SmtpConn::end() {
  if (data_mode_ || bdat_left_) {
    data_mode_ = false;
    if (!txs_.empty() && !last_ended_) txs_.back().cut = true;
    end_message();
  }
  while (!txs_.empty()) {
    SmtpTx& t = txs_.front();
    if (t.has_message && !t.message_done) t.mime.finish(), t.cut = true;
    t.message_done = true;
    finish_tx();
  }
}

}  // namespace shoal::flow
