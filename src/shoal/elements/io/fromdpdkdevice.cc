// FromDPDKDevice: reads a DPDK ethernet port (io/dpdk.hh), one receive
// queue per worker.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "shoal/elements/io/linkport.hh"
#include "shoal/io/dpdk.hh"

namespace shoal {

class FromDPDKDevice : public LinkSource {
 public:
  void configure(Args& a) override {
    a.read_mp("PORT", opt_.port).read("NDESC", opt_.rx_desc).read("NB_MBUF", opt_.mbufs);
    a.read("PROMISC", opt_.promisc);
    read_link_source_args(a);
    a.complete();
    if (opt_.rx_desc < 32 || opt_.rx_desc > 32768) a.fail("NDESC must be 32 to 32768");
  }
  void initialize() override {
    opt_.queues = uint32_t(worker().nworkers());
    port_ = io::DpdkPort::acquire(fmt::format("FromDPDKDevice({})", opt_.port), opt_);
    LinkSource::initialize();
  }
  void cleanup() override { port_.reset(); }
  uint32_t produce(PacketBatch* b, uint32_t max, bool&) override {
    uint64_t now = 0;
    uint32_t n = 0;
    port_->receive(uint16_t(worker().id()), max,
                   [&](const uint8_t* d, uint32_t len) { n += take_frame(b, d, len, now) != nullptr; });
    return n;
  }
  void add_handlers() override {
    SourceElement::add_handlers();
    auto stat = [this](uint64_t io::DpdkStats::*f) {
      return [this, f] { return std::to_string(port_ ? port_->stats().*f : 0); };
    };
    // The port's counters are the port's, not a worker's: worker 0 answers.
    add_read_handler("hw_count", stat(&io::DpdkStats::ipackets), Agg::First, true);
    add_read_handler("hw_dropped", stat(&io::DpdkStats::imissed), Agg::First, true);
    add_read_handler("hw_errors", stat(&io::DpdkStats::ierrors), Agg::First, true);
    add_read_handler("nombufs", stat(&io::DpdkStats::rx_nombuf), Agg::First, true);
    add_read_handler("device", [this] { return port_ ? fmt::format("{} {}", port_->id(), port_->driver()) : ""; });
  }

 private:
  io::DpdkOptions opt_;
  std::shared_ptr<io::DpdkPort> port_;
};
SHOAL_ELEMENT(
    FromDPDKDevice, .name = "FromDPDKDevice", .ports = "0/1", .processing = "a/a",
    .summary = "reads packets from a DPDK port",
    .description =
        "Receives from DPDK ethernet port PORT: a port number, a PCI address of a NIC bound to vfio-pci, or a "
        "virtual device's arguments (net_pcap0,rx_pcap=in.pcap; net_tap0,iface=t0; "
        "net_af_xdp0,iface=eth0), probed on first use. The port is set up once with a receive and a send "
        "queue per worker (RSS with a symmetric key over the receive queues when there are several, so both directions "
        "of a connection reach one worker) and an mbuf pool of NB_MBUF "
        "(at least what the descriptors hold); worker w polls queue w, copies each frame into a packet "
        "(gathering segmented mbufs) and frees the mbufs in bulk. DPDK's EAL starts at the first port with "
        "the arguments of shoal run --dpdk \"ARGS\" (or SHOAL_DPDK_ARGS); by default --in-memory, and "
        "--no-huge where no huge pages are free. A ToDPDKDevice on the same PORT shares the port. "
        "hw_dropped reads the frames the port missed (no descriptor), nombufs the mbuf allocation failures. "
        "A port that cannot be probed or has too few queues is a configuration error.",
    .args = {{"PORT", "string", "port number, PCI address or vdev arguments"},
             {"NDESC", "unsigned", "receive descriptors per queue (default 1024)"},
             {"NB_MBUF", "unsigned", "mbufs in the port's pool (default 8191, or what the rings need)"},
             {"PROMISC", "boolean", "promiscuous mode (default true)"},
             {"SNAPLEN", "unsigned", "bytes kept per frame (default 65535)"},
             {"BURST", "unsigned", "packets per task run (default 32)"},
             {"LIMIT", "integer", "stop after this many packets, each worker its own (-1: none)"},
             {"ACTIVE", "boolean", "start reading (default true)"},
             {"STOP", "boolean", "stop the router after LIMIT packets"},
             {"END_CALL", "handler call", "call a write handler ('elem.handler VALUE') when done"}},
    .handlers = {{"count", "r", "packets read"},
                 {"hw_count", "r", "frames the port received"},
                 {"hw_dropped", "r", "frames the port missed"},
                 {"hw_errors", "r", "erroneous frames"},
                 {"nombufs", "r", "mbuf allocation failures"},
                 {"device", "r", "port id and driver"},
                 {"active", "rw", "reading or not"}},
    .example =
        "FromDPDKDevice(0) -> Classifier(12/0800, -) ...;\n"
        "FromDPDKDevice(\"net_pcap0,rx_pcap=in.pcap\", LIMIT 1000, STOP true) -> ...;");

}  // namespace shoal
