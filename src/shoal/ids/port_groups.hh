// Port groups for the packet prefilter (Suricata's signature group heads,
// Snort 2's port groups): the fast patterns a packet can need depend on its
// protocol and ports, so each group of ports that the rules treat alike gets
// its own, smaller, pattern set, and a packet is scanned for one of them.
//
// A group's set is a superset of what a packet of the group needs: the
// patterns of every rule whose protocol and port set on one side (source,
// or destination) admit the packet; rules without ports, bidirectional
// rules and rules with `any` on that side are in every group of it. A
// packet picks whichever of its two groups (by source port, by destination
// port) has fewer patterns; header_matches still decides each candidate.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/ids/rules.hh"

namespace shoal::ids {

struct PortGroups {
  // Distinct pattern sets (ascending pattern ids); kFull: every pattern.
  static constexpr int32_t kFull = -1;
  std::vector<std::vector<uint32_t>> sets;
  // Per protocol class (Database::proto_class) and side (0 source port, 1
  // destination port): each port's set (empty: the class's set `cls`).
  std::array<std::array<std::vector<int32_t>, 2>, 4> by_port;
  std::array<int32_t, 4> cls{kFull, kFull, kFull, kFull};     // a packet of the class with ports, by class
  std::array<int32_t, 4> noport{kFull, kFull, kFull, kFull};  // ... without ports (fragments, ICMP)
  size_t size_of(int32_t set, size_t all) const { return set < 0 ? all : sets[size_t(set)].size(); }
  // The set a packet is scanned for.
  int32_t pick(int c, bool has_ports, uint16_t sp, uint16_t dp, size_t all) const {
    if (!has_ports) return noport[size_t(c)];
    const auto& s = by_port[size_t(c)][0];
    const auto& d = by_port[size_t(c)][1];
    int32_t a = s.empty() ? cls[size_t(c)] : s[sp], b = d.empty() ? cls[size_t(c)] : d[dp];
    return size_of(a, all) <= size_of(b, all) ? a : b;
  }
};

// The ports a port set admits, one bit each (bit p of word p / 64), from its
// structure; and a text equal for equal structures.
std::vector<uint64_t> port_bitmap(const PortSet& ps);
std::string port_set_key(const PortSet& ps);

// Builds the groups of `patterns` fast patterns, pattern p's rules being
// pattern_rules[p], of rules (their protocol classes: class_mask[r], bit c
// for class c; need_ports[r]). A set with more than `full_fraction` of the
// patterns is kFull (not worth a matcher of its own).
PortGroups build_port_groups(const std::vector<Rule>& rules, const std::vector<uint8_t>& class_mask,
                             const std::vector<uint8_t>& need_ports,
                             const std::vector<std::vector<uint32_t>>& pattern_rules, double full_fraction);

}  // namespace shoal::ids
