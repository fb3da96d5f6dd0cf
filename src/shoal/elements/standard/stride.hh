// Stride scheduling (Waldspurger and Weihl 1995), as Click's StrideSched
// and StrideSwitch keep it: each port holds tickets (at most 32768; 0 takes
// it out) and strides 65536/tickets each time it is chosen; the ports with
// tickets wait in a list by pass, the smallest first.
#pragma once
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "shoal/elements/common.hh"

namespace shoal {

class StrideTickets {
 public:
  static constexpr uint32_t kStride1 = 1u << 16, kMaxTickets = 1u << 15;
  // One argument of tickets per port (`ports` of them).
  void configure(Args& a, int ports, const char* what) {
    std::vector<ArgItem*> v = a.rest_positional();
    a.complete();
    if (int(v.size()) != ports) a.fail(fmt::format("need {} arguments, one per {} port", ports, what));
    clients_.resize(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      int64_t t;
      if (!parse_int(trim(v[i]->text), t)) a.fail(*v[i], fmt::format("argument {} should be number of tickets", i));
      if (t < 0) a.fail(*v[i], fmt::format("argument {} (number of tickets) must be >= 0", i));
      clients_[i].set_tickets(uint32_t(std::min<int64_t>(t, kMaxTickets)));
      clients_[i].pass = clients_[i].stride;
    }
    // In reverse, so ties go in port order.
    for (size_t i = v.size(); i-- > 0;)
      if (clients_[i].tickets) insert(int(i));
  }
  // ticketsN (rw) and config; `changed` runs after a port regains tickets.
  template <class F>
  void add_handlers(Element& e, F changed) {
    for (int i = 0; i < int(clients_.size()); ++i) {
      e.add_read_handler(fmt::format("tickets{}", i),
                         [this, i] { return std::to_string(clients_[size_t(i)].tickets); });
      e.add_write_handler(fmt::format("tickets{}", i), [this, i, changed](const std::string& v) {
        int64_t t;
        if (!parse_int(trim(v), t) || t < 0) throw std::runtime_error("tickets must be an integer >= 0");
        if (set_tickets(i, uint32_t(std::min<int64_t>(t, kMaxTickets)))) changed();
      });
    }
    e.add_read_handler("config", [this] {
      std::string s;
      for (size_t i = 0; i < clients_.size(); ++i) s += fmt::format("{}{}", i ? ", " : "", clients_[i].tickets);
      return s;
    });
  }
  bool has_tickets(int i) const { return clients_[size_t(i)].tickets != 0; }
  const std::vector<int>& by_pass() const { return list_; }
  // The first `n` ports of the list stride (each chosen or tried once) and
  // go back in pass order.
  void stride_first(size_t n) {
    for (size_t k = 0; k < n; ++k) clients_[size_t(list_[k])].pass += clients_[size_t(list_[k])].stride;
    std::vector<int> strode(list_.begin(), list_.begin() + ptrdiff_t(n));
    list_.erase(list_.begin(), list_.begin() + ptrdiff_t(n));
    for (int c : strode) insert(c);
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
  // True when the port came back (it had no tickets).
  bool set_tickets(int i, uint32_t t) {
    Client& c = clients_[size_t(i)];
    const uint32_t old = c.tickets;
    c.set_tickets(t);
    if (t == 0 && old != 0) {
      list_.erase(std::find(list_.begin(), list_.end(), i));
    } else if (t != 0 && old == 0) {
      c.pass = list_.empty() ? 0 : clients_[size_t(list_.front())].pass + c.stride;
      insert(i);
      return true;
    }
    return false;
  }
  std::vector<Client> clients_;
  std::vector<int> list_;  // ports with tickets, by pass
};

}  // namespace shoal
