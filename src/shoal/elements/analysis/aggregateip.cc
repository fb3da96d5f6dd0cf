// AggregateIP: sets the aggregate annotation from a field of the IP header,
// the transport header or the payload, named as Click's IPField names them
// ('ip src/8', 'tcp flags', 'ip[8:2] & 0x3f0', 'transp{4:12}').
#include <fmt/format.h>

#include <cctype>
#include <optional>
#include <span>
#include <tuple>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

// Click's IPField: a field of an IP packet's headers or payload.
namespace ipfield {

// The headers a field is measured from: an IP protocol, or one of these.
constexpr int kIp = 0, kTcpOrUdp = 256, kTransp = 258, kPayload = 259;

struct Field {
  int proto = -1;  // kIp, an IP protocol, kTcpOrUdp, kTransp or kPayload
  int32_t bit_offset = 0, bit_length = 0;
};

struct Named {
  const char* name;
  int proto;
  int32_t offset, length;  // bits
};
// Click's IPFieldInfo names, by header.
constexpr Named kIpFields[] = {
    {"df", kIp, 49, 1},   {"dport", kTcpOrUdp, 16, 16}, {"dscp", kIp, 8, 6},  {"dst", kIp, 128, 32},
    {"ecn", kIp, 14, 2},  {"fragoff", kIp, 51, 13},     {"hl", kIp, 4, 4},    {"id", kIp, 32, 16},
    {"len", kIp, 16, 16}, {"mf", kIp, 50, 1},           {"off", kIp, 48, 16}, {"proto", kIp, 72, 8},
    {"rf", kIp, 48, 1},   {"sport", kTcpOrUdp, 0, 16},  {"src", kIp, 96, 32}, {"sum", kIp, 80, 16},
    {"tos", kIp, 8, 8},   {"ttl", kIp, 64, 8},          {"vers", kIp, 0, 4}};
constexpr Named kUdpFields[] = {{"dport", 17, 16, 16}, {"len", 17, 32, 16}, {"sport", 17, 0, 16}, {"sum", 17, 48, 16}};
constexpr Named kTcpFields[] = {{"ack", 6, 107, 1},   {"ackno", 6, 64, 32}, {"dport", 6, 16, 16}, {"fin", 6, 111, 1},
                                {"flags", 6, 104, 8}, {"hl", 6, 96, 4},     {"psh", 6, 108, 1},   {"push", 6, 108, 1},
                                {"rst", 6, 109, 1},   {"seq", 6, 32, 32},   {"seqno", 6, 32, 32}, {"sport", 6, 0, 16},
                                {"sum", 6, 128, 16},  {"syn", 6, 110, 1},   {"urg", 6, 106, 1},   {"urp", 6, 144, 16},
                                {"win", 6, 112, 16}};
constexpr Named kIcmpFields[] = {{"code", 1, 8, 8}, {"sum", 1, 16, 16}, {"type", 1, 0, 8}};
constexpr Named kTcpUdpFields[] = {{"dport", kTcpOrUdp, 16, 16}, {"sport", kTcpOrUdp, 0, 16}};

constexpr std::pair<const char*, int> kHeaders[] = {
    {"dccp", 33},  {"gre", 47}, {"icmp", 1},           {"igmp", 2},         {"ipip", 4}, {"payload", kPayload},
    {"sctp", 132}, {"tcp", 6},  {"tcpudp", kTcpOrUdp}, {"transp", kTransp}, {"udp", 17}};

std::span<const Named> fields_of(int header) {
  switch (header) {
    case kIp: return kIpFields;
    case 6: return kTcpFields;
    case 17: return kUdpFields;
    case 1: return kIcmpFields;
    case kTcpOrUdp: return kTcpUdpFields;
    default: return {};
  }
}

// A cursor over the specification.
struct Cur {
  std::string_view s;
  size_t i = 0;
  void space() {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  }
  bool take(char c) {
    space();
    if (i < s.size() && s[i] == c) return ++i, true;
    return false;
  }
  std::string_view word(std::string_view stops = "") {
    space();
    size_t b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i])) &&
           stops.find(s[i]) == std::string_view::npos)
      ++i;
    return s.substr(b, i - b);
  }
  bool number(int64_t& v) {
    space();
    size_t b = i;
    int base = 10;
    if (i + 1 < s.size() && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) base = 16, i += 2, b = i;
    v = 0;
    while (i < s.size() && (base == 16 ? std::isxdigit(static_cast<unsigned char>(s[i]))
                                       : std::isdigit(static_cast<unsigned char>(s[i])))) {
      const char c = char(std::tolower(static_cast<unsigned char>(s[i])));
      v = v * base + (c <= '9' ? c - '0' : c - 'a' + 10);
      if (v > UINT32_MAX) return false;
      ++i;
    }
    return i > b;
  }
};

