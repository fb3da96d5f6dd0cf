// libFuzzer: arbitrary bytes as the two directions of an FTP control
// connection (flow::FtpConn: lines, multi-line replies, PORT/EPRT/PASV/EPSV),
// cut into chunks. No crash, no leak (ASan), no line or backlog past its bound.
#include <cstdint>
#include <cstdlib>

#include "shoal/flow/ftp.hh"

using namespace shoal::flow;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* p, size_t n) {
  (void)ftp_probe(0, p, uint32_t(n));
  (void)ftp_probe(1, p, uint32_t(n));
  FtpConn c([](FtpTx& t, uint8_t) {
    if (t.command.size() > kFtpMaxLine || t.command_data.size() > kFtpMaxLine || t.dynamic_port > 65535 ||
        t.codes.size() != t.replies.size() || (t.file_before_port && t.file_without_name))
      std::abort();
  });
  for (size_t i = 0; i < n;) {
    size_t len = std::min<size_t>(size_t(p[i] % 61) + 1, n - i);
    c.data(uint8_t(p[i] >> 7), p + i, uint32_t(len));
    if (c.open().size() > kFtpMaxTx) std::abort();
    i += len;
  }
  return 0;
}
