#include "shoal/io/afpacket.hh"

#include <arpa/inet.h>
#include <endian.h>
#include <fmt/format.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace shoal::io {

namespace {

[[noreturn]] void sys_fail(const std::string& who, const std::string& what, int err) {
  if (err == EPERM || err == EACCES)
    throw std::runtime_error(fmt::format("{}: {}: {} (needs CAP_NET_RAW: run as root)", who, what, std::strerror(err)));
  throw std::runtime_error(fmt::format("{}: {}: {}", who, what, std::strerror(err)));
}

int open_packet_socket(const std::string& who, const std::string& dev, int proto, int& ifindex,
                       int version = TPACKET_V3) {
  ifindex = int(if_nametoindex(dev.c_str()));
  if (ifindex == 0) throw std::runtime_error(fmt::format("{}: no interface named '{}'", who, dev));
  int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, proto);
  if (fd < 0) sys_fail(who, "cannot open a packet socket", errno);
  if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof version) < 0) {
    int e = errno;
    ::close(fd);
    sys_fail(who, fmt::format("PACKET_VERSION TPACKET_V{}", version + 1), e);
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

constexpr uint32_t kTxDataOff = TPACKET_ALIGN(sizeof(tpacket3_hdr));

}  // namespace

std::vector<std::string> other_packet_readers(const std::string& dev) {
  std::vector<std::string> out;
  unsigned ifindex = if_nametoindex(dev.c_str());
  std::ifstream f("/proc/net/packet");
  if (!ifindex || !f) return out;
  // This process's sockets (other workers' rings on the same interface).
  std::set<unsigned long> mine;
  std::error_code ec;
  for (auto& e : std::filesystem::directory_iterator("/proc/self/fd", ec)) {
    std::string link = std::filesystem::read_symlink(e.path(), ec).string();
    if (link.rfind("socket:[", 0) == 0) mine.insert(std::strtoul(link.c_str() + 8, nullptr, 10));
  }
  std::string line;
  std::getline(f, line);  // the header
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string sk, proto;
    unsigned refcnt, type, iface, running, rmem, user;
    unsigned long inode;
    if (!(in >> sk >> refcnt >> type >> proto >> iface >> running >> rmem >> user >> inode)) continue;
    if (type == SOCK_RAW && proto == "0003" && (iface == ifindex || iface == 0) && !mine.count(inode))
      out.push_back(fmt::format("inode {} (uid {})", inode, user));
  }
  return out;
}

// ---------------------------------------------------------------- receive
void AfPacketRx::open(const std::string& who, const RxOptions& o) {
  int ifindex;
  v2_ = o.per_frame;
  fd_ = open_packet_socket(who, o.dev, htons(ETH_P_ALL), ifindex, v2_ ? TPACKET_V2 : TPACKET_V3);
  blocks_ = o.blocks;
  block_size_ = o.block_size;
  // The kernel's GSO segment size and checksum state come in a virtio-net
  // header before each frame (must be asked for before the ring exists).
  int on = 1;
  vnet_ = setsockopt(fd_, SOL_PACKET, PACKET_VNET_HDR, &on, sizeof on) == 0;
  // V3: variable-length frames packed in blocks. V2: fixed slots, each
  // holding a whole GSO/GRO super-packet (64 KiB), one slot per block of
  // whole pages; the same memory as V3 (at least 256 slots).
  tpacket_req3 req{};
  if (v2_) {
    slot_ = (TPACKET_ALIGN(TPACKET2_HDRLEN) + 256 + 65536 + 4095) & ~4095u;
    frames_ = std::max<uint32_t>(256, uint32_t(uint64_t(blocks_) * block_size_ / slot_));
    req.tp_block_size = slot_;
    req.tp_block_nr = frames_;
    req.tp_frame_size = slot_;
    req.tp_frame_nr = frames_;
    blocks_ = frames_, block_size_ = slot_;
    frame_ = 0;
  } else {
    req.tp_block_size = block_size_;
    req.tp_block_nr = blocks_;
    req.tp_frame_size = 2048;
    req.tp_frame_nr = block_size_ / 2048 * blocks_;
    req.tp_retire_blk_tov = std::max<uint32_t>(1, o.block_timeout_ms);
    req.tp_feature_req_word = TP_FT_REQ_FILL_RXHASH;
  }
  socklen_t req_len = v2_ ? sizeof(tpacket_req) : sizeof req;
  if (setsockopt(fd_, SOL_PACKET, PACKET_RX_RING, &req, req_len) < 0) {
    // Kernels without virtio-net headers on rings: go on without GSO sizes.
    int off = 0;
    if (!vnet_ || setsockopt(fd_, SOL_PACKET, PACKET_VNET_HDR, &off, sizeof off) < 0 ||
        setsockopt(fd_, SOL_PACKET, PACKET_RX_RING, &req, req_len) < 0)
      sys_fail(who, "PACKET_RX_RING", errno);
    vnet_ = false;
  }
  ring_len_ = size_t(block_size_) * blocks_;
  void* m = mmap(nullptr, ring_len_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd_, 0);
  if (m == MAP_FAILED) sys_fail(who, "mmap of the receive ring", errno);
  ring_ = static_cast<uint8_t*>(m);
  int one = 1;
  if (!o.outbound) setsockopt(fd_, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof one);  // Linux 4.20+
  sockaddr_ll sll{};
  sll.sll_family = AF_PACKET;
  sll.sll_protocol = htons(ETH_P_ALL);
  sll.sll_ifindex = ifindex;
  if (bind(fd_, reinterpret_cast<sockaddr*>(&sll), sizeof sll) < 0) sys_fail(who, "bind", errno);
  if (o.promisc) {
    packet_mreq mr{};
    mr.mr_ifindex = ifindex;
    mr.mr_type = PACKET_MR_PROMISC;
    if (setsockopt(fd_, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof mr) < 0)
      sys_fail(who, "promiscuous mode", errno);
  }
  if (o.fanout) {
    // One group per (interface, process); the kernel hashes flows over the workers' sockets.
    int arg = int((uint32_t(ifindex) * 2654435761u ^ uint32_t(getpid())) & 0xffff) | (PACKET_FANOUT_HASH << 16);
    if (setsockopt(fd_, SOL_PACKET, PACKET_FANOUT, &arg, sizeof arg) < 0) sys_fail(who, "PACKET_FANOUT", errno);
  }
  mtu_ = interface_mtu(fd_, o.dev);
}

