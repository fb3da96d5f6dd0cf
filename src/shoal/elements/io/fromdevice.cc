// FromDevice: reads a Linux interface through an AF_PACKET receive ring
// (io/afpacket.hh); finishes offloaded checksums and cuts GSO/GRO
// super-packets to the link's MTU, as a NIC would have.
#include <fmt/format.h>
#include <linux/if_packet.h>
#include <algorithm>
#include <cstring>
#include <deque>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"
#include "shoal/io/afpacket.hh"
#include "shoal/io/offload.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

class FromDevice : public SourceElement {
 public:
  void configure(Args& a) override {
    a.read_mp("DEVNAME", opt_.dev).read("PROMISC", opt_.promisc).read("SNAPLEN", snaplen_);
    a.read("BLOCKS", opt_.blocks).read("BLOCK_SIZE", opt_.block_size).read("FANOUT", fanout_);
    Duration tov{1000000};
    a.read("OUTBOUND", opt_.outbound).read("LOW_LATENCY", opt_.per_frame).read("BLOCK_TIMEOUT", tov);
    read_source_args(a, 32);
    opt_.block_timeout_ms = uint32_t((tov.ns + 999999) / 1000000);
    if (opt_.block_timeout_ms < 1 || opt_.block_timeout_ms > 60000) a.fail("BLOCK_TIMEOUT must be 1ms to 60s");
    a.complete();
    if (opt_.block_size < 4096 || (opt_.block_size & (opt_.block_size - 1)))
      a.fail("BLOCK_SIZE must be a power of two >= 4096");
    if (opt_.blocks < 2) a.fail("BLOCKS must be at least 2");
  }
  void initialize() override {
    opt_.fanout = fanout_ && worker().nworkers() > 1;
    r_big_ = add_drop_reason("too-large");
    // A hot swap's FromDevice of the same name and settings takes the old
    // one's socket, with the frames in its ring, in hot_swapped(): a second
    // socket would share the traffic meanwhile, and what the old one held
    // would be lost when it closed.
    if (Runtime* old = worker().runtime().replacing(); old && worker().id() < old->nworkers())
      if (auto* o = dynamic_cast<FromDevice*>(old->router(worker().id()).find(name())); o && same_settings(*o)) {
        SourceElement::initialize();
        return;
      }
    if (worker().id() == 0) {
      // Another reader of every frame: two forwarders would each send every packet.
      auto others = io::other_packet_readers(opt_.dev);
      if (!others.empty())
        fmt::print(stderr,
                   "shoal: warning: {}: {} other raw packet socket{} already read{} every frame of {} ({}); if "
                   "one is another forwarder (a second Shoal), each packet will be forwarded twice\n",
                   name(), others.size(), others.size() > 1 ? "s" : "", others.size() > 1 ? "" : "s", opt_.dev,
                   fmt::join(others, ", "));
    }
    rx_.open(fmt::format("FromDevice({})", opt_.dev), opt_);
    SourceElement::initialize();
  }
  void hot_swapped(Element* old) override {
    auto* o = dynamic_cast<FromDevice*>(old);
    if (rx_.is_open() || !o || !same_settings(*o)) return;
    rx_.take(o->rx_);
    for (Packet* p : o->spill_) {  // segments of a super-packet not yet delivered
      if (Packet* q = worker().pool().clone(p)) spill_.push_back(q);
      o->worker().pool().free(p);
    }
    o->spill_.clear();
  }
  void cleanup() override {
    for (Packet* p : spill_) worker().pool().free(p);  // never delivered, so never counted
    spill_.clear();
    rx_.close();
  }
  uint32_t produce(PacketBatch* b, uint32_t max, bool&) override {
    uint32_t n = 0;
    while (n < max && !spill_.empty()) {  // segments of a cut super-packet come first
      b->append(spill_.front());
      spill_.pop_front();
      ++n;
    }
    io::RxFrame f;
    while (n < max && spill_.empty() && rx_.next(f)) {
      n += take(f, b, max - n);
      rx_.consumed();
    }
    return n;
  }
  void add_handlers() override {
    SourceElement::add_handlers();
    add_stat_handler("checksums_finished", csum_fixed_);
    add_stat_handler("segmented", segmented_);
    add_read_handler(
        "kernel_drops", [this] { return std::to_string(rx_.kernel_drops()); }, Agg::Sum, true);
  }

