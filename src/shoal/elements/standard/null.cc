// Null (Idle): passes packets unchanged.

#include "shoal/elements/common.hh"

namespace shoal {

// ---------------------------------------------------------------- Null
class Null : public PacketElement<Null> {
 public:
  void process(Packet*) {}
};
SHOAL_ELEMENT(Null, .name = "Null", .ports = "1/1", .processing = "a/a", .summary = "passes packets unchanged",
              .description = "Does nothing: a placeholder in a chain.", .args = {}, .handlers = {},
              .example = "src -> Null -> Discard;", .forwards_all = true);

// ---------------------------------------------------------------- Idle
class Idle : public Element {
 public:
  void initialize() override { r_ = add_drop_reason("idle"); }
  void push(int, PacketBatch* b) override { drop_all(b, r_); }
  PacketBatch* pull(int, uint32_t) override { return nullptr; }
  Notifier* notifier() override {
    n_.sleep();
    return &n_;
  }

 private:
  uint16_t r_ = 0;
  Notifier n_;
};
SHOAL_ELEMENT(Idle, .name = "Idle", .ports = "-/-", .processing = "a/a", .summary = "never emits packets; drops input",
              .description =
                  "Has any number of ports. Never produces packets; packets pushed to it are dropped "
                  "(reason 'idle'). Useful to tie off unused ports.",
              .args = {}, .handlers = {}, .example = "c :: Classifier(12/0800, -); c[1] -> Idle;",
              .independent_ports = true);

}  // namespace shoal
