#include "shoal/ids/rules.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <sstream>

#include "shoal/core/args.hh"
#include "shoal/ids/decode_events.hh"
#include "shoal/ids/dns_names.hh"

#ifdef SHOAL_HAVE_PCRE2
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#endif

namespace shoal::ids {

namespace {

// Splits on top-level commas ([] nesting respected).
std::vector<std::string> split_list(std::string_view s) {
  std::vector<std::string> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || (s[i] == ',' && depth == 0)) {
      out.emplace_back(trim(s.substr(start, i - start)));
      start = i + 1;
    } else if (s[i] == '[') {
      ++depth;
    } else if (s[i] == ']') {
      --depth;
    }
  }
  return out;
}

bool parse_u32(std::string_view s, uint32_t& v) {
  s = trim(s);
  if (s.empty() || s.size() > 10) return false;
  uint64_t x = 0;
  for (char c : s) {
    if (!std::isdigit(uint8_t(c))) return false;
    x = x * 10 + uint64_t(c - '0');
  }
  if (x > UINT32_MAX) return false;
  v = uint32_t(x);
  return true;
}

bool parse_i32(std::string_view s, int32_t& v) {
  s = trim(s);
  bool neg = !s.empty() && s[0] == '-';
  if (neg) s.remove_prefix(1);
  uint32_t u;
  if (!parse_u32(s, u) || u > uint32_t(INT32_MAX)) return false;
  v = neg ? -int32_t(u) : int32_t(u);
  return true;
}

constexpr int kMaxVarDepth = 16;

// The term grammar addresses and ports share: !x, $VAR, any, [a, b, ...]
// (nested), or a leaf (an address/prefix, a port/range) that leaf() parses.
template <class Set, class Leaf>
bool parse_set(std::string_view s, const Vars& vars, Set& out, std::string& err, const char* what, Leaf&& leaf,
               int depth = 0) {
  s = trim(s);
  if (depth > kMaxVarDepth) return err = "variables nest too deep (a loop?)", false;
  if (s.empty()) return err = fmt::format("empty {}", what), false;
  if (s[0] == '!') {
    if (!parse_set(s.substr(1), vars, out, err, what, leaf, depth)) return false;
    out.neg = !out.neg;
    return true;
  }
  if (s[0] == '$') {
    const std::string* v = vars.get(std::string(s.substr(1)));
    if (!v) return err = fmt::format("undefined variable {}", s), false;
    return parse_set(*v, vars, out, err, what, leaf, depth + 1);
  }
  if (s == "any") return out.any = true, true;
  if (s[0] == '[') {
    if (s.back() != ']') return err = fmt::format("unterminated {} list '{}'", what, s), false;
    out.list = true;
    for (const std::string& part : split_list(s.substr(1, s.size() - 2))) {
      Set k;
      if (!parse_set(part, vars, k, err, what, leaf, depth)) return false;
      out.kids.push_back(std::move(k));
    }
    if (out.kids.empty()) return err = fmt::format("empty {} list", what), false;
    return true;
  }
  return leaf(s, out, err);
}

bool addr_leaf(std::string_view s, AddrSet& out, std::string& err) {
  std::string_view a = s, l;
  if (size_t slash = s.find('/'); slash != std::string_view::npos) a = s.substr(0, slash), l = s.substr(slash + 1);
  IPv4Addr v4;
  IPv6Addr v6;
  uint32_t len;
  if (parse_ipv4(a, v4)) {
    std::memcpy(out.net, v4.b.data(), 4);
    len = 32;
  } else if (parse_ipv6(a, v6)) {
    out.v6 = true;
    std::memcpy(out.net, v6.b.data(), 16);
    len = 128;
  } else {
    return err = fmt::format("'{}' is not an address", s), false;
  }
  if (!l.empty()) {
    uint32_t x;
    if (!parse_u32(l, x) || x > len) return err = fmt::format("bad prefix length in '{}'", s), false;
    len = x;
  }
  out.len = uint8_t(len);
  return true;
}

bool port_leaf(std::string_view s, PortSet& out, std::string& err) {
  uint32_t lo = 0, hi = 65535;
  size_t colon = s.find(':');
  bool ok;
  if (colon == std::string_view::npos) {
    ok = parse_u32(s, lo) && lo <= 65535;
    hi = lo;
  } else {
    std::string_view a = trim(s.substr(0, colon)), b = trim(s.substr(colon + 1));
    ok = (a.empty() || parse_u32(a, lo)) && (b.empty() || parse_u32(b, hi)) && !(a.empty() && b.empty()) &&
         lo <= 65535 && hi <= 65535 && lo <= hi;
  }
  if (!ok) return err = fmt::format("'{}' is not a port or port range", s), false;
  out.lo = uint16_t(lo), out.hi = uint16_t(hi);
  return true;
}

bool parse_addr(std::string_view s, const Vars& vars, AddrSet& out, std::string& err) {
  return parse_set(s, vars, out, err, "address", addr_leaf);
}
bool parse_port(std::string_view s, const Vars& vars, PortSet& out, std::string& err) {
  return parse_set(s, vars, out, err, "port", port_leaf);
}

// A content string: "...", with |hex| blocks and \-escapes.
bool parse_content_bytes(std::string_view v, std::string& out, std::string& err) {
  v = trim(v);
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') return err = "content must be a quoted string", false;
  v = v.substr(1, v.size() - 2);
  bool hex = false;
  int nib = -1;
  for (size_t i = 0; i < v.size(); ++i) {
    char c = v[i];
    if (hex) {
      if (c == '|') {
        if (nib >= 0) return err = "odd number of hex digits in content", false;
        hex = false;
      } else if (std::isxdigit(uint8_t(c))) {
        int d = std::isdigit(uint8_t(c)) ? c - '0' : (std::tolower(uint8_t(c)) - 'a' + 10);
        if (nib < 0) {
          nib = d;
        } else {
          out.push_back(char(nib * 16 + d));
          nib = -1;
        }
      } else if (!std::isspace(uint8_t(c))) {
        return err = fmt::format("'{}' in a |hex| block", c), false;
      }
    } else if (c == '|') {
      hex = true;
    } else if (c == '\\') {
      if (i + 1 >= v.size()) return err = "content ends with a backslash", false;
      out.push_back(v[++i]);
    } else if (c == '"' || c == ';') {
      return err = fmt::format("unescaped '{}' in content", c), false;
    } else {
      out.push_back(c);
    }
  }
  if (hex) return err = "unterminated |hex| block in content", false;
  if (out.empty()) return err = "empty content", false;
  return true;
}

// dsize: N, !N, >N, >=N, <N, <=N, N<>M (exclusive, as Suricata), N-M
// (inclusive).
bool parse_dsize(std::string_view v, Rule& r, std::string& err) {
  v = trim(v);
  uint32_t a, b;
  bool ok = false;
  if (!v.empty() && v[0] == '!') {
    r.dsize_neg = true;
    v = trim(v.substr(1));
  }
  if (size_t x = v.find("<>"); x != std::string_view::npos) {
    ok = parse_u32(v.substr(0, x), a) && parse_u32(v.substr(x + 2), b) && a + 1 < b + 0u && b > 0;
    if (ok) r.dsize_lo = a + 1, r.dsize_hi = b - 1;
  } else if (v.rfind(">=", 0) == 0) {
    ok = parse_u32(v.substr(2), a);
    if (ok) r.dsize_lo = a;
  } else if (v.rfind("<=", 0) == 0) {
    ok = parse_u32(v.substr(2), a);
    if (ok) r.dsize_lo = 0, r.dsize_hi = a;
  } else if (!v.empty() && v[0] == '>') {
    ok = parse_u32(v.substr(1), a) && a < UINT32_MAX;
    if (ok) r.dsize_lo = a + 1;
  } else if (!v.empty() && v[0] == '<') {
    ok = parse_u32(v.substr(1), a) && a > 0;
    if (ok) r.dsize_lo = 0, r.dsize_hi = a - 1;
  } else if (size_t d = v.find('-'); d != std::string_view::npos && d > 0) {
    ok = parse_u32(v.substr(0, d), a) && parse_u32(v.substr(d + 1), b) && a <= b;
    if (ok) r.dsize_lo = a, r.dsize_hi = b;
  } else {
    ok = parse_u32(v, a);
    if (ok) r.dsize_lo = r.dsize_hi = a;
  }
  if (!ok) return err = fmt::format("bad dsize '{}'", v), false;
  r.has_dsize = true;
  return true;
}

std::vector<std::string> split_args(std::string_view v) {
  std::vector<std::string> out;
  for (size_t i = 0; i <= v.size();) {
    size_t c = v.find(',', i);
    if (c == std::string_view::npos) c = v.size();
    out.emplace_back(trim(v.substr(i, c - i)));
    i = c + 1;
  }
  return out;
}

bool parse_u64_any(const std::string& s, uint64_t& out) {
  if (s.empty()) return false;
  const char* b = s.c_str();
  char* e = nullptr;
  errno = 0;
  unsigned long long x = std::strtoull(b, &e, 0);  // decimal, 0x hex, 0 octal
  if (errno || *e || s[0] == '-') return false;
  out = x;
  return true;
}

// byte_extract / byte_math variable names of the rule being parsed.
using VarNames = std::map<std::string, int8_t, std::less<>>;

// A number, or the name of a variable set earlier in the rule.
bool num_or_var(std::string_view s, int32_t& n, int8_t& var, const VarNames& names) {
  s = trim(s);
  if (parse_i32(s, n)) return true;
  auto it = names.find(s);
  if (it == names.end()) return false;
  var = it->second;
  n = 0;
  return true;
}

// A byte count: a number (checked against the options later), or a variable
// set before (byte_test, byte_jump, byte_math).
bool byte_count(std::string_view s, ByteOp& b, const VarNames& names) {
  int32_t n = 0;
  if (!num_or_var(s, n, b.var_nbytes, names) || n < 0 || n > 10) return false;
  b.nbytes = uint8_t(n);
  return true;
}

// The options byte_test and byte_jump share (after their positional ones).
bool byte_flags(const std::vector<std::string>& a, size_t from, ByteOp& b, std::string& err) {
  for (size_t i = from; i < a.size(); ++i) {
    const std::string& w = a[i];
    if (w == "relative") {
      b.relative = true;
    } else if (w == "big") {
      b.little = false;
    } else if (w == "little") {
      b.little = true;
    } else if (w == "string") {
      b.string = true;
    } else if (w == "hex" || w == "dec" || w == "oct") {
      b.base = w == "hex" ? 16 : w == "dec" ? 10 : 8;
    } else if (w.rfind("bitmask", 0) == 0) {
      if (!parse_u64_any(std::string(trim(std::string_view(w).substr(7))), b.bitmask) || !b.bitmask)
        return err = fmt::format("bad bitmask '{}'", w), false;
    } else if (b.kind == ByteOp::ByteJump && w == "align") {
      b.align = true;
    } else if (b.kind == ByteOp::ByteJump && w == "from_beginning") {
      b.from_beginning = true;
    } else if (b.kind == ByteOp::ByteJump && w == "from_end") {
      b.from_end = true;
    } else if (b.kind == ByteOp::ByteJump && w.rfind("multiplier", 0) == 0) {
      if (!parse_u64_any(std::string(trim(std::string_view(w).substr(10))), b.multiplier) || !b.multiplier)
        return err = fmt::format("bad multiplier '{}'", w), false;
    } else if (b.kind == ByteOp::ByteJump && w.rfind("post_offset", 0) == 0) {
      if (!parse_i32(trim(std::string_view(w).substr(11)), b.post_offset))
        return err = fmt::format("bad post_offset '{}'", w), false;
    } else if (w == "dce") {
      return err = "byte options with 'dce' need a DCE/RPC parser this engine does not have", false;
    } else {
      return err = fmt::format("unknown option '{}'", w), false;
    }
  }
  // (byte_jump may read no byte: a jump by post_offset alone, as Suricata's)
  const int least = b.kind == ByteOp::ByteJump && !b.string ? 0 : 1;
  if (b.var_nbytes < 0 && (b.string ? (b.nbytes < least || b.nbytes > 10) : (b.nbytes < least || b.nbytes > 8)))
    return err = fmt::format("{} bytes cannot be read{}", b.nbytes, b.string ? " as a string (1-10)" : " (1-8)"), false;
  return true;
}

// isdataat:[!]N[,relative][,rawbytes]
bool parse_isdataat(std::string_view v, Item& it, const VarNames& names, std::string& err) {
  auto a = split_args(v);
  ByteOp& b = it.byte;
  b.kind = ByteOp::IsDataAt;
  std::string n = a[0];
  if (!n.empty() && n[0] == '!') b.neg = true, n = std::string(trim(std::string_view(n).substr(1)));
  if (!num_or_var(n, b.offset, b.var_offset, names) || b.offset < 0)
    return err = fmt::format("isdataat: '{}' is not a number or a variable set before", n), false;
  for (size_t i = 1; i < a.size(); ++i) {
    if (a[i] == "relative")
      b.relative = true;
    else if (a[i] != "rawbytes")
      return err = fmt::format("isdataat: unknown option '{}'", a[i]), false;
  }
  return true;
}

// byte_test:N,[!]op,value,offset[,relative][,big|little][,string,hex|dec|oct][,bitmask M]
bool parse_byte_test(std::string_view v, Item& it, const VarNames& names, std::string& err) {
  auto a = split_args(v);
  ByteOp& b = it.byte;
  b.kind = ByteOp::ByteTest;
  if (a.size() < 4) return err = "byte_test: bytes, operator, value and offset are needed", false;
  if (!byte_count(a[0], b, names)) return err = fmt::format("byte_test: bad byte count '{}'", a[0]), false;
  std::string op = a[1];
  if (!op.empty() && op[0] == '!') b.neg = true, op = op.substr(1);
  if (op.empty() && b.neg) op = "=";  // "!" alone: not equal
  static const char* const kOps[] = {"<", ">", "=", "<=", ">=", "&", "^"};
  if (std::find_if(std::begin(kOps), std::end(kOps), [&](const char* o) { return op == o; }) == std::end(kOps))
    return err = fmt::format("byte_test: bad operator '{}'", a[1]), false;
  std::memcpy(b.op, op.data(), op.size());
  if (!parse_u64_any(a[2], b.value)) {
    auto it2 = names.find(trim(std::string_view(a[2])));
    if (it2 == names.end())
      return err = fmt::format("byte_test: '{}' is not a number or a variable set before", a[2]), false;
    b.var_value = it2->second;
  }
  if (!num_or_var(a[3], b.offset, b.var_offset, names))
    return err = fmt::format("byte_test: offset '{}' is not a number or a variable set before", a[3]), false;
  if (!byte_flags(a, 4, b, err)) return err = "byte_test: " + err, false;
  return true;
}

// byte_jump:N,offset[,relative][,multiplier M][,big|little][,string,hex|dec|oct][,align][,from_beginning]
//   [,from_end][,post_offset P][,bitmask M]
bool parse_byte_jump(std::string_view v, Item& it, const VarNames& names, std::string& err) {
  auto a = split_args(v);
  ByteOp& b = it.byte;
  b.kind = ByteOp::ByteJump;
  if (a.size() < 2) return err = "byte_jump: bytes and offset are needed", false;
  if (!byte_count(a[0], b, names)) return err = fmt::format("byte_jump: bad byte count '{}'", a[0]), false;
  if (!num_or_var(a[1], b.offset, b.var_offset, names))
    return err = fmt::format("byte_jump: offset '{}' is not a number or a variable set before", a[1]), false;
  if (!byte_flags(a, 2, b, err)) return err = "byte_jump: " + err, false;
  if (b.from_beginning && b.from_end) return err = "byte_jump: from_beginning and from_end together", false;
  return true;
}

// base64_decode[:bytes N][, offset O][, relative]: N 0 or absent: as many as there are (up to 65535).
bool parse_base64_decode(std::string_view v, Item& it, std::string& err) {
  ByteOp& b = it.byte;
  b.kind = ByteOp::Base64Decode;
  b.value = 65535;
  if (trim(v).empty()) return true;
  for (const std::string& raw : split_args(v)) {
    std::string_view w = trim(std::string_view(raw));
    size_t sp = w.find_first_of(" \t");
    std::string_view key = w.substr(0, sp), val = sp == std::string_view::npos ? "" : trim(w.substr(sp));
    uint32_t x = 0;
    if (key == "relative" && val.empty()) {
      b.relative = true;
    } else if (key == "bytes" && parse_u32(val, x) && x <= 65535) {
      b.value = x ? x : 65535;
    } else if (key == "offset" && parse_u32(val, x) && x <= 65535) {
      b.offset = int32_t(x);
    } else {
      return err = fmt::format("base64_decode: '{}' is not bytes N, offset N or relative", w), false;
    }
  }
  return true;
}

