// Print: prints packets to standard error.
#include <fmt/format.h>
#include <algorithm>
#include <cstdio>

#include "shoal/elements/common.hh"

namespace shoal {

class Print : public PacketElement<Print> {
 public:
  void configure(Args& a) override {
    a.read_p("LABEL", label_)
        .read_p("MAXLENGTH", max_)
        .read("LENGTH", max_)
        .read("TIMESTAMP", ts_)
        .read("CONTENTS", contents_)
        .read("ACTIVE", active_)
        .read("PAINT", paint_);
    a.complete();
    if (contents_ != "HEX" && contents_ != "NONE" && contents_ != "ASCII" && contents_ != "true" &&
        contents_ != "false")
      a.fail("CONTENTS must be HEX, ASCII or NONE");
  }
  void process(Packet* p) {
    if (!active_) return;
    std::string s = label_.empty() ? "" : label_ + ": ";
    if (ts_) s += click_timestamp(p->timestamp_ns()) + ": ";
    if (paint_) s += fmt::format("paint {}: ", p->anno().paint);
    s += fmt::format("{:4d}", p->length());
    if (contents_ != "NONE" && contents_ != "false" && p->length() && max_) {
      uint32_t n = std::min(p->length(), max_);
      // Click's: " | " then hex in groups of 4 bytes, or ASCII in groups
      // of 8, each group after a space.
      bool ascii = contents_ == "ASCII";
      s += ascii ? " | " : " |";
      for (uint32_t i = 0; i < n; ++i) {
        if (i % (ascii ? 8 : 4) == 0) s += ' ';
        uint8_t c = p->data()[i];
        if (ascii)
          s += (c >= 32 && c < 127) ? char(c) : '.';
        else
          s += fmt::format("{:02x}", c);
      }
    }
    s += '\n';
    std::fputs(s.c_str(), stderr);
  }

 private:
  std::string label_, contents_ = "HEX";
  uint32_t max_ = 24;
  bool ts_ = false, active_ = true, paint_ = false;
};
SHOAL_ELEMENT(Print, .name = "Print", .ports = "1/1", .processing = "a/a",
              .summary = "prints packets to standard error",
              .description =
                  "Prints one line per packet: LABEL, optionally the timestamp and paint, the length, "
                  "and the first MAXLENGTH bytes in hex (groups of four, as Click does) or ASCII (groups of eight).",
              .args = {{"LABEL", "string", "line prefix"},
                       {"MAXLENGTH", "unsigned", "bytes shown (default 24); also LENGTH"},
                       {"TIMESTAMP", "boolean", "show timestamps"},
                       {"CONTENTS", "HEX|ASCII|NONE", "how bytes show"},
                       {"PAINT", "boolean", "show the paint annotation"},
                       {"ACTIVE", "boolean", "print when true"}},
              .handlers = {}, .example = "src -> Print(in, 64) -> Discard;", .forwards_all = true);

}  // namespace shoal
