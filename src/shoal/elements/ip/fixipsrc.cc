// FixIPSrc: sets the source of locally made IP packets.

#include <cstring>
#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class FixIPSrc : public PacketElement<FixIPSrc> {
 public:
  void configure(Args& a) override {
    IPv4Addr x;
    a.read_mp("IPADDR", x);
    a.complete();
    std::memcpy(addr_, x.b.data(), 4);
  }
  void process(Packet* p) {
    if (!(p->anno().flags & Anno::kFixIPSrc)) return;
    p->anno().flags &= uint8_t(~Anno::kFixIPSrc);
    uint32_t hl;
    uint8_t* ip = ip_header(p, &hl);
    if (!ip) return;
    std::memcpy(ip + 12, addr_, 4);
    set_ip_checksum(ip, hl);
    fixed_.add();
  }
  void add_handlers() override { add_stat_handler("fixed", fixed_); }

 private:
  uint8_t addr_[4] = {};
  Stat fixed_;
};
SHOAL_ELEMENT(FixIPSrc, .name = "FixIPSrc", .ports = "1/1", .processing = "a/a",
              .summary = "sets the source of locally made IP packets",
              .description =
                  "For packets carrying the fix-source annotation (set by ICMPError), sets the IP "
                  "source to IPADDR (the outgoing interface's address), recomputes the checksum and "
                  "clears the annotation; other packets pass unchanged.",
              .args = {{"IPADDR", "IPv4 address", "the outgoing interface's address"}},
              .handlers = {{"fixed", "r", "packets rewritten"}},
              .example = "... -> FixIPSrc(10.0.1.1) -> DecIPTTL -> ...;");

}  // namespace shoal
