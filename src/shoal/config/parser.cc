#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "shoal/config/config.hh"

namespace shoal::config {

namespace {

enum class T {
  Ident,
  Var,
  Number,
  Colon2,
  Arrow,
  LBrack,
  RBrack,
  LBrace,
  RBrace,
  LParen,
  RParen,
  Comma,
  Semi,
  Bar,
  Bar2,
  Eof,
  Bad
};

struct Token {
  T type = T::Eof;
  std::string text;
  Loc loc;
};

class Lexer {
 public:
  Lexer(int32_t file, const std::string& text) : file_(file), s_(text) {}

  const Token& peek() {
    if (!have_) {
      tok_ = lex();
      have_ = true;
    }
    return tok_;
  }
  Token next() {
    peek();
    have_ = false;
    return tok_;
  }
  // After a '(' token has been peeked: consumes it and returns the raw text up
  // to the matching ')', which is consumed too.
  bool raw_config(std::string& out, Loc& start, Diagnostics& diag) {
    Token open = next();
    start = here();
    size_t begin = pos_;
    int depth = 0;
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == '"' || c == '\'') {
        char q = c;
        advance();
        while (pos_ < s_.size() && s_[pos_] != q) {
          if (s_[pos_] == '\\' && q == '"' && pos_ + 1 < s_.size()) advance();
          advance();
        }
        if (pos_ >= s_.size()) break;
        advance();
        continue;
      }
      if (c == '/' && pos_ + 1 < s_.size() && (s_[pos_ + 1] == '/' || s_[pos_ + 1] == '*')) {
        skip_comment();
        continue;
      }
      if (c == '(') ++depth;
      if (c == ')') {
        if (depth == 0) {
          out = strip_comments(s_.substr(begin, pos_ - begin));
          advance();
          return true;
        }
        --depth;
      }
      advance();
    }
    diag.error(open.loc, "unterminated configuration string: missing ')'");
    return false;
  }
  Loc here() const { return Loc{file_, line_, col_, 1}; }
  // Two-token lookahead where the grammar needs it (keyword formals).
  struct State {
    size_t pos;
    uint32_t line, col;
    Token tok;
    bool have;
  };
  State save() const { return {pos_, line_, col_, tok_, have_}; }
  void restore(const State& s) { pos_ = s.pos, line_ = s.line, col_ = s.col, tok_ = s.tok, have_ = s.have; }

