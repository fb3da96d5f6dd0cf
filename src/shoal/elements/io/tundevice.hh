// A Linux TUN or TAP device made and set up for KernelTun, KernelTap and
// FromHost/ToHost: the interface lives as long as its descriptor does.
#pragma once
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>

#include "shoal/core/args.hh"

namespace shoal {

struct TunSettings {
  bool tap = false;
  std::string devname;                  // empty: the kernel picks tunN or tapN
  uint32_t addr = 0, mask = 0, gw = 0;  // host order; addr 0: no IPv4 address set
  std::optional<IPv6Addr> addr6;        // an IPv6 address too, with addr6_len
  uint32_t addr6_len = 64;
  uint32_t mtu = 1500;
  std::optional<EtherAddr> ether;  // a TAP's link address
  // The settings as one comparable string (a hot swap keeps a device whose
  // settings did not change).
  std::string key() const;
};

// Shared by the copies of an element (and by its successor across a hot
// swap); closing the last reference closes the descriptor, and the kernel
// removes the interface.
struct TunDevice {
  std::mutex mu;
  bool tried = false;
  std::string error;  // why it could not be made (set by the first open())
  int fd = -1;        // non-blocking
  std::string name;   // the interface's name
  TunDevice() = default;
  TunDevice(const TunDevice&) = delete;
  TunDevice& operator=(const TunDevice&) = delete;
  ~TunDevice();
  // Makes the device (IFF_NO_PI) and gives it the address, netmask, IPv6
  // address, link address, MTU, IFF_UP and IFF_PROMISC (as Click does), and a
  // default route through `gw`; the first call only (under mu). The error
  // text, empty when it worked.
  const std::string& open(const TunSettings& s);
};

}  // namespace shoal
