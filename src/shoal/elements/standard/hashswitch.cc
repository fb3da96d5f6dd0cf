// HashSwitch: chooses an output by hashing packet bytes.

#include "shoal/elements/common.hh"
#include "shoal/kernels/flowhash.hh"

namespace shoal {

class HashSwitch : public PacketElement<HashSwitch> {
 public:
  void configure(Args& a) override {
    a.read_mp("OFFSET", off_).read_mp("LENGTH", len_);
    a.complete();
    if (len_ == 0) a.fail("LENGTH must be at least 1");
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    if (p->length() < off_ + len_) return drop_code(r_);
    const uint8_t* d = p->data() + off_;
    uint32_t h = 0x811c9dc5u;
    for (uint32_t i = 0; i < len_; ++i) h = (h ^ d[i]) * 0x01000193u;
    return int(k::mix32(h) % uint32_t(noutputs()));
  }

 private:
  uint32_t off_ = 0, len_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(HashSwitch, .name = "HashSwitch", .ports = "1/1-", .processing = "h/h",
              .summary = "chooses an output by hashing packet bytes",
              .description =
                  "Hashes LENGTH bytes at OFFSET and sends the packet to hash mod the number of outputs, "
                  "so equal bytes always take the same output. Packets shorter than OFFSET+LENGTH are "
                  "dropped (reason 'too-short').",
              .args = {{"OFFSET", "unsigned", "first byte hashed, mandatory"},
                       {"LENGTH", "unsigned", "bytes hashed, mandatory"}},
              .handlers = {}, .example = "hs :: HashSwitch(26, 8); hs[0] -> a; hs[1] -> b;  // IPv4 addresses");

}  // namespace shoal
