// FromIPSummaryDump and ToIPSummaryDump: Click's text packet summaries.
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "shoal/elements/common.hh"
#include "shoal/io/outfile.hh"
#include "shoal/io/shared_file.hh"
#include "shoal/kernels/checksum.hh"
#include "shoal/kernels/flowhash.hh"

namespace shoal {

namespace {

const std::vector<std::string> kFields = {"timestamp",   "ts_sec", "ts_usec", "ip_src",  "ip_dst",    "ip_len",
                                          "ip_proto",    "ip_ttl", "ip_tos",  "ip_id",   "ip_frag",   "ip_fragoff",
                                          "sport",       "dport",  "tcp_seq", "tcp_ack", "tcp_flags", "tcp_window",
                                          "payload_len", "count",  "link"};
constexpr char kFlagChars[] = "FSRPAUEC";

bool known_field(const std::string& f) { return std::find(kFields.begin(), kFields.end(), f) != kFields.end(); }

std::vector<std::string> split_ws(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > b) out.emplace_back(s.substr(b, i - b));
  }
  return out;
}

std::string flags_text(uint8_t f) {
  std::string s;
  for (int b = 0; b < 8; ++b)
    if (f & (1 << b)) s += kFlagChars[b];
  return s.empty() ? "." : s;
}

bool parse_flags(const std::string& s, uint8_t& f) {
  uint64_t n;
  if (parse_uint(s, n) && n < 256) return f = uint8_t(n), true;
  f = 0;
  if (s == ".") return true;
  for (char c : s) {
    const char* p = std::strchr(kFlagChars, c);
    if (!p || !c) return false;
    f |= uint8_t(1 << (p - kFlagChars));
  }
  return true;
}

// Where the IPv4 header starts in p, or -1.
int64_t ip_offset(Packet* p) {
  if (p->has_network_header()) return p->network_header_offset();
  const uint8_t* d = p->data();
  if (p->length() >= 34 && k::load_be16(d + 12) == k::kEthIPv4) return 14;
  if (p->length() >= 20 && (d[0] >> 4) == 4) return 0;
  return -1;
}

}  // namespace

class ToIPSummaryDump : public Element {
 public:
  void configure(Args& a) override {
    std::string contents = "timestamp ip_src sport ip_dst dport ip_proto";
    OutputPath out;
    a.read_mp("FILENAME", out)
        .read_p("CONTENTS", contents)
        .read("DATA", contents)
        .read("BANNER", banner_)
        .read("HEADER", header_);
    a.complete();
    file_ = out.path;
    fields_ = split_ws(contents);
    for (auto& f : fields_)
      if (!known_field(f)) a.fail(fmt::format("unknown CONTENTS field '{}'", f));
    write_error_ = add_drop_reason("write-error");
  }
  void initialize() override {
    std::string err;
    auto make = [&](io::OutFile& o) {
      if (!o.open(file_, false, err) || !header_) return;
      o.put("!IPSummaryDump 1.3\n");
      if (!banner_.empty()) o.put("!creator " + banner_ + "\n");
      std::string data = "!data";
      for (auto& f : fields_) data += ' ' + f;
      o.put(data + "\n");
      o.end_record();
      if (o.flush()) err = o.error(), o.close();
    };
    if (!out_.open(registry(), file_, make, [](io::OutFile& o) { return o.is_open(); }))
      throw std::runtime_error(err.empty() ? file_ + ": cannot open for writing" : err);
  }
  void push(int, PacketBatch* b) override {
    // One line per packet, written per batch: a line that could not be
    // written is a packet dropped as 'write-error' (the file keeps whole lines).
    uint64_t lost = 0;
    std::string err;
    out_.with([&](io::OutFile& o) {
      uint64_t before = o.records_lost();
      b->for_each([&](uint32_t, Packet* p) {
        text_.clear();
        line(p, text_);
        o.put(text_);
        o.end_record();
      });
      o.flush();
      lost = o.records_lost() - before;
      if (lost) err = o.error();
    });
    uint64_t keep = b->live() - lost, i = 0;
    b->for_each([&](uint32_t, Packet* p) {
      if (i++ < keep)
        sent(p);
      else
        drop(p, write_error_);
    });
    count_.add(keep);
    if (lost) run_error(err);
    recycle(b);
  }
  void on_stop() override {
    std::string err;
    out_.with([&](io::OutFile& o) {
      if (o.is_open() && !o.close()) err = o.error();
    });
    if (!err.empty()) run_error(err);
  }
  void cleanup() override { out_.close(); }
  void add_handlers() override { add_stat_handler("count", count_); }

