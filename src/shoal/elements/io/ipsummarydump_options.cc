// Click's text for IPv4 options in IP summary dumps (the ip_opt field):
// 'rr{10.0.0.1,20.0.0.2}+5' (record route: the addresses before the
// pointer, then room for 5 more), 'ssrr{1.0.0.1^1.0.0.2}' and 'lsrr{...}'
// (source routes, '^' at the pointer), 'ts{1,!45}+2++3' (timestamps only:
// '!' is the nonstandard bit, room for 2 more, overflow 3), 'ts.ip{A=1}'
// and 'ts.preip{A=1^B,C}' (with addresses, prespecified addresses),
// 'ts.N{...}' for another flag, '98' and '99=0:5:10' for other options,
// 'nop' and 'eol'; options separated by ';' (or ','), '.' for none, '?'
// for options that do not parse.
#include <fmt/format.h>

#include <cctype>

#include "shoal/elements/io/ipsummarydump.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal::ipsum {

namespace {

constexpr uint8_t kEol = 0, kNop = 1, kRr = 7, kTs = 68, kLsrr = 131, kSsrr = 137;

void put_quad(std::string& s, const uint8_t* a) { s += fmt::format("{}.{}.{}.{}", a[0], a[1], a[2], a[3]); }

// A route option at o (length checked): the addresses, '^' at the pointer
// (for RR, what follows the pointer is room: '+N').
void route_text(std::string& s, const uint8_t* o) {
  const bool rr = o[0] == kRr;
  const uint8_t *q = o + 3, *end = o + o[1], *ptr = o + o[2] - 1;
  s += rr ? "rr{" : o[0] == kSsrr ? "ssrr{" : "lsrr{";
  const char* sep = "";
  for (; q + 4 <= end; q += 4) {
    if (q == ptr) {
      if (rr) break;
      sep = "^";
    }
    s += sep;
    put_quad(s, q);
    sep = ",";
  }
  if (!rr && q == end && q == ptr) s += '^';
  s += '}';
  if (rr && q + 4 <= end && q == ptr) s += fmt::format("+{}", (end - q) / 4);
}

// A timestamp option at o (length checked). Entries with an address take 8
// bytes; past the pointer, prespecified addresses (flag 3) have no value.
void ts_text(std::string& s, const uint8_t* o) {
  const int flag = o[3] & 0xf;
  const uint32_t size = flag != 0 ? 8 : 4;  // (flags other than 0, 1 and 3 are read with addresses, as 1 is)
  const uint8_t *q = o + 4, *end = o + o[1], *ptr = o + o[2] - 1;
  s += flag == 0 ? "ts{" : flag == 1 ? "ts.ip{" : flag == 3 ? "ts.preip{" : fmt::format("ts.{}{{", flag);
  const char* sep = "";
  for (; q + size <= end; q += size) {
    if (q == ptr) {
      if (flag != 3) break;
      sep = "^";
    }
    s += sep;
    sep = ",";
    const uint8_t* val = q;
    if (flag != 0) {
      put_quad(s, q);
      val = q + 4;
      if (flag == 3 && q + 4 > ptr) continue;  // not reached yet: no timestamp
      s += '=';
    }
    uint32_t v = k::load_be32(val);
    s += fmt::format("{}{}", (v & 0x80000000u) ? "!" : "", v & 0x7fffffffu);
  }
  if (q == end && q == ptr) s += '^';
  s += '}';
  if (q + size <= end && q == ptr) s += fmt::format("+{}", (end - q) / size);
  if (o[3] >> 4) s += fmt::format("++{}", o[3] >> 4);
}

// Reading: a cursor over the text.
struct Cur {
  std::string_view t;
  size_t i = 0;
  bool at_end() const { return i >= t.size(); }
  char peek(size_t k = 0) const { return i + k < t.size() ? t[i + k] : '\0'; }
  bool digit(size_t k = 0) const { return std::isdigit(static_cast<unsigned char>(peek(k))) != 0; }
  bool take(std::string_view w) {
    if (t.substr(i, w.size()) != w) return false;
    i += w.size();
    return true;
  }
  // A decimal number (or 0x hex), at most `max`.
  bool number(uint64_t& v, uint64_t max) {
    size_t b = i;
    int base = 10;
    if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'X') && std::isxdigit(static_cast<unsigned char>(peek(2))))
      base = 16, i += 2, b = i;
    v = 0;
    while (!at_end() && std::isxdigit(static_cast<unsigned char>(t[i])) && (base == 16 || digit())) {
      char c = char(std::tolower(static_cast<unsigned char>(t[i])));
      v = v * uint64_t(base) + uint64_t(c <= '9' ? c - '0' : c - 'a' + 10);
      if (v > max) return false;
      ++i;
    }
    return i > b;
  }
  bool quad(std::string& out) {
    for (int k = 0; k < 4; ++k) {
      uint64_t v;
      if (!number(v, 255) || (k < 3 && !take("."))) return false;
      out += char(v);
    }
    return true;
  }
};

