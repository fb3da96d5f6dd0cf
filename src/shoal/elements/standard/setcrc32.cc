// SetCRC32 and CheckCRC32: a CRC-32 trailer on packets, as Click's.
#include <array>
#include <cstring>

#include "shoal/elements/common.hh"

namespace shoal {

namespace crc32click {

// Click's CRC (lib/crc32.c): the Ethernet polynomial 0x04C11DB7, high bit
// first, from 0xFFFFFFFF, not complemented at the end (the catalogue's
// CRC-32/MPEG-2); appended in the CPU's byte order, as Click stores it.
inline uint32_t crc(const uint8_t* d, size_t n) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i << 24;
      for (int k = 0; k < 8; ++k) c = (c & 0x80000000u) ? (c << 1) ^ 0x04C11DB7u : c << 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t c = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) c = (c << 8) ^ table[((c >> 24) ^ d[i]) & 0xff];
  return c;
}

}  // namespace crc32click

class SetCRC32 : public PacketElement<SetCRC32> {
 public:
  void initialize() override { r_ = add_drop_reason("no-tailroom"); }
  int process(Packet* p) {
    if (p->tailroom() < 4) return drop_code(r_);
    const uint32_t c = crc32click::crc(p->data(), p->length());
    p->put(4);
    std::memcpy(p->data() + p->length() - 4, &c, 4);
    return 0;
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(SetCRC32, .name = "SetCRC32", .ports = "1/1", .processing = "a/a",
              .summary = "appends a CRC-32 to packets",
              .description =
                  "Click's SetCRC32: appends the CRC-32 of the packet's bytes (Click's: polynomial "
                  "0x04C11DB7 high bit first, from 0xFFFFFFFF, not complemented, in the CPU's byte order; "
                  "the catalogue's CRC-32/MPEG-2). CheckCRC32 checks and removes it. A packet without room "
                  "for it is dropped ('no-tailroom').",
              .example = "... -> SetCRC32 -> link -> CheckCRC32 -> ...;");

class CheckCRC32 : public PacketElement<CheckCRC32> {
 public:
  void initialize() override { r_ = add_drop_reason("bad-crc"); }
  int process(Packet* p) {
    const uint32_t n = p->length();
    uint32_t stored;
    if (n < 4) return drop_code(r_);
    std::memcpy(&stored, p->data() + n - 4, 4);
    if (stored != crc32click::crc(p->data(), n - 4)) return drop_code(r_);
    p->take(4);
    return 0;
  }

 private:
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(CheckCRC32, .name = "CheckCRC32", .ports = "1/1", .processing = "a/a",
              .summary = "checks and removes the CRC-32 SetCRC32 appended",
              .description =
                  "Click's CheckCRC32: a packet whose last 4 bytes are SetCRC32's CRC of the rest loses "
                  "them and passes; any other (shorter than 4 bytes, or damaged) is dropped ('bad-crc').",
              .example = "... -> SetCRC32 -> link -> CheckCRC32 -> ...;");

}  // namespace shoal
