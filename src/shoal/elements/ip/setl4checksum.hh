// What SetTCPChecksum and SetUDPChecksum share (Click's): the transport
// checksum of IPv4 packets computed again over IP's length, with the
// pseudo-header. A packet of another protocol, a fragment or one whose
// lengths do not hold goes to output 1 when there is one, else is dropped
// with its reason.
#pragma once
#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

template <class D>
class SetL4Checksum : public PacketElement<D> {
 public:
  void initialize() override {
    r_[0] = this->add_drop_reason(D::kNotMine);
    r_[1] = this->add_drop_reason("fragment");
    r_[2] = this->add_drop_reason("bad-length");
  }
  int process(Packet* p) {
    uint32_t hl;
    uint8_t* ip = ip_header(p, &hl);
    if (!ip || ip[9] != D::kProto) return fail(0);
    if (k::load_be16(ip + 6) & 0x3fff) return fail(1);  // (a fragment's sum would need the whole datagram)
    uint32_t iplen = k::load_be16(ip + 2);
    if (iplen < hl || int64_t(iplen) > int64_t(p->length()) - p->network_header_offset()) return fail(2);
    uint8_t* l4 = ip + hl;
    uint32_t len = iplen - hl;
    if (!static_cast<D*>(this)->set(ip, l4, len)) return fail(2);
    p->set_transport_header(uint32_t(l4 - p->data()));
    return 0;
  }

 private:
  int fail(int why) { return this->noutputs() > 1 ? 1 : this->drop_code(r_[size_t(why)]); }
  uint16_t r_[3] = {};
};

}  // namespace shoal
