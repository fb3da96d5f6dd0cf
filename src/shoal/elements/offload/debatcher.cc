// Debatcher: splits aggregates back into batches.

#include "shoal/elements/common.hh"

namespace shoal {

class Debatcher : public Element {
 public:
  void configure(Args& a) override {
    a.read_p("BATCH", batch_);
    a.complete();
  }
  void initialize() override {
    uint32_t cap = worker().batches().batch_capacity();
    if (batch_ == 0 || batch_ > cap) batch_ = cap;
  }
  void push(int, PacketBatch* b) override {
    PacketBatch* out = nullptr;
    b->for_each([&](uint32_t, Packet* p) {
      if (!out) {
        out = new_batch();
        out->anno = b->anno;
        out->anno.offload = nullptr;
      }
      out->append(p);
      if (out->slots() == batch_) {
        output_push(0, out);
        out = nullptr;
      }
    });
    recycle(b);
    if (out) output_push(0, out);
  }

 private:
  uint32_t batch_ = 0;
};
SHOAL_ELEMENT(Debatcher, .name = "Debatcher", .ports = "1/1", .processing = "h/h",
              .summary = "splits aggregates back into batches",
              .description =
                  "Splits each aggregate into batches of at most BATCH packets (default and most: the "
                  "runtime's batch size), in order.",
              .args = {{"BATCH", "unsigned", "packets per batch"}},
              .example = "... -> CompletionQueue -> Debatcher -> Dispatcher(0, 1);");

}  // namespace shoal
