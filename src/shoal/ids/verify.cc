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
  if (r.app && p.app != r.app) return false;
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

namespace shoal::ids {

namespace {
// The buffer a tx rule's item reads: file.data on a rule for the client's
// side is the request body.
Buf side_buf(const Rule& r, Buf b) {
  if (b == Buf::HttpResponseBody && (r.flow & kFlowToServer)) return Buf::HttpRequestBody;
  return b;
}
}  // namespace

bool tx_needs(const Rule& r, const TxBuffers& tx) {
  if (r.has_urilen && !tx.has(r.urilen_raw ? Buf::HttpUriRaw : Buf::HttpUri)) return false;
  for (const Item& it : r.items)
    if (it.buf != Buf::Packet && !tx.has(side_buf(r, it.buf))) return false;
  return true;
}

bool tx_matches(const Rule& r, const TxBuffers& tx, const PacketInfo& p) {
  if (!tx_needs(r, tx) || !header_matches(r, p)) return false;
  if (r.has_urilen) {
    size_t n = tx.b[size_t(r.urilen_raw ? Buf::HttpUriRaw : Buf::HttpUri)].size();
    if (n < r.urilen_lo || n > r.urilen_hi) return false;
  }
  auto pcre2 = [](size_t) { return -1; };
  for (size_t k = 0; k < r.items.size(); ++k) {
    if (k > 0 && r.items[k].buf == r.items[k - 1].buf) continue;  // inside a run
    const uint8_t* s;
    uint32_t n;
    if (r.items[k].buf == Buf::Packet) {
      s = p.payload;
      n = p.plen;
    } else {
      std::string_view v = tx.b[size_t(side_buf(r, r.items[k].buf))];
      s = reinterpret_cast<const uint8_t*>(v.data());
      n = uint32_t(v.size());
    }
    static const uint8_t kEmpty = 0;
    if (!s) s = &kEmpty;
    int budget = kBacktrackBudget;
    if (!items_from(r, k, s, n, 0, budget, pcre2)) return false;
  }
  return true;
}

}  // namespace shoal::ids
