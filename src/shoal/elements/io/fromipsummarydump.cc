// FromIPSummaryDump: IPv4 packets made from Click's IP summary text.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "shoal/elements/common.hh"
#include "shoal/elements/io/ipsummarydump.hh"

namespace shoal {

class FromIPSummaryDump : public SourceElement {
 public:
  void configure(Args& a) override {
    std::string contents, file;
    bool have_data = a.has("DATA");
    if (have_data)
      a.read("DATA", data_);
    else
      a.read_mp("FILENAME", file);
    a.read("CONTENTS", contents)
        .read("FIELDS", contents)
        .read("DEFAULT_CONTENTS", contents)
        .read("ZERO", zero_)
        .read("CHECKSUM", checksum_)
        .read("PROTO", proto_word_)
        .read("TIMING", timing_);
    read_source_args(a, 32);
    a.complete();
    if (!have_data && file != "-") {
      std::string why;
      if (!check_input_path(file, why)) a.fail(fmt::format("FILENAME: cannot read '{}': {}", file, why));
    }
    file_ = have_data ? "DATA" : file;
    std::string bad;
    if (!contents.empty() && !ipsum::parse_fields(contents, fields_, bad))
      a.fail(fmt::format("unknown CONTENTS field '{}'", bad));
    explicit_ = !fields_.empty();
    if (!proto_word_.empty() && !set_proto(proto_word_))
      a.fail(fmt::format("PROTO: unknown protocol '{}'", proto_word_));
  }
  void initialize() override {
    if (file_ == "DATA") {
      in_ = std::make_unique<std::istringstream>(data_);
    } else if (file_ != "-") {
      auto f = std::make_unique<std::ifstream>(file_);
      if (!*f) throw std::runtime_error(file_ + ": " + std::strerror(errno));
      in_ = std::move(f);
    }
    SourceElement::initialize();
  }
  bool rate_limited() const override { return timing_; }
  // TIMING: a packet leaves when as much time has passed since the first
  // left as separates their timestamps.
  bool due(Packet* p) {
    uint64_t now = worker().now_ns();
    if (!timing_started_) timing_started_ = true, timing_offset_ = now - p->timestamp_ns();
    uint64_t when = p->timestamp_ns() + timing_offset_;
    if (when <= now) return true;
    sleep_until(when);
    return false;
  }
  uint32_t produce(PacketBatch* b, uint32_t max, bool& done) override {
    std::istream& in = in_ ? *in_ : std::cin;
    uint32_t n = 0;
    if (held_) {
      if (!due(held_)) return 0;
      b->append(held_);
      held_ = nullptr;
      ++n;
    }
    while (n < max) {
      if (!have_line_) {
        bool meta = false;
        if (binary_ ? !read_record(in, meta) : !std::getline(in, line_)) {
          done = true;
          break;
        }
        ++lineno_;
        if (!binary_ || meta) {  // a text line (in a binary dump, a metadata record's)
          std::string_view t = trim(line_);
          if (t.empty()) continue;
          if (t[0] == '!') {
            bang(t);
            continue;
          }
          if (t[0] == '#' || binary_) continue;
        }
        have_line_ = true;
      }
      Packet* p = worker().pool().alloc(60);
      if (!p) break;
      have_line_ = false;
      std::string err;
      if (!(binary_ ? ipsum::build_packet_binary(p, fields_, reinterpret_cast<const uint8_t*>(line_.data()),
                                                 line_.size(), default_proto_, checksum_, err)
                    : ipsum::build_packet(p, fields_, ipsum::split_values(line_), default_proto_, checksum_, err))) {
        worker().pool().free(p);
        warn(err);
        bad_.add();
        continue;
      }
      if (timing_ && !due(p)) {
        held_ = p;
        break;
      }
      b->append(p);
      ++n;
    }
    return n;
  }
  void cleanup() override {
    if (held_) worker().pool().free(held_), held_ = nullptr;
  }
  void add_handlers() override {
    SourceElement::add_handlers();
    add_stat_handler("bad_lines", bad_);
  }

