// FromDevice and ToDevice: Linux interfaces through AF_PACKET memory-mapped
// rings (TPACKET_V3). Receive walks whole ring blocks (batched, no system
// call per packet); with several workers each copy has its own socket in one
// PACKET_FANOUT_HASH group, so the kernel spreads flows over workers. Send
// fills a TX ring and kicks it once per batch, bypassing the qdisc layer.
#include <arpa/inet.h>
#include <endian.h>
#include <fmt/format.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <deque>

#include "shoal/elements/common.hh"
#include "shoal/io/offload.hh"
#include "shoal/kernels/bytes.hh"

namespace shoal {

namespace {

[[noreturn]] void sys_fail(const std::string& who, const std::string& what, int err) {
  if (err == EPERM || err == EACCES)
    throw std::runtime_error(fmt::format("{}: {}: {} (needs CAP_NET_RAW: run as root)", who, what, std::strerror(err)));
  throw std::runtime_error(fmt::format("{}: {}: {}", who, what, std::strerror(err)));
}

int open_packet_socket(const std::string& who, const std::string& dev, int proto, int& ifindex) {
  ifindex = int(if_nametoindex(dev.c_str()));
  if (ifindex == 0) throw std::runtime_error(fmt::format("{}: no interface named '{}'", who, dev));
  int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, proto);
  if (fd < 0) sys_fail(who, "cannot open a packet socket", errno);
  int v = TPACKET_V3;
  if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &v, sizeof v) < 0) {
    int e = errno;
    close(fd);
    sys_fail(who, "PACKET_VERSION TPACKET_V3", e);
  }
  return fd;
}

uint32_t interface_mtu(int fd, const std::string& dev) {
  ifreq ifr{};
  std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", dev.c_str());
  if (ioctl(fd, SIOCGIFMTU, &ifr) < 0) return 1500;
  return uint32_t(ifr.ifr_mtu);
}

// linux/virtio_net.h's struct virtio_net_hdr (that header does not compile
// as C++): what PACKET_VNET_HDR puts before each frame, little-endian.
struct VnetHdr {
  uint8_t flags, gso_type;  // gso_type 0: not a GSO packet
  uint16_t hdr_len, gso_size, csum_start, csum_offset;
};
static_assert(sizeof(VnetHdr) == 10);

uint32_t round_pow2(uint32_t x) {
  uint32_t p = 1;
  while (p < x) p <<= 1;
  return p;
}

}  // namespace

