#include "shoal/ipfilter/ipfilter_expr.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <unordered_map>

#include "shoal/core/args.hh"

namespace shoal::ipf {

PacketView make_view(const uint8_t* mac, uint32_t maclen, const uint8_t* ip, uint32_t iplen) {
  PacketView v;
  if (mac) v.base[kMac] = mac, v.len[kMac] = maclen;
  if (ip) {
    v.base[kNet] = ip, v.len[kNet] = iplen;
    if (iplen >= 1) {
      uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
      if (hl >= 20 && hl <= iplen) v.base[kTransp] = ip + hl, v.len[kTransp] = iplen - hl;
    }
  }
  return v;
}

bool eval(const Expr& e, const std::vector<Atom>& atoms, const PacketView& v) {
  switch (e.kind) {
    case Expr::kTrue: return true;
    case Expr::kFalse: return false;
    case Expr::kAtom: return eval_atom(atoms[e.atom], v);
    case Expr::kNot: return !eval(e.kids[0], atoms, v);
    case Expr::kAnd:
      for (auto& k : e.kids)
        if (!eval(k, atoms, v)) return false;
      return true;
    case Expr::kOr:
      for (auto& k : e.kids)
        if (eval(k, atoms, v)) return true;
      return false;
  }
  return false;
}

uint32_t AtomTable::intern(const Atom& a) {
  auto [it, fresh] = index_.try_emplace(a, uint32_t(atoms_.size()));
  if (fresh) atoms_.push_back(a);
  return it->second;
}

std::string format_key(const Key& k) {
  static const char* names[] = {"ip", "transp", "ether"};
  std::string s = fmt::format("{}[{}:{}]", names[k.base], k.off, k.width);
  uint32_t full = k.width == 4 ? ~0u : (1u << (8 * k.width)) - 1;
  if (k.mask != full) s += fmt::format(" & {:#x}", k.mask);
  return s;
}

std::string format_atom(const Atom& a) {
  std::string k = format_key(a.key);
  if (a.lo == a.hi) return fmt::format("{} {} {:#x}", k, a.out ? "!=" : "==", a.lo);
  return fmt::format("{} {} [{:#x}, {:#x}]", k, a.out ? "not in" : "in", a.lo, a.hi);
}

// ---------------------------------------------------------------------------
// Parsing

namespace {

enum class T { kWord, kLParen, kRParen, kNot, kAnd, kOr, kQuest, kColon, kRel, kAmp, kEnd };
struct Tok {
  T t;
  std::string_view s;
  size_t pos;
};
enum Op { kEq, kNe, kLt, kGt, kLe, kGe };
enum SD { kNoSD, kSrc, kDst, kSrcOrDst, kSrcAndDst };

struct Named {
  const char* name;
  uint32_t value;
};
// Click's names (and a few more that tcpdump users reach for).
constexpr Named kPorts[] = {
    {"echo", 7},    {"discard", 9}, {"daytime", 13},     {"chargen", 19},      {"ftp-data", 20},
    {"ftp", 21},    {"ssh", 22},    {"telnet", 23},      {"smtp", 25},         {"domain", 53},
    {"dns", 53},    {"bootps", 67}, {"bootpc", 68},      {"tftp", 69},         {"finger", 79},
    {"www", 80},    {"http", 80},   {"pop3", 110},       {"sunrpc", 111},      {"auth", 113},
    {"nntp", 119},  {"ntp", 123},   {"netbios-ns", 137}, {"netbios-dgm", 138}, {"netbios-ssn", 139},
    {"imap", 143},  {"snmp", 161},  {"snmp-trap", 162},  {"bgp", 179},         {"irc", 194},
    {"imap3", 220}, {"https", 443}, {"rip", 520},        {"route", 520},       {"imaps", 993},
    {"pop3s", 995},
};
constexpr Named kProtos[] = {{"icmp", 1}, {"igmp", 2}, {"ipip", 4}, {"tcp", 6},    {"udp", 17},
                             {"gre", 47}, {"esp", 50}, {"ah", 51},  {"icmp6", 58}, {"sctp", 132}};
constexpr Named kIcmpTypes[] = {
    {"echo-reply", 0},
    {"unreachable", 3},
    {"sourcequench", 4},
    {"redirect", 5},
    {"echo", 8},
    {"routeradvert", 9},
    {"routersolicit", 10},
    {"timeexceeded", 11},
    {"parameterproblem", 12},
    {"timestamp", 13},
    {"timestamp-reply", 14},
    {"inforeq", 15},
    {"inforeq-reply", 16},
    {"maskreq", 17},
    {"maskreq-reply", 18},
};
constexpr Named kTcpOpts[] = {{"fin", 0x01}, {"syn", 0x02}, {"rst", 0x04}, {"psh", 0x08}, {"ack", 0x10}, {"urg", 0x20}};

template <size_t N>
bool lookup(const Named (&tab)[N], std::string_view w, uint32_t& v) {
  for (auto& n : tab)
    if (w == n.name) return v = n.value, true;
  return false;
}

// Words that name a field (what follows a qualifier such as "ip" or "tcp").
bool is_type_word(std::string_view w) {
  static constexpr const char* kTypes[] = {"host", "net", "port", "proto",  "vers", "hl",  "id",   "tos", "dscp", "ect",
                                           "ce",   "ttl", "frag", "unfrag", "opt",  "win", "type", "len", "csum"};
  for (auto* t : kTypes)
    if (w == t) return true;
  return false;
}
bool valueless(std::string_view type) { return type == "ect" || type == "ce" || type == "frag" || type == "unfrag"; }

bool parse_num(std::string_view w, uint64_t max, uint32_t& v) {
  uint64_t x;
  if (!parse_uint(w, x) || x > max) return false;
  v = uint32_t(x);
  return true;
}
bool parse_net(std::string_view w, uint32_t& addr, uint32_t& mask) {
  size_t sl = w.find('/');
  IPv4Addr a;
  if (!parse_ipv4(w.substr(0, sl), a)) return false;
  uint64_t len = 32;
  if (sl != std::string_view::npos) {
    IPv4Addr m;
    if (parse_ipv4(w.substr(sl + 1), m)) {
      mask = m.host();
      addr = a.host() & mask;
      return true;
    }
    if (!parse_uint(w.substr(sl + 1), len) || len > 32) return false;
  }
  mask = len ? ~0u << (32 - len) : 0;
  addr = a.host() & mask;
  return true;
}

class Parser {
 public:
  Parser(std::string_view text, Loc loc, AtomTable& atoms, const std::string& who)
      : text_(text), loc_(loc), atoms_(atoms), who_(who) {}

