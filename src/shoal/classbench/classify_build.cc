#include "shoal/classbench/classify_build.hh"

#include <algorithm>
#include <array>
#include <chrono>
#include <map>

namespace shoal::k {

namespace {

constexpr uint32_t kFullBits[kClsDims] = {32, 32, 16, 16, 8};

struct Interval {
  uint32_t lo, hi;  // inclusive
};

// The rule's projection on field d: exact for prefixes, ranges and an exact
// protocol; the whole field for anything else (the leaf's test is exact).
Interval project(const ClsRule& r, int d) {
  auto prefix = [](uint32_t v, uint32_t m) -> Interval {
    if ((~m & (~m + 1)) != 0) return {0, 0xffffffffu};  // not a prefix mask
    return {v & m, (v & m) | ~m};
  };
  if (!r.ip) return {0, d < 2 ? 0xffffffffu : (1u << kFullBits[d]) - 1};
  switch (d) {
    case 0: return prefix(r.src, r.smask);
    case 1: return prefix(r.dst, r.dmask);
    case 2: return {r.sp_lo, r.sp_hi};
    case 3: return {r.dp_lo, r.dp_hi};
    default: return r.proto_mask == 0xff ? Interval{r.proto, r.proto} : Interval{0, 255};
  }
}

struct Region {
  uint32_t lo[kClsDims];
  uint32_t bits[kClsDims];
  uint32_t hi(int d) const { return bits[d] == 32 ? 0xffffffffu : lo[d] + ((1u << bits[d]) - 1); }
};

// Whether every key in the region that rule b matches, rule a matches too.
bool hides(const ClsRule& a, const Interval (&pa)[kClsDims], const Region& g, const ClsRule& b) {
  if (a.flags_mask || a.vlan_mask || a.untagged) return false;
  if (a.ethertype_mask && !(b.ethertype_mask == 0xffff && a.ethertype_mask == 0xffff && a.ethertype == b.ethertype))
    return false;
  if (a.ip && !b.ip) return false;
  if (!a.ip) return true;
  if (a.proto_mask != 0 && a.proto_mask != 0xff) return false;
  for (int d = 0; d < kClsDims; ++d)
    if (pa[d].lo > g.lo[d] || pa[d].hi < g.hi(d)) return false;
  return true;
}

}  // namespace

struct ClsTrees::Builder {
  ClsTrees& t;
  const Options& opt;
  std::vector<std::array<Interval, kClsDims>> proj;
  std::map<std::vector<uint32_t>, uint32_t> leaves;  // identical leaves shared

  uint32_t leaf(const std::vector<uint32_t>& rules) {
    auto it = leaves.find(rules);
    if (it != leaves.end()) return it->second;
    ClsNode n{kClsLeaf, 0, 0, 0, 0, uint32_t(t.leaf_.size()), uint32_t(rules.size())};
    t.leaf_.insert(t.leaf_.end(), rules.begin(), rules.end());
    t.nodes_.push_back(n);
    ++t.stats_.leaves;
    t.stats_.leaf_entries += rules.size();
    t.stats_.largest_leaf = std::max<uint32_t>(t.stats_.largest_leaf, uint32_t(rules.size()));
    uint32_t id = uint32_t(t.nodes_.size() - 1);
    leaves.emplace(rules, id);
    return id;
  }

  // The rules that intersect the region, less those an earlier rule hides.
  void prune(std::vector<uint32_t>& rules, const Region& g) {
    std::vector<uint32_t> out, covering;
    out.reserve(rules.size());
    for (uint32_t r : rules) {
      bool hidden = false;
      for (uint32_t a : covering) {
        Interval pa[kClsDims];
        for (int d = 0; d < kClsDims; ++d) pa[d] = proj[a][d];
        if (hides(t.rules_[a], pa, g, t.rules_[r])) {
          hidden = true;
          break;
        }
      }
      if (hidden) continue;
      out.push_back(r);
      if (covering.size() < 4) {
        bool covers = true;
        for (int d = 0; d < kClsDims && covers; ++d) covers = proj[r][d].lo <= g.lo[d] && proj[r][d].hi >= g.hi(d);
        if (covers) covering.push_back(r);
      }
    }
    rules.swap(out);
  }

  // Child index range of interval iv under c cuts of field d in region g.
  static void span(const Interval& iv, const Region& g, int d, uint32_t c, uint32_t& a, uint32_t& b) {
    uint32_t shift = g.bits[d] - c;
    uint64_t lo = std::max<uint64_t>(iv.lo, g.lo[d]), hi = std::min<uint64_t>(iv.hi, g.hi(d));
    a = uint32_t((lo - g.lo[d]) >> shift);
    b = uint32_t((hi - g.lo[d]) >> shift);
  }