void AfPacketRx::take(AfPacketRx& o) {
  close();
  std::swap(fd_, o.fd_);
  std::swap(ring_, o.ring_);
  std::swap(ring_len_, o.ring_len_);
  std::swap(blocks_, o.blocks_);
  std::swap(block_size_, o.block_size_);
  std::swap(block_, o.block_);
  std::swap(left_, o.left_);
  std::swap(pkt_, o.pkt_);
  kdrops_.store(o.kdrops_.load());
  mtu_ = o.mtu_;
  vnet_ = o.vnet_;
  v2_ = o.v2_;
  frames_ = o.frames_;
  frame_ = o.frame_;
  slot_ = o.slot_;
}

void AfPacketRx::close() {
  if (ring_) munmap(ring_, ring_len_);
  if (fd_ >= 0) ::close(fd_);
  ring_ = nullptr;
  fd_ = -1;
  pkt_ = nullptr;
  left_ = 0;
}

// V2: one frame per slot, handed over by its own status word.
bool AfPacketRx::next_v2(RxFrame& f) {
  auto* h = reinterpret_cast<tpacket2_hdr*>(ring_ + size_t(frame_) * slot_);
  uint32_t status = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
  if (!(status & TP_STATUS_USER)) return false;
  auto* sll = reinterpret_cast<sockaddr_ll*>(reinterpret_cast<uint8_t*>(h) + TPACKET_ALIGN(sizeof(tpacket2_hdr)));
  pkt_ = reinterpret_cast<uint8_t*>(h);
  f.data = pkt_ + h->tp_mac;
  f.len = h->tp_snaplen;
  f.timestamp_ns = uint64_t(h->tp_sec) * 1000000000ull + h->tp_nsec;
  f.pkttype = sll->sll_pkttype;
  f.vlan = (status & TP_STATUS_VLAN_VALID) != 0;
  f.vlan_tpid = (status & TP_STATUS_VLAN_TPID_VALID) ? h->tp_vlan_tpid : 0x8100;
  f.vlan_tci = h->tp_vlan_tci;
  f.csum_not_ready = (status & TP_STATUS_CSUMNOTREADY) != 0;
  f.rxhash = 0;  // not in a V2 header
  f.gso_size = 0;
  if (vnet_) {
    VnetHdr vh;
    std::memcpy(&vh, f.data - sizeof vh, sizeof vh);
    if (vh.gso_type != 0) f.gso_size = le16toh(vh.gso_size);
  }
  return true;
}

