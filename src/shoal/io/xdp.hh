// AF_XDP sockets on a Linux interface queue (libxdp's xsk API): the driver
// behind FromXDPDevice and ToXDPDevice. One port per (interface, queue):
// a UMEM of FRAMES x FRAME_SIZE bytes in this process, four rings shared
// with the kernel (fill, completion, RX, TX) and libxdp's default XDP
// program, which redirects the queue's frames to the socket (frames on
// queues without a socket go on to the kernel's stack). Half the UMEM
// feeds the fill ring (every received frame goes straight back once
// copied), half is the send side's free list, refilled from the completion
// ring. need-wakeup is on: no system call while the kernel keeps up.
//
// The receive and send elements of one worker on the same interface share
// the port (the kernel binds one socket per queue); each worker binds its
// own queue, so a port is used by one thread. Errors (no such interface,
// too few queues, no privileges, a queue already bound) throw
// std::runtime_error with what to do.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace shoal::io {

// XDP attach mode: native (in the driver) first, then generic (after the
// kernel built an skb), or only one of them.
enum class XdpMode { Auto, Native, Generic };
// Zero-copy (the NIC writes into the UMEM) when the driver can, or forced
// either way.
enum class XdpCopy { Auto, ZeroCopy, Copy };

struct XdpOptions {
  std::string dev;
  uint32_t queue = 0;
  XdpMode mode = XdpMode::Auto;
  XdpCopy copy = XdpCopy::Auto;
  uint32_t frames = 4096;      // UMEM frames, a power of two >= 64
  uint32_t frame_size = 4096;  // 2048 or 4096 bytes
  uint32_t ring_size = 2048;   // each ring's descriptors, a power of two
};

// A port's kernel counters (XDP_STATISTICS) and how it was bound.
struct XdpStats {
  uint64_t rx_dropped = 0;     // frames the kernel dropped (too large, no room)
  uint64_t rx_ring_full = 0;   // the RX ring was full
  uint64_t rx_fill_empty = 0;  // the fill ring was empty when a frame came
  uint64_t rx_invalid = 0, tx_invalid = 0;
};

// The number of RX queues of `dev` (the kernel's real_num_rx_queues, from
// /sys/class/net/DEV/queues), 0 when it cannot tell.
uint32_t interface_queues(const std::string& dev);

class XskPort {
 public:
  // The port of (o.dev, o.queue), opened on first use: later users share it
  // (the options must then agree). `rx`: with a receive ring and the XDP
  // program that feeds it (a port that only sends leaves the interface's
  // traffic to the kernel). `who` prefixes error messages.
  static std::shared_ptr<XskPort> acquire(const std::string& who, const XdpOptions& o, bool rx);
  XskPort(const XskPort&) = delete;
  XskPort& operator=(const XskPort&) = delete;
  ~XskPort();

  // Calls f(data, len) for up to `max` received frames, then gives their
  // buffers back to the kernel; the number of frames.
  template <class F>
  uint32_t receive(uint32_t max, F&& f);
  // Frames the RX ring holds now (0 when empty).
  uint32_t rx_ready();

  // Send side: reserve(n) makes room for up to n frames (reclaiming sent
  // ones) and says how many fit; put() copies one into the next reserved
  // slot; flush() hands the put frames to the kernel and kicks it.
  uint32_t reserve(uint32_t n);
  void put(const uint8_t* data, uint32_t len);
  void flush();
  // Frames that could be reserved now (free UMEM frames and TX slots).
  uint32_t tx_room();
  // Frames handed to the kernel and not yet sent (still in the TX ring).
  uint32_t tx_pending();
  // Kicks the kernel when frames wait (copy mode sends 32 a call).
  void kick();

  uint32_t mtu() const { return mtu_; }
  uint32_t max_frame() const { return frame_size_; }
  bool zero_copy() const { return zero_copy_; }
  bool native() const { return native_; }
  const std::string& dev() const { return dev_; }
  uint32_t queue() const { return queue_; }
  XdpStats stats() const;
  // Frames the kernel lost on the receive side (dropped + ring full + fill empty).
  uint64_t kernel_drops() const;
  std::string mode_text() const;

 private:
  struct Impl;
  XskPort() = default;
  void open(const std::string& who, const XdpOptions& o, bool rx);
  void close();
  // The receive side in the .cc, where the rings are.
  uint32_t rx_peek(uint32_t max, uint32_t& idx);
  const uint8_t* rx_frame(uint32_t idx, uint32_t& len);
  void rx_release(uint32_t idx, uint32_t n);

  std::unique_ptr<Impl> impl_;
  std::string dev_;
  uint32_t queue_ = 0, mtu_ = 1500, frame_size_ = 4096;
  bool zero_copy_ = false, native_ = false, rx_ = false;
  XdpOptions opt_;
};

template <class F>
uint32_t XskPort::receive(uint32_t max, F&& f) {
  uint32_t idx = 0;
  uint32_t n = rx_peek(max, idx);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t len = 0;
    const uint8_t* d = rx_frame(idx + i, len);
    f(d, len);
  }
  if (n) rx_release(idx, n);
  return n;
}

}  // namespace shoal::io
