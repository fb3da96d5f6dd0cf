// IPClassifier and IPFilter patterns: Click's tcpdump-like expressions
// ("tcp dst port 80", "src net 10.0.0.0/8 and not icmp", "ip frag",
// "ip[6:2] & 0x1fff != 0") parsed into boolean expressions over field tests
// (atoms), flattened to first-match conjunctions, and compiled into a
// decision DAG: each node reads one field once and picks a child by binary
// search over the field's value intervals, so a packet's cost grows with
// the depth of the DAG, not with the number of rules.
#pragma once
#include <compare>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "shoal/core/diag.hh"

namespace shoal::ipf {

// Where a field is read from: the IP header, the transport header (the IP
// header plus its IHL) or the MAC header.
enum Base : uint8_t { kNet = 0, kTransp = 1, kMac = 2, kNumBases = 3 };

// A field: `width` bytes (1-4, big-endian) at `off` from `base`, ANDed with
// `mask`.
struct Key {
  uint8_t base = kNet;
  uint8_t width = 1;
  uint16_t off = 0;
  uint32_t mask = 0xff;
  auto operator<=>(const Key&) const = default;
};

// A test on one field: true iff the field lies inside the packet and
// ((field & mask) in [lo, hi]) != out. A field past the packet's end makes
// the atom false (and its negation true).
struct Atom {
  Key key;
  uint32_t lo = 0, hi = 0;
  bool out = false;
  auto operator<=>(const Atom&) const = default;
};

struct Expr {
  enum Kind : uint8_t { kTrue, kFalse, kAtom, kNot, kAnd, kOr } kind = kTrue;
  uint32_t atom = 0;  // index into the atom table, for kAtom
  std::vector<Expr> kids;
};

// One packet's fields: the start of each base and the bytes from there to
// the packet's end (0 where the base is absent).
struct PacketView {
  const uint8_t* base[kNumBases] = {};
  uint32_t len[kNumBases] = {};
};
// The view of an IP packet: `ip` at the IP header with `iplen` bytes to the
// end of the packet, `mac` (may be null) at the MAC header with `maclen`
// bytes. The transport base is present when the IHL is sane and the header
// fits.
PacketView make_view(const uint8_t* mac, uint32_t maclen, const uint8_t* ip, uint32_t iplen);

inline bool load_field(const PacketView& v, const Key& k, uint32_t& x) {
  if (uint32_t(k.off) + k.width > v.len[k.base]) return false;
  const uint8_t* p = v.base[k.base] + k.off;
  uint32_t r;
  switch (k.width) {
    case 1: r = p[0]; break;
    case 2: r = uint32_t(p[0]) << 8 | p[1]; break;
    case 4: r = uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3]; break;
    default: r = uint32_t(p[0]) << 16 | uint32_t(p[1]) << 8 | p[2]; break;
  }
  x = r & k.mask;
  return true;
}
inline bool eval_atom(const Atom& a, const PacketView& v) {
  uint32_t x;
  if (!load_field(v, a.key, x)) return false;
  return (a.lo <= x && x <= a.hi) != a.out;
}
// Direct evaluation of an expression (the reference the tests compare with).
bool eval(const Expr& e, const std::vector<Atom>& atoms, const PacketView& v);

// Rule results: an output port (>= 0), no rule matched, or a deny rule.
constexpr int32_t kNoMatch = -1;
constexpr int32_t kDeny = -2;

// Interned atoms, shared by the patterns of one element.
class AtomTable {
 public:
  uint32_t intern(const Atom& a);
  const std::vector<Atom>& atoms() const { return atoms_; }

 private:
  std::vector<Atom> atoms_;
  std::map<Atom, uint32_t> index_;
};

// Parses one pattern. Errors throw ConfigError at the offending word
// (`loc` is where `text` starts); messages begin with `who`.
Expr parse_pattern(std::string_view text, Loc loc, AtomTable& atoms, const std::string& who = "");

struct Rule {
  Expr expr;
  int32_t result;  // an output, or kDeny
};

class Program {
 public:
  // Flattens the rules to conjunctions of literals in first-match order
  // and builds the decision DAG; past `max_nodes` nodes the remaining
  // subproblems become linear leaves. Throws std::runtime_error when a
  // pattern expands to more than `max_terms` conjunctions.
  void build(const std::vector<Atom>& atoms, const std::vector<Rule>& rules, size_t max_nodes = 1u << 16,
             size_t max_terms = 1u << 14);
  // The result for a packet: through the DAG, or by testing every
  // conjunction in order (Click's linear program, kept for comparison).
  int32_t match(const PacketView& v) const;
  int32_t match_linear(const PacketView& v) const;
  // A readable listing of the DAG.
  std::string dump() const;
  size_t node_count() const { return nodes_.size(); }
  size_t leaf_count() const { return leaves_.size(); }
  size_t term_count() const { return terms_.size(); }
  // Rules that no packet can reach (every conjunction is contradictory or
  // shadowed by an earlier catch-all).
  const std::vector<size_t>& dead_rules() const { return dead_; }
  // The longest path, in nodes.
  size_t depth() const { return depth_; }

 private:
  struct Node {
    Key key;
    uint32_t first, n;  // bounds_/kids_[first, first+n)
    int32_t absent;     // child when the field is past the packet's end
  };
  struct Term {
    uint32_t first, n;  // lits_[first, first+n): atom * 2 + negated
    int32_t result;
  };
  struct Leaf {
    uint32_t first, n;  // leaf_terms_[first, first+n)
  };
  bool lit_true(uint32_t lit, const PacketView& v) const { return eval_atom(atoms_[lit >> 1], v) != bool(lit & 1); }
  int32_t run_terms(const Term* t, uint32_t n, const uint32_t* lits, const PacketView& v) const;

  friend struct Builder;
  std::vector<Atom> atoms_;
  std::vector<Term> terms_;  // the flattened rules, in order
  std::vector<uint32_t> lits_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> bounds_;
  std::vector<int32_t> kids_;  // >= 0: a node; < 0: leaf ~kid
  std::vector<Leaf> leaves_;
  std::vector<Term> leaf_terms_;
  std::vector<uint32_t> leaf_lits_;
  int32_t root_ = -1;
  std::vector<size_t> dead_;
  size_t depth_ = 0;
};

std::string format_key(const Key& k);
std::string format_atom(const Atom& a);

}  // namespace shoal::ipf
