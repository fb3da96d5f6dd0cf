// StoreEtherAddress: writes an Ethernet address into packets, as Click's.
#include <fmt/format.h>

#include <cstring>

#include "shoal/elements/common.hh"

namespace shoal {

class StoreEtherAddress : public PacketElement<StoreEtherAddress> {
 public:
  void configure(Args& a) override {
    std::string off;
    a.read_mp("ADDR", addr_).read_mp("OFFSET", off);
    a.complete();
    uint64_t n;
    if (off == "src")
      off_ = 6;
    else if (off == "dst")
      off_ = 0;
    else if (parse_uint(off, n) && n <= 65535)
      off_ = uint32_t(n);
    else
      a.fail(fmt::format("OFFSET '{}': a byte offset, 'src' or 'dst'", off));
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    if (uint64_t(off_) + 6 > p->length()) return noutputs() > 1 ? 1 : drop_code(r_);
    std::memcpy(p->data() + off_, addr_.b.data(), 6);
    return 0;
  }
  void add_handlers() override {
    add_read_handler("addr", [this] { return format_ether_click(addr_.b.data()); });
    add_write_handler("addr", [this](const std::string& v) {
      if (!parse_ether(trim(v), addr_)) throw std::runtime_error("expected an Ethernet address");
    });
  }

 private:
  EtherAddr addr_;
  uint32_t off_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(StoreEtherAddress, .name = "StoreEtherAddress", .ports = "1/1-2", .processing = "a/ah",
              .summary = "writes an Ethernet address into packets",
              .description =
                  "Click's StoreEtherAddress: ADDR is written at OFFSET ('src' is 6, 'dst' 0: the places "
                  "in an Ethernet header). A packet too short for it leaves on output 1 if there is one, "
                  "else is dropped ('too-short').",
              .args = {{"ADDR", "Ethernet address", "the address, mandatory"},
                       {"OFFSET", "offset|src|dst", "where to write it, mandatory"}},
              .handlers = {{"addr", "rw", "ADDR"}},
              .example = "... -> StoreEtherAddress(0:1:2:3:4:5, src) -> ToDevice(eth0);");

}  // namespace shoal
