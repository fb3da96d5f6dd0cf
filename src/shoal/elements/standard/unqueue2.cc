// Unqueue2: Click's Unqueue that never pulls more than the queues
// downstream have room for.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class Unqueue2 : public Element {
 public:
  void configure(Args& a) override {
    bool quiet = false;
    a.read_p("BURST", burst_).read("QUEUES", queues_).read("QUIET", quiet);
    a.complete();
  }
  void initialize() override {
    add_task();
    set_task_active(true);
    pt_.init(this, burst_ ? burst_ : worker().batches().batch_capacity());
    // The queues whose room bounds each pull: those named, else the first
    // downstream.
    for (auto w : split_words(queues_)) {
      Element* q = find_element_from(*this, std::string(w));
      Notifier* n = q ? q->full_notifier() : nullptr;
      if (!n) throw std::runtime_error(fmt::format("QUEUES: '{}' is not a queue", w));
      full_.push_back(n);
    }
    if (queues_.empty())
      if (Notifier* n = downstream_full_notifier(this)) full_.push_back(n);
    for (Notifier* n : full_) n->listeners.push_back(this);
  }
  bool run_task() override {
    uint32_t room = burst_ ? burst_ : worker().batches().batch_capacity();
    for (Notifier* n : full_) room = n->active ? std::min<uint32_t>(room, n->room) : 0;
    if (room == 0) {
      set_task_active(false);  // a queue's full-notifier wakes it when there is room
      return false;
    }
    PacketBatch* b = pt_.pull(room);
    if (!b) return false;
    count_.add(b->live());
    output_push(0, b);
    return true;
  }
  void add_handlers() override { add_stat_handler("count", count_); }

 private:
  uint32_t burst_ = 1;
  std::string queues_;
  std::vector<Notifier*> full_;
  Stat count_;
  PullTask pt_;
};
SHOAL_ELEMENT(Unqueue2, .name = "Unqueue2", .ports = "1/1", .processing = "l/h",
              .summary = "pulls packets and pushes them on, only as many as the queues downstream take",
              .description =
                  "Click's Unqueue2: a task that pulls up to BURST packets at a time (default 1; 0: as many as "
                  "come, a batch) and pushes them on, but never more than the free room of the queues named in "
                  "QUEUES (default: the first queue downstream), and nothing while one is full: it sleeps until "
                  "that queue has room again, and while the queue upstream is empty. Unqueue is usually what you "
                  "want.",
              .args = {{"BURST", "unsigned", "packets per pull (default 1; 0: a batch)"},
                       {"QUEUES", "element names", "the queues whose room bounds each pull (default: downstream)"},
                       {"QUIET", "boolean", "accepted (Click's deprecation warning)"}},
              .handlers = {{"count", "r", "packets moved"}},
              .example = "q1 :: Queue -> Unqueue2(0) -> q2 :: Queue(10) -> ...;");

}  // namespace shoal
