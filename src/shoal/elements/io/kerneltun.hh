// KernelTun (and KernelTap): Click's user-level interface to the host's own
// IP stack through a Linux TUN (IP packets) or TAP (Ethernet frames)
// device, made and configured (address, netmask, MTU, link address, up)
// when the router starts and gone when it ends.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "shoal/elements/common.hh"

namespace shoal {

struct TunDevice;

class KernelTun : public Element {
 public:
  explicit KernelTun(bool tap = false) : tap_(tap) {}
  void configure(Args& a) override;
  void initialize() override;
  void cleanup() override;
  void push(int port, PacketBatch* b) override;
  bool run_task() override;
  void add_handlers() override;

 private:
  bool same_settings(const KernelTun& o) const;
  uint32_t read_some();  // packets read from the device
  void write(Packet* p);

  bool tap_;
  uint32_t addr_ = 0, mask_ = 0, gw_ = 0;  // host order
  std::string devname_;
  std::optional<EtherAddr> ether_;
  uint32_t mtu_ = 1500, burst_ = 32, headroom_ = 0;
  bool ignore_overflows_ = false, reader_ = false, write_error_reported_ = false;
  std::shared_ptr<TunDevice> dev_;
  PullTask pt_;
  uint16_t r_not_ip_ = 0, r_no_ip_header_ = 0, r_mtu_ = 0, r_short_ = 0, r_send_ = 0;
  Stat packets_, sent_, selected_;
};

}  // namespace shoal
