// StripTransportHeader and UnstripTransportHeader: FastClick's pair that
// leaves a packet's transport payload first, and puts the headers back.
#include "shoal/elements/common.hh"

namespace shoal {

class StripTransportHeader : public PacketElement<StripTransportHeader> {
 public:
  void initialize() override {
    r_ = add_drop_reason("no-transport-header");
    r_proto_ = add_drop_reason("unsupported-protocol");
  }
  int process(Packet* p) {
    if (!p->has_network_header() || !p->has_transport_header()) return drop_code(r_);
    int64_t net = p->network_header_offset(), t = p->transport_header_offset();
    if (net < 0 || net + 10 > int64_t(p->length()) || t < 0 || t > int64_t(p->length())) return drop_code(r_);
    const uint8_t* ip = p->network_header();
    uint8_t proto = (ip[0] >> 4) == 6 ? ip[6] : ip[9];
    int64_t hl;
    if (proto == 6) {
      if (t + 13 > int64_t(p->length())) return drop_code(r_);
      hl = (p->transport_header()[12] >> 4) * 4;
    } else if (proto == 17 || proto == 1 || proto == 58) {
      hl = 8;
    } else {
      return drop_code(r_proto_);
    }
    if (t + hl > int64_t(p->length())) return drop_code(r_);
    p->pull(uint32_t(t + hl));
    return 0;
  }

 private:
  uint16_t r_ = 0, r_proto_ = 0;
};
SHOAL_ELEMENT(StripTransportHeader, .name = "StripTransportHeader", .ports = "1/1", .processing = "a/a",
              .summary = "strips everything up to the transport payload",
              .description =
                  "Strips the link, IP and transport headers (TCP's data offset; 8 bytes for UDP, ICMP and "
                  "ICMPv6), by the network and transport header annotations, which stay set for "
                  "UnstripTransportHeader and UnstripIPHeader. A packet without them, or cut short, is dropped "
                  "('no-transport-header'); another protocol, 'unsupported-protocol'.",
              .args = {}, .handlers = {},
              .example = "... -> CheckIPHeader -> StripTransportHeader -> Print(payload, CONTENTS ASCII) -> ...");

class UnstripTransportHeader : public PacketElement<UnstripTransportHeader> {
 public:
  void initialize() override { r_ = add_drop_reason("no-transport-header"); }
  int process(Packet* p) {
    if (!p->has_transport_header()) return drop_code(r_);
    int64_t off = p->transport_header_offset();
    if (off < 0 && !p->push(uint32_t(-off))) return drop_code(r_);
    return 0;
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(UnstripTransportHeader, .name = "UnstripTransportHeader", .ports = "1/1", .processing = "a/a",
              .summary = "moves a packet's start back to its transport header",
              .description =
                  "Puts back what lies between the transport header annotation and the packet's start (after "
                  "StripTransportHeader); a packet without the annotation is dropped ('no-transport-header').",
              .args = {}, .handlers = {},
              .example = "... -> StripTransportHeader -> ... -> UnstripTransportHeader -> UnstripIPHeader -> ...");

}  // namespace shoal
