// FromHost: Click's user-level FromHost, a TAP device named DEVNAME whose
// frames leave output 0; ToHost(DEVNAME) gives it frames (tohost.cc).
#include <fmt/format.h>

#include "shoal/elements/io/kerneltun.hh"

namespace shoal {

class FromHost : public KernelTun {
 public:
  FromHost() : KernelTun(true) { mark_ip_ = true; }
  void configure(Args& a) override {
    std::string dst, dst6;
    IPv4Addr gw;
    a.read_mp("DEVNAME", tun_.devname).read_p("DST", dst).read("GATEWAY", gw).read("ETHER", tun_.ether);
    a.read("DST6", dst6).read("MTU", tun_.mtu).read("HEADROOM", headroom_).read("BURST", burst_);
    a.complete();
    if (!dst.empty() && !parse_prefix(dst, tun_.addr, tun_.mask))
      a.fail(fmt::format("DST '{}' is not an IPv4 address and prefix", dst));
    if (!dst6.empty()) {
      std::string_view v = trim(dst6);
      size_t slash = v.find('/');
      IPv6Addr a6;
      uint64_t len = 64;
      if (!parse_ipv6(v.substr(0, slash), a6) ||
          (slash != std::string_view::npos && (!parse_uint(v.substr(slash + 1), len) || len > 128)))
        a.fail(fmt::format("DST6 '{}' is not an IPv6 address and prefix length", dst6));
      tun_.addr6 = a6;
      tun_.addr6_len = uint32_t(len);
    }
    tun_.gw = gw.host();
    if (tun_.devname.empty()) a.fail("DEVNAME is empty");
    check_settings(a);
  }
  std::string device_key() const override { return key(tun_.devname); }
  // The device a ToHost of DEVNAME writes to.
  static std::string key(const std::string& devname) { return "FromHost " + devname; }
};
SHOAL_ELEMENT(
    FromHost, .name = "FromHost", .ports = "0/1", .processing = "/h",
    .summary = "takes the Ethernet frames the host's stack sends to a TAP device (ToHost gives it frames)",
    .description =
        "Makes a Linux TAP device named DEVNAME (KernelTap's device: promiscuous, answering ARP), gives it the "
        "address and netmask DST (and the IPv6 address DST6, and a default route through GATEWAY, when given) "
        "and brings it up; what the host's stack sends there leaves output 0 as Ethernet frames, IPv4 ones with "
        "their network header and DST_IP annotation set (as Click's FromHost). ToHost(DEVNAME) hands frames to "
        "the host through the same device. The host ARPs for the addresses it sends to: answer it (ARPResponder "
        "-> ToHost) to receive IP. KernelTun and KernelTap do the same with one element. The device is gone when "
        "the router ends; a hot swap to a FromHost of the same settings keeps it.",
    .args = {{"DEVNAME", "string", "the TAP device's name"},
             {"DST", "IPv4 prefix", "the host's address on the device and its network (default: none set)"},
             {"DST6", "IPv6 prefix", "an IPv6 address for the host on the device, ADDR/LEN"},
             {"GATEWAY", "IPv4 address", "add a default route through this address (on DST's network)"},
             {"ETHER", "Ethernet address", "the device's Ethernet address (default: the kernel's random one)"},
             {"MTU", "unsigned", "the device's MTU (default 1500)"},
             {"BURST", "unsigned", "frames read per task run (default 32)"},
             {"HEADROOM", "unsigned", "accepted for Click compatibility"}},
    .handlers = {{"dev_name", "r", "the device's name"},
                 {"packets", "r", "frames read from the device"},
                 {"selected_calls", "r", "times the device was read"}},
    .example =
        "FromHost(fake0, 192.0.0.1/8) -> c :: Classifier(12/0806, 12/0800);\n"
        "c[0] -> ARPResponder(0.0.0.0/0 1:1:1:1:1:1) -> ToHost(fake0);\nc[1] -> ...");

}  // namespace shoal
