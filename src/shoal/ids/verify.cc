// Snort's semantics for one candidate rule: header, dsize, and every content
// and pcre in order, backtracking over earlier contents' occurrences.
#include "shoal/ids/verify.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace shoal::ids {

void apply_flowbits(const Rule& r, const PacketInfo& p) {
  if (!p.flowbits) return;
  for (const Flowbit& fb : r.flowbits) {
    if (fb.check()) continue;
    uint16_t b = fb.bits[0];
    uint64_t m = uint64_t(1) << (b & 63);
    uint64_t& w = p.flowbits[b >> 6];
    w = fb.cmd == Flowbit::Set ? (w | m) : fb.cmd == Flowbit::Unset ? (w & ~m) : (w ^ m);
  }
}

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
  if (r.has_dsize && ((p.plen < r.dsize_lo || p.plen > r.dsize_hi) != r.dsize_neg)) return false;
  if (r.flow & ~kFlowStateless) {
    // Suricata's flow option: no flow, no match (except not_established)
    if ((r.flow & kFlowEstablished) && !(p.has_flow && p.established)) return false;
    if ((r.flow & kFlowNotEstablished) && p.has_flow && p.established) return false;
    if ((r.flow & kFlowToServer) && !(p.has_flow && p.dir == 0)) return false;
    if ((r.flow & kFlowToClient) && !(p.has_flow && p.dir == 1)) return false;
  }
  for (const Flowbit& fb : r.flowbits) {
    if (!fb.check()) continue;
    size_t set = 0;
    for (uint16_t b : fb.bits) set += p.flowbits && (p.flowbits[b >> 6] >> (b & 63) & 1);
    bool want = fb.cmd == Flowbit::IsSet;
    // isset a&b: all set; isset a|b: any set; isnotset a&b: none set; isnotset a|b: some not set
    bool ok = want ? (fb.any ? set > 0 : set == fb.bits.size()) : (fb.any ? set < fb.bits.size() : set == 0);
    if (!ok) return false;
  }
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
