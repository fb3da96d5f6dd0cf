// Click's IP summary dump text format (see ipsummarydump.hh).
#include "shoal/elements/io/ipsummarydump.hh"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <cctype>
#include <cstring>

#include "shoal/core/args.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal::ipsum {

namespace {

constexpr const char* kNames[kNumFields] = {
    "timestamp",   "ntimestamp", "ts_sec",         "ts_usec",         "ts_usec1",    "count",    "link",
    "direction",   "aggregate",  "wire_len",       "ip_src",          "ip_dst",      "ip_tos",   "ip_dscp",
    "ip_ecn",      "ip_ttl",     "ip_frag",        "ip_fragoff",      "ip_id",       "ip_sum",   "ip_proto",
    "ip_hl",       "ip_len",     "ip_capture_len", "ip_opt",          "sport",       "dport",    "tcp_seq",
    "tcp_ack",     "tcp_off",    "tcp_flags",      "tcp_window",      "tcp_urp",     "tcp_opt",  "udp_len",
    "icmp_type",   "icmp_code",  "icmp_type_name", "icmp_code_name",  "icmp_flowid", "icmp_seq", "icmp_nextmtu",
    "payload_len", "payload",    "payload_md5",    "payload_md5_hex", "eth_src",     "eth_dst",  "eth_type"};

constexpr std::pair<const char*, const char*> kSynonyms[] = {
    {"utimestamp", "timestamp"}, {"ts", "timestamp"},
    {"sec", "ts_sec"},           {"usec", "ts_usec"},
    {"usec1", "ts_usec1"},       {"pkt_count", "count"},
    {"packet_count", "count"},   {"agg", "aggregate"},
    {"paint", "link"},           {"wire_length", "wire_len"},
    {"length", "ip_len"},        {"ip_p", "ip_proto"},
    {"ether_src", "eth_src"},    {"ether_dst", "eth_dst"},
    {"ether_type", "eth_type"},  {"payload_length", "payload_len"},
    {"tcp_seqno", "tcp_seq"},    {"tcp_ackno", "tcp_ack"},
    {"tcp_win", "tcp_window"}};

constexpr const char* kIcmpTypes[] = {"echo-reply",
                                      "",
                                      "",
                                      "unreachable",
                                      "sourcequench",
                                      "redirect",
                                      "",
                                      "",
                                      "echo",
                                      "routeradvert",
                                      "routersolicit",
                                      "timeexceeded",
                                      "parameterproblem",
                                      "timestamp",
                                      "timestamp-reply",
                                      "inforeq",
                                      "inforeq-reply",
                                      "maskreq",
                                      "maskreq-reply"};
constexpr const char* kUnreachCodes[] = {"net",      "host",          "protocol",        "port",
                                         "needfrag", "srcroutefail",  "net-unknown",     "host-unknown",
                                         "isolated", "net-prohib",    "host-prohib",     "tos-net",
                                         "tos-host", "filter-prohib", "host-precedence", "precedence-cutoff"};
constexpr const char kFlagChars[] = "FSRPAUECN";

// Where a packet's parts are, as Click's PacketDesc sees them.
struct View {
  const uint8_t* d = nullptr;
  uint32_t len = 0;
  const uint8_t* ip = nullptr;  // nullptr: no usable IPv4 header
  uint32_t nl = 0;              // network length, cut to ip_len
  uint32_t ihl = 0;
  bool first = true;
  uint8_t proto = 0;
  const uint8_t* l4 = nullptr;  // transport header of a first fragment
  int64_t tl = -1;              // its length
  std::string bad;
};

View view(const Packet* p) {
  View v;
  v.d = p->data();
  v.len = p->length();
  int64_t off = -1;
  if (p->has_network_header())
    off = p->network_header_offset();
  else if (v.len >= 34 && k::load_be16(v.d + 12) == 0x0800)
    off = 14;
  else if (v.len >= 20 && (v.d[0] >> 4) == 4)
    off = 0;
  if (off < 0 || off > int64_t(v.len)) return v.bad = "no IP header", v;
  const uint8_t* ip = v.d + off;
  uint32_t nl = v.len - uint32_t(off);
  if (nl < 4) return v.bad = "truncated IP header", v;
  if ((ip[0] >> 4) != 4) return v.bad = fmt::format("IP version {}", ip[0] >> 4), v;
  uint32_t ihl = (ip[0] & 0xf) * 4u;
  if (ihl < 20) return v.bad = fmt::format("IP header length {}", ihl / 4), v;
  uint32_t iplen = k::load_be16(ip + 2);
  if (iplen < ihl) return v.bad = fmt::format("IP length {}", iplen), v;
  v.ip = ip;
  v.nl = std::min(nl, iplen);
  v.ihl = ihl;
  v.first = nl < 8 || (k::load_be16(ip + 6) & 0x1fff) == 0;
  v.proto = nl >= 10 ? ip[9] : 0;
  if (v.first && v.nl > ihl) {
    v.l4 = ip + ihl;
    v.tl = int64_t(v.nl) - ihl;
  }
  return v;
}

bool has_ports(uint8_t p) { return p == 6 || p == 17 || p == 33 || p == 136; }

std::string quote(std::string_view s) {
  std::string o = "\"";
  for (unsigned char c : s) {
    if (c == '\\' || c == '"' || c == '$')
      o += '\\', o += char(c);
    else if (c == '\t')
      o += "\\t";
    else if (c == '\r')
      o += "\\r";
    else if (c == '\n')
      o += "\\n";
    else if (c < 32 || c >= 127)
      o += fmt::format("\\{}{}{}", c >> 6, (c >> 3) & 7, c & 7);
    else
      o += char(c);
  }
  return o + "\"";
}

// Where the payload starts and how long IP says it is (Click's payload_info:
// for ICMP and other protocols, the transport header is payload).
void payload_info(const View& v, int64_t& off, uint32_t& len) {
  if (!v.ip) {
    off = 0, len = v.len;
    return;
  }
  int64_t t = (v.ip - v.d) + v.ihl;
  uint32_t iplen = k::load_be16(v.ip + 2);
  off = t;
  if (v.first) {
    if (v.proto == 6)
      off += (v.tl >= 13 && (v.l4[12] >> 4) * 4 >= 20) ? (v.l4[12] >> 4) * 4 : 20;
    else if (v.proto == 17 || v.proto == 136)
      off += 8;
  }
  int64_t l = int64_t(iplen) - (off - (v.ip - v.d));
  len = l > 0 ? uint32_t(l) : 0;
}

void md5(const uint8_t* p, size_t n, uint8_t out[16]) {
  unsigned int m = 16;
  EVP_Digest(p, n, out, &m, EVP_md5(), nullptr);
}

// Click's md5_finish_text: 22 characters of 6 bits each, '@' allowed.
std::string md5_text(const uint8_t d[16]) {
  static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@";
  std::string s;
  for (int bit = 0; bit < 128; bit += 6) {
    int first = bit / 8;
    int val = d[first] >> (bit % 8);
    if (bit + 8 > (first + 1) * 8 && first < 15) val += d[first + 1] << (8 - (bit % 8));
    s += chars[val & 0x3f];
  }
  return s;
}

void tcp_options(std::string& s, const uint8_t* o, size_t n) {
  size_t start = s.size();
  const uint8_t* e = o + n;
  const char* sep = "";
  while (o < e) {
    uint8_t kind = o[0];
    if (kind == 0) break;
    if (kind == 1) {
      ++o;
      continue;
    }
    if (o + 1 >= e || o[1] < 2 || o + o[1] > e) {
      s.resize(start);
      s += '?';
      return;
    }
    uint8_t l = o[1];
    if (kind == 2 && l == 4)
      s += fmt::format("{}mss{}", sep, k::load_be16(o + 2));
    else if (kind == 3 && l == 3)
      s += fmt::format("{}wscale{}", sep, o[2]);
    else if (kind == 4 && l == 2)
      s += fmt::format("{}sackok", sep);
    else if (kind == 5 && l % 8 == 2) {
      for (int i = 2; i < l; i += 8) {
        s += fmt::format("{}sack{}-{}", sep, k::load_be32(o + i), k::load_be32(o + i + 4));
        sep = ";";
      }
    } else if (kind == 8 && l == 10)
      s += fmt::format("{}ts{}:{}", sep, k::load_be32(o + 2), k::load_be32(o + 6));
    else if (kind == 2 || kind == 3 || kind == 4 || kind == 5 || kind == 8) {
      s.resize(start);
      s += '?';
      return;
    } else {
      s += fmt::format("{}{}", sep, kind);
      char c = '=';
      for (int i = 2; i < l; ++i, c = ':') s += fmt::format("{}{}", c, o[i]);
    }
    sep = ";";
    o += l;
  }
  if (s.size() == start) s += '.';
}

// "mss1460;wscale10;sackok;sack1-2;ts3:4;nop;eol;N=a:b" -> option bytes.
bool parse_tcp_options(std::string_view t, std::string& out) {
  if (t == ".") return true;
  size_t i = 0;
  while (i <= t.size()) {
    size_t j = t.find(';', i);
    if (j == std::string_view::npos) j = t.size();
    std::string_view w = t.substr(i, j - i);
    uint64_t a = 0, b = 0;
    auto num_after = [&](std::string_view pfx, uint64_t& x) {
      return w.substr(0, pfx.size()) == pfx && parse_uint(w.substr(pfx.size()), x);
    };
    if (w == "nop")
      out += char(1);
    else if (w == "eol")
      out += char(0);
    else if (w == "sackok")
      out += std::string("\x04\x02", 2);
    else if (num_after("mss", a) && a < 65536)
      out += std::string{char(2), char(4), char(a >> 8), char(a)};
    else if (num_after("wscale", a) && a < 256)
      out += std::string{char(3), char(3), char(a)};
    else if (w.substr(0, 2) == "ts" && w.find(':') != std::string_view::npos &&
             parse_uint(w.substr(2, w.find(':') - 2), a) && parse_uint(w.substr(w.find(':') + 1), b) &&
             a <= 0xffffffffu && b <= 0xffffffffu) {
      out += std::string{char(8), char(10)};
      for (uint64_t x : {a, b}) out += std::string{char(x >> 24), char(x >> 16), char(x >> 8), char(x)};
    } else if (w.substr(0, 4) == "sack" && w.find_first_of("-:") != std::string_view::npos &&
               parse_uint(w.substr(4, w.find_first_of("-:") - 4), a) &&
               parse_uint(w.substr(w.find_first_of("-:") + 1), b) && a <= 0xffffffffu && b <= 0xffffffffu) {
      // one SACK block: 'sackA-B' (also 'sackA:B')
      out += std::string{char(5), char(10)};
      for (uint64_t x : {a, b}) out += std::string{char(x >> 24), char(x >> 16), char(x >> 8), char(x)};
    } else {
      size_t eq = w.find('=');
      uint64_t kind;
      if (!parse_uint(w.substr(0, eq), kind) || kind > 255) return false;
      std::string body;
      if (eq != std::string_view::npos) {
        std::string_view rest = w.substr(eq + 1);
        size_t k0 = 0;
        while (k0 <= rest.size()) {
          size_t k1 = rest.find(':', k0);
          if (k1 == std::string_view::npos) k1 = rest.size();
          uint64_t x;
          if (!parse_uint(rest.substr(k0, k1 - k0), x) || x > 255) return false;
          body += char(x);
          k0 = k1 + 1;
        }
      }
      out += char(kind);
      out += char(body.size() + 2);
      out += body;
    }
    i = j + 1;
  }
  return out.size() <= 40;
}

}  // namespace

