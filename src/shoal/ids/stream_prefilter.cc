#include "shoal/ids/stream_prefilter.hh"

#include <algorithm>

namespace shoal::ids {

void StreamPrefilter::note(uint32_t pattern, uint64_t at) {
  for (Found& f : last_)
    if (f.pattern == pattern) {
      f.last = std::max(f.last, at);
      return;
    }
  last_.push_back({pattern, at});
}

template <class Scan>
void StreamPrefilter::add_by(const Database& db, const uint8_t* w, uint32_t old, uint32_t n, uint64_t base,
                             Scan&& scan) {
  uint32_t longest = db.stream_longest();
  uint32_t look = std::min(old, longest ? longest - 1 : 0);
  uint64_t from = base + old - look;  // the stream offset of the first byte scanned
  scan(w + old - look, n - old + look, look, [&](uint32_t id, uint32_t start) { note(id, from + start); });
}

void StreamPrefilter::add(const Database& db, const uint8_t* w, uint32_t old, uint32_t n, uint64_t base) {
  add_by(db, w, old, n, base,
         [&](const uint8_t* s, uint32_t k, uint32_t from, auto&& on) { db.stream_scan(s, k, from, on); });
}

void StreamPrefilter::add(Engine& e, const uint8_t* w, uint32_t old, uint32_t n, uint64_t base) {
  add_by(*e.database(), w, old, n, base,
         [&](const uint8_t* s, uint32_t k, uint32_t from, auto&& on) { e.stream_scan(s, k, from, on); });
}

bool StreamPrefilter::add_found(const Database& db, const k::IdsStreamOut& found, const uint8_t* w, uint32_t old,
                                uint32_t n, uint64_t base) {
  if (found.count > k::kStreamFound) return false;  // (kIdsNotScanned too)
  for (uint32_t i = 0; i < found.count; ++i)
    note(found.ids[i], base + old + found.end[i] - db.stream_pattern_len(found.ids[i]));
  // the seam: occurrences that start before w[old] and end after it
  uint32_t longest = db.stream_longest();
  uint32_t look = std::min(old, longest ? longest - 1 : 0);
  if (!look) return true;
  uint32_t ahead = std::min(n - old, longest - 1);
  uint64_t from = base + old - look;
  db.stream_scan(w + old - look, look + ahead, look, [&](uint32_t id, uint32_t start) {
    if (start < look) note(id, from + start);
  });
  return true;
}

void StreamPrefilter::candidates(const Database& db, uint64_t base, std::vector<uint32_t>& out, uint64_t fresh_from) {
  out.clear();
  // a pattern whose latest occurrence starts before the window has none in it
  std::erase_if(last_, [&](const Found& f) { return f.last < base; });
  for (const Found& f : last_) {
    bool fresh = f.last + db.stream_pattern_len(f.pattern) > fresh_from;
    for (uint32_t r : db.stream_rules_of(f.pattern))
      if (fresh || !db.stream_plain(r)) out.push_back(r);
  }
  out.insert(out.end(), db.stream_always().begin(), db.stream_always().end());
  std::sort(out.begin(), out.end());
}

}  // namespace shoal::ids
