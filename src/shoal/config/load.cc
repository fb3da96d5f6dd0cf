// The public entry points (config.hh): load, parse and expand, substitute.
#include <fmt/format.h>
#include <sys/stat.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "shoal/config/config.hh"
#include "shoal/config/expander.hh"
#include "shoal/config/parser.hh"

namespace shoal::config {

std::string substitute(const std::string& text, const std::map<std::string, std::string>& vars,
                       std::vector<std::pair<size_t, std::string>>* undefined) {
  if (text.find('$') == std::string::npos) return text;
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\'') {
      size_t e = text.find('\'', i + 1);
      if (e == std::string::npos) e = text.size() - 1;
      out.append(text, i, e - i + 1);
      i = e;
      continue;
    }
    if (c == '$' && i + 1 < text.size()) {
      size_t b = i + 1, e;
      bool brace = text[b] == '{';
      if (brace) ++b;
      e = b;
      while (e < text.size() && (std::isalnum(static_cast<unsigned char>(text[e])) || text[e] == '_')) ++e;
      std::string name = text.substr(b, e - b);
      auto it = vars.find(name);
      // ${name[N]}: word N of the value (N may itself be a variable); a word
      // past the end is empty.
      if (brace && !name.empty() && it != vars.end() && e < text.size() && text[e] == '[') {
        size_t close = text.find(']', e);
        uint64_t idx;
        if (close != std::string::npos && close + 1 < text.size() && text[close + 1] == '}' &&
            parse_uint(trim(substitute(text.substr(e + 1, close - e - 1), vars)), idx)) {
          std::vector<std::string> words;
          size_t k = 0;
          const std::string& v = it->second;
          while (k < v.size()) {
            while (k < v.size() && std::isspace(static_cast<unsigned char>(v[k]))) ++k;
            size_t w = k;
            while (k < v.size() && !std::isspace(static_cast<unsigned char>(v[k]))) ++k;
            if (k > w) words.push_back(v.substr(w, k - w));
          }
          if (idx < words.size()) out += words[idx];
          i = close + 1;
          continue;
        }
      }
      if (!name.empty() && it != vars.end() && (!brace || (e < text.size() && text[e] == '}'))) {
        out += it->second;
        i = brace ? e : e - 1;
        continue;
      }
      if (undefined && !name.empty() && it == vars.end()) undefined->emplace_back(i, name);
    }
    out.push_back(c);
  }
  return out;
}

bool parse_and_expand(int32_t file, const Defines& defines, Program& out, Diagnostics& diag) {
  const std::string& text = SourceManager::instance().text(file);
  Lexer lx(file, text);
  Body body;
  parse_file(lx, body, diag);
  if (diag.has_errors()) return false;
  Scope top{&body, nullptr, {}, {}};
  for (auto& d : body.defines) top.vars[d.name] = substitute(d.value, top.vars);
  for (auto& [k, v] : defines) top.vars[k] = v;
  struct {
    std::vector<Node> nodes;
    std::vector<Edge> edges;
  } ex;
  expand(body, top, ex.nodes, ex.edges, diag);
  if (diag.has_errors()) return false;
  std::vector<int> remap(ex.nodes.size(), -1);
  for (size_t i = 0; i < ex.nodes.size(); ++i) {
    if (!ex.nodes[i].info) continue;
    remap[i] = int(out.elements.size());
    ProgramElement pe;
    pe.name = ex.nodes[i].name;
    pe.info = ex.nodes[i].info;
    pe.config = ex.nodes[i].config;
    pe.loc = ex.nodes[i].loc;
    pe.config_loc = ex.nodes[i].config_loc;
    out.elements.push_back(std::move(pe));
  }
  for (auto& e : ex.edges) {
    if (remap[size_t(e.from)] < 0 || remap[size_t(e.to)] < 0) continue;
    out.conns.push_back({remap[size_t(e.from)], e.from_port, remap[size_t(e.to)], e.to_port, e.loc});
  }
  out.requirements = body.requirements;
  return true;
}

bool load_string(const std::string& name, const std::string& text, const Defines& defines, Program& out,
                 Diagnostics& diag) {
  int32_t id = SourceManager::instance().add(name, text);
  if (!parse_and_expand(id, defines, out, diag)) return false;
  return out.validate(diag);
}

bool load_file(const std::string& path, const Defines& defines, Program& out, Diagnostics& diag) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    diag.error({}, fmt::format("{}: cannot open configuration: {}", path, std::strerror(errno)));
    return false;
  }
  struct stat st;
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    diag.error({}, fmt::format("{}: cannot open configuration: Is a directory", path));
    return false;
  }
  std::stringstream ss;
  ss << f.rdbuf();
  return load_string(path, ss.str(), defines, out, diag);
}

}  // namespace shoal::config
