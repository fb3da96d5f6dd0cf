#include "shoal/ids/regex.hh"
#include "shoal/ids/rules.hh"

#include <fmt/format.h>

#include <algorithm>
#include <bitset>
#include <map>
#include <memory>
#include <stdexcept>

namespace shoal::ids {

namespace {

using Set = std::bitset<256>;

struct Unsupported : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Assertions: what they need of the previous and the next byte.
enum AssertKind : uint8_t { kStart, kLineStart, kEnd, kEndNl, kLineEnd, kWordB, kNotWordB };

struct Ast {
  enum Kind : uint8_t { Chars, Cat, Alt, Rep, Assert, Empty } kind = Empty;
  Set set;
  std::vector<Ast> kids;
  int min = 0, max = 0;  // Rep; max < 0: unbounded
  AssertKind assert = kStart;
};

bool is_word(int c) { return c >= 0 && c < 256 && (std::isalnum(c) || c == '_'); }

Set range(int lo, int hi) {
  Set s;
  for (int c = lo; c <= hi; ++c) s.set(size_t(c));
  return s;
}
Set chars(const char* cs) {
  Set s;
  for (; *cs; ++cs) s.set(uint8_t(*cs));
  return s;
}
Set fold(Set s) {
  for (int c = 'a'; c <= 'z'; ++c)
    if (s[size_t(c)] || s[size_t(c - 32)]) s.set(size_t(c)), s.set(size_t(c - 32));
  return s;
}

struct Flags {
  bool i = false, s = false, m = false, x = false, dollar_endonly = false;
};

class Parser {
 public:
  explicit Parser(const std::string& p) : p_(p) {}
  Ast parse(Flags f) {
    Ast a = alt(f);
    if (pos_ < p_.size()) fail("unmatched ')'");
    return a;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    throw Unsupported(fmt::format("{} (at offset {})", why, pos_));
  }
  bool eof() const { return pos_ >= p_.size(); }
  char peek(size_t k = 0) const { return pos_ + k < p_.size() ? p_[pos_ + k] : '\0'; }

