#include "shoal/io/traffic.hh"

#include <algorithm>
#include <cstring>

#include "shoal/kernels/checksum.hh"
#include "shoal/kernels/flowhash.hh"

namespace shoal::io {

namespace {
uint32_t l4_header(Proto p) { return p == Proto::TCP ? 20 : 8; }
}  // namespace

bool parse_proto(const std::string& s, Proto& p) {
  if (s == "udp")
    p = Proto::UDP;
  else if (s == "tcp")
    p = Proto::TCP;
  else if (s == "icmp")
    p = Proto::ICMP;
  else if (s == "mix")
    p = Proto::MIX;
  else
    return false;
  return true;
}

TrafficGen::TrafficGen(const TrafficSpec& spec) : spec_(spec) {
  if (spec_.flows == 0) spec_.flows = 1;
  if (spec_.flowsize == 0) spec_.flowsize = 1;
  min_len_ = min_length(spec_);
  hashes_.resize(spec_.flows);
  std::vector<uint8_t> buf(2048);
  for (uint32_t f = 0; f < spec_.flows; ++f) {
    uint32_t len = min_length(spec_);
    headers(f, len, buf.data());
    hashes_[f] = k::flow_hash(buf.data(), len);
  }
  for (uint64_t i = 0; i < (spec_.imix ? 12u : 1u); ++i) {
    auto it = std::find(lengths_.begin(), lengths_.end(), length_of(i));
    length_slot_[i] = uint8_t(it - lengths_.begin());
    if (it == lengths_.end()) lengths_.push_back(length_of(i));
  }
  uint64_t per_flow = 0;
  for (uint32_t l : lengths_) per_flow += l;
  if (per_flow * spec_.flows > (64ull << 20)) return;  // memory bound: build per packet
  frames_.resize(per_flow * spec_.flows);
  frame_off_.resize(size_t(spec_.flows) * lengths_.size());
  uint64_t off = 0;
  for (uint32_t f = 0; f < spec_.flows; ++f)
    for (size_t li = 0; li < lengths_.size(); ++li) {
      frame_off_[f * lengths_.size() + li] = off;
      fill(f, lengths_[li], 0, false, frames_.data() + off);
      off += lengths_[li];
    }
}

uint32_t random_dst4(uint32_t flow) {
  uint32_t h = k::mix32(flow * 0x9e3779b9u + 0x7f4a7c15u);
  return 0x01000000u + h % (0xe0000000u - 0x01000000u);
}

void random_dst6(uint32_t flow, uint8_t out[16]) {
  uint32_t a = k::mix32(flow * 0x9e3779b9u + 1), b = k::mix32(flow * 0x85ebca6bu + 2);
  k::store_be32(out, 0x20000000u | (a & 0x1fffffffu));
  k::store_be32(out + 4, b);
  k::store_be32(out + 8, 0);
  k::store_be32(out + 12, flow + 1);
}

uint32_t TrafficGen::min_length(const TrafficSpec& s) {
  uint32_t l3 = s.ipv6 ? 40 : 20;
  uint32_t l4 = s.proto == Proto::MIX ? 20 : l4_header(s.proto);
  return 14 + l3 + l4 + 8;
}

uint32_t TrafficGen::max_length() const { return spec_.imix ? std::max(1518u, min_length(spec_)) : length_of(0); }

Proto TrafficGen::proto_of(uint32_t f) const {
  if (spec_.proto != Proto::MIX) return spec_.proto;
  static constexpr Proto kMix[10] = {Proto::TCP, Proto::TCP, Proto::TCP, Proto::TCP, Proto::TCP,
                                     Proto::TCP, Proto::UDP, Proto::UDP, Proto::UDP, Proto::ICMP};
  return kMix[f % 10];
}

// Ethernet + IP + L4 headers for flow f in a frame of len bytes (checksums
// of L4 are filled by build()).
void TrafficGen::headers(uint32_t f, uint32_t len, uint8_t* out) const {
  Proto p = proto_of(f);
  std::memcpy(out, spec_.dst_mac.data(), 6);
  std::memcpy(out + 6, spec_.src_mac.data(), 6);
  uint8_t* ip = out + 14;
  uint8_t proto = p == Proto::TCP ? 6 : p == Proto::UDP ? 17 : (spec_.ipv6 ? 58 : 1);
  uint32_t l3 = spec_.ipv6 ? 40 : 20;
  uint8_t* l4 = ip + l3;
  uint32_t l4len = len - 14 - l3;
  // Flow f: source address offset by f / 16384, ports from f % 16384.
  uint32_t hi = f / 16384, lo = f % 16384;
  if (!spec_.ipv6) {
    k::store_be16(out + 12, 0x0800);
    ip[0] = 0x45;
    ip[1] = 0;
    k::store_be16(ip + 2, uint16_t(len - 14));
    k::store_be16(ip + 4, uint16_t(f));
    k::store_be16(ip + 6, 0);
    ip[8] = spec_.ttl;
    ip[9] = proto;
    ip[10] = ip[11] = 0;
    uint32_t src = k::load_be32(spec_.src_ip.data()) + hi;
    k::store_be32(ip + 12, src);
    if (spec_.random_dst)
      k::store_be32(ip + 16, random_dst4(f));
    else
      std::memcpy(ip + 16, spec_.dst_ip.data(), 4);
    k::store_be16(ip + 10, k::ip_checksum(ip, 20));
  } else {
    k::store_be16(out + 12, 0x86DD);
    k::store_be32(ip, 0x60000000u);
    k::store_be16(ip + 4, uint16_t(l4len));
    ip[6] = proto;
    ip[7] = spec_.ttl;
    std::memcpy(ip + 8, spec_.src_ip6.data(), 16);
    k::store_be32(ip + 8 + 12, k::load_be32(spec_.src_ip6.data() + 12) + hi);
    if (spec_.random_dst)
      random_dst6(f, ip + 24);
    else
      std::memcpy(ip + 24, spec_.dst_ip6.data(), 16);
  }
  // Ports away from well-known services, so dissectors take them for what
  // they are: 10000-26383 and 40000-40999.
  uint16_t sport = uint16_t(10000 + lo), dport = uint16_t(40000 + (f * 7) % 1000);
  if (p == Proto::UDP) {
    k::store_be16(l4, sport);
    k::store_be16(l4 + 2, dport);
    k::store_be16(l4 + 4, uint16_t(l4len));
    k::store_be16(l4 + 6, 0);
  } else if (p == Proto::TCP) {
    k::store_be16(l4, sport);
    k::store_be16(l4 + 2, dport);
    k::store_be32(l4 + 4, 1000u + f);
    k::store_be32(l4 + 8, 0);
    l4[12] = 0x50;
    l4[13] = 0x18;  // PSH|ACK
    k::store_be16(l4 + 14, 65535);
    k::store_be32(l4 + 16, 0);
  } else {
    l4[0] = spec_.ipv6 ? 128 : 8;  // echo request
    l4[1] = 0;
    k::store_be16(l4 + 2, 0);
    k::store_be16(l4 + 4, uint16_t(f));
    k::store_be16(l4 + 6, 0);
  }
}

void TrafficGen::build(uint64_t i, uint32_t f, uint8_t* out) const {
  if (frames_.empty()) return build_slow(i, out);
  uint32_t li = length_index(i);
  uint32_t len = lengths_[li];
  std::memcpy(out, frames_.data() + frame_off_[f * lengths_.size() + li], len);
  Proto p = proto_of(f);
  uint8_t* l4 = out + 14 + (spec_.ipv6 ? 40 : 20);
  uint8_t* pay = l4 + l4_header(p);
  // Per-packet fields, zero in the prebuilt frame; their 16-bit words are
  // added into the checksum (RFC 1624: C' = ~(~C + m')).
  uint32_t add = 0;
  k::store_be32(pay, uint32_t(i >> 32));
  k::store_be32(pay + 4, uint32_t(i));
  add = k::csum_partial(pay, 8);
  int csum_off;
  if (p == Proto::TCP) {
    k::store_be32(l4 + 4, uint32_t(1000u + f * 7919u + i * 1500u));
    add += k::csum_partial(l4 + 4, 4);
    csum_off = 16;
  } else if (p == Proto::ICMP) {
    k::store_be16(l4 + 6, uint16_t(i));
    add += uint16_t(i);
    csum_off = 2;
  } else {
    if (!spec_.ipv6) return;  // UDP over IPv4: no checksum
    csum_off = 6;
  }
  uint16_t c = k::load_be16(l4 + csum_off);
  uint16_t nc = k::csum_fold(uint32_t(uint16_t(~c)) + add);
  if (p == Proto::UDP && nc == 0) nc = 0xffff;
  k::store_be16(l4 + csum_off, nc);
}

void TrafficGen::build_slow(uint64_t i, uint8_t* out) const { fill(flow_of(i), length_of(i), i, true, out); }

void TrafficGen::fill(uint32_t f, uint32_t len, uint64_t i, bool with_seq, uint8_t* out) const {
  headers(f, len, out);
  Proto p = proto_of(f);
  uint32_t l3 = spec_.ipv6 ? 40 : 20;
  uint8_t* ip = out + 14;
  uint8_t* l4 = ip + l3;
  uint32_t l4len = len - 14 - l3;
  uint32_t hl = l4_header(p);
  std::memset(l4 + hl, 0, l4len - hl);
  // Sequence number: big-endian i in the first 8 payload bytes.
  if (with_seq) {
    k::store_be32(l4 + hl, uint32_t(i >> 32));
    k::store_be32(l4 + hl + 4, uint32_t(i));
  }
  uint8_t proto = p == Proto::TCP ? 6 : p == Proto::UDP ? 17 : (spec_.ipv6 ? 58 : 1);
  int csum_off = p == Proto::TCP ? 16 : p == Proto::UDP ? 6 : 2;
  if (p == Proto::ICMP) k::store_be16(l4 + 6, with_seq ? uint16_t(i) : 0);
  // TCP sequence numbers advance 1500 per packet index, so a flow's segments
  // never overlap.
  if (p == Proto::TCP) k::store_be32(l4 + 4, with_seq ? uint32_t(1000u + f * 7919u + i * 1500u) : 0);
  if (p == Proto::ICMP && !spec_.ipv6) {
    k::store_be16(l4 + 2, k::ip_checksum(l4, l4len));
    return;
  }
  if (p == Proto::UDP && !spec_.ipv6) return;  // UDP over IPv4: checksum 0 (none), as FastUDPFlows
  uint32_t sum = spec_.ipv6 ? k::ipv6_pseudo_sum(ip + 8, ip + 24, proto, l4len)
                            : k::ipv4_pseudo_sum(ip + 12, ip + 16, proto, l4len);
  uint16_t c = k::csum_fold(k::csum_partial(l4, l4len, sum));
  if (p == Proto::UDP && c == 0) c = 0xffff;
  k::store_be16(l4 + csum_off, c);
}

}  // namespace shoal::io
