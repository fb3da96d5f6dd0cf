// GetIP6Address and SetIP6Address: the IPv6 destination annotation from
// packet data, or from an address, as Click's.
#include <cstring>

#include "shoal/elements/common.hh"

namespace shoal {

class GetIP6Address : public PacketElement<GetIP6Address> {
 public:
  void configure(Args& a) override {
    a.read_mp("OFFSET", off_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    if (uint64_t(off_) + 16 > p->length()) return drop_code(r_);
    std::memcpy(p->anno().dst_ip6, p->data() + off_, 16);
    return 0;
  }

 private:
  uint32_t off_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(GetIP6Address, .name = "GetIP6Address", .ports = "1/1", .processing = "a/a",
              .summary = "sets the IPv6 destination annotation from packet data",
              .description =
                  "Click's GetIP6Address: the 16 bytes at OFFSET become the DST_IP6 annotation (what "
                  "LookupIP6Route routes on); 24 is an IPv6 header's destination. A packet too short is "
                  "dropped ('too-short').",
              .args = {{"OFFSET", "unsigned", "where the address is, mandatory"}},
              .example = "... -> CheckIP6Header(14) -> GetIP6Address(38) -> rt :: LookupIP6Route(...);");

class SetIP6Address : public PacketElement<SetIP6Address> {
 public:
  void configure(Args& a) override {
    IPv6Addr x;
    a.read_mp("ADDR", x);
    a.complete();
    std::memcpy(addr_, x.b.data(), 16);
  }
  void process(Packet* p) { std::memcpy(p->anno().dst_ip6, addr_, 16); }

 private:
  uint8_t addr_[16] = {};
};
SHOAL_ELEMENT(SetIP6Address, .name = "SetIP6Address", .ports = "1/1", .processing = "a/a",
              .summary = "sets the IPv6 destination annotation",
              .description =
                  "Click's SetIP6Address: the DST_IP6 annotation becomes ADDR (the next hop an element "
                  "such as IP6NDSolicitor resolves).",
              .args = {{"ADDR", "IPv6 address", "the address, mandatory"}},
              .example = "rt[1] -> SetIP6Address(fe80::1) -> IP6NDSolicitor(...);");

}  // namespace shoal
