// RIPSend: one RIP version 2 route advertisement, sent periodically, as
// Click's.
#include <cstring>

#include "shoal/elements/ip/headers.hh"
#include "shoal/elements/timersource.hh"

namespace shoal {

class RIPSend : public TimerSource {
 public:
  void configure(Args& a) override {
    std::string prefix;
    a.read_mp("SRC", src_).read_mp("DST", dst_).read_mp("PREFIX", prefix).read_mp("METRIC", metric_);
    // Click's timing: the first after 3 s, then every 30 s.
    read_timer_args(a, Duration{30'000'000'000}, Duration{3'000'000'000});
    a.complete();
    if (!parse_ipv4_prefix(trim(prefix), addr_, mask_)) a.fail("PREFIX: expected ADDR/LEN");
    if (metric_ < 1 || metric_ > 16) a.fail("METRIC must be 1-16");
  }

 private:
  // IP (TTL 200) and UDP from port 520 to 520, then RIP: a response
  // (command 2, version 2) with one entry: family 2, the prefix, its mask,
  // SRC as the next hop, METRIC.
  Packet* make() override {
    constexpr uint32_t len = 20 + 8 + 24;
    Packet* p = worker().pool().alloc(len);
    if (!p) return nullptr;
    p->set_length(len);
    uint8_t* ip = p->data();
    std::memset(ip, 0, len);
    ip[0] = 0x45;
    k::store_be16(ip + 2, len);
    ip[8] = 200;
    ip[9] = 17;
    std::memcpy(ip + 12, src_.b.data(), 4);
    std::memcpy(ip + 16, dst_.b.data(), 4);
    set_ip_checksum(ip, 20);
    uint8_t* udp = ip + 20;
    k::store_be16(udp, 520);
    k::store_be16(udp + 2, 520);
    k::store_be16(udp + 4, len - 20);
    uint8_t* rip = udp + 8;
    rip[0] = 2, rip[1] = 2;
    k::store_be16(rip + 4, 2);
    k::store_be32(rip + 8, addr_ & mask_);
    k::store_be32(rip + 12, mask_);
    std::memcpy(rip + 16, src_.b.data(), 4);
    k::store_be32(rip + 20, metric_);
    uint16_t sum = k::csum_fold(k::csum_partial(udp, len - 20, k::ipv4_pseudo_sum(ip + 12, ip + 16, 17, len - 20)));
    k::store_be16(udp + 6, sum ? sum : 0xffff);
    p->set_network_header(0);
    p->set_transport_header(20);
    std::memcpy(p->anno().dst_ip, dst_.b.data(), 4);
    return p;
  }
  IPv4Addr src_, dst_;
  uint32_t addr_ = 0, mask_ = 0;
  uint32_t metric_ = 0;
};
SHOAL_ELEMENT(RIPSend, .name = "RIPSend", .ports = "0/1", .processing = "a/a",
              .summary = "sends a RIP version 2 advertisement of one route periodically",
              .description =
                  "Click's RIPSend: an IPv4 UDP datagram (TTL 200, port 520 to 520, checksums right) from SRC to "
                  "DST carrying a RIPv2 response with one entry: PREFIX at METRIC, next hop SRC. The first is "
                  "sent 3 s after start, then one every 30 s (INTERVAL); pulled, one per packet asked for. Only a "
                  "tiny piece of RIP, as in Click.",
              .args = {{"SRC", "IPv4 address", "the advertising router, mandatory"},
                       {"DST", "IPv4 address", "destination (a broadcast address), mandatory"},
                       {"PREFIX", "IPv4 prefix", "the route advertised, mandatory"},
                       {"METRIC", "1-16", "hop count, mandatory"},
                       {"INTERVAL", "time", "time between advertisements (default 30 s)"},
                       {"LIMIT", "integer", "advertisements to send (default -1: no limit)"},
                       {"ACTIVE", "boolean", "send when true (default true)"},
                       {"STOP", "boolean", "stop the router after LIMIT (default false)"}},
              .handlers = {{"count", "r", "advertisements sent"},
                           {"limit", "rw", "LIMIT"},
                           {"interval", "rw", "INTERVAL"},
                           {"active", "rw", "ACTIVE"},
                           {"reset_counts", "w", "count from 0 again"}},
              .example =
                  "RIPSend(18.26.4.24, 18.26.4.255, 10.0.0.0/8, 10) -> EtherEncap(0x0800, 00:00:c0:ae:67:ef, "
                  "ff:ff:ff:ff:ff:ff) -> ToDevice(eth0);");

}  // namespace shoal
