// The parser of the Click language (see parser.hh).
#include "shoal/config/parser.hh"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "shoal/core/args.hh"

namespace shoal::config {

namespace {

class Parser {
 public:
  Parser(Lexer& lx, Diagnostics& diag, std::shared_ptr<std::set<std::string>> libraries = nullptr)
      : lx_(lx),
        diag_(diag),
        libraries_(libraries ? std::move(libraries) : std::make_shared<std::set<std::string>>()) {}

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
        for (auto& a : split_args(cfg, at, false)) {
          std::vector<std::string_view> w = split_words(a.text);
          if (w.size() == 2 && w[0] == "library")
            library(w[1], a.loc, body);
          else
            body.requirements.push_back(a.text);
        }
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

  // require(library FILE): FILE (relative to the including file's
  // directory) is read at file scope as if it were part of this one, once
  // however often it is required (Click's lexer).
  void library(std::string_view word, Loc at, Body& body) {
    if (depth_ > 0) {
      diag_.error(at, "'require(library ...)' must be used at file scope");
      return;
    }
    std::string value;
    if (!parse_string(word, value) || value.empty()) {
      diag_.error(at, fmt::format("bad library name {}", word));
      return;
    }
    namespace fs = std::filesystem;
    auto& sm = SourceManager::instance();
    fs::path here = at.valid() ? fs::path(sm.name(at.file)).parent_path() : fs::path();
    fs::path file = fs::path(value).is_absolute() ? fs::path(value) : (here.empty() ? fs::path(".") : here) / value;
    std::error_code ec;
    if (at.valid() && libraries_->empty()) {  // the including file itself is never read again
      fs::path top = fs::weakly_canonical(fs::path(sm.name(at.file)), ec);
      if (!ec) libraries_->insert(top.string());
    }
    if (!fs::is_regular_file(file, ec)) {
      diag_.error(at, fmt::format("library '{}' not found ({})", value, file.string()));
      return;
    }
    std::string key = fs::weakly_canonical(file, ec).string();
    if (!libraries_->insert(ec ? file.string() : key).second) return;
    std::ifstream f(file, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    if (!f) {
      diag_.error(at, fmt::format("library '{}': cannot read {}", value, file.string()));
      return;
    }
    int32_t id = sm.add(file.string(), ss.str());
    Lexer lx(id, sm.text(id));
    Parser(lx, diag_, libraries_).parse_file(body);
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
    struct Depth {
      int& d;
      explicit Depth(int& x) : d(++x) {}
      ~Depth() { --d; }
    } depth(depth_);
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

  // '[' N {',' N} ']': Click's port lists ("c [0,1,2] -> x" connects three
  // of c's outputs).
  bool ports(std::vector<int>& ps, bool& given) {
    if (lx_.peek().type != T::LBrack) return true;
    lx_.next();
    for (;;) {
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
      ps.push_back(int(v));
      if (lx_.peek().type != T::Comma) break;
      lx_.next();
    }
    given = true;
    return expect(T::RBrack, "']'");
  }

  // One element of an endpoint list: its input and output ends, one per
  // port listed (port 0 when none is).
  struct Ends {
    std::vector<AEnd> ins, outs;
  };
  static void add_ends(Ends& e, const AEnd& base, const std::vector<int>& in_ports, bool in_given,
                       const std::vector<int>& out_ports, bool out_given) {
    for (size_t i = 0; i < std::max<size_t>(1, in_ports.size()); ++i) {
      AEnd x = base;
      x.port = in_ports.empty() ? 0 : in_ports[i];
      x.port_given = in_given;
      e.ins.push_back(x);
    }
    for (size_t i = 0; i < std::max<size_t>(1, out_ports.size()); ++i) {
      AEnd x = base;
      x.port = out_ports.empty() ? 0 : out_ports[i];
      x.port_given = out_given;
      e.outs.push_back(x);
    }
  }

  // [ports] element [ports] {',' [ports] element [ports]}: Click's endpoint
  // lists; "a, b :: Class" declares both.
  bool endpoints(Body& body, Ends& ends, bool& is_ref_only) {
    for (;;) {
      std::vector<int> in_ports, out_ports;
      bool in_given = false, out_given = false;
      if (!ports(in_ports, in_given)) return false;
      AEnd base;
      base.occ = next_occ_++;
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
        base.decl = int(body.decls.size() - 1);
        base.loc = t.loc;
        is_ref_only = false;
      } else if (t.type == T::Ident) {
        Token first = lx_.next();
        std::vector<Token> names{first};
        // "a, b :: Class" or "a, b -> ..." (a list of references): names
        // are collected while ', NAME' follows, and the token after them
        // says which.
        while (!in_given && lx_.peek().type == T::Comma) {
          lx_.next();
          if (lx_.peek().type != T::Ident) {
            // ", [port] x" or ", {...}": the names so far are references
            for (auto& n : names) {
              AEnd r;
              r.occ = next_occ_++;
              r.name = n.text;
              r.loc = n.loc;
              add_ends(ends, r, {}, false, {}, false);
            }
            names.clear();
            break;
          }
          names.push_back(lx_.next());
        }
        if (names.empty()) continue;  // the list goes on with a port or compound
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
          is_ref_only = false;
          for (size_t i = 0; i < names.size(); ++i) {
            ADecl d = proto;
            d.name = names[i].text;
            d.name_loc = names[i].loc;
            body.decls.push_back(std::move(d));
            if (i + 1 == names.size()) break;
            // the declared elements before the last are ends of the list too
            AEnd r;
            r.occ = next_occ_++;
            r.decl = int(body.decls.size() - 1);
            r.loc = names[i].loc;
            add_ends(ends, r, i == 0 ? in_ports : std::vector<int>{}, i == 0 && in_given, {}, false);
          }
          base.decl = int(body.decls.size() - 1);
          base.loc = names.back().loc;
          if (names.size() > 1) in_ports.clear(), in_given = false;
        } else {
          // references, the last of which may be an anonymous "Class(config)"
          for (size_t i = 0; i + 1 < names.size(); ++i) {
            AEnd r;
            r.occ = next_occ_++;
            r.name = names[i].text;
            r.loc = names[i].loc;
            add_ends(ends, r, i == 0 ? in_ports : std::vector<int>{}, i == 0 && in_given, {}, false);
          }
          if (names.size() > 1) in_ports.clear(), in_given = false;
          const Token& last = names.back();
          if (lx_.peek().type == T::LParen) {  // anonymous "Class(config)"
            ADecl d;
            d.cls = last.text;
            d.cls_loc = d.name_loc = last.loc;
            if (!config(d)) return false;
            body.decls.push_back(std::move(d));
            base.decl = int(body.decls.size() - 1);
            is_ref_only = false;
          } else {
            base.name = last.text;
          }
          base.loc = last.loc;
        }
      } else {
        diag_.error(t.loc, fmt::format("expected an element, found {}", describe(t)));
        return false;
      }
      if (!ports(out_ports, out_given)) return false;
      add_ends(ends, base, in_ports, in_given, out_ports, out_given);
      if (lx_.peek().type != T::Comma) return true;
      lx_.next();
    }
  }

