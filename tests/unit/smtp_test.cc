// SMTP (flow::SmtpConn) and the MIME messages it carries (flow::MimeParser):
// Suricata's transactions, pipelining, DATA and BDAT, STARTTLS, and what a
// message yields (headers, attachments decoded and digested, URLs), by
// construction.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "shoal/flow/smtp.hh"

using namespace shoal::flow;

namespace {

struct SmtpRun {
  std::vector<SmtpTx> done;  // the transactions as they ended
  int requests = 0;
  SmtpConn conn{[this](SmtpTx& t, uint8_t what) {
    if (what == SmtpConn::kDone)
      done.push_back(std::move(t));
    else
      ++requests;
  }};
  void client(const std::string& s, size_t chunk = 7) {  // (cut into small pieces: nothing depends on them)
    for (size_t i = 0; i < s.size(); i += chunk)
      conn.data(0, reinterpret_cast<const uint8_t*>(s.data() + i), uint32_t(std::min(chunk, s.size() - i)));
  }
  void server(const std::string& s) { conn.data(1, reinterpret_cast<const uint8_t*>(s.data()), uint32_t(s.size())); }
};

MimeParser mime_of(const std::string& msg) {
  MimeParser m;
  size_t at = 0;
  while (at < msg.size()) {
    size_t nl = msg.find("\r\n", at);
    if (nl == std::string::npos) nl = msg.size();
    m.line(std::string_view(msg).substr(at, nl - at), nl < msg.size() ? "\r\n" : "");
    at = nl + 2;
  }
  m.finish();
  return m;
}

}  // namespace

TEST(Smtp, TransactionsAsSuricataCountsThem) {
  SmtpRun r;
  r.server("220-mail.example ESMTP\r\n220 welcome\r\n");
  r.client("EHLO client.example\r\n");
  r.server("250-mail.example\r\n250 PIPELINING\r\n");
  // pipelined: the replies come after all three commands
  r.client("MAIL FROM: <a@example.com> SIZE=42\r\nRCPT TO:<b@example.com>\r\nRCPT TO:<c@example.com>\r\n");
  r.server("250 ok\r\n250 ok\r\n250 ok\r\n");
  r.client("DATA\r\n");
  r.server("354 go ahead\r\n");
  r.client("Subject: one\r\n\r\n..a line that began with a dot\r\n.\r\n");
  EXPECT_TRUE(r.done.empty()) << "the message ended; the server has not answered it yet";
  r.server("250 queued\r\n");
  ASSERT_EQ(r.done.size(), 1u);
  const SmtpTx& t = r.done[0];
  EXPECT_EQ(t.index, 0u);
  EXPECT_EQ(t.helo, "client.example");
  EXPECT_EQ(t.mail_from, "<a@example.com>");
  EXPECT_EQ(t.rcpt_to, (std::vector<std::string>{"<b@example.com>", "<c@example.com>"}));
  ASSERT_NE(t.mime.header("subject"), nullptr);
  EXPECT_EQ(*t.mime.header("subject"), "one");
  EXPECT_TRUE(t.mime.done());
  EXPECT_STREQ(t.mime.status(), "PARSE_DONE");
  // QUIT after a finished transaction begins none; a second message does
  r.client("RSET\r\nQUIT\r\n");
  r.conn.end();
  EXPECT_EQ(r.done.size(), 1u);
  SmtpRun r2;
  r2.server("220 hi\r\n");
  r2.client("HELO h\r\nMAIL FROM:<x@y>\r\nDATA\r\n\r\nbody\r\n.\r\nMAIL FROM:<z@y>\r\nDATA\r\n\r\nbody2\r\n.\r\n");
  r2.server("250 ok\r\n250 ok\r\n354 go\r\n250 ok\r\n250 ok\r\n354 go\r\n250 ok\r\n");
  ASSERT_EQ(r2.done.size(), 2u);
  EXPECT_EQ(r2.done[1].index, 1u);
  EXPECT_EQ(r2.done[1].mail_from, "<z@y>");
  EXPECT_EQ(r2.done[1].helo, "h") << "the connection's HELO, in each transaction";
}

