// AggregateFirst: lets through the first packet of each aggregate.
#include <unordered_set>

#include "shoal/elements/common.hh"

namespace shoal {

class AggregateFirst : public PacketElement<AggregateFirst> {
 public:
  void configure(Args& a) override {
    std::string notifier;
    a.read("NOTIFIER", notifier);
    a.complete();
    if (!notifier.empty())
      a.fail("NOTIFIER: Shoal's aggregate elements do not notify; AggregateFirst keeps every aggregate it saw");
  }
  void initialize() override { r_ = add_drop_reason("not-first"); }
  int process(Packet* p) {
    if (seen_.insert(p->anno().aggregate).second) return 0;
    return noutputs() > 1 ? 1 : drop_code(r_);
  }
  void add_handlers() override {
    add_read_handler("aggregates", [this] { return std::to_string(seen_.size()); });
  }

 private:
  std::unordered_set<uint32_t> seen_;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(AggregateFirst, .name = "AggregateFirst", .ports = "1/1-2", .processing = "a/ah",
              .summary = "lets through the first packet of each aggregate",
              .description =
                  "Click's AggregateFirst: the first packet with a given aggregate annotation leaves on output 0; "
                  "later ones leave on output 1 if there is one, else are dropped ('not-first'). (Each worker's copy "
                  "remembers the aggregates it saw.)",
              .args = {{"NOTIFIER", "element", "Click's; not supported"}},
              .handlers = {{"aggregates", "r", "aggregates seen"}},
              .example =
                  "FromDump(trace.pcap, STOP true, FORCE_IP true) -> AggregateIPFlows -> AggregateFirst -> "
                  "ToDump(first-packets.pcap);");

}  // namespace shoal