// byte_extract:N,offset,name[,relative][,multiplier M][,big|little][,string,hex|dec|oct][,align N]
//   [,bitmask M]: the number (times the multiplier, aligned up) goes to variable `name`.
bool parse_byte_extract(std::string_view v, Item& it, VarNames& names, std::string& err) {
  auto a = split_args(v);
  ByteOp& b = it.byte;
  b.kind = ByteOp::ByteExtract;
  if (a.size() < 3) return err = "byte_extract: bytes, offset and a name are needed", false;
  int32_t n;
  if (!parse_i32(a[0], n) || n < 1 || n > 10)
    return err = fmt::format("byte_extract: bad byte count '{}'", a[0]), false;
  b.nbytes = uint8_t(n);
  if (!parse_i32(a[1], b.offset)) return err = fmt::format("byte_extract: bad offset '{}'", a[1]), false;
  std::vector<std::string> rest;
  for (size_t i = 3; i < a.size(); ++i) {
    std::string w(trim(std::string_view(a[i])));
    if (w.rfind("multiplier", 0) == 0) {
      if (!parse_u64_any(std::string(trim(std::string_view(w).substr(10))), b.multiplier) || !b.multiplier)
        return err = fmt::format("byte_extract: bad multiplier '{}'", w), false;
    } else if (w.rfind("align", 0) == 0) {
      int32_t al = 0;
      if (!parse_i32(trim(std::string_view(w).substr(5)), al) || (al != 2 && al != 4))
        return err = fmt::format("byte_extract: align 2 or 4, not '{}'", w), false;
      b.align_to = uint8_t(al);
    } else {
      rest.push_back(w);
    }
  }
  if (!byte_flags(rest, 0, b, err)) return err = "byte_extract: " + err, false;
  std::string name(trim(std::string_view(a[2])));
  if (name.empty() || std::isdigit(uint8_t(name[0])))
    return err = fmt::format("byte_extract: bad name '{}'", name), false;
  if (!names.count(name)) {
    if (names.size() >= size_t(kMaxRuleVars)) return err = "byte_extract: more than 8 variables", false;
    names.emplace(name, int8_t(names.size()));
  }
  b.var = names[name];
  return true;
}

// byte_math:bytes N, offset O, oper +|-|*|/|<<|>>, rvalue V|name, result name[, relative][, endian big|little]
//   [, string hex|dec|oct][, bitmask M]
bool parse_byte_math(std::string_view v, Item& it, VarNames& names, std::string& err) {
  ByteOp& b = it.byte;
  b.kind = ByteOp::ByteMath;
  std::string result, rvalue;
  bool have_bytes = false, have_offset = false;
  std::vector<std::string> flags;
  for (const std::string& raw : split_args(v)) {
    std::string_view w = trim(std::string_view(raw));
    size_t sp = w.find_first_of(" \t");
    std::string key(w.substr(0, sp)), val(sp == std::string_view::npos ? "" : trim(w.substr(sp)));
    if (key == "bytes" && byte_count(val, b, names)) {
      have_bytes = true;
    } else if (key == "offset" && parse_i32(val, b.offset)) {
      have_offset = true;
    } else if (key == "oper") {
      static const std::pair<const char*, char> kOps[] = {{"+", '+'}, {"-", '-'},  {"*", '*'},
                                                          {"/", '/'}, {"<<", '<'}, {">>", '>'}};
      for (auto& [o, c] : kOps)
        if (val == o) b.math = c;
      if (!b.math) return err = fmt::format("byte_math: oper '{}' is not + - * / << >>", val), false;
    } else if (key == "rvalue") {
      rvalue = val;
    } else if (key == "result") {
      result = val;
    } else if (key == "endian") {
      flags.push_back(val);
    } else if (key == "string") {
      flags.push_back("string"), flags.push_back(val);
    } else if (key == "relative" || key == "bitmask" || key == "dce") {
      flags.push_back(std::string(w));
    } else {
      return err = fmt::format("byte_math: bad '{}'", w), false;
    }
  }
  if (!have_bytes || !have_offset || !b.math || rvalue.empty() || result.empty())
    return err = "byte_math: bytes, offset, oper, rvalue and result are needed", false;
  if (!byte_flags(flags, 0, b, err)) return err = "byte_math: " + err, false;
  if (!parse_u64_any(rvalue, b.value)) {
    auto r = names.find(rvalue);
    if (r == names.end())
      return err = fmt::format("byte_math: rvalue '{}' is not a number or a variable", rvalue), false;
    b.var_value = r->second;
  }
  if (b.math == '/' && b.var_value < 0 && b.value == 0) return err = "byte_math: division by zero", false;
  if (!names.count(result)) {
    if (names.size() >= size_t(kMaxRuleVars)) return err = "byte_math: more than 8 variables", false;
    names.emplace(result, int8_t(names.size()));
  }
  b.var = names[result];
  return true;
}

// A numeric header test: N, !N, <N, >N, <=N, >=N, N<>M, N-M (dsize's forms).
bool parse_field(std::string_view v, FieldCond::Field f, const char* name, Rule& r, std::string& err) {
  Rule tmp;
  if (!parse_dsize(v, tmp, err)) return err = fmt::format("bad {} '{}'", name, trim(v)), false;
  FieldCond c;
  c.field = f;
  c.neg = tmp.dsize_neg;
  c.lo = tmp.dsize_lo;
  c.hi = tmp.dsize_hi == UINT32_MAX ? UINT64_MAX : tmp.dsize_hi;
  r.fields.push_back(c);
  return true;
}

// flags:[!+*]FSRPAUCE0[,mask]
bool parse_flags(std::string_view v, Rule& r, std::string& err) {
  auto bits = [](std::string_view s, uint8_t& out, char* mod, std::string& e) {
    out = 0;
    for (char c : s) {
      if (mod && (c == '!' || c == '+' || c == '*') && !*mod) {
        *mod = c;
        continue;
      }
      switch (c) {
        case 'F': out |= 0x01; break;
        case 'S': out |= 0x02; break;
        case 'R': out |= 0x04; break;
        case 'P': out |= 0x08; break;
        case 'A': out |= 0x10; break;
        case 'U': out |= 0x20; break;
        case 'E':
        case '2': out |= 0x40; break;
        case 'C':
        case '1': out |= 0x80; break;
        case '0': break;
        default: return e = fmt::format("flags: unknown flag '{}'", c), false;
      }
    }
    return true;
  };
  std::string_view f = trim(v), m;
  if (size_t c = f.find(','); c != std::string_view::npos) m = trim(f.substr(c + 1)), f = trim(f.substr(0, c));
  if (f.empty()) return err = "flags: no flags given", false;
  r.has_flags = true;
  return bits(f, r.flags.want, &r.flags.mod, err) && bits(m, r.flags.mask, nullptr, err);
}

// threshold: type limit|threshold|both, track by_src|by_dst|by_both|by_rule|by_flow, count N, seconds T
//   or type backoff, track ..., count N, multiplier M
// detection_filter: track ..., count N, seconds T
bool parse_threshold(std::string_view v, bool detection_filter, Rule& r, std::string& err) {
  const char* kw = detection_filter ? "detection_filter" : "threshold";
  if (r.threshold.type != Threshold::None)
    return err = fmt::format("{}: a rule takes one threshold or detection_filter", kw), false;
  Threshold t;
  t.type = detection_filter ? Threshold::DetectionFilter : Threshold::None;
  bool have_track = false, have_count = false, have_seconds = false;
  for (const std::string& a : split_args(v)) {
    size_t sp = a.find_first_of(" \t");
    std::string key = a.substr(0, sp),
                val = sp == std::string::npos ? "" : std::string(trim(std::string_view(a).substr(sp)));
    int32_t n = 0;
    if (key == "type" && !detection_filter) {
      if (val == "limit")
        t.type = Threshold::Limit;
      else if (val == "threshold")
        t.type = Threshold::EveryNth;
      else if (val == "both")
        t.type = Threshold::Both;
      else if (val == "backoff")
        t.type = Threshold::Backoff;
      else
        return err = fmt::format("threshold: type '{}' is not limit, threshold, both or backoff", val), false;
    } else if (key == "track") {
      static const std::pair<const char*, Threshold::Track> kTracks[] = {{"by_src", Threshold::BySrc},
                                                                         {"by_dst", Threshold::ByDst},
                                                                         {"by_both", Threshold::ByBoth},
                                                                         {"by_rule", Threshold::ByRule},
                                                                         {"by_flow", Threshold::ByFlow}};
      auto it = std::find_if(std::begin(kTracks), std::end(kTracks), [&](auto& p) { return val == p.first; });
      if (it == std::end(kTracks)) return err = fmt::format("{}: track '{}' is not supported", kw, val), false;
      t.track = it->second;
      have_track = true;
    } else if (key == "count" && parse_i32(val, n) && n >= 1) {
      t.count = uint32_t(n);
      have_count = true;
    } else if (key == "seconds" && parse_i32(val, n) && n >= 1) {
      t.seconds = uint32_t(n);
      have_seconds = true;
    } else if (key == "multiplier" && !detection_filter && parse_i32(val, n) && n >= 2) {
      t.multiplier = uint32_t(n);
    } else {
      return err = fmt::format("{}: bad '{}'", kw, a), false;
    }
  }
  if (t.type == Threshold::Backoff) {  // Suricata 8: no window, a multiplier instead
    if (!have_track || !have_count || !t.multiplier || have_seconds)
      return err = "threshold: type backoff takes track, count and multiplier (2 or more), no seconds", false;
  } else if (t.type == Threshold::None || !have_track || !have_count || !have_seconds || t.multiplier) {
    return err = fmt::format("{}: {}track, count and seconds are needed{}", kw, detection_filter ? "" : "type, ",
                             t.multiplier ? " (multiplier is backoff's)" : ""),
           false;
  }
  r.threshold = t;
  return true;
}

