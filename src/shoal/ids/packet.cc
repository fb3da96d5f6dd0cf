#include "shoal/ids/packet.hh"

#include <cstring>

#include "shoal/kernels/bytes.hh"

namespace shoal::ids {

bool parse_packet(const uint8_t* ip, uint32_t len, PacketInfo& p) {
  p = PacketInfo();
  if (len < 1) return false;
  uint32_t l4 = 0, end = len;
  bool first_fragment = true;
  uint8_t v = ip[0] >> 4;
  if (v == 4) {
    uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
    if (hl < 20 || len < hl) return false;
    uint32_t total = uint32_t(ip[2]) << 8 | ip[3];
    if (total < hl) return false;
    end = std::min(total, len);  // padding off; a truncated capture keeps what it has
    p.src.v6 = p.dst.v6 = false;
    std::memcpy(p.src.b, ip + 12, 4);
    std::memcpy(p.dst.b, ip + 16, 4);
    p.proto = ip[9];
    p.ttl = ip[8];
    p.ip_id = uint16_t(ip[4] << 8 | ip[5]);
    p.ip_flags = uint8_t(ip[6] >> 5 & 7);
    first_fragment = ((uint32_t(ip[6]) << 8 | ip[7]) & 0x1fff) == 0;
    l4 = hl;
    // the options present, up to the end of the list or one that cannot be
    for (uint32_t o = 20; o < hl;) {
      uint8_t t = ip[o];
      if (t == 0) {
        p.ip_opts |= kIpOptEol;
        break;
      }
      if (t == 1) {
        p.ip_opts |= kIpOptNop;
        ++o;
        continue;
      }
      if (o + 2 > hl || ip[o + 1] < 2 || o + ip[o + 1] > hl) break;
      p.ip_opts |= t == 7     ? kIpOptRr
                   : t == 68  ? kIpOptTs
                   : t == 130 ? kIpOptSec
                   : t == 133 ? kIpOptEsec
                   : t == 131 ? kIpOptLsrr
                   : t == 137 ? kIpOptSsrr
                   : t == 136 ? kIpOptSatid
                              : kIpOptOther;
      o += ip[o + 1];
    }
    p.l3 = ip;
    p.l3len = uint16_t(hl);
  } else if (v == 6) {
    if (len < 40) return false;
    end = std::min<uint32_t>(40u + (uint32_t(ip[4]) << 8 | ip[5]), len);
    p.src.v6 = p.dst.v6 = true;
    p.ttl = ip[7];
    std::memcpy(p.src.b, ip + 8, 16);
    std::memcpy(p.dst.b, ip + 24, 16);
    uint8_t nh = ip[6];
    l4 = 40;
    p.l3 = ip;
    p.l3len = 40;
    // extension headers: hop-by-hop, routing, destination options, fragment
    for (int guard = 0; guard < 8 && (nh == 0 || nh == 43 || nh == 60 || nh == 44); ++guard) {
      if (l4 + 8 > end) return false;
      if (nh == 44) {
        first_fragment = ((uint32_t(ip[l4 + 2]) << 8 | ip[l4 + 3]) & 0xfff8) == 0;
        nh = ip[l4];
        l4 += 8;
      } else {
        uint8_t next = ip[l4];
        l4 += (uint32_t(ip[l4 + 1]) + 1) * 8;
        nh = next;
      }
    }
    if (l4 > end) return false;
    p.proto = nh;
  } else {
    return false;
  }
  uint32_t pay = l4;
  if (first_fragment) {
    if (p.proto == 6 && l4 + 20 <= end) {
      p.l4 = ip + l4;
      p.has_ports = true;
      p.sport = uint16_t(ip[l4] << 8 | ip[l4 + 1]);
      p.dport = uint16_t(ip[l4 + 2] << 8 | ip[l4 + 3]);
      pay = l4 + uint32_t(ip[l4 + 12] >> 4) * 4;
      if (pay < l4 + 20) pay = end, p.l4 = nullptr;  // a bad data offset: no segment to read
      p.l4len = uint16_t(std::min(pay, end) - l4);
    } else if ((p.proto == 17 && l4 + 8 <= end) || (p.proto == 132 && l4 + 12 <= end)) {
      p.l4 = ip + l4;
      p.has_ports = true;
      p.sport = uint16_t(ip[l4] << 8 | ip[l4 + 1]);
      p.dport = uint16_t(ip[l4 + 2] << 8 | ip[l4 + 3]);
      p.l4len = p.proto == 17 ? 8 : 12;  // SCTP: the common header
      pay = l4 + p.l4len;
    } else if ((p.proto == 1 || p.proto == 58) && l4 + 8 <= end) {
      p.l4 = ip + l4;
      pay = l4 + 8;
      uint32_t hlen = 8;  // Suricata's ICMPv4 header lengths: the fixed fields of each type
      if (p.proto == 1) {
        uint8_t t = ip[l4];
        hlen = t == 13 || t == 14   ? 20                                         // timestamp
               : t == 17 || t == 18 ? 12                                         // address mask
               : t == 9             ? 8 + uint32_t(ip[l4 + 4]) * ip[l4 + 5] * 4  // router advertisement
                                    : 8;
      }
      p.l4len = uint16_t(std::min(hlen, end - l4));
    } else if (p.proto == 6 || p.proto == 17 || p.proto == 1 || p.proto == 58 || p.proto == 132) {
      pay = end;  // a truncated transport header: nothing to inspect
    }
  }
  pay = std::min(pay, end);
  p.payload = ip + pay;
  p.plen = end - pay;
  return true;
}

bool header_buffer(const PacketInfo& p, Buf b, std::string_view& out) {
  const uint8_t* h = nullptr;
  size_t n = 0;
  switch (b) {
    case Buf::Ipv4Hdr:
    case Buf::Ipv6Hdr:
      if (!p.l3 || p.src.v6 != (b == Buf::Ipv6Hdr)) return false;
      h = p.l3, n = p.l3len;
      break;
    case Buf::TcpHdr:
    case Buf::UdpHdr:
    case Buf::Icmpv4Hdr:
    case Buf::Icmpv6Hdr: {
      uint8_t want = b == Buf::TcpHdr ? 6 : b == Buf::UdpHdr ? 17 : b == Buf::Icmpv4Hdr ? 1 : 58;
      if (!p.l4 || p.proto != want) return false;
      h = p.l4, n = p.l4len;
      break;
    }
    default: return false;
  }
  out = std::string_view(reinterpret_cast<const char*>(h), n);
  return true;
}

}  // namespace shoal::ids
