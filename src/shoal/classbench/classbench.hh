// ClassBench filter sets: the text format (read and written), and a
// generator of ClassBench-style sets and of traces that hit their rules.
//
// A rule is one line, ClassBench's five fields and flags, then options:
//   @SRC/LEN  DST/LEN  SP_LO : SP_HI  DP_LO : DP_HI  PROTO/MASK  [FLAGS/MASK]
//       [port N] [ethertype HEX|any] [vlan ID|any|none]
// e.g. "@10.1.0.0/16 0.0.0.0/0 0 : 65535 80 : 80 0x06/0xFF 0x0000/0x0000 port 1".
// `port` is the rule's output (0 when absent). FLAGS/MASK is tested on the
// TCP word at offset 12 (SYN 0x0002, ACK 0x0010). The address, port,
// protocol and flag fields need an IPv4 packet, unless all are wildcards:
// such a rule looks at the Ethernet type and VLAN only (ethertype any: every
// frame). Without `ethertype`, a rule is for IPv4 (0x0800).
#pragma once
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "shoal/kernels/classify.hh"

namespace shoal::classify {

// One line; false with err (naming the field). Blank and '#' lines are not
// rules (parse_rules skips them).
bool parse_rule(const std::string& line, k::ClsRule& r, std::string& err);
std::string unparse_rule(const k::ClsRule& r);
// A whole file's text: "name:line: message" on the first bad line.
bool parse_rules(const std::string& text, const std::string& name, std::vector<k::ClsRule>& out, std::string& err);
bool load_rules(const std::string& path, std::vector<k::ClsRule>& out, std::string& err);
// The rule-file walk both use (and the firewall's files): `rule` gets each
// line that is not blank once '#' comments are cut; its first refusal
// becomes "name:line: why".
bool for_each_rule_line(const std::string& text, const std::string& name,
                        const std::function<bool(const std::string& line, std::string& why)>& rule, std::string& err);
bool read_rule_file(const std::string& path, std::string& text, std::string& err);

// ClassBench's three seed families, as their published filter sets look:
//   acl  access lists: mostly specific sources and destinations (/24-/32),
//        exact well-known destination ports or the ephemeral range, TCP/UDP;
//   fw   firewalls: many wildcard addresses, wide port ranges, protocol
//        wildcards;
//   ipc  IP chains: a mix of both, prefixes of all lengths.
enum class Flavor { Acl, Fw, Ipc };
bool parse_flavor(const std::string& s, Flavor& f);
const char* flavor_name(Flavor f);

struct GenSpec {
  Flavor flavor = Flavor::Acl;
  size_t rules = 1000;
  uint32_t seed = 1;
  int ports = 4;          // actions spread over outputs 0..ports-1
  bool catch_all = true;  // a last rule matching every IPv4 packet
};
std::vector<k::ClsRule> generate(const GenSpec& spec);

// Keys (header fields) that hit chosen rules: each picks a rule (skewed
// towards a hot set, as real traces are) and draws every field from inside
// the rule's ranges. The rule that matches first may be an earlier one: the
// classifier decides.
std::vector<k::ClsKey> trace_keys(const std::vector<k::ClsRule>& rules, size_t n, uint32_t seed);
// A frame carrying the key (Ethernet, an 802.1Q tag when key.tagged, IPv4
// with TCP, UDP or a bare payload), frame_len bytes (at least the headers);
// returns the length written (buf holds at least max(frame_len, 64)).
uint32_t build_frame(const k::ClsKey& key, uint32_t frame_len, uint8_t* buf);

}  // namespace shoal::classify
