// Connection keys for the flow layer, from an IP header: the 5-tuple of IPv4
// and IPv6 packets in a canonical order, so both directions of a connection
// give one key and the packet's direction is known. ICMP errors give the key
// of the connection they quote; fragments other than the first give a
// fragment key (addresses, protocol, IP ID) that the flow table maps to the
// flow its first fragment opened. Host+device: the CPU flow table, the host
// backend and CUDA parse packets with this one function.
#pragma once
#include "shoal/kernels/flowhash.hh"

namespace shoal::k {

// Canonical connection key. The lower endpoint (address, then port) is `a`.
struct ConnKey {
  uint32_t a[4] = {}, b[4] = {};  // IPv4 addresses in a[0]/b[0]
  uint16_t pa = 0, pb = 0;        // ports; ICMP echo: the identifier on both
  uint8_t proto = 0;
  uint8_t family = 0;  // 4 or 6
  uint16_t vlan = 0;   // the packet's VLAN ids when the flow layer tracks them (vlan_key), else 0
  // (The first word decides most unequal keys; the rest at once, without a
  // branch each: in a train of packets of one connection they are equal.)
  SHOAL_HD bool operator==(const ConnKey& o) const {
    if (a[0] != o.a[0]) return false;
    uint32_t d = 0;
    for (int i = 0; i < 4; ++i) d |= (a[i] ^ o.a[i]) | (b[i] ^ o.b[i]);
    d |= uint32_t(pa ^ o.pa) | uint32_t(pb ^ o.pb) | uint32_t(proto ^ o.proto) | uint32_t(family ^ o.family) |
         uint32_t(vlan ^ o.vlan);
    return d == 0;
  }
};
static_assert(sizeof(ConnKey) == 40, "ConnKey is ten words");

enum class KeyKind : uint8_t {
  Conn,       // a connection key
  FirstFrag,  // the first fragment of a datagram: a connection key, and frag_id names the datagram
  Frag,       // a later fragment: only frag (addresses, protocol) and frag_id are set
  NotIP,      // not IPv4/IPv6, or too short to hold the header its version says
  Truncated,  // the transport header (or an ICMP error's quote) is cut short
};

struct ParsedKey {
  ConnKey key;  // canonical; for Frag: addresses and protocol, ports 0
  uint32_t frag_id = 0;
  uint16_t l4_off = 0;       // transport header offset from the IP header (0: unknown)
  uint16_t payload_len = 0;  // transport payload bytes in this packet (TCP/UDP)
  uint8_t dir = 0;           // 0: the packet goes a -> b; 1: b -> a
  uint8_t tcp_flags = 0;     // TCP only
  uint8_t icmp_error = 0;    // 1: the key is the quoted connection's
  KeyKind kind = KeyKind::NotIP;
  uint8_t server_reply = 0;  // 1: a TCP segment (not a SYN) whose data begin as an HTTP response's
};

// The direction of a connection's originator, from the first packet seen
// of it: a TCP SYN-ACK comes from the responder (a connection picked up
// midstream at its second packet, which Suricata and conntrack read so).
SHOAL_HD uint8_t originator_dir(const ParsedKey& pk) {
  bool synack = pk.key.proto == 6 && (pk.tcp_flags & 0x12) == 0x12;  // SYN and ACK
  // (as does the server's reply: Suricata reverses a connection picked up
  // midstream when its first data is a reply of the protocol it detects)
  return uint8_t(pk.dir ^ (synack || pk.server_reply ? 1 : 0));
}

SHOAL_HD bool endpoint_less(const uint32_t* x, uint16_t px, const uint32_t* y, uint16_t py) {
  for (int i = 0; i < 4; ++i)
    if (x[i] != y[i]) return x[i] < y[i];
  return px < py;
}

// Puts (src, sport) and (dst, dport) into canonical order; dir says which
// way the packet went.
SHOAL_HD void canonicalize(ParsedKey& r, const uint32_t* src, uint16_t sp, const uint32_t* dst, uint16_t dp) {
  bool swap = endpoint_less(dst, dp, src, sp);
  const uint32_t* lo = swap ? dst : src;
  const uint32_t* hi = swap ? src : dst;
  for (int i = 0; i < 4; ++i) {
    r.key.a[i] = lo[i];
    r.key.b[i] = hi[i];
  }
  r.key.pa = swap ? dp : sp;
  r.key.pb = swap ? sp : dp;
  r.dir = swap ? 1 : 0;
}

// IPv4's case: the other address words stay zero (the key was cleared).
// (Scalars, not the arrays above: four 4-byte stores read back as one
// 16-byte load stall store forwarding, a fifth of the parse's time.)
SHOAL_HD void canonicalize4(ParsedKey& r, uint32_t src, uint16_t sp, uint32_t dst, uint16_t dp) {
  bool swap = dst < src || (dst == src && dp < sp);
  r.key.a[0] = swap ? dst : src;
  r.key.b[0] = swap ? src : dst;
  r.key.pa = swap ? dp : sp;
  r.key.pb = swap ? sp : dp;
  r.dir = swap ? 1 : 0;
}

SHOAL_HD bool icmp4_is_error(uint8_t type) { return type == 3 || type == 4 || type == 5 || type == 11 || type == 12; }
SHOAL_HD bool icmp4_is_query(uint8_t type) {
  return type == 0 || type == 8 || type == 13 || type == 14 || type == 15 || type == 16 || type == 17 || type == 18;
}
SHOAL_HD bool icmp6_is_error(uint8_t type) { return type >= 1 && type <= 4; }

// Ports (or the ICMP query identifier) from a transport header; false when
// it is cut short. `rlen` is what remains from the transport header.
SHOAL_HD bool transport_ports(uint8_t proto, const uint8_t* t, uint32_t rlen, uint16_t& sp, uint16_t& dp) {
  sp = dp = 0;
  if (proto == 6 || proto == 17 || proto == 132 || proto == 136 || proto == 33) {
    if (rlen < 4) return false;
    sp = load_be16(t);
    dp = load_be16(t + 2);
    return true;
  }
  if (proto == 1 || proto == 58) {
    if (rlen < 8) return false;
    uint8_t type = t[0];
    bool query = proto == 1 ? icmp4_is_query(type) : (type == 128 || type == 129);
    if (query) sp = dp = load_be16(t + 4);
    return true;
  }
  return true;  // other protocols: addresses only
}

// Walks IPv6 extension headers from the fixed header; returns the upper-layer
// protocol and its offset, and any fragment header's fields.
SHOAL_HD bool ip6_upper(const uint8_t* ip, uint32_t len, uint8_t& proto, uint32_t& off, bool& frag, bool& first,
                        uint32_t& frag_id) {
  proto = ip[6];
  off = 40;
  frag = false;
  first = true;
  for (int n = 0; n < 8; ++n) {
    if (proto == 0 || proto == 43 || proto == 60) {  // hop-by-hop, routing, destination options
      if (off + 8 > len) return false;
      uint8_t next = ip[off];
      off += (uint32_t(ip[off + 1]) + 1) * 8;
      proto = next;
    } else if (proto == 44) {  // fragment
      if (off + 8 > len) return false;
      uint16_t fo = load_be16(ip + off + 2);
      frag = true;
      first = (fo & 0xfff8) == 0;
      frag_id = load_be32(ip + off + 4);
      proto = ip[off];
      off += 8;
      if (!first) return true;
    } else if (proto == 51) {  // AH
      if (off + 8 > len) return false;
      uint8_t next = ip[off];
      off += (uint32_t(ip[off + 1]) + 2) * 4;
      proto = next;
    } else {
      return true;
    }
  }
  return true;
}

SHOAL_HD uint16_t transport_payload(uint8_t proto, const uint8_t* t, uint32_t rlen, uint8_t& tcp_flags) {
  if (proto == 6) {
    if (rlen < 20) return 0;
    tcp_flags = t[13];
    uint32_t doff = uint32_t(t[12] >> 4) * 4;
    return doff <= rlen ? uint16_t(rlen - doff) : 0;
  }
  if (proto == 17) return rlen >= 8 ? uint16_t(rlen - 8) : 0;
  return 0;
}

// One level of parsing; `quoted` is set inside an ICMP error's payload, where
// the quoted datagram may be cut after the first 8 transport bytes.
SHOAL_HD KeyKind parse_ip(const uint8_t* ip, uint32_t len, ParsedKey& r, bool quoted) {
  if (len < 1) return KeyKind::NotIP;
  uint8_t ver = ip[0] >> 4;
  uint32_t src[4] = {0, 0, 0, 0}, dst[4] = {0, 0, 0, 0};
  uint8_t proto;
  uint32_t off, total;
  bool frag = false, first = true;
  uint32_t frag_id = 0;
  if (ver == 4) {
    if (len < 20) return KeyKind::NotIP;
    off = uint32_t(ip[0] & 0xf) * 4;
    if (off < 20 || off > len) return KeyKind::NotIP;
    total = load_be16(ip + 2);
    if (quoted || total > len) total = len;  // a quote is cut; a short frame was counted upstream
    if (total < off) total = off;
    proto = ip[9];
    src[0] = load_be32(ip + 12);
    dst[0] = load_be32(ip + 16);
    uint16_t fo = load_be16(ip + 6);
    frag = (fo & 0x3fff) != 0;
    first = (fo & 0x1fff) == 0;
    frag_id = load_be16(ip + 4);
    r.key.family = 4;
  } else if (ver == 6) {
    if (len < 40) return KeyKind::NotIP;
    total = 40u + load_be16(ip + 4);
    if (quoted || total > len) total = len;
    for (int i = 0; i < 4; ++i) {
      src[i] = load_be32(ip + 8 + 4 * i);
      dst[i] = load_be32(ip + 24 + 4 * i);
    }
    if (!ip6_upper(ip, total, proto, off, frag, first, frag_id)) return KeyKind::Truncated;
    r.key.family = 6;
  } else {
    return KeyKind::NotIP;
  }
  r.key.proto = proto;
  r.frag_id = frag_id;
  if (frag && !first) {
    if (ver == 4)
      canonicalize4(r, src[0], 0, dst[0], 0);
    else
      canonicalize(r, src, 0, dst, 0);
    if (!quoted && total > off) r.payload_len = uint16_t(total - off);  // the fragment's share of the payload
    return KeyKind::Frag;
  }
  if (off > total) return KeyKind::Truncated;
  const uint8_t* t = ip + off;
  uint32_t rlen = total - off;
  uint16_t sp, dp;
  if (!transport_ports(proto, t, rlen, sp, dp)) return KeyKind::Truncated;
  bool is_err = !quoted && !frag &&
                ((proto == 1 && ver == 4 && icmp4_is_error(t[0])) || (proto == 58 && ver == 6 && icmp6_is_error(t[0])));
  if (is_err) {  // parse_conn_key reads the quote (no recursion: device code)
    r.icmp_error = 1;
    r.l4_off = uint16_t(off);
    r.payload_len = uint16_t(rlen);
    return KeyKind::Conn;
  }
  if (ver == 4)
    canonicalize4(r, src[0], sp, dst[0], dp);
  else
    canonicalize(r, src, sp, dst, dp);
  r.l4_off = uint16_t(off);
  if (!quoted) r.payload_len = transport_payload(proto, t, rlen, r.tcp_flags);
  if (proto == 6 && r.payload_len >= 8 && !(r.tcp_flags & 0x02)) {  // "HTTP/1." and a status: a server's reply
    const uint8_t* d = t + rlen - r.payload_len;
    r.server_reply = load_be32(d) == 0x48545450u && d[4] == '/' && d[5] == '1' && d[6] == '.';
  }
  return frag ? KeyKind::FirstFrag : KeyKind::Conn;
}

SHOAL_HD void clear_key(ParsedKey& r) {
  // (Field by field: a cleared temporary assigned instead is written as
  // overlapping stores and read back as one unaligned load, a store-
  // forwarding stall.)
  for (int i = 0; i < 4; ++i) r.key.a[i] = r.key.b[i] = 0;
  r.key.pa = r.key.pb = 0;
  r.key.proto = r.key.family = 0;
  r.key.vlan = 0;
  r.frag_id = 0;
  r.l4_off = r.payload_len = 0;
  r.dir = r.tcp_flags = r.icmp_error = r.server_reply = 0;
  r.kind = KeyKind::NotIP;
}

// The common case, small enough to inline into a per-packet loop: an IPv4
// header without options, not a fragment, over a whole UDP or TCP header.
// Sets `r` exactly as parse_ip would (tested against it); false, `r`
// untouched, for anything else.
SHOAL_HD bool parse_ipv4_common(const uint8_t* ip, uint32_t len, ParsedKey& r) {
  if (len < 28 || ip[0] != 0x45 || (load_be16(ip + 6) & 0x3fff) != 0) return false;
  uint8_t proto = ip[9];
  uint32_t total = load_be16(ip + 2);
  if (total > len) total = len;
  if (proto == 17 ? total < 28 : proto != 6 || total < 40) return false;
  const uint8_t* t = ip + 20;
  uint32_t rlen = total - 20;
  uint8_t flags = 0;
  uint16_t payload;
  if (proto == 17) {
    payload = uint16_t(rlen - 8);
  } else {
    flags = t[13];
    uint32_t doff = uint32_t(t[12] >> 4) * 4;
    payload = doff <= rlen ? uint16_t(rlen - doff) : 0;
  }
  clear_key(r);
  r.key.proto = proto;
  r.key.family = 4;
  r.frag_id = load_be16(ip + 4);
  canonicalize4(r, load_be32(ip + 12), load_be16(t), load_be32(ip + 16), load_be16(t + 2));
  r.l4_off = 20;
  r.payload_len = payload;
  r.tcp_flags = flags;
  if (proto == 6 && payload >= 8 && !(flags & 0x02)) {  // as parse_ip: a server's HTTP reply
    const uint8_t* d = t + rlen - payload;
    r.server_reply = load_be32(d) == 0x48545450u && d[4] == '/' && d[5] == '1' && d[6] == '.';
  }
  r.kind = KeyKind::Conn;
  return true;
}

// Any packet's key (parse_conn_key's path for what parse_ipv4_common leaves).
SHOAL_HD KeyKind parse_conn_key_general(const uint8_t* ip, uint32_t len, ParsedKey& r) {
  clear_key(r);
  r.kind = parse_ip(ip, len, r, false);
  if (r.icmp_error) {
    // An ICMP error: the key of the connection it quotes, seen from the
    // quoted packet's sender (the error travels the other way).
    ParsedKey inner;
    uint32_t rlen = r.payload_len;
    KeyKind k = parse_ip(ip + r.l4_off + 8, rlen - 8, inner, true);
    r.payload_len = 0;
    if (k != KeyKind::Conn) {
      r.icmp_error = 0;
      return r.kind = KeyKind::Truncated;
    }
    r.key = inner.key;
    r.dir = uint8_t(inner.dir ^ 1);
  }
  return r.kind;
}

// The key of the packet whose IP header starts at `ip`.
SHOAL_HD KeyKind parse_conn_key(const uint8_t* ip, uint32_t len, ParsedKey& r) {
  if (parse_ipv4_common(ip, len, r)) return KeyKind::Conn;
  return parse_conn_key_general(ip, len, r);
}

// A key's vlan from a packet's VLAN ids (outermost first; Suricata's
// vlan.use-for-tracking keys flows on all of them): one id as it is, two or
// three folded into 0x1000..0xffff (two stacks of several ids may fold
// together, one in 61,440), none 0.
SHOAL_HD uint16_t vlan_key(const uint16_t* ids, int n) {
  if (n <= 0) return 0;
  if (n == 1) return uint16_t(ids[0] & 0x0fff);
  uint32_t h = 0x811C9DC5u;
  for (int i = 0; i < n && i < 3; ++i) h = (h ^ (ids[i] & 0x0fffu)) * 0x01000193u;
  h ^= h >> 15;
  return uint16_t(0x1000u + h % 0xf000u);
}

// The key's ten words as five 64-bit ones, each folded in with a multiply
// (cheap enough to be a small part of a lookup), then a final avalanche.
SHOAL_HD uint32_t conn_hash(const ConnKey& k, uint32_t seed = 0x2545F491U) {
  const uint64_t w[5] = {
      uint64_t(k.a[0]) << 32 | k.a[1], uint64_t(k.a[2]) << 32 | k.a[3], uint64_t(k.b[0]) << 32 | k.b[1],
      uint64_t(k.b[2]) << 32 | k.b[3],
      uint64_t(k.pa) << 48 | uint64_t(k.pb) << 32 | uint64_t(k.vlan) << 16 | uint64_t(k.family) << 8 | k.proto};
  uint64_t h = 0x9E3779B97F4A7C15ull ^ seed;
  for (int i = 0; i < 5; ++i) {
    h = (h ^ w[i]) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 32;
  }
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  return uint32_t(h);
}

}  // namespace shoal::k
