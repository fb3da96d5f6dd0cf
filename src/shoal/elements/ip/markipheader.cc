// MarkIPHeader: sets the IP header annotation without checks.

#include "shoal/elements/common.hh"

namespace shoal {

class MarkIPHeader : public PacketElement<MarkIPHeader> {
 public:
  void configure(Args& a) override {
    a.read_p("OFFSET", off_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    if (uint64_t(off_) + 20 > p->length()) return drop_code(r_);
    uint32_t hl = uint32_t(p->data()[off_] & 0xf) * 4;
    p->set_network_header(off_);
    p->set_transport_header(off_ + hl);
    return 0;
  }

 private:
  uint32_t off_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(MarkIPHeader, .name = "MarkIPHeader", .ports = "1/1", .processing = "a/a",
              .summary = "sets the IP header annotation without checks",
              .description =
                  "Marks the IP header at OFFSET (network header annotation) and the transport header "
                  "after it, without checking the header (use CheckIPHeader for that). Packets shorter "
                  "than OFFSET + 20: dropped ('too-short').",
              .args = {{"OFFSET", "unsigned", "where the IP header starts (default 0)"}},
              .example = "FromDump(in.pcap) -> MarkIPHeader(14) -> IPClassifier(tcp, -);");

}  // namespace shoal
