// Tee: copies packets to every output.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/standard/tee.hh"

namespace shoal {

class Tee : public Element {
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
  void push(int, PacketBatch* b) override {
    // Outputs 0..n-2 get copies, the last output gets the originals.
    for (int o = 0; o + 1 < noutputs(); ++o)
      if (PacketBatch* c = copy_batch(*this, b, drops_, r_)) output_push(o, c);
    output_push(noutputs() - 1, b);
  }
  void add_handlers() override { add_stat_handler("copy_failures", drops_); }

 private:
  uint32_t want_ = 0;
  uint16_t r_ = 0;
  Stat drops_;
};
SHOAL_ELEMENT(Tee, .name = "Tee", .ports = "1/1-", .processing = "h/h", .summary = "copies packets to every output",
              .description =
                  "Each packet is copied to outputs 0 to n-2 and the original goes to output n-1. A copy "
                  "that cannot be made (packet pool exhausted) is counted in copy_failures.",
              .args = {{"N", "unsigned", "expected number of outputs (checked)"}},
              .handlers = {{"copy_failures", "r", "copies lost to pool exhaustion"}},
              .example = "src -> t :: Tee; t[0] -> ToDump(a.pcap); t[1] -> Discard;");

}  // namespace shoal
