// SMTP (RFC 5321; PIPELINING, CHUNKING's BDAT, STARTTLS) as an IDS reads it,
// with Suricata's transactions: a transaction begins with the first command
// after the last message ended (RSET and QUIT begin none), gathers MAIL
// FROM, RCPT TO and the message (DATA, dot-unstuffed up to its lone ".", or
// BDAT chunks up to LAST) read by a MimeParser, and ends when the server
// answers the message's end. Replies are matched to the commands they answer
// in order (pipelined or not): a DATA refused leaves data mode, a STARTTLS
// accepted ends the parsing (what follows is TLS). Bounded: command lines of
// kSmtpMaxLine bytes (longer ones cut, an event), kSmtpMaxRcpt recipients,
// kSmtpMaxTx transactions open, kSmtpMaxPending commands awaiting a reply.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

#include "shoal/flow/mime.hh"

namespace shoal::flow {

constexpr uint32_t kSmtpMaxLine = 4096;
constexpr size_t kSmtpMaxRcpt = 512, kSmtpMaxTx = 64, kSmtpMaxPending = 256;

struct SmtpTx {
  uint64_t index = 0;
  std::string helo;  // the connection's HELO/EHLO argument
  std::string mail_from;
  std::vector<std::string> rcpt_to;
  bool has_message = false;  // DATA or BDAT began a message
  MimeParser mime;
  bool message_done = false;      // the message ended (the lone "." or BDAT LAST)
  bool done = false;              // ... and the server answered it (or the connection ended)
  bool cut = false;               // the message ended at a hole or the connection's end, not its own
  std::vector<uint32_t> alerted;  // rules that alerted on it (once each), for the caller
  size_t files_logged = 0;        // files the caller logged (the first n of mime.files())
  size_t files_matched = 0;       // ... and whose content its rules were matched against
};

class SmtpConn {
 public:
  enum What : uint8_t { kRequest, kDone };
  // A transaction progressed with the client's data (kRequest), or ended (kDone; then dropped).
  using Event = std::function<void(SmtpTx& tx, uint8_t what)>;
  explicit SmtpConn(Event on) : on_(std::move(on)) {}
  // The attachments' digests computed (FileDigest bits), for transactions begun after.
  void set_file_digests(uint8_t which) { digests_ = which; }
  // In-order stream data of one direction (0: client, 1: server).
  void data(uint8_t dir, const uint8_t* d, uint32_t n);
  void gap(uint8_t dir);
  // The connection ended: every open transaction ends (kDone), a message
  // cut short read as far as it came.
  void end();
  // The transactions not ended yet, oldest first.
  std::deque<SmtpTx>& open() { return txs_; }
  const std::string& helo() const { return helo_; }
  bool tls() const { return tls_; }  // STARTTLS was accepted: no more parsing
  // Events (bits): a command line too long, a reply to no command, the
  // bounds above reached.
  enum Event_ : uint32_t { kLineTooLong = 1, kNoCommand = 2, kTooMany = 4 };
  uint32_t events() const { return events_; }

 private:
  enum Cmd : uint8_t { kOther, kData, kDataEnd, kBdat, kBdatLast, kStartTls, kRset, kQuit };
  void command(const std::string& line, bool cut);
  void reply(const std::string& code);
  void message_byte(uint8_t c, bool dot);  // DATA (`dot`: unstuffed, up to ".") or BDAT content
  void end_message();
  void finish_tx();  // the oldest transaction whose message ended (answered, or at the end)

  Event on_;
  std::deque<SmtpTx> txs_;
  uint64_t next_ = 0;
  std::string helo_;
  std::string buf_[2];
  bool cut_[2] = {false, false};
  bool data_mode_ = false;                    // DATA: lines up to "."
  uint64_t bdat_left_ = 0;                    // BDAT: bytes of the chunk still to come
  bool bdat_last_ = false;                    // ... and it is the last
  std::string mline_;                         // a message line in progress
  std::deque<Cmd> pending_;                   // commands awaiting their reply
  bool any_tx_ = false, last_ended_ = false;  // a transaction began; the last one's message ended
  uint8_t digests_ = 0;
  bool tls_ = false;
  uint32_t events_ = 0;
};

// Whether a direction's first bytes look like SMTP: a client's EHLO or HELO,
// a server's "220" greeting (`greeting_ok`: only where the port says SMTP,
// FTP greets alike). 1 yes, 0 no, -1 too few bytes to say.
int smtp_probe(uint8_t dir, const uint8_t* d, uint32_t n, bool greeting_ok);

}  // namespace shoal::flow