const char* field_name(int f) { return f >= 0 && f < kNumFields ? kNames[f] : "?"; }

int find_field(std::string_view name) {
  std::string n(name);
  for (int round = 0; round < 4; ++round) {
    for (auto& s : kSynonyms)
      if (n == s.first) n = s.second;
    for (int f = 0; f < kNumFields; ++f)
      if (n == kNames[f]) return f;
    if (size_t sp = n.find(' '); sp != std::string::npos)
      n[sp] = '_';
    else if (n.find('_') == std::string::npos)
      n.insert(0, "ip_");
    else
      return -1;
  }
  return -1;
}

bool parse_fields(std::string_view text, std::vector<int>& out, std::string& bad) {
  for (auto w : split_words(text)) {
    int f = find_field(w);
    if (f < 0) return bad = std::string(w), false;
    out.push_back(f);
  }
  return true;
}

const char* icmp_type_name(int type) {
  return type >= 0 && type < int(std::size(kIcmpTypes)) && kIcmpTypes[type][0] ? kIcmpTypes[type] : nullptr;
}
bool icmp_type_number(std::string_view name, int& type) {
  for (int i = 0; i < int(std::size(kIcmpTypes)); ++i)
    if (kIcmpTypes[i][0] && name == kIcmpTypes[i]) return type = i, true;
  return false;
}

