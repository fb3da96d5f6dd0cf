// UDPIPEncap: prepends UDP and IPv4 headers. Offloadable in NBA's form: the
// packet goes to the device whole, with room to grow in front (NBA's
// "whole packet with size delta" datablock), and the IP IDs, which follow
// the element's counter in packet order, travel in a pre-function block.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/kernels/encap.hh"
#include "shoal/kernels/steps/udp_ip_encap.hh"
#include "shoal/offload/element.hh"

namespace shoal {

class UDPIPEncap : public offload::OffloadableElement<PacketElement<UDPIPEncap>> {
 public:
  void configure(Args& a) override {
    IPv4Addr src, dst;
    uint16_t sport = 0, dport = 0;
    std::string sp, dp;
    bool checksum = true, df = false;
    uint8_t ttl = 250, tos = 0;
    a.read_mp("SRC", src).read_mp("SPORT", sp).read_mp("DST", dst).read_mp("DPORT", dp);
    a.read_p("CHECKSUM", checksum).read("TTL", ttl).read("TOS", tos).read("DF", df);
    a.complete();
    // Ports by number, PortInfo name or service name.
    if (!parse_port(trim(sp), 17, sport)) a.fail(fmt::format("SPORT: '{}' is not a port", sp));
    if (!parse_port(trim(dp), 17, dport)) a.fail(fmt::format("DPORT: '{}' is not a port", dp));
    std::memcpy(cfg_.src, src.b.data(), 4);
    std::memcpy(cfg_.dst, dst.b.data(), 4);
    cfg_.sport = sport, cfg_.dport = dport, cfg_.ttl = ttl, cfg_.tos = tos;
    cfg_.df = df, cfg_.checksum = checksum;
  }
  void initialize() override {
    r_room_ = add_drop_reason("no-headroom");
    r_big_ = add_drop_reason("too-long");
  }
  int process(Packet* p) {
    uint16_t id = id_++;  // taken by every packet, as the device form's pre() does
    if (p->length() + k::kUdpIpHeaders > 65535) return drop_code(r_big_);
    uint32_t len = p->length();
    uint8_t* h = p->push(k::kUdpIpHeaders);
    if (!h) return drop_code(r_room_);
    k::udpip_encap(h, len, cfg_, id);
    set_annotations(p);
    return 0;
  }

  // ---- offload
  void offload_declare(offload::Plan& plan) override {
    whole_ = plan.add_resizable(k::kUdpIpHeaders, 0);
    ids_ = plan.add_block(2, 0);
    plan.annos.pred |= offload_uses_pred();
  }
  bool offload_resizes() const override { return true; }
  void offload_pre(offload::Aggregate& a) override {
    uint8_t* ids = a.block_in(ids_);
    for (uint32_t i = 0; i < a.n; ++i) k::store_be16(ids + 2 * i, id_++);
  }
  bool offload_launch(offload::Launch& L, std::string&) override {
    offload_ctl(L);
    L.run<k::UdpIpEncapStep>({L.view, L.ctl, L.block_in(ids_), cfg_, r_room_, r_big_});
    return true;
  }
  bool offload_has_passed_hook() const override { return true; }
  void offload_passed(Packet* p) override { set_annotations(p); }

 private:
  void set_annotations(Packet* p) {
    p->set_network_header(0);
    p->set_transport_header(20);
    std::memcpy(p->anno().dst_ip, cfg_.dst, 4);
  }
  k::UdpIpEncapCfg cfg_{};
  uint16_t id_ = 0;
  uint16_t r_room_ = 0, r_big_ = 0;
  uint32_t whole_ = 0, ids_ = 0;
};
SHOAL_ELEMENT(UDPIPEncap, .name = "UDPIPEncap", .ports = "1/1", .processing = "a/a",
              .summary = "prepends UDP and IPv4 headers",
              .description =
                  "Pushes a 20-byte IPv4 header (protocol UDP, a fresh IP ID per packet, TTL 250) and an "
                  "8-byte UDP header from SPORT to DPORT, with the UDP checksum over the whole packet unless "
                  "CHECKSUM is false, and sets the network and transport header and DST_IP annotations. "
                  "Packets without 28 bytes of headroom are dropped ('no-headroom'), those that would exceed "
                  "65,535 bytes too ('too-long'). Offloadable (NBA's form): after a balancer, batches for the "
                  "device go there whole with room to grow; the IP IDs are assigned on the host in packet "
                  "order, one per packet reaching the element's chain (packets an earlier step of the same "
                  "chain drops still take one).",
              .args = {{"SRC", "IPv4 address", "source address"},
                       {"SPORT", "unsigned", "source port"},
                       {"DST", "IPv4 address", "destination address"},
                       {"DPORT", "unsigned", "destination port"},
                       {"CHECKSUM", "boolean", "compute the UDP checksum (default true)"},
                       {"TTL", "unsigned", "time to live (default 250)"},
                       {"TOS", "unsigned", "type of service (default 0)"},
                       {"DF", "boolean", "set don't-fragment (default false)"}},
              .handlers = {{"offload_chain", "r", "the device chain, its ranges and blocks (NBA form)"},
                           {"offload_packets", "r", "packets that went through the chain"}},
              .example =
                  "FromDump(in.pcap) -> Strip(42) -> UDPIPEncap(10.0.0.1, 4789, 10.0.0.2, 4789) -> "
                  "EtherEncap(0x0800, 0:1:2:3:4:5, 6:7:8:9:a:b) -> ToDump(out.pcap);");

}  // namespace shoal
