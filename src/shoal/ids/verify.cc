// Snort's semantics for one candidate rule: header, dsize, and every content
// and pcre in order, backtracking over earlier contents' occurrences.
#include "shoal/ids/verify.hh"

#include "shoal/ids/hostbits.hh"
#include "shoal/kernels/checksum.hh"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <map>

namespace shoal::ids {

void apply_flowbits(const Rule& r, const PacketInfo& p) {
  if (p.hostbits && !r.hostbits.empty()) p.hostbits->apply(r, p, p.ts_ns);
  if (!p.flowbits) return;
  for (const Flowbit& fb : r.flowbits) {
    if (fb.check()) continue;
    for (uint16_t b : fb.bits) {  // set a&b sets both
      uint64_t m = uint64_t(1) << (b & 63);
      uint64_t& w = p.flowbits[b >> 6];
      w = fb.cmd == Flowbit::Set ? (w | m) : fb.cmd == Flowbit::Unset ? (w & ~m) : (w ^ m);
    }
  }
}

// A packet's checksum of `kind`: 1 valid, 0 invalid, -1 not this kind of
// packet (or not all of it there: a fragment, a packet cut short).
int checksum_valid(Rule::Csum::Kind kind, const PacketInfo& p) {
  if (!p.l3 || p.no_l3) return -1;
  const bool v6 = p.src.v6;
  if (kind == Rule::Csum::Ipv4) {
    if (v6 || p.l3len < 20) return -1;
    return k::ip_checksum(p.l3, p.l3len) == 0;
  }
  const uint8_t want = kind == Rule::Csum::Tcpv4 || kind == Rule::Csum::Tcpv6   ? 6
                       : kind == Rule::Csum::Udpv4 || kind == Rule::Csum::Udpv6 ? 17
                       : kind == Rule::Csum::Icmpv4                             ? 1
                                                                                : 58;
  const bool want_v6 = kind == Rule::Csum::Tcpv6 || kind == Rule::Csum::Udpv6 || kind == Rule::Csum::Icmpv6;
  if (p.proto != want || v6 != want_v6 || !p.l4 || !p.payload || p.payload < p.l4) return -1;
  if (!v6 && (p.ip_flags & 1 || (k::load_be16(p.l3 + 6) & 0x1fff))) return -1;  // a fragment: not the datagram
  const auto len = uint32_t(p.payload + p.plen - p.l4);
  if (len < 8) return -1;
  if (want == 17 && !v6 && k::load_be16(p.l4 + 6) == 0) return 1;  // (UDP over IPv4 without a checksum)
  uint32_t sum = want == 1 ? 0
                 : v6      ? k::ipv6_pseudo_sum(p.l3 + 8, p.l3 + 24, want, len)
                           : k::ipv4_pseudo_sum(p.l3 + 12, p.l3 + 16, want, len);
  return k::csum_fold(k::csum_partial(p.l4, len, sum)) == 0;
}

bool flowints_hold(const Rule& r, const PacketInfo& p) {
  if (r.flowints.empty()) return true;
  if (!p.flowints) return false;
  FlowInts& f = *p.flowints;
  for (const Flowint& fi : r.flowints) {
    const bool is = f.set >> fi.var & 1;
    if (fi.op == Flowint::IsSet || fi.op == Flowint::NotSet) {
      if (is != (fi.op == Flowint::IsSet)) return false;
      continue;
    }
    uint32_t value = fi.value;
    if (!fi.value_name.empty()) {  // another flowint's value: none, no match
      if (!(f.set >> fi.value_var & 1)) return false;
      value = f.v[fi.value_var];
    }
    if (fi.modifies()) {  // (+ and - on a flowint not set start from the value, as Suricata's)
      f.v[fi.var] = !is || fi.op == Flowint::Set ? value
                    : fi.op == Flowint::Add      ? f.v[fi.var] + value
                                                 : f.v[fi.var] - value;
      f.set |= uint32_t(1) << fi.var;
      continue;
    }
    if (!is) return false;
    const uint32_t x = f.v[fi.var];
    bool ok = fi.op == Flowint::Lt   ? x < value
              : fi.op == Flowint::Gt ? x > value
              : fi.op == Flowint::Le ? x <= value
              : fi.op == Flowint::Ge ? x >= value
              : fi.op == Flowint::Eq ? x == value
                                     : x != value;
    if (!ok) return false;
  }
  return true;
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
    case Proto::ICMP4:
      if (p.proto != 1) return false;
      break;
    case Proto::ICMP6:
      if (p.proto != 58) return false;
      break;
    case Proto::IP4:
      if (p.src.v6) return false;
      break;
    case Proto::IP6:
      if (!p.src.v6) return false;
      break;
    case Proto::SCTP:
      if (p.proto != 132) return false;
      ports = true;
      break;
    case Proto::IP: ports = (r.app == kAppDns || r.app == kAppSip) && p.has_ports; break;  // over TCP or UDP
  }
  if (ports && !p.has_ports) return false;
  if (r.app && p.app != r.app) return false;
  // app-layer-protocol: no match, negated or not, while detection goes on (Suricata)
  if (r.has_app_cond && !p.app_known) return false;
  if ((p.events & r.decode_events) != r.decode_events) return false;
  if ((p.stream_events & r.stream_events) != r.stream_events) return false;
  for (const Rule::AppCond& c : r.app_conds)
    if ((p.app == c.app) == c.neg) return false;
  if (r.ip_only && !p.first_in_dir) return false;
  for (const FieldCond& c : r.fields) {
    uint64_t v;
    bool icmp = (p.proto == 1 || p.proto == 58) && p.l4;
    switch (c.field) {
      case FieldCond::IcmpType:
      case FieldCond::IcmpCode:
        if (!icmp) return false;
        v = p.l4[c.field == FieldCond::IcmpType ? 0 : 1];
        break;
      case FieldCond::IcmpId:
      case FieldCond::IcmpSeq: {
        if (!icmp) return false;
        uint8_t t = p.l4[0];  // echo and echo reply (v4: 8, 0; v6: 128, 129)
        if (!(p.proto == 1 ? (t == 8 || t == 0) : (t == 128 || t == 129))) return false;
        const uint8_t* q = p.l4 + (c.field == FieldCond::IcmpId ? 4 : 6);
        v = uint64_t(q[0] << 8 | q[1]);
        break;
      }
      case FieldCond::Ttl: v = p.ttl; break;
      case FieldCond::IpProto: v = p.proto; break;
      case FieldCond::IpId:
        if (p.src.v6) return false;
        v = p.ip_id;
        break;
      case FieldCond::TcpSeq:
      case FieldCond::TcpAck: {
        if (p.proto != 6 || !p.l4) return false;
        const uint8_t* q = p.l4 + (c.field == FieldCond::TcpSeq ? 4 : 8);
        v = uint64_t(q[0]) << 24 | uint64_t(q[1]) << 16 | uint64_t(q[2]) << 8 | q[3];
        break;
      }
      case FieldCond::TcpMss: {  // the option, as Suricata parses TCP options: no option, no match
        if (p.proto != 6 || !p.l4 || p.l4len < 20) return false;
        bool found = false;
        for (uint32_t i = 20; i < p.l4len && !found;) {
          uint8_t kind = p.l4[i];
          if (kind == 0) break;
          if (kind == 1) {
            ++i;
            continue;
          }
          if (i + 1 >= p.l4len || p.l4[i + 1] < 2 || i + p.l4[i + 1] > p.l4len) break;
          if (kind == 2 && p.l4[i + 1] == 4) v = uint64_t(p.l4[i + 2] << 8 | p.l4[i + 3]), found = true;
          i += p.l4[i + 1];
        }
        if (!found) return false;
        break;
      }
      case FieldCond::VlanLayers: v = p.vlan_layers; break;
      case FieldCond::VlanId: {  // (no tag: no match)
        if (!p.vlan_layers) return false;
        auto holds = [&](uint16_t id) { return (id < c.lo || id > c.hi) == c.neg; };
        const int n = p.vlan_layers;
        bool ok;
        if (c.layer == FieldCond::kAnyLayer || c.layer == FieldCond::kAllLayers) {
          ok = c.layer == FieldCond::kAllLayers;
          for (int i = 0; i < n; ++i)
            if (holds(p.vlan[i]) != ok) {
              ok = !ok;
              break;
            }
        } else {
          int at = c.layer < 0 ? n + c.layer : c.layer;
          ok = at >= 0 && at < n && holds(p.vlan[at]);
        }
        if (!ok) return false;
        continue;
      }
      case FieldCond::Icmpv6Mtu:  // Packet Too Big (type 2): the MTU after the checksum
        if (p.proto != 58 || !p.l4 || p.l4len < 8 || p.l4[0] != 2) return false;
        v = uint64_t(p.l4[4]) << 24 | uint64_t(p.l4[5]) << 16 | uint64_t(p.l4[6]) << 8 | p.l4[7];
        break;
      default: return false;
    }
    if ((v < c.lo || v > c.hi) != c.neg) return false;
  }
  for (const Rule::Csum& c : r.csums) {
    int ok = checksum_valid(c.kind, p);
    if (ok < 0 || (ok == 1) != c.valid) return false;
  }
  if (r.has_flags) {
    if (p.proto != 6 || !p.l4) return false;
    uint8_t f = p.l4[13] & uint8_t(~r.flags.mask), w = r.flags.want & uint8_t(~r.flags.mask);
    bool ok = r.flags.mod == '+'   ? (f & w) == w
              : r.flags.mod == '*' ? (f & w) != 0
              : r.flags.mod == '!' ? (f & w) == 0
                                   : f == w;
    if (!ok) return false;
  }
  if (r.ipopts && !(p.ip_opts & r.ipopts)) return false;
  if (r.stream_size.side) {
    if (!p.has_stream) return false;
    auto holds = [&](uint32_t v) {
      uint32_t n = r.stream_size.value;
      switch (r.stream_size.op) {
        case '<': return v < n;
        case '>': return v > n;
        case '=': return v == n;
        case '!': return v != n;
        case 'l': return v <= n;
        default: return v >= n;
      }
    };
    bool c = holds(p.stream_size[0]), s = holds(p.stream_size[1]);
    uint8_t side = r.stream_size.side;
    if (!(side == 1 ? c : side == 2 ? s : side == 3 ? c && s : c || s)) return false;
  }
  if (r.has_fragbits) {
    if (p.src.v6) return false;
    uint8_t f = p.ip_flags, w = r.fragbits.want;
    bool ok = r.fragbits.mod == '+'   ? (f & w) == w
              : r.fragbits.mod == '*' ? (f & w) != 0
              : r.fragbits.mod == '!' ? (f & w) == 0
                                      : f == w;
    if (!ok) return false;
  }
  // (dsize:!N wants a payload: an empty one is not "not N", as Suricata's)
  if (r.has_dsize && (((p.plen < r.dsize_lo || p.plen > r.dsize_hi) != r.dsize_neg) || (r.dsize_neg && !p.plen)))
    return false;
  if (r.flow & ~kFlowStateless) {
    // Suricata's flow option: no flow, no match (except not_established)
    if ((r.flow & kFlowEstablished) && !(p.has_flow && p.established)) return false;
    if ((r.flow & kFlowNotEstablished) && p.has_flow && p.established) return false;
    if ((r.flow & kFlowToServer) && !(p.has_flow && p.dir == 0)) return false;
    if ((r.flow & kFlowToClient) && !(p.has_flow && p.dir == 1)) return false;
  }
  if (!r.hostbits.empty() && !(p.hostbits ? p.hostbits->check(r, p, p.ts_ns)
                                          : std::none_of(r.hostbits.begin(), r.hostbits.end(),
                                                         [](const Hostbit& h) { return h.cmd == Hostbit::IsSet; })))
    return false;
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
  // (a transactional rule's addresses are the flow's: a response packet is read the other way)
  if (r.transactional && p.has_flow && p.dir == 1) return one_way(p.dst, p.dport, p.src, p.sport);
  return one_way(p.src, p.sport, p.dst, p.dport) || (r.bidirectional && one_way(p.dst, p.dport, p.src, p.sport));
}