 private:
  // Copies one ring frame into the batch (several packets when a TCP
  // super-packet is cut to the MTU); the number of packets appended.
  uint32_t take(const io::RxFrame& f, PacketBatch* b, uint32_t room) {
    if (f.pkttype == PACKET_OUTGOING && !opt_.outbound) return 0;
    const uint8_t* d = f.data;
    uint32_t len = std::min(f.len, snaplen_);
    bool vlan = f.vlan && len >= 12;
    uint32_t total = len + (vlan ? 4 : 0);
    Packet* p = total <= PacketPool::kMaxFrame ? worker().pool().alloc(total) : nullptr;
    if (!p) return refuse();
    uint8_t* o = p->data();
    if (vlan) {  // the kernel took the tag off: put it back
      std::memcpy(o, d, 12);
      k::store_be16(o + 12, f.vlan_tpid);
      k::store_be16(o + 14, f.vlan_tci);
      std::memcpy(o + 16, d + 12, len - 12);
    } else {
      std::memcpy(o, d, len);
    }
    // The sender offloaded its checksum to a NIC that is not there (veth,
    // loopback, local traffic): finish it, or the receiver drops the packet.
    if (f.csum_not_ready) {
      io::finish_l4_checksum(o, total);
      csum_fixed_.add();
    }
    auto stamp = [&](Packet* q) {
      q->set_timestamp_ns(f.timestamp_ns);
      q->anno().packet_type = f.pkttype;
      q->set_mac_header(0);
    };
    // A GSO/GRO super-packet bigger than the link: cut it as the NIC would have.
    uint32_t l2 = vlan ? 18 : 14;
    if (total > rx_.mtu() + l2 || f.gso_size) {
      uint32_t n = 0;
      uint32_t cut = io::segment_tcp(o, total, rx_.mtu(), f.gso_size, [&](const uint8_t* seg, uint32_t sl) {
        Packet* q = worker().pool().alloc(sl);
        if (!q) return refuse(), false;
        std::memcpy(q->data(), seg, sl);
        stamp(q);
        if (n < room) {
          b->append(q);
          ++n;
        } else {
          spill_.push_back(q);  // delivered by the next produce()
        }
        return true;
      });
      if (cut) {
        worker().pool().free(p);
        segmented_.add();
        return n;
      }
    }
    stamp(p);
    p->anno().flow_hash = f.rxhash;
    b->append(p);
    return 1;
  }
  // A frame the pool or the size refused: counted as received and dropped.
  uint32_t refuse() {
    received();
    emitted_.add();
    count_dropped(r_big_);
    return 0;
  }

  bool same_settings(const FromDevice& o) const {
    return o.opt_.dev == opt_.dev && o.opt_.promisc == opt_.promisc && o.opt_.outbound == opt_.outbound &&
           o.opt_.fanout == opt_.fanout && o.opt_.blocks == opt_.blocks && o.opt_.block_size == opt_.block_size &&
           o.opt_.per_frame == opt_.per_frame && o.opt_.block_timeout_ms == opt_.block_timeout_ms &&
           o.snaplen_ == snaplen_;
  }
  io::RxOptions opt_;
  bool fanout_ = true;
  uint32_t snaplen_ = 65535;
  io::AfPacketRx rx_;
  std::deque<Packet*> spill_;
  uint16_t r_big_ = 0;
  Stat csum_fixed_, segmented_;
};
SHOAL_ELEMENT(FromDevice, .name = "FromDevice", .ports = "0/1", .processing = "a/a",
              .summary = "reads packets from a Linux interface",
              .description =
                  "Receives every frame of interface DEVNAME through an AF_PACKET memory-mapped ring of BLOCKS x "
                  "BLOCK_SIZE bytes, in promiscuous mode unless PROMISC false. LOW_LATENCY true (default): a "
                  "TPACKET_V2 ring that hands over each frame as soon as the kernel wrote it (64 KiB slots, so "
                  "GRO super-packets fit; at least 256); false: a TPACKET_V3 ring that hands over whole blocks, "
                  "when full or after BLOCK_TIMEOUT (default 1ms, the latency floor at low rates). A warning "
                  "names other raw packet sockets already reading the interface (a second forwarder would "
                  "duplicate every packet). Frames the host itself sends are skipped unless "
                  "OUTBOUND true. Stripped VLAN tags are put back. Each packet gets its timestamp, the packet "
                  "type annotation (host, broadcast, multicast, other host) and the kernel's flow hash. With "
                  "several workers, each has its own socket in one PACKET_FANOUT_HASH group. A missing interface "
                  "or missing privileges (CAP_NET_RAW) are configuration errors. The kernel_drops handler reads "
                  "the ring's losses. A reload or hot swap's FromDevice of the same name and settings takes over "
                  "the socket, with the frames waiting in its ring.",
              .args = {{"DEVNAME", "string", "interface name"},
                       {"PROMISC", "boolean", "promiscuous mode (default true)"},
                       {"SNAPLEN", "unsigned", "bytes kept per frame (default 65535)"},
                       {"BLOCKS", "unsigned", "ring blocks (default 64)"},
                       {"BLOCK_SIZE", "unsigned", "bytes per block, a power of two (default 262144)"},
                       {"FANOUT", "boolean", "spread flows over workers with PACKET_FANOUT (default true)"},
                       {"OUTBOUND", "boolean", "also deliver frames the host sends (default false)"},
                       {"LOW_LATENCY", "boolean", "per-frame TPACKET_V2 ring (default true); false: V3 blocks"},
                       {"BLOCK_TIMEOUT", "time", "V3: longest wait of a partly filled block (default 1ms)"},
                       {"BURST", "unsigned", "packets per task run (default 32)"},
                       {"LIMIT", "integer", "stop after this many packets (-1: none)"},
                       {"ACTIVE", "boolean", "start reading (default true)"},
                       {"STOP", "boolean", "stop the router after LIMIT packets"},
                       {"END_CALL", "handler call", "call a write handler ('elem.handler VALUE') when done"}},
              .handlers = {{"count", "r", "packets read"},
                           {"kernel_drops", "r", "frames the ring lost"},
                           {"active", "rw", "reading or not"}},
              .example = "FromDevice(eth0) -> c :: Classifier(12/0806, 12/0800, -);");

}  // namespace shoal
