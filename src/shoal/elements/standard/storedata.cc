// StoreData: writes bytes into packets, as Click's.
#include <cstring>

#include "shoal/elements/common.hh"

namespace shoal {

class StoreData : public PacketElement<StoreData> {
 public:
  void configure(Args& a) override {
    DataString data, mask;
    a.read_mp("OFFSET", off_).read_mp("DATA", data).read_p("MASK", mask).read("GROW", grow_);
    a.complete();
    data_ = data.bytes;
    mask_ = mask.bytes;
    if (off_ + data_.size() > 65535) a.fail("OFFSET and DATA reach past 65535 bytes");
  }
  void initialize() override { r_ = add_drop_reason("no-room"); }
  int process(Packet* p) {
    size_t n = data_.size();
    if (off_ + n > p->length()) {
      if (!grow_) {
        n = off_ < p->length() ? p->length() - off_ : 0;  // what fits, as Click stores
      } else {
        const uint32_t more = uint32_t(off_ + n - p->length());
        if (p->tailroom() < more) return drop_code(r_);
        const uint32_t old = p->length();
        p->put(more);
        std::memset(p->data() + old, 0, more);
      }
    }
    uint8_t* d = p->data() + off_;
    for (size_t i = 0; i < n; ++i) {
      const uint8_t m = i < mask_.size() ? uint8_t(mask_[i]) : 0xff;
      d[i] = uint8_t((d[i] & ~m) | (uint8_t(data_[i]) & m));
    }
    return 0;
  }

 private:
  uint32_t off_ = 0;
  std::string data_, mask_;
  bool grow_ = false;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(StoreData, .name = "StoreData", .ports = "1/1", .processing = "a/a",
              .summary = "writes bytes into packets",
              .description =
                  "Click's StoreData: the packet's bytes from OFFSET on become DATA; with MASK only the bits set in "
                  "MASK change (bytes past the mask's end change whole). Data past the packet's end is not stored, "
                  "unless GROW is true: the packet then grows (with zeros) to hold it, and a packet without the "
                  "room is dropped ('no-room').",
              .args = {{"OFFSET", "unsigned", "where to write, mandatory"},
                       {"DATA", "data", "the bytes (\\<hex> or a string), mandatory"},
                       {"MASK", "data", "the bits to change"},
                       {"GROW", "boolean", "lengthen packets too short for DATA (default false)"}},
              .example = "... -> StoreData(1, \\<FF>, MASK \\<02>) -> ...;");

}  // namespace shoal
