// Builds the flat Aho-Corasick DFA of kernels/ac.hh.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "shoal/kernels/ac.hh"

namespace shoal::ids {

class AcTable {
 public:
  // Patterns are matched case-folded (A-Z as a-z); callers verify case.
  // Returns false with err when the table would exceed max_states.
  bool build(const std::vector<std::string>& patterns, std::string& err, uint32_t max_states = 1u << 22);
  k::AcView view() const;
  uint32_t states() const { return states_; }
  uint32_t classes() const { return nclasses_; }
  size_t memory_bytes() const { return cls_.size() + next_.size() * 4 + out_off_.size() * 4 + out_ids_.size() * 4; }
  // The raw arrays (uploads to a device).
  const std::vector<uint8_t>& cls() const { return cls_; }
  const std::vector<uint32_t>& next() const { return next_; }
  const std::vector<uint32_t>& out_off() const { return out_off_; }
  const std::vector<uint32_t>& out_ids() const { return out_ids_; }

 private:
  uint32_t states_ = 0, nclasses_ = 0;
  std::vector<uint8_t> cls_;
  std::vector<uint32_t> next_, out_off_, out_ids_;
};

inline uint8_t fold(uint8_t c) { return c >= 'A' && c <= 'Z' ? uint8_t(c + 32) : c; }

}  // namespace shoal::ids