// flow: comma-separated words, Suricata's meaning.
bool parse_flow(std::string_view v, Rule& r, std::string& err) {
  size_t i = 0;
  while (i <= v.size()) {
    size_t c = v.find(',', i);
    if (c == std::string_view::npos) c = v.size();
    std::string w(trim(v.substr(i, c - i)));
    std::transform(w.begin(), w.end(), w.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    if (w == "established")
      r.flow |= kFlowEstablished;
    else if (w == "not_established")
      r.flow |= kFlowNotEstablished;
    else if (w == "to_server" || w == "from_client")
      r.flow |= kFlowToServer;
    else if (w == "to_client" || w == "from_server")
      r.flow |= kFlowToClient;
    else if (w == "no_stream")
      r.flow |= kFlowNoStream;
    else if (w == "stateless")
      r.flow |= kFlowStateless;
    else if (w == "only_stream")
      r.flow |= kFlowOnlyStream;
    else
      return err = fmt::format(
                 "flow: '{}' is not supported (established, not_established, to_server, "
                 "to_client, from_client, from_server, no_stream, stateless)",
                 w),
             false;
    i = c + 1;
  }
  if ((r.flow & kFlowToServer) && (r.flow & kFlowToClient))
    return err = "flow: to_server and to_client together never match", false;
  if ((r.flow & kFlowEstablished) && (r.flow & kFlowNotEstablished))
    return err = "flow: established and not_established together never match", false;
  if ((r.flow & kFlowOnlyStream) && (r.flow & kFlowNoStream))
    return err = "flow: only_stream and no_stream together never match", false;
  return true;
}

// flowbits: set|unset|toggle,NAME; isset|isnotset,NAME (a|b: any, a&b:
// all); noalert.
bool parse_flowbits(std::string_view v, Rule& r, std::string& err) {
  v = trim(v);
  size_t c = v.find(',');
  std::string cmd(trim(v.substr(0, c)));
  if (cmd == "noalert") {
    if (c != std::string_view::npos) return err = "flowbits:noalert takes no name", false;
    r.noalert = true;
    return true;
  }
  Flowbit fb;
  if (cmd == "set")
    fb.cmd = Flowbit::Set;
  else if (cmd == "unset")
    fb.cmd = Flowbit::Unset;
  else if (cmd == "toggle")
    fb.cmd = Flowbit::Toggle;
  else if (cmd == "isset")
    fb.cmd = Flowbit::IsSet;
  else if (cmd == "isnotset")
    fb.cmd = Flowbit::IsNotSet;
  else
    return err = fmt::format("flowbits: '{}' is not set, unset, toggle, isset, isnotset or noalert", cmd), false;
  if (c == std::string_view::npos) return err = fmt::format("flowbits:{} needs a name", cmd), false;
  std::string_view names = trim(v.substr(c + 1));
  bool ors = names.find('|') != std::string_view::npos, ands = names.find('&') != std::string_view::npos;
  if (ors && ands) return err = "flowbits: '|' and '&' cannot be mixed", false;
  fb.any = ors;
  char sep = ors ? '|' : '&';
  for (size_t i = 0; i <= names.size();) {
    size_t e = names.find(sep, i);
    if (e == std::string_view::npos) e = names.size();
    std::string_view n = trim(names.substr(i, e - i));
    if (n.empty() || n.find_first_of(" \t,;") != std::string_view::npos)
      return err = fmt::format("flowbits: bad name '{}'", n), false;
    fb.names.emplace_back(n);
    i = e + 1;
  }
  if (fb.any && !fb.check()) return err = fmt::format("flowbits:{} takes names joined by '&', not '|'", cmd), false;
  r.flowbits.push_back(std::move(fb));
  return true;
}

// hostbits: set|unset|toggle|isset|isnotset,NAME[,src|dst|both][,expire N]
// xbits: set|unset|toggle|isset|isnotset,NAME,track ip_src|ip_dst|ip_pair[,expire N]
// either: noalert.
bool parse_hostbits(std::string_view v, bool xbits, Rule& r, std::string& err) {
  const char* kw = xbits ? "xbits" : "hostbits";
  auto a = split_args(v);
  for (std::string& x : a) x = std::string(trim(std::string_view(x)));
  if (a.size() == 1 && a[0] == "noalert") return r.noalert = true, true;
  static const std::pair<const char*, Hostbit::Cmd> kCmds[] = {{"set", Hostbit::Set},
                                                               {"unset", Hostbit::Unset},
                                                               {"toggle", Hostbit::Toggle},
                                                               {"isset", Hostbit::IsSet},
                                                               {"isnotset", Hostbit::IsNotSet}};
  Hostbit h;
  auto cmd = std::find_if(std::begin(kCmds), std::end(kCmds), [&](auto& c) { return a[0] == c.first; });
  if (cmd == std::end(kCmds))
    return err = fmt::format("{}: '{}' is not set, unset, toggle, isset, isnotset or noalert", kw, a[0]), false;
  h.cmd = cmd->second;
  if (a.size() < 2 || a[1].empty() || a[1].find_first_of(" \t") != std::string::npos)
    return err = fmt::format("{}:{} needs a name", kw, a[0]), false;
  h.name = a[1];
  bool tracked = false;
  for (size_t i = 2; i < a.size(); ++i) {
    const std::string& w = a[i];
    if (!xbits && (w == "src" || w == "dst" || w == "both")) {
      h.track = w == "src" ? Hostbit::Src : w == "dst" ? Hostbit::Dst : Hostbit::Both;
    } else if (xbits && w.rfind("track", 0) == 0) {
      std::string_view t = trim(std::string_view(w).substr(5));
      if (t == "ip_src")
        h.track = Hostbit::Src;
      else if (t == "ip_dst")
        h.track = Hostbit::Dst;
      else if (t == "ip_pair")
        h.track = Hostbit::Pair;
      else
        return err = fmt::format("xbits: track '{}' is not ip_src, ip_dst or ip_pair", t), false;
      tracked = true;
    } else if (w.rfind("expire", 0) == 0 && !h.check()) {
      uint32_t e = 0;
      if (!parse_u32(trim(std::string_view(w).substr(6)), e) || !e)
        return err = fmt::format("{}: bad expire '{}'", kw, w), false;
      h.expire = e;
    } else {
      return err = fmt::format("{}: '{}' is not {}", kw, w,
                               xbits ? "track ip_src|ip_dst|ip_pair or expire N (set, toggle)"
                                     : "src, dst, both or expire N (set, toggle)"),
             false;
    }
  }
  if (xbits && !tracked) return err = "xbits: track ip_src, ip_dst or ip_pair is needed", false;
  r.hostbits.push_back(std::move(h));
  return true;
}

// requires: feature NAME, version OP V [OP V] (Suricata 7.0.3+): a rule
// whose requirements this engine does not meet is not loaded. Rules are
// read as Suricata 8.0.7's; the features are those it has.
bool parse_requires(std::string_view v, std::string& err) {
  static const int kVersion[3] = {8, 0, 7};
  static const char* const kFeatures[] = {"ja3", "ja4"};
  for (const std::string& raw : split_args(v)) {
    std::string_view w = trim(std::string_view(raw));
    size_t sp = w.find_first_of(" \t");
    std::string_view key = w.substr(0, sp), rest = sp == std::string_view::npos ? "" : trim(w.substr(sp));
    if (key == "feature") {
      if (std::find(std::begin(kFeatures), std::end(kFeatures), rest) == std::end(kFeatures))
        return err = fmt::format("requires: feature '{}' is not one this engine has", rest), false;
    } else if (key == "version") {
      // one or two "OP X[.Y[.Z]]" terms, all of which must hold
      size_t i = 0;
      bool any = false;
      while (i < rest.size()) {
        while (i < rest.size() && std::isspace(uint8_t(rest[i]))) ++i;
        size_t o = i;
        while (i < rest.size() && (rest[i] == '<' || rest[i] == '>' || rest[i] == '=')) ++i;
        std::string_view op = rest.substr(o, i - o);
        while (i < rest.size() && std::isspace(uint8_t(rest[i]))) ++i;
        size_t n = i;
        while (i < rest.size() && (std::isdigit(uint8_t(rest[i])) || rest[i] == '.')) ++i;
        std::string_view num = rest.substr(n, i - n);
        int want[3] = {0, 0, 0}, parts = 0;
        for (size_t j = 0; j < num.size() && parts < 3;) {
          size_t d = num.find('.', j);
          if (d == std::string_view::npos) d = num.size();
          want[parts++] = std::atoi(std::string(num.substr(j, d - j)).c_str());
          j = d + 1;
        }
        if (op.empty() || !parts || !(op == ">=" || op == ">" || op == "<" || op == "<=" || op == "="))
          return err = fmt::format("requires: bad version '{}'", rest), false;
        int cmp = 0;  // our version against the one named, to the parts it names
        for (int k = 0; k < parts && !cmp; ++k) cmp = (kVersion[k] > want[k]) - (kVersion[k] < want[k]);
        bool ok = op == ">=" ? cmp >= 0 : op == ">" ? cmp > 0 : op == "<" ? cmp < 0 : op == "<=" ? cmp <= 0 : cmp == 0;
        if (!ok) return err = fmt::format("requires: version {} (rules are read as Suricata 8.0.7's)", rest), false;
        any = true;
      }
      if (!any) return err = "requires: version needs a comparison", false;
    } else {
      return err = fmt::format("requires: '{}' is not feature or version", w), false;
    }
  }
  return true;
}

// tag:session|host[,COUNT,packets|bytes|seconds[,src|dst]]
bool parse_tag(std::string_view v, Rule& r, std::string& err) {
  auto a = split_args(v);
  for (std::string& x : a) x = std::string(trim(std::string_view(x)));
  Tag t;
  if (a[0] == "session")
    t.scope = Tag::Session;
  else if (a[0] == "host")
    t.scope = Tag::Host;
  else
    return err = fmt::format("tag: '{}' is not session or host", a[0]), false;
  if (a.size() == 2 || a.size() > 4) return err = "tag: session|host[, count, packets|bytes|seconds[, src|dst]]", false;
  if (a.size() >= 3) {
    if (!parse_u32(a[1], t.count) || !t.count) return err = fmt::format("tag: bad count '{}'", a[1]), false;
    if (a[2] == "packets")
      t.metric = Tag::Packets;
    else if (a[2] == "bytes")
      t.metric = Tag::Bytes;
    else if (a[2] == "seconds")
      t.metric = Tag::Seconds;
    else
      return err = fmt::format("tag: '{}' is not packets, bytes or seconds", a[2]), false;
  }
  if (a.size() == 4) {
    if (t.scope != Tag::Host) return err = "tag: a direction is a host tag's", false;
    if (a[3] != "src" && a[3] != "dst") return err = fmt::format("tag: '{}' is not src or dst", a[3]), false;
    t.dst = a[3] == "dst";
  }
  r.tags.push_back(t);
  return true;
}

// flowint: NAME, +|-|=|<|>|<=|>=|==|!=, VALUE (a number or a flowint's
// name); flowint: NAME, isset|notset|isnotset.
bool parse_flowint(std::string_view v, Rule& r, std::string& err) {
  auto a = split_args(v);
  if (a.size() < 2 || a.size() > 3) return err = "flowint: NAME, operator[, value]", false;
  Flowint fi;
  fi.name = std::string(trim(std::string_view(a[0])));
  if (fi.name.empty() || fi.name.find_first_of(" \t") != std::string::npos)
    return err = fmt::format("flowint: bad name '{}'", fi.name), false;
  static const std::pair<const char*, Flowint::Op> kOps[] = {
      {"=", Flowint::Set}, {"+", Flowint::Add},       {"-", Flowint::Sub},         {"<", Flowint::Lt},
      {">", Flowint::Gt},  {"<=", Flowint::Le},       {">=", Flowint::Ge},         {"==", Flowint::Eq},
      {"!=", Flowint::Ne}, {"isset", Flowint::IsSet}, {"notset", Flowint::NotSet}, {"isnotset", Flowint::NotSet}};
  std::string op(trim(std::string_view(a[1])));
  auto it = std::find_if(std::begin(kOps), std::end(kOps), [&](auto& o) { return op == o.first; });
  if (it == std::end(kOps))
    return err = fmt::format("flowint: '{}' is not + - = < > <= >= == != isset notset isnotset", op), false;
  fi.op = it->second;
  bool test = fi.op == Flowint::IsSet || fi.op == Flowint::NotSet;
  if (test != (a.size() == 2))
    return err = fmt::format("flowint: '{}' {} a value", op, test ? "takes no" : "needs"), false;
  if (!test) {
    std::string val(trim(std::string_view(a[2])));
    uint64_t n = 0;
    if (parse_u64_any(val, n)) {
      if (n > UINT32_MAX) return err = fmt::format("flowint: {} is more than 32 bits", val), false;
      fi.value = uint32_t(n);
    } else if (!val.empty() && (std::isalpha(uint8_t(val[0])) || val[0] == '_') &&
               val.find_first_of(" \t") == std::string::npos) {
      fi.value_name = val;
    } else {
      return err = fmt::format("flowint: '{}' is not a number or a flowint's name", val), false;
    }
  }
  r.flowints.push_back(std::move(fi));
  return true;
}

// Splits "key:value; key; ..." on unescaped semicolons outside quotes.
bool split_options(std::string_view s, std::vector<std::pair<std::string, std::string>>& out, std::string& err) {
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(uint8_t(s[i]))) ++i;
    if (i >= s.size()) break;
    size_t start = i;
    bool quoted = false;
    for (; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size()) {
        ++i;
      } else if (s[i] == '"') {
        quoted = !quoted;
      } else if (s[i] == ';' && !quoted) {
        break;
      }
    }
    if (quoted) return err = "unterminated quoted string in the options", false;
    if (i >= s.size()) return err = "an option is not terminated by ';'", false;
    std::string_view opt = trim(s.substr(start, i - start));
    ++i;
    size_t colon = std::string_view::npos;
    bool q = false;
    for (size_t j = 0; j < opt.size(); ++j) {
      if (opt[j] == '"') q = !q;
      if (opt[j] == ':' && !q) {
        colon = j;
        break;
      }
    }
    std::string key(trim(opt.substr(0, colon)));
    std::string val = colon == std::string_view::npos ? "" : std::string(trim(opt.substr(colon + 1)));
    std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    if (key.empty()) return err = "an empty option", false;
    out.emplace_back(std::move(key), std::move(val));
  }
  return true;
}

std::string unquote(std::string_view v) {
  v = trim(v);
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') v = v.substr(1, v.size() - 2);
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size()) ++i;
    s.push_back(v[i]);
  }
  return s;
}

struct BufName {
  const char* name;
  Buf buf;
};
// Suricata's sticky buffers (and Snort's file_data): content and pcre after
// them look there, until another one or pkt_data.
constexpr BufName kSticky[] = {
    {"http.uri", Buf::HttpUri},
    {"http.uri.raw", Buf::HttpUriRaw},
    {"http.method", Buf::HttpMethod},
    {"http.host", Buf::HttpHost},
    {"http.host.raw", Buf::HttpHostRaw},
    {"http.user_agent", Buf::HttpUserAgent},
    {"http.header", Buf::HttpHeader},
    {"http.header.raw", Buf::HttpHeaderRaw},
    {"http.cookie", Buf::HttpCookie},
    {"http.request_body", Buf::HttpRequestBody},
    {"http.client_body", Buf::HttpRequestBody},
    {"http.request_line", Buf::HttpRequestLine},
    {"http.protocol", Buf::HttpProtocol},
    {"http.referer", Buf::HttpReferer},
    {"http.content_type", Buf::HttpContentType},
    {"http.stat_code", Buf::HttpStatCode},
    {"http.stat_msg", Buf::HttpStatMsg},
    {"http.response_line", Buf::HttpResponseLine},
    {"http.response_body", Buf::HttpResponseBody},
    {"http.server_body", Buf::HttpResponseBody},
    {"http.server", Buf::HttpServer},
    {"http.connection", Buf::HttpConnection},
    {"http.accept", Buf::HttpAccept},
    {"http.accept_enc", Buf::HttpAcceptEnc},
    {"http.accept_lang", Buf::HttpAcceptLang},
    {"http.content_len", Buf::HttpContentLen},
    {"http.location", Buf::HttpLocation},
    {"http.start", Buf::HttpStart},
    {"http.request_header", Buf::HttpRequestHeader},
    {"http.response_header", Buf::HttpResponseHeader},
    {"http.header_names", Buf::HttpHeaderNames},
    {"http_request_line", Buf::HttpRequestLine},
    {"http_response_line", Buf::HttpResponseLine},
    {"file.data", Buf::HttpResponseBody},
    {"file_data", Buf::HttpResponseBody},
    {"dns.query", Buf::DnsQuery},
    {"dns_query", Buf::DnsQuery},
    {"dns.queries.rrname", Buf::DnsQueriesRrname},
    {"dns.query.name", Buf::DnsQueriesRrname},
    {"dns.answers.rrname", Buf::DnsAnswersRrname},
    {"dns.answer.name", Buf::DnsAnswersRrname},
    {"dns.response.rrname", Buf::DnsResponseRrname},
    {"tls.sni", Buf::TlsSni},
    {"tls_sni", Buf::TlsSni},
    {"tls.cert_subject", Buf::TlsCertSubject},
    {"tls_cert_subject", Buf::TlsCertSubject},
    {"tls.cert_issuer", Buf::TlsCertIssuer},
    {"tls_cert_issuer", Buf::TlsCertIssuer},
    {"tls.cert_serial", Buf::TlsCertSerial},
    {"tls_cert_serial", Buf::TlsCertSerial},
    {"tls.cert_fingerprint", Buf::TlsCertFingerprint},
    {"tls_cert_fingerprint", Buf::TlsCertFingerprint},
    {"tls.certs", Buf::TlsCerts},
    {"tls.subjectaltname", Buf::TlsSubjectAltName},
    {"tls.random", Buf::TlsRandom},
    {"tls.random_time", Buf::TlsRandomTime},
    {"tls.random_bytes", Buf::TlsRandomBytes},
    {"ja3.hash", Buf::Ja3Hash},
    {"ja3_hash", Buf::Ja3Hash},
    {"ja3.string", Buf::Ja3String},
    {"ja3_string", Buf::Ja3String},
    {"ja3s.hash", Buf::Ja3sHash},
    {"ja3s.string", Buf::Ja3sString},
    {"ja4.hash", Buf::Ja4Hash},
    {"sip.method", Buf::SipMethod},
    {"sip.uri", Buf::SipUri},
    {"sip.request_line", Buf::SipRequestLine},
    {"sip.stat_code", Buf::SipStatCode},
    {"sip.stat_msg", Buf::SipStatMsg},
    {"sip.response_line", Buf::SipResponseLine},
    {"sip.protocol", Buf::SipProtocol},
    {"sip.from", Buf::SipFrom},
    {"sip.to", Buf::SipTo},
    {"sip.via", Buf::SipVia},
    {"sip.user_agent", Buf::SipUserAgent},
    {"sip.ua", Buf::SipUserAgent},
    {"sip.content_type", Buf::SipContentType},
    {"sip.content_length", Buf::SipContentLength},
    {"ssh.proto", Buf::SshProto},
    {"ssh_proto", Buf::SshProto},
    {"ssh.software", Buf::SshSoftware},
    {"ssh_software", Buf::SshSoftware},
    {"ssh.hassh", Buf::SshHassh},
    {"ssh.hassh.string", Buf::SshHasshString},
    {"ssh.hassh.server", Buf::SshHasshServer},
    {"ssh.hassh.server.string", Buf::SshHasshServerString},
    {"ftp.command", Buf::FtpCommand},
    {"ftp.command_data", Buf::FtpCommandData},
    {"ftp.completion_code", Buf::FtpCompletionCode},
    {"ftp.reply", Buf::FtpReply},
    {"smtp.helo", Buf::SmtpHelo},
    {"smtp.mail_from", Buf::SmtpMailFrom},
    {"smtp.rcpt_to", Buf::SmtpRcptTo},
    {"email.from", Buf::EmailFrom},
    {"email.to", Buf::EmailTo},
    {"email.cc", Buf::EmailCc},
    {"email.subject", Buf::EmailSubject},
    {"email.date", Buf::EmailDate},
    {"email.message_id", Buf::EmailMessageId},
    {"email.x_mailer", Buf::EmailXMailer},
    {"email.received", Buf::EmailReceived},
    {"email.url", Buf::EmailUrl},
    {"file.name", Buf::HttpFileName},
    {"file.data", Buf::SmtpFileData},  // (found as http's first: an smtp rule's is this one)
    {"file.name", Buf::SmtpFileName},
    {"ipv4.hdr", Buf::Ipv4Hdr},
    {"ipv6.hdr", Buf::Ipv6Hdr},
    {"tcp.hdr", Buf::TcpHdr},
    {"udp.hdr", Buf::UdpHdr},
    {"icmpv4.hdr", Buf::Icmpv4Hdr},
    {"icmpv6.hdr", Buf::Icmpv6Hdr},
    {"pkt_data", Buf::Packet},
};
// Snort's content modifiers: they move the content before them.
constexpr BufName kModifiers[] = {
    {"http_uri", Buf::HttpUri},
    {"http_raw_uri", Buf::HttpUriRaw},
    {"http_method", Buf::HttpMethod},
    {"http_host", Buf::HttpHost},
    {"http_raw_host", Buf::HttpHostRaw},
    {"http_user_agent", Buf::HttpUserAgent},
    {"http_header", Buf::HttpHeader},
    {"http_raw_header", Buf::HttpHeaderRaw},
    {"http_cookie", Buf::HttpCookie},
    {"http_raw_cookie", Buf::HttpCookie},
    {"http_client_body", Buf::HttpRequestBody},
    {"http_server_body", Buf::HttpResponseBody},
    {"http_stat_code", Buf::HttpStatCode},
    {"http_stat_msg", Buf::HttpStatMsg},
};

bool find_buf(const BufName* t, size_t n, const std::string& k, Buf& out) {
  for (size_t i = 0; i < n; ++i)
    if (k == t[i].name) return out = t[i].buf, true;
  return false;
}

}  // namespace

bool pcre_buffer_flag(char f) { return f && std::strchr("UIPHDMCKSYVWQ", f) != nullptr; }

