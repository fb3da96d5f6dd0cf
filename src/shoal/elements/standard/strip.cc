// Strip (Unstrip): removes bytes from the front of packets.

#include "shoal/elements/common.hh"

namespace shoal {

// ---------------------------------------------------------------- Strip / Unstrip
class Strip : public PacketElement<Strip> {
 public:
  void configure(Args& a) override {
    a.read_mp("LENGTH", n_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    if (p->length() < n_) return drop_code(r_);
    p->pull(n_);
    return 0;
  }

 private:
  uint32_t n_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Strip, .name = "Strip", .ports = "1/1", .processing = "a/a",
              .summary = "removes bytes from the front of packets",
              .description =
                  "Removes LENGTH bytes from the front of each packet (the bytes stay in the headroom, "
                  "so Unstrip can restore them). Shorter packets are dropped (reason 'too-short').",
              .args = {{"LENGTH", "unsigned", "bytes to strip, mandatory"}}, .handlers = {},
              .example = "FromDump(f.pcap) -> Strip(14) -> CheckIPHeader -> ...");

class Unstrip : public PacketElement<Unstrip> {
 public:
  void configure(Args& a) override {
    a.read_mp("LENGTH", n_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("no-headroom"); }
  int process(Packet* p) { return p->push(n_) ? 0 : drop_code(r_); }

 private:
  uint32_t n_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Unstrip, .name = "Unstrip", .ports = "1/1", .processing = "a/a",
              .summary = "puts back bytes at the front of packets",
              .description =
                  "Extends each packet by LENGTH bytes at the front, exposing headroom (typically bytes "
                  "an earlier Strip removed). Packets without that headroom are dropped "
                  "(reason 'no-headroom').",
              .args = {{"LENGTH", "unsigned", "bytes to restore, mandatory"}}, .handlers = {},
              .example = "... -> Strip(14) -> x -> Unstrip(14) -> ToDump(out.pcap);");

}  // namespace shoal
