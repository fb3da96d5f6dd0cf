// ARPFaker: an ARP reply now and then, claiming an address, as Click's.
#include <cstring>

#include "shoal/elements/ether/arp.hh"
#include "shoal/elements/timersource.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class ARPFaker : public TimerSource {
 public:
  void configure(Args& a) override {
    a.read_mp("DSTIP", dst_ip_).read_mp("DSTETH", dst_eth_).read_mp("SRCIP", src_ip_).read_mp("SRCETH", src_eth_);
    // Click's timing: the first after 1 s, then every 10 s.
    read_timer_args(a, Duration{10'000'000'000}, Duration{1'000'000'000});
    a.complete();
  }

 private:
  // The reply ARPResponder would send DSTIP/DSTETH for SRCIP.
  Packet* make() override {
    Packet* p = worker().pool().alloc(kArpLen);
    if (!p) return nullptr;
    p->set_length(kArpLen);
    uint8_t* d = p->data();
    std::memcpy(d, dst_eth_.b.data(), 6);
    std::memcpy(d + 6, src_eth_.b.data(), 6);
    k::store_be16(d + 12, 0x0806);
    k::store_be16(d + 14, 1);
    k::store_be16(d + 16, 0x0800);
    d[18] = 6, d[19] = 4;
    k::store_be16(d + 20, 2);
    std::memcpy(d + 22, src_eth_.b.data(), 6);
    std::memcpy(d + 28, src_ip_.b.data(), 4);
    std::memcpy(d + 32, dst_eth_.b.data(), 6);
    std::memcpy(d + 38, dst_ip_.b.data(), 4);
    p->set_mac_header(0);
    return p;
  }
  IPv4Addr dst_ip_, src_ip_;
  EtherAddr dst_eth_, src_eth_;
};
SHOAL_ELEMENT(ARPFaker, .name = "ARPFaker", .ports = "0/1", .processing = "a/a",
              .summary = "sends an ARP reply claiming an address now and then",
              .description =
                  "Click's ARPFaker: an ARP reply to DSTIP at DSTETH saying SRCIP is at SRCETH (with its Ethernet "
                  "header), the first a second after start and then every 10 seconds (INTERVAL), or one per "
                  "packet asked for when pulled; LIMIT in all (-1: no limit). ARPResponder is usually what you "
                  "want.",
              .args = {{"DSTIP", "IPv4 address", "whom to tell, mandatory"},
                       {"DSTETH", "Ethernet address", "its address, mandatory"},
                       {"SRCIP", "IPv4 address", "the address claimed, mandatory"},
                       {"SRCETH", "Ethernet address", "where it is claimed to be, mandatory"},
                       {"INTERVAL", "time", "time between replies (default 10 s)"},
                       {"LIMIT", "integer", "replies to send (default -1: no limit)"},
                       {"ACTIVE", "boolean", "send when true (default true)"},
                       {"STOP", "boolean", "stop the router after LIMIT (default false)"}},
              .handlers = {{"count", "r", "replies sent"},
                           {"limit", "rw", "LIMIT"},
                           {"interval", "rw", "INTERVAL"},
                           {"active", "rw", "ACTIVE"},
                           {"reset_counts", "w", "count from 0 again"}},
              .example = "ARPFaker(18.26.4.1, 0:e0:2b:b:1a:0, 18.26.4.99, 00:a0:c9:9c:fd:9c) -> ToDevice(eth0);");

}  // namespace shoal
