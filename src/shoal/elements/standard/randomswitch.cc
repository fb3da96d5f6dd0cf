// RandomSwitch: sends each packet to an output chosen at random.
#include "shoal/core/worker.hh"
#include "shoal/elements/clickrandom.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class RandomSwitch : public PacketElement<RandomSwitch> {
 public:
  void initialize() override { rng_ = &click_random_of(worker().runtime(), worker().id()); }
  int process(Packet*) { return int(rng_->range(0, uint32_t(noutputs() - 1))); }

 private:
  ClickRandom* rng_ = nullptr;
};
SHOAL_ELEMENT(RandomSwitch, .name = "RandomSwitch", .ports = "1/1-", .processing = "h/h",
              .summary = "sends each packet to an output chosen at random",
              .description =
                  "Click's RandomSwitch: each packet leaves on an output chosen uniformly at random, "
                  "with Click's random numbers (RandomSeed makes the choice repeatable).",
              .example = "src -> rs :: RandomSwitch; rs[0] -> a; rs[1] -> b;");

}  // namespace shoal
