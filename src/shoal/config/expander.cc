// Expansion of compounds and variables (see expander.hh).
#include "shoal/config/expander.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <deque>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <tuple>

#include "shoal/config/config.hh"

namespace shoal::config {

namespace {

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
    for (auto& c : body.classes) define_class(scope, *c);
    std::map<std::string, Ends> local;
    std::map<std::string, Loc> first_loc;
    // The body and the element groups in it ("( ... )", at any depth):
    // their elements share this scope's names; 'input' and 'output' in a
    // group are the group's own pseudo nodes.
    struct Part {
      const Body* body;
      const Ends* io;
      std::vector<Ends> decl_ends;
    };
    std::deque<Part> parts;
    std::deque<Ends> group_io;
    parts.push_back({&body, io, {}});
    int made = 0;
    const size_t first_node = nodes.size();
    // Anonymous elements are numbered as Click numbers them: by their place
    // in the text among all of this scope's elements. They are made in
    // another order (declarations, then references in connections, then
    // bare statements), so each gets a provisional name, renamed at the end.
    struct Made {
      Loc loc;
      std::string base;  // "Class" for an anonymous element ("Class@N"), empty for a named one
      std::string name;  // provisional
    };
    std::vector<Made> made_list;
    auto make = [&](const ADecl& d, const std::string& given_name) -> Ends {
      std::string cls = d.cls;
      std::string name = given_name;
      ++made;
      Made m{d.name.empty() ? d.cls_loc : d.name_loc, {}, {}};
      if (name.empty()) {
        m.base = d.compound ? std::string("Compound") : cls;
        name = fmt::format("{}@{}", m.base, made);
      }
      m.name = name;
      made_list.push_back(std::move(m));
      std::string full = prefix + name;
      std::vector<std::pair<size_t, std::string>> undefined;
      std::string cfg = substitute(d.config, flatten_vars(scope), &undefined);
      if (d.compound) return instantiate(*d.compound, full, cfg, d, scope, scope, depth);
      const Scope* where = nullptr;
      const AClass* ac = scope.find_class(cls, &where, d.cls_loc);
      std::set<const AClass*> seen;
      while (ac && !ac->synonym.empty() && seen.insert(ac).second) {
        if (const AClass* next = scope.find_class(ac->synonym, &where, ac->synonym_loc)) {
          ac = next;
        } else {
          cls = ac->synonym;
          ac = nullptr;
        }
      }
      if (ac) return instantiate(*ac, full, cfg, d, scope, *where, depth);
      const ElementInfo* info = Registry::instance().find(cls);
      if (!info) {
        unknown_class(d.cls_loc, cls);
        return {};
      }
      if (!info->own_variables && d.config_loc.valid())
        for (auto& [off, var] : undefined) {
          Loc at = SourceManager::advance(d.config_loc, std::string_view(d.config).substr(0, off));
          at.len = uint32_t(var.size() + 1);
          diag_.error(at, fmt::format("undefined variable '${}' (define it with define(${} VALUE), or NAME=value "
                                      "on the command line)",
                                      var, var));
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
    // A group's pseudo nodes (spliced out later, like a compound's).
    auto make_group = [&](const ADecl& d) -> Ends {
      ++made;
      made_list.push_back({d.cls_loc, {}, fmt::format("<group@{}>", made)});
      Node in;
      in.name = fmt::format("{}<group@{}>/input", prefix, made);
      in.pseudo_in = true;
      in.loc = d.cls_loc;
      in.compound_desc = "the element group";
      Node out = in;
      out.name = fmt::format("{}<group@{}>/output", prefix, made);
      out.pseudo_in = false;
      nodes.push_back(in);
      nodes.push_back(out);
      return {int(nodes.size() - 2), int(nodes.size() - 1)};
    };
    // Declarations first (names can be used before their declaration).
    for (size_t pi = 0; pi < parts.size(); ++pi) {
      const Body& pb = *parts[pi].body;
      if (pi > 0)
        for (auto& c : pb.classes) define_class(scope, *c);
      parts[pi].decl_ends.resize(pb.decls.size());
      for (size_t i = 0; i < pb.decls.size(); ++i) {
        const ADecl& d = pb.decls[i];
        if (d.group) {
          group_io.push_back(make_group(d));
          parts[pi].decl_ends[i] = group_io.back();
          parts.push_back({&d.compound->body, &group_io.back(), {}});
          continue;
        }
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
        parts[pi].decl_ends[i] = make(d, d.name);
        if (!d.name.empty()) local[d.name] = parts[pi].decl_ends[i];
      }
    }
    std::map<int, Ends> by_occ;  // bare class names made into anonymous elements
    for (auto& part : parts) {
      const Ends* pio = part.io;
      auto resolve = [&](const AEnd& e, bool as_source) -> int {
        Ends ends;
        if (auto it = by_occ.find(e.occ); it != by_occ.end()) {
          ends = it->second;
          if (ends.in < 0) return -1;  // already reported
        } else if (e.decl >= 0) {
          ends = part.decl_ends[size_t(e.decl)];
        } else if (pio && e.name == "input") {
          if (!as_source) {
            diag_.error(e.loc, "'input' can only be used as a connection source");
            return -1;
          }
          return pio->in;
        } else if (pio && e.name == "output") {
          if (as_source) {
            diag_.error(e.loc, "'output' can only be used as a connection destination");
            return -1;
          }
          return pio->out;
        } else if (auto it = local.find(e.name); it != local.end()) {
          ends = it->second;
        } else if ((e.name == "input" || e.name == "output") && !pio) {
          diag_.error(e.loc, fmt::format("'{}' used outside a compound element", e.name));
          return -1;
        } else if (scope.find_class(e.name, nullptr, e.loc) || Registry::instance().find(e.name)) {
          ADecl d;
          d.cls = e.name;
          d.cls_loc = d.name_loc = e.loc;
          ends = make(d, "");
          by_occ[e.occ] = ends;
        } else {
          // A capitalised word is most likely a class misspelt; Click calls
          // every unknown word an undeclared element (and so do we, as Click).
          if (!e.name.empty() && std::isupper(static_cast<unsigned char>(e.name[0])) && !diag_.click_style)
            unknown_class(e.loc, e.name);
          else
            diag_.error(e.loc, fmt::format("undeclared element '{}'", e.name));
          by_occ[e.occ] = Ends{};
          return -1;
        }
        return as_source ? ends.out : ends.in;
      };
      for (auto& c : part.body->conns) {
        int f = resolve(c.from, true);
        int t = resolve(c.to, false);
        if (f < 0 || t < 0) continue;
        edges.push_back({f, c.from.port, t, c.to.port, c.loc});
      }
      for (auto& r : part.body->bare_refs) {
        if (!local.count(r.name) && !(pio && (r.name == "input" || r.name == "output"))) {
          AEnd e;
          e.name = r.name;
          e.loc = r.loc;
          resolve(e, true);
        }
      }
    }
    renumber(made_list, prefix, first_node);
  }

  // Gives this scope's anonymous elements (and what was made inside them)
  // their numbers in text order.
  template <class M>
  void renumber(const std::vector<M>& made_list, const std::string& prefix, size_t first_node) {
    std::vector<size_t> order(made_list.size());
    for (size_t i = 0; i < order.size(); ++i) {
      if (!made_list[i].loc.valid()) return;  // (made by the program: keep the order made)
      order[i] = i;
    }
    auto key = [&](size_t i) {
      const Loc& l = made_list[i].loc;
      return std::tuple(l.file, l.line, l.col);
    };
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
    std::map<std::string, std::string> rename;
    std::map<std::string, size_t> rank;  // by final name: the place in the text
    for (size_t k = 0; k < order.size(); ++k) {
      const auto& m = made_list[order[k]];
      std::string want = m.base.empty() ? m.name : fmt::format("{}@{}", m.base, k + 1);
      rank[want] = k;
      if (want != m.name) rename[m.name] = std::move(want);
    }
    for (size_t n = first_node; n < nodes.size(); ++n) {
      std::string& name = nodes[n].name;
      if (name.compare(0, prefix.size(), prefix) != 0) continue;
      size_t end = name.find('/', prefix.size());
      std::string part = name.substr(prefix.size(), end == std::string::npos ? std::string::npos : end - prefix.size());
      auto it = rename.find(part);
      if (it == rename.end()) continue;
      name.replace(prefix.size(), part.size(), it->second);
      // a compound's pseudo nodes describe it as "'FULL' :: Class"
      std::string& desc = nodes[n].compound_desc;
      const size_t after = 1 + prefix.size() + part.size();
      if (desc.size() > after && desc[0] == '\'' && desc.compare(1, prefix.size(), prefix) == 0 &&
          desc.compare(1 + prefix.size(), part.size(), part) == 0 && (desc[after] == '\'' || desc[after] == '/'))
        desc.replace(1 + prefix.size(), part.size(), it->second);
    }
    // The nodes in text order too (each element with what was made inside
    // it), as Click lists them; the edges follow.
    const size_t count = nodes.size() - first_node;
    std::vector<size_t> ranks(count);
    for (size_t n = 0; n < count; ++n) {
      const std::string& name = nodes[first_node + n].name;
      size_t end = name.find('/', prefix.size());
      auto it =
          rank.find(name.substr(prefix.size(), end == std::string::npos ? std::string::npos : end - prefix.size()));
      ranks[n] = it == rank.end() ? SIZE_MAX : it->second;
    }
    std::vector<size_t> perm(count);
    for (size_t n = 0; n < count; ++n) perm[n] = n;
    std::stable_sort(perm.begin(), perm.end(), [&](size_t a, size_t b) { return ranks[a] < ranks[b]; });
    bool moved = false;
    for (size_t n = 0; n < count; ++n) moved |= perm[n] != n;
    if (!moved) return;
    std::vector<int> where(count);
    std::vector<Node> sorted;
    sorted.reserve(count);
    for (size_t n = 0; n < count; ++n) {
      where[perm[n]] = int(first_node + n);
      sorted.push_back(std::move(nodes[first_node + perm[n]]));
    }
    for (size_t n = 0; n < count; ++n) nodes[first_node + n] = std::move(sorted[n]);
    auto fix = [&](int& id) {
      if (id >= int(first_node)) id = where[size_t(id) - first_node];
    };
    for (Edge& e : edges) fix(e.from), fix(e.to);
  }

 private:
  static std::map<std::string, std::string> flatten_vars(const Scope& s) {
    std::map<std::string, std::string> out;
    for (const Scope* p = &s; p; p = p->parent)
      for (auto& [k, v] : p->vars) out.emplace(k, v);
    return out;
  }

  // Adds a class definition to its scope. A second definition of a name in
  // one scope must extend the first ("... }"); the one in force for an
  // element is the last one before it in the text.
  void define_class(Scope& scope, const AClass& c) {
    auto& defs = scope.classes[c.name];
    if (!defs.empty() && !c.extends) {
      diag_.error(c.loc, fmt::format("redefinition of element class '{}'", c.name));
      return;
    }
    defs.push_back(&c);
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

  // `defined`: the scope the class was defined in. Its body sees that
  // scope's variables and classes (Click's lexical scoping of formals), not
  // those of the scope using it.
  Ends instantiate(const AClass& cls0, const std::string& full, const std::string& cfg, const ADecl& d, Scope& scope,
                   const Scope& defined, int depth) {
    std::vector<ArgItem> args = split_args(cfg, d.config_loc.valid() ? d.config_loc : d.cls_loc, false);
    // Choose the first overload whose formals fit: the same count, or with
    // "__REST__ $x" last, at least the others.
    auto fits = [&](const AClass& c) {
      bool rest = !c.formals.empty() && c.formals.back().keyword == "__REST__";
      return rest ? args.size() + 1 >= c.formals.size() : args.size() == c.formals.size();
    };
    // A class that ends in "..." goes on with the overloads of the
    // definition it extends (that definition's scope is then the body's).
    const AClass* cls = &cls0;
    const AClass* head = &cls0;
    const Scope* in_scope = &defined;
    for (int hops = 0; cls && !fits(*cls);) {
      if (cls->next) {
        cls = cls->next.get();
      } else if (head->extends && ++hops < 100) {
        const Scope* s = nullptr;
        cls = head = in_scope->extended(*head, &s);
        if (!cls) {
          diag_.error(cls0.loc, fmt::format("cannot extend unknown element class '{}'", cls0.name));
          return {};
        }
        in_scope = s;
      } else {
        cls = nullptr;
      }
    }
    if (!cls) {
      diag_.error(d.cls_loc, fmt::format("compound element '{}' takes {} argument{}, {} given",
                                         cls0.name.empty() ? "{...}" : cls0.name, cls0.formals.size(),
                                         cls0.formals.size() == 1 ? "" : "s", args.size()));
      return {};
    }
    Scope inner{&cls->body, in_scope, {}, {}};
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

void expand(const Body& body, Scope& top, std::vector<Node>& nodes, std::vector<Edge>& edges, Diagnostics& diag) {
  Expander ex(diag);
  ex.expand(body, top, "", nullptr, 0);
  if (diag.has_errors()) return;
  splice(ex.nodes, ex.edges, diag);
  nodes = std::move(ex.nodes);
  edges = std::move(ex.edges);
}

}  // namespace shoal::config