namespace {

Buf pcre_buf(char f) {
  switch (f) {
    case 'U': return Buf::HttpUri;
    case 'I': return Buf::HttpUriRaw;
    case 'P': return Buf::HttpRequestBody;
    case 'H': return Buf::HttpHeader;
    case 'D': return Buf::HttpHeaderRaw;
    case 'M': return Buf::HttpMethod;
    case 'C':
    case 'K': return Buf::HttpCookie;
    case 'S': return Buf::HttpStatCode;
    case 'Y': return Buf::HttpStatMsg;
    case 'V': return Buf::HttpUserAgent;
    case 'W': return Buf::HttpHost;
    case 'Q': return Buf::HttpResponseBody;
  }
  return Buf::Packet;
}

// urilen: N, <N, >N, N<>M (exclusive), optionally ",raw" or ",norm".
bool parse_urilen(std::string_view v, Rule& r, std::string& err) {
  v = trim(v);
  if (size_t c = v.find(','); c != std::string_view::npos) {
    std::string_view kind = trim(v.substr(c + 1));
    if (kind == "raw")
      r.urilen_raw = true;
    else if (kind != "norm")
      return err = fmt::format("urilen: '{}' is not raw or norm", kind), false;
    v = trim(v.substr(0, c));
  }
  Rule tmp;
  if (!parse_dsize(v, tmp, err) || tmp.dsize_neg) return err = fmt::format("bad urilen '{}'", v), false;
  r.has_urilen = true;
  r.urilen_lo = tmp.dsize_lo;
  r.urilen_hi = tmp.dsize_hi;
  return true;
}

bool is_http_modifier(const std::string& k) {
  return k.rfind("http_", 0) == 0 || k.rfind("http.", 0) == 0 || k == "uricontent" || k == "file_data" ||
         k == "pkt_data" || k.rfind("tls", 0) == 0 || k.rfind("dns", 0) == 0 || k.rfind("ssl_", 0) == 0 ||
         k == "sip_method" || k == "dce_iface";
}

}  // namespace

bool parse_pcre(std::string_view v, Pcre& p, std::string& err) {
  v = trim(v);
  if (!v.empty() && v[0] == '!') p.neg = true, v = trim(v.substr(1));
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"')
    v = v.substr(1, v.size() - 2);  // unquoted: /x/ as Snort takes it
  size_t last = v.rfind('/');
  if (v.empty() || v[0] != '/' || last == 0 || last == std::string_view::npos)
    return err = "pcre must look like \"/pattern/flags\"", false;
  p.pattern = std::string(v.substr(1, last - 1));
  p.flags = std::string(v.substr(last + 1));
  // captures in order after the flags: ", pkt:NAME, flow:NAME, alert:NAME"
  if (size_t comma = p.flags.find(','); comma != std::string::npos) {
    std::string list = p.flags.substr(comma + 1);
    p.flags = std::string(trim(std::string_view(p.flags).substr(0, comma)));
    uint16_t group = 0;
    for (std::string_view w : split_list(list)) {
      size_t colon = w.find(':');
      std::string_view scope = trim(w.substr(0, colon)), name = colon == w.npos ? "" : trim(w.substr(colon + 1));
      PcreCapture c;
      if (scope == "pkt")
        c.scope = PcreCapture::Pkt;
      else if (scope == "flow")
        c.scope = PcreCapture::Flow;
      else if (scope == "alert")
        c.scope = PcreCapture::Alert;
      else
        return err = fmt::format("pcre capture '{}': pkt:NAME, flow:NAME or alert:NAME", w), false;
      if (name.empty() || name.size() > 64) return err = fmt::format("pcre capture '{}': a name is needed", w), false;
      c.name = std::string(name);
      c.group = ++group;
      p.captures.push_back(std::move(c));
    }
  }
#ifdef SHOAL_HAVE_PCRE2
  uint32_t opt = 0;
  for (char f : p.flags) {
    switch (f) {
      case 'i': opt |= PCRE2_CASELESS; break;
      case 's': opt |= PCRE2_DOTALL; break;
      case 'm': opt |= PCRE2_MULTILINE; break;
      case 'x': opt |= PCRE2_EXTENDED; break;
      case 'A': opt |= PCRE2_ANCHORED; break;
      case 'E': opt |= PCRE2_DOLLAR_ENDONLY; break;
      case 'G': opt |= PCRE2_UNGREEDY; break;
      case 'R': p.relative = true; break;
      case 'B': break;  // raw bytes: the only buffer there is
      case 'O': break;  // override the match limits: ours stay
      default:
        if (pcre_buffer_flag(f)) {
          if (p.buffer_flag) return err = "a pcre names two HTTP buffers", false;
          p.buffer_flag = f;
          break;
        }
        return err = fmt::format(
                   "pcre flag '{}' is not supported (HTTP buffers and others need a parser "
                   "this engine does not have)",
                   f),
               false;
    }
  }
  int code;
  PCRE2_SIZE off;
  pcre2_code* c =
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(p.pattern.data()), p.pattern.size(), opt, &code, &off, nullptr);
  if (!c) {
    PCRE2_UCHAR msg[256];
    pcre2_get_error_message(code, msg, sizeof msg);
    return err = fmt::format("pcre /{}/ does not compile at offset {}: {}", p.pattern, off,
                             reinterpret_cast<const char*>(msg)),
           false;
  }
  p.code = std::shared_ptr<void>(c, [](void* x) { pcre2_code_free(static_cast<pcre2_code*>(x)); });
  // named groups that say where they go: pkt_NAME, flow_NAME, alert_NAME
  uint32_t names = 0, entry = 0, groups = 0;
  PCRE2_SPTR table = nullptr;
  pcre2_pattern_info(c, PCRE2_INFO_NAMECOUNT, &names);
  pcre2_pattern_info(c, PCRE2_INFO_NAMEENTRYSIZE, &entry);
  pcre2_pattern_info(c, PCRE2_INFO_NAMETABLE, &table);
  pcre2_pattern_info(c, PCRE2_INFO_CAPTURECOUNT, &groups);
  for (uint32_t i = 0; i < names && table; ++i) {
    const uint8_t* e = reinterpret_cast<const uint8_t*>(table) + size_t(i) * entry;
    std::string_view name(reinterpret_cast<const char*>(e + 2));
    PcreCapture cap;
    cap.group = uint16_t(e[0] << 8 | e[1]);
    if (name.starts_with("pkt_"))
      cap.scope = PcreCapture::Pkt, cap.name = name.substr(4);
    else if (name.starts_with("flow_"))
      cap.scope = PcreCapture::Flow, cap.name = name.substr(5);
    else if (name.starts_with("alert_"))
      cap.scope = PcreCapture::Alert, cap.name = name.substr(6);
    else
      continue;  // (a named group for the pattern's own use)
    if (!cap.name.empty()) p.captures.push_back(std::move(cap));
  }
  for (const PcreCapture& cap : p.captures)
    if (cap.group > groups || cap.group > 15)
      return err = fmt::format("pcre /{}/: capture {} ({}) names group {}, and it has {} (15 at most are kept)",
                               p.pattern, cap.name, cap.group, cap.group, groups),
             false;
  if (!p.captures.empty() && p.neg) return err = "a negated pcre captures nothing", false;
  return true;
#else
  return err = "pcre needs PCRE2, which this build lacks", false;
#endif
}

namespace {
// A list matches when any positive member does (or it has none) and no
// negated member excludes the value.
template <class Set, class V>
bool list_match(const Set& s, const V& v) {
  bool has_pos = false, pos = false;
  for (const Set& k : s.kids) {
    if (k.neg) {
      if (!k.match(v)) return false;
    } else {
      has_pos = true;
      pos = pos || k.match(v);
    }
  }
  return !has_pos || pos;
}
}  // namespace

bool AddrSet::match(const Addr& a) const {
  bool in;
  if (any) {
    in = true;
  } else if (list) {
    in = list_match(*this, a);
  } else {
    in = a.v6 == v6;
    for (uint32_t bit = 0; in && bit < len; bit += 8) {
      uint32_t n = std::min<uint32_t>(8, len - bit);
      uint8_t m = uint8_t(0xff << (8 - n));
      in = (a.b[bit / 8] & m) == (net[bit / 8] & m);
    }
  }
  return neg ? !in : in;
}

bool PortSet::match(uint16_t p) const {
  if (bits) return (*bits)[p >> 6] >> (p & 63) & 1;
  bool in = any ? true : list ? list_match(*this, p) : p >= lo && p <= hi;
  return neg ? !in : in;
}

std::string RuleProblem::str() const {
  return sid ? fmt::format("{}:{}: sid {}: {}", file, line, sid, what) : fmt::format("{}:{}: {}", file, line, what);
}

const std::string* Vars::get(const std::string& name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : &it->second;
}

bool Vars::load_text(const std::string& text, const std::string& name, std::string& err) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  while (std::getline(in, line)) {
    ++n;
    std::string_view l = trim(line);
    if (l.empty() || l[0] == '#' || l == "---" || l == "%YAML 1.1") continue;
    // Snort: var/ipvar/portvar NAME VALUE
    for (const char* kw : {"var ", "ipvar ", "portvar "})
      if (l.rfind(kw, 0) == 0) {
        std::string_view rest = trim(l.substr(std::strlen(kw)));
        size_t sp = rest.find_first_of(" \t");
        if (sp == std::string_view::npos) return err = fmt::format("{}:{}: '{}' has no value", name, n, l), false;
        vars_[std::string(rest.substr(0, sp))] = unquote(trim(rest.substr(sp)));
        l = {};
        break;
      }
    if (l.empty()) continue;
    // Suricata YAML: NAME: "value" under vars/address-groups/port-groups;
    // other keys (lower case, sections) are not variables.
    size_t colon = l.find(':');
    if (colon == std::string_view::npos) continue;
    std::string key(trim(l.substr(0, colon)));
    std::string_view val = trim(l.substr(colon + 1));
    if (key.empty() || val.empty() || !std::isupper(uint8_t(key[0]))) continue;
    if (!std::all_of(key.begin(), key.end(),
                     [](char c) { return std::isupper(uint8_t(c)) || std::isdigit(uint8_t(c)) || c == '_'; }))
      continue;
    if (size_t hash = val.find(" #"); hash != std::string_view::npos && val[0] != '"') val = trim(val.substr(0, hash));
    vars_[key] = unquote(val);
  }
  return true;
}

// Suricata's default variables: the vars of the suricata.yaml it ships.
const char* const kSuricataDefaultVars = R"(vars:
  address-groups:
    HOME_NET: "[192.168.0.0/16,10.0.0.0/8,172.16.0.0/12]"
    EXTERNAL_NET: "!$HOME_NET"
    HTTP_SERVERS: "$HOME_NET"
    SMTP_SERVERS: "$HOME_NET"
    SQL_SERVERS: "$HOME_NET"
    DNS_SERVERS: "$HOME_NET"
    TELNET_SERVERS: "$HOME_NET"
    AIM_SERVERS: "$EXTERNAL_NET"
    DC_SERVERS: "$HOME_NET"
    DNP3_SERVER: "$HOME_NET"
    DNP3_CLIENT: "$HOME_NET"
    MODBUS_CLIENT: "$HOME_NET"
    MODBUS_SERVER: "$HOME_NET"
    ENIP_CLIENT: "$HOME_NET"
    ENIP_SERVER: "$HOME_NET"
  port-groups:
    HTTP_PORTS: "80"
    SHELLCODE_PORTS: "!80"
    ORACLE_PORTS: 1521
    SSH_PORTS: 22
    DNP3_PORTS: 20000
    MODBUS_PORTS: 502
    FILE_DATA_PORTS: "[$HTTP_PORTS,110,143]"
    FTP_PORTS: 21
    GENEVE_PORTS: 6081
    VXLAN_PORTS: 4789
    TEREDO_PORTS: 3544
    SIP_PORTS: "[5060,5061]"
)";

bool Vars::load_suricata_defaults() {
  std::string err;
  return load_text(kSuricataDefaultVars, "suricata.yaml's defaults", err);
}

bool Vars::load_file(const std::string& path, std::string& err) {
  std::ifstream f(path);
  if (!f) return err = fmt::format("cannot read variables file '{}'", path), false;
  std::stringstream ss;
  ss << f.rdbuf();
  return load_text(ss.str(), path, err);
}