const char* icmp_code_name(int type, int code) {
  static constexpr const char* redirect[] = {"net", "host", "tos-net", "tos-host"};
  static constexpr const char* timeexceeded[] = {"transit", "reassembly"};
  static constexpr const char* paramprob[] = {"erroratptr", "missingopt", "length"};
  auto pick = [code](auto& tab) -> const char* {
    return code >= 0 && code < int(std::size(tab)) ? tab[code] : nullptr;
  };
  switch (type) {
    case 3: return pick(kUnreachCodes);
    case 5: return pick(redirect);
    case 11: return pick(timeexceeded);
    case 12: return pick(paramprob);
    default: return nullptr;
  }
}

const char* ip_proto_name(int proto) {
  switch (proto) {
    case 1: return "icmp";
    case 2: return "igmp";
    case 4: return "ipip";
    case 6: return "tcp";
    case 17: return "udp";
    case 47: return "gre";
    case 50: return "esp";
    case 51: return "ah";
    case 58: return "icmp6";
    case 132: return "sctp";
    default: return nullptr;
  }
}

std::string bad_reason(const Packet* p) { return view(p).bad; }

void write_field(std::string& out, int f, const Packet* p) {
  View v = view(p);
  const uint8_t* ip = v.ip;
  uint64_t ts = p->timestamp_ns();
  auto put = [&](auto x) { out += fmt::format("{}", x); };
  auto missing = [&] { out += '-'; };
  auto need_ip = [&](uint32_t n) { return ip && v.nl >= n; };
  auto tcp = [&](int64_t n) { return ip && v.proto == 6 && v.l4 && v.tl >= n; };
  switch (f) {
    case kTimestamp:
    case kNTimestamp: {
      // A timestamp moved before zero (AdjustTimestamp) wraps: show it signed.
      if (int64_t(ts) < 0) out += '-', ts = uint64_t(-int64_t(ts));
      if (f == kTimestamp && ts % 1000 == 0)
        out += fmt::format("{}.{:06d}", ts / 1000000000, (ts % 1000000000) / 1000);
      else
        out += fmt::format("{}.{:09d}", ts / 1000000000, ts % 1000000000);
      return;
    }
    case kTsSec: return put(ts / 1000000000);
    case kTsUsec: return put((ts % 1000000000) / 1000);
    case kTsUsec1: return put(ts / 1000);
    case kCount: return put(1);
    case kLink: return put(int(p->anno().paint));
    case kDirection:
      return p->anno().paint == 0 ? put('>') : p->anno().paint == 1 ? put('<') : put(int(p->anno().paint));
    case kAggregate: return put(p->anno().aggregate);
    case kWireLen: return put(p->length());
    case kEthSrc:
    case kEthDst:
    case kEthType: {
      if (!p->has_mac_header() || p->mac_header_offset() < 0 || p->mac_header_offset() + 14 > int64_t(v.len))
        return missing();
      const uint8_t* m = v.d + p->mac_header_offset();
      if (f == kEthType) return put(fmt::format("0x{:04x}", k::load_be16(m + 12)));
      std::string s = format_ether(m + (f == kEthSrc ? 6 : 0));
      std::replace(s.begin(), s.end(), ':', '-');
      return put(s);
    }
    case kIpSrc: return need_ip(16) ? put(format_ipv4(ip + 12)) : missing();
    case kIpDst: return need_ip(20) ? put(format_ipv4(ip + 16)) : missing();
    case kIpTos: return need_ip(2) ? put(int(ip[1])) : missing();
    case kIpDscp: return need_ip(2) ? put(ip[1] >> 2) : missing();
    case kIpEcn: {
      if (!need_ip(2)) return missing();
      static const char* e[] = {"no", "ect1", "ect2", "ce"};
      return put(e[ip[1] & 3]);
    }
    case kIpTtl: return need_ip(9) ? put(int(ip[8])) : missing();
    case kIpFrag: {
      if (!need_ip(8)) return missing();
      uint16_t fo = k::load_be16(ip + 6);
      return put((fo & 0x3fff) ? ((fo & 0x1fff) == 0 ? 'F' : 'f') : (fo & 0x4000) ? '!' : '.');
    }
    case kIpFragoff: {
      if (!need_ip(8)) return missing();
      uint16_t fo = k::load_be16(ip + 6);
      return put(fmt::format("{}{}{}", (fo & 0x1fff) * 8, (fo & 0x2000) ? "+" : "", (fo & 0x4000) ? "!" : ""));
    }
    case kIpId: return need_ip(6) ? put(k::load_be16(ip + 4)) : missing();
    case kIpSum: return need_ip(12) ? put(k::load_be16(ip + 10)) : missing();
    case kIpProto:
      if (!need_ip(10)) return missing();
      return v.proto == 6 ? put('T') : v.proto == 17 ? put('U') : v.proto == 1 ? put('I') : put(int(v.proto));
    case kIpHl: return ip ? put(v.ihl) : missing();
    case kIpLen: return ip ? put(k::load_be16(ip + 2)) : put(v.len);
    case kIpCaptureLen: return ip ? put(v.nl) : put(v.len);
    case kIpOpt:
      if (!ip || (v.ihl > 20 && v.nl < v.ihl)) return missing();
      return write_ip_options(out, ip + 20, v.ihl - 20, false);
    case kSport:
    case kDport:
      if (ip && v.l4 && has_ports(v.proto) && v.tl >= (f == kDport ? 4 : 2))
        return put(k::load_be16(v.l4 + (f == kDport ? 2 : 0)));
      return missing();
    case kTcpSeq: return tcp(8) ? put(k::load_be32(v.l4 + 4)) : missing();
    case kTcpAck: return tcp(12) ? put(k::load_be32(v.l4 + 8)) : missing();
    case kTcpOff: return tcp(13) ? put((v.l4[12] >> 4) * 4) : missing();
    case kTcpFlags: {
      if (!tcp(14)) return missing();
      uint32_t fl = v.l4[13] | ((v.l4[12] & 1u) << 8);
      if (fl == 0x18) return put("PA");
      if (fl == 0x10) return put('A');
      if (fl == 0) return put('.');
      for (int b = 0; b < 9; ++b)
        if (fl & (1u << b)) out += kFlagChars[b];
      return;
    }
    case kTcpWindow: return tcp(16) ? put(k::load_be16(v.l4 + 14)) : missing();
    case kTcpUrp: return tcp(20) ? put(k::load_be16(v.l4 + 18)) : missing();
    case kTcpOpt: {
      if (!tcp(13)) return missing();
      uint32_t off = (v.l4[12] >> 4) * 4u;
      if (off > 20 && v.tl < int64_t(off)) return missing();
      if (off <= 20) return put('.');
      return tcp_options(out, v.l4 + 20, off - 20);
    }
    case kUdpLen: return ip && v.proto == 17 && v.l4 && v.tl >= 6 ? put(k::load_be16(v.l4 + 4)) : missing();
    case kIcmpType:
    case kIcmpTypeName:
    case kIcmpCode:
    case kIcmpCodeName:
    case kIcmpFlowid:
    case kIcmpSeq:
    case kIcmpNextmtu: {
      bool code = f == kIcmpCode || f == kIcmpCodeName;
      int64_t need = code ? 2 : f == kIcmpFlowid ? 6 : f == kIcmpSeq || f == kIcmpNextmtu ? 8 : 1;
      if (!ip || v.proto != 1 || !v.l4 || v.tl < need) return missing();
      int type = v.l4[0];
      if (f == kIcmpType) return put(type);
      if (f == kIcmpTypeName) return icmp_type_name(type) ? put(icmp_type_name(type)) : put(type);
      if (f == kIcmpCode) return put(int(v.l4[1]));
      if (f == kIcmpCodeName)
        return icmp_code_name(type, v.l4[1]) ? put(icmp_code_name(type, v.l4[1])) : put(int(v.l4[1]));
      if (f == kIcmpNextmtu) return type == 3 && v.l4[1] == 4 ? put(k::load_be16(v.l4 + 6)) : missing();
      if (type != 0 && type != 8 && type != 13 && type != 14 && type != 15 && type != 16 && type != 17 && type != 18)
        return missing();
      return put(k::load_be16(v.l4 + (f == kIcmpFlowid ? 4 : 6)));
    }
    case kPayloadLen:
    case kPayload:
    case kPayloadMd5:
    case kPayloadMd5Hex: {
      int64_t off;
      uint32_t len;
      payload_info(v, off, len);
      if (f == kPayloadLen) return put(len);
      if (len && off >= int64_t(v.len)) return missing();
      if (off + int64_t(len) > int64_t(v.len)) len = uint32_t(int64_t(v.len) - off);
      const uint8_t* b = v.d + (len ? off : 0);
      if (f == kPayload) return put(quote(std::string_view(reinterpret_cast<const char*>(b), len)));
      uint8_t d[16];
      md5(b, len, d);
      if (f == kPayloadMd5) return put(md5_text(d));
      for (uint8_t c : d) out += fmt::format("{:02x}", c);
      return;
    }
    default: return missing();
  }
}

