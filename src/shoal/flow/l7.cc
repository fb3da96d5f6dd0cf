#include "shoal/flow/l7.hh"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace shoal::flow {

bool parse_l7_pattern(const std::string& text, std::string& name, std::string& regex, std::string& err) {
  std::istringstream in(text);
  std::string line;
  name.clear();
  regex.clear();
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("userspace ", 0) == 0) continue;  // l7-filter-userspace's own variants
    if (name.empty()) {
      name = line;
    } else {
      regex = line;
      return true;
    }
  }
  err = name.empty() ? "no protocol name" : "no pattern after the protocol name";
  return false;
}

namespace {

int l7_rank(const std::string& text) {
  auto at = text.find("# Pattern attributes:");
  if (at == std::string::npos) return 2;
  std::string line = text.substr(at, text.find('\n', at) - at);
  auto has = [&](const char* w) { return line.find(w) != std::string::npos; };
  int r = has("great") ? 0 : has("good") ? 1 : has("marginal") ? 3 : has("poor") ? 4 : 2;
  if (has("superset")) r += 5;
  if (has("overmatch")) r += 10;
  return r;
}

}  // namespace

bool L7Set::load(const std::string& dir, const std::vector<std::string>& names, std::string& err,
                 std::vector<std::string>* skipped) {
  std::vector<std::string> want = names;
  bool all = want.empty();
  if (all) {
    std::error_code ec;
    for (auto& e : std::filesystem::directory_iterator(dir, ec))
      if (e.path().extension() == ".pat") want.push_back(e.path().stem().string());
    if (ec) {
      err = fmt::format("{}: {}", dir, ec.message());
      return false;
    }
    std::sort(want.begin(), want.end());
    if (want.empty()) {
      err = fmt::format("{}: no .pat files", dir);
      return false;
    }
  }
  std::vector<std::pair<int, L7Pattern>> loaded;
  for (auto& n : want) {
    L7Pattern p;
    p.file = fmt::format("{}/{}.pat", dir, n);
    std::ifstream f(p.file);
    if (!f) {
      err = fmt::format("{}: cannot read", p.file);
      return false;
    }
    std::stringstream ss;
    ss << f.rdbuf();
    std::string why;
    if (!parse_l7_pattern(ss.str(), p.name, p.regex, why) || !p.dfa.compile(p.regex, "is", why, 20000)) {
      if (all) {
        if (skipped) skipped->push_back(fmt::format("{}: {}", n, why));
        continue;
      }
      err = fmt::format("{}: {}", p.file, why);
      return false;
    }
    // l7-filter's dummies, which match every connection: 'unknown' for
    // connections it gave up on, 'unset' for those still being tested
    if (all && (p.name == "unknown" || p.name == "unset")) continue;
    loaded.push_back({all ? l7_rank(ss.str()) : 0, std::move(p)});
  }
  // Every pattern: the better ones first (l7-filter's "Pattern attributes"
  // line), those that overmatch or are supersets of others last.
  std::stable_sort(loaded.begin(), loaded.end(), [](auto& a, auto& b) { return a.first < b.first; });
  for (auto& [rank, p] : loaded) pats_.push_back(std::move(p));
  return true;
}

void L7Set::start(uint32_t* st) const {
  for (size_t i = 0; i < pats_.size(); ++i) st[i] = pats_[i].dfa.view().start;
}

int L7Set::feed(uint32_t* st, const uint8_t* data, uint32_t n) const {
  int hit = -1;
  for (size_t i = 0; i < pats_.size(); ++i) {
    k::RegexView v = pats_[i].dfa.view();
    uint32_t s = st[i];
    if (s != v.accept)
      for (uint32_t j = 0; j < n && s != v.accept; ++j)
        if (data[j]) s = v.next[s * v.nclasses + v.cls[data[j]]];
    st[i] = s;
    if (hit < 0 && (s == v.accept || v.accept_end[s])) hit = int(i);
  }
  return hit;
}

}  // namespace shoal::flow
