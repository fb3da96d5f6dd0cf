// IPsecEncap: Click's outer header for an ESP tunnel packet: an IPv4 header
// to the gateway in the DST_IP annotation, its source left to FixIPSrc.
#include <fmt/format.h>

#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class IPsecEncap : public PacketElement<IPsecEncap> {
 public:
  void configure(Args& a) override {
    std::string proto;
    a.read_mp("PROTO", proto).read("TOS", tos_).read("TTL", ttl_);
    a.complete();
    if (!parse_ip_proto(proto, proto_)) a.fail(fmt::format("PROTO '{}' is not a protocol", proto));
  }
  void initialize() override {
    r_room_ = add_drop_reason("no-headroom");
    r_big_ = add_drop_reason("too-long");
  }
  int process(Packet* p) {
    if (p->length() + 20 > 65535) return drop_code(r_big_);
    if (p->headroom() < 20 && !p->shift_data(int32_t(20 - p->headroom()))) return drop_code(r_room_);
    uint8_t* ip = p->push(20);
    if (!ip) return drop_code(r_room_);
    ip[0] = 0x45;
    ip[1] = tos_;
    k::store_be16(ip + 2, uint16_t(p->length()));
    k::store_be16(ip + 4, id_++);
    k::store_be16(ip + 6, 0);
    ip[8] = ttl_;
    ip[9] = proto_;
    std::memset(ip + 12, 0, 4);                 // the sending interface's address: FixIPSrc
    std::memcpy(ip + 16, p->anno().dst_ip, 4);  // the tunnel's far end (RadixIPsecLookup's gateway)
    set_ip_checksum(ip, 20);
    p->anno().flags |= Anno::kFixIPSrc;
    p->set_network_header(0);
    p->set_transport_header(20);
    return 0;
  }

 private:
  uint8_t proto_ = 50, tos_ = 0, ttl_ = 250;
  uint16_t id_ = 0;
  uint16_t r_room_ = 0, r_big_ = 0;
};
SHOAL_ELEMENT(IPsecEncap, .name = "IPsecEncap", .ports = "1/1", .processing = "a/a",
              .summary = "prepends a tunnel's outer IPv4 header",
              .description =
                  "Click's outer header for ESP tunnels: a 20-byte IPv4 header with protocol PROTO (esp, 50, for "
                  "IPsec) to the address in the DST_IP annotation (the gateway RadixIPsecLookup's route gave), a "
                  "fresh IP ID, TTL 250, and source 0.0.0.0 with the FIX_IP_SRC annotation set, so that FixIPSrc "
                  "on the way out writes the sending interface's address. Drops: no-headroom, too-long.",
              .args = {{"PROTO", "protocol", "number or name (esp, ah, ipip, udp...)"},
                       {"TOS", "unsigned", "type of service (default 0)"},
                       {"TTL", "unsigned", "time to live (default 250)"}},
              .example = "... -> IPsecAuthHMACSHA1(0) -> IPsecEncap(50) -> [0]rt;");

}  // namespace shoal
