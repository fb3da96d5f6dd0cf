#include "shoal/core/args.hh"

#include "shoal/core/names.hh"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace shoal {

std::string_view trim(std::string_view s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

bool parse_bool(std::string_view s, bool& out) {
  if (s == "true" || s == "1" || s == "yes" || s == "t" || s == "y" || s == "on") return out = true, true;
  if (s == "false" || s == "0" || s == "no" || s == "f" || s == "n" || s == "off") return out = false, true;
  return false;
}

bool parse_uint(std::string_view s, uint64_t& out) {
  if (s.empty()) return false;
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, s.remove_prefix(2);
  auto r = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_int(std::string_view s, int64_t& out) {
  bool neg = !s.empty() && s[0] == '-';
  if (neg || (!s.empty() && s[0] == '+')) s.remove_prefix(1);
  uint64_t u;
  if (!parse_uint(s, u)) return false;
  if (neg ? u > uint64_t(INT64_MAX) + 1 : u > uint64_t(INT64_MAX)) return false;
  out = neg ? int64_t(0 - u) : int64_t(u);
  return true;
}

bool parse_double(std::string_view s, double& out) {
  if (s.empty()) return false;
  std::string tmp(s);
  char* end = nullptr;
  out = std::strtod(tmp.c_str(), &end);
  return end == tmp.c_str() + tmp.size() && std::isfinite(out);
}

namespace {
// Splits "12.5ms" into 12.5 and "ms".
bool number_unit(std::string_view s, double& v, std::string_view& unit) {
  size_t i = 0;
  while (i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.' || s[i] == '-' || s[i] == '+' ||
                          ((s[i] == 'e' || s[i] == 'E') && i > 0 && i + 1 < s.size() &&
                           (std::isdigit(static_cast<unsigned char>(s[i + 1])) || s[i + 1] == '-'))))
    ++i;
  if (!parse_double(s.substr(0, i), v)) return false;
  unit = trim(s.substr(i));
  return true;
}
}  // namespace

bool parse_duration(std::string_view s, Duration& out) {
  double v;
  std::string_view u;
  if (!number_unit(s, v, u) || v < 0) return false;
  double mult;
  if (u.empty() || u == "s" || u == "sec" || u == "secs")
    mult = 1e9;
  else if (u == "ms" || u == "msec")
    mult = 1e6;
  else if (u == "us" || u == "usec")
    mult = 1e3;
  else if (u == "ns" || u == "nsec")
    mult = 1;
  else if (u == "m" || u == "min")
    mult = 60e9;
  else if (u == "h" || u == "hr")
    mult = 3600e9;
  else
    return false;
  if (!(v * mult < 9.2e18)) return false;  // past 292 years: no duration a uint64_t of ns holds
  out.ns = uint64_t(std::llround(v * mult));
  return true;
}

bool parse_bandwidth(std::string_view s, Bandwidth& out) {
  double v;
  std::string_view u;
  if (!number_unit(s, v, u) || v < 0) return false;
  double mult = 1;
  if (!u.empty()) {
    char p = u[0];
    size_t k = 1;
    if (p == 'k' || p == 'K')
      mult = 1e3;
    else if (p == 'M')
      mult = 1e6;
    else if (p == 'G')
      mult = 1e9;
    else
      k = 0;
    std::string_view rest = u.substr(k);
    if (rest == "bps" || rest == "b" || rest == "b/s" || rest == "baud")
      mult /= 8;
    else if (rest == "Bps" || rest == "B" || rest == "B/s") { /* bytes */
    } else if (!rest.empty())
      return false;
  }
  out.bytes_per_sec = v * mult;
  return true;
}

namespace {
// A name AddressInfo defined, seen from the element being configured:
// NAME, NAME:ip, NAME:ipnet, NAME:bcast, NAME:eth, NAME:ip6.
const NamedAddress* named(std::string_view s, std::string_view& suffix) {
  const NameScope* ns = current_names();
  if (!ns || !ns->db || s.empty()) return nullptr;
  size_t colon = s.find(':');
  std::string_view name = s.substr(0, colon);
  suffix = colon == std::string_view::npos ? std::string_view() : s.substr(colon + 1);
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return nullptr;
  return ns->db->address(ns->scope, name);
}
uint32_t prefix_mask(int n) { return n <= 0 ? 0 : n >= 32 ? 0xffffffffu : ~uint32_t(0) << (32 - n); }
bool named_ipv4(std::string_view s, uint32_t& addr, int& prefix) {
  std::string_view suf;
  const NamedAddress* a = named(s, suf);
  if (!a || !a->has_ip) return false;
  int pl = a->prefix < 0 ? 32 : a->prefix;
  if (suf.empty() || suf == "ip") return addr = a->ip, prefix = a->prefix, true;
  if (suf == "ipnet" || suf == "net") return addr = a->ip & prefix_mask(pl), prefix = pl, true;
  if (suf == "bcast") return addr = (a->ip & prefix_mask(pl)) | ~prefix_mask(pl), prefix = -1, true;
  return false;
}
}  // namespace

bool parse_ipv4(std::string_view s, IPv4Addr& out) {
  std::string tmp(s);
  in_addr a;
  if (inet_pton(AF_INET, tmp.c_str(), &a) != 1) {
    uint32_t addr;
    int prefix;
    if (!named_ipv4(s, addr, prefix)) return false;
    for (int i = 0; i < 4; ++i) out.b[size_t(i)] = uint8_t(addr >> (24 - 8 * i));
    return true;
  }
  std::memcpy(out.b.data(), &a, 4);
  return true;
}

bool parse_port(std::string_view s, int proto, uint16_t& out) {
  uint64_t n;
  if (parse_uint(s, n)) return n <= 65535 && (out = uint16_t(n), true);
  std::string_view name = s.substr(0, s.find('/'));
  if (const NameScope* ns = current_names(); ns && ns->db && ns->db->port(ns->scope, name, proto, out)) return true;
  return builtin_port(name, out);
}

bool parse_ipv6(std::string_view s, IPv6Addr& out) {
  std::string tmp(s);
  in6_addr a;
  if (inet_pton(AF_INET6, tmp.c_str(), &a) != 1) {
    std::string_view suf;
    const NamedAddress* na = named(s, suf);
    if (!na || !na->has_ip6 || !(suf.empty() || suf == "ip6")) return false;
    std::copy(na->ip6.begin(), na->ip6.end(), out.b.begin());
    return true;
  }
  std::memcpy(out.b.data(), &a, 16);
  return true;
}

// Click's EtherAddressArg: six groups of one or two hex digits, separated
// by ':' or '-' (the same one throughout): 00:1b:21:0a:0b:0c, 2:1:1:1:1:1.
bool parse_ip_proto(std::string_view s, uint8_t& out) {
  static constexpr std::pair<std::string_view, uint8_t> kNames[] = {
      {"icmp", 1}, {"igmp", 2}, {"ipip", 4}, {"ipv4", 4},   {"tcp", 6},        {"udp", 17},  {"ipv6", 41},
      {"gre", 47}, {"esp", 50}, {"ah", 51},  {"icmp6", 58}, {"ipv6-icmp", 58}, {"sctp", 132}};
  for (const auto& [n, v] : kNames)
    if (s == n) return out = v, true;
  uint64_t v;
  if (!parse_uint(s, v) || v > 255) return false;
  out = uint8_t(v);
  return true;
}

bool parse_ether(std::string_view s, EtherAddr& out) {
  if (std::string_view suf; const NamedAddress* na = named(s, suf)) {
    if (!na->has_eth || !(suf.empty() || suf == "eth")) return false;
    std::copy(na->eth.begin(), na->eth.end(), out.b.begin());
    return true;
  }
  uint8_t data[6] = {};
  int d = 0, p = 0;
  char sep = 0;
  for (char c : s) {
    int digit;
    if (c >= '0' && c <= '9')
      digit = c - '0';
    else if (c >= 'a' && c <= 'f')
      digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
      digit = c - 'A' + 10;
    else {
      if (!sep && (c == '-' || c == ':')) sep = c;
      if (c != sep || p == 0 || d >= 5) return false;
      p = 0;
      ++d;
      continue;
    }
    if (p == 2) return false;
    data[d] = uint8_t((p ? data[d] << 4 : 0) + digit);
    ++p;
  }
  if (p == 0 || d != 5) return false;
  for (int i = 0; i < 6; ++i) out.b[size_t(i)] = data[i];
  return true;
}

std::string format_ipv4(const uint8_t* b) { return fmt::format("{}.{}.{}.{}", b[0], b[1], b[2], b[3]); }
std::string format_ipv6(const uint8_t* b) {
  char buf[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, b, buf, sizeof buf);
  return buf;
}
std::string format_ether(const uint8_t* b) {
  return fmt::format("{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", b[0], b[1], b[2], b[3], b[4], b[5]);
}

std::string format_ether_click(const uint8_t* b) {
  return fmt::format("{:02X}-{:02X}-{:02X}-{:02X}-{:02X}-{:02X}", b[0], b[1], b[2], b[3], b[4], b[5]);
}

namespace {
int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
// Reads "\<hex hex ...>" starting after "\<"; appends bytes. Returns index after '>'.
bool hex_block(std::string_view s, size_t& i, std::string& out) {
  int hi = -1;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c == '>') {
      ++i;
      return hi < 0;
    }
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    int v = hexval(c);
    if (v < 0) return false;
    if (hi < 0)
      hi = v;
    else
      out.push_back(char(hi * 16 + v)), hi = -1;
  }
  return false;
}
}  // namespace

