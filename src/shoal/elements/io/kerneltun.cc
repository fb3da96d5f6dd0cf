// KernelTun: a Linux TUN device (IFF_TUN, no packet information) made when
// the router starts, given ADDR/MASK, the MTU and IFF_UP by ioctl (and a
// default route through GATEWAY), closed (so gone) when it ends. What the
// host's stack routes to it leaves output 0 as IP packets; what is pushed or
// pulled in goes to the host's stack.
//
// Every worker's copy writes through the one descriptor (a TUN write is one
// packet, atomic); the home worker's copy reads. A hot swap's KernelTun of
// the same name and settings keeps the old one's device, so the interface,
// its address and routes stay up across the swap.
#include "shoal/elements/io/kerneltun.hh"

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
#include <mutex>
#include <stdexcept>

#include "shoal/core/runtime.hh"
#include "shoal/core/worker.hh"

namespace shoal {

// The device, shared by the copies of one element (and by its successor
// across a hot swap); closing the last descriptor removes the interface.
struct TunDevice {
  std::mutex mu;
  bool tried = false;
  std::string error;  // why it could not be made
  int fd = -1;
  std::string name;
  ~TunDevice() {
    if (fd >= 0) ::close(fd);
  }
};

namespace {

std::string sys_error(const std::string& what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

sockaddr_in inet(uint32_t host_order) {
  sockaddr_in s{};
  s.sin_family = AF_INET;
  s.sin_addr.s_addr = htonl(host_order);
  return s;
}

}  // namespace

void KernelTun::configure(Args& a) {
  std::string prefix;
  IPv4Addr gw;
  a.read_mp("ADDR", prefix).read_p("GATEWAY", gw).read("TAP", tap_).read("DEVNAME", devname_);
  a.read("DEV_NAME", devname_).read("ETHER", ether_).read("MTU", mtu_).read("BURST", burst_);
  a.read("HEADROOM", headroom_).read("IGNORE_QUEUE_OVERFLOWS", ignore_overflows_);
  a.complete();
  // Click's IPPrefixArg: "ADDR/LEN", "ADDR/MASK" or "ADDR MASK".
  std::string p(trim(prefix));
  if (auto sp = p.find_first_of(" \t"); sp != std::string::npos && p.find('/') == std::string::npos)
    p = p.substr(0, sp) + "/" + std::string(trim(std::string_view(p).substr(sp)));
  if (!parse_ipv4_prefix(p, addr_, mask_)) a.fail(fmt::format("ADDR '{}' is not an IPv4 address and prefix", prefix));
  gw_ = gw.host();
  if (gw_ && (gw_ & mask_) != (addr_ & mask_)) a.fail("bad GATEWAY: it is not on the device's network (ADDR/MASK)");
  if (mtu_ < 20 || mtu_ + 14 > PacketPool::kMaxFrame) a.fail("MTU must be 20 to 65535");
  if (burst_ < 1) a.fail("BURST must be at least 1");
  if (headroom_ > 8192) a.fail("HEADROOM too big (at most 8192)");
  if (devname_.size() >= IFNAMSIZ)
    a.fail(fmt::format("DEVNAME '{}' is longer than {} characters", devname_, IFNAMSIZ - 1));
  if (ether_ && !tap_) a.fail("ETHER needs a TAP device (KernelTap, or TAP true)");
}

bool KernelTun::same_settings(const KernelTun& o) const {
  auto eth = [](const std::optional<EtherAddr>& e) { return e ? e->b : std::array<uint8_t, 6>{}; };
  return tap_ == o.tap_ && addr_ == o.addr_ && mask_ == o.mask_ && gw_ == o.gw_ && devname_ == o.devname_ &&
         mtu_ == o.mtu_ && bool(ether_) == bool(o.ether_) && eth(ether_) == eth(o.ether_);
}

namespace {

// Makes the device and sets it up as Click's KernelTun does; an error text
// (empty on success).
std::string open_device(TunDevice& d, bool tap, const std::string& devname, uint32_t addr, uint32_t mask, uint32_t gw,
                        uint32_t mtu, const std::optional<EtherAddr>& ether) {
  d.fd = ::open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (d.fd < 0)
    return sys_error("/dev/net/tun") +
           (errno == ENOENT || errno == ENODEV ? " (is the kernel's 'tun' module loaded?)" : "");
  ifreq ifr{};
  ifr.ifr_flags = short((tap ? IFF_TAP : IFF_TUN) | IFF_NO_PI);
  std::strncpy(ifr.ifr_name, devname.c_str(), IFNAMSIZ - 1);
  if (ioctl(d.fd, TUNSETIFF, &ifr) < 0)
    return sys_error(fmt::format("making {} device '{}'", tap ? "TAP" : "TUN", devname.empty() ? "tun%d" : devname)) +
           (errno == EPERM ? " (it needs CAP_NET_ADMIN)" : "");
  d.name = ifr.ifr_name;
  int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (s < 0) return sys_error("socket");
  std::string err;
  auto req = [&](unsigned long op, const char* what) {
    std::strncpy(ifr.ifr_name, d.name.c_str(), IFNAMSIZ - 1);
    if (err.empty() && ioctl(s, op, &ifr) < 0) err = sys_error(fmt::format("{} on {}", what, d.name));
  };
  auto set_addr = [&](uint32_t a) {
    sockaddr_in sa = inet(a);
    std::memcpy(&ifr.ifr_addr, &sa, sizeof sa);
  };
  set_addr(addr);
  req(SIOCSIFADDR, "setting the address");
  set_addr(mask);
  req(SIOCSIFNETMASK, "setting the netmask");
  if (ether) {
    ifr.ifr_hwaddr.sa_family = ARPHRD_ETHER;
    std::memcpy(ifr.ifr_hwaddr.sa_data, ether->b.data(), 6);
    req(SIOCSIFHWADDR, "setting the Ethernet address");
  }
  ifr.ifr_mtu = int(mtu);
  req(SIOCSIFMTU, "setting the MTU");
  req(SIOCGIFFLAGS, "reading the flags");
  // Up, and promiscuous as Click makes it (a TAP then takes frames for any
  // Ethernet address), answering ARP on a TAP.
  ifr.ifr_flags = short((ifr.ifr_flags | IFF_UP | IFF_PROMISC) & ~(tap ? IFF_NOARP : 0));
  req(SIOCSIFFLAGS, "bringing it up");
  if (err.empty() && gw) {
    rtentry rt{};
    sockaddr_in dst = inet(0), g = inet(gw), m = inet(0);
    std::memcpy(&rt.rt_dst, &dst, sizeof dst);
    std::memcpy(&rt.rt_gateway, &g, sizeof g);
    std::memcpy(&rt.rt_genmask, &m, sizeof m);
    rt.rt_flags = RTF_UP | RTF_GATEWAY;
    rt.rt_dev = d.name.data();
    if (ioctl(s, SIOCADDRT, &rt) < 0) err = sys_error(fmt::format("adding the default route through {}", d.name));
  }
  ::close(s);
  return err;
}

}  // namespace

void KernelTun::initialize() {
  r_not_ip_ = add_drop_reason("not-ip");
  r_no_ip_header_ = add_drop_reason("no-ip-header");
  r_mtu_ = add_drop_reason("exceeds-mtu");
  r_short_ = add_drop_reason("too-short");
  r_send_ = add_drop_reason("send-error");
  if (Runtime* old = worker().runtime().replacing(); old && worker().id() < old->nworkers())
    if (auto* o = dynamic_cast<KernelTun*>(old->router(worker().id()).find(name())); o && o->dev_ && same_settings(*o))
      dev_ = o->dev_;
  if (!dev_) dev_ = shared_state<TunDevice>(this);
  {
    std::lock_guard<std::mutex> g(dev_->mu);
    if (!dev_->tried) {
      dev_->tried = true;
      dev_->error = open_device(*dev_, tap_, devname_, addr_, mask_, gw_, mtu_, ether_);
    }
    if (!dev_->error.empty()) throw std::runtime_error(dev_->error);
  }
  reader_ = noutputs() > 0 && on_home_thread();
  bool pulls = ninputs() > 0 && input_proc(0) == Proc::Pull;
  if (pulls) pt_.init(this, burst_);
  if (reader_ || pulls) {
    add_task();
    set_task_active(true);
  }
}

void KernelTun::cleanup() { dev_.reset(); }

void KernelTun::push(int, PacketBatch* b) {
  b->for_each([&](uint32_t, Packet* p) { write(p); });
  recycle(b);
}

bool KernelTun::run_task() {
  bool did = reader_ && read_some() > 0;
  if (ninputs() > 0 && input_proc(0) == Proc::Pull) {
    // The reader's task stays scheduled to read; another copy's sleeps on
    // the upstream notifier.
    PacketBatch* b = reader_ ? input_pull(0, burst_) : pt_.pull();
    if (b) {
      push(0, b);
      did = true;
    }
  }
  return did;
}

uint32_t KernelTun::read_some() {
  selected_.add();
  uint32_t mtu_in = mtu_ + (tap_ ? 14 : 0), n = 0;
  PacketBatch* out0 = nullptr;
  PacketBatch* out1 = nullptr;
  uint64_t now = 0;
  while (n < burst_ && !(out0 && out0->full()) && !(out1 && out1->full())) {
    Packet* p = worker().pool().alloc(mtu_in);
    if (!p) break;  // no buffer: the frame waits in the device's queue
    ssize_t got = ::read(dev_->fd, p->data(), mtu_in);
    if (got <= 0) {
      worker().pool().free(p);
      if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
          !(ignore_overflows_ && errno == ENOBUFS))
        run_error(sys_error(fmt::format("reading {}", dev_->name)), false);
      break;
    }
    ++n;
    received(1);
    packets_.add();
    p->take(mtu_in - uint32_t(got));
    if (!now) now = realtime_ns();
    p->set_timestamp_ns(now);
    bool ip = true;
    if (tap_) {
      p->set_mac_header(0);
    } else {
      uint8_t v = p->data()[0] >> 4;
      ip = (v == 4 && got >= 20) || (v == 6 && got >= 40);
      if (ip) p->set_network_header(0);
    }
    if (ip) {
      if (!out0) out0 = new_batch();
      out0->append(p);
    } else if (noutputs() > 1) {
      if (!out1) out1 = new_batch();
      out1->append(p);
    } else {
      drop(p, r_not_ip_);
    }
  }
  if (out0) output_push(0, out0);
  if (out1) output_push(1, out1);
  return n;
}

void KernelTun::write(Packet* p) {
  uint32_t len;
  if (tap_) {
    if (p->length() < 14) return drop(p, r_short_);
    len = p->length() - 14;
  } else {
    // IP from the network header on; what comes before it is taken off.
    if (!p->has_network_header() || p->network_header_offset() < 0 ||
        uint64_t(p->network_header_offset()) + 20 > p->length())
      return drop(p, r_no_ip_header_);
    p->pull(uint32_t(p->network_header_offset()));
    uint8_t v = p->data()[0] >> 4;
    if (v != 4 && v != 6) return drop(p, r_not_ip_);
    len = p->length();
  }
  if (len > mtu_) return drop(p, r_mtu_);
  for (;;) {
    ssize_t w = ::write(dev_->fd, p->data(), p->length());
    if (w == ssize_t(p->length())) break;
    if (w < 0 && errno == EINTR) continue;
    if (!(ignore_overflows_ && w < 0 && (errno == ENOBUFS || errno == EAGAIN)) && !write_error_reported_) {
      write_error_reported_ = true;
      run_error(w < 0 ? sys_error(fmt::format("writing {}", dev_->name)) : "short write", false);
    }
    return drop(p, r_send_);
  }
  sent_.add();
  sent(p);
}

void KernelTun::add_handlers() {
  add_read_handler("dev_name", [this] { return dev_ ? dev_->name : std::string(); });
  add_stat_handler("packets", packets_);
  add_stat_handler("sent", sent_);
  add_stat_handler("selected_calls", selected_);
}

SHOAL_ELEMENT(
    KernelTun, .name = "KernelTun", .ports = "0-1/1-2", .processing = "a/h",
    .summary = "hands IP packets to the host's own stack through a TUN device, and takes what it routes there",
    .description =
        "Makes a Linux TUN device (DEVNAME, or the next free tunN) and gives it the address ADDR with netmask "
        "MASK, the MTU, and IFF_UP; with GATEWAY (on that network), a default route through it. The host then "
        "routes to KernelTun what it sends to ADDR/MASK's other addresses (what it sends to ADDR itself it keeps): "
        "those IP packets leave output 0, with the network header set and the time they were read. A frame that "
        "is not IPv4 or IPv6 leaves output 1, or is dropped ('not-ip') without one. Packets pushed or pulled in "
        "go to the host's stack: IP from the network header on (what comes before it, an Ethernet header say, is "
        "taken off); a packet with no network header is dropped ('no-ip-header'), one longer than MTU "
        "('exceeds-mtu'), and one the device refuses ('send-error', reported once unless IGNORE_QUEUE_OVERFLOWS). "
        "The device is gone when the router ends. Making it needs CAP_NET_ADMIN; without it, or without the "
        "kernel's tun module, the router does not start. With several workers, every copy writes through the one "
        "device and the element's home worker reads it. A hot swap to a KernelTun of the same name and settings "
        "keeps the device (with its routes).",
    .args = {{"ADDR", "IPv4 prefix", "the host's address on the device and its network: ADDR/LEN or ADDR/MASK"},
             {"GATEWAY", "IPv4 address", "add a default route through this address (on ADDR's network)"},
             {"TAP", "boolean", "a TAP device: Ethernet frames, as KernelTap (default false)"},
             {"DEVNAME", "string", "the device's name (default: the kernel picks tunN or tapN)"},
             {"DEV_NAME", "string", "the same as DEVNAME (Click's older name)"},
             {"ETHER", "Ethernet address", "the TAP device's Ethernet address (default: the kernel's random one)"},
             {"MTU", "unsigned", "the device's MTU, without link headers (default 1500)"},
             {"BURST", "unsigned", "packets read, or pulled, per task run (default 32)"},
             {"HEADROOM", "unsigned", "accepted for Click compatibility (Shoal's packets have headroom)"},
             {"IGNORE_QUEUE_OVERFLOWS", "boolean",
              "do not report a full device queue (ENOBUFS); the packets are still counted drops"}},
    .handlers = {{"dev_name", "r", "the device's name"},
                 {"packets", "r", "packets read from the device"},
                 {"sent", "r", "packets written to the device"},
                 {"selected_calls", "r", "times the device was read"}},
    .example =
        "tun :: KernelTun(10.77.0.1/24);\ntun -> IPClassifier(icmp type echo) -> ICMPPingResponder -> tun;\n"
        "// ping 10.77.0.2: Shoal answers");

}  // namespace shoal
