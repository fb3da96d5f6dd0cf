// libFuzzer: arbitrary bytes as the two directions of an SMTP connection
// (flow::SmtpConn: commands, pipelined replies, DATA with dot-stuffing, BDAT
// chunks, STARTTLS; flow::MimeParser under it: headers, nested multiparts,
// base64 and quoted-printable attachments, URLs), cut into chunks. No crash,
// no leak (ASan), no list, file or backlog past its bound.
#include <cstdint>
#include <cstdlib>

#include "shoal/flow/smtp.hh"

using namespace shoal::flow;

namespace {
void check(const SmtpTx& t) {
  const MimeParser& m = t.mime;
  if (t.rcpt_to.size() > kSmtpMaxRcpt || t.helo.size() > kSmtpMaxLine || m.headers().size() > kMimeMaxHeaders ||
      m.urls().size() > kMimeMaxUrls || m.files().size() > kMimeMaxFiles || m.file_data().size() != m.files().size())
    std::abort();
  for (const MimeHeader& h : m.headers())
    if (h.value.size() > kMimeMaxValue) std::abort();
  for (const std::string& d : m.file_data())
    if (d.size() > kMimeFileKeep) std::abort();
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* p, size_t n) {
  for (uint8_t dir = 0; dir < 2; ++dir) (void)smtp_probe(dir, p, uint32_t(n), n & 1);
  SmtpConn c([](SmtpTx& t, uint8_t what) {
    check(t);
    if (what == SmtpConn::kDone && !t.message_done) std::abort();
  });
  for (size_t i = 0; i < n;) {
    size_t len = std::min<size_t>(size_t(p[i] % 61) + 1, n - i);
    if (p[i] == 0xff)
      c.gap(p[i + len - 1] & 1);
    else
      c.data(uint8_t(p[i] >> 7), p + i, uint32_t(len));
    if (c.open().size() > kSmtpMaxTx) std::abort();
    i += len;
  }
  c.end();
  if (!c.open().empty()) std::abort();
  return 0;
}