 private:
  void advance() {
    if (s_[pos_] == '\n') {
      ++line_;
      col_ = 1;
    } else {
      ++col_;
    }
    ++pos_;
  }
  void skip_comment() {
    if (s_[pos_ + 1] == '/') {
      while (pos_ < s_.size() && s_[pos_] != '\n') advance();
    } else {
      advance();
      advance();
      while (pos_ < s_.size() && !(s_[pos_] == '*' && pos_ + 1 < s_.size() && s_[pos_ + 1] == '/')) advance();
      if (pos_ < s_.size()) advance(), advance();
    }
  }
  // Comments inside configuration strings are removed, keeping newlines so
  // argument locations stay right.
  static std::string strip_comments(const std::string& in) {
    std::string out;
    for (size_t i = 0; i < in.size(); ++i) {
      char c = in[i];
      if (c == '"' || c == '\'') {
        size_t j = i + 1;
        while (j < in.size() && in[j] != c) j += (in[j] == '\\' && c == '"') ? 2 : 1;
        out.append(in, i, std::min(j + 1, in.size()) - i);
        i = j;
      } else if (c == '/' && i + 1 < in.size() && in[i + 1] == '/') {
        while (i < in.size() && in[i] != '\n') out.push_back(' '), ++i;
        if (i < in.size()) out.push_back('\n');
      } else if (c == '/' && i + 1 < in.size() && in[i + 1] == '*') {
        out += "  ";
        i += 2;
        while (i < in.size() && !(in[i] == '*' && i + 1 < in.size() && in[i + 1] == '/'))
          out.push_back(in[i] == '\n' ? '\n' : ' '), ++i;
        out += "  ";
        ++i;
      } else {
        out.push_back(c);
      }
    }
    return out;
  }
  static bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_' || c == '@'; }
  static bool ident_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '@' || c == '/';
  }

  Token lex() {
    for (;;) {
      while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) advance();
      if (pos_ >= s_.size()) return Token{T::Eof, "", here()};
      char c = s_[pos_];
      if (c == '/' && pos_ + 1 < s_.size() && (s_[pos_ + 1] == '/' || s_[pos_ + 1] == '*')) {
        skip_comment();
        continue;
      }
      if (c == '#' && col_ == 1) {  // preprocessor-style lines (#!, #line) are ignored
        while (pos_ < s_.size() && s_[pos_] != '\n') advance();
        continue;
      }
      break;
    }
    Token t;
    t.loc = here();
    char c = s_[pos_];
    auto one = [&](T type) {
      t.type = type;
      t.text = std::string(1, c);
      advance();
      return t;
    };
    auto two = [&](T type) {
      t.type = type;
      t.text = s_.substr(pos_, 2);
      t.loc.len = 2;
      advance();
      advance();
      return t;
    };
    char n = pos_ + 1 < s_.size() ? s_[pos_ + 1] : '\0';
    if (c == ':' && n == ':') return two(T::Colon2);
    if (c == '-' && n == '>') return two(T::Arrow);
    if (c == '|' && n == '|') return two(T::Bar2);
    switch (c) {
      case '[': return one(T::LBrack);
      case ']': return one(T::RBrack);
      case '{': return one(T::LBrace);
      case '}': return one(T::RBrace);
      case '(': return one(T::LParen);
      case ')': return one(T::RParen);
      case ',': return one(T::Comma);
      case ';': return one(T::Semi);
      case '|': return one(T::Bar);
      default: break;
    }
    size_t b = pos_;
    if (c == '$' && pos_ + 1 < s_.size() && ident_start(s_[pos_ + 1])) {
      advance();
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) advance();
      t.type = T::Var;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) advance();
      t.type = T::Number;
    } else if (ident_start(c)) {
      while (pos_ < s_.size() && ident_char(s_[pos_])) advance();
      // A name cannot end with '/'
      while (pos_ > b + 1 && s_[pos_ - 1] == '/') --pos_, --col_;
      t.type = T::Ident;
    } else {
      advance();
      t.type = T::Bad;
    }
    t.text = s_.substr(b, pos_ - b);
    t.loc.len = uint32_t(t.text.size());
    return t;
  }

  int32_t file_;
  const std::string& s_;
  size_t pos_ = 0;
  uint32_t line_ = 1, col_ = 1;
  Token tok_;
  bool have_ = false;
};

// ---- AST ---------------------------------------------------------------

struct AClass;

struct ADecl {
  std::string name;  // empty: anonymous
  Loc name_loc;
  std::string cls;
  Loc cls_loc;
  std::shared_ptr<AClass> compound;  // inline "{ ... }" class
  std::string config;
  Loc config_loc;
};

struct AEnd {
  int occ = -1;      // this occurrence in the text (a chain's middle element is
                     // both the "to" and the "from" of two connections)
  int decl = -1;     // an element declared at this point
  std::string name;  // or a reference by name (decl == -1)
  Loc loc;
  int port = 0;
  bool port_given = false;
};

struct AConn {
  AEnd from, to;
  Loc loc;  // the arrow
};

struct ADefine {
  std::string name, value;
  Loc loc;
};

struct Body {
  std::vector<ADecl> decls;
  std::vector<AConn> conns;
  std::vector<std::shared_ptr<AClass>> classes;
  std::vector<ADefine> defines;
  std::vector<std::string> requirements;
  std::vector<std::string> bare_refs;  // standalone "name;" statements (no effect)
};

struct AFormal {
  std::string name;     // without '$'
  std::string keyword;  // empty: positional
  Loc loc;
};

struct AClass {
  std::string name;
  Loc loc;
  std::string synonym;  // elementclass A B;
  Loc synonym_loc;
  std::vector<AFormal> formals;
  Body body;
  std::shared_ptr<AClass> next;  // overload with another arity ("||")
};

// ---- parser ------------------------------------------------------------

class Parser {
 public:
  Parser(Lexer& lx, Diagnostics& diag) : lx_(lx), diag_(diag) {}

  void parse_file(Body& body) {
    while (lx_.peek().type != T::Eof) {
      if (!statement(body)) recover(false);
    }
  }