  Expr parse() {
    lex();
    if (peek().t == T::kEnd) fail(peek(), "empty pattern");
    Expr e = expr();
    if (peek().t != T::kEnd) fail(peek(), fmt::format("unexpected '{}'", peek().s));
    return e;
  }

 private:
  [[noreturn]] void fail(const Tok& t, const std::string& msg) const {
    Loc l = SourceManager::advance(loc_, text_.substr(0, std::min(t.pos, text_.size())));
    l.len = uint32_t(std::max<size_t>(1, t.s.size()));
    throw ConfigError(l, who_ + msg);
  }

  void lex() {
    size_t i = 0, n = text_.size();
    auto add = [&](T t, size_t len) {
      toks_.push_back({t, text_.substr(i, len), i});
      i += len;
    };
    while (i < n) {
      char c = text_[i];
      char d = i + 1 < n ? text_[i + 1] : '\0';
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (c == '(') {
        add(T::kLParen, 1);
      } else if (c == ')') {
        add(T::kRParen, 1);
      } else if (c == '&') {
        add(d == '&' ? T::kAnd : T::kAmp, d == '&' ? 2 : 1);
      } else if (c == '|') {
        if (d != '|') {
          toks_.push_back({T::kWord, text_.substr(i, 1), i});
          fail(toks_.back(), "'|' is not an operator here (did you mean '||'?)");
        }
        add(T::kOr, 2);
      } else if (c == '!') {
        add(d == '=' ? T::kRel : T::kNot, d == '=' ? 2 : 1);
      } else if (c == '=' || c == '<' || c == '>') {
        add(T::kRel, d == '=' ? 2 : 1);
      } else if (c == '?') {
        add(T::kQuest, 1);
      } else {
        size_t e = i;
        while (e < n) {
          char x = text_[e];
          if (x == '[') {  // ip[POS:LEN]: the brackets belong to the word
            size_t close = text_.find(']', e);
            e = close == std::string_view::npos ? n : close + 1;
            continue;
          }
          // (Not strchr: it finds a NUL byte in any string.)
          if (std::isspace(static_cast<unsigned char>(x)) ||
              std::string_view("()&|!=<>?").find(x) != std::string_view::npos)
            break;
          ++e;
        }
        std::string_view w = text_.substr(i, e - i);
        T t = T::kWord;
        if (w == "and")
          t = T::kAnd;
        else if (w == "or")
          t = T::kOr;
        else if (w == "not")
          t = T::kNot;
        else if (w == ":")
          t = T::kColon;
        add(t, e - i);
      }
    }
    toks_.push_back({T::kEnd, {}, n});
  }
  const Tok& peek(size_t k = 0) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  const Tok& next() {
    const Tok& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    return t;
  }
  bool accept(T t) {
    if (peek().t != t) return false;
    next();
    return true;
  }
  bool is_word(std::string_view w, size_t k = 0) const { return peek(k).t == T::kWord && peek(k).s == w; }

  static Expr mk(Expr::Kind k, std::vector<Expr> kids) {
    Expr e;
    e.kind = k;
    e.kids = std::move(kids);
    return e;
  }
  static Expr mk_not(Expr a) { return mk(Expr::kNot, {std::move(a)}); }
  static Expr mk_and(Expr a, Expr b) { return mk(Expr::kAnd, {std::move(a), std::move(b)}); }
  static Expr mk_or(Expr a, Expr b) { return mk(Expr::kOr, {std::move(a), std::move(b)}); }
  Expr mk_atom(const Atom& a) {
    Expr e;
    e.kind = Expr::kAtom;
    e.atom = atoms_.intern(a);
    return e;
  }

