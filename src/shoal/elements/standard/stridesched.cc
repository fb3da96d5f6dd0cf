// StrideSched: pulls from its inputs in proportion to their tickets (stride
// scheduling, Waldspurger and Weihl 1995), as Click's.
#include "shoal/elements/standard/pullscheduler.hh"
#include "shoal/elements/standard/stride.hh"

namespace shoal {

class StrideSched : public PullScheduler<StrideSched> {
 public:
  void configure(Args& a) override { t_.configure(a, ninputs(), "input"); }
  void add_handlers() override {
    t_.add_handlers(*this, [this] { wake_task(); });  // a task that slept on the other inputs may pull again
  }
  bool may_pull(int i) const { return t_.has_tickets(i); }
  // The input with the smallest pass pulls; every input tried strides, and
  // those that strode go back in pass order.
  PacketBatch* next() {
    PacketBatch* b = nullptr;
    size_t tried = 0;
    const std::vector<int>& list = t_.by_pass();
    while (tried < list.size() && !b) b = pull_one(list[tried++]);
    t_.stride_first(tried);
    return b;
  }

 private:
  StrideTickets t_;
};
SHOAL_ELEMENT(StrideSched, .name = "StrideSched", .ports = "1-/1", .processing = "l/l",
              .summary = "pulls from inputs in proportion to their tickets",
              .description =
                  "Click's StrideSched: stride scheduling. Input i holds TICKETS_i tickets (at most 32768; 0 "
                  "takes it out) and strides 65536/TICKETS_i each time it is tried; each packet comes from the "
                  "input with the smallest pass that has one, so over time input i gives a share of the "
                  "packets proportional to its tickets, evenly spread.",
              .args = {{"TICKETS...", "integer", "tickets of each input, one argument per input"}},
              .handlers = {{"ticketsN", "rw", "input N's tickets"}, {"config", "r", "every input's tickets"}},
              .example = "a :: Queue -> [0]s :: StrideSched(3, 1); b :: Queue -> [1]s; s -> Unqueue -> Discard;");

}  // namespace shoal
