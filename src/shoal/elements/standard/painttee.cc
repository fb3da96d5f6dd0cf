// PaintTee: copies packets of one paint color to output 1.

#include "shoal/elements/common.hh"

namespace shoal {

class PaintTee : public Element {
 public:
  void configure(Args& a) override {
    uint32_t c = 0;
    a.read_mp("COLOR", c);
    a.complete();
    if (c > 255) a.fail("COLOR must be 0 to 255");
    color_ = uint8_t(c);
  }
  void initialize() override { r_ = add_drop_reason("pool-exhausted"); }
  void push(int, PacketBatch* b) override {
    PacketBatch* c = nullptr;
    b->for_each([&](uint32_t, Packet* p) {
      if (p->anno().paint != color_) return;
      Packet* q = worker().pool().clone(p);
      if (!q) return count_lost(r_);
      created();
      if (!c) c = new_batch();
      c->append(q);
    });
    output_push(0, b);
    if (c) output_push(1, c);
  }

 private:
  uint8_t color_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(PaintTee, .name = "PaintTee", .ports = "1/2", .processing = "h/h",
              .summary = "copies packets of one paint color to output 1",
              .description =
                  "Every packet leaves on output 0; those whose PAINT annotation is COLOR are also "
                  "copied to output 1. Routers use it to send ICMP redirects for packets that leave "
                  "by the interface they came in on.",
              .args = {{"COLOR", "unsigned", "the paint color"}},
              .example = "rt[1] -> pt :: PaintTee(1) -> ...; pt[1] -> ICMPError(10.0.0.1, redirect, host) -> rt;");

}  // namespace shoal