 private:
  bool expect(T t, const char* what) {
    if (lx_.peek().type == t) {
      lx_.next();
      return true;
    }
    const Token& k = lx_.peek();
    diag_.error(k.loc, fmt::format("expected {}, found {}", what, describe(k)));
    return false;
  }
  static std::string describe(const Token& t) {
    if (t.type == T::Eof) return "end of file";
    return fmt::format("'{}'", t.text);
  }
  void recover(bool in_compound) {
    int depth = 0;
    while (lx_.peek().type != T::Eof) {
      T t = lx_.peek().type;
      if (t == T::LBrace) ++depth;
      if (t == T::RBrace) {
        if (depth == 0) {
          if (!in_compound) lx_.next();
          return;
        }
        --depth;
      }
      lx_.next();
      if (t == T::Semi && depth == 0) return;
    }
  }

  bool statement(Body& body) {
    const Token& t = lx_.peek();
    if (t.type == T::Semi) {
      lx_.next();
      return true;
    }
    if (t.type == T::Ident && t.text == "elementclass") return elementclass(body);
    if (t.type == T::Ident && (t.text == "require" || t.text == "define")) {
      Token kw = lx_.next();
      if (lx_.peek().type != T::LParen) {
        diag_.error(lx_.peek().loc, fmt::format("expected '(' after '{}'", kw.text));
        return false;
      }
      std::string cfg;
      Loc at;
      if (!lx_.raw_config(cfg, at, diag_)) return false;
      if (kw.text == "require") {
        for (auto& a : split_args(cfg, at, false)) body.requirements.push_back(a.text);
      } else {
        for (auto& a : split_args(cfg, at, false)) {
          std::string_view s = a.text;
          if (s.empty() || s[0] != '$') {
            diag_.error(a.loc, "define expects '$NAME value'");
            continue;
          }
          size_t sp = 1;
          while (sp < s.size() && (std::isalnum(static_cast<unsigned char>(s[sp])) || s[sp] == '_')) ++sp;
          body.defines.push_back({std::string(s.substr(1, sp - 1)), std::string(trim(s.substr(sp))), a.loc});
        }
      }
      return true;
    }
    return connection(body);
  }

  bool elementclass(Body& body) {
    lx_.next();
    Token name = lx_.next();
    if (name.type != T::Ident) {
      diag_.error(name.loc, fmt::format("expected element class name after 'elementclass', found {}", describe(name)));
      return false;
    }
    auto cls = std::make_shared<AClass>();
    cls->name = name.text;
    cls->loc = name.loc;
    if (lx_.peek().type == T::Ident) {
      Token syn = lx_.next();
      cls->synonym = syn.text;
      cls->synonym_loc = syn.loc;
    } else if (lx_.peek().type == T::LBrace) {
      if (!compound(*cls)) return false;
    } else {
      diag_.error(lx_.peek().loc, fmt::format("expected '{{' or a class name after 'elementclass {}', found {}",
                                              name.text, describe(lx_.peek())));
      return false;
    }
    body.classes.push_back(cls);
    return true;
  }

  // '{' [formals '|'] statements ['||' variant] '}'
  bool compound(AClass& cls) {
    Loc open = lx_.next().loc;
    AClass* cur = &cls;
    for (;;) {
      if (!formals(*cur)) return false;
      while (lx_.peek().type != T::RBrace && lx_.peek().type != T::Bar2) {
        if (lx_.peek().type == T::Eof) {
          diag_.error(open, "unterminated compound element: missing '}'");
          return false;
        }
        if (!statement(cur->body)) recover(true);
      }
      if (lx_.next().type == T::RBrace) return true;
      cur->next = std::make_shared<AClass>();
      cur->next->name = cls.name;
      cur->next->loc = cls.loc;
      cur = cur->next.get();
    }
  }

  // Formal parameters: "$a, $b, KEYWORD $c, __REST__ $d |" at the start of a
  // compound body. A word followed by a variable starts keyword formals; any
  // other word starts the body.
  bool formals(AClass& cls) {
    const Token& t = lx_.peek();
    if (t.type == T::Ident) {
      auto st = lx_.save();
      lx_.next();
      bool is_formal = lx_.peek().type == T::Var;
      lx_.restore(st);
      if (!is_formal) return true;
    } else if (t.type != T::Var) {
      return true;
    }
    while (true) {
      Token v = lx_.peek();
      if (v.type == T::Var) {
        lx_.next();
        cls.formals.push_back({v.text.substr(1), "", v.loc});
      } else if (v.type == T::Ident) {
        lx_.next();
        Token var = lx_.next();
        if (var.type != T::Var) {
          diag_.error(var.loc, fmt::format("expected a '$variable' after keyword '{}'", v.text));
          return false;
        }
        cls.formals.push_back({var.text.substr(1), v.text, var.loc});
      } else {
        diag_.error(v.loc, fmt::format("expected a formal parameter, found {}", describe(v)));
        return false;
      }
      if (lx_.peek().type == T::Comma) {
        lx_.next();
        continue;
      }
      return expect(T::Bar, "'|' after formal parameters");
    }
  }

