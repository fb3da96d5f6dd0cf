// The Click configuration language: declarations, connections with ports,
// anonymous elements, chains, elementclass compounds with formal parameters,
// define/$X substitution, require, comments. load_* parse, expand compounds,
// resolve classes and validate the graph; diagnostics carry file:line:col.
#pragma once
#include <map>
#include <string>

#include "shoal/core/diag.hh"
#include "shoal/core/graph.hh"

namespace shoal::config {

using Defines = std::map<std::string, std::string>;  // NAME -> value (from the command line)

bool load_file(const std::string& path, const Defines& defines, Program& out, Diagnostics& diag);
bool load_string(const std::string& name, const std::string& text, const Defines& defines, Program& out,
                 Diagnostics& diag);
// Parse and expand only (no class lookup beyond compounds, no validation):
// used by the fuzzer and by load_*.
bool parse_and_expand(int32_t file, const Defines& defines, Program& out, Diagnostics& diag);

// Replaces $NAME and ${NAME} found in vars; leaves unknown variables and
// single-quoted text untouched. `undefined` (if given) gets the offset in
// text and the name of each unknown variable.
std::string substitute(const std::string& text, const std::map<std::string, std::string>& vars,
                       std::vector<std::pair<size_t, std::string>>* undefined = nullptr);

}  // namespace shoal::config