bool parse_data(std::string_view s, DataString& out) {
  out.bytes.clear();
  size_t i = 0;
  while (i < s.size()) {
    char c = s[i];
    if (c == '\\' && i + 1 < s.size() && s[i + 1] == '<') {
      i += 2;
      if (!hex_block(s, i, out.bytes)) return false;
    } else if (c == '"') {
      ++i;
      while (i < s.size() && s[i] != '"') {
        if (s[i] == '\\' && i + 1 < s.size()) {
          char e = s[i + 1];
          if (e == '<') {
            i += 2;
            if (!hex_block(s, i, out.bytes)) return false;
            continue;
          }
          i += 2;
          switch (e) {
            case 'n': out.bytes.push_back('\n'); break;
            case 't': out.bytes.push_back('\t'); break;
            case 'r': out.bytes.push_back('\r'); break;
            case '0': out.bytes.push_back('\0'); break;
            case 'x': {
              if (i + 1 < s.size() && hexval(s[i]) >= 0 && hexval(s[i + 1]) >= 0) {
                out.bytes.push_back(char(hexval(s[i]) * 16 + hexval(s[i + 1])));
                i += 2;
              } else {
                return false;
              }
              break;
            }
            default: out.bytes.push_back(e);
          }
        } else {
          out.bytes.push_back(s[i++]);
        }
      }
      if (i >= s.size()) return false;
      ++i;
    } else if (c == '\'') {
      size_t e = s.find('\'', i + 1);
      if (e == std::string_view::npos) return false;
      out.bytes.append(s.substr(i + 1, e - i - 1));
      i = e + 1;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else {
      out.bytes.push_back(c);
      ++i;
    }
  }
  return true;
}

bool parse_string(std::string_view s, std::string& out) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'')) {
    DataString d;
    if (!parse_data(s, d)) return false;
    out = d.bytes;
    return true;
  }
  out = std::string(s);
  return true;
}

