// IPInputCombo: Click's input path of an IP router in one element: Paint,
// Strip(14), Click's IPInputCombo header checks, GetIPAddress(16).
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "shoal/elements/common.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

class IPInputCombo : public PacketElement<IPInputCombo> {
 public:
  void configure(Args& a) override {
    uint64_t color = 0;
    std::string badsrc, badsrc_kw, gooddst, ifaces;
    a.read_mp("COLOR", color).read_p("BADSRC", badsrc).read("INTERFACES", ifaces).read("GOODDST", gooddst);
    a.complete();
    if (color > 255) a.fail("COLOR must be 0-255");
    color_ = uint8_t(color);
    // INTERFACES ADDR/LEN...: as Click, a BADSRC of each network's
    // broadcast address, 0.0.0.0 and 255.255.255.255, and a GOODDST of the
    // interfaces' own addresses.
    for (std::string_view one : split_words(ifaces)) {
      uint32_t addr, mask;
      if (!parse_ipv4_prefix(one, addr, mask)) a.fail(fmt::format("INTERFACES: '{}' is not ADDR/LEN", one));
      badsrc_.push_back((addr & mask) | ~mask);
      gooddst_.push_back(addr);
    }
    if (!ifaces.empty()) badsrc_.insert(badsrc_.end(), {0u, 0xffffffffu});
    std::string bad;
    if (!parse_ipv4_list(badsrc, badsrc_, bad)) a.fail(fmt::format("BADSRC: bad address '{}'", bad));
    if (!parse_ipv4_list(gooddst, gooddst_, bad)) a.fail(fmt::format("GOODDST: bad address '{}'", bad));
  }
  void initialize() override {
    r_tiny_ = add_drop_reason("tiny-packet");
    r_version_ = add_drop_reason("bad-ip-version");
    r_hl_ = add_drop_reason("bad-ip-header-length");
    r_len_ = add_drop_reason("bad-ip-length");
    r_sum_ = add_drop_reason("bad-ip-checksum");
    r_src_ = add_drop_reason("bad-source-address");
  }
  int process(Packet* p) {
    p->anno().paint = color_;
    if (p->length() < 14 + 20) return bad(r_tiny_);
    p->pull(14);
    const uint8_t* ip = p->data();
    if ((ip[0] >> 4) != 4) return bad(r_version_);
    const uint32_t hl = uint32_t(ip[0] & 0xf) * 4, len = k::load_be16(ip + 2);
    if (hl < 20) return bad(r_hl_);
    if (len > p->length() || len < hl) return bad(r_len_);
    if (k::ip_checksum(ip, hl) != 0) return bad(r_sum_);
    // RFC 1812 5.3.7: sources no router forwards, unless sent to one of ours
    const uint32_t src = k::load_be32(ip + 12), dst = k::load_be32(ip + 16);
    if (std::find(badsrc_.begin(), badsrc_.end(), src) != badsrc_.end() &&
        std::find(gooddst_.begin(), gooddst_.end(), dst) == gooddst_.end())
      return bad(r_src_);
    p->set_network_header(0);
    p->set_transport_header(hl);
    if (p->length() > len) p->take(p->length() - len);  // link-level padding
    std::memcpy(p->anno().dst_ip, ip + 16, 4);
    return 0;
  }
  void add_handlers() override {
    add_read_handler("color", [this] { return std::to_string(color_); });
  }

 private:
  int bad(uint16_t reason) { return drop_code(reason); }

  uint8_t color_ = 0;
  std::vector<uint32_t> badsrc_, gooddst_;
  uint16_t r_tiny_ = 0, r_version_ = 0, r_hl_ = 0, r_len_ = 0, r_sum_ = 0, r_src_ = 0;
};
SHOAL_ELEMENT(
    IPInputCombo, .name = "IPInputCombo", .ports = "1/1", .processing = "a/a",
    .summary = "an IP router's input path: Paint, Strip(14), CheckIPHeader, GetIPAddress(16)",
    .description =
        "Click's IPInputCombo, the work of `Paint(COLOR) -> Strip(14) -> CheckIPHeader(BADSRC) -> "
        "GetIPAddress(16)` in one element: the paint annotation is set to COLOR, the Ethernet header is "
        "stripped, and the IPv4 header is checked as Click's IPInputCombo checks it (version 4, header length "
        "at least 20, total length within the packet and not below the header, checksum, source not in BADSRC "
        "unless the destination is in GOODDST). A good packet gets its network and transport header "
        "annotations and DST_IP set and loses link padding beyond its IP length. A bad one is dropped with its "
        "reason (tiny-packet, bad-ip-version, bad-ip-header-length, bad-ip-length, bad-ip-checksum, "
        "bad-source-address).",
    .args = {{"COLOR", "0-255", "the paint annotation's value (the input interface), mandatory"},
             {"BADSRC", "addresses", "source addresses to drop (space-separated)"},
             {"INTERFACES", "ADDR/LEN...",
              "the router's interfaces: their networks' broadcast addresses, 0.0.0.0 and 255.255.255.255 join "
              "BADSRC, their own addresses GOODDST"},
             {"GOODDST", "addresses", "destinations for which BADSRC does not apply"}},
    .handlers = {{"color", "r", "COLOR"}},
    .example =
        "FromDevice(eth0) -> c0 :: Classifier(12/0800, -); c0[0] -> IPInputCombo(0, INTERFACES "
        "10.0.0.1/24) -> rt :: LookupIPRoute(...);");

}  // namespace shoal