// ---------------------------------------------------------------- FromDevice
class FromDevice : public SourceElement {
 public:
  void configure(Args& a) override {
    a.read_mp("DEVNAME", dev_).read("PROMISC", promisc_).read("SNAPLEN", snaplen_);
    a.read("BLOCKS", blocks_).read("BLOCK_SIZE", block_size_).read("FANOUT", fanout_).read("OUTBOUND", outbound_);
    read_source_args(a, 32);
    a.complete();
    if (block_size_ < 4096 || (block_size_ & (block_size_ - 1))) a.fail("BLOCK_SIZE must be a power of two >= 4096");
    if (blocks_ < 2) a.fail("BLOCKS must be at least 2");
  }
  void initialize() override {
    std::string who = fmt::format("FromDevice({})", dev_);
    int ifindex;
    fd_ = open_packet_socket(who, dev_, htons(ETH_P_ALL), ifindex);
    // The kernel's GSO segment size and checksum state come in a virtio-net
    // header before each frame (must be asked for before the ring exists).
    int on = 1;
    vnet_ = setsockopt(fd_, SOL_PACKET, PACKET_VNET_HDR, &on, sizeof on) == 0;
    tpacket_req3 req{};
    req.tp_block_size = block_size_;
    req.tp_block_nr = blocks_;
    req.tp_frame_size = 2048;
    req.tp_frame_nr = block_size_ / 2048 * blocks_;
    req.tp_retire_blk_tov = 1;  // ms: a partly filled block reaches us within 1 ms
    req.tp_feature_req_word = TP_FT_REQ_FILL_RXHASH;
    if (setsockopt(fd_, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) < 0) {
      // Kernels without virtio-net headers on rings: go on without GSO sizes.
      int off = 0;
      if (!vnet_ || setsockopt(fd_, SOL_PACKET, PACKET_VNET_HDR, &off, sizeof off) < 0 ||
          setsockopt(fd_, SOL_PACKET, PACKET_RX_RING, &req, sizeof req) < 0)
        sys_fail(who, "PACKET_RX_RING", errno);
      vnet_ = false;
    }
    ring_len_ = size_t(block_size_) * blocks_;
    void* m = mmap(nullptr, ring_len_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, 0);
    if (m == MAP_FAILED) sys_fail(who, "mmap of the receive ring", errno);
    ring_ = static_cast<uint8_t*>(m);
    int one = 1;
    if (!outbound_) setsockopt(fd_, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);  // Linux 4.20+
    sockaddr_ll sll{};
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = htons(ETH_P_ALL);
    sll.sll_ifindex = ifindex;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&sll), sizeof sll) < 0) sys_fail(who, "bind", errno);
    if (promisc_) {
      packet_mreq mr{};
      mr.mr_ifindex = ifindex;
      mr.mr_type = PACKET_MR_PROMISC;
      if (setsockopt(fd_, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) < 0)
        sys_fail(who, "promiscuous mode", errno);
    }
    if (worker().nworkers() > 1 && fanout_) {
      // One group per (interface, process); the kernel hashes flows over the workers' sockets.
      int arg = int((uint32_t(ifindex) * 2654435761u ^ uint32_t(getpid())) & 0xffff) | (PACKET_FANOUT_HASH << 16);
      if (setsockopt(fd_, SOL_PACKET, PACKET_FANOUT, &arg, sizeof arg) < 0) sys_fail(who, "PACKET_FANOUT", errno);
    }
    mtu_ = interface_mtu(fd_, dev_);
    r_big_ = add_drop_reason("too-large");
    SourceElement::initialize();
  }
  void cleanup() override {
    for (Packet* p : spill_) worker().pool().free(p);  // never delivered, so never counted
    spill_.clear();
    if (ring_) munmap(ring_, ring_len_);
    if (fd_ >= 0) close(fd_);
    ring_ = nullptr;
    fd_ = -1;
  }
  uint32_t produce(PacketBatch* b, uint32_t max, bool&) override {
    uint32_t n = 0;
    while (n < max && !spill_.empty()) {  // segments of a cut super-packet come first
      b->append(spill_.front());
      spill_.pop_front();
      ++n;
    }
    while (n < max && spill_.empty()) {
      auto* bd = reinterpret_cast<tpacket_block_desc*>(ring_ + size_t(block_) * block_size_);
      if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) break;
      if (!pkt_) {
        pkt_ = reinterpret_cast<uint8_t*>(bd) + bd->hdr.bh1.offset_to_first_pkt;
        left_ = bd->hdr.bh1.num_pkts;
      }
      while (left_ && n < max && spill_.empty()) {
        auto* h = reinterpret_cast<tpacket3_hdr*>(pkt_);
        n += take(h, b, max - n);
        pkt_ += h->tp_next_offset;
        --left_;
      }
      if (left_ == 0) {  // block done: back to the kernel
        pkt_ = nullptr;
        __atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
        block_ = (block_ + 1) % blocks_;
      }
    }
    return n;
  }
  void add_handlers() override {
    SourceElement::add_handlers();
    add_stat_handler("checksums_finished", csum_fixed_);
    add_stat_handler("segmented", segmented_);
    add_read_handler(
        "kernel_drops",
        [this] {
          tpacket_stats_v3 st{};
          socklen_t l = sizeof st;
          if (fd_ >= 0 && getsockopt(fd_, SOL_PACKET, PACKET_STATISTICS, &st, &l) == 0) kdrops_ += st.tp_drops;
          return std::to_string(kdrops_);
        },
        Agg::Sum, true);
  }

 private:
  // Copies one ring frame into the batch (several packets when a TCP
  // super-packet is cut to the MTU); the number of packets appended.
  uint32_t take(tpacket3_hdr* h, PacketBatch* b, uint32_t room) {
    auto* sll = reinterpret_cast<sockaddr_ll*>(reinterpret_cast<uint8_t*>(h) + TPACKET_ALIGN(sizeof(tpacket3_hdr)));
    if (sll->sll_pkttype == PACKET_OUTGOING && !outbound_) return 0;
    const uint8_t* d = reinterpret_cast<uint8_t*>(h) + h->tp_mac;
    uint32_t len = std::min(h->tp_snaplen, snaplen_);
    bool vlan = (h->tp_status & TP_STATUS_VLAN_VALID) && len >= 12;
    uint32_t total = len + (vlan ? 4 : 0);
    Packet* p = total <= PacketPool::kMaxFrame ? worker().pool().alloc(total) : nullptr;
    if (!p) return refuse();
    uint8_t* o = p->data();
    if (vlan) {  // the kernel took the tag off: put it back
      std::memcpy(o, d, 12);
      uint16_t tpid = (h->tp_status & TP_STATUS_VLAN_TPID_VALID) ? h->hv1.tp_vlan_tpid : 0x8100;
      k::store_be16(o + 12, tpid);
      k::store_be16(o + 14, uint16_t(h->hv1.tp_vlan_tci));
      std::memcpy(o + 16, d + 12, len - 12);
    } else {
      std::memcpy(o, d, len);
    }
    // The sender offloaded its checksum to a NIC that is not there (veth,
    // loopback, local traffic): finish it, or the receiver drops the packet.
    if (h->tp_status & TP_STATUS_CSUMNOTREADY) {
      io::finish_l4_checksum(o, total);
      csum_fixed_.add();
    }
    auto stamp = [&](Packet* q) {
      q->set_timestamp_ns(uint64_t(h->tp_sec) * 1000000000ull + h->tp_nsec);
      q->anno().packet_type = sll->sll_pkttype;
      q->set_mac_header(0);
    };
    // A GSO/GRO super-packet bigger than the link: cut it as the NIC would have.
    uint32_t l2 = vlan ? 18 : 14;
    uint32_t gso = 0;
    if (vnet_) {
      VnetHdr vh;
      std::memcpy(&vh, d - sizeof vh, sizeof vh);
      if (vh.gso_type != 0) gso = le16toh(vh.gso_size);
    }
    if (total > mtu_ + l2 || gso) {
      uint32_t n = 0;
      uint32_t cut = io::segment_tcp(o, total, mtu_, gso, [&](const uint8_t* seg, uint32_t sl) {
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
    p->anno().flow_hash = h->hv1.tp_rxhash;
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

  std::string dev_;
  bool promisc_ = true, fanout_ = true, outbound_ = false;
  uint32_t snaplen_ = 65535, blocks_ = 64, block_size_ = 1u << 18;
  int fd_ = -1;
  uint8_t* ring_ = nullptr;
  size_t ring_len_ = 0;
  uint32_t block_ = 0, left_ = 0;
  uint8_t* pkt_ = nullptr;
  uint64_t kdrops_ = 0;
  uint32_t mtu_ = 1500;
  bool vnet_ = false;
  std::deque<Packet*> spill_;
  uint16_t r_big_ = 0;
  Stat csum_fixed_, segmented_;
};
SHOAL_ELEMENT(FromDevice, .name = "FromDevice", .ports = "0/1", .processing = "a/a",
              .summary = "reads packets from a Linux interface",
              .description =
                  "Receives every frame of interface DEVNAME through an AF_PACKET TPACKET_V3 memory-mapped ring "
                  "(BLOCKS blocks of BLOCK_SIZE bytes, a block handed over when full or after 1 ms), in "
                  "promiscuous mode unless PROMISC false. Frames the host itself sends are skipped unless "
                  "OUTBOUND true. Stripped VLAN tags are put back. Each packet gets its timestamp, the packet "
                  "type annotation (host, broadcast, multicast, other host) and the kernel's flow hash. With "
                  "several workers, each has its own socket in one PACKET_FANOUT_HASH group. A missing interface "
                  "or missing privileges (CAP_NET_RAW) are configuration errors. The kernel_drops handler reads "
                  "the ring's losses.",
              .args = {{"DEVNAME", "string", "interface name"},
                       {"PROMISC", "boolean", "promiscuous mode (default true)"},
                       {"SNAPLEN", "unsigned", "bytes kept per frame (default 65535)"},
                       {"BLOCKS", "unsigned", "ring blocks (default 64)"},
                       {"BLOCK_SIZE", "unsigned", "bytes per block, a power of two (default 262144)"},
                       {"FANOUT", "boolean", "spread flows over workers with PACKET_FANOUT (default true)"},
                       {"OUTBOUND", "boolean", "also deliver frames the host sends (default false)"},
                       {"BURST", "unsigned", "packets per task run (default 32)"},
                       {"LIMIT", "integer", "stop after this many packets (-1: none)"},
                       {"ACTIVE", "boolean", "start reading (default true)"},
                       {"STOP", "boolean", "stop the router after LIMIT packets"}},
              .handlers = {{"count", "r", "packets read"},
                           {"kernel_drops", "r", "frames the ring lost"},
                           {"active", "rw", "reading or not"}},
              .example = "FromDevice(eth0) -> c :: Classifier(12/0806, 12/0800, -);");

// ---------------------------------------------------------------- ToDevice
class ToDevice : public Element {
 public:
  void configure(Args& a) override {
    a.read_mp("DEVNAME", dev_).read("BURST", burst_).read("FRAMES", frames_).read("QDISC_BYPASS", bypass_);
    a.complete();
    if (burst_ == 0) a.fail("BURST must be at least 1");
  }
  void initialize() override {
    std::string who = fmt::format("ToDevice({})", dev_);
    int ifindex;
    fd_ = open_packet_socket(who, dev_, 0, ifindex);
    mtu_ = interface_mtu(fd_, dev_);
    int one = 1;
    if (bypass_ && setsockopt(fd_, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) < 0)
      sys_fail(who, "PACKET_QDISC_BYPASS", errno);
    frame_size_ = std::max<uint32_t>(2048, round_pow2(mtu_ + 18 + kDataOff));
    uint32_t block = std::max<uint32_t>(frame_size_, 1u << 16);
    tpacket_req3 req{};
    req.tp_block_size = block;
    req.tp_frame_size = frame_size_;
    req.tp_block_nr = std::max<uint32_t>(1, (frames_ * frame_size_ + block - 1) / block);
    req.tp_frame_nr = req.tp_block_nr * (block / frame_size_);
    nframes_ = req.tp_frame_nr;
    if (setsockopt(fd_, SOL_PACKET, PACKET_TX_RING, &req, sizeof req) < 0) sys_fail(who, "PACKET_TX_RING", errno);
    ring_len_ = size_t(req.tp_block_nr) * block;
    void* m = mmap(nullptr, ring_len_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, 0);
    if (m == MAP_FAILED) sys_fail(who, "mmap of the send ring", errno);
    ring_ = static_cast<uint8_t*>(m);
    sockaddr_ll sll{};
    sll.sll_family = AF_PACKET;
    sll.sll_protocol = 0;  // send only
    sll.sll_ifindex = ifindex;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&sll), sizeof sll) < 0) sys_fail(who, "bind", errno);
    r_full_ = add_drop_reason("tx-ring-full");
    r_mtu_ = add_drop_reason("exceeds-mtu");
    r_short_ = add_drop_reason("too-short");
    if (input_proc(0) == Proc::Pull) {
      pt_.init(this, burst_);
      add_task();
    }
  }
  void cleanup() override {
    if (ring_) {
      // Let the kernel finish what is queued (briefly), then unmap.
      for (int i = 0; i < 100 && in_flight(); ++i) usleep(1000);
      munmap(ring_, ring_len_);
    }
    if (fd_ >= 0) close(fd_);
    ring_ = nullptr;
    fd_ = -1;
  }
  void push(int, PacketBatch* b) override { send(b); }
  bool run_task() override {
    if (free_frames(burst_) < std::min(burst_, nframes_)) {
      kick();
      return true;  // the ring drains; packets wait in the queue meanwhile
    }
    PacketBatch* b = pt_.pull();  // sleeps on the upstream notifier when empty
    if (!b) return false;
    send(b);
    return true;
  }
  void add_handlers() override { add_stat_handler("count", count_); }

 private:
  static constexpr uint32_t kDataOff = TPACKET_ALIGN(sizeof(tpacket3_hdr));
  tpacket3_hdr* frame(uint32_t i) { return reinterpret_cast<tpacket3_hdr*>(ring_ + size_t(i) * frame_size_); }
  uint32_t status(uint32_t i) { return __atomic_load_n(&frame(i)->tp_status, __ATOMIC_ACQUIRE); }
  uint32_t free_frames(uint32_t want) {
    uint32_t n = 0;
    for (uint32_t i = next_;
         n < want && n < nframes_ && (status(i) & (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING)) == 0;
         i = (i + 1) % nframes_)
      ++n;
    return n;
  }
  bool in_flight() {
    for (uint32_t i = 0; i < nframes_; ++i)
      if (status(i) & (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING)) return true;
    return false;
  }
  void kick() { ::send(fd_, nullptr, 0, MSG_DONTWAIT); }
  void send(PacketBatch* b) {
    bool any = false;
    b->for_each([&](uint32_t, Packet* p) {
      uint32_t len = p->length();
      if (len < 14) return drop(p, r_short_);
      uint32_t limit = mtu_ + 14 + (len >= 16 && k::load_be16(p->data() + 12) == 0x8100 ? 4 : 0);
      if (len > limit || kDataOff + len > frame_size_) return drop(p, r_mtu_);
      tpacket3_hdr* h = frame(next_);
      if (status(next_) & (TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING)) return drop(p, r_full_);
      std::memcpy(reinterpret_cast<uint8_t*>(h) + kDataOff, p->data(), len);
      h->tp_len = len;
      h->tp_snaplen = len;
      h->tp_next_offset = 0;
      __atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
      next_ = (next_ + 1) % nframes_;
      count_.add();
      any = true;
      sent(p);
    });
    recycle(b);
    if (any) kick();
  }

  std::string dev_;
  uint32_t burst_ = 32, frames_ = 1024, mtu_ = 1500, frame_size_ = 2048, nframes_ = 0, next_ = 0;
  bool bypass_ = true;
  int fd_ = -1;
  uint8_t* ring_ = nullptr;
  size_t ring_len_ = 0;
  PullTask pt_;
  uint16_t r_full_ = 0, r_mtu_ = 0, r_short_ = 0;
  Stat count_;
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
