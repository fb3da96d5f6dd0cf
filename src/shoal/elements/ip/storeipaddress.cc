// StoreIPAddress: writes an IPv4 address into packet data, as Click's.
#include <fmt/format.h>

#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class StoreIPAddress : public PacketElement<StoreIPAddress> {
 public:
  void configure(Args& a) override {
    std::string off;
    use_addr_ = a.items().size() > 1 || a.has("ADDR");
    if (use_addr_)
      a.read_mp("ADDR", addr_);
    else
      a.read("ADDR", addr_);  // (absent: keeps the documentation check honest)
    a.read_mp("OFFSET", off);
    a.complete();
    if (off == "src" || off == "SRC")
      field_ = 12;
    else if (off == "dst" || off == "DST")
      field_ = 16;
    else if (uint64_t o; parse_uint(off, o) && o < 65536)
      offset_ = int64_t(o);
    else
      a.fail(fmt::format("OFFSET must be an offset, 'src' or 'dst', not '{}'", off));
  }
  void initialize() override { r_ = add_drop_reason("no-room"); }
  int process(Packet* p) {
    uint8_t a[4];
    std::memcpy(a, use_addr_ ? addr_.b.data() : p->anno().dst_ip, 4);
    bool have = use_addr_ || (a[0] | a[1] | a[2] | a[3]);
    if (offset_ >= 0) {
      if (!have) return 0;  // no destination annotation: nothing to store
      if (uint64_t(offset_) + 4 > p->length()) return drop_code(r_);
      std::memcpy(p->data() + offset_, a, 4);
      return 0;
    }
    uint8_t* ip = ip_header20(p);
    if (!ip) return drop_code(r_);
    uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
    // The header's checksum, and a TCP or UDP checksum over the pseudo
    // header, updated incrementally (RFC 1624) for the two changed words.
    uint8_t* f = ip + field_;
    uint16_t o0 = k::load_be16(f), o1 = k::load_be16(f + 2);
    std::memcpy(f, a, 4);
    uint16_t n0 = k::load_be16(f), n1 = k::load_be16(f + 2);
    auto update = [&](uint8_t* sum) {
      uint16_t c = k::load_be16(sum);
      c = k::csum_update16(c, o0, n0);
      k::store_be16(sum, k::csum_update16(c, o1, n1));
    };
    update(ip + 10);
    bool first = (k::load_be16(ip + 6) & 0x1fff) == 0;
    uint8_t* l4 = ip + hl;
    int64_t l4len = int64_t(p->length()) - (l4 - p->data());
    if (first && ip[9] == 6 && l4len >= 20) update(l4 + 16);
    if (first && ip[9] == 17 && l4len >= 8 && k::load_be16(l4 + 6)) update(l4 + 6);
    return 0;
  }

 private:
  IPv4Addr addr_;
  bool use_addr_ = false;
  int64_t offset_ = -1;
  uint32_t field_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(StoreIPAddress, .name = "StoreIPAddress", .ports = "1/1", .processing = "a/a",
              .summary = "writes an IPv4 address into packet data",
              .description =
                  "Writes ADDR, or the destination IP annotation when ADDR is not given, at byte OFFSET of "
                  "each packet (packets whose annotation is zero pass unchanged). OFFSET 'src' or 'dst' names "
                  "the IP header's field: the header checksum and a TCP or UDP checksum are updated "
                  "incrementally. Packets too short, or without an IP header for 'src'/'dst', are dropped "
                  "('no-room').",
              .args = {{"ADDR", "IPv4 address", "address stored (default: the destination annotation)"},
                       {"OFFSET", "offset, src or dst", "where, mandatory"}},
              .handlers = {}, .example = "... -> StoreIPAddress(10.0.0.1, src) -> ...");

}  // namespace shoal