  bool port(int& p, bool& given) {
    if (lx_.peek().type != T::LBrack) return true;
    lx_.next();
    Token n = lx_.next();
    if (n.type != T::Number) {
      diag_.error(n.loc, fmt::format("expected a port number, found {}", describe(n)));
      return false;
    }
    uint64_t v = 0;
    if (!parse_uint(n.text, v) || v > 65535) {
      diag_.error(n.loc, fmt::format("port number {} is too large", n.text));
      return false;
    }
    p = int(v);
    given = true;
    return expect(T::RBrack, "']'");
  }

  // [port] element [port]
  bool endpoint(Body& body, AEnd& in_side, AEnd& out_side, bool& is_ref_only) {
    in_side.occ = out_side.occ = next_occ_++;
    if (!port(in_side.port, in_side.port_given)) return false;
    const Token& t = lx_.peek();
    if (t.type == T::LBrace) {  // anonymous compound
      ADecl d;
      d.compound = std::make_shared<AClass>();
      d.compound->name = "";
      d.compound->loc = t.loc;
      d.cls_loc = t.loc;
      d.name_loc = t.loc;
      if (!compound(*d.compound)) return false;
      if (lx_.peek().type == T::LParen && !config(d)) return false;
      body.decls.push_back(std::move(d));
      in_side.decl = out_side.decl = int(body.decls.size() - 1);
      in_side.loc = out_side.loc = t.loc;
      is_ref_only = false;
    } else if (t.type == T::Ident) {
      Token first = lx_.next();
      std::vector<Token> names{first};
      while (lx_.peek().type == T::Comma) {  // "a, b :: Class"
        lx_.next();
        Token n = lx_.next();
        if (n.type != T::Ident) {
          diag_.error(n.loc, fmt::format("expected an element name, found {}", describe(n)));
          return false;
        }
        names.push_back(n);
      }
      if (lx_.peek().type == T::Colon2) {
        lx_.next();
        ADecl proto;
        const Token& c = lx_.peek();
        if (c.type == T::LBrace) {
          proto.compound = std::make_shared<AClass>();
          proto.cls_loc = c.loc;
          if (!compound(*proto.compound)) return false;
        } else if (c.type == T::Ident) {
          Token ct = lx_.next();
          proto.cls = ct.text;
          proto.cls_loc = ct.loc;
        } else {
          diag_.error(c.loc, fmt::format("expected a class name after '::', found {}", describe(c)));
          return false;
        }
        if (lx_.peek().type == T::LParen && !config(proto)) return false;
        for (auto& n : names) {
          ADecl d = proto;
          d.name = n.text;
          d.name_loc = n.loc;
          body.decls.push_back(std::move(d));
        }
        in_side.decl = out_side.decl = int(body.decls.size() - 1);
        if (names.size() > 1) in_side.decl = int(body.decls.size() - names.size());
        in_side.loc = out_side.loc = names.back().loc;
        is_ref_only = false;
      } else if (names.size() > 1) {
        diag_.error(lx_.peek().loc, fmt::format("expected '::' after element names, found {}", describe(lx_.peek())));
        return false;
      } else if (lx_.peek().type == T::LParen) {  // anonymous "Class(config)"
        ADecl d;
        d.cls = first.text;
        d.cls_loc = d.name_loc = first.loc;
        if (!config(d)) return false;
        body.decls.push_back(std::move(d));
        in_side.decl = out_side.decl = int(body.decls.size() - 1);
        in_side.loc = out_side.loc = first.loc;
        is_ref_only = false;
      } else {
        in_side.name = out_side.name = first.text;
        in_side.loc = out_side.loc = first.loc;
      }
    } else {
      diag_.error(t.loc, fmt::format("expected an element, found {}", describe(t)));
      return false;
    }
    return port(out_side.port, out_side.port_given);
  }

  bool config(ADecl& d) { return lx_.raw_config(d.config, d.config_loc, diag_); }