// Click's IPField syntax: HEADER [NAME] [[OFF] [OFF:LEN] [OFF-OFF2] or in
// bits {...}] [/PREFIX] [& MASK]; an empty optional with `err` set on failure.
std::optional<Field> parse_field(std::string_view text, std::string& err) {
  Cur c{text};
  int header = -1;
  size_t save = c.i;
  std::string_view w = c.word("/[{&");
  if (w == "ip") {
    header = kIp;
    const size_t after = c.i;
    int64_t n;
    if (c.word("/[{&") == "proto" && c.number(n)) {  // 'ip proto N': that protocol's header
      if (n > 255) return err = "'ip proto' takes a protocol number", std::nullopt;
      header = int(n);
    } else {
      c.i = after;  // (else 'proto' is the IP header's field)
    }
  } else {
    for (auto& [name, proto] : kHeaders)
      if (w == name) header = proto;
  }
  if (header < 0) {
    c.i = save;
    return err = "expected 'HEADER [NAME] [[OFFSET:LENGTH]] [/PREFIX] [& MASK]'", std::nullopt;
  }
  std::optional<Field> named;
  save = c.i;
  std::string_view name = c.word("/[{&");
  for (const Named& n : fields_of(header))
    if (name == n.name) named = Field{n.proto, n.offset, n.length};
  if (!named) c.i = save;
  // an offset and length, in bytes [...] or bits {...}
  int64_t off = -1, len = -1;
  for (auto [open, close, unit] : {std::tuple{'[', ']', 8}, std::tuple{'{', '}', 1}}) {
    if (!c.take(open)) continue;
    int64_t a, b;
    if (!c.number(a)) return err = "bad offset or length in TCP/IP field", std::nullopt;
    if (c.take(':')) {
      if (!c.number(b)) return err = "bad offset or length in TCP/IP field", std::nullopt;
      off = a * unit, len = b * unit;
    } else if (c.take('-')) {
      if (!c.number(b) || b < a) return err = "bad offset or length in TCP/IP field", std::nullopt;
      off = a * unit, len = (b - a + 1) * unit;
    } else {
      off = a * unit, len = unit;
    }
    if (!c.take(close)) return err = "bad offset or length in TCP/IP field", std::nullopt;
    break;
  }
  Field f;
  if (off >= 0 && len <= 0) return err = "bad offset or length in TCP/IP field", std::nullopt;
  if (named && off >= 0) {
    if (off >= named->bit_length || off + len > named->bit_length)
      return err = "bad offset or length in TCP/IP field", std::nullopt;
    f = Field{named->proto, int32_t(named->bit_offset + off), int32_t(len)};
  } else if (named) {
    f = *named;
  } else if (off >= 0) {
    f = Field{header, int32_t(off), int32_t(len)};
  } else {
    return err = "expected 'HEADER [NAME] [[OFFSET:LENGTH]] [/PREFIX] [& MASK]'", std::nullopt;
  }
  if (c.take('/')) {  // the top bits
    int64_t n;
    if (!c.number(n) || n > f.bit_length) return err = "bad prefix or mask in TCP/IP field", std::nullopt;
    f.bit_length = int32_t(n);
  }
  if (c.take('&')) {  // one run of ones: the bits under it
    int64_t m;
    if (!c.number(m) || m == 0) return err = "bad prefix or mask in TCP/IP field", std::nullopt;
    const uint64_t mask = uint64_t(m);
    const int lsb = __builtin_ctzll(mask);
    const uint64_t above = mask + (uint64_t(1) << lsb);  // a single bit when the ones are contiguous
    const int msb = __builtin_ctzll(above);
    if ((above & (above - 1)) != 0 || msb > f.bit_length)
      return err = "bad prefix or mask in TCP/IP field", std::nullopt;
    f = Field{f.proto, f.bit_offset + f.bit_length - msb, msb - lsb};
  }
  c.space();
  if (c.i != text.size()) return err = "garbage after field specification", std::nullopt;
  return f;
}

std::string header_name(int proto) {
  if (proto == kIp) return "ip";
  for (auto& [name, p] : kHeaders)
    if (p == proto) return name;
  return fmt::format("ip proto {}", proto);
}

class AggregateIP : public PacketElement<AggregateIP> {
 public:
  void configure(Args& a) override {
    std::string spec;
    a.read_mp("FIELD", spec).read("INCREMENTAL", incremental_).read("UNSHIFT_IP_ADDR", unshift_);
    a.complete();
    std::string err;
    auto f = parse_field(spec, err);
    if (!f) a.fail(fmt::format("FIELD '{}': {}", spec, err));
    f_ = *f;
    const int32_t right = f_.bit_offset + f_.bit_length - 1;
    if (f_.bit_length > 32) a.fail("field length too large, max 32");
    if (f_.bit_offset / 32 != right / 32) a.fail("field specification does not fit within a single word");
    if (f_.bit_length == 32 && incremental_) a.fail("'INCREMENTAL' is incompatible with field length 32");
    mask_ = f_.bit_length == 32 ? 0xffffffffu : (1u << f_.bit_length) - 1;
    word_ = uint32_t(f_.bit_offset / 32) * 4;
    shift_ = uint32_t(31 - right % 32);
    // UNSHIFT_IP_ADDR: a part of an address keeps its place in the address
    if (unshift_ && f_.proto == kIp && f_.bit_offset >= 96 && f_.bit_offset < 160) mask_ <<= shift_, shift_ = 0;
  }
  void initialize() override { r_ = add_drop_reason("no-field"); }
  int process(Packet* p) {
    int64_t at = where(p);
    if (at < 0 || uint64_t(at) + word_ + 4 > p->length()) return noutputs() > 1 ? 1 : drop_code(r_);
    const uint32_t v = (k::load_be32(p->data() + at + word_) >> shift_) & mask_;
    uint32_t& agg = p->anno().aggregate;
    agg = incremental_ ? uint32_t((uint64_t(agg) << f_.bit_length) + v) : v;
    return 0;
  }
  void add_handlers() override {
    add_read_handler("header", [this] { return header_name(f_.proto); });
    add_read_handler("bit_offset", [this] { return std::to_string(f_.bit_offset); });
    add_read_handler("bit_length", [this] { return std::to_string(f_.bit_length); });
    add_read_handler("field", [this] { return unparse(); });
  }

