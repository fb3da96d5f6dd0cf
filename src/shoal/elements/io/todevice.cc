// ToDevice: sends on a Linux interface through an AF_PACKET send ring
// (io/afpacket.hh), kicked once per batch.
#include <fmt/format.h>
#include <algorithm>

#include "shoal/elements/io/linkport.hh"
#include "shoal/io/afpacket.hh"

namespace shoal {

class ToDevice : public LinkSink {
 public:
  void configure(Args& a) override {
    a.read_mp("DEVNAME", dev_).read("BURST", burst_).read("FRAMES", frames_).read("QDISC_BYPASS", bypass_);
    a.complete();
    if (burst_ == 0) a.fail("BURST must be at least 1");
  }
  void initialize() override {
    tx_.open(fmt::format("ToDevice({})", dev_), dev_, frames_, bypass_);
    init_link_sink();
  }
  void cleanup() override { tx_.close(); }
  void push(int, PacketBatch* b) override { send(b); }
  bool run_task() override {
    if (tx_.free_slots(burst_) < std::min(burst_, tx_.slots())) {
      tx_.kick();
      return true;  // the ring drains; packets wait in the queue meanwhile
    }
    PacketBatch* b = pt_.pull();  // sleeps on the upstream notifier when empty
    if (!b) return false;
    send(b);
    return true;
  }
  void add_handlers() override { add_stat_handler("count", count_); }

 private:
  void send(PacketBatch* b) {
    bool any = false;
    b->for_each([&](uint32_t, Packet* p) {
      if (int r = link_refusal(p, tx_.mtu(), tx_.max_frame()); r >= 0) return drop(p, uint16_t(r));
      if (!tx_.put(p->data(), p->length())) return drop(p, r_full_);
      count_.add();
      any = true;
      sent(p);
    });
    recycle(b);
    if (any) tx_.kick();
  }

  std::string dev_;
  uint32_t frames_ = 1024;
  bool bypass_ = true;
  io::AfPacketTx tx_;
};
SHOAL_ELEMENT(ToDevice, .name = "ToDevice", .ports = "1/0", .processing = "a/",
              .summary = "sends packets on a Linux interface",
              .description =
                  "Sends Ethernet frames on interface DEVNAME through an AF_PACKET TPACKET_V3 send ring of "
                  "FRAMES slots, kicked once per batch, with PACKET_QDISC_BYPASS (unless QDISC_BYPASS false). "
                  "Pulling (after a Queue), it takes at most the free ring slots, so a busy link leaves packets "
                  "queued; pushed packets that find the ring full are dropped ('tx-ring-full'). Frames longer "
                  "than the interface MTU plus the Ethernet header: 'exceeds-mtu'; shorter than 14 bytes: "
                  "'too-short'. A missing interface or missing privileges are configuration errors.",
              .args = {{"DEVNAME", "string", "interface name"},
                       {"BURST", "unsigned", "packets per pull (default 32)"},
                       {"FRAMES", "unsigned", "send ring slots (default 1024)"},
                       {"QDISC_BYPASS", "boolean", "skip the kernel's qdisc layer (default true)"}},
              .handlers = {{"count", "r", "frames handed to the kernel"}},
              .example = "... -> Queue(1024) -> ToDevice(eth0);");

}  // namespace shoal
