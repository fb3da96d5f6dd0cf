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
  std::map<std::string, const AClass*> classes;
  // The class named n, and (where) the scope that defines it.
  const AClass* find_class(const std::string& n, const Scope** where = nullptr) const {
    for (const Scope* s = this; s; s = s->parent) {
      auto it = s->classes.find(n);
      if (it != s->classes.end()) {
        if (where) *where = s;
        return it->second;
      }
    }
    return nullptr;
  }
};

// Expands `body` (its top-level scope's variables in `top`) into nodes and
// edges, pseudo nodes removed; errors go to diag.
void expand(const Body& body, Scope& top, std::vector<Node>& nodes, std::vector<Edge>& edges, Diagnostics& diag);

}  // namespace shoal::config
