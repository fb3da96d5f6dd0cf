// The rule matching engine: one fast pattern per rule into a single
// multi-pattern matcher (the built-in Aho-Corasick DFA, or Hyperscan), then
// each candidate rule verified against its header, dsize, and all its
// contents and pcres with their positional constraints.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "shoal/ids/ac_build.hh"
#include "shoal/ids/rules.hh"

namespace shoal::ids {

// What the rules look at in a packet.
struct PacketInfo {
  Addr src, dst;
  uint8_t proto = 0;
  bool has_ports = false;
  uint16_t sport = 0, dport = 0;
  const uint8_t* payload = nullptr;  // after the TCP/UDP/ICMP header (IP payload otherwise)
  uint32_t plen = 0;
};

// Parses an IPv4 or IPv6 packet starting at ip; false when it is not one
// (too short, bad version, truncated headers).
bool parse_packet(const uint8_t* ip, uint32_t len, PacketInfo& out);

// Whether rule r's header and dsize accept the packet, and whether its
// contents and pcres match the payload (Snort semantics, with backtracking
// over earlier contents' occurrences).
bool header_matches(const Rule& r, const PacketInfo& p);
bool payload_matches(const Rule& r, const uint8_t* payload, uint32_t plen);

enum class EngineKind { Builtin, Hyperscan };
bool have_hyperscan();

class Engine {
 public:
  Engine();
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  bool build(std::vector<Rule> rules, EngineKind kind, std::string& err);
  // Indices (into rules()) of the rules that match, ascending. Not
  // thread-safe: one Engine per thread (scratch state).
  void match(const PacketInfo& p, std::vector<uint32_t>& hits);
  const std::vector<Rule>& rules() const { return rules_; }
  // The fast patterns (deduplicated, case-folded) and, per pattern, its rules.
  const std::vector<std::string>& patterns() const { return patterns_; }
  const AcTable& automaton() const { return ac_; }
  size_t always_checked() const { return always_.size(); }
  // Candidate rules the last match() verified (statistics).
  uint64_t verified() const { return verified_; }

 private:
  void candidates(const uint8_t* s, uint32_t n);
  void add_candidates(uint32_t pattern);

  EngineKind kind_ = EngineKind::Builtin;
  std::vector<Rule> rules_;
  std::vector<std::string> patterns_;
  std::vector<std::vector<uint32_t>> pattern_rules_;
  std::vector<uint32_t> always_;  // rules without a usable fast pattern
  AcTable ac_;
  struct Hs;
  std::unique_ptr<Hs> hs_;
  // scratch
  std::vector<uint32_t> seen_, cand_;
  uint32_t epoch_ = 0;
  uint64_t verified_ = 0;
};

}  // namespace shoal::ids
