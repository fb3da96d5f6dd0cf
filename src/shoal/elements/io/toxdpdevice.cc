// ToXDPDevice: sends on a Linux interface queue through an AF_XDP socket
// (io/xdp.hh), one queue per worker, kicked once per batch.
#include <fmt/format.h>

#include <algorithm>

#include "shoal/elements/io/linkport.hh"
#include "shoal/elements/io/xdpdevice.hh"

namespace shoal {

class ToXDPDevice : public LinkSink {
 public:
  void configure(Args& a) override {
    args_.read(a);
    a.read("BURST", burst_);
    a.complete();
    if (burst_ == 0) a.fail("BURST must be at least 1");
  }
  void initialize() override {
    port_ = args_.open(this, false);
    init_link_sink();
  }
  void cleanup() override { port_.reset(); }
  void push(int, PacketBatch* b) override { send(b); }
  bool run_task() override {
    // Room for a burst (or for all the port can hold, if BURST is larger).
    if (port_->tx_room() < std::min({burst_, args_.opt.ring_size, args_.opt.frames / 2})) {
      port_->kick();
      return true;  // the ring drains; packets wait in the queue meanwhile
    }
    PacketBatch* b = pt_.pull();  // sleeps on the upstream notifier when empty
    if (!b) return false;
    send(b);
    return true;
  }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_read_handler(
        "tx_invalid", [this] { return std::to_string(port_ ? port_->stats().tx_invalid : 0); }, Agg::Sum, true);
    add_read_handler("mode", [this] { return port_ ? port_->mode_text() : std::string(); });
  }

 private:
  int refuse(const Packet* p) const { return link_refusal(p, port_->mtu(), port_->max_frame()); }
  void send(PacketBatch* b) {
    // Reserve exactly the slots the sendable frames take, then fill them.
    uint32_t want = 0;
    b->for_each([&](uint32_t, Packet* p) { want += refuse(p) < 0; });
    uint32_t room = want ? port_->reserve(want) : 0;
    b->for_each([&](uint32_t, Packet* p) {
      if (int r = refuse(p); r >= 0) return drop(p, uint16_t(r));
      if (room == 0) return drop(p, r_full_);
      --room;
      port_->put(p->data(), p->length());
      count_.add();
      sent(p);
    });
    recycle(b);
    if (want) port_->flush();
  }

  XdpDeviceArgs args_;
  std::shared_ptr<io::XskPort> port_;
};
SHOAL_ELEMENT(ToXDPDevice, .name = "ToXDPDevice", .ports = "1/0", .processing = "a/",
              .summary = "sends packets on a Linux interface through AF_XDP",
              .description =
                  "Sends Ethernet frames on interface DEVNAME through an AF_XDP socket: each frame is copied "
                  "into a free UMEM frame (half of FRAMES; the completion ring gives them back once sent) and "
                  "the batch is handed to the kernel with one kick (copy mode sends 32 frames a call: it kicks "
                  "until the ring drains). Worker w sends on queue QUEUE + w. A FromXDPDevice on the same "
                  "interface in the same worker shares the socket, and then both must have the same MODE, "
                  "ZEROCOPY, FRAMES, FRAME_SIZE and RING_SIZE; alone it opens a socket that only sends and "
                  "attaches no XDP program, so the interface's received traffic still goes to the kernel. "
                  "Pulling (after a Queue), it takes packets only while the ring has room for BURST, so a busy "
                  "link leaves them queued; pushed packets that find no room are dropped ('tx-ring-full'). "
                  "Frames longer than the MTU plus the Ethernet header, or than FRAME_SIZE: 'exceeds-mtu'; "
                  "shorter than 14 bytes: 'too-short'. Errors as FromXDPDevice's.",
              .args = {{"DEVNAME", "string", "interface name"},
                       {"QUEUE", "unsigned", "the first queue (default 0); worker w sends on QUEUE + w"},
                       {"MODE", "auto|native|generic", "XDP attach mode when shared with a FromXDPDevice"},
                       {"ZEROCOPY", "auto|boolean", "AF_XDP zero-copy (default auto)"},
                       {"FRAMES", "unsigned", "UMEM frames per worker, a power of two (default 4096)"},
                       {"FRAME_SIZE", "unsigned", "bytes per UMEM frame, 2048 or 4096 (default 4096)"},
                       {"RING_SIZE", "unsigned", "descriptors per ring, a power of two (default 2048)"},
                       {"BURST", "unsigned", "packets per pull (default 32)"}},
              .handlers = {{"count", "r", "frames handed to the kernel"},
                           {"tx_invalid", "r", "descriptors the kernel refused"},
                           {"mode", "r", "native or generic XDP, zero-copy or copy"}},
              .example = "... -> Queue(1024) -> ToXDPDevice(eth0);");

}  // namespace shoal
