#include "shoal/nf/maglev.hh"

#include <fmt/format.h>

#include <set>

namespace shoal::nf {

namespace {

// Two independent hashes of a name: FNV-1a from two bases, finished with
// splitmix64's mixer.
uint64_t name_hash(const std::string& s, uint64_t basis) {
  uint64_t h = basis;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

}  // namespace

bool is_prime(uint64_t n) {
  if (n < 2) return false;
  for (uint64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

bool MaglevTable::build(const std::vector<std::string>& names, uint32_t size, std::string& err) {
  if (!is_prime(size)) return err = fmt::format("table size {} is not a prime", size), false;
  if (names.size() >= k::kMaglevNone) return err = fmt::format("{} backends: at most 65534", names.size()), false;
  if (!names.empty() && names.size() >= size)
    return err = fmt::format("{} backends need a table larger than {} entries", names.size(), size), false;
  std::set<std::string> seen;
  for (const std::string& n : names)
    if (!seen.insert(n).second) return err = fmt::format("backend '{}' is named twice", n), false;
  names_ = names;
  entry_.assign(names.empty() ? 0 : size, k::kMaglevNone);
  if (names.empty()) return true;
  size_t nb = names.size();
  std::vector<uint64_t> offset(nb), skip(nb), next(nb, 0);
  for (size_t i = 0; i < nb; ++i) {
    offset[i] = name_hash(names[i], 0xcbf29ce484222325ull) % size;
    skip[i] = name_hash(names[i], 0x84222325cbf29ce4ull) % (size - 1) + 1;
  }
  // The paper's population: backends take turns; each claims its next
  // preferred entry that is still free.
  uint32_t filled = 0;
  for (;;)
    for (size_t i = 0; i < nb; ++i) {
      uint64_t c = (offset[i] + next[i] * skip[i]) % size;
      while (entry_[c] != k::kMaglevNone) {
        ++next[i];
        c = (offset[i] + next[i] * skip[i]) % size;
      }
      entry_[c] = uint16_t(i);
      ++next[i];
      if (++filled == size) return true;
    }
}

std::vector<uint32_t> MaglevTable::counts() const {
  std::vector<uint32_t> c(names_.size(), 0);
  for (uint16_t e : entry_)
    if (e != k::kMaglevNone) ++c[e];
  return c;
}

double MaglevTable::changed(const MaglevTable& o) const {
  if (entry_.size() != o.entry_.size() || entry_.empty()) return 1.0;
  size_t d = 0;
  for (size_t i = 0; i < entry_.size(); ++i)
    if (names_[entry_[i]] != o.names_[o.entry_[i]]) ++d;
  return double(d) / double(entry_.size());
}

}  // namespace shoal::nf