bool parse_rule(const std::string& text, const Vars& vars, Rule& r, std::string& err) {
  std::string_view s = trim(text);
  size_t paren = s.find('(');
  if (paren == std::string_view::npos || s.back() != ')')
    return err = "a rule is 'action proto src sport -> dst dport (options)'", false;
  // The header: seven fields, lists may hold spaces.
  std::vector<std::string> f;
  std::string_view h = trim(s.substr(0, paren));
  for (size_t i = 0; i < h.size();) {
    while (i < h.size() && std::isspace(uint8_t(h[i]))) ++i;
    if (i >= h.size()) break;
    size_t start = i;
    int depth = 0;
    for (; i < h.size() && (depth > 0 || !std::isspace(uint8_t(h[i]))); ++i)
      depth += h[i] == '[' ? 1 : h[i] == ']' ? -1 : 0;
    if (depth != 0) return err = fmt::format("unterminated address or port list in '{}'", h.substr(start)), false;
    f.emplace_back(h.substr(start, i - start));
  }
  if (f.size() != 7)
    return err = fmt::format("the header has {} fields, not 7 (action proto src sport dir dst dport)", f.size()), false;
  static const char* kActions[] = {"alert", "log",       "pass",      "drop",       "reject",
                                   "sdrop", "rejectsrc", "rejectdst", "rejectboth", "config"};
  if (std::find(std::begin(kActions), std::end(kActions), f[0]) == std::end(kActions))
    return err = fmt::format("unknown action '{}'", f[0]), false;
  r.action = f[0];
  std::transform(f[1].begin(), f[1].end(), f[1].begin(), [](unsigned char c) { return char(std::tolower(c)); });
  if (f[1] == "tcp-pkt") {  // TCP rules matched on packets only (not on the reassembled stream)
    f[1] = "tcp";
    r.packet_only = true;
  }
  if (f[1] == "tcp-stream") {  // matched on the reassembled stream only (flow:only_stream)
    f[1] = "tcp";
    r.flow |= kFlowOnlyStream;
  }
  if (f[1] == "http" || f[1] == "http1") {
    r.app = kAppHttp;
    r.proto = Proto::TCP;
  } else if (f[1] == "dns") {
    r.app = kAppDns;  // over UDP and TCP
    r.proto = Proto::IP;
  } else if (f[1] == "tls") {
    r.app = kAppTls;
    r.proto = Proto::TCP;
  } else if (f[1] == "ssh") {
    r.app = kAppSsh;
    r.proto = Proto::TCP;
  } else if (f[1] == "ftp") {
    r.app = kAppFtp;
    r.proto = Proto::TCP;
  } else if (f[1] == "smtp") {
    r.app = kAppSmtp;
    r.proto = Proto::TCP;
  } else if (f[1] == "sip") {
    r.app = kAppSip;  // over UDP and TCP
    r.proto = Proto::IP;
  } else if (f[1] == "ip" || f[1] == "pkthdr")
    r.proto = Proto::IP;
  else if (f[1] == "tcp")
    r.proto = Proto::TCP;
  else if (f[1] == "udp")
    r.proto = Proto::UDP;
  else if (f[1] == "icmp")
    r.proto = Proto::ICMP;
  else if (f[1] == "icmpv4")
    r.proto = Proto::ICMP4;
  else if (f[1] == "icmpv6")
    r.proto = Proto::ICMP6;
  else if (f[1] == "ipv4" || f[1] == "ip4")
    r.proto = Proto::IP4;
  else if (f[1] == "ipv6" || f[1] == "ip6")
    r.proto = Proto::IP6;
  else if (f[1] == "sctp")
    r.proto = Proto::SCTP;
  else
    return err = fmt::format(
               "protocol '{}' is not supported (ip, ipv4, ipv6, tcp, udp, sctp, icmp, icmpv4, icmpv6; application "
               "protocols need parsers this engine "
               "does not have)",
               f[1]),
           false;
  if (f[4] == "<>")
    r.bidirectional = true;
  else if (f[4] == "=>")
    r.transactional = true;
  else if (f[4] != "->")
    return err = fmt::format("direction '{}' is not ->, <> or =>", f[4]), false;
  if (!parse_addr(f[2], vars, r.src, err) || !parse_port(f[3], vars, r.sport, err) ||
      !parse_addr(f[5], vars, r.dst, err) || !parse_port(f[6], vars, r.dport, err))
    return false;

  std::vector<std::pair<std::string, std::string>> opts;
  if (!split_options(s.substr(paren + 1, s.size() - paren - 2), opts, err)) return false;
  // sid first, so later errors can name it
  for (auto& [k, v] : opts)
    if (k == "sid" && !parse_u32(v, r.sid)) return err = fmt::format("bad sid '{}'", v), false;
  Content* last = nullptr;
  VarNames var_names;  // byte_extract and byte_math results, in order
  Item* last_item = nullptr;
  Buf sticky = Buf::Packet;
  size_t sticky_at = SIZE_MAX;        // the item count when a sticky buffer was named last
  std::vector<size_t> sticky_starts;  // items named right after a sticky buffer
  bool file_data = false;             // file.data / file_data named, without a side
  std::vector<Transform> pending_xf;  // the transforms named after the last sticky buffer
  size_t b64_at = SIZE_MAX;           // the last base64_decode item
  Buf b64_buf = Buf::Packet;          // ... and the buffer it decodes
  bool in_b64 = false;                // base64_data is the sticky buffer: items read the decoded bytes
  int8_t xf_index = -1;               // ... as a chain of Rule::xforms, once an item uses it
  auto need_last = [&](const std::string& k) {
    if (!last) err = fmt::format("'{}' needs a content before it", k);
    return last != nullptr;
  };
  auto num = [&](const std::string& k, const std::string& v, int32_t& out) {
    if (!parse_i32(v, out))
      err = fmt::format("{}: '{}' is not a number (byte_extract variables are not supported)", k, v);
    return err.empty();
  };
  for (auto& [k, v] : opts) {
    size_t items_before = r.items.size();
    Transform t;
    bool is_transform = false;
    parse_transform(k, trim(v), t, is_transform, err);
    if (is_transform) {
      if (!err.empty()) return false;
      if (in_b64) return err = fmt::format("transform '{}' of base64_data is not supported", k), false;
      if (sticky == Buf::Packet || sticky_at == SIZE_MAX)
        return err = fmt::format("transform '{}' needs a sticky buffer before it", k), false;
      if (r.items.size() != sticky_at)
        return err = fmt::format("transform '{}' comes after its buffer's contents", k), false;
      pending_xf.push_back(std::move(t));
      continue;
    }
    if (k == "msg") {
      r.msg = unquote(v);
    } else if (k == "sid") {
    } else if (k == "gid") {
      if (!parse_u32(v, r.gid)) return err = fmt::format("bad gid '{}'", v), false;
    } else if (k == "rev") {
      if (!parse_u32(v, r.rev)) return err = fmt::format("bad rev '{}'", v), false;
    } else if (k == "classtype") {
      r.classtype = v;
    } else if (k == "priority") {
      if (!parse_i32(v, r.priority) || r.priority < 1) return err = fmt::format("bad priority '{}'", v), false;
    } else if (k == "threshold" || k == "detection_filter") {
      if (!parse_threshold(v, k == "detection_filter", r, err)) return false;
    } else if (k == "reference" || k == "metadata" || k == "rawbytes" || k == "target") {
    } else if (k == "flow") {
      if (!parse_flow(v, r, err)) return false;
    } else if (k == "flowbits") {
      if (!parse_flowbits(v, r, err)) return false;
    } else if (k == "flowint") {
      if (!parse_flowint(v, r, err)) return false;
    } else if (k == "requires") {
      if (!parse_requires(v, err)) return false;
    } else if (k == "tag") {
      if (!parse_tag(v, r, err)) return false;
    } else if (k == "hostbits" || k == "xbits") {
      if (!parse_hostbits(v, k == "xbits", r, err)) return false;
    } else if (k == "noalert") {
      r.noalert = true;
    } else if (k == "app-layer-event") {
      std::string_view name = trim(v);
      uint16_t app = 0;
      uint8_t e = 0;
      if (!find_app_event(name, app, e))
        return err = fmt::format("app-layer-event '{}' is not an event this engine raises", name), false;
      if (r.app && r.app != app)
        return err = fmt::format("app-layer-event '{}' on a {} rule", name, app_name(r.app)), false;
      r.app = app;
      r.app_events |= uint64_t(1) << e;
    } else if (k == "decode-event") {
      DecodeEvent e;
      std::string_view name = trim(v);
      if (!find_decode_event(name, e))
        return err = fmt::format("decode-event '{}' is not an event this decoder raises", name), false;
      r.decode_events |= event_bit(e);
    } else if (k == "stream-event") {
      std::string_view name = trim(v);
      uint8_t e = 0;
      if (!find_stream_event(name, e))
        return err = fmt::format(
                   "stream-event '{}' is not an event this engine raises (it raises Suricata's TCP session "
                   "events and reassembly_seq_gap and reassembly_depth_reached)",
                   name),
               false;
      r.stream_events |= uint64_t(1) << e;
    } else if (k == "alert") {
      if (!v.empty()) return err = "'alert' takes no value", false;
      r.force_alert = true;
    } else if (k == "config") {
      // Suricata's conditional logging; the form it has for transactions
      std::string c;
      for (char ch : v)
        if (!std::isspace(uint8_t(ch))) c += ch;
      if (c != "loggingdisable,typetx,scopetx")
        return err = fmt::format("config: '{}': only 'logging disable, type tx, scope tx' is supported", v), false;
      r.no_tx_log = true;
    } else if (Buf b; find_buf(kSticky, std::size(kSticky), k, b)) {
      // a transactional rule may say which side: file.data: to_server is the request's body
      std::string_view side = trim(v);
      if (!side.empty() && !(r.transactional && (side == "to_server" || side == "to_client")))
        return err = fmt::format("'{}' takes no value{}", k, r.transactional ? " but to_server or to_client" : ""),
               false;
      if (side == "to_server" && b == Buf::HttpResponseBody) b = Buf::HttpRequestBody;
      file_data |= (k == "file.data" || k == "file_data") && side.empty();
      if (r.app == kAppSmtp && b == Buf::HttpResponseBody) b = Buf::SmtpFileData;  // an email's attachments
      if (r.app == kAppSmtp && b == Buf::HttpFileName) b = Buf::SmtpFileName;
      in_b64 = false;
      sticky = b;
      sticky_at = r.items.size();
      sticky_starts.push_back(sticky_at);
      pending_xf.clear();
      xf_index = -1;
      last = nullptr;  // modifiers after a sticky buffer have no content to modify
      last_item = nullptr;
    } else if (k == "base64_decode") {
      // decodes from the buffer it reads (the sticky one, or a relative one's, as byte_*)
      if (in_b64) return err = "base64_decode reads a buffer, not base64_data", false;
      Item it;
      it.buf = sticky;
      if (!parse_base64_decode(v, it, err)) return false;
      if (it.byte.relative && !r.items.empty() && sticky_at != r.items.size()) it.buf = r.items.back().buf;
      b64_buf = it.buf;
      b64_at = r.items.size();
      r.items.push_back(std::move(it));
      last = nullptr;
      last_item = nullptr;
    } else if (k == "base64_data") {
      // a sticky buffer: what the base64_decode just before decoded
      if (!trim(v).empty()) return err = "'base64_data' takes no value", false;
      if (b64_at == SIZE_MAX) return err = "base64_data needs a base64_decode before it", false;
      if (b64_at + 1 != r.items.size()) return err = "base64_data comes right after its base64_decode", false;
      in_b64 = true;
      sticky = b64_buf;
      sticky_at = r.items.size();
      last = nullptr;
      last_item = nullptr;
    } else if (find_buf(kModifiers, std::size(kModifiers), k, b)) {
      if (!need_last(k)) return false;
      if (in_b64) return err = fmt::format("'{}' on a content of base64_data", k), false;
      last_item->buf = b;
    } else if (k == "absent") {
      // absent / absent: or_else, right after a sticky buffer of a transaction
      std::string_view w = trim(v);
      if (!w.empty() && w != "or_else") return err = fmt::format("absent: '{}' is not or_else", w), false;
      if (sticky == Buf::Packet || packet_buf(sticky) || r.items.size() != sticky_at)
        return err = "absent comes right after an application-layer sticky buffer", false;
      Item it;
      it.buf = sticky;
      it.byte.kind = ByteOp::Absent;
      it.byte.neg = !w.empty();
      r.items.push_back(std::move(it));
      last = nullptr;
      last_item = nullptr;
    } else if (k == "dataset") {
      // the sticky buffer's value tested against, or added to, a named set
      if (sticky == Buf::Packet) return err = "dataset needs a sticky buffer before it", false;
      auto use = std::make_shared<DatasetUse>();
      if (!parse_dataset(v, *use, err)) return false;
      Item it;
      it.buf = sticky;
      it.byte.kind = ByteOp::Dataset;
      it.dataset_use = std::move(use);
      r.items.push_back(std::move(it));
      last = nullptr;
      last_item = nullptr;
    } else if (k == "bsize") {
      // the size of the sticky buffer it follows: N, <N, >N, <=N, >=N, !N, N<>M
      if (sticky == Buf::Packet) return err = "bsize needs a sticky buffer before it", false;
      Rule tmp;
      if (!parse_dsize(v, tmp, err)) return err = fmt::format("bad bsize '{}'", trim(v)), false;
      Item it;
      it.buf = sticky;
      it.byte.kind = ByteOp::Bsize;
      it.byte.neg = tmp.dsize_neg;
      it.byte.value = tmp.dsize_lo;
      it.byte.hi = tmp.dsize_hi;
      r.items.push_back(std::move(it));
      last = nullptr;
      last_item = nullptr;
    } else if (k == "isdataat" || k == "byte_test" || k == "byte_jump" || k == "byte_extract" || k == "byte_math") {
      Item it;
      it.buf = sticky;
      if (!(k == "isdataat"       ? parse_isdataat(v, it, var_names, err)
            : k == "byte_test"    ? parse_byte_test(v, it, var_names, err)
            : k == "byte_jump"    ? parse_byte_jump(v, it, var_names, err)
            : k == "byte_extract" ? parse_byte_extract(v, it, var_names, err)
                                  : parse_byte_math(v, it, var_names, err)))
        return false;
      // a relative check reads the buffer of the item before it (Snort's
      // http_* modifiers), unless a sticky buffer was named after that item
      if (it.byte.relative && !r.items.empty() && sticky_at != r.items.size()) it.buf = r.items.back().buf;
      r.items.push_back(std::move(it));
      last = nullptr;
      last_item = nullptr;
    } else if (k == "ipv4-csum" || k == "tcpv4-csum" || k == "tcpv6-csum" || k == "udpv4-csum" || k == "udpv6-csum" ||
               k == "icmpv4-csum" || k == "icmpv6-csum") {
      static const std::pair<const char*, Rule::Csum::Kind> kCsums[] = {
          {"ipv4-csum", Rule::Csum::Ipv4},    {"tcpv4-csum", Rule::Csum::Tcpv4}, {"tcpv6-csum", Rule::Csum::Tcpv6},
          {"udpv4-csum", Rule::Csum::Udpv4},  {"udpv6-csum", Rule::Csum::Udpv6}, {"icmpv4-csum", Rule::Csum::Icmpv4},
          {"icmpv6-csum", Rule::Csum::Icmpv6}};
      std::string w = unquote(std::string(trim(v)));
      if (w != "valid" && w != "invalid") return err = fmt::format("{}: '{}' is not valid or invalid", k, w), false;
      for (auto& [n, kind] : kCsums)
        if (k == n) r.csums.push_back({kind, w == "valid"});
    } else if (k == "itype" || k == "icode" || k == "icmp_id" || k == "icmp_seq" || k == "ttl" || k == "id" ||
               k == "seq" || k == "ack" || k == "tcp.mss" || k == "icmpv6.mtu" || k == "vlan.layers") {
      static const std::pair<const char*, FieldCond::Field> kFields[] = {{"itype", FieldCond::IcmpType},
                                                                         {"icode", FieldCond::IcmpCode},
                                                                         {"icmp_id", FieldCond::IcmpId},
                                                                         {"icmp_seq", FieldCond::IcmpSeq},
                                                                         {"ttl", FieldCond::Ttl},
                                                                         {"id", FieldCond::IpId},
                                                                         {"seq", FieldCond::TcpSeq},
                                                                         {"ack", FieldCond::TcpAck},
                                                                         {"tcp.mss", FieldCond::TcpMss},
                                                                         {"icmpv6.mtu", FieldCond::Icmpv6Mtu},
                                                                         {"vlan.layers", FieldCond::VlanLayers}};
      for (auto& [n, f] : kFields)
        if (k == n && !parse_field(v, f, n, r, err)) return false;
    } else if (k == "vlan.id") {  // [op]id[,layer]: layer 0 to 2, -3 to -1, any (default) or all
      std::string_view pv = trim(v), layer;
      if (size_t comma = pv.find(','); comma != std::string_view::npos)
        layer = trim(pv.substr(comma + 1)), pv = trim(pv.substr(0, comma));
      if (!parse_field(pv, FieldCond::VlanId, "vlan.id", r, err)) return false;
      FieldCond& c = r.fields.back();
      if (c.hi != UINT64_MAX && c.hi > 4095) return err = fmt::format("vlan.id: '{}' is past 4095", pv), false;
      if (layer == "all") {
        c.layer = FieldCond::kAllLayers;
      } else if (!layer.empty() && layer != "any") {
        int n = 0;
        auto [end, ec] = std::from_chars(layer.data(), layer.data() + layer.size(), n);
        if (ec != std::errc() || end != layer.data() + layer.size() || n < -3 || n > 2)
          return err = fmt::format("vlan.id: layer '{}' is not -3 to 2, any or all", layer), false;
        c.layer = int8_t(n);
      }
    } else if (k == "dns.opcode" || k == "dns.rcode" || k == "dns.rrtype") {
      std::string pv(trim(v));
      if (k == "dns.rrtype") {  // a type's name for its number
        bool neg = !pv.empty() && pv[0] == '!';
        if (int t = dns_rrtype_value(neg ? pv.substr(1) : pv); t >= 0) pv = (neg ? "!" : "") + std::to_string(t);
      }
      FieldCond::Field f = k == "dns.opcode"  ? FieldCond::DnsOpcode
                           : k == "dns.rcode" ? FieldCond::DnsRcode
                                              : FieldCond::DnsRrtype;
      if (!parse_field(pv, f, k.c_str(), r, err)) return false;
      r.tx_fields.push_back(r.fields.back());
      r.fields.pop_back();
    } else if (k == "tls.subject" || k == "tls.issuerdn") {
      // Suricata's older form: the value is a substring of the subject (issuer); '!' negates
      std::string pv(trim(v));
      bool neg = !pv.empty() && pv[0] == '!';
      if (neg) pv.erase(0, 1);
      pv = unquote(pv);
      if (pv.empty()) return err = fmt::format("{}: an empty value", k), false;
      Item it;
      it.buf = k == "tls.subject" ? Buf::TlsCertSubject : Buf::TlsCertIssuer;
      it.content.bytes = pv;
      it.content.neg = neg;
      r.items.push_back(std::move(it));
      last = nullptr;
      last_item = nullptr;
    } else if (k == "filename" || k == "fileext") {
      // Suricata's older forms of file.name: a part of the name (fileext:
      // its extension, after a dot), case ignored; '!' negates
      std::string_view pv = trim(v);
      Item it;
      if (!pv.empty() && pv[0] == '!') it.content.neg = true, pv = trim(pv.substr(1));
      std::string quoted = !pv.empty() && pv[0] == '"' ? std::string(pv) : fmt::format("\"{}\"", pv);
      if (!parse_content_bytes(quoted, it.content.bytes, err)) return err = fmt::format("{}: {}", k, err), false;
      if (k == "fileext") it.content.bytes.insert(0, 1, '.'), it.content.endswith = true;
      it.content.nocase = true;
      it.buf = r.app == kAppSmtp ? Buf::SmtpFileName : Buf::HttpFileName;
      r.items.push_back(std::move(it));
      last = nullptr;
      last_item = nullptr;
    } else if (k == "filemd5" || k == "filesha1" || k == "filesha256") {
      FileHashCond c;
      c.algo = k == "filemd5" ? kFileMd5 : k == "filesha1" ? kFileSha1 : kFileSha256;
      std::string_view pv = trim(v);
      if (!pv.empty() && pv[0] == '!') c.neg = true, pv = trim(pv.substr(1));
      c.list = unquote(std::string(pv));
      if (c.list.empty()) return err = fmt::format("{} names no file of digests", k), false;
      r.file_hashes.push_back(std::move(c));
    } else if (k == "filesize") {
      // filesize:[to_server,|to_client,]N|<N|>N|N<>M: a file once it is whole
      std::string_view pv = trim(v);
      FieldCond::Field f = FieldCond::FileSize;
      for (auto [name, side] : {std::pair<std::string_view, FieldCond::Field>{"to_server", FieldCond::FileSizeToServer},
                                {"to_client", FieldCond::FileSizeToClient}})
        if (pv.substr(0, name.size()) == name) {
          f = side;
          pv = trim(pv.substr(name.size()));
          if (pv.empty() || pv[0] != ',') return err = fmt::format("filesize: '{}' needs a size after it", name), false;
          pv = trim(pv.substr(1));
        }
      if (!parse_field(pv, f, "filesize", r, err)) return false;
      r.tx_fields.push_back(r.fields.back());
      r.fields.pop_back();
    } else if (k == "stream_size") {
      std::vector<std::string_view> f;
      std::string_view rest = trim(v);
      for (size_t c; (c = rest.find(',')) != std::string_view::npos; rest = rest.substr(c + 1))
        f.push_back(trim(rest.substr(0, c)));
      f.push_back(trim(rest));
      static const std::pair<const char*, char> kOps[] = {{"<", '<'},  {">", '>'},  {"=", '='},
                                                          {"!=", '!'}, {"<=", 'l'}, {">=", 'g'}};
      uint8_t side = f.size() == 3 ? (f[0] == "client"   ? 1
                                      : f[0] == "server" ? 2
                                      : f[0] == "both"   ? 3
                                      : f[0] == "either" ? 4
                                                         : 0)
                                   : 0;
      char op = 0;
      for (auto& [name, o] : kOps)
        if (f.size() == 3 && f[1] == name) op = o;
      uint32_t n = 0;
      if (!side || !op || !parse_u32(f[2], n))
        return err = fmt::format("stream_size '{}': client|server|both|either, <|>|=|!=|<=|>=, a number", trim(v)),
               false;
      r.stream_size = {side, op, n};
    } else if (k == "ipopts") {
      static const std::pair<const char*, uint16_t> kOpts[] = {
          {"rr", kIpOptRr},     {"eol", kIpOptEol},     {"nop", kIpOptNop},   {"ts", kIpOptTs},
          {"sec", kIpOptSec},   {"esec", kIpOptEsec},   {"lsrr", kIpOptLsrr}, {"lsrre", kIpOptLsrr},
          {"ssrr", kIpOptSsrr}, {"satid", kIpOptSatid}, {"any", kIpOptAny}};
      std::string_view o = trim(v);
      uint16_t bit = 0;
      for (auto& [name, b] : kOpts)
        if (o == name) bit = b;
      if (!bit) return err = fmt::format("ipopts: '{}' is not an IPv4 option this keyword names", o), false;
      if (r.ipopts) return err = "ipopts: one option per rule", false;
      r.ipopts = bit;
    } else if (k == "tls.cert_chain_len") {
      if (!parse_field(v, FieldCond::TlsCertChainLen, k.c_str(), r, err)) return false;
      r.tx_fields.push_back(r.fields.back());
      r.fields.pop_back();
    } else if (k == "ftp.mode" || k == "ftp.reply_received") {
      std::string pv(trim(v));
      FieldCond c;
      bool mode = k == "ftp.mode";
      c.field = mode ? FieldCond::FtpMode : FieldCond::FtpReplyReceived;
      if (mode ? pv == "active" : (pv == "yes" || pv == "on" || pv == "true"))
        c.lo = c.hi = 1;
      else if (mode ? pv == "passive" : (pv == "no" || pv == "off" || pv == "false"))
        c.lo = c.hi = mode ? 2 : 0;
      else
        return err = fmt::format("{}: '{}' is not {}", k, pv, mode ? "active or passive" : "yes or no"), false;
      r.tx_fields.push_back(c);
    } else if (k == "ftp.dynamic_port") {
      // N, =N, !N, <N, >N, <=N, >=N, N-M (Suricata's integer forms)
      std::string pv(trim(v));
      if (!pv.empty() && pv[0] == '=') pv.erase(0, 1);
      if (size_t dash = pv.find('-'); dash != std::string::npos && dash > 0) pv.replace(dash, 1, "<>");
      if (!parse_field(pv, FieldCond::FtpDynamicPort, k.c_str(), r, err)) return false;
      r.tx_fields.push_back(r.fields.back());
      r.fields.pop_back();
    } else if (k == "tls.version") {
      std::string pv(trim(v));
      static const std::pair<const char*, int> kV[] = {
          {"1.0", 0x0301}, {"1.1", 0x0302}, {"1.2", 0x0303}, {"1.3", 0x0304}, {"3.0", 0x0300}};
      FieldCond c;
      c.field = FieldCond::TlsVersion;
      long n = -1;
      for (auto& [name, num] : kV)
        if (pv == name) n = num;
      if (n < 0 && pv.rfind("0x", 0) == 0) n = std::strtol(pv.c_str() + 2, nullptr, 16);
      if (n <= 0 || n > 0xffff) return err = fmt::format("tls.version '{}': 1.0, 1.1, 1.2, 1.3 or 0xNNNN", pv), false;
      c.lo = c.hi = uint64_t(n);
      r.tx_fields.push_back(c);
    } else if (k == "ssl_state" || k == "ssl_version") {
      // ssl_state:[!]client_hello|server_hello|client_keyx|server_keyx|unknown
      // ssl_version:[!]sslv2,sslv3,tls1.0,tls1.1,tls1.2,tls1.3
      bool state = k == "ssl_state";
      static const std::pair<const char*, uint64_t> kStates[] = {{"client_hello", FieldCond::kClientHello},
                                                                 {"server_hello", FieldCond::kServerHello},
                                                                 {"client_keyx", FieldCond::kClientKeyx},
                                                                 {"server_keyx", FieldCond::kServerKeyx},
                                                                 {"unknown", FieldCond::kUnknown}};
      static const std::pair<const char*, uint64_t> kVersions[] = {{"sslv2", 1},  {"sslv3", 2},   {"tls1.0", 4},
                                                                   {"tls1.1", 8}, {"tls1.2", 16}, {"tls1.3", 32}};
      FieldCond c;
      c.field = state ? FieldCond::SslState : FieldCond::SslVersion;
      c.lo = c.hi = 0;  // the items asked for, and those negated (any item that holds matches)
      std::string list(trim(v));
      for (char& ch : list)
        if (ch == '|') ch = ',';
      for (const std::string& raw : split_args(list)) {
        std::string_view item = trim(raw);
        bool neg = !item.empty() && item[0] == '!';
        if (neg) item = trim(item.substr(1));
        uint64_t bit = 0;
        using Names = std::span<const std::pair<const char*, uint64_t>>;
        for (auto& [name, b] : state ? Names(kStates) : Names(kVersions))
          if (item == name) bit = b;
        if (!bit) return err = fmt::format("{}: '{}' is not known", k, item), false;
        (neg ? c.hi : c.lo) |= bit;
      }
      if (!c.lo && !c.hi) return err = fmt::format("{}: nothing given", k), false;
      r.tx_fields.push_back(c);
    } else if (k == "ip_proto") {
      std::string pv(trim(v));
      static const std::pair<const char*, int> kNames[] = {{"icmp", 1},       {"igmp", 2},  {"ipip", 4},  {"tcp", 6},
                                                           {"udp", 17},       {"gre", 47},  {"esp", 50},  {"ah", 51},
                                                           {"ipv6-icmp", 58}, {"pim", 103}, {"sctp", 132}};
      for (auto& [n, num] : kNames)
        if (pv == n || pv == std::string("!") + n) pv = (pv[0] == '!' ? "!" : "") + std::to_string(num);
      if (!parse_field(pv, FieldCond::IpProto, "ip_proto", r, err)) return false;
    } else if (k == "fragbits") {
      std::string_view f = trim(v);
      char mod = 0;
      uint8_t want = 0;
      for (char c : f) {
        if ((c == '+' || c == '*' || c == '!') && !mod)
          mod = c;
        else if (c == 'M')
          want |= 1;
        else if (c == 'D')
          want |= 2;
        else if (c == 'R')
          want |= 4;
        else
          return err = fmt::format("fragbits: '{}' is not M, D, R or a modifier (+ * !)", c), false;
      }
      if (!want) return err = "fragbits: no bits given", false;
      r.has_fragbits = true;
      r.fragbits.want = want, r.fragbits.mod = mod;
    } else if (k == "flags" || k == "tcp.flags") {
      if (!parse_flags(v, r, err)) return false;
    } else if (k == "urilen") {
      if (!parse_urilen(v, r, err)) return false;
    } else if (k == "content" || k == "uricontent") {
      Item it;
      std::string_view cv = trim(v);
      if (!cv.empty() && cv[0] == '!') it.content.neg = true, cv = trim(cv.substr(1));
      if (!parse_content_bytes(cv, it.content.bytes, err)) return false;
      it.buf = k == "uricontent" ? Buf::HttpUri : sticky;
      r.items.push_back(std::move(it));
      last = &r.items.back().content;
      last_item = &r.items.back();
    } else if (k == "startswith") {
      if (!need_last(k)) return false;
      if (last->has_offset || last->has_depth || last->relative())
        return err = "startswith cannot be combined with offset, depth, distance or within", false;
      last->has_offset = last->has_depth = true;
      last->offset = 0;
      last->depth = int32_t(last->bytes.size());
    } else if (k == "endswith") {
      if (!need_last(k)) return false;
      last->endswith = true;
    } else if (k == "prefilter") {
      // a hint for Suricata's prefilter choice: matching is the same without it
    } else if (k == "app-layer-protocol") {
      std::string_view a = trim(v);
      bool neg = !a.empty() && a[0] == '!';
      if (neg) a = trim(a.substr(1));
      if (a != "http" && a != "http1" && a != "dns" && a != "tls" && a != "sip" && a != "ssh" && a != "ftp" &&
          a != "smtp")
        return err = fmt::format(
                   "app-layer-protocol '{}': this engine detects http, dns, tls, sip, ssh, ftp and smtp only", a),
               false;
      r.has_app_cond = true;
      r.app_conds.push_back({uint16_t(a == "dns"    ? kAppDns
                                      : a == "tls"  ? kAppTls
                                      : a == "sip"  ? kAppSip
                                      : a == "ssh"  ? kAppSsh
                                      : a == "ftp"  ? kAppFtp
                                      : a == "smtp" ? kAppSmtp
                                                    : kAppHttp),
                             neg});
    } else if (k == "nocase") {
      if (!need_last(k)) return false;
      last->nocase = true;
    } else if (k == "fast_pattern") {
      if (!need_last(k)) return false;
      // fast_pattern:only, or a slice (offset,length) of the content: the
      // prefilter takes the whole content, which every match contains
      if (!v.empty() && v != "only") {
        auto sl = split_args(v);
        int32_t o = 0, n = 0;
        if (sl.size() != 2 || !parse_i32(sl[0], o) || !parse_i32(sl[1], n) || o < 0 || n < 1 ||
            size_t(o) + size_t(n) > last->bytes.size())
          return err = fmt::format("fast_pattern:{}: 'only' or offset,length within the content", v), false;
      }
      last->fast_pattern = true;
    } else if (k == "offset" || k == "depth" || k == "distance" || k == "within") {
      if (!need_last(k)) return false;
      int32_t x;
      int8_t var = -1;
      if (auto vn = var_names.find(trim(v)); vn != var_names.end()) {
        var = vn->second, x = k == "depth" || k == "within" ? int32_t(last->bytes.size()) : 0;
        (k == "offset"     ? last->var_offset
         : k == "depth"    ? last->var_depth
         : k == "distance" ? last->var_distance
                           : last->var_within) = var;
      } else if (!num(k, v, x)) {
        return false;
      }
      if (k == "offset")
        last->offset = x, last->has_offset = true;
      else if (k == "depth")
        last->depth = x, last->has_depth = true;
      else if (k == "distance")
        last->distance = x, last->has_distance = true;
      else
        last->within = x, last->has_within = true;
      if ((k == "depth" || k == "within") && x < int32_t(last->bytes.size()))
        return err = fmt::format("{}:{} is shorter than its content ({} bytes)", k, x, last->bytes.size()), false;
      if ((k == "offset" || k == "depth") && x < 0) return err = fmt::format("{} cannot be negative", k), false;
    } else if (k == "pcre") {
      Item it;
      it.is_pcre = true;
      if (!parse_pcre(v, it.pcre, err)) return false;
      it.buf = it.pcre.buffer_flag ? pcre_buf(it.pcre.buffer_flag)
               : it.pcre.relative && !r.items.empty() && sticky_at != r.items.size()
                   ? r.items.back().buf  // the buffer it is relative to
                   : sticky;
      r.items.push_back(std::move(it));
      last = nullptr;
      last_item = nullptr;
    } else if (k == "dsize") {
      if (!parse_dsize(v, r, err)) return false;
    } else if (is_http_modifier(k)) {
      return err = fmt::format("'{}' needs an application-layer buffer this engine does not have", k), false;
    } else {
      return err = fmt::format("option '{}' is not supported", k), false;
    }
    // base64_data's items: in the decoded buffer's run, reading what it decoded
    if (in_b64)
      for (size_t i = items_before; i < r.items.size(); ++i) {
        if (r.items[i].buf != b64_buf) return err = fmt::format("'{}' in base64_data reads another buffer", k), false;
        r.items[i].b64 = true;
      }
    // the items this option made in the sticky buffer read it through its transforms
    if (!pending_xf.empty())
      for (size_t i = items_before; i < r.items.size(); ++i)
        if (r.items[i].buf == sticky) {
          if (xf_index < 0) {
            r.xforms.push_back(pending_xf);
            xf_index = int8_t(r.xforms.size() - 1);
          }
          r.items[i].xform = xf_index;
        }
  }
  for (const Item& it : r.items)
    if (it.is_content() && it.content.relative() && (it.content.has_offset || it.content.has_depth))
      return err = "a content mixes offset/depth with distance/within", false;
  for (size_t i = 1; i < r.items.size(); ++i) {  // a relative item follows one in its own buffer
    Item& it = r.items[i];
    // (the first item of a sticky buffer is relative to its start, as Suricata)
    bool starts = std::find(sticky_starts.begin(), sticky_starts.end(), i) != sticky_starts.end();
    // an application buffer named again begins a run of its own (a
    // multi-buffer's runs may hold in different values, as Suricata's)
    it.run_start = starts && !packet_buf(it.buf) && it.buf == r.items[i - 1].buf;
    // base64_data's items end their run (Suricata inspects nothing after them in that buffer)
    if (it.b64 && !r.items[i - 1].b64 && r.items[i - 1].byte.kind != ByteOp::Base64Decode)
      return err = "base64_data's items follow its base64_decode", false;
    if (r.items[i - 1].b64 && !it.b64 && it.buf == r.items[i - 1].buf && !it.run_start)
      return err = fmt::format("base64_data's items come last in their buffer ({})", buf_name(it.buf)), false;
    if (it.relative() && it.buf != r.items[i - 1].buf && !starts)
      return err = fmt::format("a relative {} in {} follows an item in {}",
                               it.is_pcre                         ? "pcre"
                               : it.byte.kind == ByteOp::IsDataAt ? "isdataat"
                               : it.byte.kind == ByteOp::ByteTest ? "byte_test"
                               : it.byte.kind == ByteOp::ByteJump ? "byte_jump"
                                                                  : "content",
                               buf_name(it.buf), buf_name(r.items[i - 1].buf)),
             false;
  }
  // the buffers say whose transactions the rule reads
  if (r.uses_tx()) {
    // the protocols the rule's buffers, numbers and events belong to: one
    uint32_t apps = r.has_urilen ? 1u << kAppHttp : 0;
    if (r.app_events) apps |= 1u << r.app;
    for (const FieldCond& c : r.tx_fields) apps |= 1u << c.app();
    for (const Item& it : r.items)
      if (!packet_buf(it.buf))
        apps |= 1u << (dns_buf(it.buf)    ? kAppDns
                       : tls_buf(it.buf)  ? kAppTls
                       : sip_buf(it.buf)  ? kAppSip
                       : ssh_buf(it.buf)  ? kAppSsh
                       : ftp_buf(it.buf)  ? kAppFtp
                       : smtp_buf(it.buf) ? kAppSmtp
                                          : kAppHttp);
    if (__builtin_popcount(apps) > 1) return err = "buffers of two application protocols in one rule", false;
    if (!apps)
      apps =
          1u << (r.app ? unsigned(r.app) : unsigned(kAppHttp));  // (file digests only: the header's protocol's files)
    uint16_t app = uint16_t(__builtin_ctz(apps));
    if (r.app && r.app != app)
      return err = fmt::format("a {} rule reads {} buffers", app_name(r.app), app_name(app)), false;
    r.app = app;
    if (!r.file_hashes.empty() && app != kAppHttp && app != kAppSmtp)
      return err = fmt::format("file digests: {} carries no files this engine reads (http and smtp do)", app_name(app)),
             false;
  }
  for (const Item& it : r.items) r.header_bufs |= it.buf != Buf::Packet && packet_buf(it.buf);
  r.file_data_either =
      file_data && r.app == kAppHttp && !(r.flow & (kFlowToServer | kFlowToClient)) && !r.transactional;
  r.file_data_request =
      file_data && r.app == kAppHttp && (r.flow & kFlowToServer) &&
      std::none_of(r.items.begin(), r.items.end(), [](const Item& it) { return it.buf == Buf::HttpRequestBody; });
  if (r.stream_only()) {  // what a byte stream has: its bytes
    if (r.proto != Proto::TCP && r.proto != Proto::IP) return err = "only_stream: streams are TCP's", false;
    if (r.uses_tx() || r.header_bufs)
      return err = "only_stream: a stream rule reads the stream's bytes (content, pcre, byte_*), not other buffers",
             false;
    if (r.items.empty()) return err = "only_stream: the rule has no content or pcre to look for in the stream", false;
    if (r.has_dsize) return err = "only_stream: dsize is a packet's size, a stream has none", false;
    r.proto = Proto::TCP;
  }
  // Suricata's TCP payload rules: where a packet's data joined the
  // reassembled stream, the stream is inspected, not the packet; rules
  // that read a packet's own size or headers stay on packets
  r.stream_payload =
      (r.proto == Proto::TCP || r.proto == Proto::IP || r.proto == Proto::IP4 || r.proto == Proto::IP6) &&
      !r.stream_only() && !r.packet_only && !(r.flow & kFlowNoStream) && !r.uses_tx() && !r.items.empty() &&
      !r.header_bufs && !r.has_dsize && r.fields.empty() && r.csums.empty() && !r.has_flags && !r.has_fragbits &&
      !r.ipopts && !r.decode_events && !r.stream_events;
  for (const Item& it : r.items) r.stream_payload &= it.buf == Buf::Packet;
  for (const Item& it : r.items) r.captures |= it.is_pcre && !it.pcre.captures.empty();
  bool checks_flowbits = false;
  for (const Flowbit& fb : r.flowbits) checks_flowbits |= fb.check();
  r.ip_only = r.items.empty() && r.flowints.empty() && !r.decode_events && !r.stream_events && !r.ipopts &&
              !r.stream_size.side && !r.has_dsize && r.fields.empty() && r.csums.empty() && !r.has_flags &&
              !r.has_fragbits && !r.flow && !checks_flowbits && !r.has_app_cond && !r.app && !r.has_urilen &&
              r.sport.any && r.dport.any && !r.sport.neg && !r.dport.neg;
  // Suricata's IP-only classification (ports allowed, flow in both
  // directions or none), protocol-detection-only rules, and rules of an
  // application protocol: their pass or drop acts on the whole flow
  bool one_way = (r.flow & (kFlowToServer | kFlowToClient)) &&
                 (r.flow & (kFlowToServer | kFlowToClient)) != (kFlowToServer | kFlowToClient);
  bool header_only = r.items.empty() && r.flowints.empty() && !r.decode_events && !r.stream_events && !r.ipopts &&
                     !r.stream_size.side && !r.has_dsize && r.fields.empty() && r.csums.empty() && !r.has_flags &&
                     !r.has_fragbits && !checks_flowbits && !r.has_urilen;
  bool like_ip_only = header_only && !(r.flow & ~(kFlowToServer | kFlowToClient)) && !one_way && !r.has_app_cond;
  bool pd_only = header_only && r.has_app_cond && !(r.flow & ~(kFlowToServer | kFlowToClient));
  // (an application protocol's rule with packet keywords, dsize or flags,
  // is Suricata's packet rule: a packet's match acts on the packet; with a
  // payload, a stream match acts on the flow, IdsMatcher's flow_scoped)
  bool app_only = r.app != kAppNone && header_only && !(r.flow & ~(kFlowToServer | kFlowToClient | kFlowEstablished));
  r.flow_scope = like_ip_only || pd_only || app_only || r.uses_tx();
  if (!r.sid) return err = "the rule has no sid", false;
  if (r.action == "config") {
    if (!r.no_tx_log || !r.uses_tx())
      return err = "a config rule takes 'config: logging disable, type tx, scope tx' and an application-layer buffer",
             false;
    r.noalert = true;
  } else if (r.no_tx_log) {
    return err = "config: is for config rules", false;
  }
  r.text = std::string(s);
  return true;
}