  // expr := orexpr ['?' expr ':' expr]; orexpr := term ('or' term)*;
  // term := factor (['and'] factor)*; factor := 'not' factor | '(' expr ')' | primitive
  Expr expr() {
    Expr c = orexpr();
    if (peek().t == T::kQuest) {
      next();
      Expr a = expr();
      if (peek().t != T::kColon) fail(peek(), "expected ':' (with spaces around it) after '?'");
      next();
      Expr b = expr();
      Expr nc = mk_not(c);
      return mk_or(mk_and(std::move(c), std::move(a)), mk_and(std::move(nc), std::move(b)));
    }
    return c;
  }
  Expr orexpr() {
    Expr e = term();
    while (accept(T::kOr)) e = mk_or(std::move(e), term());
    return e;
  }
  Expr term() {
    Expr e = factor();
    for (;;) {
      if (accept(T::kAnd)) {
        e = mk_and(std::move(e), factor());
      } else if (peek().t == T::kWord || peek().t == T::kLParen || peek().t == T::kNot) {
        e = mk_and(std::move(e), factor());  // adjacent primitives: "fin ack"
      } else {
        break;
      }
    }
    return e;
  }
  Expr factor() {
    if (accept(T::kNot)) return mk_not(factor());
    if (peek().t == T::kLParen) {
      const Tok& open = next();
      Expr e = expr();
      if (peek().t != T::kRParen) fail(peek().t == T::kEnd ? open : peek(), "unbalanced parenthesis");
      next();
      return e;
    }
    if (peek().t != T::kWord)
      fail(peek(), peek().t == T::kEnd ? "pattern ends early" : fmt::format("unexpected '{}'", peek().s));
    return primitive();
  }

  // What a primitive remembers for the next one: "src port 80 or 81".
  struct Prev {
    std::string type, qual;
    int sd = kNoSD;
    bool valid = false;
  };

  bool read_sd(int& sd) {
    if (!is_word("src") && !is_word("dst")) return false;
    bool src = is_word("src");
    next();
    if ((peek().t == T::kOr || peek().t == T::kAnd) && is_word(src ? "dst" : "src", 1)) {
      sd = peek().t == T::kOr ? kSrcOrDst : kSrcAndDst;
      next();
      next();
    } else {
      sd = src ? kSrc : kDst;
    }
    return true;
  }

  bool value_fits(const std::string& type, const std::string& qual, std::string_view w) const {
    uint32_t v, m;
    if (type == "host" && qual == "ether") {
      EtherAddr e;
      return parse_ether(w, e);
    }
    if (type == "host") {
      IPv4Addr a;
      return parse_ipv4(w, a);
    }
    if (type == "net") return parse_net(w, v, m);
    if (type == "port") return parse_num(w, 65535, v) || lookup(kPorts, w, v);
    if (type == "proto") return parse_num(w, 255, v) || lookup(kProtos, w, v) || w == "tcpudp";
    if (type == "type") return parse_num(w, 255, v) || lookup(kIcmpTypes, w, v);
    if (type == "opt") return lookup(kTcpOpts, w, v);
    if (valueless(type)) return false;
    return parse_num(w, 0xffffffffu, v);
  }

  Expr primitive() {
    const Tok first = peek();
    if (is_word("true") || is_word("any") || is_word("all") || is_word("-")) return next(), Expr{Expr::kTrue, 0, {}};
    if (is_word("false")) return next(), Expr{Expr::kFalse, 0, {}};
    int sd = kNoSD;
    read_sd(sd);
    std::string qual, type;
    if (is_word("ip") || is_word("tcp") || is_word("udp") || is_word("tcpudp") || is_word("icmp") || is_word("ether")) {
      std::string q(peek().s);
      bool qualifies = peek(1).t == T::kWord && (is_type_word(peek(1).s) || is_word("src", 1) || is_word("dst", 1));
      if (qualifies) {
        qual = q;
        next();
        if (sd == kNoSD) read_sd(sd);
      } else if (q == "tcpudp") {  // Click's name for TCP or UDP
        if (sd != kNoSD) fail(first, "'src'/'dst' does not apply to a protocol");
        next();
        prev_ = {"proto", "ip", kNoSD, true};
        return mk_or(proto_is(6), proto_is(17));
      } else if (q == "tcp" || q == "udp" || q == "icmp") {
        if (sd != kNoSD) fail(first, "'src'/'dst' does not apply to a protocol");
        next();
        uint32_t p;
        lookup(kProtos, q, p);
        prev_ = {"proto", "ip", kNoSD, true};
        return proto_is(p);
      } else {
        fail(peek(),
             fmt::format("'{}' needs a field after it (such as '{}')", q, q == "ether" ? "ether host" : "ip proto"));
      }
    }
    const Tok& t = peek();
    if (t.t != T::kWord) fail(t, "expected a field or a value");
    std::string_view w = t.s;
    size_t br = w.find('[');
    if (br != std::string_view::npos && qual.empty()) return field_primitive(sd);
    if (is_type_word(w)) {
      type = std::string(w);
      next();
    } else if (prev_.valid && value_fits(prev_.type, qual.empty() ? prev_.qual : qual, w)) {
      type = prev_.type;
      if (qual.empty()) qual = prev_.qual;
      if (sd == kNoSD) sd = prev_.sd;
    } else {
      uint32_t v, m;
      IPv4Addr a;
      EtherAddr e;
      if (parse_ipv4(w, a))
        type = "host";
      else if (parse_ether(w, e))  // as Click: an Ethernet address is an 'ether host'
        type = "host", qual = "ether";
      else if (parse_net(w, v, m))
        type = "net";
      else if (lookup(kProtos, w, v))
        type = "proto";
      else if (lookup(kPorts, w, v))
        type = "port";
      else if (lookup(kTcpOpts, w, v))
        type = "opt", qual = "tcp";
      else if (parse_num(w, 0xffffffffu, v))
        fail(t, fmt::format("a bare number ('{}') needs a field before it, such as 'port {}'", w, w));
      else
        fail(t, fmt::format("unknown word '{}'", w));
    }
    Expr e = typed(first, type, qual, sd);
    prev_ = {type, qual, sd, true};
    return e;
  }

