// IPOutputCombo: Click's output path of an IP router in one element:
// DropBroadcasts, PaintTee, IPGWOptions, FixIPSrc, DecIPTTL, CheckLength.
#include <cstring>

#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/ip/gwoptions.hh"
#include "shoal/elements/ip/headers.hh"
#include "shoal/kernels/steps/dec_ttl.hh"

namespace shoal {

class IPOutputCombo : public PacketElement<IPOutputCombo> {
 public:
  void configure(Args& a) override {
    uint64_t color = 0;
    IPv4Addr me;
    a.read_mp("COLOR", color).read_mp("IPADDR", me).read_mp("MTU", mtu_);
    a.complete();
    if (color > 255) a.fail("COLOR must be 0-255");
    color_ = uint8_t(color);
    me_ = me.host();
    mine_ = {me_};
  }
  void initialize() override {
    r_bcast_ = add_drop_reason("link-broadcast");
    r_nohdr_ = add_drop_reason("no-ip-header");
    r_pool_ = add_drop_reason("pool-exhausted");
  }
  void begin_batch(PacketBatch*) { tee_ = nullptr; }
  int process(Packet* p) {
    // DropBroadcasts
    const uint8_t t = p->anno().packet_type;
    if (t == Anno::kBroadcast || t == Anno::kMulticast || (p->has_mac_header() && (p->mac_header()[0] & 1)))
      return drop_code(r_bcast_);
    // PaintTee: a copy to output 1 (before the packet goes on, as Click pushes it)
    if (p->anno().paint == color_) {
      if (Packet* q = worker().pool().clone(p)) {
        created();
        if (!tee_) tee_ = new_batch();
        tee_->append(q);
      } else {
        count_lost(r_pool_);
      }
    }
    uint32_t hl;
    uint8_t* ip = ip_header(p, &hl);
    if (!ip) return drop_code(r_nohdr_);
    // IPGWOptions
    bool sum = false;
    if (hl > 20) {
      GwOptions g = gw_options(ip, hl, me_, mine_, ms_since_midnight());
      if (g.bad_at >= 0) {
        p->anno().param_off = uint8_t(g.bad_at);
        return 2;
      }
      if (g.routed) std::memcpy(p->anno().dst_ip, ip + 16, 4);
      sum = g.changed;
    }
    // FixIPSrc
    if (p->anno().flags & Anno::kFixIPSrc) {
      p->anno().flags &= uint8_t(~Anno::kFixIPSrc);
      k::store_be32(ip + 12, me_);
      sum = true;
    }
    if (sum) set_ip_checksum(ip, hl);
    // DecIPTTL (the checksum updated as RFC 1624 says)
    if (k::DecTTLStep::decide(ip + 8, ip[16], true, true, 0, 0) != 0) return 3;
    // CheckLength
    return p->length() > mtu_ ? 4 : 0;
  }
  bool finish_batch(PacketBatch*) {
    if (tee_) output_push(1, tee_), tee_ = nullptr;
    return false;
  }

 private:
  uint8_t color_ = 0;
  uint32_t me_ = 0, mtu_ = 0;
  std::vector<uint32_t> mine_;
  PacketBatch* tee_ = nullptr;
  uint16_t r_bcast_ = 0, r_nohdr_ = 0, r_pool_ = 0;
};
SHOAL_ELEMENT(
    IPOutputCombo, .name = "IPOutputCombo", .ports = "1/5", .processing = "h/h",
    .summary = "an IP router's output path: DropBroadcasts, PaintTee, IPGWOptions, FixIPSrc, DecIPTTL, CheckLength",
    .description =
        "Click's IPOutputCombo, the work of `DropBroadcasts -> p :: PaintTee(COLOR) -> g :: IPGWOptions(IPADDR) "
        "-> FixIPSrc(IPADDR) -> d :: DecIPTTL -> l :: CheckLength(MTU)` in one element, for IP packets with "
        "their network header annotation set: link-level broadcasts are dropped ('link-broadcast'); a packet "
        "painted COLOR (it leaves by the interface it came in on) is copied to output 1 (for an ICMP redirect); "
        "IP options are processed as IPGWOptions does, a bad one sending the packet to output 2 with ICMP's "
        "pointer annotation set; a packet marked by ICMPError gets IPADDR as its source; the TTL is "
        "decremented, an expiring packet leaving on output 3; a packet longer than MTU leaves on output 4 (for "
        "IPFragmenter). The rest leave on output 0. A packet without an IP header is dropped ('no-ip-header').",
    .args = {{"COLOR", "0-255", "the paint of packets that came in on this interface"},
             {"IPADDR", "IPv4 address", "this interface's address (recorded in options, the fixed source)"},
             {"MTU", "unsigned", "the largest packet output 0 takes"}},
    .example =
        "rt[1] -> oc :: IPOutputCombo(1, 10.0.1.1, 1500) -> ARPQuerier(10.0.1.1, eth1) -> ToDevice(eth1); "
        "oc[1] -> ICMPError(10.0.1.1, redirect, host) -> rt; oc[2] -> ICMPError(10.0.1.1, parameterproblem) "
        "-> rt; oc[3] -> ICMPError(10.0.1.1, timeexceeded) -> rt; oc[4] -> IPFragmenter(1500) -> ...;");

}  // namespace shoal