void put_be32(std::string& out, uint32_t v) {
  for (int sh = 24; sh >= 0; sh -= 8) out += char(v >> sh);
}

// 'rr{...}', 'ssrr{...}', 'lsrr{...}' after the brace.
bool parse_route(Cur& c, uint8_t type, std::string& out) {
  const size_t start = out.size();
  out += char(type);
  out += std::string(2, '\0');
  int64_t pointer = -1;
  for (;;) {
    if (c.peek() == '^' && pointer < 0) pointer = int64_t(out.size() - start) + 1, ++c.i;
    if (!c.digit()) break;
    if (!c.quad(out)) return false;
    c.take(",");
  }
  if (!c.take("}")) return false;
  out[start + 2] = char(pointer >= 0 ? pointer : int64_t(out.size() - start) + 1);
  if (c.peek() == '+' && c.digit(1)) {  // room for N more addresses
    ++c.i;
    uint64_t n;
    if (!c.number(n, UINT32_MAX)) return false;
    if (n < 64) out += std::string(n * 4, '\0');
  }
  if (out.size() - start > 255) return false;
  out[start + 1] = char(out.size() - start);
  return true;
}

// 'ts{', 'ts.ip{', 'ts.preip{', 'ts.N{' consumed: the entries, then '+N'
// (room) and '++N' (overflow). Without a flag, entries with addresses make it 1.
bool parse_ts(Cur& c, int flag, std::string& out) {
  const size_t start = out.size();
  out += char(kTs);
  out += std::string(3, '\0');
  int64_t pointer = -1;
  bool addresses = flag > 0;  // (flags other than 1 and 3: entries with addresses, as they are written)
  const bool inferred = flag < 0;
  for (;;) {
    if (c.peek() == '^' && pointer < 0) pointer = int64_t(out.size() - start) + 1, ++c.i;
    if (!c.digit() && c.peek() != '!') break;
    if (flag < 0) {  // the first entry says: an address has a dot after its first number
      size_t j = c.i;
      while (j < c.t.size() && std::isdigit(static_cast<unsigned char>(c.t[j]))) ++j;
      addresses = j < c.t.size() && c.t[j] == '.';
      flag = addresses ? 1 : 0;
    }
    if (inferred && addresses && pointer >= 0) flag = 3;  // addresses with a pointer among them: prespecified
    bool value = true;
    if (addresses) {
      if (!c.quad(out)) return false;
      if (c.peek() == '=' && (c.digit(1) || c.peek(1) == '!')) {
        ++c.i;
      } else if (pointer >= 0 && c.peek() == '=' && c.peek(1) == '?') {
        c.i += 2, value = false;
      } else if (pointer >= 0 && c.peek() != '=') {
        value = false;  // a prespecified address not reached yet
      } else {
        return false;
      }
    }
    if (value) {
      uint32_t top = c.take("!") ? 0x80000000u : 0;
      uint64_t v;
      if (!c.digit() || !c.number(v, UINT32_MAX)) return false;
      put_be32(out, uint32_t(v) | top);
    } else {
      put_be32(out, 0);
    }
    c.take(",");
  }
  if (!c.at_end() && !c.take("}")) return false;
  if (flag < 0) flag = 0;
  out[start + 2] = char(pointer >= 0 ? pointer : int64_t(out.size() - start) + 1);
  uint64_t n;
  if (c.peek() == '+' && c.digit(1)) {
    ++c.i;
    if (!c.number(n, UINT32_MAX)) return false;
    if (n < 64) out += std::string(n * (flag != 0 ? 8 : 4), '\0');
  }
  uint64_t overflow = 0;
  if (c.peek() == '+' && c.peek(1) == '+' && c.digit(2)) {
    c.i += 2;
    if (!c.number(n, UINT32_MAX)) return false;
    if (n < 16) overflow = n;
  }
  out[start + 3] = char(overflow << 4 | uint64_t(flag));
  if (out.size() - start > 255) return false;
  out[start + 1] = char(out.size() - start);
  return true;
}

}  // namespace

