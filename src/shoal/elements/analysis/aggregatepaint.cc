// AggregatePaint: sets the aggregate annotation from the paint annotation.
#include "shoal/elements/common.hh"

namespace shoal {

class AggregatePaint : public PacketElement<AggregatePaint> {
 public:
  void configure(Args& a) override {
    a.read_p("BITS", bits_).read("INCREMENTAL", incremental_);
    a.complete();
    if (bits_ < 1 || bits_ > 8) a.fail("BITS must be 1 to 8");
  }
  void process(Packet* p) {
    const uint32_t v = p->anno().paint & ((1u << bits_) - 1);
    uint32_t& agg = p->anno().aggregate;
    agg = incremental_ ? (agg << bits_) + v : v;
  }

 private:
  uint32_t bits_ = 8;
  bool incremental_ = false;
};
SHOAL_ELEMENT(AggregatePaint, .name = "AggregatePaint", .ports = "1/1", .processing = "a/a",
              .summary = "sets the aggregate annotation from the paint annotation",
              .description =
                  "Click's AggregatePaint: the aggregate annotation becomes the low BITS bits of the "
                  "paint annotation, or with INCREMENTAL the old annotation shifted left by BITS plus "
                  "them.",
              .args = {{"BITS", "1-8", "the paint's bits used (default 8)"},
                       {"INCREMENTAL", "boolean", "shift and add instead of set (default false)"}},
              .example =
                  "... -> AggregateIP(ip dst/8) -> AggregatePaint(1, INCREMENTAL true) -> "
                  "AggregateCounter -> ...;");

}  // namespace shoal