bool AfPacketRx::next(RxFrame& f) {
  if (!ring_) return false;
  if (v2_) return next_v2(f);
  auto* bd = reinterpret_cast<tpacket_block_desc*>(ring_ + size_t(block_) * block_size_);
  if (!pkt_) {
    if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER)) return false;
    pkt_ = reinterpret_cast<uint8_t*>(bd) + bd->hdr.bh1.offset_to_first_pkt;
    left_ = bd->hdr.bh1.num_pkts;
    if (left_ == 0) {  // an empty block (retired by the timer): back to the kernel
      pkt_ = nullptr;
      __atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
      block_ = (block_ + 1) % blocks_;
      return next(f);
    }
  }
  auto* h = reinterpret_cast<tpacket3_hdr*>(pkt_);
  auto* sll = reinterpret_cast<sockaddr_ll*>(pkt_ + TPACKET_ALIGN(sizeof(tpacket3_hdr)));
  f.data = pkt_ + h->tp_mac;
  f.len = h->tp_snaplen;
  f.timestamp_ns = uint64_t(h->tp_sec) * 1000000000ull + h->tp_nsec;
  f.pkttype = sll->sll_pkttype;
  f.vlan = (h->tp_status & TP_STATUS_VLAN_VALID) != 0;
  f.vlan_tpid = (h->tp_status & TP_STATUS_VLAN_TPID_VALID) ? h->hv1.tp_vlan_tpid : 0x8100;
  f.vlan_tci = uint16_t(h->hv1.tp_vlan_tci);
  f.csum_not_ready = (h->tp_status & TP_STATUS_CSUMNOTREADY) != 0;
  f.rxhash = h->hv1.tp_rxhash;
  f.gso_size = 0;
  if (vnet_) {
    VnetHdr vh;
    std::memcpy(&vh, f.data - sizeof vh, sizeof vh);
    if (vh.gso_type != 0) f.gso_size = le16toh(vh.gso_size);
  }
  return true;
}

void AfPacketRx::consumed() {
  if (v2_) {
    __atomic_store_n(&reinterpret_cast<tpacket2_hdr*>(pkt_)->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
    pkt_ = nullptr;
    frame_ = (frame_ + 1) % frames_;
    return;
  }
  auto* h = reinterpret_cast<tpacket3_hdr*>(pkt_);
  pkt_ += h->tp_next_offset;
  if (--left_ == 0) {  // block done: back to the kernel
    auto* bd = reinterpret_cast<tpacket_block_desc*>(ring_ + size_t(block_) * block_size_);
    pkt_ = nullptr;
    __atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
    block_ = (block_ + 1) % blocks_;
  }
}

uint64_t AfPacketRx::kernel_drops() {
  tpacket_stats_v3 st{};
  socklen_t l = sizeof st;
  if (fd_ >= 0 && getsockopt(fd_, SOL_PACKET, PACKET_STATISTICS, &st, &l) == 0) kdrops_.fetch_add(st.tp_drops);
  return kdrops_.load();
}

// ---------------------------------------------------------------- send
void AfPacketTx::open(const std::string& who, const std::string& dev, uint32_t frames, bool qdisc_bypass) {
  int ifindex;
  fd_ = open_packet_socket(who, dev, 0, ifindex);
  mtu_ = interface_mtu(fd_, dev);
  int one = 1;
  if (qdisc_bypass && setsockopt(fd_, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof one) < 0)
    sys_fail(who, "PACKET_QDISC_BYPASS", errno);
  frame_size_ = std::max<uint32_t>(2048, round_pow2(mtu_ + 18 + kTxDataOff));
  uint32_t block = std::max<uint32_t>(frame_size_, 1u << 16);
  tpacket_req3 req{};
  req.tp_block_size = block;
  req.tp_frame_size = frame_size_;
  req.tp_block_nr = std::max<uint32_t>(1, (frames * frame_size_ + block - 1) / block);
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
}

void AfPacketTx::close() {
  if (ring_) {
    // Let the kernel finish what is queued (briefly), then unmap.
    for (int i = 0; i < 100 && in_flight(); ++i) usleep(1000);
    munmap(ring_, ring_len_);
  }
  if (fd_ >= 0) ::close(fd_);
  ring_ = nullptr;
  fd_ = -1;
}

uint32_t AfPacketTx::max_frame() const { return frame_size_ - kTxDataOff; }

namespace {
uint32_t tx_status(uint8_t* ring, uint32_t frame_size, uint32_t i) {
  auto* h = reinterpret_cast<tpacket3_hdr*>(ring + size_t(i) * frame_size);
  return __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
}
constexpr uint32_t kBusy = TP_STATUS_SEND_REQUEST | TP_STATUS_SENDING;
}  // namespace

bool AfPacketTx::put(const uint8_t* data, uint32_t len) {
  if (tx_status(ring_, frame_size_, next_) & kBusy) return false;
  auto* h = reinterpret_cast<tpacket3_hdr*>(ring_ + size_t(next_) * frame_size_);
  std::memcpy(reinterpret_cast<uint8_t*>(h) + kTxDataOff, data, len);
  h->tp_len = len;
  h->tp_snaplen = len;
  h->tp_next_offset = 0;
  __atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
  next_ = (next_ + 1) % nframes_;
  return true;
}

uint32_t AfPacketTx::free_slots(uint32_t want) {
  uint32_t n = 0;
  for (uint32_t i = next_; n < want && n < nframes_ && (tx_status(ring_, frame_size_, i) & kBusy) == 0;
       i = (i + 1) % nframes_)
    ++n;
  return n;
}

bool AfPacketTx::in_flight() {
  for (uint32_t i = 0; i < nframes_; ++i)
    if (tx_status(ring_, frame_size_, i) & kBusy) return true;
  return false;
}

void AfPacketTx::kick() { ::send(fd_, nullptr, 0, MSG_DONTWAIT); }

}  // namespace shoal::io
