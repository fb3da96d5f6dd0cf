// EraseIPPayload: zeroes the payload of TCP and UDP packets, as Click's.
#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class EraseIPPayload : public PacketElement<EraseIPPayload> {
 public:
  void initialize() override {
    r_proto_ = add_drop_reason("not-tcp-udp-icmp");
    r_nohdr_ = add_drop_reason("no-ip-header");
  }
  int process(Packet* p) {
    uint32_t hl;
    uint8_t* ip = ip_header(p, &hl);
    if (!ip) return drop_code(r_nohdr_);
    const uint8_t proto = ip[9];
    if (proto == 1) return 0;  // ICMP: kept (its payload is the offending packet's header)
    if (proto != 6 && proto != 17) return drop_code(r_proto_);
    const uint64_t t = uint64_t(p->network_header_offset()) + hl;
    uint64_t off = t;  // a later fragment is payload all through
    if ((k::load_be16(ip + 6) & 0x1fff) == 0) {
      const uint32_t sum_at = proto == 6 ? 16 : 6;
      if (proto == 6)
        off += t + 13 <= p->length() ? uint64_t(p->data()[t + 12] >> 4) * 4 : 20;
      else
        off += 8;
      if (t + sum_at + 2 <= p->length()) k::store_be16(p->data() + t + sum_at, 0);  // no longer right: zero
    }
    if (off < p->length()) {
      std::memset(p->data() + off, 0, p->length() - off);
      erased_.add();
    }
    return 0;
  }
  void add_handlers() override { add_stat_handler("erased", erased_); }

 private:
  uint16_t r_proto_ = 0, r_nohdr_ = 0;
  Stat erased_;
};
SHOAL_ELEMENT(EraseIPPayload, .name = "EraseIPPayload", .ports = "1/1", .processing = "a/a",
              .summary = "zeroes the payload of TCP and UDP packets",
              .description =
                  "Click's EraseIPPayload, for traces without contents: the bytes after the TCP or UDP header of "
                  "IP packets (network header annotation; all of a later fragment's) become zeros, and the "
                  "transport checksum, no longer right, becomes 0; the packets keep their length. ICMP packets "
                  "pass unchanged. Other protocols are dropped ('not-tcp-udp-icmp'), as Click's kills them, and "
                  "packets without an IP header too ('no-ip-header').",
              .handlers = {{"erased", "r", "packets whose payload was zeroed"}},
              .example =
                  "FromDump(in.pcap, STOP true) -> Strip(14) -> CheckIPHeader -> EraseIPPayload -> "
                  "ToDump(out.pcap, ENCAP IP);");

}  // namespace shoal
