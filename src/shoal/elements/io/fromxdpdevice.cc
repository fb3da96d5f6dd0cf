// FromXDPDevice: reads a Linux interface queue through an AF_XDP socket
// (io/xdp.hh), one queue per worker.
#include <fmt/format.h>
#include <linux/if_packet.h>

#include <algorithm>
#include <cstring>
#include <fstream>

#include "shoal/elements/io/linkport.hh"
#include "shoal/elements/io/xdpdevice.hh"

namespace shoal {

class FromXDPDevice : public LinkSource, public XdpReceiver {
 public:
  void configure(Args& a) override {
    args_.read(a);
    read_link_source_args(a);
    a.complete();
  }
  void initialize() override {
    port_ = args_.open(this, true);
    // The interface's address: the packet type annotation (host, broadcast,
    // multicast, other host) that AF_PACKET would have given.
    std::ifstream f("/sys/class/net/" + args_.opt.dev + "/address");
    std::string mac;
    EtherAddr ea{};
    if (f >> mac && parse_ether(mac, ea)) std::memcpy(mac_, ea.b.data(), 6), have_mac_ = true;
    LinkSource::initialize();
  }
  void cleanup() override { port_.reset(); }
  const std::string& xdp_dev() const override { return args_.opt.dev; }
  uint32_t produce(PacketBatch* b, uint32_t max, bool&) override {
    uint64_t now = 0;
    uint32_t n = 0;
    port_->receive(max, [&](const uint8_t* d, uint32_t len) {
      if (Packet* p = take_frame(b, d, len, now)) {
        p->anno().packet_type = packet_type(d, len);
        ++n;
      }
    });
    return n;
  }
  void add_handlers() override {
    SourceElement::add_handlers();
    auto stat = [this](auto field) {
      return [this, field] { return std::to_string(port_ ? port_->stats().*field : 0); };
    };
    add_read_handler(
        "kernel_drops", [this] { return std::to_string(port_ ? port_->kernel_drops() : 0); }, Agg::Sum, true);
    add_read_handler("rx_dropped", stat(&io::XdpStats::rx_dropped), Agg::Sum, true);
    add_read_handler("rx_ring_full", stat(&io::XdpStats::rx_ring_full), Agg::Sum, true);
    add_read_handler("rx_fill_empty", stat(&io::XdpStats::rx_fill_empty), Agg::Sum, true);
    add_read_handler("mode", [this] { return port_ ? port_->mode_text() : std::string(); });
  }

 private:
  uint8_t packet_type(const uint8_t* d, uint32_t len) const {
    if (len < 6) return PACKET_OTHERHOST;
    if (std::all_of(d, d + 6, [](uint8_t c) { return c == 0xff; })) return PACKET_BROADCAST;
    if (d[0] & 1) return PACKET_MULTICAST;
    return !have_mac_ || std::memcmp(d, mac_, 6) == 0 ? PACKET_HOST : PACKET_OTHERHOST;
  }

  XdpDeviceArgs args_;
  std::shared_ptr<io::XskPort> port_;
  uint8_t mac_[6] = {};
  bool have_mac_ = false;
};
SHOAL_ELEMENT(FromXDPDevice, .name = "FromXDPDevice", .ports = "0/1", .processing = "a/a",
              .summary = "reads packets from a Linux interface through AF_XDP",
              .description =
                  "Receives the frames of interface DEVNAME through an AF_XDP socket (libxdp): libxdp's XDP program "
                  "redirects each frame of the bound queue into a UMEM of FRAMES x FRAME_SIZE bytes before the kernel "
                  "makes an skb, and the element copies it into a packet; half the UMEM keeps the fill ring full "
                  "(each frame goes back as soon as it is copied), need-wakeup saves system calls while the kernel "
                  "keeps up. Worker w binds queue QUEUE + w, so N workers need N queues (ethtool -L DEVNAME combined "
                  "N; a veth's queues are set when it is made); frames on other queues go on to the kernel's stack. "
                  "MODE native attaches XDP in the driver, generic after the kernel built an skb (any interface, "
                  "slower), auto tries native first; ZEROCOPY auto lets the kernel use zero-copy where the driver "
                  "can. A ToXDPDevice on the same interface in the same worker shares the socket (one per queue). "
                  "Frames larger than FRAME_SIZE cannot be received (the kernel counts them in rx_dropped); an "
                  "interface whose MTU is too large for XDP is refused. Frames sent by local programs through a veth "
                  "may carry a checksum the sender left to offload (AF_XDP does not say so, unlike FromDevice): turn "
                  "off the sender's offload (ethtool -K PEER tx off). A missing interface, too few queues, missing "
                  "privileges (CAP_NET_ADMIN, CAP_BPF) or a queue held by another socket or XDP program are "
                  "configuration errors that say what to do. kernel_drops sums the kernel's losses (rx_dropped, "
                  "rx_ring_full, rx_fill_empty); mode says how the socket was bound.",
              .args = {{"DEVNAME", "string", "interface name"},
                       {"QUEUE", "unsigned", "the first queue (default 0); worker w reads QUEUE + w"},
                       {"MODE", "auto|native|generic", "XDP attach mode (default auto: native, else generic)"},
                       {"ZEROCOPY", "auto|boolean", "AF_XDP zero-copy (default auto: where the driver can)"},
                       {"FRAMES", "unsigned", "UMEM frames per worker, a power of two (default 4096)"},
                       {"FRAME_SIZE", "unsigned", "bytes per UMEM frame, 2048 or 4096 (default 4096)"},
                       {"RING_SIZE", "unsigned", "descriptors per ring, a power of two (default 2048)"},
                       {"SNAPLEN", "unsigned", "bytes kept per frame (default 65535)"},
                       {"BURST", "unsigned", "packets per task run (default 32)"},
                       {"LIMIT", "integer", "stop after this many packets, each worker its own (-1: none)"},
                       {"ACTIVE", "boolean", "start reading (default true)"},
                       {"STOP", "boolean", "stop the router after LIMIT packets"},
                       {"END_CALL", "handler call", "call a write handler ('elem.handler VALUE') when done"}},
              .handlers = {{"count", "r", "packets read"},
                           {"kernel_drops", "r", "frames the kernel lost (the three below)"},
                           {"rx_dropped", "r", "frames the kernel dropped (too large, no buffer)"},
                           {"rx_ring_full", "r", "frames lost to a full RX ring"},
                           {"rx_fill_empty", "r", "times a frame found the fill ring empty"},
                           {"mode", "r", "native or generic XDP, zero-copy or copy"},
                           {"active", "rw", "reading or not"}},
              .example = "FromXDPDevice(eth0) -> c :: Classifier(12/0806, 12/0800, -);");

}  // namespace shoal
