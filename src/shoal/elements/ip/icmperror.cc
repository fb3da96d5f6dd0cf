// ICMPError: answers an IPv4 packet with an ICMP error (RFC 792, RFC 1812
// 4.3.2).
#include <fmt/format.h>
#include <algorithm>
#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"
#include "shoal/elements/ip/icmperrorbase.hh"

namespace shoal {

namespace {

constexpr IcmpName kTypes[] = {{"unreachable", 3},        {"sourcequench", 4},      {"redirect", 5},
                               {"timeexceeded", 11},      {"parameterproblem", 12}, {"time-exceeded", 11},
                               {"parameter-problem", 12}, {"source-quench", 4},     {"dest-unreachable", 3}};
constexpr IcmpName kUnreach[] = {{"net", 0},
                                 {"host", 1},
                                 {"protocol", 2},
                                 {"port", 3},
                                 {"needfrag", 4},
                                 {"srcroutefail", 5},
                                 {"net-unknown", 6},
                                 {"host-unknown", 7},
                                 {"isolated", 8},
                                 {"net-prohibited", 9},
                                 {"host-prohibited", 10},
                                 {"tos-net", 11},
                                 {"tos-host", 12},
                                 {"filter-prohibited", 13},
                                 {"admin-prohibited", 13},
                                 {"host-precedence", 14},
                                 {"precedence-cutoff", 15}};
constexpr IcmpName kTimeEx[] = {{"transit", 0}, {"reassembly", 1}};
constexpr IcmpName kParam[] = {{"erroratptr", 0}, {"missingopt", 1}, {"length", 2}};
constexpr IcmpName kRedirect[] = {{"net", 0}, {"host", 1}, {"tos-net", 2}, {"tos-host", 3}};

bool unicast_source(uint32_t a) { return a != 0 && a != 0xffffffffu && (a >> 24) != 127 && (a >> 28) < 0xe; }

}  // namespace

class ICMPError : public ICMPErrorBase<ICMPError> {
 public:
  void configure(Args& a) override {
    IPv4Addr src;
    std::string type, code = "0", badaddrs;
    a.read_mp("SRC", src).read_mp("TYPE", type).read_p("CODE", code);
    a.read("BADADDRS", badaddrs).read("MTU", mtu_).read("SET_FIX_ANNO", fix_anno_);
    a.complete();
    std::memcpy(src_, src.b.data(), 4);
    int t;
    if (!lookup_icmp_name(kTypes, type, t)) a.fail(fmt::format("unknown ICMP error type '{}'", type));
    type_ = uint8_t(t);
    int c = -1;
    bool ok = false;
    if (t == 3)
      ok = lookup_icmp_name(kUnreach, code, c);
    else if (t == 11)
      ok = lookup_icmp_name(kTimeEx, code, c);
    else if (t == 12)
      ok = lookup_icmp_name(kParam, code, c);
    else if (t == 5)
      ok = lookup_icmp_name(kRedirect, code, c);
    else
      ok = lookup_icmp_name(kTimeEx, code, c) && c == 0;
    if (!ok) a.fail(fmt::format("'{}' is not a code of ICMP type '{}'", code, type));
    if (t != 3 && t != 11 && t != 12 && t != 5 && t != 4) a.fail(fmt::format("ICMP type {} is not an error", t));
    code_ = uint8_t(c);
    std::string bad;
    for (auto& w : split_args(badaddrs, {}, false))
      if (!parse_ipv4_list(w.text, bad_, bad)) a.fail(fmt::format("BADADDRS: bad address '{}'", bad));
    if (mtu_ < 68 || mtu_ > 65535) a.fail("MTU must be 68 to 65535");
  }
  // RFC 1812 4.3.2.7: never answer ICMP errors, broadcasts, multicasts,
  // non-first fragments, or packets from non-unicast sources.
  Packet* make_error(Packet* p, uint16_t& why) {
    uint32_t hl;
    if (!ip_header(p, &hl)) return why = r_bad_, nullptr;
    const uint8_t* ip = p->network_header();
    uint32_t src = k::load_be32(ip + 12), dst = k::load_be32(ip + 16);
    if (!unicast_source(src) || bad_addr(src)) return nullptr;
    if (dst == 0xffffffffu || (dst >> 28) == 0xe || bad_addr(dst)) return nullptr;
    if (p->anno().packet_type == Anno::kBroadcast || p->anno().packet_type == Anno::kMulticast) return nullptr;
    if ((k::load_be16(ip + 6) & 0x1fff) != 0) return nullptr;
    uint64_t avail = p->length() - uint64_t(p->network_header_offset());
    if (ip[9] == 1) {
      if (avail < hl + 1) return nullptr;
      uint8_t t = ip[hl];
      // Errors (and unknown types) never get errors; queries do.
      if (t != 0 && t != 8 && t != 13 && t != 14 && t != 15 && t != 16 && t != 17 && t != 18) return nullptr;
    }
    // As much of the original as fits a 576-byte datagram (RFC 1812 4.3.2.3).
    uint32_t tot = std::min<uint32_t>(k::load_be16(ip + 2), uint32_t(avail));
    uint32_t quote = std::min<uint32_t>(tot, 576 - 28);
    uint32_t len = 28 + quote;
    Packet* q = new_error(p, len, why);
    if (!q) return nullptr;
    uint8_t* n = q->data();
    std::memset(n, 0, 28);
    n[0] = 0x45;
    k::store_be16(n + 2, uint16_t(len));
    n[8] = 255;
    n[9] = 1;
    std::memcpy(n + 12, src_, 4);
    std::memcpy(n + 16, ip + 12, 4);
    k::store_be16(n + 10, k::ip_checksum(n, 20));
    uint8_t* ic = n + 20;
    ic[0] = type_;
    ic[1] = code_;
    if (type_ == 12 && code_ == 0)
      ic[4] = p->anno().param_off;
    else if (type_ == 5)
      std::memcpy(ic + 4, p->anno().dst_ip, 4);  // the better gateway
    else if (type_ == 3 && code_ == 4)
      k::store_be16(ic + 6, uint16_t(mtu_));
    std::memcpy(ic + 8, ip, quote);
    k::store_be16(ic + 2, k::ip_checksum(ic, 8 + quote));
    q->set_network_header(0);
    q->set_transport_header(20);
    std::memcpy(q->anno().dst_ip, ip + 12, 4);
    if (fix_anno_) q->anno().flags |= Anno::kFixIPSrc;
    return q;
  }