  bool connection(Body& body) {
    AEnd in_side, out_side;
    bool ref_only = true;
    if (!endpoint(body, in_side, out_side, ref_only)) return false;
    if (in_side.port_given) {
      if (lx_.peek().type != T::Arrow) {
        diag_.error(in_side.loc, "input port given, but no connection leads here");
        return false;
      }
    }
    if (lx_.peek().type != T::Arrow) {
      if (ref_only) body.bare_refs.push_back(in_side.name);
      if (out_side.port_given) {
        diag_.error(lx_.peek().loc, fmt::format("expected '->' after output port, found {}", describe(lx_.peek())));
        return false;
      }
      return end_statement();
    }
    AEnd prev = out_side;
    while (lx_.peek().type == T::Arrow) {
      Loc arrow = lx_.next().loc;
      AEnd nin, nout;
      bool r;
      if (!endpoint(body, nin, nout, r)) return false;
      AConn c;
      c.from = prev;
      c.to = nin;
      c.loc = arrow;
      body.conns.push_back(c);
      prev = nout;
    }
    if (prev.port_given) {
      diag_.error(lx_.peek().loc, fmt::format("expected '->' after output port, found {}", describe(lx_.peek())));
      return false;
    }
    return end_statement();
  }

  bool end_statement() {
    T t = lx_.peek().type;
    if (t == T::Semi) {
      lx_.next();
      return true;
    }
    if (t == T::Eof || t == T::RBrace || t == T::Bar2) return true;
    // Click allows a new statement without ';' only at a line break; be strict
    // but helpful.
    diag_.error(lx_.peek().loc, fmt::format("expected ';' or '->', found {}", describe(lx_.peek())));
    return false;
  }

  Lexer& lx_;
  Diagnostics& diag_;
  int next_occ_ = 0;
};

// ---- expansion ---------------------------------------------------------

struct Node {
  std::string name;
  const ElementInfo* info = nullptr;  // null: pseudo port node of a compound
  bool pseudo_in = false;
  std::string config;
  Loc loc, config_loc;
  std::string compound_desc;  // for pseudo nodes: "'x' :: Comp"
};

struct Edge {
  int from, from_port, to, to_port;
  Loc loc;
};

struct Scope {
  const Body* body;
  const Scope* parent;
  std::map<std::string, std::string> vars;
  std::map<std::string, const AClass*> classes;
  const AClass* find_class(const std::string& n) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->classes.find(n);
      if (it != s->classes.end()) return it->second;
    }
    return nullptr;
  }
};

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> d(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) d[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t prev = d[0];
    d[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t cur = d[j];
      d[j] = std::min({d[j] + 1, d[j - 1] + 1, prev + (std::tolower(a[i - 1]) == std::tolower(b[j - 1]) ? 0 : 1)});
      prev = cur;
    }
  }
  return d[b.size()];
}

class Expander {
 public:
  Expander(Diagnostics& diag) : diag_(diag) {}
  std::vector<Node> nodes;
  std::vector<Edge> edges;

  struct Ends {
    int in = -1, out = -1;  // node receiving input / producing output
  };