std::vector<std::string> split_values(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    size_t b = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) {
      if (s[i] == '"') {
        ++i;
        while (i < s.size() && s[i] != '"') i += s[i] == '\\' ? 2 : 1;
      }
      if (i < s.size()) ++i;
    }
    out.emplace_back(s.substr(b, std::min(i, s.size()) - b));
  }
  return out;
}

namespace {

// The values of one line, parsed, before the packet is laid out.
struct Values {
  bool have[kNumFields] = {};
  uint64_t u[kNumFields] = {};
  std::string tcp_opt, ip_opt, payload;
};

bool parse_value(int f, const std::string& s, Values& v, std::string& err) {
  uint64_t x = 0;
  auto bad = [&] {
    err = fmt::format("bad {} '{}'", kNames[f], s);
    return false;
  };
  auto uint_max = [&](uint64_t max) {
    if (!parse_uint(s, x) || x > max) return bad();
    v.u[f] = x;
    return true;
  };
  switch (f) {
    case kTimestamp:
    case kNTimestamp:
      if (!parse_timestamp(s, x)) return bad();
      v.u[kTimestamp] = x, v.have[kTimestamp] = true;
      return true;
    case kTsSec:
    case kTsUsec: return uint_max(f == kTsSec ? 0xffffffffull : 999999);
    case kTsUsec1: return uint_max(UINT64_MAX / 1000);
    case kCount:
    case kWireLen: return uint_max(UINT32_MAX);
    case kLink:
    case kDirection:
      if (s == ">") return v.u[f] = 0, true;
      if (s == "<") return v.u[f] = 1, true;
      return uint_max(255);
    case kAggregate: return uint_max(UINT32_MAX);
    case kIpSrc:
    case kIpDst: {
      IPv4Addr a;
      if (!parse_ipv4(s, a)) return bad();
      v.u[f] = a.host();
      return true;
    }
    case kIpTos:
    case kIpTtl: return uint_max(255);
    case kIpDscp: return uint_max(63);
    case kIpEcn:
      if (s == "no" || s == "0") return v.u[f] = 0, true;
      if (s == "ect1" || s == "ECT(1)" || s == "1") return v.u[f] = 1, true;
      if (s == "ect2" || s == "ECT(0)" || s == "2") return v.u[f] = 2, true;
      if (s == "ce" || s == "CE" || s == "3") return v.u[f] = 3, true;
      return bad();
    case kIpFrag:
    case kIpFragoff: {
      uint64_t off = 0;
      if (s == ".")
        off = 0;
      else if (s == "!")
        off = 0x4000;
      else if (s == "F")
        off = 0x2000;
      else if (s == "f")
        off = 100;  // Click's: some offset, not the first
      else {
        size_t e = 0;
        while (e < s.size() && std::isdigit(static_cast<unsigned char>(s[e]))) ++e;
        if (e == 0 || !parse_uint(s.substr(0, e), off) || off / 8 > 0x1fff) return bad();
        off /= 8;
        for (; e < s.size(); ++e)
          if (s[e] == '+')
            off |= 0x2000;
          else if (s[e] == '!')
            off |= 0x4000;
          else
            return bad();
      }
      v.u[kIpFragoff] = off, v.have[kIpFragoff] = true;
      return true;
    }
    case kIpId:
    case kIpSum: return uint_max(65535);
    case kIpProto:
      if (s == "T") return v.u[f] = 6, true;
      if (s == "U") return v.u[f] = 17, true;
      if (s == "I") return v.u[f] = 1, true;
      return uint_max(255);
    case kIpHl: return uint_max(60) && (v.u[f] >= 20 || bad());
    case kIpLen: return uint_max(65535);
    case kIpCaptureLen: return uint_max(65535);
    case kSport:
    case kDport:
    case kTcpWindow:
    case kTcpUrp:
    case kUdpLen:
    case kIcmpFlowid:
    case kIcmpSeq:
    case kIcmpNextmtu: return uint_max(65535);
    case kTcpSeq:
    case kTcpAck: return uint_max(0xffffffffull);
    case kTcpOff: return uint_max(60) && (v.u[f] >= 20 || bad());
    case kTcpFlags: {
      if (s == ".") return v.u[f] = 0, true;
      if (!s.empty() && std::isdigit(static_cast<unsigned char>(s[0]))) return uint_max(0xfff);
      uint64_t fl = 0;
      for (char c : s) {
        const char* p = c == 'W' ? kFlagChars + 7 : std::strchr(kFlagChars, c);
        if (!c || !p) return bad();
        fl |= 1u << (p - kFlagChars);
      }
      v.u[f] = fl;
      return true;
    }
    case kTcpOpt:
      if (!parse_tcp_options(s, v.tcp_opt)) return bad();
      return true;
    case kIpOpt:
      if (!parse_ip_options(s, v.ip_opt)) return bad();
      return true;
    case kIcmpType:
    case kIcmpTypeName: {
      int t;
      if (icmp_type_number(s, t)) return v.u[kIcmpType] = uint64_t(t), v.have[kIcmpType] = true, true;
      if (!uint_max(255)) return false;
      v.u[kIcmpType] = v.u[f], v.have[kIcmpType] = true;
      return true;
    }
    case kIcmpCode:
    case kIcmpCodeName: {
      for (size_t i = 0; i < std::size(kUnreachCodes); ++i)
        if (s == kUnreachCodes[i]) return v.u[kIcmpCode] = i, v.have[kIcmpCode] = true, true;
      if (!uint_max(255)) return false;
      v.u[kIcmpCode] = v.u[f], v.have[kIcmpCode] = true;
      return true;
    }
    case kPayloadLen: return uint_max(65535);
    case kPayload: {
      DataString d;
      if (!parse_data(s, d)) return bad();
      v.payload = d.bytes;
      return true;
    }
    default:  // written only (payload_md5, eth_*, ...): ignored on input, as Click does
      return true;
  }
}

}  // namespace

