// AggregateLength: sets the aggregate annotation to the packet's length.
#include "shoal/elements/common.hh"

namespace shoal {

class AggregateLength : public PacketElement<AggregateLength> {
 public:
  void configure(Args& a) override {
    a.read("IP", ip_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("no-ip-header"); }
  int process(Packet* p) {
    if (!ip_) return p->anno().aggregate = p->length(), 0;
    if (!p->has_network_header() || p->network_header_offset() < 0 ||
        uint64_t(p->network_header_offset()) > p->length())
      return noutputs() > 1 ? 1 : drop_code(r_);
    p->anno().aggregate = uint32_t(p->length() - uint64_t(p->network_header_offset()));
    return 0;
  }

 private:
  bool ip_ = false;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(AggregateLength, .name = "AggregateLength", .ports = "1/1-2", .processing = "a/ah",
              .summary = "sets the aggregate annotation to the packet's length",
              .description =
                  "Click's AggregateLength: the aggregate annotation becomes the packet's length, or with IP true "
                  "its length from the network header on. With IP true, a packet without a network header leaves "
                  "on output 1 if there is one, else is dropped ('no-ip-header'). (Shoal keeps no extra-length "
                  "annotation: the length is the packet's bytes.)",
              .args = {{"IP", "boolean", "count from the IP header (default false)"}},
              .example = "FromDump(trace.pcap, STOP true) -> AggregateLength -> AggregateCounter -> Discard;");

}  // namespace shoal