 private:
  // Where the field's header starts in p, or -1 when p lacks it (not IP, a
  // later fragment, another protocol).
  int64_t where(const Packet* p) const {
    if (!p->has_network_header() || p->network_header_offset() < 0) return -1;
    const int64_t nh = p->network_header_offset();
    if (f_.proto == kIp) return nh;
    if (uint64_t(nh) + 20 > p->length()) return -1;
    const uint8_t* ip = p->data() + nh;
    if ((k::load_be16(ip + 6) & 0x1fff) != 0) return -1;  // transport headers are in first fragments
    const int64_t th = nh + int64_t(ip[0] & 0xf) * 4;
    const uint8_t proto = ip[9];
    switch (f_.proto) {
      case kTcpOrUdp: return proto == 6 || proto == 17 ? th : -1;
      case kTransp: return th;
      case kPayload:
        if (proto == 6 && uint64_t(th) + 20 <= p->length()) return th + int64_t(p->data()[th + 12] >> 4) * 4;
        return proto == 17 ? th + 8 : -1;
      default: return proto == f_.proto ? th : -1;
    }
  }
  // Click's canonical form: a named field, else [OFF], [OFF:LEN] or bits.
  std::string unparse() const {
    std::string s = header_name(f_.proto);
    for (int h : {f_.proto, f_.proto == kTcpOrUdp ? kIp : -1})
      for (const Named& n : fields_of(h))
        if (n.proto == f_.proto && n.offset == f_.bit_offset && n.length == f_.bit_length) return s + " " + n.name;
    const int32_t bo = f_.bit_offset, bl = f_.bit_length;
    if (bo % 8 == 0 && bl == 8) return s + fmt::format("[{}]", bo / 8);
    if (bo % 8 == 0 && bl % 8 == 0) return s + fmt::format("[{}:{}]", bo / 8, bl / 8);
    if (bl == 1) return s + fmt::format("{{{}}}", bo);
    return s + fmt::format("{{{}:{}}}", bo, bl);
  }

  Field f_;
  bool incremental_ = false, unshift_ = false;
  uint32_t mask_ = 0, word_ = 0, shift_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(
    AggregateIP, .name = "AggregateIP", .ports = "1/1-2", .processing = "a/ah",
    .summary = "sets the aggregate annotation from an IP packet field",
    .description =
        "Click's AggregateIP: the aggregate annotation of each packet becomes FIELD's value (host byte order). "
        "FIELD names a field as Click's IPFieldInfo does: a header (ip, tcp, udp, icmp, tcpudp, transp, payload, "
        "or 'ip proto N') and a name ('ip src', 'ip ttl', 'ip df', 'tcp flags', 'tcp syn', 'udp len', 'icmp type', "
        "'ip sport'...) or an offset from that header in bytes ('ip[8]', 'ip[8:2]', 'ip[8-9]') or bits "
        "('ip{48:3}'), then optionally '/N' (the top N bits) or '& MASK' (the bits under one run of ones). The field "
        "must lie within one 32-bit word. A packet without the field (too short, a later fragment, another "
        "protocol; the network header annotation unset) leaves on output 1 if there is one, else is dropped "
        "('no-field').",
    .args = {{"FIELD", "field", "the field, mandatory"},
             {"INCREMENTAL", "boolean",
              "shift the old annotation left by the field's bits and add the value (default false)"},
             {"UNSHIFT_IP_ADDR", "boolean",
              "a part of an IP address keeps its place: 'ip src/8' of 1.0.0.0 gives 16777216, not 1 (default "
              "false)"}},
    .handlers = {{"header", "r", "the field's header"},
                 {"bit_offset", "r", "its offset in bits"},
                 {"bit_length", "r", "its length in bits"},
                 {"field", "r", "the field in Click's canonical form"}},
    .example =
        "FromDump(trace.pcap, STOP true, FORCE_IP true) -> AggregateIP(ip src/24) -> "
        "AggregateCounter -> Discard;");

}  // namespace ipfield
}  // namespace shoal