bool RuleSet::load_text(const std::string& text, const std::string& name, const Vars& vars, bool strict,
                        std::string& err) {
  std::istringstream in(text);
  std::string line, rule;
  int n = 0, start = 0;
  while (std::getline(in, line)) {
    ++n;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::string_view l = trim(line);
    if (rule.empty()) {
      if (l.empty() || l[0] == '#') continue;
      start = n;
    }
    // a trailing backslash continues the rule on the next line
    if (!l.empty() && l.back() == '\\') {
      rule += std::string(l.substr(0, l.size() - 1)) + " ";
      continue;
    }
    rule += std::string(l);
    Rule r;
    std::string why;
    r.file = name;
    r.line = start;
    if (parse_rule(rule, vars, r, why) && number_flowbits(r, why) && bind_datasets(r, name, why) &&
        bind_file_hashes(r, name, why)) {
      // a duplicate gid:sid: the later rule wins (as Suricata), the earlier is reported
      uint64_t key = uint64_t(r.gid) << 32 | r.sid;
      auto [it, fresh] = sid_index_.emplace(key, rules_.size());
      if (!fresh) {
        Rule& old = rules_[it->second];
        problems_.push_back(
            {old.file, old.line, old.sid, fmt::format("duplicate sid: replaced by the rule at {}:{}", r.file, r.line)});
        old = std::move(r);
      } else {
        rules_.push_back(std::move(r));
      }
    } else {
      RuleProblem p{name, start, r.sid, why};
      if (strict) return err = p.str(), false;
      problems_.push_back(std::move(p));
    }
    rule.clear();
  }
  if (!rule.empty()) {
    RuleProblem p{name, start, 0, "the file ends inside a rule (a trailing backslash)"};
    if (strict) return err = p.str(), false;
    problems_.push_back(std::move(p));
  }
  return true;
}

