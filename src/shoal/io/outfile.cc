#include "shoal/io/outfile.hh"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace shoal::io {

OutFile::~OutFile() { close(); }

bool OutFile::open(const std::string& path, bool append, std::string& err) {
  close();
  error_.clear();
  lost_ = written_ = 0;
  path_ = path;
  if (path == "-") {
    fd_ = STDOUT_FILENO;
    own_fd_ = false;
  } else {
    fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0644);
    own_fd_ = true;
    if (fd_ < 0) {
      err = path + ": " + std::strerror(errno);
      return false;
    }
  }
  struct stat st;
  regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  committed_ = regular_ ? uint64_t(st.st_size) : 0;
  if (regular_ && append) committed_ = uint64_t(::lseek(fd_, 0, SEEK_END));
  return true;
}

void OutFile::fail(int e, const char* what) {
  if (error_.empty()) error_ = path_ + ": " + what + ": " + std::strerror(e);
}

uint64_t OutFile::flush() {
  if (ends_.empty() && buf_.empty()) return 0;
  uint64_t nrec = ends_.size();
  if (fd_ < 0 || failed()) {
    lost_ += nrec;
    buf_.clear();
    ends_.clear();
    return nrec;
  }
  size_t done = 0;
  while (done < buf_.size()) {
    ssize_t w = ::write(fd_, buf_.data() + done, buf_.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      fail(w < 0 ? errno : ENOSPC, "write failed");
      break;
    }
    done += size_t(w);
  }
  // Whole records written; a partial one is cut off again.
  uint64_t whole = uint64_t(std::upper_bound(ends_.begin(), ends_.end(), done) - ends_.begin());
  size_t whole_bytes = whole ? ends_[whole - 1] : 0;
  if (done > whole_bytes && regular_ && ::ftruncate(fd_, off_t(committed_ + whole_bytes)) == 0)
    ::lseek(fd_, off_t(committed_ + whole_bytes), SEEK_SET);
  committed_ += whole_bytes;
  written_ += whole;
  lost_ += nrec - whole;
  buf_.clear();
  ends_.clear();
  return nrec - whole;
}

bool OutFile::close() {
  if (fd_ < 0) return !failed();
  flush();
  if (own_fd_ && ::close(fd_) != 0) fail(errno, "close failed");
  fd_ = -1;
  return !failed();
}

}  // namespace shoal::io