bool parse_timestamp(std::string_view s, uint64_t& ns) {
  size_t dot = s.find('.');
  uint64_t sec = 0, frac = 0;
  // ".5" is half a second, as Click reads it (not a lone ".")
  if (dot == 0 && s.size() > 1) {
  } else if (!parse_uint(s.substr(0, dot), sec) || sec > 18000000000ull) {
    return false;
  }
  if (dot != std::string_view::npos) {
    std::string_view f = s.substr(dot + 1);
    if (f.empty() || f.size() > 9) return false;
    for (char c : f)
      if (c < '0' || c > '9') return false;
    parse_uint(f, frac);
    for (size_t k = f.size(); k < 9; ++k) frac *= 10;
  }
  ns = sec * 1000000000ull + frac;
  return true;
}

bool looks_like_keyword(std::string_view s, std::string* kw, std::string* rest) {
  s = trim(s);
  size_t i = 0;
  if (s.empty() || !(std::isupper(static_cast<unsigned char>(s[0])))) return false;
  while (i < s.size() && (std::isupper(static_cast<unsigned char>(s[i])) ||
                          std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '_'))
    ++i;
  if (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) return false;
  if (kw) *kw = std::string(s.substr(0, i));
  if (rest) *rest = std::string(trim(s.substr(i)));
  return true;
}

