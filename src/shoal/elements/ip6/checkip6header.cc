// CheckIP6Header: checks IPv6 headers.
#include <fmt/format.h>
#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/kernels/steps/route6.hh"

namespace shoal {

class CheckIP6Header : public PacketElement<CheckIP6Header> {
 public:
  void configure(Args& a) override {
    a.read("OFFSET", off_);
    std::string bad;
    for (ArgItem* it : a.rest_positional())  // BADADDRS, as Click
      if (!parse_ipv6_list(it->text, bad_, bad)) a.fail(*it, fmt::format("bad IPv6 address '{}'", bad));
    a.complete();
  }
  void initialize() override {
    r_[0] = add_drop_reason("tiny-packet");
    r_[1] = add_drop_reason("bad-ip-version");
    r_[2] = add_drop_reason("bad-ip-length");
    r_[3] = add_drop_reason("bad-source-address");
  }
  int process(Packet* p) {
    int bad = check(p);
    if (bad < 0) return 0;
    if (noutputs() > 1) return 1;
    return drop_code(r_[bad]);
  }

 private:
  int check(Packet* p) {
    if (uint64_t(off_) + 40 > p->length()) return 0;
    const uint8_t* ip = p->data() + off_;
    if ((ip[0] >> 4) != 6) return 1;
    uint32_t plen = k::load_be16(ip + 4);
    if (uint64_t(off_) + 40 + plen > p->length()) return 2;
    if (ip[8] == 0xff) return 3;  // multicast source (RFC 4291 2.7)
    for (auto& b : bad_)
      if (std::memcmp(ip + 8, b.b.data(), 16) == 0) return 3;
    p->take(p->length() - off_ - 40 - plen);  // link padding
    p->set_network_header(off_);
    p->set_transport_header(off_ + 40);
    std::memcpy(p->anno().dst_ip6, ip + 24, 16);
    return -1;
  }
  uint32_t off_ = 0;
  std::vector<IPv6Addr> bad_;
  uint16_t r_[4] = {};
};
SHOAL_ELEMENT(CheckIP6Header, .name = "CheckIP6Header", .ports = "1/1-2", .processing = "a/ah",
              .summary = "checks IPv6 headers",
              .description =
                  "Checks the IPv6 header at OFFSET: 40 bytes present, version 6, payload length within "
                  "the packet, source not multicast nor one of BADADDRS. Good packets get the network "
                  "header and DST_IP6 annotations, lose link padding, and leave on output 0; bad ones "
                  "leave on output 1 if it exists, else are dropped (tiny-packet, bad-ip-version, "
                  "bad-ip-length, bad-source-address).",
              .args = {{"BADADDRS...", "IPv6 addresses", "source addresses to reject"},
                       {"OFFSET", "unsigned", "where the IPv6 header starts (default 0)"}},
              .example = "FromDump(in.pcap) -> CheckIP6Header(OFFSET 14) -> LookupIP6Route(...);");

}  // namespace shoal
