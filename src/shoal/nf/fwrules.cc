#include "shoal/nf/fwrules.hh"

#include <fmt/format.h>

#include "shoal/classbench/classbench.hh"

namespace shoal::nf {

bool parse_fw_rule(const std::string& line, k::ClsRule& r, std::string& err) {
  size_t b = line.find_first_not_of(" \t");
  if (b == std::string::npos) return err = "empty rule", false;
  size_t e = line.find_first_of(" \t", b);
  std::string act = line.substr(b, e == std::string::npos ? std::string::npos : e - b);
  int32_t action;
  if (act == "allow" || act == "accept")
    action = 0;
  else if (act == "deny" || act == "drop")
    action = 1;
  else
    return err = fmt::format("'{}': a rule starts with its action, allow or deny", act), false;
  if (e == std::string::npos) return err = fmt::format("'{}' needs a ClassBench filter after it", act), false;
  if (!classify::parse_rule(line.substr(e), r, err)) return false;
  if (r.action != 0) return err = "'port' means nothing to a firewall rule: its action is its first word", false;
  r.action = action;
  return true;
}

std::string unparse_fw_rule(const k::ClsRule& r) {
  k::ClsRule c = r;
  c.action = 0;
  return fmt::format("{} {}", r.action == 0 ? "allow" : "deny", classify::unparse_rule(c));
}

bool parse_fw_rules(const std::string& text, const std::string& name, std::vector<k::ClsRule>& out, std::string& err) {
  return classify::for_each_rule_line(
      text, name,
      [&](const std::string& line, std::string& why) {
        k::ClsRule r;
        if (!parse_fw_rule(line, r, why)) return false;
        out.push_back(r);
        return true;
      },
      err);
}

bool load_fw_rules(const std::string& path, std::vector<k::ClsRule>& out, std::string& err) {
  std::string text;
  return classify::read_rule_file(path, text, err) && parse_fw_rules(text, path, out, err);
}

}  // namespace shoal::nf
