// Host-side construction of the classification trees of kernels/classify.hh.
//
// The rules are split by how wide their addresses are (source and
// destination each narrow, /16 or longer, or wide), one tree per group, so a
// few wide rules do not get copied into every corner of the narrow rules'
// tree (EffiCuts' observation). Each tree cuts its region into 2^c equal
// parts along one field per node (HiCuts): the field with the most distinct
// rule projections, and as many cuts as keep the copies of rules within
// SPFAC times the node's rule count. A node with BINTH rules or fewer is a
// leaf. In every node, rules that an earlier rule covering the whole region
// hides are removed; sibling nodes with the same rules are shared.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/kernels/classify.hh"

namespace shoal::k {

class ClsTrees {
 public:
  struct Options {
    uint32_t binth = 8;         // rules per leaf
    double spfac = 4.0;         // copies allowed per cut, times the node's rules
    uint32_t max_cut_bits = 8;  // at most 2^8 children per node
  };
  struct Stats {
    uint32_t trees = 0, nodes = 0, leaves = 0, depth = 0;
    uint64_t leaf_entries = 0;  // rule copies in leaves
    uint32_t largest_leaf = 0;
    double build_ms = 0;
  };
  bool build(std::vector<ClsRule> rules, const Options& opt, std::string& err);
  bool build(std::vector<ClsRule> rules, std::string& err) { return build(std::move(rules), Options(), err); }
  ClsView view() const;
  const std::vector<ClsRule>& rules() const { return rules_; }
  const std::vector<ClsNode>& nodes() const { return nodes_; }
  const std::vector<uint32_t>& children() const { return children_; }
  const std::vector<uint32_t>& leaf_rules() const { return leaf_; }
  const std::vector<uint32_t>& roots() const { return roots_; }
  const Stats& stats() const { return stats_; }
  size_t memory_bytes() const {
    return rules_.size() * sizeof(ClsRule) + nodes_.size() * sizeof(ClsNode) +
           (children_.size() + leaf_.size() + roots_.size()) * 4;
  }

 private:
  struct Builder;
  std::vector<ClsRule> rules_;
  std::vector<ClsNode> nodes_;
  std::vector<uint32_t> children_, leaf_, roots_;
  Stats stats_;
};

}  // namespace shoal::k
