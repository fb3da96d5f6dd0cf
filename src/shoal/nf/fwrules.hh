// The stateful firewall's rule files: one rule a line, its action first,
// then a ClassBench filter (classbench/classbench.hh):
//   allow @10.0.0.0/8 0.0.0.0/0 0 : 65535 80 : 80 0x06/0xFF
//   deny  @0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00
// ('accept' and 'drop' are the same as 'allow' and 'deny'; '#' starts a
// comment). First match wins. A rule's ClsRule::action is 0 for allow, 1
// for deny.
#pragma once
#include <string>
#include <vector>

#include "shoal/kernels/classify.hh"

namespace shoal::nf {

bool parse_fw_rule(const std::string& line, k::ClsRule& r, std::string& err);
std::string unparse_fw_rule(const k::ClsRule& r);
// "name:line: message" on the first bad line.
bool parse_fw_rules(const std::string& text, const std::string& name, std::vector<k::ClsRule>& out, std::string& err);
bool load_fw_rules(const std::string& path, std::vector<k::ClsRule>& out, std::string& err);

}  // namespace shoal::nf