bool RuleSet::number_flowbits(Rule& r, std::string& why) {
  for (Flowbit& fb : r.flowbits) {
    fb.bits.clear();
    for (const std::string& n : fb.names) {
      auto it = flowbit_ids_.find(n);
      if (it == flowbit_ids_.end()) {
        if (flowbit_ids_.size() >= kMaxFlowbits)
          return why = fmt::format("flowbit '{}': the rule set already uses {} flowbit names, the most a flow keeps", n,
                                   kMaxFlowbits),
                 false;
        it = flowbit_ids_.emplace(n, uint16_t(flowbit_ids_.size())).first;
      }
      fb.bits.push_back(it->second);
    }
  }
  auto number = [&](const std::string& n, uint16_t& out) {
    auto it = flowint_ids_.find(n);
    if (it == flowint_ids_.end()) {
      if (flowint_ids_.size() >= kMaxFlowints)
        return why = fmt::format("flowint '{}': the rule set already uses {} flowint names, the most a flow keeps", n,
                                 kMaxFlowints),
               false;
      it = flowint_ids_.emplace(n, uint16_t(flowint_ids_.size())).first;
    }
    out = it->second;
    return true;
  };
  for (Flowint& fi : r.flowints)
    if (!number(fi.name, fi.var) || (!fi.value_name.empty() && !number(fi.value_name, fi.value_var))) return false;
  for (Hostbit& h : r.hostbits) {
    auto it = hostbit_ids_.find(h.name);
    if (it == hostbit_ids_.end()) {
      if (hostbit_ids_.size() >= UINT16_MAX)
        return why = fmt::format("hostbits '{}': the rule set already uses {} names", h.name, UINT16_MAX), false;
      it = hostbit_ids_.emplace(h.name, uint16_t(hostbit_ids_.size())).first;
    }
    h.id = it->second;
  }
  return true;
}

// Each dataset item's set: made by the first rule that names it (its file
// loaded relative to the rules file's directory), shared by the others.
bool RuleSet::bind_datasets(Rule& r, const std::string& file, std::string& why) {
  std::string dir = std::filesystem::path(file).parent_path().string();
  for (Item& it : r.items) {
    if (it.byte.kind != ByteOp::Dataset) continue;
    it.dataset = datasets_.bind(*it.dataset_use, dir, why);
    if (!it.dataset) return false;
  }
  return true;
}

// Each file digest condition's list: read (as Suricata reads it: each
// line's leading run of hex digits, lines without one skipped) by the
// first rule that names it, relative to the rules file's directory, and
// shared by the others.
bool RuleSet::bind_file_hashes(Rule& r, const std::string& file, std::string& why) {
  for (FileHashCond& c : r.file_hashes) {
    std::filesystem::path p(c.list);
    if (p.is_relative()) p = std::filesystem::path(file).parent_path() / p;
    auto key = std::make_pair(c.algo, p.lexically_normal().string());
    if (auto it = hash_lists_.find(key); it != hash_lists_.end()) {
      c.set = it->second;
      continue;
    }
    const char* kw = c.algo == kFileMd5 ? "filemd5" : c.algo == kFileSha1 ? "filesha1" : "filesha256";
    size_t want = c.algo == kFileMd5 ? 32 : c.algo == kFileSha1 ? 40 : 64;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(p, ec))
      return why = fmt::format("{}: '{}' is not a file", kw, key.second), false;
    std::ifstream in(p);
    if (!in) return why = fmt::format("{}: cannot read '{}'", kw, key.second), false;
    auto set = std::make_shared<std::unordered_set<std::string>>();
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.size() > 8192) return why = fmt::format("{}: {}:{}: a line over 8 KiB", kw, key.second, n), false;
      size_t len = 0;
      while (len < line.size() && std::isxdigit(uint8_t(line[len]))) ++len;
      if (!len) continue;
      if (len != want)
        return why = fmt::format("{}: {}:{}: a digest of {} hex digits, not {}", kw, key.second, n, want, len), false;
      std::string h = line.substr(0, len);
      for (char& ch : h) ch = char(std::tolower(uint8_t(ch)));
      set->insert(std::move(h));
    }
    c.set = set;
    hash_lists_.emplace(std::move(key), std::move(set));
  }
  return true;
}

const char* buf_name(Buf b) {
  for (const BufName& n : kSticky)
    if (n.buf == b) return n.name;
  return "the packet";
}

bool response_only(Buf b) {
  return b == Buf::DnsResponseRrname || (b >= Buf::TlsCertSubject && b <= Buf::TlsSubjectAltName) ||
         b == Buf::Ja3sHash || b == Buf::Ja3sString || b == Buf::HttpStatCode || b == Buf::HttpStatMsg ||
         b == Buf::HttpResponseLine || b == Buf::HttpResponseBody || b == Buf::HttpServer ||
         b == Buf::HttpResponseHeader || b == Buf::SipStatCode || b == Buf::SipStatMsg || b == Buf::SipResponseLine;
}

bool dns_buf(Buf b) {
  return b == Buf::DnsQuery || b == Buf::DnsQueriesRrname || b == Buf::DnsAnswersRrname || b == Buf::DnsResponseRrname;
}

const char* app_name(uint16_t app) {
  static const char* const kNames[] = {nullptr, "http", "dns", "tls", "sip", "ssh", "ftp", "smtp"};
  return app < std::size(kNames) ? kNames[app] : nullptr;
}

bool tls_buf(Buf b) { return b >= Buf::TlsSni && b <= Buf::Ja4Hash; }

namespace {
constexpr const char* kDnsEvents[] = {"malformed_data", "not_a_request",       "not_a_response",      "z_flag_set",
                                      "invalid_opcode", "invalid_additionals", "invalid_authorities", "name_too_long"};
constexpr const char* kFtpEvents[] = {"request_command_too_long", "response_command_too_long", "file_before_port",
                                      "file_without_name"};
constexpr const char* kHttpEvents[] = {"unknown_error",
                                       "gzip_decompression_failed",
                                       "request_field_missing_colon",
                                       "response_field_missing_colon",
                                       "invalid_request_chunk_len",
                                       "invalid_response_chunk_len",
                                       "invalid_transfer_encoding_value_in_request",
                                       "invalid_content_length_field_in_request",
                                       "invalid_content_length_field_in_response",
                                       "100_continue_already_seen",
                                       "unable_to_match_response_to_request",
                                       "invalid_server_port_in_request",
                                       "request_header_invalid",
                                       "response_header_invalid",
                                       "missing_host_header",
                                       "host_header_ambiguous",
                                       "invalid_request_field_folding",
                                       "invalid_response_field_folding",
                                       "request_field_too_long",
                                       "response_field_too_long",
                                       "request_server_port_tcp_port_mismatch",
                                       "request_uri_host_invalid",
                                       "request_header_host_invalid",
                                       "uri_delim_non_compliant",
                                       "method_delim_non_compliant",
                                       "request_line_leading_whitespace",
                                       "too_many_encoding_layers",
                                       "abnormal_ce_header",
                                       "request_auth_unrecognized",
                                       "request_header_repetition",
                                       "response_header_repetition",
                                       "response_multipart_byteranges",
                                       "response_abnormal_transfer_encoding",
                                       "response_chunked_old_proto",
                                       "response_invalid_protocol",
                                       "response_invalid_status",
                                       "request_line_incomplete",
                                       "request_line_invalid",
                                       "request_body_unexpected",
                                       "lzma_memlimit_reached",
                                       "duplicate_content_length_field_in_request",
                                       "duplicate_content_length_field_in_response",
                                       "compression_bomb",
                                       "too_many_warnings",
                                       "request_line_missing_protocol",
                                       "request_too_many_headers",
                                       "response_too_many_headers"};
static_assert(std::size(kHttpEvents) == kHttpEventCount && kHttpEventCount <= 64);
constexpr const char* kTlsEvents[] = {
    "invalid_sslv2_header",       "invalid_tls_header",          "invalid_record_version",
    "invalid_record_type",        "invalid_record_length",       "invalid_handshake_message",
    "handshake_invalid_length",   "heartbeat_message",           "invalid_heartbeat_message",
    "overflow_heartbeat_message", "dataleak_heartbeat_mismatch", "multiple_sni_extensions",
    "invalid_sni_type",           "invalid_sni_length",          "invalid_certificate",
    "certificate_invalid_length", "too_many_records_in_packet",  "invalid_ssl_record",
    "error_message_encountered"};
static_assert(std::size(kTlsEvents) == kTlsEventCount && kTlsEventCount <= 64);
}  // namespace

const char* stream_event_name(uint8_t e) {
  static const char* const kNames[] = {"reassembly_seq_gap",
                                       "reassembly_depth_reached",
                                       "3whs_ack_in_wrong_dir",
                                       "3whs_ack_data_inject",
                                       "3whs_async_wrong_seq",
                                       "3whs_right_seq_wrong_ack_evasion",
                                       "3whs_synack_in_wrong_direction",
                                       "3whs_synack_resend_with_different_ack",
                                       "3whs_synack_toserver_on_syn_recv",
                                       "3whs_synack_with_wrong_ack",
                                       "3whs_synack_flood",
                                       "3whs_synack_tfo_data_ignored",
                                       "3whs_syn_resend_diff_seq_on_syn_recv",
                                       "3whs_syn_toclient_on_syn_recv",
                                       "3whs_wrong_seq_wrong_ack",
                                       "3whs_syn_flood",
                                       "4whs_synack_with_wrong_ack",
                                       "4whs_synack_with_wrong_syn",
                                       "4whs_wrong_seq",
                                       "est_synack_resend",
                                       "est_synack_resend_with_different_ack",
                                       "est_synack_resend_with_diff_seq",
                                       "est_synack_toserver",
                                       "est_syn_resend",
                                       "est_syn_resend_diff_seq",
                                       "est_syn_toclient",
                                       "pkt_invalid_timestamp",
                                       "rst_but_no_session",
                                       "fin_but_no_session",
                                       "est_invalid_ack",
                                       "est_pkt_before_last_ack",
                                       "est_packet_out_of_window",
                                       "pkt_invalid_ack",
                                       "fin_invalid_ack",
                                       "fin_out_of_window",
                                       "fin_syn",
                                       "rst_invalid_ack",
                                       "shutdown_syn_resend",
                                       "pkt_broken_ack",
                                       "suspected_rst_inject",
                                       "pkt_bad_window_update",
                                       "pkt_spurious_retransmission",
                                       "pkt_retransmission",
                                       "4whs_invalid_ack",
                                       "fin1_fin_wrong_seq",
                                       "fin1_invalid_ack",
                                       "fin1_ack_wrong_seq",
                                       "fin2_fin_wrong_seq",
                                       "fin2_invalid_ack",
                                       "fin2_ack_wrong_seq",
                                       "closing_ack_wrong_seq",
                                       "closing_invalid_ack",
                                       "closewait_fin_out_of_window",
                                       "closewait_invalid_ack",
                                       "closewait_pkt_before_last_ack",
                                       "closewait_ack_out_of_window",
                                       "lastack_invalid_ack",
                                       "lastack_ack_wrong_seq",
                                       "timewait_ack_wrong_seq",
                                       "timewait_invalid_ack",
                                       "wrong_thread",
                                       "reassembly_overlap_different_data"};
  static_assert(kStreamEventCount <= 64);  // (a packet's and a rule's are 64-bit sets)
  static_assert(std::size(kNames) == kStreamEventCount);
  return e < kStreamEventCount ? kNames[e] : "unknown";
}