  bool config(ADecl& d) { return lx_.raw_config(d.config, d.config_loc, diag_); }

  // Connects the outputs of one endpoint list to the inputs of the next:
  // one to many, many to one, or pairwise (Click's rule).
  bool connect(Body& body, const std::vector<AEnd>& from, const std::vector<AEnd>& to, Loc arrow) {
    if (from.size() != to.size() && from.size() != 1 && to.size() != 1) {
      diag_.error(arrow, fmt::format("connection mismatch: {} outputs connected to {} inputs", from.size(), to.size()));
      return false;
    }
    size_t n = std::max(from.size(), to.size());
    for (size_t i = 0; i < n; ++i) {
      AConn c;
      c.from = from[from.size() == 1 ? 0 : i];
      c.to = to[to.size() == 1 ? 0 : i];
      c.loc = arrow;
      body.conns.push_back(c);
    }
    return true;
  }

  bool connection(Body& body) {
    Ends first;
    bool ref_only = true;
    if (!endpoints(body, first, ref_only)) return false;
    bool in_given = false, out_given = false;
    for (auto& e : first.ins) in_given |= e.port_given;
    for (auto& e : first.outs) out_given |= e.port_given;
    if (in_given && lx_.peek().type != T::Arrow) {
      diag_.error(first.ins[0].loc, "input port given, but no connection leads here");
      return false;
    }
    if (lx_.peek().type != T::Arrow) {
      if (ref_only)
        for (auto& e : first.ins) body.bare_refs.push_back(e.name);
      if (out_given) {
        diag_.error(lx_.peek().loc, fmt::format("expected '->' after output port, found {}", describe(lx_.peek())));
        return false;
      }
      return end_statement();
    }
    std::vector<AEnd> prev = first.outs;
    while (lx_.peek().type == T::Arrow) {
      Loc arrow = lx_.next().loc;
      Ends next;
      bool r;
      if (!endpoints(body, next, r)) return false;
      if (!connect(body, prev, next.ins, arrow)) return false;
      prev = next.outs;
    }
    for (auto& e : prev)
      if (e.port_given) {
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
    // As Click: ';' between statements is optional; a statement ends where
    // the next token cannot continue it and can start another.
    if (t == T::Ident) return true;
    diag_.error(lx_.peek().loc, fmt::format("expected ';' or '->', found {}", describe(lx_.peek())));
    return false;
  }

  Lexer& lx_;
  Diagnostics& diag_;
  std::shared_ptr<std::set<std::string>> libraries_;  // files read so far (require library)
  int depth_ = 0;                                     // compound nesting
  int next_occ_ = 0;
};

}  // namespace

void parse_file(Lexer& lx, Body& body, Diagnostics& diag) {
  Parser p(lx, diag);
  p.parse_file(body);
}

}  // namespace shoal::config