  // The optional "& MASK" and "OP", then the value.
  struct Cmp {
    int op = kEq;
    bool has_mask = false, has_value = false;
    uint32_t mask = 0;
    Tok vt{T::kEnd, {}, 0};
  };
  Cmp read_cmp(bool value_required, bool mask_ok, std::string_view type) {
    Cmp c;
    if (peek().t == T::kAmp) {
      const Tok& amp = next();
      if (!mask_ok) fail(amp, fmt::format("'{}' takes no mask", type));
      if (peek().t != T::kWord || !parse_num(peek().s, 0xffffffffu, c.mask))
        fail(peek(), "expected a number after '&'");
      next();
      c.has_mask = true;
    }
    if (peek().t == T::kRel) {
      std::string_view r = next().s;
      c.op = r == "!=" ? kNe : r == "<" ? kLt : r == ">" ? kGt : r == "<=" ? kLe : r == ">=" ? kGe : kEq;
      if (peek().t != T::kWord) fail(peek(), fmt::format("expected a value after '{}'", r));
      c.vt = next();
      c.has_value = true;
    } else if (peek().t == T::kWord) {
      uint32_t dummy;
      if (value_required || parse_num(peek().s, 0xffffffffu, dummy)) {
        c.vt = next();
        c.has_value = true;
      }
    }
    if (value_required && !c.has_value && !c.has_mask) fail(peek(), fmt::format("'{}' needs a value", type));
    return c;
  }

  // (field & mask) OP value as an atom (or a constant), for a field of
  // `fmask` bits at `shift` in a `width`-byte word.
  Expr field(uint8_t base, uint16_t off, uint8_t width, uint32_t fmask, int shift, const Cmp& c, uint32_t v) {
    const uint32_t wmax = width == 4 ? ~0u : (1u << (8 * width)) - 1;
    uint32_t m = c.has_mask ? (c.mask << shift) & fmask : fmask;
    if (c.has_mask && (c.mask << shift & ~fmask))
      fail(c.vt.t == T::kEnd ? peek() : c.vt, fmt::format("mask {:#x} is wider than the field", c.mask));
    if (m == 0) fail(c.vt.t == T::kEnd ? peek() : c.vt, "the mask selects no bits");
    Atom a;
    a.key = {base, width, off, m};
    if (!c.has_value) {  // "FIELD & MASK": any selected bit set
      a.lo = a.hi = 0;
      a.out = true;
      return mk_atom(a);
    }
    if (uint64_t(v) << shift > fmask) fail(c.vt, fmt::format("value {} does not fit the field", c.vt.s));
    uint32_t V = v << shift;
    switch (c.op) {
      case kEq:
      case kNe:
        if (V & ~m) fail(c.vt, fmt::format("value {} has bits outside the mask {:#x}", c.vt.s, m >> shift));
        a.lo = a.hi = V;
        a.out = c.op == kNe;
        break;
      case kLt:
        if (V == 0) return Expr{Expr::kFalse, 0, {}};
        a.lo = 0, a.hi = V - 1;
        break;
      case kLe: a.lo = 0, a.hi = V; break;
      case kGt:
        if (V >= m) return Expr{Expr::kFalse, 0, {}};
        a.lo = V + 1, a.hi = wmax;
        break;
      case kGe: a.lo = V, a.hi = wmax; break;
    }
    // (x & prefix-mask) == v is the interval [v, v | ~mask] of the whole
    // word: prefixes of one field then share a decision node.
    uint32_t low = ~m & wmax;
    if (a.lo == a.hi && (low & (low + 1)) == 0) {
      a.key.mask = wmax;
      a.hi = a.lo | low;
    }
    return mk_atom(a);
  }
  Expr proto_is(uint32_t p) {
    Atom a;
    a.key = {kNet, 1, 9, 0xff};
    a.lo = a.hi = p;
    return mk_atom(a);
  }
  Expr first_fragment() {
    Atom a;
    a.key = {kNet, 2, 6, 0x1fff};
    return mk_atom(a);
  }
  // Transport fields hold only on first fragments of their protocol(s).
  Expr transport(int proto, Expr f) {
    Expr pr = proto >= 0 ? proto_is(uint32_t(proto)) : mk_or(proto_is(6), proto_is(17));
    return mk_and(mk_and(std::move(pr), first_fragment()), std::move(f));
  }
  Expr sides(int sd, const std::function<Expr(bool src)>& one) {
    switch (sd) {
      case kSrc: return one(true);
      case kDst: return one(false);
      case kSrcAndDst: return mk_and(one(true), one(false));
      default: return mk_or(one(true), one(false));
    }
  }

  void check_value(const Cmp& c, const char* what, bool ok) {
    if (!ok) fail(c.vt, fmt::format("'{}' is not a valid {}", c.vt.s, what));
  }

