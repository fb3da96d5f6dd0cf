// KernelTun (and KernelTap, FromHost): Click's user-level interfaces to the
// host's own IP stack through a Linux TUN (IP packets) or TAP (Ethernet
// frames) device, made and set up when the router starts and gone when it
// ends (io/tundevice.hh).
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "shoal/elements/common.hh"
#include "shoal/elements/io/tundevice.hh"

namespace shoal {

class KernelTun : public Element {
 public:
  explicit KernelTun(bool tap = false) { tun_.tap = tap; }
  void configure(Args& a) override;
  void initialize() override;
  void cleanup() override;
  void push(int port, PacketBatch* b) override;
  bool run_task() override;
  void add_handlers() override;
  // Which elements share a device: the copies of this one (FromHost: and
  // the ToHosts of its DEVNAME).
  virtual std::string device_key() const { return name(); }
  const std::shared_ptr<TunDevice>& device() const { return dev_; }

 protected:
  uint32_t read_some();  // packets read from the device
  void write(Packet* p);
  // Click's IPPrefixArg: "ADDR/LEN", "ADDR/MASK" or "ADDR MASK" (host order).
  static bool parse_prefix(std::string_view text, uint32_t& addr, uint32_t& mask);
  // Fails on settings that cannot go together (GATEWAY off the network...).
  void check_settings(Args& a);

  TunSettings tun_;
  uint32_t burst_ = 32, headroom_ = 0;
  bool ignore_overflows_ = false;
  bool mark_ip_ = false;  // FromHost: IPv4 frames get their network header and DST_IP set
  std::shared_ptr<TunDevice> dev_;

 private:
  bool reader_ = false, write_error_reported_ = false;
  bool selecting_ = false;  // the reader sleeps on the descriptor (Worker::add_select)
  PullTask pt_;
  uint16_t r_not_ip_ = 0, r_no_ip_header_ = 0, r_mtu_ = 0, r_short_ = 0, r_send_ = 0;
  Stat packets_, sent_, selected_;
};

}  // namespace shoal
