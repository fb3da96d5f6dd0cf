// ICMPPingResponder: answers ICMP echo requests.

#include <cstring>
#include "shoal/elements/common.hh"
#include "shoal/elements/ip/headers.hh"

namespace shoal {

class ICMPPingResponder : public PacketElement<ICMPPingResponder> {
 public:
  void initialize() override { r_ = add_drop_reason("not-echo-request"); }
  int process(Packet* p) {
    uint32_t hl;
    uint8_t* ip = ip_header(p, &hl);
    int other = noutputs() > 1 ? 1 : drop_code(r_);
    if (!ip || ip[9] != 1 || (k::load_be16(ip + 6) & 0x3fff) != 0) return other;
    uint32_t tot = k::load_be16(ip + 2);
    int64_t off = p->network_header_offset();
    if (tot < hl + 8 || uint64_t(off) + tot > p->length()) return other;
    uint8_t* icmp = ip + hl;
    if (icmp[0] != 8 || icmp[1] != 0) return other;
    uint8_t tmp[4];
    std::memcpy(tmp, ip + 12, 4);
    std::memcpy(ip + 12, ip + 16, 4);
    std::memcpy(ip + 16, tmp, 4);
    ip[8] = 255;
    set_ip_checksum(ip, hl);
    icmp[0] = 0;  // echo reply: only the type changes
    k::store_be16(icmp + 2, k::csum_update16(k::load_be16(icmp + 2), 0x0800, 0x0000));
    std::memcpy(p->anno().dst_ip, ip + 16, 4);
    replies_.add();
    return 0;
  }
  void add_handlers() override { add_stat_handler("replies", replies_); }

 private:
  uint16_t r_ = 0;
  Stat replies_;
};
SHOAL_ELEMENT(ICMPPingResponder, .name = "ICMPPingResponder", .ports = "1/1-2", .processing = "a/ah",
              .summary = "answers ICMP echo requests",
              .description =
                  "Turns ICMP echo requests (network header annotation) into echo replies in place: "
                  "addresses swapped, TTL 255, type 0, checksums updated; DST_IP becomes the new "
                  "destination. Other packets leave on output 1 if it exists, else are dropped "
                  "('not-echo-request').",
              .handlers = {{"replies", "r", "replies made"}},
              .example = "rt[0] -> ping :: ICMPPingResponder -> rt; ping[1] -> Discard;");

}  // namespace shoal
