// Align: moves packet data to a given alignment.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class Align : public PacketElement<Align> {
 public:
  void configure(Args& a) override {
    uint64_t mod = 0, off = 0;
    a.read_mp("MODULUS", mod).read_mp("OFFSET", off);
    a.complete();
    if (mod != 2 && mod != 4 && mod != 8) a.fail("MODULUS must be 2, 4 or 8");
    if (off >= mod) a.fail("OFFSET must be less than MODULUS");
    mod_ = uint32_t(mod), off_ = uint32_t(off);
  }
  void initialize() override { r_ = add_drop_reason("no-room-to-align"); }
  int process(Packet* p) {
    uint32_t at = uint32_t(reinterpret_cast<uintptr_t>(p->data()) % mod_);
    if (at == off_) return 0;
    // Forward by the difference, or back by what is left of the modulus.
    int32_t fwd = int32_t((off_ + mod_ - at) % mod_);
    if (p->shift_data(fwd) || p->shift_data(fwd - int32_t(mod_))) {
      moved_.add();
      return 0;
    }
    return drop_code(r_);
  }
  void add_handlers() override { add_stat_handler("moved", moved_); }

 private:
  uint32_t mod_ = 4, off_ = 0;
  uint16_t r_ = 0;
  Stat moved_;
};
SHOAL_ELEMENT(Align, .name = "Align", .ports = "1/1", .processing = "a/a",
              .summary = "moves packet data to an alignment",
              .description =
                  "Click's Align: packet data leave with their first byte at an address that is OFFSET modulo "
                  "MODULUS (2, 4 or 8), moved within the packet's buffer when it is not (headers annotations "
                  "follow). A packet whose buffer has no room either way is dropped ('no-room-to-align'); Shoal's "
                  "buffers have headroom and tailroom, so that does not happen to packets Shoal made.",
              .args = {{"MODULUS", "2|4|8", "the alignment"}, {"OFFSET", "unsigned", "the offset within it"}},
              .handlers = {{"moved", "r", "packets whose data moved"}},
              .example = "FromDevice(eth0) -> Align(4, 2) -> Strip(14) -> CheckIPHeader -> ...");

}  // namespace shoal