 private:
  static io::SharedRegistry<io::OutFile>& registry() {
    static io::SharedRegistry<io::OutFile> r;
    return r;
  }
  void line(Packet* p, std::string& out) {
    int64_t off = ip_offset(p);
    const uint8_t* ip = off >= 0 ? p->data() + off : nullptr;
    uint32_t avail = off >= 0 ? p->length() - uint32_t(off) : 0;
    uint32_t ihl = ip ? (ip[0] & 0xf) * 4u : 0;
    bool frag0 = ip && (k::load_be16(ip + 6) & 0x1fff) == 0;
    const uint8_t* l4 = ip && ihl >= 20 && avail >= ihl + 4 && frag0 ? ip + ihl : nullptr;
    uint8_t proto = ip ? ip[9] : 0;
    bool tcp = l4 && proto == 6 && avail >= ihl + 20;
    uint64_t ts = p->timestamp_ns();
    bool first = true;
    for (auto& f : fields_) {
      if (!first) out += ' ';
      first = false;
      std::string v = "-";
      if (f == "timestamp")
        v = ts % 1000 ? fmt::format("{}.{:09d}", ts / 1000000000, ts % 1000000000)
                      : fmt::format("{}.{:06d}", ts / 1000000000, (ts % 1000000000) / 1000);
      else if (f == "ts_sec")
        v = std::to_string(ts / 1000000000);
      else if (f == "ts_usec")
        v = std::to_string((ts % 1000000000) / 1000);
      else if (f == "count")
        v = "1";
      else if (f == "link")
        v = std::to_string(p->anno().paint);
      else if (!ip)
        v = "-";
      else if (f == "ip_src")
        v = format_ipv4(ip + 12);
      else if (f == "ip_dst")
        v = format_ipv4(ip + 16);
      else if (f == "ip_len")
        v = std::to_string(k::load_be16(ip + 2));
      else if (f == "ip_proto")
        v = proto == 6 ? "T" : proto == 17 ? "U" : proto == 1 ? "I" : std::to_string(proto);
      else if (f == "ip_ttl")
        v = std::to_string(ip[8]);
      else if (f == "ip_tos")
        v = std::to_string(ip[1]);
      else if (f == "ip_id")
        v = std::to_string(k::load_be16(ip + 4));
      else if (f == "ip_frag") {
        uint16_t fo = k::load_be16(ip + 6);
        v = (fo & 0x3fff) == 0 ? "." : (fo & 0x1fff) == 0 ? "F" : "f";
      } else if (f == "ip_fragoff") {
        uint16_t fo = k::load_be16(ip + 6);
        v = std::to_string((fo & 0x1fff) * 8) + ((fo & 0x2000) ? "+" : "");
      } else if (f == "sport" && l4 && (proto == 6 || proto == 17))
        v = std::to_string(k::load_be16(l4));
      else if (f == "dport" && l4 && (proto == 6 || proto == 17))
        v = std::to_string(k::load_be16(l4 + 2));
      else if (f == "tcp_seq" && tcp)
        v = std::to_string(k::load_be32(l4 + 4));
      else if (f == "tcp_ack" && tcp)
        v = std::to_string(k::load_be32(l4 + 8));
      else if (f == "tcp_flags" && tcp)
        v = flags_text(l4[13]);
      else if (f == "tcp_window" && tcp)
        v = std::to_string(k::load_be16(l4 + 14));
      else if (f == "payload_len") {
        uint32_t iplen = k::load_be16(ip + 2);
        uint32_t hl = ihl + (tcp ? (l4[12] >> 4) * 4u : (l4 && proto == 17) ? 8u : (l4 && proto == 1) ? 8u : 0u);
        v = std::to_string(iplen > hl ? iplen - hl : 0);
      }
      out += v;
    }
    out += '\n';
  }

  std::string file_, banner_;
  bool header_ = true;
  std::vector<std::string> fields_;
  io::SharedFile<io::OutFile> out_;
  std::string text_;
  uint16_t write_error_ = 0;
  Stat count_;
};
SHOAL_ELEMENT(
    ToIPSummaryDump, .name = "ToIPSummaryDump", .ports = "1/0", .processing = "h/",
    .summary = "writes one text line per IPv4 packet (Click's IP summary format)",
    .description =
        "Writes '!IPSummaryDump 1.3' and '!data FIELDS' header lines, then one line per packet "
        "with the CONTENTS fields: timestamp ts_sec ts_usec ip_src ip_dst ip_len ip_proto "
        "ip_ttl ip_tos ip_id ip_frag ip_fragoff sport dport tcp_seq tcp_ack tcp_flags tcp_window "
        "payload_len count link (the paint annotation). The IP header is found from the network header annotation, an "
        "Ethernet IPv4 frame or a raw IPv4 packet; missing fields print '-'.",
    .args = {{"FILENAME", "string", "output file, mandatory"},
             {"CONTENTS", "fields",
              "space-separated fields (default: timestamp ip_src sport ip_dst dport ip_proto); also DATA"},
             {"BANNER", "string", "a '!creator' line"},
             {"HEADER", "boolean", "write the header lines (default true)"}},
    .handlers = {{"count", "r", "lines written"}},
    .example = "FromDump(in.pcap, STOP true) -> ToIPSummaryDump(out.txt, CONTENTS ip_src ip_dst ip_len);");

