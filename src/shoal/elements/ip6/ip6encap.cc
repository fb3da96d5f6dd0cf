// IP6Encap: prepends an IPv6 header, as Click's.
#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class IP6Encap : public PacketElement<IP6Encap> {
 public:
  void configure(Args& a) override {
    std::string proto, dst;
    IPv6Addr src;
    uint32_t hlim = 250, cls = 0;
    a.read_mp("PROTO", proto).read_mp("SRC", src).read_mp("DST", dst).read("HLIM", hlim).read("CLASS", cls);
    a.complete();
    if (!parse_ip_proto(proto, proto_)) a.fail(fmt::format("PROTO '{}' is not a protocol", proto));
    if (hlim > 255) a.fail("HLIM is at most 255");
    if (cls > 255) a.fail("CLASS is at most 255");
    if (!set_dst(dst)) a.fail(fmt::format("DST '{}' is neither an IPv6 address nor DST_ANNO", dst));
    std::memcpy(src_, src.b.data(), 16);
    hlim_ = uint8_t(hlim), class_ = uint8_t(cls);
  }
  void initialize() override {
    r_room_ = add_drop_reason("no-headroom");
    r_big_ = add_drop_reason("too-long");
  }
  void add_handlers() override {
    add_read_handler("src", [this] { return format_ipv6(src_); });
    add_write_handler("src", [this](const std::string& v) {
      IPv6Addr x;
      if (!parse_ipv6(trim(v), x)) throw std::runtime_error(fmt::format("SRC '{}' is not an IPv6 address", v));
      std::memcpy(src_, x.b.data(), 16);
    });
    add_read_handler("dst", [this] { return dst_anno_ ? std::string("DST_ANNO") : format_ipv6(dst_); });
    add_write_handler("dst", [this](const std::string& v) {
      if (!set_dst(trim(v)))
        throw std::runtime_error(fmt::format("DST '{}' is neither an IPv6 address nor DST_ANNO", v));
    });
  }
  int process(Packet* p) {
    if (p->length() > 65535) return drop_code(r_big_);  // (the payload length field)
    const uint32_t plen = p->length();
    uint8_t* ip6 = p->push(40);
    if (!ip6) return drop_code(r_room_);
    k::store_be32(ip6, uint32_t(6) << 28 | uint32_t(class_) << 20);
    k::store_be16(ip6 + 4, uint16_t(plen));
    ip6[6] = proto_;
    ip6[7] = hlim_;
    std::memcpy(ip6 + 8, src_, 16);
    // DST_ANNO: the packet's annotation, when it has one (else the zero address)
    std::memcpy(ip6 + 24, dst_anno_ ? p->anno().dst_ip6 : dst_, 16);
    std::memcpy(p->anno().dst_ip6, ip6 + 24, 16);
    p->set_network_header(0);
    p->set_transport_header(40);
    return 0;
  }

 private:
  bool set_dst(std::string_view v) {
    if (v == "DST_ANNO") return dst_anno_ = true;
    IPv6Addr x;
    if (!parse_ipv6(v, x)) return false;
    std::memcpy(dst_, x.b.data(), 16);
    dst_anno_ = false;
    return true;
  }
  uint8_t proto_ = 0, hlim_ = 250, class_ = 0, src_[16] = {}, dst_[16] = {};
  bool dst_anno_ = false;
  uint16_t r_room_ = 0, r_big_ = 0;
};
SHOAL_ELEMENT(IP6Encap, .name = "IP6Encap", .ports = "1/1", .processing = "a/a", .summary = "prepends an IPv6 header",
              .description =
                  "Click's IP6Encap: pushes a 40-byte IPv6 header with next header PROTO, source SRC, destination "
                  "DST (DST_ANNO: the packet's DST_IP6 annotation), hop limit HLIM and traffic class CLASS, and "
                  "sets the network header and DST_IP6 annotations. A packet without room is dropped "
                  "('no-headroom'), one longer than 65,535 bytes too ('too-long').",
              .args = {{"PROTO", "protocol", "number or name (tcp, udp, icmp6, ipip, gre...)"},
                       {"SRC", "IPv6 address", "source"},
                       {"DST", "IPv6 address or DST_ANNO", "destination"},
                       {"HLIM", "unsigned", "hop limit (default 250)"},
                       {"CLASS", "unsigned", "traffic class (default 0)"}},
              .handlers = {{"src", "rw", "SRC"}, {"dst", "rw", "DST"}},
              .example = "src -> UDPIPEncap(...) -> IP6Encap(ipip, 2001:db8::1, 2001:db8::2, HLIM 20) -> ...;");

}  // namespace shoal
