// ToHost: Click's user-level ToHost, giving Ethernet frames to the host's
// stack through the TAP device of the FromHost with the same DEVNAME.
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "shoal/core/graph.hh"
#include "shoal/elements/io/kerneltun.hh"

namespace shoal {

class ToHost : public Element {
 public:
  void configure(Args& a) override {
    a.read_mp("DEVNAME", devname_).read("ALLOW_NONEXISTENT", allow_nonexistent_);
    a.complete();
  }
  void initialize() override {
    r_short_ = add_drop_reason("too-short");
    r_send_ = add_drop_reason("send-error");
    r_nodev_ = add_drop_reason("no-device");
    std::string key = "FromHost " + devname_;
    for (size_t i = 0; i < router().size() && !from_; ++i)
      if (auto* k = dynamic_cast<KernelTun*>(router().element(i)); k && k->device_key() == key) from_ = k;
    if (!from_ && !allow_nonexistent_)
      throw std::runtime_error(fmt::format("no FromHost({}) to give frames through (ToHost needs one)", devname_));
  }
  void cleanup() override { dev_.reset(); }
  void push(int, PacketBatch* b) override {
    b->for_each([&](uint32_t, Packet* p) {
      if (!dev_ && from_) dev_ = from_->device();  // (initialized by now, in whatever order)
      if (!dev_ || dev_->fd < 0) return drop(p, r_nodev_);
      if (p->length() < 14) return drop(p, r_short_);
      ssize_t w;
      do w = ::write(dev_->fd, p->data(), p->length());
      while (w < 0 && errno == EINTR);
      if (w != ssize_t(p->length())) {
        if (!reported_) {
          reported_ = true;
          run_error(fmt::format("writing {}: {}", devname_, w < 0 ? std::strerror(errno) : "short write"), false);
        }
        drops_.add();
        return drop(p, r_send_);
      }
      sent(p);
    });
    recycle(b);
  }
  void add_handlers() override { add_stat_handler("drops", drops_); }

 private:
  std::string devname_;
  bool allow_nonexistent_ = false, reported_ = false;
  KernelTun* from_ = nullptr;  // this worker's copy of the FromHost
  std::shared_ptr<TunDevice> dev_;
  uint16_t r_short_ = 0, r_send_ = 0, r_nodev_ = 0;
  Stat drops_;
};
SHOAL_ELEMENT(ToHost, .name = "ToHost", .ports = "1/0", .processing = "h/",
              .summary = "gives Ethernet frames to the host's stack through a FromHost's TAP device",
              .description =
                  "Writes each frame to the TAP device of the FromHost with the same DEVNAME, so the host's stack "
                  "receives it as if from the wire (the device is promiscuous: any destination address is taken). "
                  "Give it IP packets for the host's own addresses and ARP replies. Frames shorter than an "
                  "Ethernet header are dropped ('too-short'); frames the device refuses, 'send-error' (counted by "
                  "'drops', reported once). Without such a FromHost the router does not start, unless "
                  "ALLOW_NONEXISTENT (then frames are dropped as 'no-device').",
              .args = {{"DEVNAME", "string", "the FromHost's device"},
                       {"ALLOW_NONEXISTENT", "boolean", "start without a FromHost of DEVNAME (default false)"}},
              .handlers = {{"drops", "r", "frames the device refused"}},
              .example = "FromHost(fake0, 192.0.0.1/8) -> ... -> ToHost(fake0);");

}  // namespace shoal
