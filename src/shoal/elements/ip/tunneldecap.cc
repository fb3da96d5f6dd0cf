// TunnelDecap: a tunnel packet passes, and its inner packet follows it as a
// packet of its own, as an IDS decodes them (Suricata's tunnel packets).

#include <fmt/format.h>
#include <pcap/pcap.h>

#include <cstring>
#include <optional>

#include "shoal/elements/common.hh"
#include "shoal/elements/flow/flowipmanager.hh"
#include "shoal/io/pcap.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

// Anno::user[0] of an inner packet: how it was carried (TunnelDecap::Kind).
// Anno::user16: where the outer IP header starts (from the packet's data).
// Anno::user[1..2]: where an inner Ethernet frame starts, from the outer IP
// header (little-endian; 0: the tunnel carries IP); user[3]: 1 when an
// ERSPAN type II header (8 bytes) comes just before that frame, 2 when
// user[1..2] is a PPP header's offset instead (GRE carrying PPP).
class TunnelDecap : public Element {
 public:
  enum Kind : uint8_t { None, IPv4, IPv6, Gre, Vxlan, Teredo, Geneve };
  static const char* pkt_src(uint8_t kind) {
    static const char* const kNames[] = {"wire/pcap",           "ipv4 tunnel",   "ipv6 tunnel",         "gre tunnel",
                                         "vxlan encapsulation", "teredo tunnel", "geneve encapsulation"};
    return kind < std::size(kNames) ? kNames[kind] : "wire/pcap";
  }
  void configure(Args& a) override {
    a.read("VXLAN_PORT", vxlan_port_).read("TEREDO_PORT", teredo_port_).read("GENEVE_PORT", geneve_port_);
    a.complete();
  }
  void initialize() override { r_pool_ = add_drop_reason("pool-exhausted"); }
  void push(int, PacketBatch* b) override {
    std::optional<OrderedOutput> out;  // made at the batch's first tunnel packet
    b->for_each([&](uint32_t i, Packet* p) {
      uint32_t len = 0;
      const uint8_t* ip = flow_ip_header(p, len);
      if (!ip || (p->anno().flags & (Anno::kTunnelInner | Anno::kFragment))) return;  // one level; datagrams only
      uint8_t kind = None;
      uint32_t eth = 0;
      bool erspan = false, ppp = false;
      uint32_t inner = inner_ip(ip, len, kind, eth, erspan, ppp);
      if (!inner) return;
      // the packets before this one, then this one, then its inner packet
      p->anno().flags |= Anno::kTunnelOuter;
      if (!out) out.emplace(*this, b);
      out->take_before(i + 1);
      Packet* q = worker().pool().alloc(p->length());
      if (!q) return count_lost(r_pool_);
      created();
      std::memcpy(q->data(), p->data(), p->length());
      q->anno() = p->anno();
      q->anno().flags = uint8_t((q->anno().flags & ~Anno::kTunnelOuter) | Anno::kTunnelInner);
      q->anno().user[0] = kind;
      q->anno().user[1] = uint8_t(eth), q->anno().user[2] = uint8_t(eth >> 8);
      q->anno().user[3] = erspan ? 1 : ppp ? 2 : 0;
      uint32_t outer_off = uint32_t(ip - p->data());
      q->anno().user16 = uint16_t(outer_off);
      if (p->has_mac_header()) q->set_mac_header(0);
      q->set_network_header(outer_off + inner);
      inner_.add();
      out->add(q);
    });
    if (!out) return output_push(0, b);
    out->finish();
  }
  void add_handlers() override { add_stat_handler("inner", inner_); }

