// ToDPDKDevice: sends on a DPDK ethernet port (io/dpdk.hh), one send queue
// per worker.
#include <fmt/format.h>

#include <algorithm>

#include "shoal/elements/io/linkport.hh"
#include "shoal/io/dpdk.hh"

namespace shoal {

class ToDPDKDevice : public LinkSink {
 public:
  void configure(Args& a) override {
    a.read_mp("PORT", opt_.port).read("NDESC", opt_.tx_desc).read("NB_MBUF", opt_.mbufs).read("BURST", burst_);
    a.complete();
    if (burst_ == 0) a.fail("BURST must be at least 1");
    if (opt_.tx_desc < 32 || opt_.tx_desc > 32768) a.fail("NDESC must be 32 to 32768");
  }
  void initialize() override {
    opt_.queues = uint32_t(worker().nworkers());
    port_ = io::DpdkPort::acquire(fmt::format("ToDPDKDevice({})", opt_.port), opt_);
    init_link_sink();
  }
  void cleanup() override { port_.reset(); }
  void push(int, PacketBatch* b) override { send(b); }
  bool run_task() override {
    PacketBatch* b = pt_.pull();
    if (!b) return false;
    send(b);
    return true;
  }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_read_handler(
        "hw_count", [this] { return std::to_string(port_ ? port_->stats().opackets : 0); }, Agg::First, true);
    add_read_handler(
        "hw_errors", [this] { return std::to_string(port_ ? port_->stats().oerrors : 0); }, Agg::First, true);
  }

 private:
  void send(PacketBatch* b) {
    // The sendable frames in order, handed over in one burst; what the
    // driver did not take is dropped ('tx-ring-full').
    std::vector<Packet*>& ok = ok_;
    ok.clear();
    data_.clear();
    len_.clear();
    b->for_each([&](uint32_t, Packet* p) {
      if (int r = link_refusal(p, port_->mtu()); r >= 0) return drop(p, uint16_t(r));
      ok.push_back(p);
      data_.push_back(p->data());
      len_.push_back(p->length());
    });
    uint32_t took =
        ok.empty() ? 0 : port_->send(uint16_t(worker().id()), data_.data(), len_.data(), uint32_t(ok.size()));
    for (uint32_t i = 0; i < ok.size(); ++i) {
      if (i < took) {
        count_.add();
        sent(ok[i]);
      } else {
        drop(ok[i], r_full_);
      }
    }
    // Every packet left through sent() or drop(): the batch is empty.
    recycle(b);
  }

  io::DpdkOptions opt_;
  std::shared_ptr<io::DpdkPort> port_;
  std::vector<Packet*> ok_;
  std::vector<const uint8_t*> data_;
  std::vector<uint32_t> len_;
};
SHOAL_ELEMENT(ToDPDKDevice, .name = "ToDPDKDevice", .ports = "1/0", .processing = "a/",
              .summary = "sends packets on a DPDK port",
              .description =
                  "Sends Ethernet frames on DPDK port PORT (as FromDPDKDevice names it; the two share the "
                  "port): worker w sends on queue w, each batch copied into mbufs and handed over in one "
                  "burst. Frames the driver does not take (no descriptor or mbuf) are dropped "
                  "('tx-ring-full'); longer than the MTU plus the Ethernet header: 'exceeds-mtu'; shorter than "
                  "14 bytes: 'too-short'.",
              .args = {{"PORT", "string", "port number, PCI address or vdev arguments"},
                       {"NDESC", "unsigned", "send descriptors per queue (default 1024)"},
                       {"NB_MBUF", "unsigned", "mbufs in the port's pool, when this element opens it"},
                       {"BURST", "unsigned", "packets per pull (default 32)"}},
              .handlers = {{"count", "r", "frames handed to the driver"},
                           {"hw_count", "r", "frames the port sent"},
                           {"hw_errors", "r", "frames the port failed to send"}},
              .example = "... -> Queue(1024) -> ToDPDKDevice(0);");

}  // namespace shoal