  Expr typed(const Tok& first, const std::string& type, const std::string& qual, int sd) {
    bool sd_ok = type == "host" || type == "net" || type == "port";
    if (sd != kNoSD && !sd_ok) fail(first, fmt::format("'src'/'dst' does not apply to '{}'", type));
    bool tcpudp = qual == "tcp" || qual == "udp" || qual == "tcpudp";
    if (qual == "ether" && type != "host") fail(first, "'ether' takes only 'host'");
    if (tcpudp && type != "port" && !(qual == "tcp" && (type == "opt" || type == "win")))
      fail(first, fmt::format("'{} {}' is not a field", qual, type));
    if (qual == "icmp" && type != "type") fail(first, fmt::format("'icmp {}' is not a field", type));
    if (qual == "ip" && (type == "port" || type == "opt" || type == "win" || type == "type"))
      fail(first, fmt::format("'ip {}' is not a field", type));

    if (type == "frag" || type == "unfrag") {
      Atom a;
      a.key = {kNet, 2, 6, 0x3fff};
      a.out = type == "frag";
      return mk_atom(a);
    }
    if (type == "ect" || type == "ce") {
      Atom a;
      a.key = {kNet, 1, 1, 0x03};
      if (type == "ect")
        a.out = true;
      else
        a.lo = a.hi = 3;
      return mk_atom(a);
    }
    if (type == "opt") {
      uint32_t flag;
      if (peek().t != T::kWord || !lookup(kTcpOpts, peek().s, flag))
        fail(peek(), "expected a TCP option: syn, fin, ack, rst, psh or urg");
      next();
      Atom a;
      a.key = {kTransp, 1, 13, flag};
      a.lo = a.hi = flag;
      return transport(6, mk_atom(a));
    }
    Cmp c = read_cmp(true, type != "host" && type != "net", type);
    uint32_t v = 0;
    IPv4Addr ip4;
    EtherAddr e;
    // (Click's 'host' and 'src'/'dst' take an Ethernet address as 'ether host')
    if (type == "host" && (qual == "ether" || (qual.empty() && !parse_ipv4(c.vt.s, ip4) && parse_ether(c.vt.s, e)))) {
      if (!parse_ether(c.vt.s, e)) fail(c.vt, fmt::format("'{}' is not an Ethernet address", c.vt.s));
      if (c.op != kEq && c.op != kNe) fail(c.vt, "Ethernet addresses compare only with == and !=");
      Expr eq = sides(sd, [&](bool src) {
        uint16_t o = src ? 6 : 0;
        Atom hi, lo;
        hi.key = {kMac, 4, o, ~0u};
        hi.lo = hi.hi = uint32_t(e.b[0]) << 24 | uint32_t(e.b[1]) << 16 | uint32_t(e.b[2]) << 8 | e.b[3];
        lo.key = {kMac, 2, uint16_t(o + 4), 0xffff};
        lo.lo = lo.hi = uint32_t(e.b[4]) << 8 | e.b[5];
        return mk_and(mk_atom(hi), mk_atom(lo));
      });
      return c.op == kNe ? mk_not(std::move(eq)) : eq;
    }
    if (type == "host" || type == "net") {
      uint32_t addr, mask;
      bool ok;
      if (type == "host") {
        IPv4Addr a;
        ok = parse_ipv4(c.vt.s, a);
        addr = a.host(), mask = ~0u;
      } else {
        ok = parse_net(c.vt.s, addr, mask);
        if (ok && c.vt.s.find('/') == std::string_view::npos && is_word("mask")) {  // "net A mask M"
          next();
          IPv4Addr m;
          if (peek().t != T::kWord || !parse_ipv4(peek().s, m)) fail(peek(), "expected a netmask after 'mask'");
          next();
          mask = m.host();
          addr &= mask;
        }
      }
      if (!ok) fail(c.vt, fmt::format("'{}' is not an IP {}", c.vt.s, type == "host" ? "address" : "network"));
      if (c.op != kEq && c.op != kNe) fail(c.vt, fmt::format("'{}' compares only with == and !=", type));
      Cmp eqc = c;
      eqc.op = kEq;
      eqc.has_mask = mask != ~0u;
      eqc.mask = mask;
      Expr eq = sides(sd, [&](bool src) {
        if (mask == 0) return Expr{Expr::kTrue, 0, {}};
        return field(kNet, src ? 12 : 16, 4, ~0u, 0, eqc, addr);
      });
      return c.op == kNe ? mk_not(std::move(eq)) : eq;
    }
    if (type == "port") {
      if (c.has_value) check_value(c, "port", parse_num(c.vt.s, 65535, v) || lookup(kPorts, c.vt.s, v));
      int proto = qual == "tcp" ? 6 : qual == "udp" ? 17 : -1;  // (tcpudp, none: either)
      return transport(proto, sides(sd, [&](bool src) { return field(kTransp, src ? 0 : 2, 2, 0xffff, 0, c, v); }));
    }
    if (type == "type") {
      if (c.has_value) check_value(c, "ICMP type", parse_num(c.vt.s, 255, v) || lookup(kIcmpTypes, c.vt.s, v));
      return transport(1, field(kTransp, 0, 1, 0xff, 0, c, v));
    }
    if (type == "win") {
      if (c.has_value) check_value(c, "window", parse_num(c.vt.s, 65535, v));
      return transport(6, field(kTransp, 14, 2, 0xffff, 0, c, v));
    }
    if (type == "proto") {
      if (c.has_value && c.vt.s == "tcpudp" && !c.has_mask && (c.op == kEq || c.op == kNe)) {
        Expr either = mk_or(proto_is(6), proto_is(17));
        return c.op == kNe ? mk_not(std::move(either)) : either;
      }
      if (c.has_value) check_value(c, "protocol", parse_num(c.vt.s, 255, v) || lookup(kProtos, c.vt.s, v));
      return field(kNet, 9, 1, 0xff, 0, c, v);
    }
    struct IpField {
      const char* name;
      uint16_t off;
      uint8_t width;
      uint32_t fmask;
      int shift;
    };
    static constexpr IpField kIp[] = {{"vers", 0, 1, 0xf0, 4}, {"hl", 0, 1, 0x0f, 0},     {"tos", 1, 1, 0xff, 0},
                                      {"dscp", 1, 1, 0xfc, 2}, {"len", 2, 2, 0xffff, 0},  {"id", 4, 2, 0xffff, 0},
                                      {"ttl", 8, 1, 0xff, 0},  {"csum", 10, 2, 0xffff, 0}};
    for (auto& f : kIp) {
      if (type != f.name) continue;
      if (c.has_value) check_value(c, f.name, parse_num(c.vt.s, f.fmask >> f.shift, v));
      return field(kNet, f.off, f.width, f.fmask, f.shift, c, v);
    }
    fail(first, fmt::format("unknown field '{}'", type));
  }