class FromIPSummaryDump : public SourceElement {
 public:
  void configure(Args& a) override {
    std::string contents;
    InputPath in;
    a.read_mp("FILENAME", in)
        .read("CONTENTS", contents)
        .read("DATA", contents)
        .read("ZERO", zero_)
        .read("CHECKSUM", checksum_);
    read_source_args(a, 32);
    a.complete();
    file_ = in.path;
    if (!contents.empty()) {
      from_header_ = false;
      fields_ = split_ws(contents);
      for (auto& f : fields_)
        if (!known_field(f)) a.fail(fmt::format("unknown CONTENTS field '{}'", f));
    }
  }
  void initialize() override {
    in_.open(file_);
    if (!in_) throw std::runtime_error(file_ + ": " + std::strerror(errno));
    SourceElement::initialize();
  }
  uint32_t produce(PacketBatch* b, uint32_t max, bool& done) override {
    uint32_t n = 0;
    while (n < max) {
      if (!have_line_) {
        if (!std::getline(in_, line_)) {
          done = true;
          break;
        }
        ++lineno_;
        std::string_view t = trim(line_);
        if (t.empty()) continue;
        if (t[0] == '!') {
          auto w = split_ws(t);
          if (w[0] == "!data" && !explicit_contents()) {
            fields_.assign(w.begin() + 1, w.end());
            for (auto& f : fields_)
              if (!known_field(f)) warn(fmt::format("unknown field '{}' will be ignored", f));
          }
          continue;
        }
        if (t[0] == '#') continue;
        have_line_ = true;
      }
      Packet* p = worker().pool().alloc(60);
      if (!p) break;
      have_line_ = false;
      std::string err;
      if (!build(p, err)) {
        worker().pool().free(p);
        warn(err);
        bad_.add();
        continue;
      }
      b->append(p);
      ++n;
    }
    return n;
  }
  void add_handlers() override {
    SourceElement::add_handlers();
    add_stat_handler("bad_lines", bad_);
  }