namespace {

// The packet of parsed values (`used` of the fields given).
bool build_values(Packet* p, Values& v, size_t used, bool no_fields, int default_proto, bool checksum,
                  std::string& err) {
  if (!used) return err = no_fields ? "no '!data' line" : "no usable field", false;
  auto has = [&](int f) { return v.have[f]; };
  // The protocol: given, or the '!proto' line's, or what the fields imply,
  // else TCP (Click's default).
  int proto = has(kIpProto) ? int(v.u[kIpProto]) : default_proto;
  if (proto < 0) {
    proto = 6;
    for (int f : {kIcmpType, kIcmpCode, kIcmpFlowid, kIcmpSeq, kIcmpNextmtu})
      if (has(f)) proto = 1;
    if (has(kUdpLen)) proto = 17;
  }
  uint16_t fragoff = has(kIpFragoff) ? uint16_t(v.u[kIpFragoff]) : 0;
  bool first = (fragoff & 0x1fff) == 0;
  uint32_t ihl = 20;
  if (has(kIpHl)) ihl = uint32_t((v.u[kIpHl] + 3) & ~3ull);
  if (!v.ip_opt.empty()) ihl = std::max<uint32_t>(ihl, uint32_t((20 + v.ip_opt.size() + 3) & ~size_t(3)));
  uint32_t l4 = 0;
  if (first) {
    if (proto == 6) {
      l4 = 20;
      if (!v.tcp_opt.empty()) l4 = std::max<uint32_t>(l4, uint32_t((20 + v.tcp_opt.size() + 3) & ~size_t(3)));
      if (has(kTcpOff)) l4 = std::max<uint32_t>(l4, uint32_t((v.u[kTcpOff] + 3) & ~3ull));
    } else if (proto == 17 || proto == 136 || proto == 1) {
      l4 = 8;
    } else if (proto == 33) {
      l4 = 12;
    } else if (has(kSport) || has(kDport)) {
      l4 = 4;
    }
  }
  uint32_t hdr = ihl + l4;
  uint32_t plen = uint32_t(v.payload.size());
  uint32_t iplen;
  if (has(kIpLen))
    iplen = uint32_t(v.u[kIpLen]);
  else if (has(kPayloadLen))
    iplen = hdr + uint32_t(v.u[kPayloadLen]);
  else if (has(kWireLen))
    iplen = uint32_t(v.u[kWireLen]);
  else
    iplen = hdr + plen;
  iplen = std::min<uint32_t>(iplen, 65535);
  // As Click makes it: cut to the IP length (headers too) when that is
  // shorter than what the fields built; longer only with CHECKSUM (padded
  // to checksum it), else the IP header says how long it was on the wire.
  const uint32_t built = hdr + plen;
  const uint32_t len = iplen < built ? std::max(iplen, ihl) : checksum ? iplen : built;
  const uint32_t whole = std::max(len, built);
  if (whole > 65535) return err = "packet too large", false;
  if (!p->set_length(whole)) return err = "packet too large for a buffer", false;
  uint8_t* ip = p->data();
  std::memset(ip, 0, whole);
  ip[0] = uint8_t(0x40 | (ihl / 4));
  ip[1] = uint8_t(has(kIpTos) ? v.u[kIpTos] : 0);
  if (has(kIpDscp)) ip[1] = uint8_t((ip[1] & 3) | (v.u[kIpDscp] << 2));
  if (has(kIpEcn)) ip[1] = uint8_t((ip[1] & 0xfc) | v.u[kIpEcn]);
  k::store_be16(ip + 2, uint16_t(iplen));
  k::store_be16(ip + 4, uint16_t(has(kIpId) ? v.u[kIpId] : 0));
  k::store_be16(ip + 6, fragoff);
  ip[8] = uint8_t(has(kIpTtl) ? v.u[kIpTtl] : 100);
  ip[9] = uint8_t(proto);
  k::store_be32(ip + 12, uint32_t(v.u[kIpSrc]));
  k::store_be32(ip + 16, uint32_t(v.u[kIpDst]));
  std::copy(v.ip_opt.begin(), v.ip_opt.end(), ip + 20);  // (the rest of the header is EOL: zeros)
  uint8_t* t = ip + ihl;
  if (l4 >= 4 && (has_ports(uint8_t(proto)) || proto == 0)) {
    k::store_be16(t, uint16_t(v.u[kSport]));
    k::store_be16(t + 2, uint16_t(v.u[kDport]));
  }
  if (proto == 6 && l4 >= 20) {
    k::store_be32(t + 4, uint32_t(v.u[kTcpSeq]));
    k::store_be32(t + 8, uint32_t(v.u[kTcpAck]));
    t[12] = uint8_t((l4 / 4) << 4 | ((v.u[kTcpFlags] >> 8) & 1));
    t[13] = uint8_t(v.u[kTcpFlags]);
    k::store_be16(t + 14, uint16_t(v.u[kTcpWindow]));
    k::store_be16(t + 18, uint16_t(v.u[kTcpUrp]));
    std::copy(v.tcp_opt.begin(), v.tcp_opt.end(), t + 20);
  } else if ((proto == 17 || proto == 136) && l4 >= 8) {
    k::store_be16(t + 4, uint16_t(has(kUdpLen) ? v.u[kUdpLen] : iplen - ihl));
  } else if (proto == 1 && l4 >= 8) {
    t[0] = uint8_t(v.u[kIcmpType]);
    t[1] = uint8_t(v.u[kIcmpCode]);
    k::store_be16(t + 4, uint16_t(v.u[kIcmpFlowid]));
    k::store_be16(t + 6, uint16_t(has(kIcmpNextmtu) ? v.u[kIcmpNextmtu] : v.u[kIcmpSeq]));
  }
  std::copy(v.payload.begin(), v.payload.end(), ip + hdr);
  if (checksum) {
    k::store_be16(ip + 10, k::ip_checksum(ip, ihl));
    uint32_t l4len = whole - ihl;
    if (first && proto == 6 && l4 >= 20) {
      uint32_t s = k::ipv4_pseudo_sum(ip + 12, ip + 16, 6, l4len);
      k::store_be16(t + 16, k::csum_fold(k::csum_partial(t, l4len, s)));
    } else if (first && proto == 17 && l4 >= 8) {
      uint32_t s = k::ipv4_pseudo_sum(ip + 12, ip + 16, 17, l4len);
      uint16_t c = k::csum_fold(k::csum_partial(t, l4len, s));
      k::store_be16(t + 6, c ? c : 0xffff);
    } else if (first && proto == 1 && l4 >= 8) {
      k::store_be16(t + 2, k::ip_checksum(t, l4len));
    }
  } else if (has(kIpSum)) {
    k::store_be16(ip + 10, uint16_t(v.u[kIpSum]));
  }
  if (len < whole) p->set_length(len);
  p->set_network_header(0);
  p->set_transport_header(ihl);
  uint64_t ts = v.u[kTimestamp];
  if (has(kTsSec)) ts = v.u[kTsSec] * 1000000000ull + ts % 1000000000ull;
  if (has(kTsUsec)) ts = ts / 1000000000ull * 1000000000ull + v.u[kTsUsec] * 1000;
  if (has(kTsUsec1)) ts = v.u[kTsUsec1] * 1000;
  p->set_timestamp_ns(ts);
  p->anno().paint = uint8_t(has(kDirection) ? v.u[kDirection] : v.u[kLink]);
  p->anno().aggregate = uint32_t(v.u[kAggregate]);
  std::memcpy(p->anno().dst_ip, ip + 16, 4);
  return true;
}

}  // namespace

