// Suppressor: passes each input to its output unless that port is
// suppressed, as Click's. A pull output whose input has an empty-notifier
// upstream has one too, asleep while that input is empty or the port
// suppressed, so its puller sleeps rather than polls.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class Suppressor : public Element, public OutputNotifiers {
 public:
  void initialize() override {
    if (ninputs() != noutputs())
      throw std::runtime_error(
          fmt::format("{} inputs but {} outputs: each input goes to its output", ninputs(), noutputs()));
    active_.assign(size_t(ninputs()), true);
    r_ = add_drop_reason("suppressed");
  }
  // A suppressed push input drops what comes; a suppressed pull output
  // gives nothing.
  void push(int port, PacketBatch* b) override {
    if (active_[size_t(port)])
      output_push(port, b);
    else
      drop_all(b, r_);
  }
  PacketBatch* pull(int port, uint32_t max) override {
    const size_t i = size_t(port);
    PacketBatch* b = active_[i] ? input_pull(port, max) : nullptr;
    if ((!b || b->empty()) && resolve() && ups_[i] && (!active_[i] || !ups_[i]->active)) own_[i].sleep();
    return b;
  }
  Notifier* output_notifier(int port) override {
    return resolve() && ups_[size_t(port)] ? &own_[size_t(port)] : nullptr;
  }
  // An input's notifier woke (which one is not said: each active port's
  // puller may pull; one that finds nothing sleeps again).
  void wake_task() override { wake_active(); }
  void add_handlers() override {
    for (int i = 0; i < ninputs(); ++i) {
      add_read_handler(fmt::format("active{}", i), [this, i] { return active_[size_t(i)] ? "true" : "false"; });
      add_write_handler(fmt::format("active{}", i), [this, i](const std::string& v) {
        bool on;
        if (!parse_bool(trim(v), on)) throw std::runtime_error("expected true or false");
        active_[size_t(i)] = on;
        wake_active();
      });
    }
    add_write_handler("reset", [this](const std::string&) {
      active_.assign(active_.size(), true);
      wake_active();
    });
  }

 private:
  // Finds each pull input's notifier once (the graph is fixed by then).
  bool resolve() {
    if (resolved_) return true;
    resolved_ = true;
    own_.resize(size_t(ninputs()));  // (never again: pullers keep pointers to them)
    for (int i = 0; i < ninputs(); ++i) {
      Notifier* n = upstream_notifier(this, i);
      ups_.push_back(n);
      if (!n) continue;
      n->listeners.push_back(this);
      own_[size_t(i)].parts.push_back(n);
    }
    return true;
  }
  void wake_active() {
    if (!resolved_) return;
    for (size_t i = 0; i < ups_.size(); ++i)
      if (ups_[i] && active_[i]) own_[i].wake();
  }
  bool resolved_ = false;
  std::vector<Notifier*> ups_;
  std::vector<Notifier> own_;
  std::vector<char> active_;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Suppressor, .name = "Suppressor", .ports = "-/-", .processing = "a/a",
              .summary = "passes each input to its output unless suppressed",
              .description =
                  "Click's Suppressor: as many inputs as outputs; packets from input i leave on output i. "
                  "A suppressed port (activeN false) drops what is pushed into it ('suppressed') and gives "
                  "nothing when pulled. Every port starts active; reset makes them all active again. A pull "
                  "output whose input has an empty-notifier upstream (a queue) has one too, asleep while the "
                  "input is empty or the port suppressed, so the task pulling from it sleeps.",
              .handlers = {{"activeN", "rw", "whether port N passes packets"},
                           {"reset", "w", "makes every port active"}},
              .example =
                  "a -> [0]s :: Suppressor; b -> [1]s; s[0] -> x; s[1] -> y; "
                  "Script(write s.active1 false);");

}  // namespace shoal
