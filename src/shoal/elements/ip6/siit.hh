// Stateless IP/ICMP translation (SIIT, RFC 7915) for ProtocolTranslator46
// and ProtocolTranslator64: IPv4 addresses are embedded in the low 32 bits
// of IPv6 addresses under a /96 prefix (Click's IPv4-mapped ::ffff:0:0/96 by
// default; 64:ff9b::/96 is NAT64's well-known prefix).
//
// A translation writes the new packet into `out` (the caller's buffer) and
// returns its length, or 0 with `why` set to the drop reason's name.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>

#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal::siit {

constexpr uint32_t kMaxOut = 65535 + 128;  // an IPv4 datagram grown by IPv6 headers (and a quoted packet's)

// Every reason a translation gives (the elements' drop reasons).
constexpr const char* kReasons[] = {"not-ipv4",
                                    "not-ipv6",
                                    "bad-header",
                                    "bad-length",
                                    "bad-extension-header",
                                    "routing-segments-left",
                                    "address-not-mapped",
                                    "udp-no-checksum-fragment",
                                    "icmp-fragment",
                                    "bad-icmp",
                                    "icmp-untranslatable",
                                    "icmp-bad-inner",
                                    "too-big",
                                    "no-room"};

struct Prefix {
  uint8_t b[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};  // ::ffff:0:0/96
};

inline uint16_t fold16(uint32_t s) {
  while (s >> 16) s = (s & 0xffff) + (s >> 16);
  return uint16_t(s);
}
// A checksum after its pseudo-header's sum changed from `from` to `to`.
inline uint16_t csum_repseudo(uint16_t check, uint32_t from, uint32_t to) {
  return uint16_t(~fold16(uint32_t(uint16_t(~check)) + uint16_t(~fold16(from)) + fold16(to)));
}

// ---------------------------------------------------------------- 4 -> 6

// The ICMPv4 -> ICMPv6 type and code (RFC 7915 4.2); false: not translated.
// `mtu` is adjusted for Packet Too Big, `ptr` for Parameter Problem.
inline bool icmp4to6_type(uint8_t& type, uint8_t& code, uint32_t& rest) {
  switch (type) {
    case 8: type = 128; return code == 0;
    case 0: type = 129; return code == 0;
    case 3:
      switch (code) {
        case 0:
        case 1:
        case 5:
        case 6:
        case 7:
        case 8:
        case 11:
        case 12: type = 1, code = 0; return true;
        case 2: type = 4, code = 1, rest = 6; return true;  // protocol unreachable: the Next Header field
        case 3: type = 1, code = 4; return true;
        case 4: {  // fragmentation needed: Packet Too Big, the MTU 20 bytes larger (at least 1280)
          uint32_t mtu = rest & 0xffff;
          mtu = mtu ? mtu + 20 : 1280;
          type = 2, code = 0, rest = mtu < 1280 ? 1280 : mtu;
          return true;
        }
        case 9:
        case 10:
        case 13:
        case 15: type = 1, code = 1; return true;
        default: return false;
      }
    case 11: type = 3; return code <= 1;
    case 12: {  // parameter problem: the pointer mapped to the IPv6 header's field
      if (code != 0 && code != 2) return false;
      static const int8_t map[20] = {0, 1, 4, 4, -1, -1, -1, -1, 7, 6, -1, -1, 8, 8, 8, 8, 24, 24, 24, 24};
      uint32_t p = rest >> 24;
      if (p >= 20 || map[p] < 0) return false;
      type = 4, code = 0, rest = uint32_t(map[p]);
      return true;
    }
    default: return false;
  }
}

// The IPv6 header (and a fragment header for a fragment) for the IPv4
// header `ip` (hl bytes) with `payload` bytes after it; the bytes written.
inline uint32_t header4to6(const uint8_t* ip, uint32_t hl, uint32_t payload, const Prefix& pfx, uint8_t* o,
                           bool* fragment) {
  uint16_t frag = k::load_be16(ip + 6);
  bool is_frag = (frag & 0x3fff) != 0;  // MF or an offset
  if (fragment) *fragment = is_frag;
  uint8_t proto = ip[9] == 1 ? 58 : ip[9];
  uint32_t tc = ip[1];
  k::store_be32(o, (6u << 28) | (tc << 20));
  k::store_be16(o + 4, uint16_t(payload + (is_frag ? 8 : 0)));
  o[6] = is_frag ? 44 : proto;
  o[7] = ip[8];
  std::memcpy(o + 8, pfx.b, 12);
  std::memcpy(o + 20, ip + 12, 4);
  std::memcpy(o + 24, pfx.b, 12);
  std::memcpy(o + 36, ip + 16, 4);
  if (!is_frag) return 40;
  o[40] = proto;
  o[41] = 0;
  k::store_be16(o + 42, uint16_t((frag & 0x1fff) << 3 | ((frag >> 13) & 1)));
  k::store_be32(o + 44, k::load_be16(ip + 4));
  (void)hl;
  return 48;
}

