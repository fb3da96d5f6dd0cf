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

// Click's names for it: NullElement, and Null1 to Null8 (for building long
// chains in benchmarks).
class NullElement : public Null {};
SHOAL_ELEMENT(NullElement, .name = "NullElement", .ports = "1/1", .processing = "a/a",
              .summary = "passes packets unchanged (Null)", .description = "Click's NullElement: Null.", .args = {},
              .handlers = {}, .example = "src -> NullElement -> Discard;", .forwards_all = true);
#define SHOAL_NUMBERED_NULL(N)                                                                                 \
  class Null##N : public Null {};                                                                              \
  SHOAL_ELEMENT(Null##N, .name = "Null" #N, .ports = "1/1", .processing = "a/a",                               \
                .summary = "passes packets unchanged (Null)",                                                  \
                .description = "Click's Null" #N ": Null, under one of eight names for chains in benchmarks.", \
                .args = {}, .handlers = {}, .example = "src -> Null1 -> Null2 -> Discard;", .forwards_all = true)
SHOAL_NUMBERED_NULL(1);
SHOAL_NUMBERED_NULL(2);
SHOAL_NUMBERED_NULL(3);
SHOAL_NUMBERED_NULL(4);
SHOAL_NUMBERED_NULL(5);
SHOAL_NUMBERED_NULL(6);
SHOAL_NUMBERED_NULL(7);
SHOAL_NUMBERED_NULL(8);
#undef SHOAL_NUMBERED_NULL

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
