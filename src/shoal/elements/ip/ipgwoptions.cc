// IPGWOptions: the IPv4 options every router processes (RFC 791, RFC 1812
// 5.2.4): record route, timestamp, and loose and strict source routes.
#include <fmt/format.h>

#include <algorithm>

#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/ip/gwoptions.hh"
#include "shoal/kernels/bytes.hh"
#include "shoal/kernels/checksum.hh"

namespace shoal {

class IPGWOptions : public PacketElement<IPGWOptions> {
 public:
  void configure(Args& a) override {
    IPv4Addr me;
    a.read_mp("MYADDR", me);
    std::string bad;
    for (ArgItem* it : a.rest_positional())
      if (!parse_ipv4_list(it->text, mine_, bad)) a.fail(*it, fmt::format("bad address '{}'", bad));
    a.complete();
    me_ = me.host();
    mine_.push_back(me_);
  }
  void initialize() override { r_ = add_drop_reason("bad-ip-options"); }
  int process(Packet* p) {
    if (!p->has_network_header() || p->network_header_offset() < 0 ||
        uint64_t(p->network_header_offset()) + 20 > p->length())
      return 0;
    uint8_t* ip = p->network_header();
    uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
    if (hl <= 20) return 0;  // the common case
    if (uint64_t(p->network_header_offset()) + hl > p->length()) return bad(p, 0);
    GwOptions r = gw_options(ip, hl, me_, mine_, ms_since_midnight());
    if (r.bad_at >= 0) return bad(p, uint32_t(r.bad_at));
    if (r.routed) {
      std::memcpy(p->anno().dst_ip, ip + 16, 4);
      routed_.add();
    }
    if (r.changed) {
      ip[10] = ip[11] = 0;
      k::store_be16(ip + 10, k::ip_checksum(ip, hl));
    }
    return 0;
  }
  void add_handlers() override {
    add_stat_handler("drops", bad_);
    add_stat_handler("source_routed", routed_);
  }

 private:
  int bad(Packet* p, uint32_t at) {
    p->anno().param_off = uint8_t(at);
    bad_.add();
    return noutputs() > 1 ? 1 : drop_code(r_);
  }

  uint32_t me_ = 0;
  std::vector<uint32_t> mine_;
  uint16_t r_ = 0;
  Stat bad_, routed_;
};
SHOAL_ELEMENT(IPGWOptions, .name = "IPGWOptions", .ports = "1/1-2", .processing = "a/ah",
              .summary = "processes IPv4 options at a router",
              .description =
                  "Processes the options of the IP header (network header annotation): record route and "
                  "timestamp (flags 0, 1 and 3, overflow counting) get MYADDR and the time in ms since midnight "
                  "UT; loose and strict source routes addressed to MYADDR or one of OTHERADDRS move on to their "
                  "next hop (destination and DST_IP rewritten, MYADDR recorded). The checksum is recomputed when "
                  "an option changes. A malformed option sends the packet to output 1 if it exists (for "
                  "ICMPError parameterproblem, with the pointer annotation set), else drops it "
                  "('bad-ip-options').",
              .args = {{"MYADDR", "IPv4 address", "the address this router records"},
                       {"OTHERADDRS...", "addresses", "more addresses of this router"}},
              .handlers = {{"drops", "r", "packets with bad options"},
                           {"source_routed", "r", "source-routed packets moved to their next hop"}},
              .example =
                  "rt[1] -> gio :: IPGWOptions(10.0.1.1) -> FixIPSrc(10.0.1.1) -> ...; "
                  "gio[1] -> ICMPError(10.0.1.1, parameterproblem) -> rt;");

}  // namespace shoal
