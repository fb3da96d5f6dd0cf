// The parser: a file's tokens into its parse tree (ast.hh), with errors
// that say what was expected where, and recovery at the next statement.
#pragma once
#include "shoal/config/ast.hh"
#include "shoal/config/lexer.hh"

namespace shoal::config {

// Parses the whole file into `body`; errors go to diag.
void parse_file(Lexer& lx, Body& body, Diagnostics& diag);

}  // namespace shoal::config
