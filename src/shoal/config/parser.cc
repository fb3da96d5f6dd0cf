// The parser of the Click language (see parser.hh).
#include "shoal/config/parser.hh"

#include <fmt/format.h>

#include <cctype>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "shoal/core/args.hh"

namespace shoal::config {

namespace {

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
    // As Click: ';' between statements is optional; a statement ends where
    // the next token cannot continue it and can start another.
    if (t == T::Ident) return true;
    diag_.error(lx_.peek().loc, fmt::format("expected ';' or '->', found {}", describe(lx_.peek())));
    return false;
  }

  Lexer& lx_;
  Diagnostics& diag_;
  int next_occ_ = 0;
};

}  // namespace

void parse_file(Lexer& lx, Body& body, Diagnostics& diag) {
  Parser p(lx, diag);
  p.parse_file(body);
}

}  // namespace shoal::config
