// Suppressor: passes each input to its output unless that port is
// suppressed, as Click's.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class Suppressor : public Element {
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
  PacketBatch* pull(int port, uint32_t max) override { return active_[size_t(port)] ? input_pull(port, max) : nullptr; }
  void add_handlers() override {
    for (int i = 0; i < ninputs(); ++i) {
      add_read_handler(fmt::format("active{}", i), [this, i] { return active_[size_t(i)] ? "true" : "false"; });
      add_write_handler(fmt::format("active{}", i), [this, i](const std::string& v) {
        bool on;
        if (!parse_bool(trim(v), on)) throw std::runtime_error("expected true or false");
        active_[size_t(i)] = on;
      });
    }
    add_write_handler("reset", [this](const std::string&) { active_.assign(active_.size(), true); });
  }

 private:
  std::vector<char> active_;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Suppressor, .name = "Suppressor", .ports = "-/-", .processing = "a/a",
              .summary = "passes each input to its output unless suppressed",
              .description =
                  "Click's Suppressor: as many inputs as outputs; packets from input i leave on output i. "
                  "A suppressed port (activeN false) drops what is pushed into it ('suppressed') and gives "
                  "nothing when pulled. Every port starts active; reset makes them all active again.",
              .handlers = {{"activeN", "rw", "whether port N passes packets"},
                           {"reset", "w", "makes every port active"}},
              .example =
                  "a -> [0]s :: Suppressor; b -> [1]s; s[0] -> x; s[1] -> y; "
                  "Script(write s.active1 false);");

}  // namespace shoal
