// EtherEncap and EtherRewrite.
#include <fmt/format.h>

#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/elements/ether/etherheader.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class EtherEncap : public PacketElement<EtherEncap> {
 public:
  void configure(Args& a) override {
    uint32_t type = 0;
    a.read_mp("ETHERTYPE", type).read_mp("SRC", src_).read_mp("DST", dst_);
    a.complete();
    if (type > 0xffff) a.fail("ETHERTYPE must fit 16 bits");
    type_ = uint16_t(type);
  }
  void initialize() override { r_ = add_drop_reason("no-headroom"); }
  int process(Packet* p) { return push_ether_header(p, dst_, src_, type_) ? 0 : drop_code(r_); }
  void add_handlers() override {
    add_read_handler("src", [this] { return format_ether_click(src_.b.data()); });
    add_read_handler("dst", [this] { return format_ether_click(dst_.b.data()); });
    add_write_handler("src", [this](const std::string& v) {
      if (!parse_ether(trim(v), src_)) throw std::runtime_error("expected an Ethernet address");
    });
    add_write_handler("dst", [this](const std::string& v) {
      if (!parse_ether(trim(v), dst_)) throw std::runtime_error("expected an Ethernet address");
    });
  }

 private:
  EtherAddr src_, dst_;
  uint16_t type_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(EtherEncap, .name = "EtherEncap", .ports = "1/1", .processing = "a/a",
              .summary = "prepends an Ethernet header",
              .description =
                  "Pushes a 14-byte Ethernet header (DST, SRC, ETHERTYPE) in front of each packet. "
                  "Packets without 14 bytes of headroom are dropped (reason 'no-headroom').",
              .args = {{"ETHERTYPE", "unsigned", "e.g. 0x0800, mandatory"},
                       {"SRC", "Ethernet address", "mandatory"},
                       {"DST", "Ethernet address", "mandatory"}},
              .handlers = {{"src", "rw", "source address"}, {"dst", "rw", "destination address"}},
              .example = "... -> EtherEncap(0x0800, 00:00:00:00:00:01, 00:00:00:00:00:02) -> ToDump(out.pcap);");

class EtherRewrite : public PacketElement<EtherRewrite> {
 public:
  void configure(Args& a) override {
    a.read_mp("SRC", src_).read_mp("DST", dst_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    if (p->length() < 14) return drop_code(r_);
    std::memcpy(p->data(), dst_.b.data(), 6);
    std::memcpy(p->data() + 6, src_.b.data(), 6);
    return 0;
  }
  void add_handlers() override {
    add_read_handler("src", [this] { return format_ether_click(src_.b.data()); });
    add_read_handler("dst", [this] { return format_ether_click(dst_.b.data()); });
  }

 private:
  EtherAddr src_, dst_;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(EtherRewrite, .name = "EtherRewrite", .ports = "1/1", .processing = "a/a",
              .summary = "rewrites Ethernet addresses",
              .description =
                  "Overwrites the destination and source addresses of each frame. Frames shorter than "
                  "14 bytes are dropped (reason 'too-short').",
              .args = {{"SRC", "Ethernet address", "mandatory"}, {"DST", "Ethernet address", "mandatory"}},
              .handlers = {{"src", "r", "source address"}, {"dst", "r", "destination address"}},
              .example = "... -> EtherRewrite(SRC 02:00:00:00:00:01, DST 02:00:00:00:00:02) -> out;");

}  // namespace shoal
