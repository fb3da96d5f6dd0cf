// Element documentation against the code: each class's documented keyword
// arguments are exactly the keywords its configure() reads (another name for
// an argument is documented in its text as "also NAME").
#include <fmt/format.h>

#include "helpers.hh"

namespace shoal {
namespace {

// Documented arguments that are keywords: all capitals, digits and '_'
// ("ROUTE..." and "PATTERN" style positional-only names end in "...").
bool is_keyword(std::string_view n) {
  if (n.empty() || n.find("...") != std::string_view::npos) return false;
  for (char c : n)
    if (!(std::isupper(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

// The keywords configure() asks for with no arguments at all.
std::set<std::string> keywords_read(const ElementInfo& info) {
  Program prog;
  ProgramElement pe;
  pe.name = "x";
  pe.info = &info;
  PortRange in, out;
  parse_port_counts(info.ports, in, out);
  pe.ninputs = in.lo;
  pe.noutputs = out.same_as_inputs ? in.lo : out.lo;
  pe.in_proc.assign(pe.ninputs, Proc::Push);
  pe.out_proc.assign(pe.noutputs, Proc::Push);
  prog.elements.push_back(pe);
  RunOptions opt;
  opt.pool.count = 64;
  Runtime rt(prog, opt);
  Diagnostics d;
  Args::Probe probe;
  rt.configure(d);  // errors expected: nothing was given
  rt.cleanup();
  return probe.keywords;
}

TEST(ElementDocs, DocumentedArgumentsAreTheKeywordsConfigureReads) {
  std::string problems;
  for (const ElementInfo* i : Registry::instance().all()) {
    std::set<std::string> read = keywords_read(*i), doc, aliases;
    for (const ArgDoc& a : i->args) {
      if (is_keyword(a.name)) doc.insert(std::string(a.name));
      // Another name for the same argument, documented as "(also NAME)" or "; also NAME".
      for (size_t p = a.desc.find("also "); p != std::string_view::npos; p = a.desc.find("also ", p + 1)) {
        size_t e = p + 5;
        while (e < a.desc.size() && (std::isupper(static_cast<unsigned char>(a.desc[e])) || a.desc[e] == '_')) ++e;
        if (e > p + 5) aliases.insert(std::string(a.desc.substr(p + 5, e - p - 5)));
      }
    }
    for (const auto& k : doc)
      if (!read.count(k)) problems += fmt::format("{}: documents {}, which configure() does not read\n", i->name, k);
    for (const auto& k : read)
      if (!doc.count(k) && !aliases.count(k))
        problems += fmt::format("{}: reads {}, which its documentation does not list\n", i->name, k);
  }
  EXPECT_EQ(problems, "");
}

}  // namespace
}  // namespace shoal