bool check_input_path(const std::string& path, std::string& why) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return why = std::strerror(errno), false;
  struct stat st;
  bool dir = ::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
  ::close(fd);
  if (dir) return why = "is a directory", false;
  return true;
}

bool check_output_path(const std::string& path, std::string& why) {
  if (path == "-") return true;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return why = "is a directory", false;
    if (::access(path.c_str(), W_OK) != 0) return why = std::strerror(errno), false;
    return true;
  }
  if (errno != ENOENT) return why = std::strerror(errno), false;
  size_t slash = path.rfind('/');
  std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
  if (::stat(dir.c_str(), &st) != 0) return why = "folder '" + dir + "': " + std::strerror(errno), false;
  if (!S_ISDIR(st.st_mode)) return why = "'" + dir + "' is not a folder", false;
  if (::access(dir.c_str(), W_OK | X_OK) != 0) return why = "folder '" + dir + "': " + std::strerror(errno), false;
  return true;
}

std::vector<ArgItem> split_args(std::string_view cfg, Loc start, bool keywords) {
  std::vector<ArgItem> out;
  int depth = 0;
  size_t arg_start = 0;
  // Locations advance from the previous argument's, never from the start:
  // a configuration of a million routes splits in linear time.
  size_t at_pos = 0;
  Loc at = start;
  auto emit = [&](size_t end) {
    std::string_view raw = cfg.substr(arg_start, end - arg_start);
    // skip leading whitespace/comments for the location
    size_t lead = 0;
    while (lead < raw.size() && std::isspace(static_cast<unsigned char>(raw[lead]))) ++lead;
    std::string_view t = trim(raw);
    at = SourceManager::advance(at, cfg.substr(at_pos, arg_start + lead - at_pos));
    at_pos = arg_start + lead;
    Loc l = at;
    l.len = uint32_t(std::max<size_t>(1, std::min<size_t>(t.size(), t.find('\n'))));
    ArgItem a;
    a.text = std::string(t);
    a.loc = l;
    // "KEYWORD value" is a keyword argument; a lone capitalised word
    // (FromIPSummaryDump(IN)) is a positional value, as in Click.
    if (keywords && looks_like_keyword(t, &a.keyword, &a.value) && a.value.empty()) a.keyword.clear();
    if (!t.empty() || !out.empty() || end < cfg.size()) out.push_back(std::move(a));
  };
  for (size_t i = 0; i < cfg.size(); ++i) {
    char c = cfg[i];
    if (c == '"' || c == '\'') {
      char q = c;
      for (++i; i < cfg.size() && cfg[i] != q; ++i)
        if (cfg[i] == '\\' && q == '"') ++i;
    } else if (c == '\\' && i + 1 < cfg.size() && cfg[i + 1] == '<') {
      size_t e = cfg.find('>', i);
      if (e != std::string_view::npos) i = e;
    } else if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if ((c == ')' || c == ']' || c == '}') && depth > 0) {
      --depth;
    } else if (c == ',' && depth == 0) {
      emit(i);
      arg_start = i + 1;
    }
  }
  emit(cfg.size());
  // A configuration of only whitespace has no arguments.
  if (out.size() == 1 && out[0].text.empty()) out.clear();
  return out;
}

Args::Args(std::vector<ArgItem> items, Loc element_loc, std::string element_name)
    : items_(std::move(items)), loc_(element_loc), ename_(std::move(element_name)) {}

namespace {
thread_local Args::Probe* t_probe = nullptr;
}
Args::Probe::Probe() { t_probe = this; }
Args::Probe::~Probe() { t_probe = nullptr; }
bool Args::probing() { return t_probe != nullptr; }
void Args::note_keyword(const char* kw) {
  if (t_probe) t_probe->keywords.insert(kw);
}