 private:
  // '!data FIELDS' (also '!contents'), '!proto P'; other '!' lines (version,
  // creator, host...) are comments.
  void bang(std::string_view t) {
    auto w = split_words(t);
    if ((w[0] == "!data" || w[0] == "!contents") && !explicit_) {
      fields_.clear();
      for (size_t i = 1; i < w.size(); ++i) {
        int f = ipsum::find_field(w[i]);
        if (f < 0) warn(fmt::format("unknown field '{}' will be ignored", w[i]));
        fields_.push_back(f);
      }
    } else if (w[0] == "!proto" && w.size() > 1) {
      if (!set_proto(std::string(w[1]))) warn(fmt::format("unknown protocol '{}'", w[1]));
    } else if (w[0] == "!binary" && !binary_) {
      binary_ = true;  // binary records from the next byte on
      for (int f : fields_)
        if (f < 0 || ipsum::binary_size(f) < 0)
          warn(fmt::format("field '{}' has no binary form: its records cannot be read",
                           f < 0 ? "?" : ipsum::field_name(f)));
    }
  }
  // The next binary record into line_ (its fields, or a metadata record's
  // text); false at the end of the file, or at a record cut short or with
  // a length below 4 or past 1 MiB (reported and counted: nothing after it
  // can be found).
  bool read_record(std::istream& in, bool& meta) {
    uint8_t w[4];
    in.read(reinterpret_cast<char*>(w), 4);
    if (in.gcount() == 0) return false;
    const uint32_t word = uint32_t(w[0]) << 24 | uint32_t(w[1]) << 16 | uint32_t(w[2]) << 8 | w[3];
    const uint32_t len = word & 0x7fffffffu;
    meta = (word & 0x80000000u) != 0;
    // (a record of Click's fields is well under a kilobyte, a metadata
    // line a text line: a length past 1 MiB is a damaged file, not a
    // record to allocate)
    if (in.gcount() < 4 || len < 4 || len > (1u << 20)) {
      ++lineno_;
      warn(in.gcount() < 4 ? "binary record cut short" : fmt::format("binary record of length {}", len));
      bad_.add();
      return false;
    }
    line_.resize(len - 4);
    in.read(line_.data(), std::streamsize(len - 4));
    if (size_t(in.gcount()) < len - 4) {
      ++lineno_;
      warn(fmt::format("binary record cut short ({} of {} bytes)", in.gcount() + 4, len));
      bad_.add();
      return false;
    }
    return true;
  }
  bool set_proto(const std::string& p) {
    uint64_t u;
    if (p == "T" || p == "tcp" || p == "TCP") return default_proto_ = 6, true;
    if (p == "U" || p == "udp" || p == "UDP") return default_proto_ = 17, true;
    if (p == "I" || p == "icmp" || p == "ICMP") return default_proto_ = 1, true;
    if (parse_uint(p, u) && u < 256) return default_proto_ = int(u), true;
    return false;
  }
  void warn(const std::string& msg) {
    if (warnings_++ < 10) fmt::print(stderr, "{}:{}: {}: {}\n", file_, lineno_, name(), msg);
  }

  std::string file_, data_, line_, proto_word_;
  std::vector<int> fields_;
  bool explicit_ = false, zero_ = true, checksum_ = false, have_line_ = false, timing_ = false, binary_ = false;
  bool timing_started_ = false;
  uint64_t timing_offset_ = 0;
  Packet* held_ = nullptr;  // built, not yet due (TIMING); received once it leaves
  int default_proto_ = -1;
  std::unique_ptr<std::istream> in_;
  uint64_t lineno_ = 0, warnings_ = 0;
  Stat bad_;
};
SHOAL_ELEMENT(
    FromIPSummaryDump, .name = "FromIPSummaryDump", .ports = "0/1", .processing = "a/a",
    .summary = "makes IPv4 packets from Click's IP summary text",
    .description =
        "Click's FromIPSummaryDump: reads lines of fields named by the '!data' line (or CONTENTS; '!proto P' sets "
        "the protocol of lines that do not say) from FILENAME ('-': standard input) or from the DATA text, and "
        "emits raw IPv4 packets as Click builds them: TTL 100, headers sized by the protocol and the ip_hl, "
        "tcp_off and tcp_opt fields, the payload field's bytes, ip_len from its field (else payload_len, else the "
        "packet), the UDP length filled in, the network header and destination IP annotations set; link or "
        "direction set the paint annotation. An ip_len shorter than the headers built cuts the packet there; "
        "a longer one is the length on the wire (elements that time links count it) unless CHECKSUM is true, "
        "which pads the packet to ip_len and sets its IP, TCP, UDP or ICMP checksum. Fields are ToIPSummaryDump's "
        "(ip_opt in Click's text: 'rr{1.0.0.1}+3', 'ssrr{A,B^C}', 'ts.ip{A=1}++5', 'nop;eol', '99=1:2'). A "
        "'!binary' line switches to Click's binary records (ToIPSummaryDump BINARY true) for the rest of the file. "
        "Malformed lines are reported with file:line "
        "(the first ten) and counted in bad_lines; they make no packet.",
    .args = {{"FILENAME", "string", "input file ('-': standard input); mandatory without DATA"},
             {"DATA", "string", "the summary text itself, instead of a file"},
             {"CONTENTS", "fields", "the fields, instead of the !data line; also FIELDS"},
             {"DEFAULT_CONTENTS", "fields", "the same as CONTENTS"},
             {"PROTO", "T|U|I|number", "protocol of lines that do not say (as a '!proto' line)"},
             {"CHECKSUM", "boolean", "pad to ip_len and compute checksums (default false)"},
             {"ZERO", "boolean", "zero packet data (always true)"},
             {"TIMING", "boolean", "emit packets at the pace of their timestamps (default false)"},
             {"STOP", "boolean", "stop at end of file"},
             {"END_CALL", "handler call", "call a write handler ('elem.handler VALUE') when done"},
             {"LIMIT", "integer", "packets at most"},
             {"BURST", "unsigned", "packets per batch"},
             {"ACTIVE", "boolean", "read when true"}},
    .handlers = {{"count", "r", "packets emitted"}, {"bad_lines", "r", "lines that made no packet"}},
    .example =
        "FromIPSummaryDump(in.txt, STOP true) -> EtherEncap(0x0800, 2:0:0:0:0:1, 2:0:0:0:0:2) -> ToDump(out.pcap);");

}  // namespace shoal
