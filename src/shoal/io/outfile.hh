// OutFile: an output file whose every write and close is checked. Data goes
// in as records (a packet, a log line); flush() writes them and says how
// many did not make it. On a failed write the file is cut back to its last
// whole record (a pcap stays readable, a log keeps whole lines), the error
// keeps the file name and the OS reason, and every later record is lost
// without another attempt: the caller counts them as dropped.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shoal::io {

class OutFile {
 public:
  OutFile() = default;
  ~OutFile();
  OutFile(const OutFile&) = delete;
  OutFile& operator=(const OutFile&) = delete;

  // "-" is standard output. append: keep what the file holds.
  bool open(const std::string& path, bool append, std::string& err);
  bool is_open() const { return fd_ >= 0; }
  const std::string& path() const { return path_; }

  void put(const void* data, size_t n) {
    const auto* p = static_cast<const uint8_t*>(data);
    buf_.insert(buf_.end(), p, p + n);
  }
  void put(std::string_view s) { put(s.data(), s.size()); }
  // Ends a record; with more than `autoflush` bytes buffered, writes them.
  void end_record(size_t autoflush = size_t(1) << 20) {
    ends_.push_back(buf_.size());
    if (buf_.size() >= autoflush) flush();
  }
  // Writes the buffered records; returns how many of them were lost.
  uint64_t flush();
  // Flushes and closes; false if anything failed (then error() says what).
  bool close();

  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  uint64_t records_lost() const { return lost_; }
  uint64_t records_written() const { return written_; }

 private:
  void fail(int err, const char* what);
  int fd_ = -1;
  bool regular_ = false, own_fd_ = true;
  std::string path_, error_;
  std::vector<uint8_t> buf_;
  std::vector<size_t> ends_;  // where each buffered record ends
  uint64_t committed_ = 0;    // file offset after the last whole record
  uint64_t lost_ = 0, written_ = 0;
};

}  // namespace shoal::io
