// The parser of the Click language (see parser.hh).
#include "shoal/config/parser.hh"

#include <fmt/format.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
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

  // One more level of compound (or group) nesting while it lives; deeper
  // than kMaxNesting is an error, which bounds the parser's recursion.
  struct Nest {
    Parser& p;
    int& d;
    Nest(Parser& parser, int& depth) : p(parser), d(++depth) {}
    ~Nest() { --d; }
    bool ok(const Loc& at) const {
      if (p.depth_ + p.group_depth_ <= kMaxNesting) return true;
      p.diag_.error(at, fmt::format("compounds and groups nested more than {} deep", kMaxNesting));
      return false;
    }
  };

  // '{' [formals '|'] statements ['||' variant] '}'
  bool compound(AClass& cls) {
    Nest nest(*this, depth_);
    Loc open = lx_.next().loc;
    if (!nest.ok(open)) return false;
    AClass* cur = &cls;
    AClass* prev = nullptr;
    for (;;) {
      // "|| ... }": the overloads so far go before those of the class's
      // earlier definition, which this one extends (Click's overloading).
      if (lx_.peek().type == T::Dots3) {
        Token dots = lx_.next();
        if (!prev || cls.name.empty() || lx_.peek().type != T::RBrace) {
          diag_.error(dots.loc, "'...' should occur last, after one or more overloads of a named element class");
          return false;
        }
        lx_.next();
        prev->next.reset();
        cls.extends = true;
        return true;
      }
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
      prev = cur;
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

  // '[' N {',' N} [','] ']': Click's port lists ("c [0,1,2] -> x" connects
  // three of c's outputs). A list that ends in ',' ("[2,]") or is empty
  // ("[]") is expandable: it goes on from its last port as far as the other
  // side of the connection needs; -1 marks it, last.
  bool ports(std::vector<int>& ps, bool& given) {
    if (lx_.peek().type != T::LBrack) return true;
    lx_.next();
    given = true;
    if (lx_.peek().type == T::RBrack) {
      lx_.next();
      ps = {0, -1};
      return true;
    }
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
      if (lx_.peek().type == T::RBrack) break;
      if (!expect(T::Comma, "',' or ']'")) return false;
      if (lx_.peek().type == T::RBrack) {
        ps.push_back(-1);
        break;
      }
    }
    lx_.next();
    return true;
  }

  // One element of an endpoint list with its input and output port lists
  // (empty: none given).
  struct EP {
    AEnd base;
    std::vector<int> in, out;
    bool in_given = false;     // an input port list was written
    bool implied_out = false;  // a group's outputs, implied
    bool implicit = false;     // Click's implicit 'input' or 'output'
  };

  bool nested() const { return depth_ > 0 || group_depth_ > 0; }

  // A group's inputs and outputs: one past the highest port its body uses.
  static std::pair<int, int> group_ports(const AClass& g) {
    int nin = 0, nout = 0;
    for (auto& c : g.body.conns) {
      if (c.from.decl < 0 && c.from.name == "input") nin = std::max(nin, c.from.port + 1);
      if (c.to.decl < 0 && c.to.name == "output") nout = std::max(nout, c.to.port + 1);
    }
    return {nin, nout};
  }

  // '(' statements ')': an element group. Its elements belong to the
  // enclosing scope; 'input' and 'output' inside are the group's ports.
  bool group_body(AClass& g) {
    Nest nest(*this, group_depth_);
    Loc open = lx_.next().loc;
    if (!nest.ok(open)) return false;
    while (lx_.peek().type != T::RParen) {
      // A compound's end (or the file's) before the ')': recovery stops in
      // front of '}' and '||', so the group must end here.
      T t = lx_.peek().type;
      if (t == T::Eof || t == T::RBrace || t == T::Bar2) {
        diag_.error(open, "unterminated element group: missing ')'");
        return false;
      }
      if (!statement(g.body)) recover(true);
    }
    lx_.next();
    return true;
  }

  // [ports] element [ports] {',' [ports] element [ports]}: Click's endpoint
  // lists; "a, b :: Class" declares both. in_allowed: the list follows an
  // arrow. In a compound or a group, a port with no element is Click's
  // implicit 'input' (a chain's start) or 'output' (its end).
  bool endpoints(Body& body, std::vector<EP>& eps, bool& is_ref_only, bool in_allowed) {
    for (;;) {
      EP ep;
      bool in_given = false, out_given = false;
      int implied_out = 0;
      if (!ports(ep.in, in_given)) return false;
      ep.base.occ = next_occ_++;
      Token t = lx_.peek();
      if (t.type == T::LBrace || t.type == T::LParen) {  // anonymous compound, or group
        bool group = t.type == T::LParen;
        ADecl d;
        d.compound = std::make_shared<AClass>();
        d.compound->name = "";
        d.compound->loc = t.loc;
        d.cls_loc = t.loc;
        d.name_loc = t.loc;
        d.group = group;
        if (group ? !group_body(*d.compound) : !compound(*d.compound)) return false;
        if (!group && lx_.peek().type == T::LParen && !config(d)) return false;
        if (group) {  // a group has implied port lists for all its ports
          auto [nin, nout] = group_ports(*d.compound);
          if (!in_given)
            for (int i = 0; i < nin; ++i) ep.in.push_back(i);
          implied_out = nout;
        }
        body.decls.push_back(std::move(d));
        ep.base.decl = int(body.decls.size() - 1);
        ep.base.loc = t.loc;
        ep.in_given = in_given;
        is_ref_only = false;
      } else if (t.type == T::Ident) {
        // An element named in the list before the last: a reference, with
        // the list's input ports when it comes first.
        auto reference = [&](const Token& n, bool first_in_list) {
          EP r;
          r.base.occ = next_occ_++;
          r.base.name = n.text;
          r.base.loc = n.loc;
          if (first_in_list) r.in = ep.in, r.in_given = in_given;
          eps.push_back(r);
        };
        Token first = lx_.next();
        std::vector<Token> names{first};
        // "a, b :: Class" or "a, b -> ..." (a list of references): names
        // are collected while ', NAME' follows, and the token after them
        // says which.
        while (!in_given && lx_.peek().type == T::Comma) {
          lx_.next();
          if (lx_.peek().type != T::Ident) {
            // ", [port] x" or ", {...}": the names so far are references
            for (size_t i = 0; i < names.size(); ++i) reference(names[i], i == 0);
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
            if (!d.compound && d.name == d.cls)
              diag_.error(d.name_loc, fmt::format("class '{}' used as element name", d.name));
            body.decls.push_back(std::move(d));
            if (i + 1 == names.size()) break;
            // the declared elements before the last are ends of the list too
            EP r;
            r.base.occ = next_occ_++;
            r.base.decl = int(body.decls.size() - 1);
            r.base.loc = names[i].loc;
            if (i == 0) r.in = ep.in, r.in_given = in_given;
            eps.push_back(r);
          }
          ep.base.decl = int(body.decls.size() - 1);
          ep.base.loc = names.back().loc;
          if (names.size() > 1)
            ep.in.clear();
          else
            ep.in_given = in_given;
        } else {
          // references, the last of which may be an anonymous "Class(config)"
          for (size_t i = 0; i + 1 < names.size(); ++i) reference(names[i], i == 0);
          if (names.size() > 1)
            ep.in.clear();
          else
            ep.in_given = in_given;
          const Token& last = names.back();
          if (lx_.peek().type == T::LParen) {  // anonymous "Class(config)"
            ADecl d;
            d.cls = last.text;
            d.cls_loc = d.name_loc = last.loc;
            if (!config(d)) return false;
            body.decls.push_back(std::move(d));
            ep.base.decl = int(body.decls.size() - 1);
            is_ref_only = false;
          } else {
            ep.base.name = last.text;
          }
          ep.base.loc = last.loc;
        }
      } else {
        bool implicit = false;
        bool arrow = t.type == T::Arrow || t.type == T::Arrow2;
        if (nested()) {
          if (arrow)
            implicit = !in_allowed && (in_given || eps.empty());
          else if (t.type == T::Comma)
            implicit = in_given;
          else if (t.type != T::Colon2)
            implicit = in_allowed && (in_given || eps.empty());
        }
        if (!implicit) {
          if (arrow && !in_allowed && eps.empty() && !in_given)
            diag_.error(t.loc, fmt::format("syntax error near '{}'", t.text));
          else
            diag_.error(t.loc, fmt::format("expected an element, found {}", describe(t)));
          return false;
        }
        ep.base.name = in_allowed ? "output" : "input";
        ep.base.loc = t.loc;
        ep.implicit = true;
        ep.in_given = in_given;
        if (!in_allowed) std::swap(ep.in, ep.out);  // "[1] -> x": input's output 1
        eps.push_back(ep);
        if (lx_.peek().type != T::Comma) return true;
        lx_.next();
        continue;
      }
      if (lx_.peek().type == T::LBrack) {
        if (!ports(ep.out, out_given)) return false;
      } else {
        for (int i = 0; i < implied_out; ++i) ep.out.push_back(i);
        ep.implied_out = implied_out > 0;
      }
      eps.push_back(ep);
      if (lx_.peek().type != T::Comma) return true;
      lx_.next();
    }
  }

  bool config(ADecl& d) { return lx_.raw_config(d.config, d.config_loc, diag_); }

  // How many ports a side of a connection names, and how many of its lists
  // are expandable (Click's yconnection_analyze_ports).
  static void analyze(const std::vector<EP>& eps, bool outputs, int& min_ports, int& expandable) {
    min_ports = expandable = 0;
    for (auto& e : eps) {
      const std::vector<int>& pv = outputs ? e.out : e.in;
      int n = int(pv.size());
      if (n <= 1)
        min_ports += 1;
      else if (pv.back() == -1)
        min_ports += n - 1, ++expandable;
      else
        min_ports += n;
    }
  }

  // Connects the outputs of one endpoint list to the inputs of the next, as
  // Click does: one to many and many to one with either arrow, many to many
  // (pairwise) only with '=>', which also lets a lone element without ports
  // expand to as many ports as the other side has.
  void connect_all(Body& body, const std::vector<EP>& outs, const std::vector<EP>& ins, bool two, Loc arrow) {
    int minp[2], expandable[2];  // [0]: the inputs' side, [1]: the outputs'
    analyze(ins, false, minp[0], expandable[0]);
    analyze(outs, true, minp[1], expandable[1]);
    if (expandable[0] + expandable[1] > 1) {
      diag_.error(arrow, "at most one expandable port allowed per connection");
      expandable[minp[0] < minp[1] ? 1 : 0] = 0;
    }
    const std::vector<EP>* side[2] = {&ins, &outs};
    if (two)
      for (int k = 0; k < 2; ++k) {
        const EP& e = (*side[k])[0];
        if (minp[k] == 1 && minp[1 - k] > 1 && (k ? e.out : e.in).empty()) expandable[k] = 1;
      }
    bool step[2];
    int nexp[2];
    for (int k = 0; k < 2; ++k) {
      step[k] = minp[k] > 1 || expandable[k];
      nexp[k] = expandable[k] ? minp[1 - k] - minp[k] : 0;
    }
    if (step[0] && step[1]) {
      if (!two) diag_.error(arrow, "syntax error: many-to-many connections require '=>'");
      if (!expandable[0] && !expandable[1] && minp[0] != minp[1])
        diag_.error(arrow, fmt::format("connection mismatch: {} outputs connected to {} inputs", minp[1], minp[0]));
      else if (!expandable[0] && minp[0] < minp[1])
        diag_.error(arrow,
                    fmt::format("connection mismatch: {} or more outputs connected to {} inputs", minp[1], minp[0]));
      else if (!expandable[1] && minp[1] < minp[0])
        diag_.error(arrow,
                    fmt::format("connection mismatch: {} outputs connected to {} or more inputs", minp[1], minp[0]));
    } else if (!step[0] && !step[1]) {
      step[0] = true;
    }
    size_t it[2] = {0, 0};
    int ppos[2] = {0, 0}, port[2] = {-1, -1};
    auto plist = [&](int k) -> const std::vector<int>& {
      const EP& e = (*side[k])[it[k]];
      return k ? e.out : e.in;
    };
    while (it[0] < ins.size() && it[1] < outs.size()) {
      for (int k = 0; k < 2; ++k)
        if (port[k] < 0) port[k] = plist(k).empty() ? 0 : plist(k)[0];
      AConn c;
      c.from = outs[it[1]].base;
      c.from.port = port[1];
      c.to = ins[it[0]].base;
      c.to.port = port[0];
      c.loc = arrow;
      body.conns.push_back(c);
      for (int k = 0; k < 2; ++k) {
        if (!step[k]) continue;
        const std::vector<int>& pv = plist(k);
        int np = int(pv.size());
        ++ppos[k];
        if (ppos[k] < np && pv[size_t(ppos[k])] >= 0) {
          port[k] = pv[size_t(ppos[k])];  // the list's next port
        } else if (np && pv.back() == -1 && nexp[k] > 0) {
          port[k] = pv[size_t(np - 2)] + ppos[k] - (np - 2);  // an expandable list goes on
          --nexp[k];
        } else if (np == 0 && minp[k] == 1 && nexp[k] > 0) {
          port[k] = ppos[k];  // '=>': a missing list expands
          --nexp[k];
        } else {  // the next element of the list
          port[k] = -1;
          ppos[k] = 0;
          ++it[k];
        }
      }
    }
  }

  bool connection(Body& body) {
    std::vector<EP> first;
    bool ref_only = true;
    if (!endpoints(body, first, ref_only, false)) return false;
    bool in_given = false, out_given = false;
    for (auto& e : first) in_given |= e.in_given && !e.implicit;
    for (auto& e : first) out_given |= !e.out.empty() && !e.implied_out && !e.implicit;
    T next = lx_.peek().type;
    bool arrow = next == T::Arrow || next == T::Arrow2;
    if (in_given && !arrow) {
      diag_.error(first[0].base.loc, "input port given, but no connection leads here");
      return false;
    }
    if (!arrow) {
      if (ref_only)
        for (auto& e : first) body.bare_refs.push_back({e.base.name, e.base.loc});
      if (out_given) {
        diag_.error(lx_.peek().loc, fmt::format("expected '->' after output port, found {}", describe(lx_.peek())));
        return false;
      }
      return end_statement();
    }
    std::vector<EP> prev = std::move(first);
    while (lx_.peek().type == T::Arrow || lx_.peek().type == T::Arrow2) {
      Token a = lx_.next();
      std::vector<EP> next_eps;
      bool r;
      if (!endpoints(body, next_eps, r, true)) return false;
      connect_all(body, prev, next_eps, a.type == T::Arrow2, a.loc);
      prev = std::move(next_eps);
    }
    for (auto& e : prev)
      if (!e.out.empty() && !e.implied_out && !e.implicit) {
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
    if (t == T::Eof || t == T::RBrace || t == T::Bar2 || (t == T::RParen && group_depth_ > 0)) return true;
    // As Click: ';' between statements is optional; a statement ends where
    // the next token cannot continue it and can start another.
    if (t == T::Ident || t == T::LBrack || t == T::LBrace || t == T::LParen) return true;
    diag_.error(lx_.peek().loc, fmt::format("expected ';' or '->', found {}", describe(lx_.peek())));
    return false;
  }

  Lexer& lx_;
  Diagnostics& diag_;
  std::shared_ptr<std::set<std::string>> libraries_;  // files read so far (require library)
  int depth_ = 0;                                     // compound nesting
  int group_depth_ = 0;                               // group nesting
  static constexpr int kMaxNesting = 100;             // bounds the parser's recursion
  int next_occ_ = 0;
};

// Click's lexer takes a word as a class from where it is first used as one
// (after '::', before a configuration, or a name no element of its scope
// has), for the rest of the file, in every scope. An element declared with
// such a name later is an error, as in Click ("A -> B" inside a compound,
// then "A :: Idle" outside it).
class ClassWords {
 public:
  explicit ClassWords(Diagnostics& diag) : diag_(diag) {}
  void run(const Body& top) {
    scope(top);
    for (auto& [name, loc] : decls_) {
      auto it = used_.find(name);
      if (it == used_.end()) continue;
      for (const Loc& u : it->second)
        if (u.file == loc.file && (u.line != loc.line ? u.line < loc.line : u.col < loc.col)) {
          diag_.error(loc, fmt::format("class '{}' used as element name", name));
          diag_.note(u, fmt::format("'{}' is a class from here on", name));
          break;
        }
    }
  }

 private:
  // One scope: a body with the groups in it (their names are the body's).
  void scope(const Body& body) {
    std::vector<const Body*> parts{&body};
    for (size_t i = 0; i < parts.size(); ++i)
      for (auto& d : parts[i]->decls)
        if (d.group && d.compound) parts.push_back(&d.compound->body);
    std::set<std::string> declared;
    for (const Body* b : parts)
      for (auto& d : b->decls)
        if (!d.name.empty()) declared.insert(d.name);
    auto reference = [&](const std::string& name, const Loc& loc) {
      if (!name.empty() && !declared.count(name) && name != "input" && name != "output") used_[name].push_back(loc);
    };
    for (const Body* b : parts) {
      for (auto& d : b->decls) {
        if (!d.name.empty()) decls_.emplace_back(d.name, d.name_loc);
        if (!d.compound && !d.cls.empty()) used_[d.cls].push_back(d.cls_loc);
        if (d.compound && !d.group) classes(*d.compound);
      }
      for (auto& c : b->conns)
        for (const AEnd* e : {&c.from, &c.to})
          if (e->decl < 0) reference(e->name, e->loc);
      for (auto& r : b->bare_refs) reference(r.name, r.loc);
      for (auto& c : b->classes) classes(*c);
    }
  }
  void classes(const AClass& c) {
    if (!c.synonym.empty()) used_[c.synonym].push_back(c.synonym_loc);
    for (const AClass* o = &c; o; o = o->next.get()) scope(o->body);
  }
  Diagnostics& diag_;
  std::map<std::string, std::vector<Loc>> used_;
  std::vector<std::pair<std::string, Loc>> decls_;
};

}  // namespace

void parse_file(Lexer& lx, Body& body, Diagnostics& diag) {
  Parser p(lx, diag);
  p.parse_file(body);
  ClassWords(diag).run(body);
}

}  // namespace shoal::config
