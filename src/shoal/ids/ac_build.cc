#include "shoal/ids/ac_build.hh"

#include <fmt/format.h>

#include <deque>

namespace shoal::ids {

bool AcTable::build(const std::vector<std::string>& patterns, std::string& err, uint32_t max_states) {
  // Alphabet: each folded byte some pattern uses gets a class; the rest share 0.
  cls_.assign(256, 0);
  uint8_t used[256] = {};
  for (const std::string& p : patterns)
    for (char c : p) used[fold(uint8_t(c))] = 1;
  nclasses_ = 1;
  uint8_t by_folded[256] = {};
  for (int b = 0; b < 256; ++b)
    if (used[b]) by_folded[b] = uint8_t(nclasses_++);
  for (int b = 0; b < 256; ++b) cls_[size_t(b)] = by_folded[fold(uint8_t(b))];
  const uint32_t C = nclasses_;
  // The trie, dense rows (kNone: no edge yet).
  constexpr uint32_t kNone = UINT32_MAX;
  next_.assign(C, kNone);
  std::vector<std::vector<uint32_t>> outs(1);
  states_ = 1;
  for (uint32_t id = 0; id < patterns.size(); ++id) {
    uint32_t s = 0;
    for (char c : patterns[id]) {
      uint32_t x = cls_[uint8_t(c)];
      if (next_[size_t(s) * C + x] == kNone) {
        if (states_ >= max_states) {
          err = fmt::format("the pattern automaton would exceed {} states", max_states);
          return false;
        }
        next_[size_t(s) * C + x] = states_++;
        next_.resize(size_t(states_) * C, kNone);
        outs.emplace_back();
      }
      s = next_[size_t(s) * C + x];
    }
    outs[s].push_back(id);
  }
  // Breadth first: failure links, the complete transition function, and
  // each state's outputs merged with its failure state's.
  std::vector<uint32_t> fail(states_, 0);
  std::deque<uint32_t> q;
  for (uint32_t x = 0; x < C; ++x) {
    uint32_t& t = next_[x];
    if (t == kNone) {
      t = 0;
    } else {
      fail[t] = 0;
      q.push_back(t);
    }
  }
  while (!q.empty()) {
    uint32_t s = q.front();
    q.pop_front();
    const auto& fo = outs[fail[s]];
    outs[s].insert(outs[s].end(), fo.begin(), fo.end());
    for (uint32_t x = 0; x < C; ++x) {
      uint32_t& t = next_[size_t(s) * C + x];
      if (t == kNone) {
        t = next_[size_t(fail[s]) * C + x];
      } else {
        fail[t] = next_[size_t(fail[s]) * C + x];
        q.push_back(t);
      }
    }
  }
  out_off_.assign(states_ + 1, 0);
  out_ids_.clear();
  for (uint32_t s = 0; s < states_; ++s) {
    out_off_[s] = uint32_t(out_ids_.size());
    out_ids_.insert(out_ids_.end(), outs[s].begin(), outs[s].end());
  }
  out_off_[states_] = uint32_t(out_ids_.size());
  // The scan's form: each entry the target's row offset, flagged when the
  // target has outputs (kernels/ac.hh).
  for (uint32_t& t : next_) t = t * C | (outs[t].empty() ? 0u : k::kAcHasOutput);
  return true;
}

k::AcView AcTable::view() const {
  k::AcView v;
  v.nclasses = nclasses_;
  v.cls = cls_.data();
  v.next = next_.data();
  v.out_off = out_off_.data();
  v.out_ids = out_ids_.data();
  return v;
}

}  // namespace shoal::ids