void write_ip_options(std::string& s, const uint8_t* o, size_t n, bool padding) {
  const size_t start = s.size();
  const uint8_t* end = o + n;
  const char* sep = "";
  auto bad = [&] {
    s.resize(start);
    s += '?';
  };
  while (o < end) {
    const uint8_t type = o[0];
    if (type == kEol) {
      if (padding) s += sep, s += "eol";
      break;
    }
    if (type == kNop) {
      if (padding) s += sep, s += "nop", sep = ";";
      ++o;
      continue;
    }
    if (o + 1 >= end || o[1] < 2 || o + o[1] > end) return bad();
    s += sep;
    sep = ";";
    if (type == kRr || type == kLsrr || type == kSsrr) {
      if (o[1] < 3 || o[2] < 4) return bad();
      route_text(s, o);
    } else if (type == kTs) {
      if (o[1] < 4 || o[2] < 5) return bad();
      ts_text(s, o);
    } else {
      s += fmt::format("{}", type);
      char c = '=';
      for (int i = 2; i < o[1]; ++i, c = ':') s += fmt::format("{}{}", c, o[i]);
    }
    o += o[1];
  }
  if (s.size() == start) s += '.';
}

bool parse_ip_options(std::string_view t, std::string& out) {
  out.clear();
  if (t.empty() || t == ".") return true;
  Cur c{t};
  for (;;) {
    if (c.take("rr{")) {
      if (!parse_route(c, kRr, out)) return false;
    } else if (c.take("ssrr{")) {
      if (!parse_route(c, kSsrr, out)) return false;
    } else if (c.take("lsrr{")) {
      if (!parse_route(c, kLsrr, out)) return false;
    } else if (c.take("ts{")) {
      if (!parse_ts(c, -1, out)) return false;
    } else if (c.take("ts.ip{")) {
      if (!parse_ts(c, 1, out)) return false;
    } else if (c.take("ts.preip{")) {
      if (!parse_ts(c, 3, out)) return false;
    } else if (c.take("ts.")) {
      uint64_t flag;
      if (!c.number(flag, 15) || !c.take("{") || !parse_ts(c, int(flag), out)) return false;
    } else if (c.digit()) {  // another option: its number, then '=' and its data bytes
      uint64_t type;
      if (!c.number(type, 255)) return false;
      out += char(type);
      if (c.peek() == '=' && c.digit(1)) {
        const size_t len_at = out.size();
        out += '\0';
        do {
          ++c.i;
          uint64_t b;
          if (!c.number(b, 255)) return false;
          out += char(b);
        } while (c.peek() == ':' && c.digit(1));
        if (out.size() - len_at + 1 > 255) return false;
        out[len_at] = char(out.size() - len_at + 1);
      }
    } else if (c.take("nop")) {
      out += char(kNop);
    } else if (c.peek(3) != ',' && c.take("eol")) {
      out += char(kEol);
    } else {
      return false;
    }
    if (c.at_end()) break;
    if (c.peek() != ',' && c.peek() != ';') return false;
    ++c.i;
  }
  // Leading NOPs past the 40 bytes an IPv4 header holds go (padding).
  size_t skip = 0;
  while (out.size() - skip > 40 && out[skip] == char(kNop)) ++skip;
  out.erase(0, skip);
  return out.size() <= 40;
}

}  // namespace shoal::ipsum
