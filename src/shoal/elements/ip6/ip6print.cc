// IP6Print: one line per IPv6 packet, as Click's.
#include <fmt/format.h>

#include <string>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class IP6Print : public PacketElement<IP6Print> {
 public:
  void configure(Args& a) override {
    int64_t bytes = 1500;
    a.read_p("LABEL", label_).read("NBYTES", bytes).read("CONTENTS", contents_).read("ACTIVE", active_);
    a.read("OUTFILE", outfile_);
    a.complete();
    if (bytes < 0) a.fail("NBYTES must not be negative");
    bytes_ = uint32_t(std::min<int64_t>(bytes, UINT32_MAX));
  }
  void initialize() override { out_.open(outfile_); }
  void cleanup() override { out_.close(); }
  void add_handlers() override {
    add_read_handler("active", [this] { return active_ ? std::string("true") : std::string("false"); });
    add_write_handler("active", [this](const std::string& v) {
      if (!parse_bool(trim(v), active_)) throw std::runtime_error("active: true or false");
    });
  }
  void process(Packet* p) {
    if (!active_) return;
    const uint8_t* ip6 = ip6_header(p);
    if (!ip6) return;
    // Click's line: "LABEL: SRC -> DST plen N, next N, hlim N", then with
    // CONTENTS the first NBYTES bytes of the packet's data in hex, 4 bytes a
    // group, 24 a line
    std::string s = label_.empty() ? "" : label_ + ": ";
    s += fmt::format("{} -> {} plen {}, next {}, hlim {}", format_ipv6(ip6 + 8), format_ipv6(ip6 + 24),
                     k::load_be16(ip6 + 4), ip6[6], ip6[7]);
    if (contents_) {
      s += "\n  ";
      const uint8_t* d = p->data();
      for (uint32_t i = 0; i < bytes_ && i < p->length(); ++i) {
        s += fmt::format("{:02x}", d[i]);
        if (i % 24 == 23)
          s += "\n  ";
        else if (i % 4 == 3)
          s += ' ';
      }
    }
    out_.write(*this, s);
  }

 private:
  std::string label_, outfile_;
  uint32_t bytes_ = 1500;
  bool contents_ = false, active_ = true;
  LineOutput out_;
};
SHOAL_ELEMENT(IP6Print, .name = "IP6Print", .ports = "1/1", .processing = "a/a",
              .summary = "prints a line per IPv6 packet",
              .description =
                  "Click's IP6Print: for each packet with an IPv6 header (network header annotation) writes "
                  "'LABEL: SRC -> DST plen N, next N, hlim N' to standard error (or OUTFILE); with CONTENTS the "
                  "first NBYTES bytes of the packet's data follow in hex, 4 bytes a group and 24 a line. "
                  "Addresses as RFC 5952 writes them. Packets pass unchanged.",
              .args = {{"LABEL", "string", "printed before each line"},
                       {"NBYTES", "unsigned", "bytes of data CONTENTS prints (default 1500)"},
                       {"CONTENTS", "boolean", "print the data in hex (default false)"},
                       {"ACTIVE", "boolean", "print at all (default true)"},
                       {"OUTFILE", "string", "write lines to this file instead"}},
              .handlers = {{"active", "rw", "ACTIVE"}}, .example = "... -> CheckIP6Header(14) -> IP6Print(in) -> ...;");

}  // namespace shoal
