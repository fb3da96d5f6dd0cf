// IPEncap: prepends an IPv4 header.
#include <fmt/format.h>
#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class IPEncap : public PacketElement<IPEncap> {
 public:
  void configure(Args& a) override {
    std::string proto;
    IPv4Addr src, dst;
    bool df = false;
    a.read_mp("PROTO", proto).read_mp("SRC", src).read_mp("DST", dst);
    a.read("TOS", tos_).read("TTL", ttl_).read("DF", df);
    a.complete();
    if (!parse_ip_proto(proto, proto_)) a.fail(fmt::format("PROTO '{}' is not a protocol", proto));
    std::memcpy(src_, src.b.data(), 4);
    std::memcpy(dst_, dst.b.data(), 4);
    df_ = df;
  }
  void initialize() override {
    r_room_ = add_drop_reason("no-headroom");
    r_big_ = add_drop_reason("too-long");
  }
  int process(Packet* p) {
    if (p->length() + 20 > 65535) return drop_code(r_big_);
    uint8_t* ip = p->push(20);
    if (!ip) return drop_code(r_room_);
    ip[0] = 0x45;
    ip[1] = tos_;
    k::store_be16(ip + 2, uint16_t(p->length()));
    k::store_be16(ip + 4, id_++);
    k::store_be16(ip + 6, df_ ? 0x4000 : 0);
    ip[8] = ttl_;
    ip[9] = proto_;
    std::memcpy(ip + 12, src_, 4);
    std::memcpy(ip + 16, dst_, 4);
    set_ip_checksum(ip, 20);
    p->set_network_header(0);
    p->set_transport_header(20);
    std::memcpy(p->anno().dst_ip, dst_, 4);
    return 0;
  }

 private:
  uint8_t proto_ = 0, tos_ = 0, ttl_ = 250, src_[4] = {}, dst_[4] = {};
  bool df_ = false;
  uint16_t id_ = 0;
  uint16_t r_room_ = 0, r_big_ = 0;
};
SHOAL_ELEMENT(IPEncap, .name = "IPEncap", .ports = "1/1", .processing = "a/a", .summary = "prepends an IPv4 header",
              .description =
                  "Pushes a 20-byte IP header (no options) with protocol PROTO, source SRC and "
                  "destination DST, a fresh IP ID per packet, and sets the network header and DST_IP "
                  "annotations. Packets without room: dropped ('no-headroom').",
              .args = {{"PROTO", "protocol", "number or name (tcp, udp, icmp, ipip, gre, esp, ah)"},
                       {"SRC", "IPv4 address", "source"},
                       {"DST", "IPv4 address", "destination"},
                       {"TOS", "unsigned", "type of service (default 0)"},
                       {"TTL", "unsigned", "time to live (default 250)"},
                       {"DF", "boolean", "set don't-fragment (default false)"}},
              .example = "InfiniteSource(LENGTH 64) -> IPEncap(udp, 10.0.0.1, 10.0.0.2) -> ...;");

}  // namespace shoal
