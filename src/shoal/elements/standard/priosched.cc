// PrioSched: pulls from the first input that has a packet.
#include "shoal/elements/standard/pullscheduler.hh"

namespace shoal {

class PrioSched : public PullScheduler<PrioSched> {
 public:
  PacketBatch* next() {
    for (int i = 0; i < ninputs(); ++i)
      if (PacketBatch* b = pull_one(i)) return b;
    return nullptr;
  }
};
SHOAL_ELEMENT(PrioSched, .name = "PrioSched", .ports = "1-/1", .processing = "l/l",
              .summary = "pulls from inputs in strict priority order",
              .description =
                  "Click's PrioSched: each packet pulled comes from the lowest-numbered input that has "
                  "one; input 0 has the highest priority and can starve the others.",
              .args = {}, .handlers = {},
              .example = "hi :: Queue -> [0]s :: PrioSched; lo :: Queue -> [1]s; s -> Unqueue -> Discard;");

}  // namespace shoal