// IPv4 packet (len bytes) -> IPv6, into o (kMaxOut bytes).
inline uint32_t ip4to6(const uint8_t* ip, uint32_t len, const Prefix& pfx, uint8_t* o, const char*& why,
                       bool inner = false) {
  if (len < 20 || (ip[0] >> 4) != 4) return why = "not-ipv4", 0;
  uint32_t hl = (ip[0] & 0xf) * 4u, tot = k::load_be16(ip + 2);
  if (hl < 20 || len < hl) return why = "bad-header", 0;
  if (!inner) {
    if (tot < hl || tot > len) return why = "bad-length", 0;
    len = tot;  // (padding after the datagram dropped)
  }
  uint32_t have = len - hl, payload = inner ? (tot >= hl ? tot - hl : have) : have;
  bool frag = false;
  uint32_t h = header4to6(ip, hl, payload, pfx, o, &frag);
  const uint8_t* l4 = ip + hl;
  uint8_t* n4 = o + h;
  std::memcpy(n4, l4, have);
  uint16_t fo = k::load_be16(ip + 6) & 0x1fff;
  uint8_t proto = ip[9];
  if (inner || fo) return h + have;  // no transport header to fix (an inner packet: its header only)
  uint32_t ps4 = k::ipv4_pseudo_sum(ip + 12, ip + 16, proto, payload);
  uint32_t ps6 = k::ipv6_pseudo_sum(o + 8, o + 24, proto == 1 ? 58 : proto, payload);
  if (proto == 6 && have >= 18) {
    k::store_be16(n4 + 16, csum_repseudo(k::load_be16(n4 + 16), ps4, ps6));
  } else if (proto == 17 && have >= 8) {
    uint16_t c = k::load_be16(n4 + 6);
    if (c == 0) {  // no checksum in IPv4, mandatory in IPv6: computed, when the whole datagram is here
      if (frag) return why = "udp-no-checksum-fragment", 0;
      k::store_be16(n4 + 6, 0);
      c = k::csum_fold(k::csum_partial(n4, have, ps6));
      k::store_be16(n4 + 6, c ? c : 0xffff);
    } else {
      c = csum_repseudo(c, ps4, ps6);
      k::store_be16(n4 + 6, c ? c : 0xffff);
    }
  } else if (proto == 1) {
    if (frag) return why = "icmp-fragment", 0;
    if (have < 8) return why = "bad-icmp", 0;
    uint8_t type = n4[0], code = n4[1];
    uint32_t rest = k::load_be32(n4 + 4);
    bool error = type == 3 || type == 11 || type == 12;
    if (!icmp4to6_type(type, code, rest)) return why = "icmp-untranslatable", 0;
    n4[0] = type, n4[1] = code;
    if (type == 2 || type == 4) k::store_be32(n4 + 4, rest);
    if (type == 1 || type == 3) k::store_be32(n4 + 4, 0);
    uint32_t l4len = have;
    if (error) {  // the packet in error, translated too
      const char* w = nullptr;
      uint32_t in = ip4to6(l4 + 8, have - 8, pfx, n4 + 8, w, true);
      if (!in) return why = "icmp-bad-inner", 0;
      l4len = 8 + in;
      if (h + l4len > 1280) l4len = 1280 - h;  // an ICMPv6 error fits the minimum MTU
      k::store_be16(o + 4, uint16_t(l4len + (h - 40)));
    }
    k::store_be16(n4 + 2, 0);
    k::store_be16(n4 + 2, k::csum_fold(k::csum_partial(n4, l4len, k::ipv6_pseudo_sum(o + 8, o + 24, 58, l4len))));
    return h + l4len;
  }
  return h + have;
}

// ---------------------------------------------------------------- 6 -> 4

inline bool mapped(const uint8_t* a, const Prefix& pfx) { return std::memcmp(a, pfx.b, 12) == 0; }

// The ICMPv6 -> ICMPv4 type and code (RFC 7915 5.2); false: not translated.
inline bool icmp6to4_type(uint8_t& type, uint8_t& code, uint32_t& rest) {
  switch (type) {
    case 128: type = 8; return code == 0;
    case 129: type = 0; return code == 0;
    case 1:
      switch (code) {
        case 0:
        case 2:
        case 3: type = 3, code = 1; return true;
        case 1: type = 3, code = 10; return true;
        case 4: type = 3, code = 3; return true;
        default: return false;
      }
    case 2: {  // Packet Too Big: fragmentation needed, the MTU 20 bytes smaller
      uint32_t mtu = rest > 0xffff + 20u ? 0xffff : rest - 20;
      type = 3, code = 4, rest = mtu & 0xffff;
      return true;
    }
    case 3: type = 11; return code <= 1;
    case 4:
      if (code == 1) return type = 3, code = 2, rest = 0, true;
      if (code == 0) {
        static const struct {
          uint32_t from;
          uint8_t to;
        } map[] = {{0, 0}, {1, 1}, {4, 2}, {5, 2}, {6, 9}, {7, 8}};
        for (auto m : map)
          if (rest == m.from) return type = 12, code = 0, rest = uint32_t(m.to) << 24, true;
        if (rest >= 8 && rest < 24) return type = 12, code = 0, rest = 12u << 24, true;
        if (rest >= 24 && rest < 40) return type = 12, code = 0, rest = 16u << 24, true;
      }
      return false;
    default: return false;
  }
}