  // ip[POS], ip[POS:LEN], transp[...], tcp[...], udp[...], icmp[...].
  Expr field_primitive(int sd) {
    const Tok t = next();
    if (sd != kNoSD) fail(t, "'src'/'dst' does not apply to a header field");
    std::string_view w = t.s;
    size_t br = w.find('[');
    std::string_view name = w.substr(0, br);
    if (w.back() != ']') fail(t, fmt::format("'{}': expected NAME[POS] or NAME[POS:LEN]", w));
    std::string_view in = trim(w.substr(br + 1, w.size() - br - 2));
    size_t colon = in.find(':');
    uint32_t pos, len = 1;
    if (!parse_num(trim(in.substr(0, colon)), 65531, pos) ||
        (colon != std::string_view::npos && !parse_num(trim(in.substr(colon + 1)), 4, len)) || len == 0)
      fail(t, fmt::format("'{}': POS must be a byte offset and LEN 1 to 4", w));
    int proto = -2;  // no protocol required
    uint8_t base = kTransp;
    if (name == "ip")
      base = kNet;
    else if (name == "tcp")
      proto = 6;
    else if (name == "udp")
      proto = 17;
    else if (name == "icmp")
      proto = 1;
    else if (name != "transp")
      fail(t, fmt::format("unknown header '{}' (ip, transp, tcp, udp or icmp)", name));
    uint32_t fmask = len == 4 ? ~0u : (1u << (8 * len)) - 1;
    Cmp c = read_cmp(false, true, w);
    if (!c.has_value && !c.has_mask) fail(peek(), fmt::format("'{}' needs a value or a mask", w));
    uint32_t v = 0;
    if (c.has_value) check_value(c, "number", parse_num(c.vt.s, fmask, v));
    Expr f = field(base, uint16_t(pos), uint8_t(len), fmask, 0, c, v);
    prev_ = {};
    return proto >= 0 ? transport(proto, std::move(f)) : f;
  }

  std::string_view text_;
  Loc loc_;
  AtomTable& atoms_;
  std::string who_;
  std::vector<Tok> toks_;
  size_t pos_ = 0;
  Prev prev_;
};

}  // namespace

Expr parse_pattern(std::string_view text, Loc loc, AtomTable& atoms, const std::string& who) {
  return Parser(text, loc, atoms, who).parse();
}

// ---------------------------------------------------------------------------
// Flattening: each rule becomes conjunctions of literals (atom * 2 + negated).

namespace {

using Lits = std::vector<uint32_t>;

// Sorts and dedups a conjunction; false when it can never hold (a literal
// and its negation, or two inside-tests of one field with disjoint ranges).
bool simplify(Lits& t, const std::vector<Atom>& atoms) {
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  for (size_t i = 0; i + 1 < t.size(); ++i)
    if ((t[i] ^ 1) == t[i + 1]) return false;
  for (size_t i = 0; i < t.size(); ++i) {
    const Atom& a = atoms[t[i] >> 1];
    if ((t[i] & 1) || a.out) continue;
    for (size_t j = i + 1; j < t.size(); ++j) {
      const Atom& b = atoms[t[j] >> 1];
      if ((t[j] & 1) || b.out || !(a.key == b.key)) continue;
      if (std::max(a.lo, b.lo) > std::min(a.hi, b.hi)) return false;
    }
  }
  return true;
}

struct Flattener {
  const std::vector<Atom>& atoms;
  size_t limit;

