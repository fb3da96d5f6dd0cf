// MarkIP6Header: sets the IPv6 header annotation without checks.
#include "shoal/elements/common.hh"

namespace shoal {

class MarkIP6Header : public PacketElement<MarkIP6Header> {
 public:
  void configure(Args& a) override {
    a.read_p("OFFSET", off_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    if (uint64_t(off_) + 40 > p->length()) return drop_code(r_);
    p->set_network_header(off_);
    p->set_transport_header(off_ + 40);
    return 0;
  }

 private:
  uint32_t off_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(MarkIP6Header, .name = "MarkIP6Header", .ports = "1/1", .processing = "a/a",
              .summary = "sets the IPv6 header annotation without checks",
              .description =
                  "Click's MarkIP6Header: marks the IPv6 header at OFFSET (network header annotation) "
                  "and the 40 bytes after it as where the next header starts, without checking the header "
                  "(CheckIP6Header does). A packet shorter than OFFSET + 40 is dropped ('too-short').",
              .args = {{"OFFSET", "unsigned", "where the IPv6 header starts (default 0)"}},
              .example = "FromDump(in.pcap) -> MarkIP6Header(14) -> GetIP6Address(24) -> ...;");

}  // namespace shoal
