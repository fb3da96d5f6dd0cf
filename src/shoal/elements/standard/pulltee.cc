// PullTee: copies pulled packets to push outputs, as Click's.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/standard/tee.hh"

namespace shoal {

class PullTee : public Element {
 public:
  void configure(Args& a) override {
    uint32_t n = 0;
    a.read_p("N", n);
    a.complete();
    want_ = n;
  }
  void initialize() override {
    if (want_ && int(want_) != noutputs())
      throw std::runtime_error(fmt::format("N is {} but {} outputs are connected", want_, noutputs()));
    r_ = add_drop_reason("pool-exhausted");
  }
  // A pull on output 0 pulls the input; outputs 1.. get copies, pushed
  // before the originals are returned.
  PacketBatch* pull(int, uint32_t max) override {
    PacketBatch* b = input_pull(0, max);
    if (!b || b->empty()) return b;
    for (int o = 1; o < noutputs(); ++o)
      if (PacketBatch* c = copy_batch(*this, b, drops_, r_)) output_push(o, c);
    return b;
  }
  void add_handlers() override { add_stat_handler("copy_failures", drops_); }

 private:
  uint32_t want_ = 0;
  uint16_t r_ = 0;
  Stat drops_;
};
SHOAL_ELEMENT(PullTee, .name = "PullTee", .ports = "1/1-", .processing = "l/lh",
              .summary = "copies pulled packets to push outputs",
              .description =
                  "Click's PullTee: output 0 is pulled, and each packet pulled through it is also copied "
                  "to outputs 1 and above, which push. A copy the packet pool cannot make is counted "
                  "(copy_failures, 'pool-exhausted').",
              .args = {{"N", "unsigned", "the number of outputs (checked against the connections)"}},
              .handlers = {{"copy_failures", "r", "copies not made"}},
              .example = "q :: Queue -> pt :: PullTee(2) -> Unqueue -> out; pt[1] -> ToDump(copy.pcap);");

}  // namespace shoal
