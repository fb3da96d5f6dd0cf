// Resize: adds or removes bytes at the head and tail of packets, as Click's.
#include <cstring>

#include "shoal/elements/common.hh"

namespace shoal {

class Resize : public PacketElement<Resize> {
 public:
  void configure(Args& a) override {
    a.read_p("HEAD", head_).read_p("TAIL", tail_);
    a.complete();
  }
  void initialize() override {
    r_head_ = add_drop_reason("no-headroom");
    r_tail_ = add_drop_reason("no-tailroom");
  }
  int process(Packet* p) {
    if (head_ < 0)
      p->pull(uint32_t(std::min<int64_t>(-head_, p->length())));
    else if (head_ > 0 && !p->push(uint32_t(head_)))
      return drop_code(r_head_);
    if (tail_ < 0) {
      p->take(uint32_t(std::min<int64_t>(-tail_, p->length())));
    } else if (tail_ > 0) {
      uint8_t* t = p->put(uint32_t(tail_));
      if (!t) return drop_code(r_tail_);
      std::memset(t, 0, size_t(tail_));
    }
    return 0;
  }

 private:
  int64_t head_ = 0, tail_ = 0;
  uint16_t r_head_ = 0, r_tail_ = 0;
};
SHOAL_ELEMENT(Resize, .name = "Resize", .ports = "1/1", .processing = "a/a",
              .summary = "adds or removes bytes at the head and tail of packets",
              .description =
                  "HEAD bytes are added in front of each packet when positive (the headroom's bytes, as Unstrip "
                  "exposes them) or removed when negative; TAIL likewise at the end (added bytes are zero). "
                  "Removing more than the packet holds leaves it empty. Packets without the room to grow are "
                  "dropped ('no-headroom', 'no-tailroom').",
              .args = {{"HEAD", "integer", "bytes added (removed when negative) at the front (default 0)"},
                       {"TAIL", "integer", "bytes added (removed when negative) at the end (default 0)"}},
              .handlers = {}, .example = "... -> Resize(HEAD -14) -> ...");

}  // namespace shoal