TEST(Smtp, DataRefusedBdatChunksAndStartTls) {
  SmtpRun r;
  r.server("220 hi\r\n");
  r.client("EHLO c\r\nMAIL FROM:<a@b>\r\nDATA\r\n");
  r.server("250 ok\r\n250 ok\r\n554 no valid recipients\r\n");
  r.client("RCPT TO:<late@b>\r\n");  // a command again, not message text
  r.conn.end();
  ASSERT_EQ(r.done.size(), 1u);
  EXPECT_EQ(r.done[0].rcpt_to, std::vector<std::string>{"<late@b>"});
  // BDAT: counted bytes, no dot-stuffing, LAST ends the message; a line may cross chunks
  SmtpRun b;
  b.server("220 hi\r\n");
  b.client("EHLO c\r\nMAIL FROM:<a@b>\r\nBDAT 21\r\nSubject: chunked\r\n\r\n.BDAT 6 LAST\r\nxyz\r\n.");
  EXPECT_TRUE(b.done.empty());
  b.server("250 ok\r\n250 ok\r\n250 21 octets\r\n250 done\r\n");
  ASSERT_EQ(b.done.size(), 1u);
  EXPECT_EQ(*b.done[0].mime.header("subject"), "chunked");
  EXPECT_TRUE(b.done[0].message_done);
  // STARTTLS accepted: nothing after it is read as SMTP
  SmtpRun s;
  s.server("220 hi\r\n");
  s.client("EHLO c\r\nSTARTTLS\r\n");
  s.server("250 ok\r\n220 go ahead\r\n");
  EXPECT_TRUE(s.conn.tls());
  s.client("MAIL FROM:<hidden@b>\r\n");
  s.conn.end();
  ASSERT_EQ(s.done.size(), 1u);
  EXPECT_TRUE(s.done[0].mail_from.empty());
}

TEST(Mime, NestedPartsAttachmentsDecodedAndUrls) {
  std::string msg =
      "From: \"A, B\" <a@example.com>\r\n"
      "To: x@example.com\r\n"
      "Received: from one\r\n"
      "Received: from two\r\n"
      "\tfolded\r\n"
      "Content-Type: multipart/mixed; boundary=\"outer\"\r\n"
      "\r\n"
      "preamble http://in-the-preamble.example/\r\n"
      "--outer\r\n"
      "Content-Type: multipart/alternative; boundary=inner\r\n"
      "\r\n"
      "--inner\r\n"
      "Content-Type: text/plain\r\n"
      "Content-Transfer-Encoding: quoted-printable\r\n"
      "\r\n"
      "see HTTP://Example.com/a=3Db and http://two.example/x\r\n"
      "--inner\r\n"
      "Content-Type: image/png\r\n"
      "\r\n"
      "http://in-an-image.example/\r\n"
      // the inner multipart never closes: the outer boundary ends it
      "--outer\r\n"
      "Content-Disposition: attachment; filename=\"r\\\"eport.txt\"\r\n"
      "Content-Type: application/octet-stream; name=\"ignored.bin\"\r\n"  // (the first name found is the name)
      "Content-Transfer-Encoding: base64\r\n"
      "\r\n"
      "aGVsbG8g\r\n"
      "d29ybGQ\r\n"  // (the padding is missing: the last group is flushed at the boundary)
      "--outer\r\n"
      "Content-Type: text/plain; name=notes.txt\r\n"
      "Content-Transfer-Encoding: quoted-printable\r\n"
      "\r\n"
      "soft=\r\n"
      " break\r\n"
      "line two\r\n"
      "--outer--\r\n"
      "epilogue\r\n";
  MimeParser m = mime_of(msg);
  EXPECT_TRUE(m.done());
  EXPECT_EQ(*m.header("from"), "\"A, B\" <a@example.com>");
  EXPECT_EQ(m.all("received"), (std::vector<std::string>{"from one", "from twofolded"}))
      << "a folded line joined as Suricata joins it (its first blank dropped)";
  EXPECT_EQ(m.header("content-transfer-encoding"), nullptr) << "a part's headers are not the message's";
  EXPECT_EQ(m.attachments(), (std::vector<std::string>{"r\"eport.txt", "notes.txt"}));
  ASSERT_EQ(m.files().size(), 2u);
  EXPECT_EQ(m.file_data()[0], "hello world");
  EXPECT_EQ(m.files()[0].size, 11u);
  EXPECT_TRUE(m.files()[0].closed);
  EXPECT_EQ(m.file_data()[1], "soft break\r\nline two") << "the line end before the boundary is the boundary's";
  // the text parts' and the attachments' URLs (not a multipart's preamble, not an image's)
  EXPECT_EQ(m.urls(), (std::vector<std::string>{"Example.com/a=b", "two.example/x"}));
  EXPECT_EQ(m.anomalies(), 0u);
}

