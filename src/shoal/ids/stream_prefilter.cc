#include "shoal/ids/stream_prefilter.hh"

#include <algorithm>

namespace shoal::ids {

void StreamPrefilter::add(const Database& db, const uint8_t* w, uint32_t old, uint32_t n, uint64_t base) {
  uint32_t longest = db.stream_longest();
  uint32_t look = std::min(old, longest ? longest - 1 : 0);
  uint64_t from = base + old - look;  // the stream offset of the first byte scanned
  for (Found& f : last_) f.fresh = false;
  db.stream_scan(w + old - look, n - old + look, look, [&](uint32_t id, uint32_t start) {
    uint64_t at = from + start;
    for (Found& f : last_)
      if (f.pattern == id) {
        f.last = std::max(f.last, at), f.fresh = true;
        return;
      }
    last_.push_back({id, true, at});
  });
}

void StreamPrefilter::candidates(const Database& db, uint64_t base, std::vector<uint32_t>& out, bool fresh_only) {
  out.clear();
  // a pattern whose latest occurrence starts before the window has none in it
  std::erase_if(last_, [&](const Found& f) { return f.last < base; });
  for (const Found& f : last_)
    for (uint32_t r : db.stream_rules_of(f.pattern))
      if (f.fresh || !fresh_only || !db.stream_plain(r)) out.push_back(r);
  out.insert(out.end(), db.stream_always().begin(), db.stream_always().end());
  std::sort(out.begin(), out.end());
}

}  // namespace shoal::ids
