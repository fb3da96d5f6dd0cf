// Snort's semantics for one candidate rule: header, dsize, and every content
// and pcre in order, backtracking over earlier contents' occurrences.
#include "shoal/ids/verify.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace shoal::ids {

bool header_matches(const Rule& r, const PacketInfo& p) {
  bool ports = false;
  switch (r.proto) {
    case Proto::TCP:
      if (p.proto != 6) return false;
      ports = true;
      break;
    case Proto::UDP:
      if (p.proto != 17) return false;
      ports = true;
      break;
    case Proto::ICMP:
      if (p.proto != 1 && p.proto != 58) return false;
      break;
    case Proto::IP: break;
  }
  if (ports && !p.has_ports) return false;
  if (r.has_dsize && (p.plen < r.dsize_lo || p.plen > r.dsize_hi)) return false;
  auto one_way = [&](const Addr& s, uint16_t sp, const Addr& d, uint16_t dp) {
    return r.src.match(s) && r.dst.match(d) && (!ports || (r.sport.match(sp) && r.dport.match(dp)));
  };
  return one_way(p.src, p.sport, p.dst, p.dport) || (r.bidirectional && one_way(p.dst, p.dport, p.src, p.sport));
}

bool payload_matches(const Rule& r, const uint8_t* payload, uint32_t plen) {
  int budget = kBacktrackBudget;
  auto pcre2 = [](size_t) { return -1; };
  return items_from(r, 0, payload, plen, 0, budget, pcre2);
}

}  // namespace shoal::ids