std::vector<std::string_view> split_words(std::string_view s) {
  std::vector<std::string_view> w;
  for (size_t i = 0; i < s.size();) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t e = i;
    while (e < s.size() && !std::isspace(static_cast<unsigned char>(s[e]))) ++e;
    if (e > i) w.push_back(s.substr(i, e - i));
    i = e;
  }
  return w;
}

bool parse_ipv4_prefix(std::string_view s, uint32_t& addr, uint32_t& mask, bool bare) {
  if (int prefix; s.find('/') == std::string_view::npos && named_ipv4(s, addr, prefix)) {
    // A named address: its prefix when it has one and the name asks for the
    // network (NAME:ipnet), else the address alone.
    if (prefix < 0 || (s.find(':') == std::string_view::npos)) {
      mask = 0xffffffffu;
      return true;
    }
    mask = prefix_mask(prefix);
    return true;
  }
  size_t sl = s.find('/');
  IPv4Addr x;
  // Click's shortened network before a prefix ("18.26/16", "0/0").
  std::string net(s.substr(0, sl));
  if (sl != std::string_view::npos && !net.empty() && std::isdigit(static_cast<unsigned char>(net[0])))
    while (std::count(net.begin(), net.end(), '.') < 3) net += ".0";
  if (!parse_ipv4(net, x)) return false;
  addr = x.host();
  if (sl == std::string_view::npos) {
    mask = 0xffffffffu;
    return bare;
  }
  uint64_t n;
  IPv4Addr m;
  if (parse_uint(s.substr(sl + 1), n) && n <= 32) {
    mask = n ? ~uint32_t(0) << (32 - n) : 0;
    return true;
  }
  if (!parse_ipv4(s.substr(sl + 1), m)) return false;
  mask = m.host();
  return true;
}

bool parse_ipv4_list(std::string_view s, std::vector<uint32_t>& out, std::string& bad) {
  for (std::string_view w : split_words(s)) {
    IPv4Addr x;
    if (!parse_ipv4(w, x)) return bad = std::string(w), false;
    out.push_back(x.host());
  }
  return true;
}

bool parse_ipv6_list(std::string_view s, std::vector<IPv6Addr>& out, std::string& bad) {
  for (std::string_view w : split_words(s)) {
    IPv6Addr x;
    if (!parse_ipv6(w, x)) return bad = std::string(w), false;
    out.push_back(x);
  }
  return true;
}

bool Args::has(const char* kw) const {
  if (t_probe) t_probe->keywords.insert(kw);
  for (auto& a : items_)
    if (a.keyword == kw) return true;
  return false;
}

ArgItem* Args::find_kw(const char* kw) {
  if (t_probe) t_probe->keywords.insert(kw);
  ArgItem* found = nullptr;
  for (auto& a : items_)
    if (!a.used && a.keyword == kw) {
      if (found) fail(a, fmt::format("{} given more than once", kw));
      found = &a;
    }
  return found;
}

ArgItem* Args::next_positional() {
  for (auto& a : items_) {
    // Positionals come before keywords; keywords an element read first
    // (Click's consume()) are out of the way.
    if (!a.keyword.empty()) {
      if (a.used) continue;
      break;
    }
    if (!a.used) return &a;
  }
  return nullptr;
}

std::vector<ArgItem*> Args::rest_positional() {
  std::vector<ArgItem*> r;
  for (auto& a : items_)
    if (!a.used && a.keyword.empty()) {
      a.used = true;
      r.push_back(&a);
    }
  return r;
}

void Args::complete() {
  for (auto& a : items_) {
    if (a.used) continue;
    if (!a.keyword.empty()) fail(a, fmt::format("unknown keyword argument '{}'", a.keyword));
    if (a.text.empty()) fail(a, "empty argument");
    fail(a, "too many arguments");
  }
}

void Args::fail(const ArgItem& at, const std::string& msg) const {
  throw ConfigError(at.loc, ename_.empty() ? msg : ename_ + ": " + msg);
}
void Args::fail(const std::string& msg) const { throw ConfigError(loc_, ename_.empty() ? msg : ename_ + ": " + msg); }

}  // namespace shoal
