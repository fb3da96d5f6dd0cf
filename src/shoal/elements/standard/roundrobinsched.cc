// RoundRobinSched: pulls from its inputs in turn.
#include "shoal/elements/standard/pullscheduler.hh"

namespace shoal {

class RoundRobinSched : public PullScheduler<RoundRobinSched> {
 public:
  void configure(Args& a) override {
    int64_t max = ninputs();
    a.read_p("MAX", max);
    a.complete();
    if (max < 1) a.fail("MAX must be at least 1");
    max_ = int(std::min<int64_t>(max, ninputs()));
  }
  // Starting after the input that gave the last packet, the first that has one.
  PacketBatch* next() {
    int i = next_;
    for (int j = 0; j < max_; ++j) {
      PacketBatch* b = pull_one(i);
      i = i + 1 >= max_ ? 0 : i + 1;
      if (b) {
        next_ = i;
        return b;
      }
    }
    return nullptr;
  }

 private:
  int max_ = 1, next_ = 0;
};
SHOAL_ELEMENT(RoundRobinSched, .name = "RoundRobinSched", .ports = "1-/1", .processing = "l/l",
              .summary = "pulls from inputs in round-robin order",
              .description =
                  "Click's RoundRobinSched: each packet pulled comes from the next input in turn that "
                  "has one, starting after the input that gave the last packet. Only the first MAX "
                  "inputs take part.",
              .args = {{"MAX", "integer", "inputs taking part (default all)"}}, .handlers = {},
              .example = "q0 :: Queue -> [0]s :: RoundRobinSched; q1 :: Queue -> [1]s; s -> Unqueue -> Discard;");

}  // namespace shoal
