// HostEtherFilter: drops Ethernet frames not meant for this host.
#include <array>
#include <cstring>

#include "shoal/elements/common.hh"

namespace shoal {

class HostEtherFilter : public PacketElement<HostEtherFilter> {
 public:
  void configure(Args& a) override {
    EtherAddr eth;
    a.read_mp("ETHER", eth).read_p("DROP_OWN", drop_own_).read_p("DROP_OTHER", drop_other_).read("OFFSET", off_);
    a.complete();
    eth_ = eth.b;
  }
  void initialize() override {
    r_own_ = add_drop_reason("own-frame");
    r_other_ = add_drop_reason("other-host");
    r_short_ = add_drop_reason("too-short");
  }
  // Sets the packet type annotation (host, broadcast, multicast, other
  // host); frames from ourselves (DROP_OWN) and for other hosts
  // (DROP_OTHER) leave on output 1, or are dropped.
  int process(Packet* p) {
    if (uint64_t(off_) + 14 > p->length()) return drop_code(r_short_);
    const uint8_t* e = p->data() + off_;
    int other = noutputs() > 1 ? 1 : -1;
    if (drop_own_ && std::memcmp(e + 6, eth_.data(), 6) == 0) return other >= 0 ? other : drop_code(r_own_);
    auto& type = p->anno().packet_type;
    if (std::memcmp(e, eth_.data(), 6) == 0) {
      type = Anno::kHost;
    } else if ((e[0] & e[1] & e[2] & e[3] & e[4] & e[5]) == 0xff) {
      type = Anno::kBroadcast;
    } else if (e[0] & 1) {
      type = Anno::kMulticast;
    } else {
      type = Anno::kOtherHost;
      if (drop_other_) return other >= 0 ? other : drop_code(r_other_);
    }
    return 0;
  }

 private:
  std::array<uint8_t, 6> eth_{};
  bool drop_own_ = false, drop_other_ = true;
  uint32_t off_ = 0;
  uint16_t r_own_ = 0, r_other_ = 0, r_short_ = 0;
};
SHOAL_ELEMENT(HostEtherFilter, .name = "HostEtherFilter", .ports = "1/1-2", .processing = "a/ah",
              .summary = "drops Ethernet frames not meant for this host",
              .description =
                  "Click's HostEtherFilter: sets the packet type annotation from the destination address (this "
                  "host's ETHER, broadcast, multicast, another host). Frames for another host (with DROP_OTHER, "
                  "the default) and frames from ETHER itself (with DROP_OWN) leave on output 1, or are dropped "
                  "('other-host', 'own-frame') when it is not connected. The Ethernet header is at OFFSET.",
              .args = {{"ETHER", "Ethernet address", "this host's address"},
                       {"DROP_OWN", "boolean", "drop frames sent by ETHER (default false)"},
                       {"DROP_OTHER", "boolean", "drop frames for other hosts (default true)"},
                       {"OFFSET", "unsigned", "where the Ethernet header starts (default 0)"}},
              .handlers = {}, .example = "FromDevice(eth0) -> HostEtherFilter(eth0:eth) -> c :: Classifier(...);");

}  // namespace shoal