  std::vector<Lits> run(const Expr& e, bool neg) {
    switch (e.kind) {
      case Expr::kTrue: return neg ? std::vector<Lits>{} : std::vector<Lits>{Lits{}};
      case Expr::kFalse: return neg ? std::vector<Lits>{Lits{}} : std::vector<Lits>{};
      case Expr::kAtom: return {Lits{e.atom * 2 + uint32_t(neg)}};
      case Expr::kNot: return run(e.kids[0], !neg);
      case Expr::kAnd:
      case Expr::kOr: {
        bool conj = (e.kind == Expr::kAnd) != neg;
        std::vector<Lits> acc;
        if (conj) acc.push_back({});
        for (auto& k : e.kids) {
          std::vector<Lits> d = run(k, neg);
          if (conj) {
            std::vector<Lits> nx;
            for (auto& a : acc)
              for (auto& b : d) {
                Lits t = a;
                t.insert(t.end(), b.begin(), b.end());
                if (simplify(t, atoms)) nx.push_back(std::move(t));
                if (nx.size() > limit) throw std::runtime_error("pattern expands to too many alternatives");
              }
            acc = std::move(nx);
            if (acc.empty()) break;
          } else {
            for (auto& b : d) acc.push_back(std::move(b));
            if (acc.size() > limit) throw std::runtime_error("pattern expands to too many alternatives");
          }
        }
        std::sort(acc.begin(), acc.end());
        acc.erase(std::unique(acc.begin(), acc.end()), acc.end());
        for (auto& t : acc)
          if (t.empty()) return {Lits{}};  // one branch always holds
        return acc;
      }
    }
    return {};
  }
};

}  // namespace

// ---------------------------------------------------------------------------
// The decision DAG. A subproblem is the list of conjunctions still possible,
// in rule order, each with the literals not yet decided. A node reads one
// field (a key of the first conjunction's literals, the one most
// conjunctions test), cuts the value space at every bound of those tests,
// and for each interval decides every literal on that field; identical
// subproblems share one subtree.

struct Builder {
  Program& P;
  size_t max_nodes;
  size_t work = 0;
  static constexpr size_t kMaxWork = size_t(1) << 26;
  struct Entry {
    uint32_t term;
    Lits lits;
  };
  using State = std::vector<Entry>;
  std::unordered_map<std::string, int32_t> memo;
  std::vector<size_t> node_depth;

  static std::string signature(const State& s) {
    std::string k;
    for (auto& e : s) {
      uint32_t hdr[2] = {e.term, uint32_t(e.lits.size())};
      k.append(reinterpret_cast<const char*>(hdr), sizeof hdr);
      k.append(reinterpret_cast<const char*>(e.lits.data()), e.lits.size() * sizeof(uint32_t));
    }
    return k;
  }

  State resolve(const State& s, const Key& key, bool present, uint32_t x) {
    State out;
    out.reserve(s.size());
    for (auto& e : s) {
      Entry ne{e.term, {}};
      ne.lits.reserve(e.lits.size());
      bool dead = false;
      for (uint32_t l : e.lits) {
        const Atom& a = P.atoms_[l >> 1];
        if (a.key == key) {
          bool v = present && ((a.lo <= x && x <= a.hi) != a.out);
          if (v == bool(l & 1)) {
            dead = true;
            break;
          }
          continue;
        }
        ne.lits.push_back(l);
      }
      work += e.lits.size() + 1;
      if (!dead) {
        bool all = ne.lits.empty();
        out.push_back(std::move(ne));
        if (all) break;  // everything after a certain match is moot
      }
    }
    return out;
  }

  int32_t leaf(const State& s) {
    Program::Leaf lf{uint32_t(P.leaf_terms_.size()), uint32_t(s.size())};
    for (auto& e : s) {
      P.leaf_terms_.push_back({uint32_t(P.leaf_lits_.size()), uint32_t(e.lits.size()), P.terms_[e.term].result});
      P.leaf_lits_.insert(P.leaf_lits_.end(), e.lits.begin(), e.lits.end());
    }
    P.leaves_.push_back(lf);
    return ~int32_t(P.leaves_.size() - 1);
  }

  size_t depth_of(int32_t r) const { return r >= 0 ? node_depth[size_t(r)] : 0; }

