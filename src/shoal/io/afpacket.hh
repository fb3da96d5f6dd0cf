// AF_PACKET memory-mapped rings on a Linux interface: the drivers behind
// FromDevice and ToDevice. Receive has two rings, neither with a system
// call per packet: TPACKET_V2 hands over each frame as soon as the kernel
// wrote it (the latency of a packet is the worker's polling, microseconds),
// TPACKET_V3 whole blocks, when full or after BLOCK_TIMEOUT ms (at least
// 1: the latency floor at low rates, in exchange for fewer cache misses at
// high ones); with several workers each opens its own
// socket in one PACKET_FANOUT_HASH group, so the kernel spreads flows over
// them. Send fills a TX ring and kicks it once per batch. Errors (no such
// interface, no privileges) throw std::runtime_error with what to do.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace shoal::io {

// One received frame, valid until AfPacketRx::consumed().
struct RxFrame {
  const uint8_t* data = nullptr;  // from the MAC header (a stripped VLAN tag is not in it)
  uint32_t len = 0;               // bytes captured
  uint64_t timestamp_ns = 0;
  uint8_t pkttype = 0;  // PACKET_HOST, PACKET_BROADCAST, ... PACKET_OUTGOING
  bool vlan = false;    // the kernel stripped a VLAN tag: vlan_tpid/vlan_tci
  uint16_t vlan_tpid = 0, vlan_tci = 0;
  bool csum_not_ready = false;  // the sender offloaded its L4 checksum (TP_STATUS_CSUMNOTREADY)
  uint32_t gso_size = 0;        // a GSO/GRO super-packet's segment size (0: none or unknown)
  uint32_t rxhash = 0;          // the kernel's flow hash
};

struct RxOptions {
  std::string dev;
  bool promisc = true, outbound = false;
  bool fanout = false;                          // join the process's PACKET_FANOUT_HASH group for dev
  uint32_t blocks = 64, block_size = 1u << 18;  // the ring's memory, either kind
  bool per_frame = true;                        // TPACKET_V2 (else V3 blocks)
  uint32_t block_timeout_ms = 1;                // V3: a partly filled block's longest wait
};

// Raw packet sockets of other processes that see every frame of dev
// (/proc/net/packet: type SOCK_RAW, protocol ETH_P_ALL, bound to dev or to
// every interface), as "inode N": a second Shoal there would forward each
// packet again. Empty when there are none or /proc cannot tell.
std::vector<std::string> other_packet_readers(const std::string& dev);

class AfPacketRx {
 public:
  AfPacketRx() = default;
  AfPacketRx(const AfPacketRx&) = delete;
  AfPacketRx& operator=(const AfPacketRx&) = delete;
  ~AfPacketRx() { close(); }
  // `who` prefixes error messages ("FromDevice(eth0)").
  void open(const std::string& who, const RxOptions& o);
  void close();
  bool is_open() const { return fd_ >= 0; }
  // Hot swap: takes o's socket and ring, with the frames waiting in it (o
  // is left closed).
  void take(AfPacketRx& o);
  // The next frame in the ring, or false when the kernel has none now.
  // Call consumed() once done with it, before the next call.
  bool next(RxFrame& f);
  void consumed();
  uint32_t mtu() const { return mtu_; }
  // Frames the ring lost since open (the kernel's count, accumulated).
  uint64_t kernel_drops();

 private:
  int fd_ = -1;
  uint8_t* ring_ = nullptr;
  size_t ring_len_ = 0;
  uint32_t blocks_ = 0, block_size_ = 0, block_ = 0, left_ = 0;
  uint8_t* pkt_ = nullptr;
  std::atomic<uint64_t> kdrops_{0};  // read from statistics threads
  uint32_t mtu_ = 1500;
  bool vnet_ = false, v2_ = false;
  uint32_t frames_ = 0, frame_ = 0, slot_ = 0;  // V2: frames, the next one, bytes per slot
  bool next_v2(RxFrame& f);
};

class AfPacketTx {
 public:
  AfPacketTx() = default;
  AfPacketTx(const AfPacketTx&) = delete;
  AfPacketTx& operator=(const AfPacketTx&) = delete;
  ~AfPacketTx() { close(); }
  // A ring of at least `frames` slots sized for the interface's MTU.
  void open(const std::string& who, const std::string& dev, uint32_t frames, bool qdisc_bypass);
  // Waits briefly for queued frames to leave, then unmaps.
  void close();
  uint32_t mtu() const { return mtu_; }
  uint32_t slots() const { return nframes_; }
  // The largest frame a slot holds.
  uint32_t max_frame() const;
  // Queues one frame; false when the next slot is still the kernel's.
  bool put(const uint8_t* data, uint32_t len);
  // Free slots from the next one, counting up to `want`.
  uint32_t free_slots(uint32_t want);
  // Asks the kernel to send what is queued (no wait).
  void kick();

 private:
  bool in_flight();
  int fd_ = -1;
  uint8_t* ring_ = nullptr;
  size_t ring_len_ = 0;
  uint32_t mtu_ = 1500, frame_size_ = 2048, nframes_ = 0, next_ = 0;
};

}  // namespace shoal::io