 private:
  // Where the inner IP header starts (from the outer one), 0 if none.
  // An inner Ethernet frame's start goes to eth; erspan: an ERSPAN II header
  // before it; ppp: eth is a PPP header's start instead.
  uint32_t inner_ip(const uint8_t* ip, uint32_t len, uint8_t& kind, uint32_t& eth, bool& erspan, bool& ppp) const {
    uint32_t hl;
    uint8_t proto;
    if ((ip[0] >> 4) == 4 && len >= 20) {
      hl = uint32_t(ip[0] & 0xf) * 4;
      if ((k::load_be16(ip + 6) & 0x3fff) != 0) return 0;  // a fragment: reassemble first
      proto = ip[9];
      len = std::min<uint32_t>(len, k::load_be16(ip + 2));
      kind = IPv4;
    } else if ((ip[0] >> 4) == 6 && len >= 40) {
      hl = 40;
      proto = ip[6];
      len = std::min<uint32_t>(len, 40u + k::load_be16(ip + 4));
      kind = IPv6;
    } else {
      return 0;
    }
    if (hl > len) return 0;
    auto is_ip = [&](uint32_t at) {
      return at + 20 <= len && ((ip[at] >> 4) == 4 || ((ip[at] >> 4) == 6 && at + 40 <= len));
    };
    auto ether = [&](uint32_t at) -> uint32_t {  // an inner Ethernet frame's IP header
      if (at + 14 > len) return 0;
      eth = at;
      uint32_t t = at + 12;
      uint16_t type = k::load_be16(ip + t);
      while ((type == k::kEthVLAN || type == k::kEthQinQ) && t + 6 <= len) t += 4, type = k::load_be16(ip + t);
      return (type == k::kEthIPv4 || type == k::kEthIPv6) && is_ip(t + 2) ? t + 2 : 0;
    };
    if (proto == 4 || proto == 41) return is_ip(hl) && (ip[hl] >> 4) == (proto == 4 ? 4 : 6) ? hl : 0;
    if (proto == 47 && hl + 4 <= len) {  // GRE (RFC 2784, 2890): checksum, key, sequence when flagged
      uint16_t flags = k::load_be16(ip + hl), type = k::load_be16(ip + hl + 2);
      uint32_t at = hl + 4 + ((flags & 0x8000) ? 4 : 0) + ((flags & 0x2000) ? 4 : 0) + ((flags & 0x1000) ? 4 : 0);
      if ((flags & 0x0007) == 1) {  // PPTP's enhanced GRE (RFC 2637): key (length, call id), sequence, ack: PPP only
        if (type != kGrePpp || !(flags & 0x2000)) return 0;
        at += (flags & 0x0080) ? 4 : 0;
      } else if (flags & 0x0007) {
        return 0;
      }
      kind = Gre;
      if (type == kGrePpp) {  // PPP: an optional address and control, a 1- or 2-byte protocol (IPv4, IPv6)
        int off = at < len ? io::link_ip_offset(DLT_PPP, ip + at, len - at) : -1;
        if (off <= 0 || !is_ip(at + uint32_t(off))) return 0;
        ppp = true, eth = at;
        return at + uint32_t(off);
      }
      if (type == k::kEthIPv4 || type == k::kEthIPv6) return is_ip(at) ? at : 0;
      if (type == 0x6558) return ether(at);                     // transparent Ethernet bridging
      if (type == 0x88be) return erspan = true, ether(at + 8);  // ERSPAN type II
      return 0;
    }
    if (proto == 17 && hl + 8 <= len) {
      uint16_t sport = k::load_be16(ip + hl), dport = k::load_be16(ip + hl + 2);
      uint32_t at = hl + 8;
      if (dport == vxlan_port_ && at + 8 <= len && (ip[at] & 0x08)) {
        kind = Vxlan;
        return ether(at + 8);
      }
      if (dport == geneve_port_ && at + 8 <= len && (ip[at] >> 6) == 0 && k::load_be16(ip + at + 2) == 0x6558) {
        kind = Geneve;
        return ether(at + 8 + uint32_t(ip[at] & 0x3f) * 4);
      }
      if ((sport == teredo_port_ || dport == teredo_port_) && at + 40 <= len && (ip[at] >> 4) == 6) {
        // an IPv6 packet whose length fits the datagram exactly
        if (at + 40 + k::load_be16(ip + at + 4) != len) return 0;
        kind = Teredo;
        return at;
      }
    }
    return 0;
  }

  static constexpr uint16_t kGrePpp = 0x880b;
  uint16_t vxlan_port_ = 4789, teredo_port_ = 3544, geneve_port_ = 6081;
  uint16_t r_pool_ = 0;
  Stat inner_;
};
SHOAL_ELEMENT(
    TunnelDecap, .name = "TunnelDecap", .ports = "1/1", .processing = "h/h",
    .summary = "follows each tunnel packet with its inner packet",
    .description =
        "Every packet passes. A tunnel packet (IPv4 or IPv6 carrying IPv4 or IPv6: IP-in-IP, 6in4, 4in6, 6in6; GRE "
        "version 0 carrying IP, Ethernet (0x6558) or ERSPAN II; VXLAN on UDP VXLAN_PORT, Geneve on GENEVE_PORT "
        "carrying Ethernet; Teredo, IPv6 in UDP on TEREDO_PORT) is followed by its inner packet, a copy whose "
        "network header annotation is the inner IP header, so that flow tracking and detection downstream see the "
        "inner conversation as its own (Suricata's tunnel packets); the tunnel packet gets Anno::flags kTunnelOuter "
        "(IDSMatcher then inspects its headers, not its payload, as Suricata a tunnel's root). One level is decoded; "
        "an outer fragment is "
        "not (put an IPReassembler first). The inner packet carries: Anno::flags kTunnelInner, Anno::user[0] the "
        "tunnel kind (1 IPv4, 2 IPv6, 3 GRE, 4 VXLAN, 5 Teredo, 6 Geneve), Anno::user16 the outer IP header's "
        "offset, Anno::user[1..2] (little-endian) the inner Ethernet frame's offset from the outer IP header (0 when "
        "the tunnel carries IP), Anno::user[3] 1 when an ERSPAN type II header precedes that frame, 2 when "
        "user[1..2] is instead the offset of a PPP header (GRE carrying PPP, version 0 or PPTP's enhanced GRE).",
    .args = {{"VXLAN_PORT", "port", "VXLAN's UDP port (default 4789)"},
             {"TEREDO_PORT", "port", "Teredo's UDP port (default 3544)"},
             {"GENEVE_PORT", "port", "Geneve's UDP port (default 6081)"}},
    .handlers = {{"inner", "r", "inner packets made"}},
    .example =
        "FromDump(in.pcap) -> IPReassembler -> TunnelDecap -> FlowIPManager -> IDSMatcher(RULES local.rules, "
        "EVE eve.json) -> Discard;");

}  // namespace shoal