 private:
  bool bad_addr(uint32_t a) const { return std::find(bad_.begin(), bad_.end(), a) != bad_.end(); }
  uint8_t src_[4] = {}, type_ = 0, code_ = 0;
  uint32_t mtu_ = 576;
  bool fix_anno_ = true;
  std::vector<uint32_t> bad_;
};
SHOAL_ELEMENT(ICMPError, .name = "ICMPError", .ports = "1/1-2", .processing = "h/h",
              .summary = "answers IPv4 packets with ICMP errors",
              .description =
                  "Replaces each IP packet (network header annotation) by an ICMP error from SRC to its source, "
                  "quoting as much of it as fits 576 bytes (RFC 1812 4.3.2.3). TYPE: unreachable (codes net, "
                  "host, protocol, port, needfrag, srcroutefail, net-unknown, host-unknown, isolated, "
                  "net-prohibited, host-prohibited, tos-net, tos-host, admin-prohibited, host-precedence, "
                  "precedence-cutoff), timeexceeded (transit, reassembly), parameterproblem (erroratptr with "
                  "the pointer from the annotation IPGWOptions sets, missingopt, length), redirect (net, host, "
                  "tos-net, tos-host; the gateway is the DST_IP annotation), sourcequench; codes may be numbers. "
                  "Fragmentation needed carries MTU as the next-hop MTU (RFC 1191). No error answers an ICMP error, "
                  "a broadcast or multicast (by address, BADADDRS or link type), a non-first fragment or a "
                  "non-unicast source (RFC 1812 4.3.2.7): those leave on output 1 if it exists, else are dropped "
                  "('no-icmp-allowed'). The original is counted as dropped ('answered-with-icmp'); the error "
                  "gets DST_IP and the fix-source annotation, so FixIPSrc gives it the outgoing interface's "
                  "address.",
              .args = {{"SRC", "IPv4 address", "the router's address"},
                       {"TYPE", "name | number", "ICMP type"},
                       {"CODE", "name | number", "ICMP code (default 0)"},
                       {"BADADDRS", "addresses", "broadcast addresses of the router's networks"},
                       {"MTU", "unsigned", "next-hop MTU for unreachable needfrag (default 576)"},
                       {"SET_FIX_ANNO", "boolean", "set the fix-source annotation (default true)"}},
              .handlers = {{"errors", "r", "errors made"}},
              .example = "dt :: DecIPTTL; dt[1] -> ICMPError(10.0.0.1, timeexceeded) -> rt;");

}  // namespace shoal
