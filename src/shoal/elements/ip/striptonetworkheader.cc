// StripToNetworkHeader: removes everything before the network header, as Click's.
#include "shoal/elements/common.hh"

namespace shoal {

class StripToNetworkHeader : public PacketElement<StripToNetworkHeader> {
 public:
  void process(Packet* p) {
    if (!p->has_network_header()) return;  // Click's: no network header, no change
    int64_t off = p->network_header_offset();
    if (off > 0) p->pull(uint32_t(off));
  }
};
SHOAL_ELEMENT(StripToNetworkHeader, .name = "StripToNetworkHeader", .ports = "1/1", .processing = "a/a",
              .summary = "removes everything before the network header",
              .description =
                  "Strips the bytes before the network header annotation (a link header), which stay in the "
                  "headroom. Packets without the annotation pass unchanged.",
              .args = {}, .handlers = {},
              .example = "FromDump(in.pcap) -> CheckIPHeader(14) -> StripToNetworkHeader -> ...", .forwards_all = true);

}  // namespace shoal