  void skip_extended(const Flags& f) {
    if (!f.x) return;
    while (!eof()) {
      char c = peek();
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
      } else if (c == '#') {
        while (!eof() && peek() != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  Ast alt(Flags& f) {
    Ast a;
    a.kind = Ast::Alt;
    a.kids.push_back(cat(f));
    while (!eof() && peek() == '|') {
      ++pos_;
      a.kids.push_back(cat(f));
    }
    return a.kids.size() == 1 ? std::move(a.kids[0]) : a;
  }

  Ast cat(Flags& f) {
    Ast a;
    a.kind = Ast::Cat;
    for (;;) {
      skip_extended(f);
      if (eof() || peek() == '|' || peek() == ')') break;
      Ast at = atom(f);
      skip_extended(f);
      quantify(at, f);
      a.kids.push_back(std::move(at));
    }
    return a;
  }

  // A quantifier after an atom, if any.
  void quantify(Ast& at, const Flags& f) {
    int mn, mx;
    char c = peek();
    size_t save = pos_;
    if (c == '*')
      mn = 0, mx = -1, ++pos_;
    else if (c == '+')
      mn = 1, mx = -1, ++pos_;
    else if (c == '?')
      mn = 0, mx = 1, ++pos_;
    else if (c == '{' && bounds(mn, mx)) {
    } else {
      return;
    }
    if (at.kind == Ast::Assert) {
      pos_ = save;
      fail("a repeated assertion");
    }
    if (peek() == '+') fail("a possessive quantifier");
    if (peek() == '?') ++pos_;  // lazy: the same matches exist
    if (mx >= 0 && mn > mx) fail("a repeat with min > max");
    if (mn > 1000 || mx > 1000) fail("a repeat over 1000");
    Ast r;
    r.kind = Ast::Rep;
    r.min = mn, r.max = mx;
    r.kids.push_back(std::move(at));
    at = std::move(r);
    skip_extended(f);
    c = peek();
    if (c == '*' || c == '+' || c == '?' || (c == '{' && looks_like_bounds())) fail("a repeat of a repeat");
  }
  bool looks_like_bounds() {
    size_t save = pos_;
    int a, b;
    bool ok = bounds(a, b);
    pos_ = save;
    return ok;
  }
  // {n} {n,} {n,m}; anything else is a literal '{' (as PCRE).
  bool bounds(int& mn, int& mx) {
    size_t i = pos_ + 1;
    auto num = [&](int& v) {
      size_t b = i;
      v = 0;
      while (i < p_.size() && std::isdigit(uint8_t(p_[i])) && i - b < 6) v = v * 10 + (p_[i++] - '0');
      return i > b;
    };
    if (!num(mn)) return false;
    mx = mn;
    if (i < p_.size() && p_[i] == ',') {
      ++i;
      if (!num(mx)) mx = -1;
    }
    if (i >= p_.size() || p_[i] != '}') return false;
    pos_ = i + 1;
    return true;
  }

  Ast chars_ast(Set s, const Flags& f) {
    Ast a;
    a.kind = Ast::Chars;
    a.set = f.i ? fold(s) : s;
    return a;
  }
  Ast assert_ast(AssertKind k) {
    Ast a;
    a.kind = Ast::Assert;
    a.assert = k;
    return a;
  }

  Ast atom(Flags& f) {
    char c = p_[pos_++];
    switch (c) {
      case '(': return group(f);
      case '[': {
        Ast a;
        a.kind = Ast::Chars;
        a.set = klass(f);  // folded before any negation
        return a;
      }
      case '.': {
        Set s;
        s.set();
        if (!f.s) s.reset('\n');
        return chars_ast(s, f);
      }
      case '^': return assert_ast(f.m ? kLineStart : kStart);
      case '$': return assert_ast(f.m ? kLineEnd : f.dollar_endonly ? kEnd : kEndNl);
      case '*':
      case '+':
      case '?': --pos_, fail("nothing to repeat");
      case '\\': return escape(f);
      default: {
        Set s;
        s.set(uint8_t(c));
        return chars_ast(s, f);
      }
    }
  }

  Ast group(Flags& f) {
    Flags inner = f;
    if (peek() == '?') {
      ++pos_;
      char c = peek();
      if (c == '#') {
        while (!eof() && peek() != ')') ++pos_;
        if (eof()) fail("an unterminated comment");
        ++pos_;
        return Ast();
      }
      if (c == ':') {
        ++pos_;
      } else if (c == '<' && peek(1) != '=' && peek(1) != '!') {
        name('>');
      } else if (c == 'P' && peek(1) == '<') {
        ++pos_;
        name('>');
      } else if (c == '\'') {
        name('\'');
      } else if (std::isalpha(uint8_t(c)) || c == '-') {
        // (?imsx-imsx) or (?imsx-imsx:...)
        bool on = true;
        Flags g = f;
        for (; !eof() && peek() != ')' && peek() != ':'; ++pos_) {
          switch (peek()) {
            case '-': on = false; break;
            case 'i': g.i = on; break;
            case 's': g.s = on; break;
            case 'm': g.m = on; break;
            case 'x': g.x = on; break;
            default: fail(fmt::format("the inline option '{}'", peek()));
          }
        }
        if (eof()) fail("an unterminated group");
        if (p_[pos_++] == ')') {
          f = g;  // to the end of the enclosing group
          return Ast();
        }
        inner = g;
      } else {
        const char* what = c == '='   ? "lookahead"
                           : c == '!' ? "negative lookahead"
                           : c == '<' ? "lookbehind"
                           : c == '>' ? "an atomic group"
                                      : "this group construct";
        fail(what);
      }
    }
    Ast a = alt(inner);
    if (eof() || peek() != ')') fail("a missing ')'");
    ++pos_;
    return a;
  }
  void name(char close) {
    ++pos_;
    while (!eof() && peek() != close) ++pos_;
    if (eof()) fail("an unterminated group name");
    ++pos_;
  }

  // Escapes that mean a set of bytes (\d...), in or out of classes.
  bool class_escape(char c, Set& s) {
    Set sp = chars(" \t\n\v\f\r"), w = range('0', '9') | range('a', 'z') | range('A', 'Z'), h, v;
    w.set('_');
    h.set(0x09), h.set(0x20), h.set(0xa0);
    v = range(0x0a, 0x0d), v.set(0x85);
    switch (c) {
      case 'd': s = range('0', '9'); return true;
      case 'D': s = ~range('0', '9'); return true;
      case 'w': s = w; return true;
      case 'W': s = ~w; return true;
      case 's': s = sp; return true;
      case 'S': s = ~sp; return true;
      case 'h': s = h; return true;
      case 'H': s = ~h; return true;
      case 'v': s = v; return true;
      case 'V': s = ~v; return true;
    }
    return false;
  }
  int hexval(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }
  // A single-byte escape (after the backslash was read and c taken); -1 if c
  // is not one.
  int byte_escape(char c, bool in_class) {
    switch (c) {
      case 'n': return '\n';
      case 'r': return '\r';
      case 't': return '\t';
      case 'f': return '\f';
      case 'e': return 0x1b;
      case 'a': return 0x07;
      case 'b':
        if (in_class) return 0x08;
        return -1;
      case 'x': {
        int v = 0;
        if (peek() == '{') {
          ++pos_;
          int n = 0;
          while (!eof() && hexval(peek()) >= 0 && n < 8) v = v * 16 + hexval(p_[pos_++]), ++n;
          if (eof() || peek() != '}' || n == 0) fail("a bad \\x{...}");
          ++pos_;
          if (v > 255) fail("a character above \\xff (no UTF mode)");
          return v;
        }
        for (int n = 0; n < 2 && hexval(peek()) >= 0; ++n) v = v * 16 + hexval(p_[pos_++]);
        return v;
      }
      case '0': {
        int v = 0;
        for (int n = 0; n < 2 && peek() >= '0' && peek() <= '7'; ++n) v = v * 8 + (p_[pos_++] - '0');
        return v;
      }
      case 'c': {
        if (eof()) fail("\\c at the end");
        char x = p_[pos_++];
        if (x >= 'a' && x <= 'z') x = char(x - 32);
        if (uint8_t(x) > 127) fail("a bad \\c");
        return x ^ 0x40;
      }
    }
    if (!std::isalnum(uint8_t(c))) return uint8_t(c);
    return -1;
  }

  Ast escape(Flags& f) {
    if (eof()) fail("a trailing backslash");
    char c = p_[pos_++];
    Set s;
    if (class_escape(c, s)) {
      Ast a;
      a.kind = Ast::Chars;
      a.set = s;  // no folding: these sets are closed under case already
      return a;
    }
    switch (c) {
      case 'b': return assert_ast(kWordB);
      case 'B': return assert_ast(kNotWordB);
      case 'A': return assert_ast(kStart);
      case 'z': return assert_ast(kEnd);
      case 'Z': return assert_ast(kEndNl);
    }
    if (c >= '1' && c <= '9') fail("a backreference");
    int b = byte_escape(c, false);
    if (b < 0) fail(fmt::format("the escape \\{}", c));
    s.set(size_t(b));
    return chars_ast(s, f);
  }

  Set posix(const std::string& n) {
    Set s;
    if (n == "alpha")
      s = range('a', 'z') | range('A', 'Z');
    else if (n == "digit")
      s = range('0', '9');
    else if (n == "alnum")
      s = range('a', 'z') | range('A', 'Z') | range('0', '9');
    else if (n == "upper")
      s = range('A', 'Z');
    else if (n == "lower")
      s = range('a', 'z');
    else if (n == "space")
      s = chars(" \t\n\v\f\r");
    else if (n == "blank")
      s = chars(" \t");
    else if (n == "xdigit")
      s = range('0', '9') | range('a', 'f') | range('A', 'F');
    else if (n == "punct") {
      for (int c = 33; c < 127; ++c)
        if (!std::isalnum(c)) s.set(size_t(c));
    } else if (n == "print")
      s = range(32, 126);
    else if (n == "graph")
      s = range(33, 126);
    else if (n == "cntrl")
      s = range(0, 31), s.set(127);
    else if (n == "word")
      s = range('a', 'z') | range('A', 'Z') | range('0', '9'), s.set('_');
    else if (n == "ascii")
      s = range(0, 127);
    else
      fail(fmt::format("the class [:{}:]", n));
    return s;
  }

  // After '['; up to and past ']'.
  Set klass(const Flags& f) {
    bool neg = false;
    if (peek() == '^') neg = true, ++pos_;
    Set s;
    bool first = true;
    for (;;) {
      if (eof()) fail("an unterminated class");
      char c = p_[pos_++];
      if (c == ']' && !first) break;
      first = false;
      if (c == '[' && peek() == ':') {
        size_t e = p_.find(":]", pos_ + 1);
        if (e != std::string::npos) {
          std::string n = p_.substr(pos_ + 1, e - pos_ - 1);
          pos_ = e + 2;
          bool pneg = !n.empty() && n[0] == '^';
          Set ps = posix(pneg ? n.substr(1) : n);
          s |= pneg ? ~ps : ps;
          continue;
        }
      }
      int lo;
      if (c == '\\') {
        if (eof()) fail("a trailing backslash");
        char e = p_[pos_++];
        Set es;
        if (class_escape(e, es)) {
          s |= es;
          continue;
        }
        if (e >= '1' && e <= '9') fail("an octal escape in a class");
        lo = byte_escape(e, true);
        if (lo < 0) fail(fmt::format("the escape \\{} in a class", e));
      } else {
        lo = uint8_t(c);
      }
      // a range?
      if (peek() == '-' && pos_ + 1 < p_.size() && p_[pos_ + 1] != ']') {
        size_t save = pos_;
        ++pos_;
        char d = p_[pos_++];
        int hi;
        if (d == '\\') {
          if (eof()) fail("a trailing backslash");
          char e = p_[pos_++];
          Set es;
          if (class_escape(e, es)) {  // "a-\d": '-' is literal
            s.set(size_t(lo)), s.set('-'), s |= es;
            continue;
          }
          hi = byte_escape(e, true);
          if (hi < 0) fail(fmt::format("the escape \\{} in a class", e));
        } else if (d == '[' && peek() == ':') {
          pos_ = save;  // "a-[:digit:]": '-' is literal
          s.set(size_t(lo));
          continue;
        } else {
          hi = uint8_t(d);
        }
        if (hi < lo) fail("a range out of order");
        s |= range(lo, hi);
        continue;
      }
      s.set(size_t(lo));
    }
    if (f.i) s = fold(s);
    return neg ? ~s : s;
  }

  const std::string& p_;
  size_t pos_ = 0;
};

// Thompson NFA.
struct Node {
  enum Kind : uint8_t { Chars, Split, Eps, Assert, Match } kind;
  int set = -1;  // Chars
  int a = -1, b = -1;
  AssertKind assert = kStart;
};

class Nfa {
 public:
  std::vector<Node> nodes;
  std::vector<Set> sets;
  std::vector<int> end_nl;  // kEndNl assertions, checked after building

  int add(Node n) {
    if (nodes.size() > 50000) throw Unsupported("an expression too large (over 50,000 NFA states)");
    nodes.push_back(n);
    return int(nodes.size() - 1);
  }
  // The entry of `a`, continuing to `next`.
  int build(const Ast& a, int next) {
    switch (a.kind) {
      case Ast::Empty: return next;
      case Ast::Chars: {
        sets.push_back(a.set);
        return add({Node::Chars, int(sets.size() - 1), next, -1, kStart});
      }
      case Ast::Cat: {
        int cur = next;
        for (size_t i = a.kids.size(); i-- > 0;) cur = build(a.kids[i], cur);
        return cur;
      }
      case Ast::Alt: {
        int cur = build(a.kids.back(), next);
        for (size_t i = a.kids.size() - 1; i-- > 0;) cur = add({Node::Split, -1, build(a.kids[i], next), cur, kStart});
        return cur;
      }
      case Ast::Assert: {
        if (a.assert == kEndNl) {
          // PCRE's $ (and \Z): at the end, or before a newline that ends the
          // subject: (?:\z|\n\z) here.
          int z = add({Node::Assert, -1, next, -1, kEnd});
          sets.push_back(chars("\n"));
          int nl = add({Node::Chars, int(sets.size() - 1), z, -1, kStart});
          int z2 = add({Node::Assert, -1, next, -1, kEnd});
          end_nl.push_back(next);
          return add({Node::Split, -1, z2, nl, kStart});
        }
        return add({Node::Assert, -1, next, -1, a.assert});
      }
      case Ast::Rep: {
        const Ast& k = a.kids[0];
        int cur = next;
        if (a.max < 0) {
          int loop = add({Node::Split, -1, -1, next, kStart});
          nodes[size_t(loop)].a = build(k, loop);
          cur = loop;
        } else {
          for (int i = a.min; i < a.max; ++i) cur = add({Node::Split, -1, build(k, cur), next, kStart});
        }
        for (int i = 0; i < a.min; ++i) cur = build(k, cur);
        return cur;
      }
    }
    return next;
  }
  // The $ rewrite consumes the final newline; exact unless what follows the
  // $ could itself consume a newline.
  void check_end_nl() const {
    for (int start : end_nl) {
      std::vector<int> st{start};
      std::vector<bool> seen(nodes.size());
      while (!st.empty()) {
        int n = st.back();
        st.pop_back();
        if (n < 0 || seen[size_t(n)]) continue;
        seen[size_t(n)] = true;
        const Node& x = nodes[size_t(n)];
        if (x.kind == Node::Chars) {
          if (sets[size_t(x.set)]['\n']) throw Unsupported("'$' followed by something that can match a newline");
          continue;
        }
        st.push_back(x.a), st.push_back(x.b);
      }
    }
  }
};

// The kind of the byte before a position.
enum Ctx : uint8_t { kBegin, kNewline, kWord, kOther };
Ctx ctx_of(int c) { return c == '\n' ? kNewline : is_word(c) ? kWord : kOther; }

bool holds(AssertKind k, Ctx prev, int next /* 256: the end */) {
  bool pw = prev == kWord, nw = next < 256 && is_word(next);
  switch (k) {
    case kStart: return prev == kBegin;
    // PCRE: not after a newline that ends the subject
    case kLineStart: return prev == kBegin || (prev == kNewline && next != 256);
    case kEnd: return next == 256;
    case kLineEnd: return next == 256 || next == '\n';
    case kWordB: return pw != nw;
    case kNotWordB: return pw == nw;
    case kEndNl: return false;  // rewritten
  }
  return false;
}

}  // namespace

bool RegexDfa::compile(const std::string& pattern, const std::string& flags, std::string& err, uint32_t max_states) {
  Flags f;
  bool anchored = false;
  for (char c : flags) {
    switch (c) {
      case 'i': f.i = true; break;
      case 's': f.s = true; break;
      case 'm': f.m = true; break;
      case 'x': f.x = true; break;
      case 'A': anchored = true; break;
      case 'E': f.dollar_endonly = true; break;
      case 'G':
      case 'R':
      case 'B':
      case 'O': break;  // ungreedy, relative, raw, limits: whether a match exists does not change
      default:
        if (pcre_buffer_flag(c)) break;  // which buffer it reads: neither
        err = fmt::format("the flag '{}'", c);
        return false;
    }
  }
  Nfa nfa;
  int start;
  try {
    // Each literal and class is folded with the flags of its scope.
    Parser p(pattern);
    Ast ast = p.parse(f);
    int match = nfa.add({Node::Match, -1, -1, -1, kStart});
    start = nfa.build(ast, match);
    nfa.check_end_nl();
  } catch (const Unsupported& e) {
    err = e.what();
    return false;
  }

  // Byte classes: bytes that no set, and no assertion, tells apart.
  std::map<std::vector<bool>, uint8_t> sig_class;
  std::vector<int> rep;  // a byte per class
  cls_.assign(256, 0);
  for (int c = 0; c < 256; ++c) {
    std::vector<bool> sig;
    sig.push_back(c == '\n');
    sig.push_back(is_word(c));
    for (const Set& s : nfa.sets) sig.push_back(s[size_t(c)]);
    auto [it, fresh] = sig_class.emplace(sig, uint8_t(rep.size()));
    if (fresh) rep.push_back(c);
    cls_[size_t(c)] = it->second;
  }
  nclasses_ = uint32_t(rep.size());

  // Subset construction over (NFA kernel, previous byte kind).
  using Key = std::pair<std::vector<int>, uint8_t>;
  std::map<Key, uint32_t> ids;
  std::vector<Key> todo;
  const uint32_t kDead = 0, kAccept = 1;
  accept_ = kAccept;
  next_.assign(size_t(2) * nclasses_, 0);
  std::fill(next_.begin() + nclasses_, next_.end(), kAccept);
  accept_end_ = {0, 1};
  auto intern = [&](std::vector<int> k, uint8_t prev) -> uint32_t {
    if (k.empty()) return kDead;
    std::sort(k.begin(), k.end());
    k.erase(std::unique(k.begin(), k.end()), k.end());
    Key key{std::move(k), prev};
    auto it = ids.find(key);
    if (it != ids.end()) return it->second;
    uint32_t id = uint32_t(accept_end_.size());
    ids.emplace(key, id);
    todo.push_back(key);
    accept_end_.push_back(0);
    next_.resize(next_.size() + nclasses_, 0);
    return id;
  };
  std::vector<int> stack;
  std::vector<uint32_t> seen(nfa.nodes.size(), 0);
  uint32_t epoch = 0;
  // The closure of `kernel` given the bytes around: the Chars nodes reached
  // (into out), and whether Match is.
  auto closure = [&](const std::vector<int>& kernel, Ctx prev, int next, std::vector<int>& out) {
    ++epoch;
    out.clear();
    stack.assign(kernel.begin(), kernel.end());
    bool matched = false;
    while (!stack.empty()) {
      int n = stack.back();
      stack.pop_back();
      if (n < 0 || seen[size_t(n)] == epoch) continue;
      seen[size_t(n)] = epoch;
      const Node& x = nfa.nodes[size_t(n)];
      switch (x.kind) {
        case Node::Match: matched = true; break;
        case Node::Chars: out.push_back(n); break;
        case Node::Eps: stack.push_back(x.a); break;
        case Node::Split: stack.push_back(x.b), stack.push_back(x.a); break;
        case Node::Assert:
          if (holds(x.assert, prev, next)) stack.push_back(x.a);
          break;
      }
    }
    return matched;
  };
  start_ = intern({start}, kBegin);
  std::vector<int> reached, nxt;
  for (size_t t = 0; t < todo.size(); ++t) {
    if (todo.size() > max_states) {
      err = fmt::format("more than {} DFA states", max_states);
      return false;
    }
    Key key = todo[t];
    uint32_t id = ids[key];
    Ctx prev = Ctx(key.second);
    accept_end_[id] = closure(key.first, prev, 256, reached);
    for (uint32_t cl = 0; cl < nclasses_; ++cl) {
      int c = rep[cl];
      uint32_t to;
      if (closure(key.first, prev, c, reached)) {
        to = kAccept;
      } else {
        nxt.clear();
        for (int n : reached)
          if (nfa.sets[size_t(nfa.nodes[size_t(n)].set)][size_t(c)]) nxt.push_back(nfa.nodes[size_t(n)].a);
        if (!anchored) nxt.push_back(start);
        to = intern(nxt, ctx_of(c));
      }
      next_[size_t(id) * nclasses_ + cl] = to;
    }
  }
  states_ = uint32_t(accept_end_.size());
  return true;
}

k::RegexView RegexDfa::view() const {
  return {nclasses_, start_, accept_, cls_.data(), next_.data(), accept_end_.data()};
}

}  // namespace shoal::ids
