#include "shoal/ids/decode_events.hh"

#include <iterator>

namespace shoal::ids {

namespace {

constexpr const char* kNames[] = {
    "ipv4.pkt_too_small",
    "ipv4.hlen_too_small",
    "ipv4.iplen_smaller_than_hlen",
    "ipv4.trunc_pkt",
    "ipv4.opt_invalid",
    "ipv4.opt_invalid_len",
    "ipv4.opt_malformed",
    "ipv4.opt_pad_required",
    "ipv4.opt_eol_required",
    "ipv4.opt_duplicate",
    "ipv4.icmpv6",
    "ipv4.frag_pkt_too_large",
    "ipv4.frag_overlap",
    "ipv6.pkt_too_small",
    "ipv6.trunc_pkt",
    "ipv6.trunc_exthdr",
    "ipv6.exthdr_dupl_fh",
    "ipv6.exthdr_useless_fh",
    "ipv6.exthdr_dupl_rh",
    "ipv6.exthdr_dupl_hh",
    "ipv6.exthdr_dupl_dh",
    "ipv6.exthdr_dupl_ah",
    "ipv6.exthdr_invalid_optlen",
    "ipv6.rh_type_0",
    "ipv6.zero_len_padn",
    "ipv6.exthdr_ah_res_not_null",
    "ipv6.fh_non_zero_reserved_field",
    "ipv6.data_after_none_header",
    "ipv6.unknown_next_header",
    "ipv6.icmpv4",
    "ipv6.hopopts_unknown_opt",
    "ipv6.hopopts_only_padding",
    "ipv6.dstopts_unknown_opt",
    "ipv6.dstopts_only_padding",
    "ipv6.frag_pkt_too_large",
    "ipv6.frag_overlap",
    "ipv6.frag_invalid_length",
    "ipv6.ipv4_in_ipv6_too_small",
    "ipv6.ipv4_in_ipv6_wrong_version",
    "ipv6.ipv6_in_ipv6_too_small",
    "ipv6.ipv6_in_ipv6_wrong_version",
    "tcp.pkt_too_small",
    "tcp.hlen_too_small",
    "tcp.invalid_optlen",
    "tcp.opt_invalid_len",
    "tcp.opt_duplicate",
    "udp.pkt_too_small",
    "udp.hlen_too_small",
    "udp.hlen_invalid",
    "udp.len_invalid",
    "icmpv4.pkt_too_small",
    "icmpv6.pkt_too_small",
};
static_assert(std::size(kNames) == kDecodeEventCount, "a name per event");

uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }

struct Events {
  uint64_t bits = 0;
  uint8_t* counts = nullptr;  // (when asked for) each event's occurrences
  void set(DecodeEvent e) {
    bits |= event_bit(e);
    if (counts && counts[e] < 255) ++counts[e];
  }
};

// TCP: the header's lengths, then its options (RFC 793, 7323, 2018, 7413,
// 2385, 5925 lengths), each known one at most once.
void tcp(const uint8_t* t, uint32_t len, Events& ev) {
  if (len < 20) return ev.set(kTcpPktTooSmall);
  uint32_t hlen = uint32_t(t[12] >> 4) * 4;
  if (len < hlen) return ev.set(kTcpHlenTooSmall);
  if (hlen < 20) return ev.set(kTcpInvalidOptlen);  // (no room for the fixed header)
  const uint8_t* o = t + 20;
  uint32_t n = hlen - 20;
  enum { Ws, Mss, SackOk, Ts, Sack, Tfo, Known };
  bool seen[Known] = {};
  auto once = [&](int k) {
    if (seen[k]) ev.set(kTcpOptDuplicate);
    seen[k] = true;
  };
  while (n) {
    uint8_t type = o[0];
    if (type == 0) break;  // end of options
    if (type == 1) {       // no-operation
      ++o, --n;
      continue;
    }
    if (n < 2) break;
    uint8_t olen = o[1];
    if (olen > n || olen < 2) return ev.set(kTcpOptInvalidLen);
    switch (type) {
      case 3: olen == 3 ? once(Ws) : ev.set(kTcpOptInvalidLen); break;
      case 2: olen == 4 ? once(Mss) : ev.set(kTcpOptInvalidLen); break;
      case 4: olen == 2 ? once(SackOk) : ev.set(kTcpOptInvalidLen); break;
      case 8: olen == 10 ? once(Ts) : ev.set(kTcpOptInvalidLen); break;
      case 5:
        (olen == 2 || (olen >= 10 && olen <= 34 && (olen - 2) % 8 == 0)) ? once(Sack) : ev.set(kTcpOptInvalidLen);
        break;
      case 34:
        (olen == 2 || (olen >= 6 && olen <= 18 && (olen - 2) % 2 == 0)) ? once(Tfo) : ev.set(kTcpOptInvalidLen);
        break;
      case 253:
      case 254:  // experimental: TFO's before its number (magic 0xf989)
        if (olen == 4 || olen == 12) {
          if (be16(o + 2) == 0xf989) once(Tfo);
        } else {
          ev.set(kTcpOptInvalidLen);
        }
        break;
      case 19:
        if (olen != 18) ev.set(kTcpOptInvalidLen);  // MD5 signature
        break;
      case 29:
        if (olen < 4) ev.set(kTcpOptInvalidLen);  // authentication option
        break;
    }
    o += olen, n -= olen;
  }
}

void udp(const uint8_t* u, uint32_t len, Events& ev) {
  if (len < 8) return ev.set(kUdpHlenTooSmall);
  uint32_t ulen = be16(u + 4);
  if (len < ulen) return ev.set(kUdpPktTooSmall);
  if (ulen < 8) return ev.set(kUdpLenInvalid);
  if (len != ulen) ev.set(kUdpHlenInvalid);
}

// The transport after the network layer (l4: the protocol number).
void transport(uint8_t l4, const uint8_t* p, uint32_t len, Events& ev) {
  switch (l4) {
    case 6: tcp(p, len, ev); break;
    case 17: udp(p, len, ev); break;
    case 1:
      if (len < 8) ev.set(kIcmpv4PktTooSmall);
      break;
    case 58:
      if (len < 8) ev.set(kIcmpv6PktTooSmall);
      break;
  }
}

// IPv4 options (RFC 791 and the ones Suricata validates): lengths,
// pointers, duplicates. As Suricata's decoder: an option whose length
// overruns the rest ends the walk; a kind seen (valid) before is a
// duplicate, not validated; one that fails its own checks raises its event
// and the walk goes on past it (so an event may come more than once).
void ipv4_options(const uint8_t* o, uint32_t n, Events& ev) {
  if (n % 8) ev.set(kIpv4OptPadRequired);  // (Suricata's rule: padded to 8 bytes)
  uint32_t seen = 0;                       // a bit per validated option kind
  while (n) {
    uint8_t type = o[0];
    if (type == 0) break;  // end of list
    if (type == 1) {       // no-operation
      ++o, --n;
      continue;
    }
    if (n < 2) return ev.set(kIpv4OptEolRequired);
    uint8_t olen = o[1];
    if (olen > n || olen < 2) return ev.set(kIpv4OptInvalidLen);
    const uint8_t* d = o + 2;       // the option's data (olen - 2 bytes)
    int kind = type == 7     ? 0    // record route
               : type == 131 ? 1    // loose source route
               : type == 137 ? 2    // strict source route
               : type == 68  ? 3    // timestamp
               : type == 25  ? 4    // quick-start
               : type == 130 ? 5    // security
               : type == 136 ? 6    // stream id
               : type == 148 ? 7    // router alert
               : type == 134 ? 8    // CIPSO
                             : -1;  // an option Suricata does not know: it goes on
    if (kind < 0) {
      ev.set(kIpv4OptInvalid);
    } else if (seen >> kind & 1) {
      ev.set(kIpv4OptDuplicate);  // (the duplicate is not validated)
    } else {
      DecodeEvent bad = kDecodeEventCount;  // (none)
      switch (kind) {
        case 0:
        case 1:
        case 2: {
          if (olen < 3) {
            bad = kIpv4OptInvalidLen;
            break;
          }
          uint8_t ptr = d[0];
          if (ptr < 4 || ptr % 4 || ptr > olen + 1) bad = kIpv4OptMalformed;
          break;
        }
        case 3: {
          if (olen < 5) {
            bad = kIpv4OptInvalidLen;
            break;
          }
          uint8_t ptr = d[0];
          uint8_t flag = n > 5 ? d[3] : 0;  // (the byte Suricata reads as the flag)
          uint32_t rec = flag == 1 || flag == 3 ? 8 : 4;
          if (ptr < 5 || (ptr - 5) % rec || ptr > olen + 1) bad = kIpv4OptMalformed;
          break;
        }
        case 4:
          if (olen < 8) bad = kIpv4OptInvalidLen;
          break;
        case 5:
          if (olen != 11) bad = kIpv4OptInvalidLen;
          break;
        case 6:
        case 7:
          if (olen != 4) bad = kIpv4OptInvalidLen;
          break;
        case 8: {  // CIPSO: its tags
          if (olen < 10) {
            bad = kIpv4OptInvalidLen;
            break;
          }
          const uint8_t* tag = d + 4;
          uint32_t left = olen - 6u;
          while (left) {
            uint8_t ttype = left < 2 ? 0 : tag[0], tlen = left < 2 ? 0 : tag[1];
            if (left < 2 || tlen > left || !(ttype == 1 || ttype == 2 || ttype == 5 || ttype == 6 || ttype == 7) ||
                tlen < 4 || (ttype != 7 && tag[2] != 0)) {
              bad = kIpv4OptMalformed;
              break;
            }
            tag += tlen, left -= tlen;
          }
          break;
        }
        default: break;
      }
      if (bad != kDecodeEventCount)
        ev.set(bad);  // (not recorded: a later one of its kind is validated in turn)
      else
        seen |= 1u << kind;
    }
    o += olen, n -= olen;
  }
}

void ipv4(const uint8_t* ip, uint32_t len, Events& ev) {
  if (len < 20) return ev.set(kIpv4PktTooSmall);
  uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
  if (hl < 20) return ev.set(kIpv4HlenTooSmall);
  uint32_t total = be16(ip + 2);
  if (total < hl) return ev.set(kIpv4IplenSmallerThanHlen);
  if (len < total) return ev.set(kIpv4TruncPkt);
  if (hl > 20) ipv4_options(ip + 20, hl - 20, ev);
  uint32_t frag = be16(ip + 6);
  uint32_t offset = (frag & 0x1fff) * 8;
  if (offset || (frag & 0x2000)) {  // a fragment: its transport is read once reassembled
    if (offset + (total - hl) > 65535) ev.set(kIpv4FragPktTooLarge);
    return;
  }
  if (ip[9] == 58) return ev.set(kIpv4Icmpv6);
  transport(ip[9], ip + hl, total - hl, ev);
}

void ipv6(const uint8_t* ip, uint32_t len, Events& ev);

// IPv6's extension headers after the fixed header (RFC 8200), each kind at
// most once (destination options twice), then the transport.
void ipv6_ext(uint8_t nh, const uint8_t* p, uint32_t plen, Events& ev) {
  bool hh = false, rh = false, ah = false, fh = false;
  int dst = 0;
  for (int guard = 0; guard < 64; ++guard) {
    if (nh == 59) {  // no next header
      if (plen > 0) ev.set(kIpv6DataAfterNoneHeader);
      return;
    }
    if (plen < 2) return ev.set(kIpv6TruncExthdr);
    uint32_t hlen = 0;
    switch (nh) {
      case 6:
      case 17:
      case 58:
      case 132: return transport(nh, p, plen, ev);
      case 43:  // routing
        hlen = 8 + uint32_t(p[1]) * 8;
        if (hlen > plen) return ev.set(kIpv6TruncExthdr);
        if (rh) {
          ev.set(kIpv6ExthdrDuplRh);
        } else {
          rh = true;
          if (p[2] == 0) ev.set(kIpv6ExthdrRhType0);
        }
        break;
      case 0:     // hop-by-hop options
      case 60: {  // destination options
        hlen = (uint32_t(p[1]) + 1) * 8;
        if (hlen > plen) return ev.set(kIpv6TruncExthdr);
        if (nh == 0 ? hh : dst == 2) {
          ev.set(nh == 0 ? kIpv6ExthdrDuplHh : kIpv6ExthdrDuplDh);
          break;
        }
        nh == 0 ? void(hh = true) : void(++dst);
        uint32_t optslen = hlen - 2, off = 0, pad = 0, other = 0;
        const uint8_t* o = p + 2;
        while (off < optslen) {
          if (o[off] == 0) {  // Pad1
            ++pad, ++off;
            continue;
          }
          if (off + 1 >= optslen) {
            ev.set(kIpv6ExthdrInvalidOptlen);
            break;
          }
          uint8_t type = o[off], olen = o[off + 1];
          if (off + 1 + olen > optslen) {
            ev.set(kIpv6ExthdrInvalidOptlen);
            break;
          }
          bool stop = false;
          switch (type) {
            case 1:  // PadN
              ++pad;
              if (olen == 0) ev.set(kIpv6ExthdrZeroLenPadn);
              break;
            case 5:     // router alert
            case 0xc2:  // jumbo payload
            case 0xc9:  // home address
              if (olen < (type == 5 ? 2 : type == 0xc2 ? 4 : 16)) {
                ev.set(kIpv6ExthdrInvalidOptlen);
                stop = true;
              } else {
                ++other;
              }
              break;
            default: ev.set(nh == 0 ? kIpv6HopoptsUnknownOpt : kIpv6DstoptsUnknownOpt); ++other;
          }
          if (stop) break;
          off += uint32_t(olen) + 2;
        }
        if (pad > 0 && other == 0) ev.set(nh == 0 ? kIpv6HopoptsOnlyPadding : kIpv6DstoptsOnlyPadding);
        break;
      }
      case 44: {  // fragment
        hlen = 8;
        if (hlen > plen) return ev.set(kIpv6TruncExthdr);
        if (p[1] != 0) ev.set(kIpv6FhNonZeroResField);
        if (fh) {
          ev.set(kIpv6ExthdrDuplFh);
          break;
        }
        fh = true;
        uint32_t offset = be16(p + 2) & 0xfff8;
        bool more = p[3] & 1;
        if (!more && offset == 0) {  // an atomic fragment: parsed on
          ev.set(kIpv6ExthdrUselessFh);
          break;
        }
        if (more && plen % 8 != 0) ev.set(kIpv6FragInvalidLength);
        if (offset + (plen - 8) > 65535) ev.set(kIpv6FragPktTooLarge);
        return;  // the rest is read once reassembled
      }
      case 51:  // authentication header
        hlen = 12 + (p[1] > 0 ? (uint32_t(p[1]) - 1) * 4 : 0);
        if (hlen > plen) return ev.set(kIpv6TruncExthdr);
        if (be16(p + 2) != 0) ev.set(kIpv6ExthdrAhResNotNull);
        if (ah) ev.set(kIpv6ExthdrDuplAh);
        ah = true;
        break;
      case 4:  // IPv4 in IPv6
        if (plen < 20) return ev.set(kIpv4InIpv6PktTooSmall);
        if (p[0] >> 4 != 4) ev.set(kIpv4InIpv6WrongIpVer);
        return;
      case 50: return;  // ESP: nothing more to read
      case 1: return ev.set(kIpv6Icmpv4);
      case 135:  // mobility
      case 139:  // HIP
      case 140:  // shim6
        hlen = 8 + uint32_t(p[1]) * 8;
        if (hlen > plen) return ev.set(kIpv6TruncExthdr);
        break;
      default: return ev.set(kIpv6UnknownNextHeader);
    }
    nh = p[0];
    p += hlen, plen -= hlen;
  }
}

void ipv6(const uint8_t* ip, uint32_t len, Events& ev) {
  if (len < 40) return ev.set(kIpv6PktTooSmall);
  uint32_t plen = be16(ip + 4);
  if (len < 40 + plen) return ev.set(kIpv6TruncPkt);
  const uint8_t* d = ip + 40;
  uint8_t nh = ip[6];
  switch (nh) {
    case 4:
      if (plen < 20) return ev.set(kIpv4InIpv6PktTooSmall);
      if (d[0] >> 4 != 4) ev.set(kIpv4InIpv6WrongIpVer);
      return;
    case 41:
      if (plen < 40) return ev.set(kIpv6InIpv6PktTooSmall);
      if (d[0] >> 4 != 6) ev.set(kIpv6InIpv6WrongIpVer);
      return;
    case 1: return ev.set(kIpv6Icmpv4);
    case 47: return;  // GRE: decoded by TunnelDecap
    default: ipv6_ext(nh, d, plen, ev);
  }
}

}  // namespace

const char* decode_event_name(DecodeEvent e) { return e < kDecodeEventCount ? kNames[e] : "unknown"; }

bool find_decode_event(std::string_view name, DecodeEvent& out) {
  if (name.substr(0, 8) == "decoder.") name.remove_prefix(8);  // (the stats and engine-event form)
  for (uint8_t i = 0; i < kDecodeEventCount; ++i)
    if (name == kNames[i]) return out = DecodeEvent(i), true;
  return false;
}

uint64_t decode_events(const uint8_t* ip, uint32_t len, uint8_t* counts) {
  Events ev;
  ev.counts = counts;
  if (len == 0) return 0;
  if (ip[0] >> 4 == 4)
    ipv4(ip, len, ev);
  else if (ip[0] >> 4 == 6)
    ipv6(ip, len, ev);
  return ev.bits;
}

}  // namespace shoal::ids