bool build_packet(Packet* p, const std::vector<int>& fields, const std::vector<std::string>& values, int default_proto,
                  bool checksum, std::string& err) {
  Values v;
  size_t used = 0;
  for (size_t i = 0; i < fields.size() && i < values.size(); ++i) {
    if (values[i] == "-" || fields[i] < 0) continue;
    if (!parse_value(fields[i], values[i], v, err)) return false;
    v.have[fields[i]] = true;
    ++used;
  }
  return build_values(p, v, used, fields.empty(), default_proto, checksum, err);
}

// ---- Click's binary records

int binary_size(int f) {
  switch (f) {
    case kTimestamp:
    case kNTimestamp:
    case kTsUsec1: return 8;
    case kTsSec:
    case kTsUsec:
    case kCount:
    case kAggregate:
    case kWireLen:
    case kIpSrc:
    case kIpDst:
    case kIpLen:
    case kIpCaptureLen:
    case kTcpSeq:
    case kTcpAck:
    case kUdpLen:
    case kPayloadLen: return 4;
    case kLink:
    case kDirection:
    case kIpTos:
    case kIpDscp:
    case kIpEcn:
    case kIpTtl:
    case kIpFrag:
    case kIpProto:
    case kIpHl:
    case kTcpOff:
    case kTcpFlags:
    case kIcmpType:
    case kIcmpCode: return 1;
    case kIpFragoff:
    case kIpId:
    case kIpSum:
    case kSport:
    case kDport:
    case kTcpWindow:
    case kTcpUrp:
    case kIcmpFlowid:
    case kIcmpSeq:
    case kIcmpNextmtu:
    case kEthType: return 2;
    case kEthSrc:
    case kEthDst: return 6;
    case kPayloadMd5:
    case kPayloadMd5Hex: return 16;
    case kIpOpt:
    case kTcpOpt: return 0;
    default: return -1;  // payload and the ICMP names: text only, as in Click
  }
}

