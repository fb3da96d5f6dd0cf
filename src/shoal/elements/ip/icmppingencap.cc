// ICMPPingEncap: puts packets behind ICMP echo request and IPv4 headers, as
// Click's (a ping generator with a source before it).
#include "shoal/elements/ip/icmpencap.hh"

namespace shoal {

class ICMPPingEncap : public IcmpEncap<ICMPPingEncap> {
 public:
  void configure(Args& a) override {
    a.read_mp("SRC", src_).read_mp("DST", dst_).read("IDENTIFIER", id_);
    a.complete();
    type_ = 8, code_ = 0, hl_ = 8;
    skip_zero_ = true;  // Click's sequence numbers never come back to 0
  }
  void add_handlers() override {
    address_handler("src", src_);
    address_handler("dst", dst_);
  }

 private:
  void address_handler(const char* name, IPv4Addr& a) {
    add_read_handler(name, [&a] { return format_ipv4(a.b.data()); });
    add_write_handler(name, [&a](const std::string& v) {
      IPv4Addr x;
      if (!parse_ipv4(trim(v), x)) throw std::runtime_error("expected an IPv4 address");
      a = x;
    });
  }
};
SHOAL_ELEMENT(ICMPPingEncap, .name = "ICMPPingEncap", .ports = "1/1", .processing = "a/a",
              .summary = "puts packets behind ICMP echo request and IPv4 headers",
              .description =
                  "Pushes an ICMP echo request header (IDENTIFIER and a sequence number that counts packets from 1, "
                  "stepping from 65535 to 1) and an IPv4 header from SRC to DST (TTL 255, the IP ID the same "
                  "count), with both checksums; the packet's data is the echo's payload. Sets the IP header and "
                  "destination annotations. Packets without the headroom are dropped ('no-headroom'). "
                  "ICMPIPEncap(SRC, DST, echo) is the same but for the sequence's wrap.",
              .args = {{"SRC", "IPv4 address", "source, mandatory"},
                       {"DST", "IPv4 address", "destination, mandatory"},
                       {"IDENTIFIER", "unsigned", "echo identifier (default 0)"}},
              .handlers = {{"src", "rw", "the source address"}, {"dst", "rw", "the destination address"}},
              .example =
                  "InfiniteSource(LIMIT 5, LENGTH 56) -> ICMPPingEncap(10.0.0.1, 10.0.0.2) -> EtherEncap(0x0800, "
                  "SRC, DST) -> ToDevice(eth0)");

}  // namespace shoal