bool payload_matches(const Rule& r, const uint8_t* payload, uint32_t plen) {
  int budget = kBacktrackBudget;
  auto pcre2 = [](size_t) { return -1; };
  if (r.header_bufs) return false;  // (no headers to read)
  return items_from(r, 0, payload, plen, 0, budget, pcre2);
}

}  // namespace shoal::ids

namespace shoal::ids {

Buf side_buf(const Rule& r, Buf b) {
  if (b == Buf::HttpResponseBody && (r.flow & kFlowToServer)) return Buf::HttpRequestBody;
  return b;
}

bool tx_needs(const Rule& r, const TxBuffers& tx) {
  if (r.has_urilen && !tx.has(r.urilen_raw ? Buf::HttpUriRaw : Buf::HttpUri)) return false;
  for (const Item& it : r.items)
    if (!packet_buf(it.buf) && !tx.has(side_buf(r, it.buf))) return false;  // (absent too: once it is known)
  return true;
}

void rule_captures(const Rule& r, const TxBuffers* tx, const PacketInfo& p, std::vector<Captured>& out) {
  auto pcre2 = [](size_t) { return -1; };
  static const uint8_t kEmpty = 0;
  std::string transformed;
  for (size_t k0 = 0; k0 < r.items.size(); ++k0) {
    if (k0 > 0 && r.items[k0].buf == r.items[k0 - 1].buf && !r.items[k0].run_start) continue;  // inside a run
    size_t k1 = k0 + 1;                                                                        // the run's end
    while (k1 < r.items.size() && r.items[k1].buf == r.items[k0].buf && !r.items[k1].run_start) ++k1;
    bool capturing = false;
    for (size_t k = k0; k < k1; ++k) capturing |= r.items[k].is_pcre && !r.items[k].pcre.captures.empty();
    if (!capturing) continue;
    auto run = [&](std::string_view v) {
      if (r.items[k0].xform >= 0) {
        transformed = apply_transforms(r.xforms[size_t(r.items[k0].xform)], v);
        v = transformed;
      }
      const uint8_t* s = v.data() ? reinterpret_cast<const uint8_t*>(v.data()) : &kEmpty;
      int budget = kBacktrackBudget;
      return items_from(r, k0, s, uint32_t(v.size()), 0, budget, pcre2, k0);
    };
    Buf b = r.items[k0].buf;
    bool ok = false;
    if (b == Buf::Packet) {
      ok = run({reinterpret_cast<const char*>(p.payload), p.plen});
    } else if (packet_buf(b)) {
      std::string_view h;
      ok = header_buffer(p, b, h) && run(h);
    } else if (tx) {
      b = side_buf(r, b);
      if (const std::vector<std::string>* many = tx->many[size_t(b)]) {
        for (const std::string& v : *many)
          if ((ok = run(v))) break;
      } else if (tx->has(b) && !tx->absent(b)) {
        ok = run(tx->b[size_t(b)]);
      }
    }
    if (!ok) continue;
    // (the DFS ends at the match: each pcre's last match is the one on it)
    for (size_t k = k0; k < k1; ++k) {
      if (!r.items[k].is_pcre || r.items[k].pcre.captures.empty()) continue;
      const std::vector<std::string>* g = pcre_last_groups(r.items[k].pcre);
      for (const PcreCapture& c : r.items[k].pcre.captures)
        if (g && c.group >= 1 && c.group <= g->size()) out.push_back({c.scope, c.name, (*g)[c.group - 1u]});
    }
  }
}

bool tx_payload_matches(const Rule& r, const PacketInfo& p) {
  auto pcre2 = [](size_t) { return -1; };
  static const uint8_t kEmpty = 0;
  bool any = false;
  for (size_t k = 0; k < r.items.size(); ++k) {
    if (r.items[k].buf != Buf::Packet || (k > 0 && r.items[k - 1].buf == Buf::Packet && !r.items[k].run_start))
      continue;  // (not a payload run's first item)
    int budget = kBacktrackBudget;
    if (!items_from(r, k, p.payload ? p.payload : &kEmpty, p.plen, 0, budget, pcre2, k)) return false;
    any = true;
  }
  return any;
}

bool tx_matches(const Rule& r, const TxBuffers& tx, const PacketInfo& p, bool stream_done) {
  if (!tx_needs(r, tx) || !header_matches(r, p)) return false;
  if ((tx.events & r.app_events) != r.app_events) return false;
  if (r.has_urilen) {
    size_t n = tx.b[size_t(r.urilen_raw ? Buf::HttpUriRaw : Buf::HttpUri)].size();
    if (n < r.urilen_lo || n > r.urilen_hi) return false;
  }
  // the transaction's numbers: one of a field's values in range
  for (const FieldCond& c : r.tx_fields) {
    bool any = false;
    for (uint64_t v : tx.nums[c.field - FieldCond::kTxFirst])
      any |= c.mask() ? (v & c.lo) != 0 || (c.hi && (v & c.hi) == 0)  // an item asked for, or not a negated one
                      : (v < c.lo || v > c.hi) == c.neg;
    if (!any) return false;
  }
  // file digests: a whole file's digest in (or not in) each list
  for (const FileHashCond& c : r.file_hashes) {
    bool any = false;
    for (const TxBuffers::FileDigests& f : tx.files) {
      std::string_view h = c.algo == kFileMd5 ? f.md5 : c.algo == kFileSha1 ? f.sha1 : f.sha256;
      if (!h.empty() && c.set) any |= (c.set->count(std::string(h)) != 0) != c.neg;
    }
    if (!any) return false;
  }
  auto pcre2 = [](size_t) { return -1; };
  static const uint8_t kEmpty = 0;
  std::string transformed;
  auto run = [&](size_t k, std::string_view v) {
    if (r.items[k].xform >= 0) {  // the buffer through the run's transforms
      transformed = apply_transforms(r.xforms[size_t(r.items[k].xform)], v);
      v = transformed;
    }
    const uint8_t* s = v.data() ? reinterpret_cast<const uint8_t*>(v.data()) : &kEmpty;
    int budget = kBacktrackBudget;
    return items_from(r, k, s, uint32_t(v.size()), 0, budget, pcre2, k);
  };
  for (size_t k = 0; k < r.items.size(); ++k) {
    if (k > 0 && r.items[k].buf == r.items[k - 1].buf && !r.items[k].run_start) continue;  // inside a run
    Buf b = r.items[k].buf;
    if (b == Buf::Packet) {
      if (!stream_done && !run(k, {reinterpret_cast<const char*>(p.payload), p.plen})) return false;
      continue;
    }
    if (packet_buf(b)) {
      std::string_view h;
      if (!header_buffer(p, b, h) || !run(k, h)) return false;
      continue;
    }
    b = side_buf(r, b);
    // no body, no value of a multi-buffer: no buffer (Suricata inspects none:
    // even a negated content fails; a header present but empty is a buffer
    // of length 0); absent: nothing there; or_else: or the rest of the run holds
    const std::vector<std::string>* mb = tx.many[size_t(b)];
    bool body = b == Buf::HttpRequestBody || b == Buf::HttpResponseBody;
    bool none = tx.absent(b) || (mb ? mb->empty() : body && tx.b[size_t(b)].empty());
    if (r.items[k].byte.kind == ByteOp::Absent) {
      if (none) continue;
      if (!r.items[k].byte.neg) return false;
    } else if (none) {
      return false;
    }
    if (const std::vector<std::string>* many = tx.many[size_t(b)]) {
      // a multi-buffer: the run holds in one of its values
      if (std::none_of(many->begin(), many->end(), [&](const std::string& v) { return run(k, v); })) return false;
      continue;
    }
    if (!run(k, tx.b[size_t(b)])) return false;
  }
  return true;
}

}  // namespace shoal::ids