namespace {

void put_be(std::string& out, uint64_t v, int bytes) {
  for (int b = bytes - 1; b >= 0; --b) out += char(v >> (8 * b));
}
uint64_t get_be(const uint8_t* s, int bytes) {
  uint64_t v = 0;
  for (int b = 0; b < bytes; ++b) v = v << 8 | s[b];
  return v;
}
// Hex digits ("0a1b..." or "aa-bb-..."), separators skipped, -> bytes.
void put_hex(std::string& out, std::string_view t, size_t bytes) {
  std::string b;
  for (size_t i = 0; i + 1 < t.size() && b.size() < bytes;) {
    if (!std::isxdigit(static_cast<unsigned char>(t[i]))) {
      ++i;
      continue;
    }
    b += char(std::stoi(std::string(t.substr(i, 2)), nullptr, 16));
    i += 2;
  }
  b.resize(bytes, '\0');
  out += b;
}

// Field f of p in binary: its text form read back as a value (the same
// extraction and the same numbers), or the option bytes.
void put_binary_field(std::string& out, int f, const Packet* p) {
  const int size = binary_size(f);
  if (f == kIpOpt || f == kTcpOpt) {
    View v = view(p);
    const uint8_t* o = nullptr;
    size_t n = 0;
    if (f == kIpOpt && v.ip && v.nl >= v.ihl) {
      o = v.ip + 20, n = v.ihl - 20;
    } else if (f == kTcpOpt && v.ip && v.proto == 6 && v.l4 && v.tl >= 13) {
      const uint32_t off = (v.l4[12] >> 4) * 4u;
      if (off > 20 && v.tl >= int64_t(off)) o = v.l4 + 20, n = off - 20;
    }
    out += char(n);
    out.append(reinterpret_cast<const char*>(o ? o : v.d), n);
    return;
  }
  std::string text;
  write_field(text, f, p);
  if (text == "-") {
    out.append(size_t(size), '\0');
    return;
  }
  switch (f) {
    case kIpFrag: out += text[0]; return;
    case kEthSrc:
    case kEthDst:
    case kEthType: return put_hex(out, f == kEthType ? std::string_view(text).substr(2) : text, size_t(size));
    case kPayloadMd5:
    case kPayloadMd5Hex:
      text.clear();
      write_field(text, kPayloadMd5Hex, p);
      return put_hex(out, text, 16);
    default: break;
  }
  Values v;
  std::string err;
  if (!parse_value(f, text, v, err)) {
    out.append(size_t(size), '\0');
    return;
  }
  switch (f) {
    case kTimestamp:
    case kNTimestamp: {
      const uint64_t ns = v.u[kTimestamp];
      put_be(out, ns / 1000000000, 4);
      return put_be(out, f == kTimestamp ? ns % 1000000000 / 1000 : ns % 1000000000, 4);
    }
    case kIcmpType:
    case kIcmpCode: return put_be(out, v.u[f], 1);
    default: return put_be(out, v.u[f], size);
  }
}

}  // namespace

