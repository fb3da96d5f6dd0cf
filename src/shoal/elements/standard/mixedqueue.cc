// MixedQueue: a queue that is FIFO for input 0 and LIFO for input 1, as Click's.
#include "shoal/elements/standard/queue.hh"

namespace shoal {

class MixedQueue : public Queue {
 protected:
  bool lifo_port(int port) const override { return port == 1; }
  bool full_signal() const override { return false; }  // as Click's (a NotifierQueue)
};
SHOAL_ELEMENT(MixedQueue, .name = "MixedQueue", .ports = "2/1", .processing = "h/l",
              .summary = "a queue, first-in-first-out for input 0 and last-in-first-out for input 1",
              .description =
                  "Packets pushed on input 0 join the back of the queue; packets pushed on input 1 go to its "
                  "front, so they leave next. When full, input 0's packets are dropped, while input 1's "
                  "push out the packet at the back (both 'queue-full'). Handlers as Queue's.",
              .args = {{"CAPACITY", "unsigned", "maximum packets (default 1000)"}},
              .handlers = {{"length", "r", "packets queued"},
                           {"highwater_length", "r", "largest length seen"},
                           {"capacity", "rw", "the capacity"},
                           {"drops", "r", "packets dropped because full"},
                           {"reset", "w", "drop every queued packet"}},
              .example = "a -> [0]m :: MixedQueue(100); urgent -> [1]m; m -> Unqueue -> sink;");

}  // namespace shoal