  // Expands `body` with element names prefixed by `prefix`. `io` gives the
  // pseudo nodes for "input" and "output" inside a compound.
  void expand(const Body& body, Scope& scope, const std::string& prefix, const Ends* io, int depth) {
    if (depth > 50) {
      diag_.error({}, "compound elements nested more than 50 deep (recursive elementclass?)");
      return;
    }
    for (auto& c : body.classes) {
      if (scope.classes.count(c->name)) {
        diag_.error(c->loc, fmt::format("redefinition of element class '{}'", c->name));
        continue;
      }
      scope.classes[c->name] = c.get();
    }
    std::map<std::string, Ends> local;
    std::map<std::string, Loc> first_loc;
    std::vector<Ends> decl_ends(body.decls.size());
    int made = 0;
    auto make = [&](const ADecl& d, const std::string& given_name) -> Ends {
      std::string cls = d.cls;
      std::string name = given_name;
      ++made;
      if (name.empty()) name = fmt::format("{}@{}", d.compound ? std::string("Compound") : cls, made);
      std::string full = prefix + name;
      std::string cfg = substitute(d.config, flatten_vars(scope));
      if (d.compound) return instantiate(*d.compound, full, cfg, d, scope, depth);
      const AClass* ac = scope.find_class(cls);
      std::set<const AClass*> seen;
      while (ac && !ac->synonym.empty() && seen.insert(ac).second) {
        if (const AClass* next = scope.find_class(ac->synonym)) {
          ac = next;
        } else {
          cls = ac->synonym;
          ac = nullptr;
        }
      }
      if (ac) return instantiate(*ac, full, cfg, d, scope, depth);
      const ElementInfo* info = Registry::instance().find(cls);
      if (!info) {
        unknown_class(d.cls_loc, cls);
        return {};
      }
      Node n;
      n.name = full;
      n.info = info;
      n.config = cfg;
      n.loc = d.name.empty() ? d.cls_loc : d.name_loc;
      n.config_loc = d.config_loc.valid() ? d.config_loc : d.cls_loc;
      nodes.push_back(std::move(n));
      int id = int(nodes.size() - 1);
      return {id, id};
    };
    // Declarations first (names can be used before their declaration).
    for (size_t i = 0; i < body.decls.size(); ++i) {
      const ADecl& d = body.decls[i];
      if (!d.name.empty()) {
        if (d.name == "input" || d.name == "output") {
          diag_.error(d.name_loc, fmt::format("'{}' is reserved for compound element ports", d.name));
          continue;
        }
        auto it = first_loc.find(d.name);
        if (it != first_loc.end()) {
          diag_.error(d.name_loc, fmt::format("redeclaration of element '{}'", d.name));
          diag_.note(it->second, fmt::format("'{}' was first declared here", d.name));
          continue;
        }
        first_loc[d.name] = d.name_loc;
      }
      decl_ends[i] = make(d, d.name);
      if (!d.name.empty()) local[d.name] = decl_ends[i];
    }
    std::map<int, Ends> by_occ;  // bare class names made into anonymous elements
    auto resolve = [&](const AEnd& e, bool as_source) -> int {
      Ends ends;
      if (auto it = by_occ.find(e.occ); it != by_occ.end()) {
        ends = it->second;
        if (ends.in < 0) return -1;  // already reported
      } else if (e.decl >= 0) {
        ends = decl_ends[size_t(e.decl)];
      } else if (io && e.name == "input") {
        if (!as_source) {
          diag_.error(e.loc, "'input' can only be used as a connection source");
          return -1;
        }
        return io->in;
      } else if (io && e.name == "output") {
        if (as_source) {
          diag_.error(e.loc, "'output' can only be used as a connection destination");
          return -1;
        }
        return io->out;
      } else if (auto it = local.find(e.name); it != local.end()) {
        ends = it->second;
      } else if ((e.name == "input" || e.name == "output") && !io) {
        diag_.error(e.loc, fmt::format("'{}' used outside a compound element", e.name));
        return -1;
      } else if (scope.find_class(e.name) || Registry::instance().find(e.name)) {
        ADecl d;
        d.cls = e.name;
        d.cls_loc = d.name_loc = e.loc;
        ends = make(d, "");
        by_occ[e.occ] = ends;
      } else {
        if (!e.name.empty() && std::isupper(static_cast<unsigned char>(e.name[0])))
          unknown_class(e.loc, e.name);
        else
          diag_.error(e.loc, fmt::format("undeclared element '{}'", e.name));
        by_occ[e.occ] = Ends{};
        return -1;
      }
      return as_source ? ends.out : ends.in;
    };
    for (auto& c : body.conns) {
      int f = resolve(c.from, true);
      int t = resolve(c.to, false);
      if (f < 0 || t < 0) continue;
      edges.push_back({f, c.from.port, t, c.to.port, c.loc});
    }
    for (auto& r : body.bare_refs) {
      if (!local.count(r) && !(io && (r == "input" || r == "output"))) {
        AEnd e;
        e.name = r;
        resolve(e, true);
      }
    }
  }

 private:
  static std::map<std::string, std::string> flatten_vars(const Scope& s) {
    std::map<std::string, std::string> out;
    for (const Scope* p = &s; p; p = p->parent)
      for (auto& [k, v] : p->vars) out.emplace(k, v);
    return out;
  }

  void unknown_class(const Loc& loc, const std::string& cls) {
    std::string best;
    size_t bd = 3;
    for (auto* i : Registry::instance().all()) {
      size_t d = edit_distance(cls, std::string(i->name));
      if (d < bd) bd = d, best = std::string(i->name);
    }
    if (best.empty())
      diag_.error(loc, fmt::format("unknown element class '{}'", cls));
    else
      diag_.error(loc, fmt::format("unknown element class '{}' (did you mean '{}'?)", cls, best));
  }

