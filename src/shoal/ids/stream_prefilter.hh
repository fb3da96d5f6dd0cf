// The stream rules' prefilter of one direction of a TCP connection, kept
// as the stream goes: each fast pattern found so far with the stream offset
// of its latest occurrence. Each piece of the stream is scanned once as it
// arrives (with the longest pattern's length less one of the bytes before
// it, for the automaton's state: GASPP §5 carries a DFA state from chunk to
// chunk; a look back gives the same matches without keeping it), instead
// of the whole window at each inspection. A pattern occurs within a window
// that starts at offset `base` exactly when its latest occurrence does
// (occurrences end where the scan has been), so the candidates are those of
// a scan of the whole window.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "shoal/ids/engine.hh"
#include "shoal/kernels/ids_scan.hh"

namespace shoal::ids {

class StreamPrefilter {
 public:
  // The window w[0, n) holds the stream from offset base, and w[old, n) is
  // new since the last call (old == 0 after clear()).
  void add(const Database& db, const uint8_t* w, uint32_t old, uint32_t n, uint64_t base);
  // The same, scanned by an engine over the database (Engine::stream_scan:
  // Hyperscan where the database has it).
  void add(Engine& e, const uint8_t* w, uint32_t old, uint32_t n, uint64_t base);
  // The same with w[old, n) scanned elsewhere (the device's
  // k::ids_stream_scan, ends counted from w[old]): only the seam is scanned
  // here, for the occurrences that start before w[old]. False, with nothing
  // done, when the scan did not run or its list overflowed (call add()).
  bool add_found(const Database& db, const k::IdsStreamOut& found, const uint8_t* w, uint32_t old, uint32_t n,
                 uint64_t base);
  // The stream rules whose fast pattern occurs within the window from
  // `base` on, and those without a fast pattern, in the database's order.
  // Leaves out the plain rules (Database::stream_plain) whose pattern has
  // no occurrence ending past stream offset `fresh_from` (the end of the
  // last inspection): they cannot match anew.
  void candidates(const Database& db, uint64_t base, std::vector<uint32_t>& out, uint64_t fresh_from = 0);
  // A hole: what was found before it no longer counts.
  void clear() { last_.clear(); }
  size_t patterns() const { return last_.size(); }

 private:
  void note(uint32_t pattern, uint64_t at);
  template <class Scan>
  void add_by(const Database& db, const uint8_t* w, uint32_t old, uint32_t n, uint64_t base, Scan&& scan);
  struct Found {
    uint32_t pattern;
    uint64_t last;  // the stream offset of its latest occurrence
  };
  std::vector<Found> last_;
};

}  // namespace shoal::ids
