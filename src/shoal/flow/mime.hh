// An email message (RFC 5322 headers, RFC 2045/2046 MIME parts) as an IDS
// reads it, a line at a time as SMTP's DATA or BDAT delivers it (Suricata's
// MIME decoder's model): the message's own headers kept (folded lines
// joined), multipart bodies split at their boundaries (nested), each part
// with a file name (Content-Disposition filename=, or Content-Type name=) an
// attachment whose content is decoded (base64, quoted-printable) as a file,
// and the URLs of text parts found ("http://" at any case; kept without it,
// as Suricata logs them). Bounded: kMimeMaxHeaders headers of at most
// kMimeMaxValue bytes, kMimeMaxBoundaries nested multiparts, kMimeMaxUrls
// URLs, kMimeMaxFiles files each kept for inspection up to kMimeFileKeep
// bytes (their size counts on); past a bound, an anomaly bit is set.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/flow/digest.hh"

namespace shoal::flow {

constexpr size_t kMimeMaxHeaders = 256, kMimeMaxValue = 8192, kMimeMaxBoundaries = 32, kMimeMaxUrls = 256,
                 kMimeMaxFiles = 64, kMimeFileKeep = 1u << 20, kMimeMaxLine = 65536;

struct MimeHeader {
  std::string name, value;  // the name as sent, the value unfolded (leading blanks dropped)
};

struct MimeFile {
  std::string name;
  uint64_t size = 0;  // bytes decoded (the first kMimeFileKeep of them in file_data())
  bool closed = false;
  bool at_finish = false;  // closed by the message's end, not by its boundary (cut short, if the message was)
  FileHasher digests;      // of the decoded content, finished when the file closes
};

class MimeParser {
 public:
  // Anomalies (Suricata's MIME_ANOM_*), bits of anomalies().
  enum Anomaly : uint32_t {
    kInvalidBase64 = 1,
    kInvalidQp = 2,
    kLongLine = 4,
    kLongHeader = 8,
    kLongBoundary = 16,
    kLongFilename = 32,
    kTooMany = 64,  // headers, boundaries, URLs or files past their bounds
  };
  // The attachments' digests computed (FileDigest bits; before the first line).
  void set_file_digests(uint8_t which) { digests_ = which; }
  // The bytes of each file kept for file_data() (default kMimeFileKeep; 0:
  // none, the files are only counted and digested), and of all files
  // together (default no more than that bound allows).
  void set_file_keep(size_t each, size_t total = SIZE_MAX) { keep_ = each, keep_total_ = total; }
  // One line of the message, without its end of line (`eol`: "\r\n", "\n",
  // or empty for a piece of a longer line).
  void line(std::string_view l, std::string_view eol);
  // The message ended: an attachment still open is closed, the last URLs found.
  void finish();
  bool done() const { return done_; }
  // Where the parser is, as Suricata's email status says it: PARSE_DONE,
  // BODY_STARTED, HEADER_STARTED, HEADER_READY.
  const char* status() const;
  // The message's own headers (the first part's are not among them).
  const std::vector<MimeHeader>& headers() const { return main_; }
  // The first of the message's headers named `lname` (lower case), or null.
  const std::string* header(std::string_view lname) const;
  // Every one of them, in order.
  std::vector<std::string> all(std::string_view lname) const;
  const std::vector<std::string>& attachments() const { return attachments_; }
  const std::vector<std::string>& urls() const { return urls_; }
  const std::vector<MimeFile>& files() const { return files_; }
  // Each file's content as far as it is kept (a multi-buffer's values).
  const std::vector<std::string>& file_data() const { return data_; }
  // The caller is done with file i's content: its memory goes (an open file keeps what comes next).
  void drop_data(size_t i) { std::string().swap(data_[i]); }
  uint32_t anomalies() const { return anomalies_; }

 private:
  enum class State : uint8_t { Start, Header, Body };
  enum class Enc : uint8_t { Plain, Base64, Qp };
  enum class Type : uint8_t { Message, Text, Unknown };
  void header_line(std::string_view l);
  void headers_done();
  void body_line(std::string_view l, std::string_view eol);
  void file_data(std::string_view d);
  void find_urls(std::string_view decoded, bool flush);
  void close_file();
  std::string b64_decode(std::string_view in);

  State state_ = State::Start;
  bool main_done_ = false, done_ = false;
  std::vector<MimeHeader> main_, part_;  // the message's headers, the current part's
  std::vector<std::string> boundaries_;  // "--" + boundary, innermost last
  Enc enc_ = Enc::Plain;
  Type type_ = Type::Message;
  bool file_open_ = false;
  std::string eol_held_;  // a plain file's line end, written when another line follows
  uint32_t b64_bits_ = 0, b64_n_ = 0;
  std::string url_line_;  // decoded text not ending a line yet
  std::vector<std::string> attachments_, urls_;
  std::vector<MimeFile> files_;
  std::vector<std::string> data_;
  uint32_t anomalies_ = 0;
  uint8_t digests_ = 0;
  size_t keep_ = kMimeFileKeep, keep_total_ = SIZE_MAX, kept_total_ = 0;
};

// The value of parameter `name` ("filename", "boundary") of a header value
// like `attachment; filename="a b.txt"`, unquoted; empty when absent.
std::string mime_param(std::string_view value, std::string_view name);

}  // namespace shoal::flow
