// Expansion: compound element classes instantiated (formals bound, names
// prefixed "outer/inner"), variables substituted, classes resolved, and the
// compounds' input/output pseudo nodes spliced out of the connections.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "shoal/config/ast.hh"
#include "shoal/core/element.hh"

namespace shoal::config {

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
  // Each name's definitions in this scope, in text order (a class may be
  // defined again with "...", extending the earlier one).
  std::map<std::string, std::vector<const AClass*>> classes;
  // The class named n in force at `at` (the definition before it, innermost
  // scope first; with none before it, the first one, so a class may be used
  // before it is defined), and (where) the scope that defines it.
  const AClass* find_class(const std::string& n, const Scope** where = nullptr, const Loc& at = {}) const {
    for (int pass = 0; pass < 2; ++pass)
      for (const Scope* s = this; s; s = s->parent) {
        auto it = s->classes.find(n);
        if (it == s->classes.end() || it->second.empty()) continue;
        const AClass* got = pass ? it->second.front() : nullptr;
        for (const AClass* c : it->second)
          if (precedes(c->loc, at)) got = c;
        if (!got) continue;
        if (where) *where = s;
        return got;
      }
    return nullptr;
  }
  // The definition that `c` extends: the one before it, here or outside.
  const AClass* extended(const AClass& c, const Scope** where) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->classes.find(c.name);
      if (it == s->classes.end()) continue;
      const AClass* got = nullptr;
      for (const AClass* d : it->second)
        if (d != &c && precedes(d->loc, c.loc)) got = d;
      if (got) return *where = s, got;
    }
    return nullptr;
  }
  // a before b in the text (another file, or no place: before).
  static bool precedes(const Loc& a, const Loc& b) {
    if (!b.valid() || a.file != b.file) return true;
    return a.line != b.line ? a.line < b.line : a.col < b.col;
  }
};

// Expands `body` (its top-level scope's variables in `top`) into nodes and
// edges, pseudo nodes removed; errors go to diag.
void expand(const Body& body, Scope& top, std::vector<Node>& nodes, std::vector<Edge>& edges, Diagnostics& diag);

}  // namespace shoal::config
