// What ICMPIPEncap and ICMPPingEncap share: pushing an ICMP header and an
// IPv4 header, both checksummed, with the IP ID counting packets.
#pragma once
#include <algorithm>
#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

template <class D>
class IcmpEncap : public PacketElement<D> {
 public:
  void initialize() override { r_ = this->add_drop_reason("no-headroom"); }
  int process(Packet* p) {
    uint8_t* ip = p->push(20 + hl_);
    if (!ip) return PacketElement<D>::drop_code(r_);
    std::memset(ip, 0, 20 + hl_);
    ip[0] = 0x45;
    k::store_be16(ip + 2, uint16_t(std::min<uint32_t>(p->length(), 65535)));
    k::store_be16(ip + 4, ip_id_);
    ip[8] = 255;
    ip[9] = 1;
    std::memcpy(ip + 12, src_.b.data(), 4);
    std::memcpy(ip + 16, dst_.b.data(), 4);
    k::store_be16(ip + 10, k::ip_checksum(ip, 20));
    uint8_t* icmp = ip + 20;
    icmp[0] = type_;
    icmp[1] = code_;
    if (type_ == 0 || type_ == 8 || type_ == 13 || type_ == 14 || type_ == 15 || type_ == 16) {
      k::store_be16(icmp + 4, id_);
      k::store_be16(icmp + 6, ip_id_);
    }
    k::store_be16(icmp + 2, k::ip_checksum(icmp, p->length() - 20));
    ip_id_ = uint16_t(ip_id_ + (skip_zero_ && ip_id_ == 0xffff ? 2 : 1));
    p->set_network_header(0);
    p->set_transport_header(20);
    std::memcpy(p->anno().dst_ip, dst_.b.data(), 4);
    return 0;
  }

 protected:
  IPv4Addr src_, dst_;
  uint16_t id_ = 0, ip_id_ = 1, r_ = 0;
  uint8_t type_ = 8, code_ = 0;
  uint32_t hl_ = 8;         // the ICMP header's length
  bool skip_zero_ = false;  // the counter goes from 65535 to 1 (Click's ICMPPingEncap)
};

}  // namespace shoal