  uint32_t node(std::vector<uint32_t> rules, const Region& g, uint32_t depth) {
    prune(rules, g);
    t.stats_.depth = std::max(t.stats_.depth, depth);
    if (rules.size() <= opt.binth) return leaf(rules);
    // fields by how many distinct projections the rules have on them
    struct Choice {
      int d;
      size_t distinct;
    };
    std::vector<Choice> dims;
    for (int d = 0; d < kClsDims; ++d) {
      if (g.bits[d] == 0) continue;
      std::vector<std::pair<uint32_t, uint32_t>> p;
      p.reserve(rules.size());
      for (uint32_t r : rules) p.emplace_back(std::max(proj[r][d].lo, g.lo[d]), std::min(proj[r][d].hi, g.hi(d)));
      std::sort(p.begin(), p.end());
      size_t distinct = size_t(std::unique(p.begin(), p.end()) - p.begin());
      if (distinct > 1) dims.push_back({d, distinct});
    }
    std::stable_sort(dims.begin(), dims.end(),
                     [](const Choice& a, const Choice& b) { return a.distinct > b.distinct; });
    const size_t n = rules.size();
    for (const Choice& ch : dims) {
      int d = ch.d;
      uint32_t best_c = 0, best_max = uint32_t(n);
      std::vector<int64_t> diff;
      for (uint32_t c = 1; c <= std::min(g.bits[d], opt.max_cut_bits); ++c) {
        diff.assign((size_t(1) << c) + 1, 0);
        const uint32_t k = 1u << c;
        for (uint32_t r : rules) {
          uint32_t a, b;
          span(proj[r][d], g, d, c, a, b);
          if (a == 0 && b == k - 1) continue;  // pushed up, not copied
          ++diff[a];
          --diff[b + 1];
        }
        uint64_t sum = 0;
        uint32_t mx = 0;
        int64_t run = 0;
        for (size_t j = 0; j + 1 < diff.size(); ++j) {
          run += diff[j];
          sum += uint64_t(run);
          mx = std::max(mx, uint32_t(run));
        }
        if (c > 1 && double(sum) > opt.spfac * double(n) + double(size_t(1) << c)) break;
        best_c = c;
        best_max = mx;
      }
      if (best_c == 0 || best_max >= n) continue;  // no rule separated along d
      return cut(rules, g, d, best_c, depth);
    }
    return leaf(rules);  // nothing separates them (they overlap everywhere)
  }

  uint32_t cut(const std::vector<uint32_t>& rules, const Region& g, int d, uint32_t c, uint32_t depth) {
    const uint32_t k = 1u << c;
    std::vector<std::vector<uint32_t>> kids(k);
    std::vector<uint32_t> pushed;
    for (uint32_t r : rules) {
      uint32_t a, b;
      span(proj[r][d], g, d, c, a, b);
      if (a == 0 && b == k - 1) {
        pushed.push_back(r);
        continue;
      }
      for (uint32_t j = a; j <= b; ++j) kids[j].push_back(r);
    }
    // a child needs no rule after the first pushed rule that hides
    // everything below it; cheap to keep: the lookup stops there anyway
    uint32_t me = uint32_t(t.nodes_.size());
    t.nodes_.push_back({uint8_t(d), uint8_t(g.bits[d] - c), 0, k - 1, uint32_t(t.children_.size()),
                        uint32_t(t.leaf_.size()), uint32_t(pushed.size())});
    t.leaf_.insert(t.leaf_.end(), pushed.begin(), pushed.end());
    t.stats_.leaf_entries += pushed.size();
    uint32_t base = uint32_t(t.children_.size());
    t.children_.resize(t.children_.size() + k);
    for (uint32_t j = 0; j < k; ++j) {
      Region cg = g;
      cg.bits[d] = g.bits[d] - c;
      cg.lo[d] = g.lo[d] + (j << cg.bits[d]);
      uint32_t id = node(std::move(kids[j]), cg, depth + 1);  // (identical leaves are shared)
      t.children_[base + j] = id;
    }
    ++t.stats_.nodes;
    return me;
  }
};

bool ClsTrees::build(std::vector<ClsRule> rules, const Options& opt, std::string& err) {
  auto t0 = std::chrono::steady_clock::now();
  rules_ = std::move(rules);
  nodes_.clear();
  children_.clear();
  leaf_.clear();
  roots_.clear();
  stats_ = Stats();
  if (opt.binth == 0 || opt.spfac < 1 || opt.max_cut_bits == 0 || opt.max_cut_bits > 16) {
    err = "classifier trees: BINTH >= 1, SPFAC >= 1, cut bits 1-16";
    return false;
  }
  Builder b{*this, opt, {}, {}};
  b.proj.resize(rules_.size());
  for (size_t r = 0; r < rules_.size(); ++r)
    for (int d = 0; d < kClsDims; ++d) b.proj[r][d] = project(rules_[r], d);
  // the groups: source narrow or wide, destination narrow or wide
  std::vector<uint32_t> group[4];
  for (uint32_t r = 0; r < rules_.size(); ++r) {
    auto width = [&](int d) { return uint64_t(b.proj[r][d].hi) - b.proj[r][d].lo; };
    bool src_wide = width(0) >= (uint64_t(1) << 16), dst_wide = width(1) >= (uint64_t(1) << 16);
    group[(src_wide ? 2 : 0) | (dst_wide ? 1 : 0)].push_back(r);
  }
  Region all;
  for (int d = 0; d < kClsDims; ++d) all.lo[d] = 0, all.bits[d] = kFullBits[d];
  // trees in the order of their first rule: a lookup stops at a tree whose
  // first rule comes after the best match so far
  std::sort(std::begin(group), std::end(group),
            [](const auto& x, const auto& y) { return !x.empty() && (y.empty() || x.front() < y.front()); });
  for (auto& g : group) {
    if (g.empty()) continue;
    roots_.push_back(b.node(g, all, 0));
    roots_.push_back(g.front());
    ++stats_.trees;
  }
  stats_.nodes += stats_.leaves;
  stats_.build_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return true;
}

ClsView ClsTrees::view() const {
  ClsView v;
  v.rules = rules_.data();
  v.nodes = nodes_.data();
  v.children = children_.data();
  v.leaf_rules = leaf_.data();
  v.roots = roots_.data();
  v.ntrees = uint32_t(roots_.size() / 2);
  v.nrules = uint32_t(rules_.size());
  return v;
}

}  // namespace shoal::k