TEST(Mime, BoundedAgainstHostileMessages) {
  std::string msg = "Content-Type: multipart/mixed; boundary=b\r\n";
  for (size_t i = 0; i < kMimeMaxHeaders + 10; ++i) msg += "X-H: v\r\n";
  msg += "\r\n";
  for (size_t i = 0; i < kMimeMaxFiles + 5; ++i)
    msg += "--b\r\nContent-Disposition: attachment; filename=f" + std::to_string(i) + "\r\n\r\n" +
           std::string(100, 'A') + "\r\n";
  msg += "--b--\r\n";
  MimeParser m = mime_of(msg);
  EXPECT_EQ(m.headers().size(), kMimeMaxHeaders);
  EXPECT_EQ(m.files().size(), kMimeMaxFiles);
  EXPECT_NE(m.anomalies() & MimeParser::kTooMany, 0u);
  // an invalid base64 character is an anomaly, skipped
  MimeParser bad =
      mime_of("Content-Type: application/x; name=a\r\nContent-Transfer-Encoding: base64\r\n\r\naGV*sbG8=\r\n");
  EXPECT_EQ(bad.file_data()[0], "hello");
  EXPECT_NE(bad.anomalies() & MimeParser::kInvalidBase64, 0u);
}

TEST(Mime, ParametersAsHeadersWriteThem) {
  EXPECT_EQ(mime_param("attachment; filename=\"a b.txt\"", "filename"), "a b.txt");
  EXPECT_EQ(mime_param("attachment; inline; FileName = x.bin ; size=3", "filename"), "x.bin")
      << "a parameter without a value skipped, names at any case, blanks around";
  EXPECT_EQ(mime_param("text/plain; charset=us-ascii", "name"), "");
  EXPECT_EQ(mime_param("a; b", "b"), "") << "(found by fuzz_smtp: a last parameter without '=')";
  EXPECT_EQ(mime_param("a; name=\"unterminated", "name"), "unterminated");
}

TEST(Smtp, ProbeSaysSmtpFromEitherSide) {
  auto probe = [](uint8_t dir, const std::string& s, bool port) {
    return smtp_probe(dir, reinterpret_cast<const uint8_t*>(s.data()), uint32_t(s.size()), port);
  };
  EXPECT_EQ(probe(0, "ehlo x\r\n", false), 1);
  EXPECT_EQ(probe(0, "HEL", false), -1);
  EXPECT_EQ(probe(0, "HELP\r\n", false), 0);
  EXPECT_EQ(probe(0, "GET / HTTP/1.1\r\n", false), 0);
  EXPECT_EQ(probe(1, "220 mail ESMTP\r\n", true), 1);
  EXPECT_EQ(probe(1, "220 ftp ready\r\n", false), 0) << "a greeting alone is SMTP on SMTP's ports only";
}

// The digests of a file fed in pieces: RFC 1321's, FIPS 180's "abc" vectors,
// and nothing for a digest not asked for or a file never finished.
TEST(FileHasher, PiecesGiveTheWholeFilesDigests) {
  FileHasher h;
  h.start(kDigestAll);
  for (char c : std::string("abc")) h.update(&c, 1);
  h.update("", 0);
  EXPECT_TRUE(h.running());
  h.finish();
  EXPECT_FALSE(h.running());
  EXPECT_EQ(h.md5(), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(h.sha1(), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(h.sha256(), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  FileHasher only;
  only.start(kDigestSha1);
  only.update("abc", 3);
  only.finish();
  EXPECT_TRUE(only.md5().empty() && only.sha256().empty());
  EXPECT_EQ(only.sha1(), "a9993e364706816aba3e25717850c26c9cd0d89d");
  FileHasher cut;  // started, never finished: a file cut short has no digest
  cut.start(kDigestMd5);
  cut.update("ab", 2);
  EXPECT_TRUE(cut.md5().empty());
}

TEST(Mime, AttachmentsAreDigestedAsDecoded) {
  MimeParser m;
  m.set_file_digests(kDigestMd5);
  for (std::string_view l :
       {"Content-Type: multipart/mixed; boundary=b", "", "--b", "Content-Disposition: attachment; filename=a.txt",
        "Content-Transfer-Encoding: base64", "", "aGVsbG8g", "d29ybGQ=", "--b--"})
    m.line(l, "\r\n");
  m.finish();
  ASSERT_EQ(m.files().size(), 1u);
  EXPECT_EQ(m.files()[0].size, 11u);
  EXPECT_EQ(m.files()[0].digests.md5(), "5eb63bbbe01eeed093cb22bb8f5acdc3") << "md5(\"hello world\")";
}

TEST(Mime, KeptContentIsBoundedPerFileAndInAll) {
  MimeParser m;
  m.set_file_keep(4, 6);
  for (std::string_view l :
       {"Content-Type: multipart/mixed; boundary=b", "", "--b", "Content-Disposition: attachment; filename=a", "",
        "hello world", "--b", "Content-Disposition: attachment; filename=b", "", "hello world", "--b--"})
    m.line(l, "\r\n");
  m.finish();
  ASSERT_EQ(m.files().size(), 2u);
  EXPECT_EQ(m.file_data()[0], "hell");
  EXPECT_EQ(m.file_data()[1], "he") << "the total bound left 2 bytes";
  EXPECT_EQ(m.files()[1].size, 11u) << "counted whole";
}
