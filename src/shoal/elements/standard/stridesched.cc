// StrideSched: pulls from its inputs in proportion to their tickets (stride
// scheduling, Waldspurger and Weihl 1995), as Click's.
#include <fmt/format.h>

#include "shoal/elements/standard/pullscheduler.hh"

namespace shoal {

class StrideSched : public PullScheduler<StrideSched> {
 public:
  static constexpr uint32_t kStride1 = 1u << 16, kMaxTickets = 1u << 15;
  void configure(Args& a) override {
    std::vector<ArgItem*> v = a.rest_positional();
    a.complete();
    if (int(v.size()) != ninputs()) a.fail(fmt::format("need {} arguments, one per input port", ninputs()));
    clients_.resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t t;
      if (!parse_int(trim(v[i]->text), t)) a.fail(*v[i], fmt::format("argument {} should be number of tickets", i));
      if (t < 0) a.fail(*v[i], fmt::format("argument {} (number of tickets) must be >= 0", i));
      clients_[i].set_tickets(uint32_t(std::min<int64_t>(t, kMaxTickets)));
      clients_[i].pass = clients_[i].stride;
    }
    // In reverse, so ties go in input order.
    for (size_t i = v.size(); i-- > 0;)
      if (clients_[i].tickets) insert(int(i));
  }
  void add_handlers() override {
    for (int i = 0; i < int(clients_.size()); ++i) {
      add_read_handler(fmt::format("tickets{}", i), [this, i] { return std::to_string(clients_[size_t(i)].tickets); });
      add_write_handler(fmt::format("tickets{}", i), [this, i](const std::string& v) {
        int64_t t;
        if (!parse_int(trim(v), t) || t < 0) throw std::runtime_error("tickets must be an integer >= 0");
        set_tickets(i, uint32_t(std::min<int64_t>(t, kMaxTickets)));
      });
    }
    add_read_handler("config", [this] {
      std::string s;
      for (size_t i = 0; i < clients_.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", clients_[i].tickets);
      return s;
    });
  }
  bool may_pull(int i) const { return clients_[size_t(i)].tickets != 0; }
  // The client with the smallest pass pulls; every client tried strides, and
  // those that strode go back in pass order.
  PacketBatch* next() {
    PacketBatch* b = nullptr;
    size_t tried = 0;
    while (tried < list_.size() && !b) {
      int c = list_[tried++];
      b = pull_one(c);
      clients_[size_t(c)].pass += clients_[size_t(c)].stride;
    }
    std::vector<int> strode(list_.begin(), list_.begin() + ptrdiff_t(tried));
    list_.erase(list_.begin(), list_.begin() + ptrdiff_t(tried));
    for (int c : strode) insert(c);
    return b;
  }

 private:
  struct Client {
    uint32_t tickets = 0, stride = 0, pass = 0;
    void set_tickets(uint32_t t) {
      tickets = t;
      stride = t ? kStride1 / t : 0;
    }
  };
  static bool pass_gt(uint32_t a, uint32_t b) { return int32_t(a - b) > 0; }  // wraps
  // Before the first client whose pass is not smaller.
  void insert(int c) {
    auto at = list_.begin();
    while (at != list_.end() && pass_gt(clients_[size_t(c)].pass, clients_[size_t(*at)].pass)) ++at;
    list_.insert(at, c);
  }
  void set_tickets(int i, uint32_t t) {
    Client& c = clients_[size_t(i)];
    uint32_t old = c.tickets;
    c.set_tickets(t);
    if (t == 0 && old != 0) {
      list_.erase(std::find(list_.begin(), list_.end(), i));
    } else if (t != 0 && old == 0) {
      c.pass = list_.empty() ? 0 : clients_[size_t(list_.front())].pass + c.stride;
      insert(i);
      wake_task();  // a task that slept on the other inputs may pull again
    }
  }
  std::vector<Client> clients_;
  std::vector<int> list_;  // clients with tickets, by pass
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
