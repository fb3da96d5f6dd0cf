#include "shoal/elements/io/tundevice.hh"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <net/if_arp.h>
#include <net/route.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace shoal {

namespace {

std::string tun_error(const std::string& what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

sockaddr_in inet_addr_of(uint32_t host_order) {
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_addr.s_addr = htonl(host_order);
  return s;
}

// The kernel's struct in6_ifreq (linux/ipv6.h, which clashes with netinet/in.h).
struct In6Ifreq {
  in6_addr addr;
  uint32_t prefixlen;
  int ifindex;
};

std::string setup(TunDevice& d, const TunSettings& t) {
  d.fd = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (d.fd < 0)
    return tun_error("/dev/net/tun") +
           (errno == ENOENT || errno == ENODEV ? " (is the kernel's 'tun' module loaded?)" : "");
  ifreq ifr{};
  ifr.ifr_flags = short((t.tap ? IFF_TAP : IFF_TUN) | IFF_NO_PI);
  std::strncpy(ifr.ifr_name, t.devname.c_str(), IFNAMSIZ - 1);
  if (ioctl(d.fd, TUNSETIFF, &ifr) < 0)
    return tun_error(fmt::format("making {} device '{}'", t.tap ? "TAP" : "TUN",
                                 t.devname.empty() ? (t.tap ? "tap%d" : "tun%d") : t.devname)) +
           (errno == EPERM ? " (it needs CAP_NET_ADMIN)" : "");
  d.name = ifr.ifr_name;
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return tun_error("socket");
  std::string err;
  auto req = [&](unsigned long op, const char* what) {
    std::strncpy(ifr.ifr_name, d.name.c_str(), IFNAMSIZ - 1);
    if (err.empty() && ioctl(s, op, &ifr) < 0) err = tun_error(fmt::format("{} on {}", what, d.name));
  };
  auto set_addr = [&](uint32_t a) {
    sockaddr_in sa = inet_addr_of(a);
    std::memcpy(&ifr.ifr_addr, &sa, sizeof sa);
  };
  if (t.addr) {
    set_addr(t.addr);
    req(SIOCSIFADDR, "setting the address");
    set_addr(t.mask);
    req(SIOCSIFNETMASK, "setting the netmask");
  }
  if (t.ether) {
    ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
    std::memcpy(ifr.ifr_hwaddr.sa_data, t.ether->b.data(), 6);
    req(SIOCSIFHWADDR, "setting the Ethernet address");
  }
  req(SIOCGIFINDEX, "reading the index");
  int ifindex = ifr.ifr_ifindex;
  ifr.ifr_mtu = int(t.mtu);
  req(SIOCSIFMTU, "setting the MTU");
  req(SIOCGIFFLAGS, "reading the flags");
  // Up, and promiscuous as Click makes it (a TAP then takes frames for any
  // Ethernet address), answering ARP on a TAP.
  ifr.ifr_flags = short((ifr.ifr_flags | IFF_UP | IFF_PROMISC) & ~(t.tap ? IFF_NOARP : 0));
  req(SIOCSIFFLAGS, "bringing it up");
  if (err.empty() && t.gw) {
    rtentry rt{};
    sockaddr_in dst = inet_addr_of(0), g = inet_addr_of(t.gw), m = inet_addr_of(0);
    std::memcpy(&rt.rt_dst, &dst, sizeof dst);
    std::memcpy(&rt.rt_gateway, &g, sizeof g);
    std::memcpy(&rt.rt_genmask, &m, sizeof m);
    rt.rt_flags = RTF_UP | RTF_GATEWAY;
    rt.rt_dev = d.name.data();
    if (ioctl(s, SIOCADDRT, &rt) < 0) err = tun_error(fmt::format("adding the default route through {}", d.name));
  }
  ::close(s);
  if (err.empty() && t.addr6) {
    int s6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s6 < 0) return tun_error("socket(AF_INET6)");
    In6Ifreq r{};
    std::memcpy(&r.addr, t.addr6->b.data(), 16);
    r.prefixlen = t.addr6_len;
    r.ifindex = ifindex;
    if (ioctl(s6, SIOCSIFADDR, &r) < 0) err = tun_error(fmt::format("setting the IPv6 address on {}", d.name));
    ::close(s6);
  }
  return err;
}

}  // namespace

std::string TunSettings::key() const {
  std::string k = fmt::format("{}|{}|{}|{}|{}|{}|{}", tap, devname, addr, mask, gw, mtu, addr6_len);
  if (addr6) k.append(reinterpret_cast<const char*>(addr6->b.data()), 16);
  k += '|';
  if (ether) k.append(reinterpret_cast<const char*>(ether->b.data()), 6);
  return k;
}

TunDevice::~TunDevice() {
  if (fd >= 0) ::close(fd);
}

const std::string& TunDevice::open(const TunSettings& s) {
  if (!tried) {
    tried = true;
    error = setup(*this, s);
  }
  return error;
}

}  // namespace shoal
