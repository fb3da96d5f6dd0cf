#include "shoal/ids/port_groups.hh"

#include <algorithm>
#include <map>
#include <string>

namespace shoal::ids {

namespace {

constexpr size_t kWords = 65536 / 64;
using Bits = std::vector<uint64_t>;

// The ports a port set admits (PortSet::match for every port, from its
// structure: a list is its positive members' union less what its negated
// members exclude).
void fill(const PortSet& ps, Bits& out) {
  out.assign(kWords, 0);
  if (ps.any) {
    std::fill(out.begin(), out.end(), ~0ull);
  } else if (ps.list) {
    bool has_pos = false;
    Bits pos(kWords, 0), keep(kWords, ~0ull), kid;
    for (const PortSet& k : ps.kids) {
      fill(k, kid);
      for (size_t w = 0; w < kWords; ++w) (k.neg ? keep[w] &= kid[w] : pos[w] |= kid[w]);
      has_pos |= !k.neg;
    }
    for (size_t w = 0; w < kWords; ++w) out[w] = (has_pos ? pos[w] : ~0ull) & keep[w];
  } else {
    for (uint32_t p = ps.lo; p <= ps.hi; ++p) out[p >> 6] |= 1ull << (p & 63);
  }
  if (ps.neg)
    for (uint64_t& w : out) w = ~w;
}

// A port set's structure as text: equal texts, equal sets.
void key(const PortSet& ps, std::string& out) {
  out += ps.neg ? '!' : '+';
  if (ps.any) return void(out += 'a');
  if (!ps.list) return void(out += std::to_string(ps.lo) + ':' + std::to_string(ps.hi));
  out += '[';
  for (const PortSet& k : ps.kids) key(k, out), out += ',';
  out += ']';
}

}  // namespace

std::vector<uint64_t> port_bitmap(const PortSet& ps) {
  Bits b;
  fill(ps, b);
  return b;
}

std::string port_set_key(const PortSet& ps) {
  std::string k;
  key(ps, k);
  return k;
}

PortGroups build_port_groups(const std::vector<Rule>& rules, const std::vector<uint8_t>& class_mask,
                             const std::vector<uint8_t>& need_ports,
                             const std::vector<std::vector<uint32_t>>& pattern_rules, double full_fraction) {
  PortGroups g;
  const size_t npat = pattern_rules.size();
  std::map<std::vector<uint32_t>, int32_t> interned;
  // (at most kMaxSets distinct sets: rules with thousands of distinct
  // ports group no further than that, their class's set serves the rest)
  constexpr size_t kMaxSets = 512;
  bool full = false;
  auto intern = [&](std::vector<uint32_t> v) -> int32_t {
    if (double(v.size()) > full_fraction * double(npat)) return PortGroups::kFull;
    auto found = interned.find(v);
    if (found != interned.end()) return found->second;
    if (g.sets.size() >= kMaxSets) return full = true, PortGroups::kFull;
    auto [it, fresh] = interned.emplace(std::move(v), int32_t(g.sets.size()));
    if (fresh) g.sets.push_back(it->first);
    return it->second;
  };
  for (int c = 0; c < 4; ++c) {
    std::vector<uint32_t> in_class, without_ports;
    for (uint32_t p = 0; p < npat; ++p) {
      bool any = false, np = false;
      for (uint32_t r : pattern_rules[p])
        if (class_mask[r] >> c & 1) any = true, np |= !need_ports[r];
      if (any) in_class.push_back(p);
      if (np) without_ports.push_back(p);
    }
    g.cls[size_t(c)] = intern(in_class);
    g.noport[size_t(c)] = intern(without_ports);
    for (int side = 0; side < 2; ++side) {
      full = false;
      // the rules of the class constrained on this side, by distinct port set
      std::map<std::string, uint32_t> set_of;
      std::vector<Bits> bits;
      std::vector<int32_t> rule_set(rules.size(), -1);
      for (uint32_t p : in_class)
        for (uint32_t r : pattern_rules[p]) {
          const PortSet& ps = side ? rules[r].dport : rules[r].sport;
          if (!(class_mask[r] >> c & 1) || !need_ports[r] || rules[r].bidirectional || ps.any) continue;
          std::string k;
          key(ps, k);
          auto [it, fresh] = set_of.emplace(k, uint32_t(bits.size()));
          if (fresh) fill(ps, bits.emplace_back());
          rule_set[r] = int32_t(it->second);
        }
      if (bits.empty()) continue;  // every port alike: the class's set
      // the ports by the port sets they are in: a partition refined set by
      // set (two ports stay together while every set has both or neither)
      std::vector<uint32_t> part(65536, 0);
      uint32_t nparts = 1;
      std::vector<int32_t> split;
      for (const Bits& bk : bits) {
        split.assign(2 * size_t(nparts), -1);
        uint32_t next = 0;
        for (size_t port = 0; port < 65536; ++port) {
          int32_t& to = split[2 * size_t(part[port]) + (bk[port >> 6] >> (port & 63) & 1)];
          if (to < 0) to = int32_t(next++);
          part[port] = uint32_t(to);
        }
        nparts = next;
      }
      // each part's set, from one of its ports
      std::vector<int32_t> set_of_part(nparts, PortGroups::kFull);
      std::vector<bool> done(nparts, false);
      auto& ports = g.by_port[size_t(c)][size_t(side)];
      ports.resize(65536);
      for (size_t port = 0; port < 65536; ++port) {
        uint32_t q = part[port];
        if (!done[q]) {
          done[q] = true;
          std::vector<uint32_t> v;
          for (uint32_t p : in_class)
            for (uint32_t r : pattern_rules[p]) {
              if (!(class_mask[r] >> c & 1)) continue;
              int32_t k = rule_set[r];
              if (k < 0 || (bits[size_t(k)][port >> 6] >> (port & 63) & 1)) {
                v.push_back(p);
                break;
              }
            }
          set_of_part[q] = intern(std::move(v));
        }
        ports[port] = set_of_part[q];
      }
      if (full) ports.clear();  // over the bound: the class's set
    }
  }
  // Sets that differ little are merged (their union serves both, a superset
  // of each): a set joins a merged one when the union costs it, and the
  // merged set's first member, at most kGrow more patterns. Largest first.
  constexpr double kGrow = 1.2;
  std::vector<bool> used(g.sets.size(), false);
  auto use = [&](int32_t x) {
    if (x >= 0) used[size_t(x)] = true;
  };
  for (auto& c : g.by_port)
    for (auto& side : c)
      for (int32_t x : side) use(x);
  for (int32_t x : g.cls) use(x);
  for (int32_t x : g.noport) use(x);
  std::vector<size_t> order;
  for (size_t i = 0; i < g.sets.size(); ++i)
    if (used[i]) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return g.sets[a].size() > g.sets[b].size(); });
  std::vector<std::vector<uint32_t>> merged;
  std::vector<size_t> base;  // each merged set's first member's size
  std::vector<int32_t> to(g.sets.size(), PortGroups::kFull);
  std::vector<uint32_t> u;
  for (size_t i : order) {
    const auto& s = g.sets[i];
    for (size_t m = 0; m < merged.size() && to[i] < 0; ++m) {
      u.clear();
      std::set_union(merged[m].begin(), merged[m].end(), s.begin(), s.end(), std::back_inserter(u));
      double limit = kGrow * double(std::min(s.size(), base[m]));
      if (double(u.size()) <= limit || u.size() == s.size()) {
        merged[m].swap(u);
        to[i] = int32_t(m);
      }
    }
    if (to[i] < 0) {
      to[i] = int32_t(merged.size());
      merged.push_back(s);
      base.push_back(s.size());
    }
  }
  auto remap = [&](int32_t& x) {
    if (x >= 0) x = to[size_t(x)];
  };
  for (auto& c : g.by_port)
    for (auto& side : c)
      for (int32_t& x : side) remap(x);
  for (int32_t& x : g.cls) remap(x);
  for (int32_t& x : g.noport) remap(x);
  g.sets = std::move(merged);
  return g;
}

}  // namespace shoal::ids
