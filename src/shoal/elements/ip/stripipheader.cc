// StripIPHeader: removes the IP header, leaving the transport header first, as Click's.
#include "shoal/elements/common.hh"

namespace shoal {

class StripIPHeader : public PacketElement<StripIPHeader> {
 public:
  void initialize() override { r_ = add_drop_reason("no-ip-header"); }
  int process(Packet* p) {
    if (!p->has_network_header()) return drop_code(r_);
    int64_t off = p->network_header_offset();
    if (off < 0 || off >= int64_t(p->length())) return drop_code(r_);
    uint32_t hl = (p->network_header()[0] & 0xf) * 4u;
    int64_t t = p->has_transport_header() ? p->transport_header_offset() : off + hl;
    if (t < 0 || t > int64_t(p->length())) return drop_code(r_);
    p->pull(uint32_t(t));
    return 0;
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(StripIPHeader, .name = "StripIPHeader", .ports = "1/1", .processing = "a/a",
              .summary = "removes the IP header, leaving the transport header first",
              .description =
                  "Strips everything up to the transport header (the IP header annotations say where); the bytes "
                  "stay in the headroom for UnstripIPHeader. Packets without a network header annotation are "
                  "dropped ('no-ip-header').",
              .args = {}, .handlers = {},
              .example = "... -> CheckIPHeader -> StripIPHeader -> ... -> UnstripIPHeader -> ...");

class UnstripIPHeader : public PacketElement<UnstripIPHeader> {
 public:
  void initialize() override { r_ = add_drop_reason("no-ip-header"); }
  int process(Packet* p) {
    if (!p->has_network_header()) return drop_code(r_);
    int64_t off = p->network_header_offset();
    if (off < 0) p->push(uint32_t(-off));
    return 0;
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(UnstripIPHeader, .name = "UnstripIPHeader", .ports = "1/1", .processing = "a/a",
              .summary = "puts back the IP header that StripIPHeader removed",
              .description =
                  "Moves the packet's start back to its network header annotation when that lies in the headroom "
                  "(after StripIPHeader). Packets without the annotation are dropped ('no-ip-header').",
              .args = {}, .handlers = {}, .example = "... -> StripIPHeader -> ... -> UnstripIPHeader -> ...");

}  // namespace shoal