// IPv6 packet (len bytes) -> IPv4, into o. `id` numbers the datagrams
// that may be fragmented on the way (DF clear, RFC 7915 5.1).
inline uint32_t ip6to4(const uint8_t* ip, uint32_t len, const Prefix& pfx, uint8_t* o, uint16_t& id, const char*& why,
                       bool inner = false) {
  if (len < 40 || (ip[0] >> 4) != 6) return why = "not-ipv6", 0;
  uint32_t plen = k::load_be16(ip + 4);
  if (!inner) {
    if (40 + plen > len) return why = "bad-length", 0;
    len = 40 + plen;
  }
  if (!mapped(ip + 8, pfx) || !mapped(ip + 24, pfx)) return why = "address-not-mapped", 0;
  // Extension headers: hop-by-hop, destination options and a routing header
  // with no segment left are skipped; a fragment header gives the IPv4
  // fragment fields.
  uint8_t nh = ip[6];
  uint32_t off = 40;
  bool frag = false;
  uint16_t frag_off = 0, mf = 0;
  uint32_t frag_id = 0;
  for (;;) {
    if (nh == 0 || nh == 60 || nh == 43) {
      if (off + 8 > len) return why = "bad-extension-header", 0;
      if (nh == 43 && ip[off + 3] != 0) return why = "routing-segments-left", 0;
      uint32_t el = (ip[off + 1] + 1u) * 8;
      nh = ip[off];
      off += el;
    } else if (nh == 44) {
      if (off + 8 > len) return why = "bad-extension-header", 0;
      frag = true;
      uint16_t f = k::load_be16(ip + off + 2);
      frag_off = f >> 3, mf = f & 1;
      frag_id = k::load_be32(ip + off + 4);
      nh = ip[off];
      off += 8;
    } else {
      break;
    }
    if (off > len) return why = "bad-extension-header", 0;
  }
  if (nh == 58 && frag) return why = "icmp-fragment", 0;
  uint32_t have = len - off, payload = inner ? (40 + plen > off ? 40 + plen - off : have) : have;
  uint32_t tot = 20 + payload;
  if (tot > 0xffff) return why = "too-big", 0;
  o[0] = 0x45;
  o[1] = uint8_t(k::load_be32(ip) >> 20);
  k::store_be16(o + 2, uint16_t(tot));
  bool df = !frag && tot > 1260;
  uint16_t ident = frag ? uint16_t(frag_id) : df ? 0 : id++;
  k::store_be16(o + 4, ident);
  k::store_be16(o + 6, uint16_t((df ? 0x4000 : 0) | (mf ? 0x2000 : 0) | frag_off));
  o[8] = ip[7];
  o[9] = nh == 58 ? 1 : nh;
  std::memcpy(o + 12, ip + 20, 4);
  std::memcpy(o + 16, ip + 36, 4);
  k::store_be16(o + 10, 0);
  k::set_ipv4_header_checksum(o, 20);
  uint8_t* n4 = o + 20;
  const uint8_t* l4 = ip + off;
  std::memcpy(n4, l4, have);
  if (inner || frag_off) return 20 + have;
  uint32_t ps6 = k::ipv6_pseudo_sum(ip + 8, ip + 24, nh, payload);
  uint32_t ps4 = k::ipv4_pseudo_sum(o + 12, o + 16, nh == 58 ? 1 : nh, payload);
  if (nh == 6 && have >= 18) {
    k::store_be16(n4 + 16, csum_repseudo(k::load_be16(n4 + 16), ps6, ps4));
  } else if (nh == 17 && have >= 8) {
    uint16_t c = csum_repseudo(k::load_be16(n4 + 6), ps6, ps4);
    k::store_be16(n4 + 6, c ? c : 0xffff);
  } else if (nh == 58) {
    if (have < 8) return why = "bad-icmp", 0;
    uint8_t type = n4[0], code = n4[1];
    uint32_t rest = k::load_be32(n4 + 4);
    bool error = type < 128;
    if (!icmp6to4_type(type, code, rest)) return why = "icmp-untranslatable", 0;
    n4[0] = type, n4[1] = code;
    if (type == 3 || type == 12) k::store_be32(n4 + 4, type == 3 && code != 4 ? 0 : rest);
    uint32_t l4len = have;
    if (error) {
      const char* w = nullptr;
      uint16_t inner_id = 0;
      uint32_t in = ip6to4(l4 + 8, have - 8, pfx, n4 + 8, inner_id, w, true);
      if (!in) return why = "icmp-bad-inner", 0;
      l4len = 8 + in;
      if (20 + l4len > 576) l4len = 576 - 20;  // an ICMPv4 error fits 576 bytes
      k::store_be16(o + 2, uint16_t(20 + l4len));
      k::store_be16(o + 10, 0);
      k::set_ipv4_header_checksum(o, 20);
    }
    k::store_be16(n4 + 2, 0);
    k::store_be16(n4 + 2, k::ip_checksum(n4, l4len));
    return 20 + l4len;
  }
  return 20 + have;
}

}  // namespace shoal::siit
