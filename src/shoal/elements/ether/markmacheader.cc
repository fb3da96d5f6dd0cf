// MarkMACHeader: sets the MAC header annotation.
#include "shoal/elements/common.hh"

namespace shoal {

class MarkMACHeader : public PacketElement<MarkMACHeader> {
 public:
  void configure(Args& a) override {
    a.read_p("OFFSET", off_).read_p("LENGTH", len_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  // The MAC header at OFFSET; the network header right after its LENGTH.
  int process(Packet* p) {
    if (uint64_t(off_) + len_ > p->length()) return drop_code(r_);
    p->set_mac_header(off_);
    p->set_network_header(off_ + len_);
    return 0;
  }

 private:
  uint32_t off_ = 0, len_ = 14;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(MarkMACHeader, .name = "MarkMACHeader", .ports = "1/1", .processing = "a/a",
              .summary = "sets the MAC header annotation",
              .description =
                  "Click's MarkMACHeader: the MAC header starts at OFFSET and is LENGTH bytes long, so "
                  "the network header follows it. A packet shorter than that is dropped ('too-short').",
              .args = {{"OFFSET", "unsigned", "where the MAC header starts (default 0)"},
                       {"LENGTH", "unsigned", "its length (default 14)"}},
              .handlers = {}, .example = "FromDump(in.pcap) -> MarkMACHeader -> IPPrint(ETHER true) -> Discard;");

}  // namespace shoal
