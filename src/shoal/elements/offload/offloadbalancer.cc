// OffloadBalancer: picks the device for each batch (fixed fraction).
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class OffloadBalancer : public Element {
 public:
  void configure(Args& a) override {
    a.read_p("FRACTION", fraction_);
    a.complete();
    if (!(fraction_ >= 0 && fraction_ <= 1)) a.fail("FRACTION: 0 to 1");
  }
  void push(int, PacketBatch* b) override {
    // Error diffusion: exactly FRACTION of the batches, evenly spread.
    acc_ += fraction_;
    if (acc_ >= 1 - 1e-9) {
      acc_ -= 1;
      b->anno.device = 0;
      to_device_.add();
    } else {
      b->anno.device = -1;
      to_cpu_.add();
    }
    output_push(0, b);
  }
  void add_handlers() override {
    add_read_handler("fraction", [this] { return fmt::format("{}", fraction_); });
    add_write_handler("fraction", [this](const std::string& v) {
      double f;
      if (!parse_double(trim(v), f) || !(f >= 0 && f <= 1)) throw std::runtime_error("FRACTION: 0 to 1");
      fraction_ = f;
    });
    add_stat_handler("to_device", to_device_);
    add_stat_handler("to_cpu", to_cpu_);
  }

 private:
  double fraction_ = 1, acc_ = 0;
  Stat to_device_, to_cpu_;
};
SHOAL_ELEMENT(OffloadBalancer, .name = "OffloadBalancer", .ports = "1/1", .processing = "a/a",
              .summary = "picks the device for each batch (fixed fraction)",
              .description =
                  "NBA's load balancer with a fixed split: FRACTION of the batches (spread evenly) are marked for "
                  "the device, the rest for the CPU. Offloadable elements downstream (DirectIPLookup, "
                  "LookupIP6Route, CheckIPHeader, DecIPTTL) run marked batches on the device: they aggregate "
                  "them, copy only what they declared, run the chain of consecutive offloadable elements there and "
                  "release the results in order. The mark stays on the batch.",
              .args = {{"FRACTION", "0-1", "share of batches for the device (default 1)"}},
              .handlers = {{"fraction", "rw", "the share"},
                           {"to_device", "r", "batches marked for the device"},
                           {"to_cpu", "r", "batches left on the CPU"}},
              .example = "FromDump(in.pcap) -> CheckIPHeader(14) -> OffloadBalancer(1) -> rt :: DirectIPLookup(...);");

}  // namespace shoal