  int32_t build(const State& s) {
    std::string sig = signature(s);
    if (auto it = memo.find(sig); it != memo.end()) return it->second;
    int32_t ref;
    if (s.size() <= 1 || s[0].lits.empty() || P.nodes_.size() >= max_nodes || work > kMaxWork) {
      ref = leaf(s);
    } else {
      // The field: among the first conjunction's, the one most conjunctions test.
      Key best{};
      size_t best_n = 0;
      for (uint32_t l : s[0].lits) {
        const Key& k = P.atoms_[l >> 1].key;
        size_t n = 0;
        for (auto& e : s)
          for (uint32_t m : e.lits)
            if (P.atoms_[m >> 1].key == k) {
              ++n;
              break;
            }
        if (n > best_n) best = k, best_n = n;
      }
      if (s.size() <= 2 && best_n <= 1) {
        ref = leaf(s);
      } else {
        std::vector<uint32_t> cuts{0};
        for (auto& e : s)
          for (uint32_t m : e.lits) {
            const Atom& a = P.atoms_[m >> 1];
            if (!(a.key == best)) continue;
            cuts.push_back(a.lo);
            if (a.hi != ~0u) cuts.push_back(a.hi + 1);
          }
        std::sort(cuts.begin(), cuts.end());
        cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
        std::vector<uint32_t> bounds;
        std::vector<int32_t> kids;
        for (uint32_t c : cuts) {
          int32_t k = build(resolve(s, best, true, c));
          if (!kids.empty() && kids.back() == k) continue;
          bounds.push_back(c);
          kids.push_back(k);
        }
        int32_t absent = build(resolve(s, best, false, 0));
        size_t d = depth_of(absent);
        for (int32_t k : kids) d = std::max(d, depth_of(k));
        Program::Node nd{best, uint32_t(P.bounds_.size()), uint32_t(bounds.size()), absent};
        P.bounds_.insert(P.bounds_.end(), bounds.begin(), bounds.end());
        P.kids_.insert(P.kids_.end(), kids.begin(), kids.end());
        P.nodes_.push_back(nd);
        node_depth.push_back(d + 1);
        ref = int32_t(P.nodes_.size() - 1);
      }
    }
    memo.emplace(std::move(sig), ref);
    return ref;
  }
};

void Program::build(const std::vector<Atom>& atoms, const std::vector<Rule>& rules, size_t max_nodes,
                    size_t max_terms) {
  *this = Program();
  atoms_ = atoms;
  Flattener fl{atoms_, max_terms};
  std::vector<std::vector<uint32_t>> rule_terms(rules.size());
  for (size_t r = 0; r < rules.size(); ++r) {
    for (auto& t : fl.run(rules[r].expr, false)) {
      rule_terms[r].push_back(uint32_t(terms_.size()));
      terms_.push_back({uint32_t(lits_.size()), uint32_t(t.size()), rules[r].result});
      lits_.insert(lits_.end(), t.begin(), t.end());
    }
  }
  Builder b{*this, max_nodes};
  Builder::State s;
  for (uint32_t i = 0; i < terms_.size(); ++i) {
    s.push_back({i, Lits(lits_.begin() + terms_[i].first, lits_.begin() + terms_[i].first + terms_[i].n)});
    if (terms_[i].n == 0) break;
  }
  root_ = b.build(s);
  depth_ = b.depth_of(root_);
  // A rule none of whose conjunctions reach a leaf can never match.
  // Each signature lists the (term, literals) entries of one subproblem; a
  // term in a subproblem that became a leaf is reachable.
  std::vector<bool> seen(terms_.size());
  for (auto& [sig, ref] : b.memo) {
    if (ref >= 0) continue;
    const char* p = sig.data();
    const char* end = p + sig.size();
    while (p < end) {
      uint32_t hdr[2];
      std::memcpy(hdr, p, sizeof hdr);
      seen[hdr[0]] = true;
      p += sizeof hdr + hdr[1] * sizeof(uint32_t);
    }
  }
  for (size_t r = 0; r < rules.size(); ++r) {
    bool live = false;
    for (uint32_t t : rule_terms[r]) live |= seen[t];
    if (!live) dead_.push_back(r);
  }
}

int32_t Program::run_terms(const Term* t, uint32_t n, const uint32_t* lits, const PacketView& v) const {
  for (uint32_t i = 0; i < n; ++i) {
    bool ok = true;
    for (uint32_t j = 0; ok && j < t[i].n; ++j) ok = lit_true(lits[t[i].first + j], v);
    if (ok) return t[i].result;
  }
  return kNoMatch;
}

int32_t Program::match(const PacketView& v) const {
  int32_t r = root_;
  while (r >= 0) {
    const Node& nd = nodes_[size_t(r)];
    uint32_t x;
    if (!load_field(v, nd.key, x)) {
      r = nd.absent;
      continue;
    }
    const uint32_t* b = bounds_.data() + nd.first;
    uint32_t lo = 0, n = nd.n;
    while (n > 1) {  // the last bound <= x (bounds start at 0)
      uint32_t half = n / 2;
      lo = b[lo + half] <= x ? lo + half : lo;
      n -= half;
    }
    r = kids_[nd.first + lo];
  }
  const int32_t leaf = ~r;
  const Leaf& lf = leaves_[size_t(leaf)];
  return run_terms(leaf_terms_.data() + lf.first, lf.n, leaf_lits_.data(), v);
}

int32_t Program::match_linear(const PacketView& v) const {
  return run_terms(terms_.data(), uint32_t(terms_.size()), lits_.data(), v);
}

std::string Program::dump() const {
  auto ref = [](int32_t r) { return r >= 0 ? fmt::format("n{}", r) : fmt::format("L{}", ~r); };
  auto result = [](int32_t r) { return r == kDeny ? std::string("drop") : fmt::format("{}", r); };
  std::string s = fmt::format("root {}; {} nodes, {} leaves, depth {}, {} conjunctions\n", ref(root_), nodes_.size(),
                              leaves_.size(), depth_, terms_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    const Node& nd = nodes_[i];
    s += fmt::format("n{}: {}", i, format_key(nd.key));
    for (uint32_t j = 0; j < nd.n; ++j)
      s += fmt::format(" | >={:#x} {}", bounds_[nd.first + j], ref(kids_[nd.first + j]));
    s += fmt::format(" | short {}\n", ref(nd.absent));
  }
  for (size_t i = 0; i < leaves_.size(); ++i) {
    const Leaf& lf = leaves_[i];
    s += fmt::format("L{}:", i);
    if (lf.n == 0) s += " no match";
    for (uint32_t j = 0; j < lf.n; ++j) {
      const Term& t = leaf_terms_[lf.first + j];
      s += j ? " ; " : " ";
      for (uint32_t k = 0; k < t.n; ++k) {
        uint32_t l = leaf_lits_[t.first + k];
        s += fmt::format("{}{}{} && ", (l & 1) ? "!(" : "", format_atom(atoms_[l >> 1]), (l & 1) ? ")" : "");
      }
      s += fmt::format("-> {}", result(t.result));
    }
    s += "\n";
  }
  return s;
}

}  // namespace shoal::ipf
