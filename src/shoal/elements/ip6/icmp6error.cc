// ICMP6Error: answers IPv6 packets with ICMPv6 errors.
#include <fmt/format.h>
#include <algorithm>
#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"
#include "shoal/elements/ip/icmperrorbase.hh"

namespace shoal {

class ICMP6Error : public ICMPErrorBase<ICMP6Error> {
 public:
  void configure(Args& a) override {
    IPv6Addr src;
    std::string type, code = "0";
    a.read_mp("SRC", src).read_mp("TYPE", type).read_p("CODE", code).read("MTU", mtu_);
    a.complete();
    std::memcpy(src_, src.b.data(), 16);
    static constexpr IcmpName types[] = {
        {"unreachable", 1}, {"packettoobig", 2}, {"toobig", 2}, {"timeexceeded", 3}, {"parameterproblem", 4}};
    static constexpr IcmpName unreach[] = {{"noroute", 0}, {"admin", 1}, {"beyondscope", 2}, {"addr", 3},
                                           {"address", 3}, {"port", 4},  {"policy", 5},      {"reject", 6}};
    static constexpr IcmpName timeex[] = {{"transit", 0}, {"hlim", 0}, {"reassembly", 1}};
    static constexpr IcmpName param[] = {{"header", 0}, {"nextheader", 1}, {"option", 2}};
    int t, c = 0;
    if (!lookup_icmp_name(types, type, t) || t < 1 || t > 4)
      a.fail(fmt::format("unknown ICMPv6 error type '{}'", type));
    bool ok = t == 1   ? lookup_icmp_name(unreach, code, c)
              : t == 3 ? lookup_icmp_name(timeex, code, c)
              : t == 4 ? lookup_icmp_name(param, code, c)
                       : code == "0";
    if (!ok) a.fail(fmt::format("'{}' is not a code of ICMPv6 type '{}'", code, type));
    type_ = uint8_t(t);
    code_ = uint8_t(c);
    if (mtu_ < 1280) a.fail("MTU must be at least 1280 (RFC 8200)");
  }
  // RFC 4443 2.4(e): no error for errors, multicast destinations (but packet
  // too big), link multicasts, or unspecified or multicast sources.
  Packet* make_error(Packet* p, uint16_t& why) {
    const uint8_t* ip = ip6_header(p);
    if (!ip) return why = r_bad_, nullptr;
    if (ip[8] == 0xff || is_zero16(ip + 8)) return nullptr;
    bool mcast =
        ip[24] == 0xff || p->anno().packet_type == Anno::kMulticast || p->anno().packet_type == Anno::kBroadcast;
    if (mcast && type_ != 2) return nullptr;
    uint64_t avail = p->length() - uint64_t(p->network_header_offset());
    if (ip[6] == 58 && avail > 40 && ip[40] < 128) return nullptr;  // an ICMPv6 error itself
    uint32_t quote = uint32_t(std::min<uint64_t>(avail, 1280 - 48));
    uint32_t len = 48 + quote;
    Packet* q = new_error(p, len, why);
    if (!q) return nullptr;
    uint8_t* n = q->data();
    std::memset(n, 0, 48);
    n[0] = 0x60;
    k::store_be16(n + 4, uint16_t(8 + quote));
    n[6] = 58;
    n[7] = 255;
    std::memcpy(n + 8, src_, 16);
    std::memcpy(n + 24, ip + 8, 16);
    uint8_t* ic = n + 40;
    ic[0] = type_;
    ic[1] = code_;
    if (type_ == 2) k::store_be32(ic + 4, mtu_);
    if (type_ == 4) k::store_be32(ic + 4, p->anno().param_off);
    std::memcpy(ic + 8, ip, quote);
    uint32_t sum = k::ipv6_pseudo_sum(n + 8, n + 24, 58, 8 + quote);
    k::store_be16(ic + 2, k::csum_fold(k::csum_partial(ic, 8 + quote, sum)));
    q->set_network_header(0);
    q->set_transport_header(40);
    std::memcpy(q->anno().dst_ip6, ip + 8, 16);
    return q;
  }

 private:
  uint8_t src_[16] = {}, type_ = 0, code_ = 0;
  uint32_t mtu_ = 1280;
};
SHOAL_ELEMENT(ICMP6Error, .name = "ICMP6Error", .ports = "1/1", .processing = "h/h",
              .summary = "answers IPv6 packets with ICMPv6 errors",
              .description =
                  "Replaces each IPv6 packet (network header annotation) by an ICMPv6 error (RFC 4443) from SRC "
                  "to its source, quoting as much as fits 1280 bytes. TYPE: unreachable (codes noroute, admin, "
                  "beyondscope, address, port, policy, reject), packettoobig (MTU), timeexceeded (transit, "
                  "reassembly), parameterproblem (header, nextheader, option; the pointer annotation); numbers "
                  "too. No error answers an ICMPv6 error, an unspecified or multicast source, or a multicast "
                  "(except packet too big): those are dropped ('no-icmp-allowed'). The original is counted as "
                  "dropped ('answered-with-icmp'); the error gets DST_IP6.",
              .args = {{"SRC", "IPv6 address", "the router's address"},
                       {"TYPE", "name | number", "ICMPv6 type"},
                       {"CODE", "name | number", "ICMPv6 code (default 0)"},
                       {"MTU", "unsigned", "the MTU a packettoobig error reports (default 1280)"}},
              .handlers = {{"errors", "r", "errors made"}},
              .example = "dh[1] -> ICMP6Error(fd00:1::1, timeexceeded) -> rt;");

}  // namespace shoal
