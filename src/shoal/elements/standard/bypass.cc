// Bypass: sends packets around a detour while active, as Click's.
#include "shoal/elements/common.hh"

namespace shoal {

class Bypass : public Element {
 public:
  void configure(Args& a) override {
    a.read_p("ACTIVE", active_).read("INLINE", inline_);
    a.complete();
  }
  // Push: input 0 goes to output 1 (the detour) while active and there is
  // one, else to output 0; what comes back on input 1 goes to output 0.
  void push(int port, PacketBatch* b) override { output_push(active_ && port == 0 && noutputs() > 1 ? 1 : 0, b); }
  // Pull: output 0 pulls from input 1 (the detour's end) while active and
  // there is one, else from input 0; output 1 pulls from input 0.
  PacketBatch* pull(int port, uint32_t max) override {
    return input_pull(active_ && port == 0 && ninputs() > 1 ? 1 : 0, max);
  }
  void add_handlers() override {
    add_read_handler("active", [this] { return active_ ? "true" : "false"; });
    add_write_handler("active", [this](const std::string& v) {
      bool on;
      if (!parse_bool(trim(v), on)) throw std::runtime_error("expected true or false");
      active_ = on;
    });
  }

 private:
  bool active_ = false, inline_ = false;
};
SHOAL_ELEMENT(Bypass, .name = "Bypass", .ports = "1-2/1-2", .processing = "a/a",
              .summary = "sends packets around a detour while active",
              .description =
                  "Click's Bypass. Inactive (the default), packets go from input 0 to output 0. Active, pushed "
                  "packets from input 0 leave on output 1, the detour, whose end comes back on input 1 and leaves "
                  "on output 0; in pull mode output 0 pulls from input 1 instead. The active handler switches "
                  "at run time, between batches.",
              .args = {{"ACTIVE", "boolean", "take the detour (default false)"},
                       {"INLINE", "boolean", "accepted (Click's)"}},
              .handlers = {{"active", "rw", "take the detour"}},
              .example = "... -> b :: Bypass -> out; b[1] -> Print(detour) -> [1]b;", .forwards_all = false);

}  // namespace shoal