bool find_stream_event(std::string_view name, uint8_t& e) {
  for (uint8_t i = 0; i < kStreamEventCount; ++i)
    if (name == stream_event_name(i)) return e = i, true;
  return false;
}

const char* app_event_name(uint16_t app, uint8_t event) {
  if (app == kAppDns && event < std::size(kDnsEvents)) return kDnsEvents[event];
  if (app == kAppFtp && event < std::size(kFtpEvents)) return kFtpEvents[event];
  if (app == kAppHttp && event < std::size(kHttpEvents)) return kHttpEvents[event];
  if (app == kAppTls && event < std::size(kTlsEvents)) return kTlsEvents[event];
  return "unknown";
}

bool find_app_event(std::string_view name, uint16_t& app, uint8_t& event) {
  auto find = [&](std::string_view prefix, uint16_t a, const auto& table) {
    if (name.substr(0, prefix.size()) != prefix) return false;
    for (size_t i = 0; i < std::size(table); ++i)
      if (name.substr(prefix.size()) == table[i]) return app = a, event = uint8_t(i), true;
    return false;
  };
  return find("dns.", kAppDns, kDnsEvents) || find("ftp.", kAppFtp, kFtpEvents) ||
         find("http.", kAppHttp, kHttpEvents) || find("tls.", kAppTls, kTlsEvents);
}

uint16_t FieldCond::app() const {
  return field >= FileSize     ? kAppHttp
         : field >= FtpMode    ? kAppFtp
         : field >= TlsVersion ? kAppTls
         : field >= DnsOpcode  ? kAppDns
                               : kAppNone;
}

bool either_side(Buf b) {
  return b == Buf::HttpHeader || b == Buf::HttpHeaderRaw || b == Buf::HttpCookie || b == Buf::HttpContentType ||
         b == Buf::HttpHeaderNames;
}

bool Item::relative() const {
  if (is_pcre) return pcre.relative;
  if (byte.kind != ByteOp::None) return byte.relative;
  return content.relative();
}

bool Rule::response_side() const {
  for (const Item& it : items)
    if (response_only(it.buf)) return true;
  return (flow & kFlowToClient) != 0;
}

Classifications::Classifications() {
  // The standard table (Snort's classification.config and Suricata's
  // additions).
  static const char* const kStandard =
      "config classification: not-suspicious,Not Suspicious Traffic,3\n"
      "config classification: unknown,Unknown Traffic,3\n"
      "config classification: bad-unknown,Potentially Bad Traffic,2\n"
      "config classification: attempted-recon,Attempted Information Leak,2\n"
      "config classification: successful-recon-limited,Information Leak,2\n"
      "config classification: successful-recon-largescale,Large Scale Information Leak,2\n"
      "config classification: attempted-dos,Attempted Denial of Service,2\n"
      "config classification: successful-dos,Denial of Service,2\n"
      "config classification: attempted-user,Attempted User Privilege Gain,1\n"
      "config classification: unsuccessful-user,Unsuccessful User Privilege Gain,1\n"
      "config classification: successful-user,Successful User Privilege Gain,1\n"
      "config classification: attempted-admin,Attempted Administrator Privilege Gain,1\n"
      "config classification: successful-admin,Successful Administrator Privilege Gain,1\n"
      "config classification: rpc-portmap-decode,Decode of an RPC Query,2\n"
      "config classification: shellcode-detect,Executable code was detected,1\n"
      "config classification: string-detect,A suspicious string was detected,3\n"
      "config classification: suspicious-filename-detect,A suspicious filename was detected,2\n"
      "config classification: suspicious-login,An attempted login using a suspicious username was detected,2\n"
      "config classification: system-call-detect,A system call was detected,2\n"
      "config classification: tcp-connection,A TCP connection was detected,4\n"
      "config classification: trojan-activity,A Network Trojan was detected,1\n"
      "config classification: unusual-client-port-connection,A client was using an unusual port,2\n"
      "config classification: network-scan,Detection of a Network Scan,3\n"
      "config classification: denial-of-service,Detection of a Denial of Service Attack,2\n"
      "config classification: non-standard-protocol,Detection of a non-standard protocol or event,2\n"
      "config classification: protocol-command-decode,Generic Protocol Command Decode,3\n"
      "config classification: web-application-activity,access to a potentially vulnerable web application,2\n"
      "config classification: web-application-attack,Web Application Attack,1\n"
      "config classification: misc-activity,Misc activity,3\n"
      "config classification: misc-attack,Misc Attack,2\n"
      "config classification: icmp-event,Generic ICMP event,3\n"
      "config classification: inappropriate-content,Inappropriate Content was Detected,1\n"
      "config classification: policy-violation,Potential Corporate Privacy Violation,1\n"
      "config classification: default-login-attempt,Attempt to login by a default username and password,2\n"
      "config classification: targeted-activity,Targeted Malicious Activity was Detected,1\n"
      "config classification: exploit-kit,Exploit Kit Activity Detected,1\n"
      "config classification: external-ip-check,Device Retrieving External IP Address Detected,2\n"
      "config classification: domain-c2,Domain Observed Used for C2 Detected,1\n"
      "config classification: pup-activity,Possibly Unwanted Program Detected,2\n"
      "config classification: credential-theft,Successful Credential Theft Detected,1\n"
      "config classification: social-engineering,Possible Social Engineering Attempted,2\n"
      "config classification: coin-mining,Crypto Currency Mining Activity Detected,2\n"
      "config classification: command-and-control,Malware Command and Control Activity Detected,1\n";
  std::string err;
  load_text(kStandard, "(built in)", err);
}

bool Classifications::load_text(const std::string& text, const std::string& name, std::string& err) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::string_view l = trim(line);
    if (l.empty() || l[0] == '#') continue;
    static constexpr std::string_view kKey = "config classification:";
    if (l.rfind(kKey, 0) != 0) continue;  // other config lines are not ours
    auto a = split_args(l.substr(kKey.size()));
    int32_t prio = 0;
    if (a.size() != 3 || a[0].empty() || !parse_i32(a[2], prio) || prio < 1)
      return err = fmt::format("{}:{}: 'config classification: name,description,priority' expected", name, n), false;
    classes_[a[0]] = {a[1], prio};
  }
  return true;
}

bool Classifications::load_file(const std::string& path, std::string& err) {
  std::ifstream f(path);
  if (!f) return err = fmt::format("cannot read classification file '{}'", path), false;
  std::stringstream ss;
  ss << f.rdbuf();
  return load_text(ss.str(), path, err);
}

const Classifications::Class* Classifications::find(const std::string& classtype) const {
  auto it = classes_.find(classtype);
  return it == classes_.end() ? nullptr : &it->second;
}

int action_rank(const std::string& a) {
  if (a == "pass") return 0;
  if (a == "drop" || a == "sdrop") return 1;
  if (a.rfind("reject", 0) == 0) return 2;
  return 3;
}

bool is_drop_action(const std::string& a) { return action_rank(a) == 1 || action_rank(a) == 2; }

bool RuleSet::load_file(const std::string& path, const Vars& vars, bool strict, std::string& err) {
  std::ifstream f(path);
  if (!f) return err = fmt::format("cannot read rules file '{}'", path), false;
  std::stringstream ss;
  ss << f.rdbuf();
  return load_text(ss.str(), path, vars, strict, err);
}

bool have_pcre() {
#ifdef SHOAL_HAVE_PCRE2
  return true;
#else
  return false;
#endif
}

namespace {
// Each capturing pcre's groups at its last match on this thread.
std::vector<std::string>& capture_slot(const Pcre& p) {
  // one per capturing pcre; bounded across rule set reloads (the groups are
  // read right after the run that matched, so starting over loses nothing)
  thread_local std::map<const Pcre*, std::vector<std::string>> slots;
  if (slots.size() >= 4096 && !slots.count(&p)) slots.clear();
  return slots[&p];
}
}  // namespace

const std::vector<std::string>* pcre_last_groups(const Pcre& p) { return &capture_slot(p); }

bool pcre_match(const Pcre& p, const uint8_t* s, size_t n, size_t start, size_t& match_end, bool* limit_hit) {
  if (limit_hit) *limit_hit = false;
#ifdef SHOAL_HAVE_PCRE2
  auto* code = static_cast<pcre2_code*>(p.code.get());
  if (!code || start > n) return false;
  // Per-thread match data and limits, freed when the thread ends.
  struct Scratch {
    pcre2_match_data* md = pcre2_match_data_create(16, nullptr);
    pcre2_match_context* mc = pcre2_match_context_create(nullptr);
    Scratch() {
      pcre2_set_match_limit(mc, 100000);  // Snort's pcre_match_limit order of magnitude
      pcre2_set_depth_limit(mc, 10000);
    }
    ~Scratch() {
      pcre2_match_data_free(md);
      pcre2_match_context_free(mc);
    }
  };
  thread_local Scratch scratch;
  pcre2_match_data* md = scratch.md;
  pcre2_match_context* mc = scratch.mc;
  // As Snort: a relative pcre sees the buffer from `start`, so ^ anchors there.
  int rc = pcre2_match(code, reinterpret_cast<PCRE2_SPTR>(s + start), n - start, 0, 0, md, mc);
  if (rc < 0) {
    if (limit_hit) *limit_hit = rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT;
    return false;
  }
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
  match_end = start + ov[1];
  if (!p.captures.empty()) {  // (rare) the groups, for pcre_last_groups
    std::vector<std::string>& g = capture_slot(p);
    int pairs = rc == 0 ? 16 : std::min(rc, 16);  // (0: more groups than the match data holds)
    g.assign(size_t(pairs) - 1, std::string());
    for (int i = 1; i < pairs; ++i)
      if (ov[2 * i] != PCRE2_UNSET && ov[2 * i + 1] >= ov[2 * i])
        g[size_t(i) - 1].assign(reinterpret_cast<const char*>(s + start + ov[2 * i]), ov[2 * i + 1] - ov[2 * i]);
  }
  return true;
#else
  (void)p, (void)s, (void)n, (void)start, (void)match_end;
  return false;
#endif
}

}  // namespace shoal::ids

namespace shoal::ids {

bool RuleSet::load_threshold_config(const std::string& path, const Vars& vars, std::string& err) {
  std::ifstream f(path);
  if (!f) return err = fmt::format("cannot read threshold file '{}'", path), false;
  std::stringstream ss;
  ss << f.rdbuf();
  apply_threshold_text(ss.str(), path, vars);
  return true;
}

bool RuleSet::apply_threshold_text(const std::string& text, const std::string& name, const Vars& vars) {
  std::istringstream in(text);
  std::string line;
  int n = 0;
  size_t before = problems_.size();
  while (std::getline(in, line)) {
    ++n;
    std::string_view l = trim(line);
    if (l.empty() || l[0] == '#') continue;
    auto problem = [&](const std::string& what) { problems_.push_back({name, n, 0, what, true}); };
    size_t sp = l.find_first_of(" \t");
    std::string kind(l.substr(0, sp));
    if (kind != "threshold" && kind != "event_filter" && kind != "suppress" && kind != "rate_filter") {
      problem(fmt::format("'{}' is not threshold, event_filter, suppress or rate_filter", kind));
      continue;
    }
    // "key value" pairs separated by commas (an ip list may hold commas in brackets)
    std::map<std::string, std::string> kv;
    std::string_view rest = sp == std::string_view::npos ? std::string_view() : l.substr(sp);
    int depth = 0;
    std::string cur;
    auto flush = [&] {
      std::string_view t = trim(cur);
      size_t s2 = t.find_first_of(" \t");
      if (!t.empty())
        kv[std::string(t.substr(0, s2))] = s2 == std::string_view::npos ? "" : std::string(trim(t.substr(s2)));
      cur.clear();
    };
    for (char c : rest) {
      depth += c == '[' ? 1 : c == ']' ? -1 : 0;
      if (c == ',' && depth == 0)
        flush();
      else
        cur += c;
    }
    flush();
    uint32_t gid = 0, sid = 0;
    if (!parse_u32(kv["gen_id"], gid) || !parse_u32(kv["sig_id"], sid)) {
      problem("gen_id and sig_id are needed");
      continue;
    }
    Threshold t;
    bool ok = true;
    auto track = [&](const std::string& v, Threshold::Track& out) {
      static const std::pair<const char*, Threshold::Track> kTracks[] = {{"by_src", Threshold::BySrc},
                                                                         {"by_dst", Threshold::ByDst},
                                                                         {"by_both", Threshold::ByBoth},
                                                                         {"by_rule", Threshold::ByRule},
                                                                         {"by_flow", Threshold::ByFlow}};
      for (auto& [k, tr] : kTracks)
        if (v == k) return out = tr, true;
      return false;
    };
    int32_t count = 0, seconds = 0, timeout = 0;
    Suppress sup;
    RateFilter rf;
    if (kind == "threshold" || kind == "event_filter") {
      std::string type = kv["type"];
      t.type = type == "limit"       ? Threshold::Limit
               : type == "threshold" ? Threshold::EveryNth
               : type == "both"      ? Threshold::Both
                                     : Threshold::None;
      ok = t.type != Threshold::None && track(kv["track"], t.track) && parse_i32(kv["count"], count) && count >= 1 &&
           parse_i32(kv["seconds"], seconds) && seconds >= 1;
      t.count = uint32_t(count), t.seconds = uint32_t(seconds);
    } else if (kind == "suppress") {
      if (kv.count("track")) {
        const std::string& tr = kv["track"];
        sup.track = tr == "by_src"      ? Suppress::BySrc
                    : tr == "by_dst"    ? Suppress::ByDst
                    : tr == "by_either" ? Suppress::ByEither
                                        : Suppress::All;
        std::string e;
        ok = sup.track != Suppress::All && parse_addr(kv["ip"], vars, sup.addrs, e);
      }
    } else {  // rate_filter
      rf.new_action = kv["new_action"];
      ok =
          track(kv["track"], rf.track) && parse_i32(kv["count"], count) && count >= 1 &&
          parse_i32(kv["seconds"], seconds) && seconds >= 1 && parse_i32(kv["timeout"], timeout) && timeout >= 1 &&
          (rf.new_action == "alert" || rf.new_action == "drop" || rf.new_action == "pass" || rf.new_action == "reject");
      rf.count = uint32_t(count), rf.seconds = uint32_t(seconds), rf.timeout = uint32_t(timeout);
    }
    if (!ok) {
      problem(fmt::format("{}: bad or missing fields", kind));
      continue;
    }
    size_t hit = 0;
    for (Rule& r : rules_) {
      if ((gid && r.gid != gid) || (sid && r.sid != sid)) continue;
      ++hit;
      if (kind == "suppress")
        r.suppress.push_back(sup);
      else if (kind == "rate_filter")
        r.has_rate = true, r.rate = rf;
      else if (sid || r.threshold.type == Threshold::None)  // a global entry leaves a rule's own alone
        r.threshold = t;
    }
    if (!hit) problem(fmt::format("{}: no loaded rule {}:{}", kind, gid, sid));
  }
  return problems_.size() == before;
}

}  // namespace shoal::ids