 private:
  bool explicit_contents() const { return !fields_.empty() && !from_header_; }
  void warn(const std::string& msg) {
    if (warnings_++ < 10) fmt::print(stderr, "{}:{}: {}: {}\n", file_, lineno_, name(), msg);
  }
  bool build(Packet* p, std::string& err) {
    auto w = split_ws(line_);
    if (fields_.empty()) return err = "no '!data' line and no CONTENTS", false;
    if (w.size() != fields_.size()) return err = fmt::format("{} fields, expected {}", w.size(), fields_.size()), false;
    uint8_t src[4] = {}, dst[4] = {}, proto = 17, ttl = 64, tos = 0, flags = 0x10;
    uint32_t seq = 0, ack = 0, iplen = 0, payload = 0;
    uint16_t sport = 0, dport = 0, id = 0, win = 0, fragoff = 0;
    bool have_len = false, have_payload = false;
    uint64_t ts = 0;
    uint8_t link = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      const std::string& f = fields_[i];
      const std::string& v = w[i];
      if (v == "-") continue;
      uint64_t u = 0;
      auto bad = [&] {
        err = fmt::format("bad {} '{}'", f, v);
        return false;
      };
      if (f == "timestamp") {
        if (!parse_timestamp(v, ts)) return bad();
      } else if (f == "ts_sec") {
        if (!parse_uint(v, u)) return bad();
        ts = u * 1000000000ull + ts % 1000000000ull;
      } else if (f == "ts_usec") {
        if (!parse_uint(v, u) || u >= 1000000) return bad();
        ts = ts / 1000000000ull * 1000000000ull + u * 1000;
      } else if (f == "ip_src" || f == "ip_dst") {
        IPv4Addr a;
        if (!parse_ipv4(v, a)) return bad();
        std::memcpy(f == "ip_src" ? src : dst, a.b.data(), 4);
      } else if (f == "ip_proto") {
        if (v == "T")
          proto = 6;
        else if (v == "U")
          proto = 17;
        else if (v == "I")
          proto = 1;
        else if (parse_uint(v, u) && u < 256)
          proto = uint8_t(u);
        else
          return bad();
      } else if (f == "ip_len") {
        if (!parse_uint(v, u) || u > 65535) return bad();
        iplen = uint32_t(u), have_len = true;
      } else if (f == "payload_len") {
        if (!parse_uint(v, u) || u > 65000) return bad();
        payload = uint32_t(u), have_payload = true;
      } else if (f == "link") {
        if (!parse_uint(v, u) || u > 255) return bad();
        link = uint8_t(u);
      } else if (f == "ip_ttl" || f == "ip_tos") {
        if (!parse_uint(v, u) || u > 255) return bad();
        (f == "ip_ttl" ? ttl : tos) = uint8_t(u);
      } else if (f == "ip_id" || f == "sport" || f == "dport" || f == "tcp_window") {
        if (!parse_uint(v, u) || u > 65535) return bad();
        (f == "ip_id" ? id : f == "sport" ? sport : f == "dport" ? dport : win) = uint16_t(u);
      } else if (f == "tcp_seq" || f == "tcp_ack") {
        if (!parse_uint(v, u) || u > 0xffffffffull) return bad();
        (f == "tcp_seq" ? seq : ack) = uint32_t(u);
      } else if (f == "tcp_flags") {
        if (!parse_flags(v, flags)) return bad();
      } else if (f == "ip_fragoff") {
        std::string s = v;
        bool mf = !s.empty() && s.back() == '+';
        if (mf) s.pop_back();
        if (!parse_uint(s, u) || u % 8 || u / 8 > 0x1fff) return bad();
        fragoff = uint16_t(u / 8) | (mf ? 0x2000 : 0);
      }
    }
    uint32_t l4 = proto == 6 ? 20 : (proto == 17 || proto == 1) ? 8 : 0;
    if ((fragoff & 0x1fff) != 0) l4 = 0;
    if (!have_len) iplen = 20 + l4 + (have_payload ? payload : 0);
    if (iplen < 20) iplen = 20;
    uint32_t len = std::min<uint32_t>(iplen, 20 + l4 + (have_payload ? payload : iplen));
    len = std::max(len, std::min<uint32_t>(iplen, 20 + l4));
    if (!p->set_length(len)) return err = "packet too large", false;
    uint8_t* ip = p->data();
    std::memset(ip, 0, len);
    ip[0] = 0x45;
    ip[1] = tos;
    k::store_be16(ip + 2, uint16_t(iplen));
    k::store_be16(ip + 4, id);
    k::store_be16(ip + 6, fragoff);
    ip[8] = ttl;
    ip[9] = proto;
    std::memcpy(ip + 12, src, 4);
    std::memcpy(ip + 16, dst, 4);
    if (checksum_) k::store_be16(ip + 10, k::ip_checksum(ip, 20));
    uint8_t* t = ip + 20;
    if (l4 && len >= 20 + l4) {
      if (proto == 6 || proto == 17) {
        k::store_be16(t, sport);
        k::store_be16(t + 2, dport);
      }
      if (proto == 6) {
        k::store_be32(t + 4, seq);
        k::store_be32(t + 8, ack);
        t[12] = 0x50;
        t[13] = flags;
        k::store_be16(t + 14, win);
      } else if (proto == 17) {
        k::store_be16(t + 4, uint16_t(iplen - 20));
      }
    }
    p->set_network_header(0);
    p->set_transport_header(20);
    p->set_timestamp_ns(ts);
    p->anno().paint = link;
    return true;
  }

  std::string file_, line_;
  std::vector<std::string> fields_;
  bool from_header_ = true, zero_ = true, checksum_ = false, have_line_ = false;
  std::ifstream in_;
  uint64_t lineno_ = 0, warnings_ = 0;
  Stat bad_;
};
SHOAL_ELEMENT(
    FromIPSummaryDump, .name = "FromIPSummaryDump", .ports = "0/1", .processing = "a/a",
    .summary = "makes IPv4 packets from Click's IP summary text",
    .description =
        "Reads lines of fields named by the file's '!data' line (or CONTENTS) and emits raw IPv4 "
        "packets (no Ethernet header; the network header annotation is set) with zero payload. "
        "CHECKSUM true fills the IP checksum. Malformed lines are reported with file:line (the "
        "first ten) and counted in bad_lines; they make no packet.",
    .args = {{"FILENAME", "string", "input file, mandatory"},
             {"CONTENTS", "fields", "override the !data line; also DATA (link sets the paint annotation)"},
             {"CHECKSUM", "boolean", "compute IP checksums (default false)"},
             {"ZERO", "boolean", "zero payloads (always true)"},
             {"STOP", "boolean", "stop at end of file"},
             {"LIMIT", "integer", "packets at most"},
             {"BURST", "unsigned", "packets per batch"},
             {"ACTIVE", "boolean", "read when true"}},
    .handlers = {{"count", "r", "packets emitted"}, {"bad_lines", "r", "lines that made no packet"}},
    .example =
        "FromIPSummaryDump(in.txt, STOP true) -> EtherEncap(0x0800, 2:0:0:0:0:1, 2:0:0:0:0:2) -> ToDump(out.pcap);");

}  // namespace shoal
