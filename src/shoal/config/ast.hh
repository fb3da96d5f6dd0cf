// The parse tree of a Click configuration: declarations, connections,
// element classes (compounds with formals and overloads), defines.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "shoal/core/diag.hh"

namespace shoal::config {

struct AClass;

struct ADecl {
  std::string name;  // empty: anonymous
  Loc name_loc;
  std::string cls;
  Loc cls_loc;
  std::shared_ptr<AClass> compound;  // inline "{ ... }" class, or a "( ... )" group
  bool group = false;                // Click's element group: its names live in the enclosing scope
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
  struct BareRef {
    std::string name;
    Loc loc;
  };
  std::vector<BareRef> bare_refs;  // standalone "name;" statements (a class name: an anonymous element)
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
  bool extends = false;          // "... }": the overloads extend an earlier class of the same name
};

}  // namespace shoal::config
