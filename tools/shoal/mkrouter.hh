// `shoal mkrouter`: the Click IP router configuration for given interfaces.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace shoal::tool {

struct RouterIface {
  std::string name;
  uint32_t addr = 0, len = 0;  // IPv4 address (host order) and prefix length
  std::string addr6;           // IPv6 address, empty: none
  uint32_t len6 = 0;
  std::string mac;   // from mac= or /sys/class/net/NAME/address
  uint32_t mtu = 0;  // from mtu= or /sys/class/net/NAME/mtu
};

// NAME,ADDR/LEN[,ADDR6/LEN][,mtu=N][,mac=ETH]
bool parse_iface_spec(const std::string& spec, RouterIface& f, std::string& err);
// Source NAT (masquerade) on one interface: IPv4 connections routed out of
// it leave with its address and a port from [port_lo, port_hi].
struct RouterNat {
  int iface = -1;  // index in the interfaces; -1: no NAT
  uint32_t port_lo = 1024, port_hi = 65535;
};
// "NAME[,LO-HI]"
bool parse_nat_spec(const std::string& spec, const std::vector<RouterIface>& ifs, RouterNat& n, std::string& err);
// routes4/routes6: extra routes as written in DirectIPLookup / LookupIP6Route
// ("PREFIX/LEN GATEWAY OUTPUT", output 1 being the first interface).
// xdp: the interfaces through AF_XDP (FromXDPDevice/ToXDPDevice) instead of
// AF_PACKET (FromDevice/ToDevice).
std::string make_router_config(const std::vector<RouterIface>& ifs, const std::vector<std::string>& routes4,
                               const std::vector<std::string>& routes6, const RouterNat& nat = {}, bool xdp = false);

}  // namespace shoal::tool
