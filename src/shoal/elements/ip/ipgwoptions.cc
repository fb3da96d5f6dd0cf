// IPGWOptions: the IPv4 options every router processes (RFC 791, RFC 1812
// 5.2.4): record route, timestamp, and loose and strict source routes.
#include <fmt/format.h>

#include <algorithm>

#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"
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
    bool changed = false;
    for (uint32_t o = 20; o < hl;) {
      uint8_t t = ip[o];
      if (t == 0) break;
      if (t == 1) {
        ++o;
        continue;
      }
      if (o + 1 >= hl) return bad(p, o);
      uint32_t len = ip[o + 1];
      if (len < 2 || o + len > hl) return bad(p, o + 1);
      uint8_t* opt = ip + o;
      if (t == 7) {  // record route
        if (len < 3) return bad(p, o + 1);
        uint32_t ptr = opt[2];
        if (ptr < 4) return bad(p, o + 2);
        if (ptr + 3 <= len) {
          k::store_be32(opt + ptr - 1, me_);
          opt[2] = uint8_t(ptr + 4);
          changed = true;
        }
      } else if (t == 68) {  // timestamp
        if (len < 4) return bad(p, o + 1);
        uint32_t ptr = opt[2], flag = opt[3] & 0xf;
        if (ptr < 5) return bad(p, o + 2);
        if (flag != 0 && flag != 1 && flag != 3) return bad(p, o + 3);
        uint32_t entry = flag == 0 ? 4 : 8;
        if (ptr + entry - 1 <= len) {
          uint32_t ts = ms_since_midnight();
          if (flag == 0) {
            k::store_be32(opt + ptr - 1, ts);
            opt[2] = uint8_t(ptr + 4);
            changed = true;
          } else if (flag == 1) {
            k::store_be32(opt + ptr - 1, me_);
            k::store_be32(opt + ptr + 3, ts);
            opt[2] = uint8_t(ptr + 8);
            changed = true;
          } else if (is_mine(k::load_be32(opt + ptr - 1))) {  // prespecified: only our own slot
            k::store_be32(opt + ptr + 3, ts);
            opt[2] = uint8_t(ptr + 8);
            changed = true;
          }
        } else {  // full: count the overflow; an overflowing overflow is an error
          uint8_t of = opt[3] >> 4;
          if (of == 15) return bad(p, o + 3);
          opt[3] = uint8_t(((of + 1) << 4) | flag);
          changed = true;
        }
      } else if (t == 131 || t == 137) {  // loose / strict source route
        if (len < 3) return bad(p, o + 1);
        uint32_t ptr = opt[2];
        if (ptr < 4) return bad(p, o + 2);
        // Only the router the datagram is addressed to takes the next hop.
        if (is_mine(k::load_be32(ip + 16)) && ptr + 3 <= len) {
          std::memcpy(ip + 16, opt + ptr - 1, 4);
          std::memcpy(p->anno().dst_ip, ip + 16, 4);
          k::store_be32(opt + ptr - 1, me_);
          opt[2] = uint8_t(ptr + 4);
          changed = true;
          routed_.add();
        }
      }
      o += len;
    }
    if (changed) {
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
  bool is_mine(uint32_t a) const { return std::find(mine_.begin(), mine_.end(), a) != mine_.end(); }
  static uint32_t ms_since_midnight() { return uint32_t((realtime_ns() / 1000000) % 86400000); }
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
