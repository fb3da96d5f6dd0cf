// The Hyperscan objects behind Database and Engine (one definition for
// database.cc and engine.cc); empty without Hyperscan.
#pragma once
#include "shoal/ids/engine.hh"

#ifdef SHOAL_HAVE_HYPERSCAN
#include <hs/hs.h>
#endif

namespace shoal::ids {

struct Database::Hs {
#ifdef SHOAL_HAVE_HYPERSCAN
  hs_database_t* db = nullptr;         // the fast patterns
  std::vector<hs_database_t*> re;      // per expression slot, null where Hyperscan refused it
  hs_database_t* prefilter = nullptr;  // the prefiltering pcres of rules without fast pattern (ids: slots)
  // per form (Database::form) and port group's set (PortGroups::sets; ids: the patterns'), null: db
  std::array<std::vector<hs_database_t*>, 2> group;
  hs_database_t* stream = nullptr;  // the stream automaton's patterns, every occurrence (ids: the automaton's)
  ~Hs() {
    if (db) hs_free_database(db);
    if (stream) hs_free_database(stream);
    for (auto& form : group)
      for (auto* d : form)
        if (d) hs_free_database(d);
    for (auto* d : re)
      if (d) hs_free_database(d);
    if (prefilter) hs_free_database(prefilter);
  }
#endif
};

struct Engine::Scratch {
#ifdef SHOAL_HAVE_HYPERSCAN
  hs_scratch_t* s = nullptr;
  ~Scratch() {
    if (s) hs_free_scratch(s);
  }
#endif
};

}  // namespace shoal::ids
