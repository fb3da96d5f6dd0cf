// Pad: lengthens packets to a length, as Click's.
#include <cstring>

#include "shoal/core/worker.hh"
#include "shoal/elements/clickrandom.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class Pad : public PacketElement<Pad> {
 public:
  void configure(Args& a) override {
    a.read_p("LENGTH", length_).read("ZERO", zero_).read("RANDOM", random_).read("MAXLENGTH", max_);
    a.complete();
    if (random_ && zero_ && a.has("ZERO")) a.fail("ZERO and RANDOM exclude each other");
    if (max_ && max_ < length_) a.fail("MAXLENGTH is below LENGTH");
  }
  void initialize() override {
    r_ = add_drop_reason("no-tailroom");
    rng_ = &click_random_of(worker().runtime(), worker().id());
  }
  int process(Packet* p) {
    const uint32_t len = p->length();
    if (len < length_) {
      const uint32_t more = length_ - len;
      if (p->tailroom() < more) return drop_code(r_);
      p->put(more);
      uint8_t* d = p->data() + len;
      if (random_)
        for (uint32_t i = 0; i < more; ++i) d[i] = uint8_t(rng_->random());
      else if (zero_)
        std::memset(d, 0, more);
    }
    if (max_ && p->length() > max_) p->take(p->length() - max_);
    return 0;
  }

 private:
  uint32_t length_ = 0, max_ = 0;
  bool zero_ = true, random_ = false;
  uint16_t r_ = 0;
  ClickRandom* rng_ = nullptr;
};
SHOAL_ELEMENT(Pad, .name = "Pad", .ports = "1/1", .processing = "a/a", .summary = "lengthens packets to a length",
              .description =
                  "Click's Pad: packets shorter than LENGTH grow to LENGTH, the new bytes zero (ZERO, the default), "
                  "random (RANDOM, Click's random numbers) or left as the buffer had them (ZERO false); with "
                  "MAXLENGTH, longer packets are cut to it. (Shoal keeps no extra-length annotation, which Click "
                  "pads to without LENGTH.) A packet without the room is dropped ('no-tailroom').",
              .args = {{"LENGTH", "unsigned", "the shortest length out (default 0)"},
                       {"ZERO", "boolean", "zero the new bytes (default true)"},
                       {"RANDOM", "boolean", "random new bytes (default false)"},
                       {"MAXLENGTH", "unsigned", "cut longer packets to this (default 0: none)"}},
              .example = "... -> Pad(60) -> ToDevice(eth0);");

}  // namespace shoal
