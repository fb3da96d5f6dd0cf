// DPDK ethernet ports (Debian's DPDK 22.11): the driver behind
// FromDPDKDevice and ToDPDKDevice. The EAL starts once per process, at the
// first port opened, with the arguments of `shoal run --dpdk "ARGS"` (or
// SHOAL_DPDK_ARGS), by default `--in-memory` (no shared files, so several
// Shoals coexist) and `--no-huge` where the machine has no huge pages.
// A port is a number, a PCI address or a virtual device's arguments
// ("net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap", "net_tap0,iface=t0",
// "net_af_xdp0,iface=eth0"), probed on first use. It is configured once
// for every worker: queue w of each direction is worker w's (RSS spreads
// flows over the receive queues), with its own mbuf pool. Errors throw
// std::runtime_error saying what to do.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

namespace shoal::io {

// The EAL arguments the first port will start DPDK with (before that:
// replaces the defaults; later: ignored, with the one-time EAL).
void set_dpdk_args(const std::string& args);

struct DpdkOptions {
  std::string port;     // number, PCI address or vdev arguments
  uint32_t queues = 1;  // one per worker, each direction
  uint32_t rx_desc = 1024, tx_desc = 1024;
  uint32_t mbufs = 8191;  // per port
  bool promisc = true;
};

struct DpdkStats {
  uint64_t ipackets = 0, opackets = 0, imissed = 0, ierrors = 0, oerrors = 0, rx_nombuf = 0;
};

class DpdkPort {
 public:
  // The port named o.port, configured and started by the first caller
  // (later ones share it; their queue count must not exceed the first's).
  static std::shared_ptr<DpdkPort> acquire(const std::string& who, const DpdkOptions& o);
  DpdkPort(const DpdkPort&) = delete;
  DpdkPort& operator=(const DpdkPort&) = delete;
  ~DpdkPort();

  // Calls f(data, len) for each of up to `max` frames received on `queue`
  // (a frame in several segments is gathered into `scratch` first); the
  // number of frames.
  template <class F>
  uint32_t receive(uint16_t queue, uint32_t max, F&& f);
  // Sends up to n frames on `queue` (copied into mbufs); how many the
  // driver took (the rest found no descriptor or mbuf).
  uint32_t send(uint16_t queue, const uint8_t* const* data, const uint32_t* len, uint32_t n);

  uint16_t id() const { return id_; }
  uint32_t mtu() const { return mtu_; }
  uint32_t queues() const { return queues_; }
  std::string driver() const { return driver_; }
  DpdkStats stats() const;

 private:
  DpdkPort() = default;
  void open(const std::string& who, const DpdkOptions& o);
  // One received burst on a queue: frame i's bytes (gathered when
  // segmented), then the mbufs freed.
  uint32_t rx_burst(uint16_t queue, uint32_t max);
  const uint8_t* rx_frame(uint16_t queue, uint32_t i, uint32_t& len);
  void rx_done(uint16_t queue, uint32_t n);

  uint16_t id_ = 0;
  uint32_t mtu_ = 1500, queues_ = 1;
  std::string driver_;
  bool started_ = false;
  std::string probed_;  // the vdev this port probed (removed at close)
  void* pool_ = nullptr;
  struct Burst;  // a queue's received mbufs and gather buffer
  std::unique_ptr<Burst[]> bursts_;
};

template <class F>
uint32_t DpdkPort::receive(uint16_t queue, uint32_t max, F&& f) {
  uint32_t n = rx_burst(queue, max);
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t len = 0;
    const uint8_t* d = rx_frame(queue, i, len);
    f(d, len);
  }
  rx_done(queue, n);
  return n;
}

}  // namespace shoal::io
