// Queue (and Click's SimpleQueue and NotifierQueue, the same here): stores
// packets between a push and a pull path. MixedQueue derives from it.

#include "shoal/elements/standard/queue.hh"

namespace shoal {

SHOAL_ELEMENT(Queue, .name = "Queue", .ports = "1/1", .processing = "h/l",
              .summary = "stores packets between a push and a pull path",
              .description =
                  "A FIFO of at most CAPACITY packets. Pushed packets that find it full are dropped "
                  "(reason 'queue-full'). Pulling tasks downstream sleep once it has been found empty by 9 pulls "
                  "in a row (Click's sleepiness: a queue that empties between bursts does not make them sleep "
                  "and wake for each; QuickNoteQueue: as soon as a pull empties it); packet sources "
                  "upstream (on a path of single-output elements) sleep while it is full, and push no more "
                  "at a time than it has room for (Click's full-notifier). SimpleQueue and NotifierQueue "
                  "do not stop sources. A reload or hot swap moves the queued packets to the new "
                  "configuration's queue of the same name, as many as fit (the rest are counted dropped).",
              .args = {{"CAPACITY", "unsigned", "maximum packets (default 1000)"}},
              .handlers = {{"length", "r", "packets queued"},
                           {"highwater_length", "r", "largest length seen"},
                           {"capacity", "r", "the capacity"},
                           {"drops", "r", "packets dropped because full"},
                           {"reset_counts", "w", "reset the high-water mark"},
                           {"capacity", "w", "a new capacity (packets past it are dropped, 'queue-full')"},
                           {"reset", "w", "drop every queued packet ('queue-reset')"}},
              .example = "src -> Queue(1024) -> Unqueue -> sink;");

// Click's SimpleQueue and NotifierQueue differ from its Queue only in which
// notifiers they offer: neither makes pushing sources wait while full.
class SimpleQueue : public Queue {
  bool full_signal() const override { return false; }
};
SHOAL_ELEMENT(SimpleQueue, .name = "SimpleQueue", .ports = "1/1", .processing = "h/l",
              .summary = "stores packets between a push and a pull path (Queue)",
              .description = "Click's SimpleQueue: a Queue (see Queue for arguments and handlers).",
              .args = {{"CAPACITY", "unsigned", "maximum packets (default 1000)"}},
              .handlers = {{"length", "r", "packets queued"}, {"drops", "r", "packets dropped because full"}},
              .example = "src -> SimpleQueue(100) -> Unqueue -> sink;");
class NotifierQueue : public Queue {
  bool full_signal() const override { return false; }
};
SHOAL_ELEMENT(NotifierQueue, .name = "NotifierQueue", .ports = "1/1", .processing = "h/l",
              .summary = "stores packets between a push and a pull path (Queue)",
              .description = "Click's NotifierQueue: a Queue (see Queue for arguments and handlers).",
              .args = {{"CAPACITY", "unsigned", "maximum packets (default 1000)"}},
              .handlers = {{"length", "r", "packets queued"}, {"drops", "r", "packets dropped because full"}},
              .example = "src -> NotifierQueue(100) -> Unqueue -> sink;");

// Click's QuickNoteQueue: a Queue whose empty notification comes as soon
// as a pull empties it.
class QuickNoteQueue : public Queue {
  bool quick_empty_note() const override { return true; }
};
SHOAL_ELEMENT(QuickNoteQueue, .name = "QuickNoteQueue", .ports = "1/1", .processing = "h/l",
              .summary = "stores packets between a push and a pull path (Queue)",
              .description =
                  "Click's QuickNoteQueue: a Queue with its empty- and full-notifiers whose pulling tasks "
                  "sleep as soon as a pull empties it, not after Queue's 9 empty pulls (see Queue for "
                  "arguments and handlers).",
              .args = {{"CAPACITY", "unsigned", "maximum packets (default 1000)"}},
              .handlers = {{"length", "r", "packets queued"}, {"drops", "r", "packets dropped because full"}},
              .example = "src -> QuickNoteQueue(100) -> Unqueue -> sink;");

// Click's FullNoteQueue (its Queue's full- and empty-notifiers, as Queue
// here) and ThreadSafeQueue (a queue pushed and pulled by several threads:
// here each worker has its own copy of the graph, so a queue is never
// shared between threads, and Queue is it).
class FullNoteQueue : public Queue {};
SHOAL_ELEMENT(FullNoteQueue, .name = "FullNoteQueue", .ports = "1/1", .processing = "h/l",
              .summary = "stores packets between a push and a pull path (Queue)",
              .description =
                  "Click's FullNoteQueue: a Queue with its empty- and full-notifiers, as Shoal's Queue "
                  "(see Queue for arguments and handlers).",
              .args = {{"CAPACITY", "unsigned", "maximum packets (default 1000)"}},
              .handlers = {{"length", "r", "packets queued"}, {"drops", "r", "packets dropped because full"}},
              .example = "src -> FullNoteQueue(100) -> Unqueue -> sink;");
class ThreadSafeQueue : public Queue {};
SHOAL_ELEMENT(ThreadSafeQueue, .name = "ThreadSafeQueue", .ports = "1/1", .processing = "h/l",
              .summary = "stores packets between a push and a pull path (Queue)",
              .description =
                  "Click's ThreadSafeQueue, for pushes and pulls from several threads: in Shoal each "
                  "worker runs its own copy of the graph, so no queue is shared between threads and this "
                  "is a Queue (see Queue for arguments and handlers).",
              .args = {{"CAPACITY", "unsigned", "maximum packets (default 1000)"}},
              .handlers = {{"length", "r", "packets queued"}, {"drops", "r", "packets dropped because full"}},
              .example = "src -> ThreadSafeQueue(100) -> Unqueue -> sink;");

}  // namespace shoal