void write_binary(std::string& out, const std::vector<int>& fields, const Packet* p) {
  const size_t at = out.size();
  out.append(4, '\0');
  for (int f : fields) put_binary_field(out, f, p);
  k::store_be32(reinterpret_cast<uint8_t*>(&out[at]), uint32_t(out.size() - at));
}

void write_binary_note(std::string& out, std::string_view line) {
  put_be(out, uint64_t(line.size() + 4) | 0x80000000u, 4);
  out += line;
}

bool build_packet_binary(Packet* p, const std::vector<int>& fields, const uint8_t* rec, size_t n, int default_proto,
                         bool checksum, std::string& err) {
  Values v;
  size_t used = 0;
  const uint8_t* s = rec;
  const uint8_t* end = rec + n;
  for (int f : fields) {
    const int size = f < 0 ? -1 : binary_size(f);
    if (size < 0) return err = fmt::format("field '{}' has no binary form", f < 0 ? "?" : kNames[f]), false;
    auto truncated = [&] { return err = fmt::format("record ends within {}", kNames[f]), false; };
    if (size == 0) {  // options: a length byte, the bytes
      if (s >= end || size_t(end - s) < 1u + s[0]) return truncated();
      if (s[0] > 40) return err = fmt::format("{} of {} bytes (at most 40)", kNames[f], s[0]), false;
      (f == kIpOpt ? v.ip_opt : v.tcp_opt).assign(reinterpret_cast<const char*>(s + 1), s[0]);
      v.have[f] = true, ++used;
      s += 1 + s[0];
      continue;
    }
    if (end - s < size) return truncated();
    const uint64_t x = get_be(s, size);
    s += size;
    // the value as text, read as a line's would be (the same checks)
    std::string text;
    switch (f) {
      case kTimestamp: text = fmt::format("{}.{:06d}", x >> 32, x & 0xffffffffu); break;
      case kNTimestamp: text = fmt::format("{}.{:09d}", x >> 32, x & 0xffffffffu); break;
      case kIpSrc:
      case kIpDst: text = fmt::format("{}.{}.{}.{}", x >> 24, (x >> 16) & 255, (x >> 8) & 255, x & 255); break;
      case kIpFrag: text = std::string(1, char(x)); break;
      case kIpFragoff:
        text = fmt::format("{}{}{}", (x & 0x1fff) * 8, (x & 0x2000) ? "+" : "", (x & 0x4000) ? "!" : "");
        break;
      case kEthSrc:
      case kEthDst:
      case kEthType:
      case kPayloadMd5:
      case kPayloadMd5Hex: continue;  // written only, as in text
      default: text = fmt::format("{}", x); break;
    }
    if (!parse_value(f, text, v, err)) return false;
    v.have[f] = true, ++used;
  }
  return build_values(p, v, used, fields.empty(), default_proto, checksum, err);
}

}  // namespace shoal::ipsum
