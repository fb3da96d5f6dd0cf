// `shoal mkrouter`: writes the complete Click-style IP router configuration
// for a set of interfaces (Click's make-ip-conf.pl, with IPv6 added): ARP and
// neighbour discovery, header checks, route lookup, options, TTL and hop
// limit, fragmentation, and every ICMP error of the Click router.
#include "mkrouter.hh"

#include <fmt/format.h>

#include <fstream>
#include <sstream>

#include "shoal/core/args.hh"

namespace shoal::tool {

namespace {
std::string read_sys(const std::string& dev, const char* what) {
  std::ifstream in("/sys/class/net/" + dev + "/" + what);
  std::string s;
  std::getline(in, s);
  return std::string(trim(s));
}

bool parse_prefix4(std::string_view s, uint32_t& addr, uint32_t& len) {
  size_t sl = s.find('/');
  IPv4Addr a;
  uint64_t l;
  if (sl == std::string_view::npos || !parse_ipv4(s.substr(0, sl), a) || !parse_uint(s.substr(sl + 1), l) || l > 32)
    return false;
  addr = a.host();
  len = uint32_t(l);
  return true;
}
std::string ip4(uint32_t a) {
  uint8_t b[4] = {uint8_t(a >> 24), uint8_t(a >> 16), uint8_t(a >> 8), uint8_t(a)};
  return format_ipv4(b);
}
}  // namespace

bool parse_iface_spec(const std::string& spec, RouterIface& f, std::string& err) {
  // NAME,ADDR/LEN[,ADDR6/LEN][,mtu=N][,mac=XX:..]
  std::vector<std::string> parts;
  std::stringstream ss(spec);
  for (std::string p; std::getline(ss, p, ',');) parts.push_back(std::string(trim(p)));
  if (parts.size() < 2 || parts[0].empty()) {
    err = fmt::format("--iface '{}': expected NAME,ADDR/LEN[,ADDR6/LEN][,mtu=N][,mac=ETH]", spec);
    return false;
  }
  f.name = parts[0];
  if (!parse_prefix4(parts[1], f.addr, f.len)) {
    err = fmt::format("--iface '{}': '{}' is not an IPv4 ADDR/LEN", spec, parts[1]);
    return false;
  }
  for (size_t i = 2; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    uint64_t v;
    EtherAddr e;
    IPv6Addr a6;
    if (p.rfind("mtu=", 0) == 0) {
      if (!parse_uint(p.substr(4), v) || v < 68 || v > 65535)
        return err = fmt::format("--iface '{}': bad MTU", spec), false;
      f.mtu = uint32_t(v);
    } else if (p.rfind("mac=", 0) == 0) {
      if (!parse_ether(p.substr(4), e)) return err = fmt::format("--iface '{}': bad Ethernet address", spec), false;
      f.mac = p.substr(4);
    } else if (size_t sl = p.find('/'); sl != std::string::npos && parse_ipv6(p.substr(0, sl), a6) &&
                                        parse_uint(p.substr(sl + 1), v) && v <= 128) {
      f.addr6 = p.substr(0, sl);
      f.len6 = uint32_t(v);
    } else {
      err = fmt::format("--iface '{}': cannot read '{}'", spec, p);
      return false;
    }
  }
  // What the command line leaves out comes from the interface itself.
  if (f.mac.empty()) f.mac = read_sys(f.name, "address");
  EtherAddr eth;
  if (f.mac.empty() || !parse_ether(f.mac, eth)) {
    err = fmt::format("--iface '{}': no Ethernet address (interface not found: give mac=)", spec);
    return false;
  }
  if (f.mtu == 0) {
    uint64_t v = 0;
    std::string m = read_sys(f.name, "mtu");
    f.mtu = parse_uint(m, v) && v >= 68 ? uint32_t(v) : 1500;
  }
  if (!f.addr6.empty() && f.mtu < 1280) {
    err = fmt::format(
        "--iface '{}': MTU {} is below 1280, the least an IPv6 link may have (RFC 8200 section 5); give "
        "mtu=1280 or more, or no IPv6 address on this interface",
        spec, f.mtu);
    return false;
  }
  return true;
}

bool parse_nat_spec(const std::string& spec, const std::vector<RouterIface>& ifs, RouterNat& n, std::string& err) {
  std::string name = spec, ports;
  if (size_t c = spec.find(','); c != std::string::npos) name = spec.substr(0, c), ports = spec.substr(c + 1);
  n.iface = -1;
  for (size_t i = 0; i < ifs.size(); ++i)
    if (ifs[i].name == name) n.iface = int(i);
  if (n.iface < 0) return err = fmt::format("--nat '{}': not one of the interfaces", name), false;
  if (!ports.empty()) {
    uint64_t lo = 0, hi = 0;
    size_t d = ports.find('-');
    if (d == std::string::npos || !parse_uint(ports.substr(0, d), lo) || !parse_uint(ports.substr(d + 1), hi) ||
        lo == 0 || lo > hi || hi > 65535)
      return err = fmt::format("--nat '{}': ports as LO-HI, within 1-65535", spec), false;
    n.port_lo = uint32_t(lo), n.port_hi = uint32_t(hi);
  }
  return true;
}

std::string make_router_config(const std::vector<RouterIface>& ifs, const std::vector<std::string>& routes4,
                               const std::vector<std::string>& routes6, const RouterNat& nat, bool xdp) {
  const char* to = xdp ? "ToXDPDevice" : "ToDevice";
  const char* from = xdp ? "FromXDPDevice" : "FromDevice";
  std::string o;
  auto w = [&]<class... A>(fmt::format_string<A...> f, A&&... a) { o += fmt::format(f, std::forward<A>(a)...); };
  bool v6 = false;
  for (auto& f : ifs) v6 |= !f.addr6.empty();
  w("// An IP router, written by `shoal mkrouter` (the Click router of Kohler et al., Figure 8,\n");
  w("// with IPv6). Interfaces:\n");
  for (size_t i = 0; i < ifs.size(); ++i) {
    auto& f = ifs[i];
    w("//   {}: {}/{}{} ether {} mtu {}\n", f.name, ip4(f.addr), f.len,
      f.addr6.empty() ? "" : fmt::format(" {}/{}", f.addr6, f.len6), f.mac, f.mtu);
  }
  w("\n");
  // Per interface: input, classification, ARP and ND.
  for (size_t i = 0; i < ifs.size(); ++i) {
    auto& f = ifs[i];
    w("// ---- {}\n", f.name);
    w("out{0} :: Queue(1024) -> {2}({1});\n", i, f.name, to);
    w("c{0} :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800,\n"
      "                   12/86dd 20/3a 54/87, 12/86dd 20/3a 54/88, 12/86dd, -);\n",
      i);
    w("{2}({1}) -> c{0};\n", i, f.name, from);
    w("c{0}[0] -> ARPResponder({1} {2}) -> out{0};\n", i, ip4(f.addr), f.mac);
    w("arpq{0} :: ARPQuerier({1}, {2}) -> out{0};\n", i, ip4(f.addr), f.mac);
    w("c{0}[1] -> [1]arpq{0};\n", i);
    if (int(i) == nat.iface)
      w("c{0}[2] -> Paint({1}) -> Strip(14) -> CheckIPHeader(INTERFACES {2}) -> natin;  // see NAT\n", i, i + 1,
        "$IFACES");
    else
      w("c{0}[2] -> Paint({1}) -> ip4;\n", i, i + 1);
    if (!f.addr6.empty()) {
      w("c{0}[3] -> IP6NDAdvertiser({1} {2}) -> out{0};\n", i, f.addr6, f.mac);
      w("nds{0} :: IP6NDSolicitor({1}, {2}) -> out{0};\n", i, f.addr6, f.mac);
      w("c{0}[4] -> [1]nds{0};\n", i);
      w("c{0}[5] -> Paint({1}) -> ip6;\n", i, i + 1);
    } else {
      w("c{0}[3] -> Discard; c{0}[4] -> Discard; c{0}[5] -> Discard;  // no IPv6 here\n", i);
    }
    w("c{0}[6] -> Discard;  // neither IP nor ARP\n\n", i);
  }
  // IPv4: check, route, local delivery.
  std::string ifaces, bad;
  for (auto& f : ifs) {
    ifaces += fmt::format("{}{}/{}", ifaces.empty() ? "" : " ", ip4(f.addr), f.len);
    uint32_t mask = f.len ? ~uint32_t(0) << (32 - f.len) : 0;
    if (f.len < 31) bad += fmt::format("{}{}", bad.empty() ? "" : " ", ip4((f.addr & mask) | ~mask));
  }
  {
    size_t at;
    while ((at = o.find("$IFACES")) != std::string::npos) o.replace(at, 7, ifaces);
  }
  w("// ---- IPv4\n");
  w("ip4 :: Strip(14) -> CheckIPHeader(INTERFACES {}) -> rt;\n", ifaces);
  w("rt :: DirectIPLookup(\n");
  for (auto& f : ifs) {
    uint32_t mask = f.len ? ~uint32_t(0) << (32 - f.len) : 0;
    w("    {}/32 0, ", ip4(f.addr));
    if (f.len < 31) w("{}/32 0, {}/32 0, ", ip4((f.addr & mask) | ~mask), ip4(f.addr & mask));
    w("\n");
  }
  w("    255.255.255.255/32 0, 0.0.0.0/32 0");
  for (size_t i = 0; i < ifs.size(); ++i) {
    uint32_t mask = ifs[i].len ? ~uint32_t(0) << (32 - ifs[i].len) : 0;
    w(",\n    {}/{} {}", ip4(ifs[i].addr & mask), ifs[i].len, i + 1);
  }
  for (auto& r : routes4) w(",\n    {}", r);
  w(");\n");
  w("// Addressed to the router: echo requests are answered, the rest is not ours to handle.\n");
  w("rt[0] -> ping :: ICMPPingResponder -> Paint(0) -> rt;\nping[1] -> Discard;\n\n");
  for (size_t i = 0; i < ifs.size(); ++i) {
    auto& f = ifs[i];
    std::string a = ip4(f.addr);
    if (int(i) == nat.iface) {
      // Rewritten after the TTL (an expiry's error quotes the packet as its host sent it).
      w("rt[{0}] -> DropBroadcasts -> cp{1} :: PaintTee({0}) -> gio{1} :: IPGWOptions({2}) -> FixIPSrc({2})\n"
        "  -> dt{1} :: DecIPTTL -> natout :: IPClassifier(tcp or udp, icmp type echo, -);\n"
        "fr{1} :: IPFragmenter({3}) -> [0]arpq{1};\n"
        "natout[0] -> [0]nat[0] -> fr{1}; natout[1] -> [0]natp[0] -> fr{1}; natout[2] -> fr{1};\n",
        i + 1, i, a, f.mtu);
    } else {
      w("rt[{0}] -> DropBroadcasts -> cp{1} :: PaintTee({0}) -> gio{1} :: IPGWOptions({2}) -> FixIPSrc({2})\n"
        "  -> dt{1} :: DecIPTTL -> fr{1} :: IPFragmenter({3}) -> [0]arpq{1};\n",
        i + 1, i, a, f.mtu);
    }
    w("dt{0}[1] -> ICMPError({1}, timeexceeded, BADADDRS {2}) -> rt;\n", i, a, bad);
    w("fr{0}[1] -> ICMPError({1}, unreachable, needfrag, MTU {2}, BADADDRS {3}) -> rt;\n", i, a, f.mtu, bad);
    w("gio{0}[1] -> ICMPError({1}, parameterproblem, BADADDRS {2}) -> rt;\n", i, a, bad);
    w("cp{0}[1] -> ICMPError({1}, redirect, host, BADADDRS {2}) -> rt;\n\n", i, a, bad);
  }
  if (nat.iface >= 0) {
    const RouterIface& f = ifs[size_t(nat.iface)];
    std::string a = ip4(f.addr);
    w("// ---- NAT: IPv4 connections routed out of {0} leave as {1}, ports {2}-{3} (masquerade).\n"
      "// Their replies, echo replies and the ICMP errors about them come back to their hosts; anything\n"
      "// else arriving on {0} is routed as usual.\n",
      f.name, a, nat.port_lo, nat.port_hi);
    w("nat :: IPRewriter(pattern {0} {1}-{2} - - 0 1, pass 1);\n", a, nat.port_lo, nat.port_hi);
    w("natp :: ICMPPingRewriter(pattern {0} - 0-65535 0 1, pass 1);\n", a);
    w("natin :: IPClassifier(dst host {0} and (tcp or udp), dst host {0} and icmp type echo-reply,\n"
      "                      dst host {0} and icmp, -);\n",
      a);
    w("natin[0] -> [1]nat; natin[1] -> [1]natp; natin[3] -> rt;\n");
    w("natin[2] -> nate :: ICMPRewriter(nat natp) -> rt; nate[1] -> rt;\n");
    w("nat[1] -> rt; natp[1] -> rt;\n\n");
  }
  if (v6) {
    w("// ---- IPv6\n");
    w("ip6 :: Strip(14) -> CheckIP6Header -> rt6;\n");
    w("rt6 :: LookupIP6Route(\n");
    for (auto& f : ifs)
      if (!f.addr6.empty()) w("    {}/128 0,\n", f.addr6);
    bool first = true;
    for (size_t i = 0; i < ifs.size(); ++i) {
      auto& f = ifs[i];
      if (f.addr6.empty()) continue;
      IPv6Addr a;
      parse_ipv6(f.addr6, a);
      for (uint32_t b = f.len6; b < 128; ++b) a.b[b / 8] &= uint8_t(~(0x80 >> (b % 8)));
      w("{}    {}/{} {}", first ? "" : ",\n", format_ipv6(a.b.data()), f.len6, i + 1);
      first = false;
    }
    for (auto& r : routes6) w(",\n    {}", r);
    w(");\n");
    w("rt6[0] -> Discard;  // addressed to the router\n");
    for (size_t i = 0; i < ifs.size(); ++i) {
      auto& f = ifs[i];
      if (f.addr6.empty()) {
        w("rt6[{}] -> Discard;\n", i + 1);
        continue;
      }
      w("rt6[{0}] -> dh{1} :: DecIP6HLIM -> cl{1} :: CheckLength({2}) -> [0]nds{1};\n", i + 1, i, f.mtu);
      w("dh{0}[1] -> ICMP6Error({1}, timeexceeded) -> rt6;\n", i, f.addr6);
      w("cl{0}[1] -> ICMP6Error({1}, packettoobig, MTU {2}) -> rt6;\n", i, f.addr6, f.mtu);
    }
  }
  return o;
}

}  // namespace shoal::tool