  Ends instantiate(const AClass& cls0, const std::string& full, const std::string& cfg, const ADecl& d, Scope& scope,
                   int depth) {
    std::vector<ArgItem> args = split_args(cfg, d.config_loc.valid() ? d.config_loc : d.cls_loc, false);
    // Choose the first overload whose formals fit: the same count, or with
    // "__REST__ $x" last, at least the others.
    auto fits = [&](const AClass& c) {
      bool rest = !c.formals.empty() && c.formals.back().keyword == "__REST__";
      return rest ? args.size() + 1 >= c.formals.size() : args.size() == c.formals.size();
    };
    const AClass* cls = &cls0;
    while (cls && !fits(*cls)) cls = cls->next.get();
    if (!cls) {
      diag_.error(d.cls_loc, fmt::format("compound element '{}' takes {} argument{}, {} given",
                                         cls0.name.empty() ? "{...}" : cls0.name, cls0.formals.size(),
                                         cls0.formals.size() == 1 ? "" : "s", args.size()));
      return {};
    }
    Scope inner{&cls->body, &scope, {}, {}};
    // Positional formals first, then keyword formals by keyword. An argument
    // is a keyword argument only when its first word is one of this class's
    // keyword formals ("Foo(A B C)" is positional).
    std::vector<bool> used(args.size(), false);
    auto keyword_arg = [&](const ArgItem& a) {
      std::string kw;
      if (!looks_like_keyword(a.text, &kw)) return false;
      for (auto& f : cls->formals)
        if (f.keyword == kw) return true;
      return false;
    };
    size_t pi = 0;
    for (auto& f : cls->formals) {
      if (!f.keyword.empty()) continue;
      while (pi < args.size() && keyword_arg(args[pi])) ++pi;
      if (pi < args.size()) {
        inner.vars[f.name] = args[pi].text;
        used[pi++] = true;
      }
    }
    for (auto& f : cls->formals) {
      if (f.keyword.empty() || f.keyword == "__REST__") continue;
      for (size_t i = 0; i < args.size(); ++i) {
        std::string kw, rest;
        if (!used[i] && looks_like_keyword(args[i].text, &kw, &rest) && kw == f.keyword) {
          inner.vars[f.name] = rest;
          used[i] = true;
        }
      }
    }
    if (!cls->formals.empty() && cls->formals.back().keyword == "__REST__") {
      std::string rest;
      for (size_t i = 0; i < args.size(); ++i)
        if (!used[i]) rest += (rest.empty() ? "" : ", ") + args[i].text, used[i] = true;
      inner.vars[cls->formals.back().name] = rest;
    }
    for (size_t i = 0; i < args.size(); ++i)
      if (!used[i]) {
        diag_.error(args[i].loc, fmt::format("argument does not match a formal parameter of '{}'", cls->name));
        return {};
      }
    Node in, out;
    in.name = full + "/input";
    in.pseudo_in = true;
    in.loc = d.name.empty() ? d.cls_loc : d.name_loc;
    in.compound_desc = fmt::format("'{}' :: {}", full, cls->name.empty() ? "{...}" : cls->name);
    out = in;
    out.name = full + "/output";
    out.pseudo_in = false;
    nodes.push_back(in);
    nodes.push_back(out);
    Ends io{int(nodes.size() - 2), int(nodes.size() - 1)};
    expand(cls->body, inner, full + "/", &io, depth + 1);
    return io;
  }

  Diagnostics& diag_;
};

// Removes pseudo nodes by joining the connections through them.
void splice(std::vector<Node>& nodes, std::vector<Edge>& edges, Diagnostics& diag) {
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (nodes[n].info) continue;
    std::vector<Edge> ins, outs, keep;
    for (auto& e : edges) {
      if (e.to == int(n))
        ins.push_back(e);
      else if (e.from == int(n))
        outs.push_back(e);
      else
        keep.push_back(e);
    }
    // For the input pseudo node, "ins" are outer connections; for the output
    // node, "ins" are inner ones. Either way ports pair by number.
    for (auto& a : ins) {
      bool matched = false;
      for (auto& b : outs) {
        if (a.to_port != b.from_port) continue;
        matched = true;
        Edge j{a.from, a.from_port, b.to, b.to_port, nodes[n].pseudo_in ? a.loc : b.loc};
        if (j.from == j.to && !nodes[size_t(j.from)].info) continue;
        keep.push_back(j);
      }
      if (!matched && nodes[n].pseudo_in)
        diag.error(a.loc, fmt::format("{} has no input {}", nodes[n].compound_desc, a.to_port));
    }
    for (auto& b : outs) {
      bool matched = false;
      for (auto& a : ins) matched |= a.to_port == b.from_port;
      if (!matched && !nodes[n].pseudo_in)
        diag.error(b.loc, fmt::format("{} has no output {}", nodes[n].compound_desc, b.from_port));
    }
    edges.swap(keep);
  }
}

}  // namespace

