// FTP's control connection (RFC 959, 2428) as an IDS reads it: each command
// line is a transaction, and the replies that follow (multi-line ones
// joined) are its own; PORT/EPRT commands and PASV/EPSV replies give the
// data connection's mode and port. Bounded: a line at most kFtpMaxLine
// bytes (longer ones are cut, counted as an event), kFtpMaxTx transactions
// waiting for a reply.
#pragma once
#include <cstdint>
#include <deque>
#include <functional>
#include <string>
#include <vector>

namespace shoal::flow {

constexpr uint32_t kFtpMaxLine = 4096;
constexpr size_t kFtpMaxTx = 256;

struct FtpTx {
  uint64_t index = 0;
  std::string command, command_data;        // "USER", "anonymous"
  std::vector<std::string> codes, replies;  // each reply: "331", "Please specify the password."
  bool reply_received = false;
  uint8_t mode = 0;  // 1 active (PORT, EPRT), 2 passive (PASV, EPSV reply)
  int32_t dynamic_port = -1;
  bool request_too_long = false, response_too_long = false;
  // a data command (RETR, STOR, APPE, STOU, LIST, NLST, MLSD) before PORT,
  // EPRT, PASV or EPSV gave it a data connection; a RETR, STOR or APPE
  // without a file name (Suricata's file_before_port, file_without_name)
  bool file_before_port = false, file_without_name = false;
  std::vector<uint32_t> alerted;  // rules that alerted on it (once each), for the caller
};

class FtpConn {
 public:
  enum What : uint8_t { kRequest, kReply, kDone };
  // A transaction progressed: its command, a preliminary (1yz) reply, or the
  // reply that ends it (kDone; it is then dropped).
  using Event = std::function<void(FtpTx& tx, uint8_t what)>;
  explicit FtpConn(Event on) : on_(std::move(on)) {}
  // In-order stream data of one direction (0: commands, 1: replies).
  void data(uint8_t dir, const uint8_t* d, uint32_t n);
  void gap(uint8_t dir) { buf_[dir & 1].clear(), cut_[dir & 1] = true; }
  // The transactions still open (commands without a reply), oldest first.
  std::deque<FtpTx>& open() { return txs_; }
  const std::deque<FtpTx>& open() const { return txs_; }
  // Commands' transactions begun so far.
  uint64_t transactions() const { return next_; }

 private:
  void line(uint8_t dir, std::string l, bool too_long);
  Event on_;
  std::deque<FtpTx> txs_;
  uint64_t next_ = 0;
  std::string buf_[2];
  bool cut_[2] = {false, false};  // skipping the rest of a line too long (or after a gap)
  std::string multi_code_;        // a multi-line reply in progress: its code
  int32_t data_port_ = 0;         // the data connection's port agreed and not used yet (0: none)
  std::vector<std::string> multi_text_;
};

// Whether the first bytes of a direction look like FTP's control
// connection: the server's greeting ("220") or a client command (USER,
// AUTH...). 1 yes, 0 no, -1 too few bytes to say.
int ftp_probe(uint8_t dir, const uint8_t* d, uint32_t n);

}  // namespace shoal::flow
