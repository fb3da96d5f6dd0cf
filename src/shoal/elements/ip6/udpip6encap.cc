// UDPIP6Encap: FastClick's UDPIP6Encap, prepending UDP and IPv6 headers
// (the UDP checksum always computed: IPv6 requires it).
#include <fmt/format.h>

#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

class UDPIP6Encap : public PacketElement<UDPIP6Encap> {
 public:
  void configure(Args& a) override {
    std::string sp, dp, dst;
    a.read_mp("SRC", src_).read_mp("SPORT", sp).read_mp("DST", dst).read_mp("DPORT", dp);
    a.complete();
    if (!parse_port(trim(sp), 17, sport_)) a.fail(fmt::format("SPORT: '{}' is not a port", sp));
    if (!parse_port(trim(dp), 17, dport_)) a.fail(fmt::format("DPORT: '{}' is not a port", dp));
    dst_anno_ = trim(dst) == "DST_ANNO";
    if (!dst_anno_ && !parse_ipv6(trim(dst), dst_)) a.fail(fmt::format("DST: '{}' is not an IPv6 address", dst));
  }
  void initialize() override {
    r_room_ = add_drop_reason("no-headroom");
    r_big_ = add_drop_reason("too-long");
  }
  int process(Packet* p) {
    uint32_t len = p->length() + 8;
    if (len > 65535) return drop_code(r_big_);
    uint8_t* h = p->push(48);
    if (!h) return drop_code(r_room_);
    k::store_be32(h, 6u << 28);
    k::store_be16(h + 4, uint16_t(len));
    h[6] = 17;
    h[7] = 255;
    std::memcpy(h + 8, src_.b.data(), 16);
    std::memcpy(h + 24, dst_anno_ ? p->anno().dst_ip6 : dst_.b.data(), 16);
    uint8_t* u = h + 40;
    k::store_be16(u, sport_);
    k::store_be16(u + 2, dport_);
    k::store_be16(u + 4, uint16_t(len));
    k::store_be16(u + 6, 0);
    uint16_t c = k::csum_fold(k::csum_partial(u, len, k::ipv6_pseudo_sum(h + 8, h + 24, 17, len)));
    k::store_be16(u + 6, c ? c : 0xffff);
    p->set_network_header(0);
    p->set_transport_header(40);
    return 0;
  }
  void add_handlers() override {
    add_read_handler("src", [this] { return format_ipv6(src_.b.data()); });
    add_read_handler("sport", [this] { return std::to_string(sport_); });
    add_read_handler("dst", [this] { return dst_anno_ ? std::string("DST_ANNO") : format_ipv6(dst_.b.data()); });
    add_read_handler("dport", [this] { return std::to_string(dport_); });
  }

 private:
  IPv6Addr src_, dst_;
  uint16_t sport_ = 0, dport_ = 0;
  bool dst_anno_ = false;
  uint16_t r_room_ = 0, r_big_ = 0;
};
SHOAL_ELEMENT(UDPIP6Encap, .name = "UDPIP6Encap", .ports = "1/1", .processing = "a/a",
              .summary = "prepends UDP and IPv6 headers",
              .description =
                  "Pushes a 40-byte IPv6 header (next header UDP, hop limit 255, traffic class and flow label 0) "
                  "and an 8-byte UDP header from SPORT to DPORT, with the UDP checksum over the whole packet "
                  "(mandatory in IPv6), and sets the network and transport header annotations. DST_ANNO as DST "
                  "takes each packet's DST_IP6 annotation. Packets without 48 bytes of headroom are dropped "
                  "('no-headroom'), those that would make a UDP datagram over 65,535 bytes too ('too-long').",
              .args = {{"SRC", "IPv6 address", "source address"},
                       {"SPORT", "UDP port", "source port"},
                       {"DST", "IPv6 address", "destination address, or DST_ANNO"},
                       {"DPORT", "UDP port", "destination port"}},
              .handlers = {{"src", "r", "SRC"}, {"sport", "r", "SPORT"}, {"dst", "r", "DST"}, {"dport", "r", "DPORT"}},
              .example =
                  "InfiniteSource(LIMIT 5) -> UDPIP6Encap(2001:db8::1, 1234, 2001:db8::2, 1234) -> "
                  "EtherEncap(0x86dd, 0:1:2:3:4:5, 6:7:8:9:a:b) -> ToDump(out.pcap);");

}  // namespace shoal