std::string substitute(const std::string& text, const std::map<std::string, std::string>& vars) {
  if (text.find('$') == std::string::npos) return text;
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\'') {
      size_t e = text.find('\'', i + 1);
      if (e == std::string::npos) e = text.size() - 1;
      out.append(text, i, e - i + 1);
      i = e;
      continue;
    }
    if (c == '$' && i + 1 < text.size()) {
      size_t b = i + 1, e;
      bool brace = text[b] == '{';
      if (brace) ++b;
      e = b;
      while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
      std::string name = text.substr(b, e - b);
      auto it = vars.find(name);
      // ${name[N]}: word N of the value (N may itself be a variable); a word
      // past the end is empty.
      if (brace && !name.empty() && it != vars.end() && e < text.size() && text[e] == '[') {
        size_t close = text.find(']', e);
        uint64_t idx;
        if (close != std::string::npos && close + 1 < text.size() && text[close + 1] == '}' &&
            parse_uint(trim(substitute(text.substr(e + 1, close - e - 1), vars)), idx)) {
          std::vector<std::string> words;
          size_t k = 0;
          const std::string& v = it->second;
          while (k < v.size()) {
            while (k < v.size() && std::isspace(static_cast<unsigned char>(v[k]))) ++k;
            size_t w = k;
            while (k < v.size() && !std::isspace(static_cast<unsigned char>(v[k]))) ++k;
            if (k > w) words.push_back(v.substr(w, k - w));
          }
          if (idx < words.size()) out += words[idx];
          i = close + 1;
          continue;
        }
      }
      if (!name.empty() && it != vars.end() && (!brace || (e < text.size() && text[e] == '}'))) {
        out += it->second;
        i = brace ? e : e - 1;
        continue;
      }
    }
    out.push_back(c);
  }
  return out;
}

bool parse_and_expand(int32_t file, const Defines& defines, Program& out, Diagnostics& diag) {
  const std::string& text = SourceManager::instance().text(file);
  Lexer lx(file, text);
  Parser p(lx, diag);
  Body body;
  p.parse_file(body);
  if (diag.has_errors()) return false;
  Scope top{&body, nullptr, {}, {}};
  for (auto& d : body.defines) top.vars[d.name] = substitute(d.value, top.vars);
  for (auto& [k, v] : defines) top.vars[k] = v;
  Expander ex(diag);
  ex.expand(body, top, "", nullptr, 0);
  if (diag.has_errors()) return false;
  splice(ex.nodes, ex.edges, diag);
  if (diag.has_errors()) return false;
  std::vector<int> remap(ex.nodes.size(), -1);
  for (size_t i = 0; i < ex.nodes.size(); ++i) {
    if (!ex.nodes[i].info) continue;
    remap[i] = int(out.elements.size());
    ProgramElement pe;
    pe.name = ex.nodes[i].name;
    pe.info = ex.nodes[i].info;
    pe.config = ex.nodes[i].config;
    pe.loc = ex.nodes[i].loc;
    pe.config_loc = ex.nodes[i].config_loc;
    out.elements.push_back(std::move(pe));
  }
  for (auto& e : ex.edges) {
    if (remap[size_t(e.from)] < 0 || remap[size_t(e.to)] < 0) continue;
    out.conns.push_back({remap[size_t(e.from)], e.from_port, remap[size_t(e.to)], e.to_port, e.loc});
  }
  out.requirements = body.requirements;
  return true;
}

bool load_string(const std::string& name, const std::string& text, const Defines& defines, Program& out,
                 Diagnostics& diag) {
  int32_t id = SourceManager::instance().add(name, text);
  if (!parse_and_expand(id, defines, out, diag)) return false;
  return out.validate(diag);
}

bool load_file(const std::string& path, const Defines& defines, Program& out, Diagnostics& diag) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    diag.error({}, fmt::format("{}: cannot open configuration: {}", path, std::strerror(errno)));
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return load_string(path, ss.str(), defines, out, diag);
}

}  // namespace shoal::config
