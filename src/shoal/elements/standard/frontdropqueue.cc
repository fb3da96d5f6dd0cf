// FrontDropQueue: a queue that, when full, drops its oldest packet to take
// the new one, as Click's.
#include "shoal/elements/standard/queue.hh"

namespace shoal {

class FrontDropQueue : public Queue {
 protected:
  bool front_drop() const override { return true; }
  bool full_signal() const override { return false; }  // (it always takes a packet: nothing to wait for)
};
SHOAL_ELEMENT(FrontDropQueue, .name = "FrontDropQueue", .ports = "1/1", .processing = "h/l",
              .summary = "a queue that drops its oldest packet when full",
              .description =
                  "Click's FrontDropQueue: a Queue that, when a packet arrives to find it full, drops the packet "
                  "at its head (the oldest, 'queue-full') and takes the new one at the back, so what waits is the "
                  "freshest traffic (sensor readings, routing updates, interactive flows). Pushing sources are "
                  "never held back. Handlers as Queue's; drops counts the packets pushed out.",
              .args = {{"CAPACITY", "unsigned", "maximum packets (default 1000)"}},
              .handlers = {{"length", "r", "packets queued"},
                           {"highwater_length", "r", "largest length seen"},
                           {"capacity", "rw", "the capacity"},
                           {"drops", "r", "packets dropped from the front"},
                           {"reset", "w", "drop every queued packet"}},
              .example = "src -> FrontDropQueue(100) -> Unqueue -> sink;");

}  // namespace shoal
