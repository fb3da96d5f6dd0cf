// DynamicUDPIPEncap: UDPIPEncap whose ports step up every INTERVAL packets,
// as Click's.
#include <fmt/format.h>

#include <mutex>

#include "shoal/elements/common.hh"
#include "shoal/kernels/encap.hh"

namespace shoal {

// The ports and the packet count, one for every worker's copy.
struct DynamicPorts {
  std::mutex mu;
  bool set = false;
  uint16_t sport = 0, dport = 0, id = 0;
  uint64_t count = 0;
};

class DynamicUDPIPEncap : public PacketElement<DynamicUDPIPEncap> {
 public:
  void configure(Args& a) override {
    IPv4Addr src, dst;
    std::string sp, dp;
    bool checksum = true;
    a.read_mp("SRC", src).read_mp("SPORT", sp).read_mp("DST", dst).read_mp("DPORT", dp);
    a.read_p("CHECKSUM", checksum).read_p("INTERVAL", interval_);
    a.complete();
    if (!parse_port(trim(sp), 17, sport_)) a.fail(fmt::format("SPORT: '{}' is not a port", sp));
    if (!parse_port(trim(dp), 17, dport_)) a.fail(fmt::format("DPORT: '{}' is not a port", dp));
    std::memcpy(cfg_.src, src.b.data(), 4);
    std::memcpy(cfg_.dst, dst.b.data(), 4);
    cfg_.ttl = 250, cfg_.checksum = checksum;
  }
  void initialize() override {
    r_room_ = add_drop_reason("no-headroom");
    r_big_ = add_drop_reason("too-long");
    state_ = shared_state<DynamicPorts>(this);
    std::lock_guard<std::mutex> g(state_->mu);
    if (!state_->set) state_->set = true, state_->sport = sport_, state_->dport = dport_;
  }
  int process(Packet* p) {
    if (p->length() + k::kUdpIpHeaders > 65535) return drop_code(r_big_);
    uint32_t len = p->length();
    uint8_t* h = p->push(k::kUdpIpHeaders);
    if (!h) return drop_code(r_room_);
    k::UdpIpEncapCfg c = cfg_;
    uint16_t id;
    {
      std::lock_guard<std::mutex> g(state_->mu);
      c.sport = state_->sport, c.dport = state_->dport, id = state_->id++;
      if (interval_ && ++state_->count == interval_) ++state_->sport, ++state_->dport, state_->count = 0;
    }
    k::udpip_encap(h, len, c, id);
    p->set_network_header(0);
    p->set_transport_header(20);
    std::memcpy(p->anno().dst_ip, cfg_.dst, 4);
    return 0;
  }

 private:
  k::UdpIpEncapCfg cfg_{};
  uint16_t sport_ = 0, dport_ = 0, r_room_ = 0, r_big_ = 0;
  uint64_t interval_ = 0;
  std::shared_ptr<DynamicPorts> state_;
};
SHOAL_ELEMENT(DynamicUDPIPEncap, .name = "DynamicUDPIPEncap", .ports = "1/1", .processing = "a/a",
              .summary = "UDPIPEncap whose ports step up every INTERVAL packets",
              .description =
                  "Click's DynamicUDPIPEncap: puts each packet behind UDP and IPv4 headers from SRC:SPORT to "
                  "DST:DPORT (TTL 250, IP IDs counting from 0, the UDP checksum unless CHECKSUM is false), as "
                  "UDPIPEncap does; after every INTERVAL packets both ports go up by one (INTERVAL 0, the default: "
                  "never). The count and the ports are shared by every worker's copy. Packets without the "
                  "headroom, or too long for IPv4, are dropped ('no-headroom', 'too-long').",
              .args = {{"SRC", "IPv4 address", "mandatory"},
                       {"SPORT", "port", "mandatory"},
                       {"DST", "IPv4 address", "mandatory"},
                       {"DPORT", "port", "mandatory"},
                       {"CHECKSUM", "boolean", "compute the UDP checksum (default true)"},
                       {"INTERVAL", "unsigned", "packets between port steps (default 0: none)"}},
              .handlers = {}, .example = "... -> DynamicUDPIPEncap(1.0.0.1, 1234, 2.0.0.2, 1234, true, 10) -> ...");

}  // namespace shoal
