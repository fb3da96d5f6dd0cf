#include "shoal/io/offload.hh"

#include <cstring>
#include <vector>

#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal::io {

namespace {
struct L3 {
  uint32_t l2 = 0;   // Ethernet header bytes (14 or 18)
  uint32_t ihl = 0;  // IP header bytes (40 for IPv6, no extension headers)
  bool v6 = false;
  uint8_t proto = 0;
  uint32_t ip_len = 0;  // IP header + payload
};

bool parse(const uint8_t* d, uint32_t len, L3& l) {
  if (len < 14) return false;
  uint16_t type = k::load_be16(d + 12);
  l.l2 = 14;
  if (type == 0x8100 || type == 0x88a8) {
    if (len < 18) return false;
    type = k::load_be16(d + 16);
    l.l2 = 18;
  }
  const uint8_t* ip = d + l.l2;
  uint32_t room = len - l.l2;
  if (type == 0x0800) {
    if (room < 20 || (ip[0] >> 4) != 4) return false;
    l.ihl = uint32_t(ip[0] & 0xf) * 4;
    l.ip_len = k::load_be16(ip + 2);
    if (l.ihl < 20 || l.ip_len < l.ihl || l.ip_len > room) return false;
    if (k::load_be16(ip + 6) & 0x3fff) return false;  // fragments are never offloaded
    l.proto = ip[9];
  } else if (type == 0x86dd) {
    if (room < 40 || (ip[0] >> 4) != 6) return false;
    l.v6 = true;
    l.ihl = 40;
    l.ip_len = 40 + k::load_be16(ip + 4);
    if (l.ip_len > room) return false;
    l.proto = ip[6];
  } else {
    return false;
  }
  return l.proto == 6 || l.proto == 17;
}

void l4_checksum(uint8_t* ip, const L3& l) {
  uint8_t* t = ip + l.ihl;
  uint32_t n = l.ip_len - l.ihl;
  uint32_t at = l.proto == 6 ? 16 : 6;
  if (n < at + 2) return;
  t[at] = t[at + 1] = 0;
  uint32_t sum =
      l.v6 ? k::ipv6_pseudo_sum(ip + 8, ip + 24, l.proto, n) : k::ipv4_pseudo_sum(ip + 12, ip + 16, l.proto, n);
  uint16_t c = k::csum_fold(k::csum_partial(t, n, sum));
  if (l.proto == 17 && c == 0) c = 0xffff;
  k::store_be16(t + at, c);
}
}  // namespace

bool finish_l4_checksum(uint8_t* frame, uint32_t len) {
  L3 l;
  if (!parse(frame, len, l)) return false;
  l4_checksum(frame + l.l2, l);
  return true;
}

uint32_t segment_tcp(const uint8_t* d, uint32_t len, uint32_t mtu, uint32_t gso_mss,
                     const std::function<bool(const uint8_t*, uint32_t)>& emit) {
  L3 l;
  if (!parse(d, len, l) || l.proto != 6) return 0;
  const uint8_t* ip = d + l.l2;
  const uint8_t* tcp = ip + l.ihl;
  if (l.ip_len < l.ihl + 20) return 0;
  uint32_t thl = uint32_t(tcp[12] >> 4) * 4;
  if (thl < 20 || l.ihl + thl > l.ip_len || l.ihl + thl + 8 > mtu) return 0;
  const uint32_t hdr = l.l2 + l.ihl + thl;
  const uint32_t data = l.ip_len - l.ihl - thl;
  uint32_t mss = mtu - l.ihl - thl;
  if (gso_mss && gso_mss < mss) mss = gso_mss;
  if (data <= mss) return 0;
  const uint32_t seq0 = k::load_be32(tcp + 4);
  const uint16_t id0 = l.v6 ? 0 : k::load_be16(ip + 4);
  const uint8_t flags = tcp[13];
  std::vector<uint8_t> buf(hdr + mss);
  uint32_t n = 0;
  for (uint32_t off = 0; off < data; off += mss, ++n) {
    uint32_t seg = std::min(mss, data - off);
    bool first = off == 0, last = off + seg == data;
    std::memcpy(buf.data(), d, hdr);
    std::memcpy(buf.data() + hdr, d + hdr + off, seg);
    uint8_t* sip = buf.data() + l.l2;
    uint8_t* st = sip + l.ihl;
    L3 s = l;
    s.ip_len = l.ihl + thl + seg;
    if (l.v6) {
      k::store_be16(sip + 4, uint16_t(s.ip_len - 40));
    } else {
      k::store_be16(sip + 2, uint16_t(s.ip_len));
      k::store_be16(sip + 4, uint16_t(id0 + n));
      sip[10] = sip[11] = 0;
      k::store_be16(sip + 10, k::ip_checksum(sip, l.ihl));
    }
    k::store_be32(st + 4, seq0 + off);
    uint8_t f = flags;
    if (!last) f &= uint8_t(~0x09);   // FIN and PSH only on the last segment
    if (!first) f &= uint8_t(~0x80);  // CWR only on the first
    st[13] = f;
    l4_checksum(sip, s);
    if (!emit(buf.data(), hdr + seg)) break;
  }
  return n;
}

}  // namespace shoal::io
