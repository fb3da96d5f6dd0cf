// SetPacketType: sets the packet type annotation, as Click's.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class SetPacketType : public PacketElement<SetPacketType> {
 public:
  void configure(Args& a) override {
    std::string t;
    a.read_mp("TYPE", t);
    a.complete();
    // Click's names and numbers (Linux's PACKET_* values)
    static constexpr std::pair<const char*, uint8_t> kTypes[] = {{"HOST", Anno::kHost},
                                                                 {"BROADCAST", Anno::kBroadcast},
                                                                 {"MULTICAST", Anno::kMulticast},
                                                                 {"OTHERHOST", Anno::kOtherHost},
                                                                 {"OUTGOING", Anno::kOutgoing},
                                                                 {"LOOPBACK", 5},
                                                                 {"FASTROUTE", 6}};
    for (auto& [name, v] : kTypes)
      if (t == name) return void(type_ = v);
    a.fail(fmt::format("TYPE '{}': HOST, BROADCAST, MULTICAST, OTHERHOST, OUTGOING, LOOPBACK or FASTROUTE", t));
  }
  void process(Packet* p) { p->anno().packet_type = type_; }

 private:
  uint8_t type_ = Anno::kHost;
};
SHOAL_ELEMENT(SetPacketType, .name = "SetPacketType", .ports = "1/1", .processing = "a/a",
              .summary = "sets the packet type annotation",
              .description =
                  "Click's SetPacketType: the packet type annotation (how the packet arrived at the link "
                  "level: for DropBroadcasts, ToHost) becomes TYPE: HOST, BROADCAST, MULTICAST, "
                  "OTHERHOST, OUTGOING, LOOPBACK or FASTROUTE.",
              .args = {{"TYPE", "word", "the type, mandatory"}},
              .example = "FromDump(in.pcap) -> SetPacketType(BROADCAST) -> DropBroadcasts -> ...;");

}  // namespace shoal
