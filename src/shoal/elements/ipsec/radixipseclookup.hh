// RadixIPsecLookup: Click's IPv4 route table with IPsec ESP tunnels
// (elements/ipsec/radixipseclookup in Click). Routes are Click's,
// "ADDR/LEN [GATEWAY] OUTPUT", and a tunnel's route adds its SA:
// "SPI ENCRYPT_KEY AUTH_KEY REPLAY OOSIZE". Outputs 0, 1 and 2 mean what
// they mean in Click:
//   0: for this host: an ESP packet (protocol 50) of a known SPI leaves
//      here with its SA in the annotations; another packet goes to output 2;
//   1: into a tunnel: the packet leaves with its route's SA;
//   2: for this host, not ESP (the host's own stack);
//   3 and up: plain routes.
#pragma once
#include "shoal/elements/ip/routelookup.hh"
#include "shoal/elements/ipsec/clicksa.hh"
#include "shoal/elements/ipsec/ipsecroutes.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class RadixIPsecLookup : public RouteLookup<RadixIPsecLookup, IPsecRoutes> {
 public:
  void initialize() override {
    RouteLookup::initialize();
    r_nosa_ = add_drop_reason("no-sa");
    r_short_ = add_drop_reason("short-esp");
    r_spi_ = add_drop_reason("unknown-spi");
  }
  void push(int port, PacketBatch* b) override {
    refresh_if_changed();
    PacketElement<RadixIPsecLookup>::push(port, b);
  }
  int process(Packet* p) {
    const auto& s = *snap_;
    int32_t i = s.radix.nodes.empty() ? -1 : s.radix.lookup(k::load_be32(p->anno().dst_ip));
    if (i < 0) return drop_code(r_noroute_);
    const IPsecRoute& r = s.routes[size_t(i)];
    int port = r.port;
    if (port == 1) {
      if (!s.handles[size_t(i)]) return drop_code(r_nosa_);
      set_sa_anno(p, s.handles[size_t(i)]);
    } else if (port == 0) {
      const uint8_t* ip = p->has_network_header() ? p->network_header() : p->data();
      int64_t len = int64_t(p->length()) - (ip - p->data());
      if (len < 20 || (ip[0] >> 4) != 4 || ip[9] != 50) {
        port = 2;
      } else {
        uint32_t hl = uint32_t(ip[0] & 0xf) * 4;
        if (len < int64_t(hl) + 8) return drop_code(r_short_);
        auto it = s.by_spi.find(k::load_be32(ip + hl));
        if (it == s.by_spi.end()) return drop_code(r_spi_);
        set_sa_anno(p, it->second);
      }
    }
    if (r.gw) k::store_be32(p->anno().dst_ip, r.gw);
    if (port < 0 || port >= noutputs()) return drop_code(r_discard_);
    return port;
  }

 private:
  uint16_t r_nosa_ = 0, r_short_ = 0, r_spi_ = 0;
};

#define SHOAL_IPSEC_LOOKUP_DOC(N, SUMMARY, MORE)                                                                      \
  .name = N, .ports = "1/-", .processing = "h/h", .summary = SUMMARY,                                                 \
  .description =                                                                                                      \
      "Click's IPv4 route table with ESP tunnels between gateways. Looks the DST_IP annotation up (longest prefix, "  \
      "RadixIPLookup's trie); a route with a gateway rewrites the annotation. A route may end with an SA: SPI, "      \
      "ENCRYPT_KEY (AES-CBC, 16, 24 or 32 bytes: hex digits or a Click string), AUTH_KEY (HMAC-SHA1-96, 16 to 64 "    \
      "bytes), REPLAY (the first sequence number sent) and OOSIZE (the replay window, 0: none). Outputs 0-2 are "     \
      "Click's: 0, packets for this host: ESP of a known SPI leaves here with its SA in the annotations (the 4-byte " \
      "user annotation holds a handle), other packets leave on 2 (the host's stack); 1, into a tunnel: the packet "   \
      "leaves with its route's SA (IPsecESPEncap, IPsecAuthHMACSHA1, IPsecAES and IPsecEncap use it); 3 and up, "     \
      "plain routes. Drops: no-route, route-to-discard, no-sa (a route to output 1 without an SA), short-esp, "       \
      "unknown-spi. An SA keeps its sequence numbers and replay window while its route stands (a reload that keeps "  \
      "the routes keeps them too); set or add makes a new one." MORE,                                                 \
  .args = {{"ROUTE...", "route", "ADDR/LEN [GATEWAY] OUTPUT [SPI ENCRYPT_KEY AUTH_KEY REPLAY OOSIZE]"},               \
           {"FILE", "string", "a file of routes, one per line, '#' comments"}},                                       \
  .handlers = {{"table", "r", "the routes"},                                                                          \
               {"routes", "r", "number of routes"},                                                                   \
               {"lookup", "r", "PORT [GATEWAY] of an address (a parameter)"},                                         \
               {"add", "w", "add a route (an error if its prefix is routed)"},                                        \
               {"remove", "w", "remove ADDR/LEN"},                                                                    \
               {"set", "w", "add routes, replacing those for the same prefixes"},                                     \
               {"ctrl", "w", "lines of add, remove or set"},                                                          \
               {"flush", "w", "remove all routes"}},                                                                  \
  .example = "rt :: " N                                                                                               \
             "(18.26.4.24/32 0, 18.26.4.1/32 3, 18.26.7.1/32 2, 18.26.7.0/24 4, 18.26.8.0/24 18.26.4.1 1 234 "        \
             "ABCDEFFF001DEFD2354550FE40CD708E 112233EE556677888877665544332211 300 64);"

}  // namespace shoal
