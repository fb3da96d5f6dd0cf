// The stream rules' prefilter of one direction of a TCP connection, kept
// as the stream goes: each fast pattern found so far with the stream offset
// of its latest occurrence. Each inspection scans only the new bytes (and
// the longest pattern's length less one of the bytes before them, for the
// automaton's state: GASPP §5 carries a DFA state from chunk to chunk; a
// look back gives the same matches without keeping it), instead of the
// whole window again. A pattern occurs within a window that starts at
// offset `base` exactly when its latest occurrence does (occurrences end
// where the scan has been), so the candidates are those of a scan of the
// whole window.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "shoal/ids/engine.hh"

namespace shoal::ids {

class StreamPrefilter {
 public:
  // The window w[0, n) holds the stream from offset base, and w[old, n) is
  // new since the last call (old == 0 after clear()).
  void add(const Database& db, const uint8_t* w, uint32_t old, uint32_t n, uint64_t base);
  // The stream rules whose fast pattern occurs within the window from
  // `base` on, and those without a fast pattern, in the database's order.
  // With `fresh_only`, leaves out the plain rules (Database::stream_plain)
  // whose pattern the last add() did not find: they cannot match anew.
  void candidates(const Database& db, uint64_t base, std::vector<uint32_t>& out, bool fresh_only = false);
  // A hole: what was found before it no longer counts.
  void clear() { last_.clear(); }
  size_t patterns() const { return last_.size(); }

 private:
  struct Found {
    uint32_t pattern;
    bool fresh;     // found by the last add()
    uint64_t last;  // the stream offset of its latest occurrence
  };
  std::vector<Found> last_;
};

}  // namespace shoal::ids
