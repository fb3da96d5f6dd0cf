#include "shoal/io/dpdk.hh"

#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <vector>

#ifdef SHOAL_HAVE_DPDK
#include <rte_bus.h>
#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_log.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mempool.h>
#include <rte_memzone.h>
#endif

namespace shoal::io {

namespace {
std::mutex g_mu;
std::string g_args;  // set_dpdk_args
bool g_args_set = false;
}  // namespace

void set_dpdk_args(const std::string& args) {
  std::lock_guard lk(g_mu);
  g_args = args;
  g_args_set = true;
}

#ifdef SHOAL_HAVE_DPDK

namespace {

constexpr uint32_t kMaxBurst = 256;

// An mbuf pool in one virtually contiguous area, for drivers that register
// the pool's memory with the kernel from its first chunk on (net_af_xdp makes
// the pool its AF_XDP UMEM: the start of the first chunk and the pool's
// size). rte_pktmbuf_pool_create may spread a pool over many chunks where
// memory is not contiguous for devices (no huge pages: 4 KiB pages); the
// mbufs past the first chunk then lie outside the UMEM, and the kernel drops
// every frame once the fill ring holds them. Objects may cross pages here
// (the kernel reaches them by virtual address). nullptr with rte_errno set.
rte_mempool* one_area_pool(const std::string& name, uint32_t n, int socket) {
  uint32_t elt = uint32_t(sizeof(rte_mbuf)) + RTE_MBUF_DEFAULT_BUF_SIZE;
  rte_mempool* mp = rte_mempool_create_empty(name.c_str(), n, elt, 256, sizeof(rte_pktmbuf_pool_private), socket,
                                             RTE_MEMPOOL_F_NO_IOVA_CONTIG);
  if (!mp) return nullptr;
  rte_pktmbuf_pool_private priv{};
  priv.mbuf_data_room_size = RTE_MBUF_DEFAULT_BUF_SIZE;
  priv.mbuf_priv_size = 0;
  if (rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr) != 0) {
    rte_mempool_free(mp);
    return nullptr;
  }
  rte_pktmbuf_pool_init(mp, &priv);
  size_t bytes = size_t(n) * rte_mempool_calc_obj_size(elt, RTE_MEMPOOL_F_NO_IOVA_CONTIG, nullptr) + 4096;
  const rte_memzone* mz = rte_memzone_reserve_aligned((name + "_mz").c_str(), bytes, socket, 0, 4096);
  if (!mz) {
    rte_mempool_free(mp);
    return nullptr;
  }
  auto release = [](rte_mempool_memhdr*, void* zone) { rte_memzone_free(static_cast<const rte_memzone*>(zone)); };
  if (rte_mempool_populate_virt(mp, static_cast<char*>(mz->addr), bytes, 4096, release, const_cast<rte_memzone*>(mz)) <
      int(n)) {
    rte_mempool_free(mp);
    rte_memzone_free(mz);
    return nullptr;
  }
  rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
  return mp;
}

bool have_hugepages() {
  std::ifstream f("/proc/meminfo");
  std::string k;
  uint64_t v = 0;
  while (f >> k >> v) {
    if (k == "HugePages_Free:") return v > 0;
    f.ignore(256, '\n');
  }
  return false;
}

// Whether some PCI device is bound to a driver DPDK can use (else the EAL
// starts with --no-pci: it would only complain about the kernel's NICs).
bool pci_for_dpdk() {
  for (const char* d : {"vfio-pci", "uio_pci_generic", "igb_uio"}) {
    std::error_code ec;
    for (auto& e : std::filesystem::directory_iterator(std::string("/sys/bus/pci/drivers/") + d, ec))
      if (e.path().filename().string().find(':') != std::string::npos) return true;
  }
  return false;
}

// Starts the EAL once; the calling (worker) thread keeps its CPU set (the
// EAL pins the thread that starts it to its main lcore).
void start_eal(const std::string& who) {
  static bool done = false;
  static std::string error;
  if (done) {
    if (!error.empty()) throw std::runtime_error(fmt::format("{}: {}", who, error));
    return;
  }
  done = true;
  std::string args = g_args_set ? g_args : "";
  if (!g_args_set)
    if (const char* e = std::getenv("SHOAL_DPDK_ARGS")) args = e, g_args_set = true;
  if (!g_args_set)
    args = std::string("--log-level=*:warning --no-telemetry ") +
           (have_hugepages() ? "--in-memory" : "--no-huge --no-shconf") + (pci_for_dpdk() ? "" : " --no-pci");
  // Kept for the process's life: the EAL may hold on to its arguments.
  static std::vector<std::string> words{"shoal"};
  std::istringstream in(args);
  for (std::string w; in >> w;) words.push_back(w);
  static std::vector<char*> argv;
  argv.reserve(words.size());
  for (auto& w : words) argv.push_back(w.data());
  cpu_set_t cpus;
  bool kept = pthread_getaffinity_np(pthread_self(), sizeof cpus, &cpus) == 0;
  int r = rte_eal_init(int(argv.size()), argv.data());
  if (kept) pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus);
  if (r < 0) {
    error = fmt::format("DPDK's EAL did not start with '{}': {} (EAL arguments: shoal run --dpdk \"ARGS\")", args,
                        rte_strerror(rte_errno));
    throw std::runtime_error(fmt::format("{}: {}", who, error));
  }
  std::atexit([] { rte_eal_cleanup(); });
}

// The port id of `name`: a number, a device already known (PCI address,
// vdev name), or vdev arguments probed now (`probed` set to the device name).
uint16_t find_port(const std::string& who, const std::string& name, std::string& probed) {
  char* end = nullptr;
  unsigned long n = std::strtoul(name.c_str(), &end, 10);
  if (!name.empty() && *end == 0) {
    if (n >= RTE_MAX_ETHPORTS || !rte_eth_dev_is_valid_port(uint16_t(n)))
      throw std::runtime_error(
          fmt::format("{}: DPDK has no port {} ({} ports; bind a NIC to vfio-pci, or name a "
                      "virtual device such as net_pcap0,rx_pcap=in.pcap)",
                      who, n, rte_eth_dev_count_avail()));
    return uint16_t(n);
  }
  std::string dev = name.substr(0, name.find(','));
  uint16_t id = 0;
  if (rte_eth_dev_get_port_by_name(dev.c_str(), &id) == 0) return id;
  if (int r = rte_dev_probe(name.c_str()); r < 0)
    throw std::runtime_error(fmt::format("{}: DPDK cannot probe '{}': {}", who, name, rte_strerror(-r)));
  if (rte_eth_dev_get_port_by_name(dev.c_str(), &id) != 0)
    throw std::runtime_error(fmt::format("{}: '{}' probed, but it is no ethernet port", who, dev));
  probed = dev;
  return id;
}

}  // namespace

struct DpdkPort::Burst {
  rte_mbuf* m[kMaxBurst];
  std::vector<uint8_t> gather;
};

std::shared_ptr<DpdkPort> DpdkPort::acquire(const std::string& who, const DpdkOptions& o) {
  static std::map<std::string, std::weak_ptr<DpdkPort>> ports;
  std::lock_guard lk(g_mu);
  start_eal(who);
  auto& slot = ports[o.port.substr(0, o.port.find(','))];
  if (auto p = slot.lock()) {
    if (o.queues > p->queues_)
      throw std::runtime_error(fmt::format("{}: port {} was set up for {} queues", who, o.port, p->queues_));
    return p;
  }
  std::shared_ptr<DpdkPort> p(new DpdkPort);
  p->open(who, o);
  slot = p;
  return p;
}

void DpdkPort::open(const std::string& who, const DpdkOptions& o) {
  id_ = find_port(who, o.port, probed_);
  rte_eth_dev_info info{};
  if (int r = rte_eth_dev_info_get(id_, &info); r != 0)
    throw std::runtime_error(fmt::format("{}: port {}: {}", who, o.port, rte_strerror(-r)));
  driver_ = info.driver_name ? info.driver_name : "?";
  queues_ = o.queues;
  if (queues_ > info.max_rx_queues || queues_ > info.max_tx_queues)
    throw std::runtime_error(
        fmt::format("{}: port {} ({}) has {} receive and {} send queues; {} workers need one "
                    "each (run fewer workers)",
                    who, o.port, driver_, info.max_rx_queues, info.max_tx_queues, queues_));
  rte_eth_conf conf{};
  // A symmetric Toeplitz key (0x6d5a repeated): both directions of a
  // connection hash to one queue, so one worker sees all of it, as the flow
  // layer expects (FromDevice's fanout hash is symmetric too).
  static uint8_t sym_key[40];
  for (size_t i = 0; i < sizeof sym_key; ++i) sym_key[i] = i % 2 ? 0x5a : 0x6d;
  if (queues_ > 1 && info.flow_type_rss_offloads) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    if (info.hash_key_size == sizeof sym_key) {
      conf.rx_adv_conf.rss_conf.rss_key = sym_key;
      conf.rx_adv_conf.rss_conf.rss_key_len = sizeof sym_key;
    }
    conf.rx_adv_conf.rss_conf.rss_hf =
        (RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) & info.flow_type_rss_offloads;
  }
  if (int r = rte_eth_dev_configure(id_, uint16_t(queues_), uint16_t(queues_), &conf); r != 0)
    throw std::runtime_error(fmt::format("{}: cannot configure port {}: {}", who, o.port, rte_strerror(-r)));
  uint16_t rxd = uint16_t(o.rx_desc), txd = uint16_t(o.tx_desc);
  rte_eth_dev_adjust_nb_rx_tx_desc(id_, &rxd, &txd);
  int socket = rte_eth_dev_socket_id(id_);
  if (socket < 0) socket = 0;
  uint32_t mbufs = std::max<uint32_t>(o.mbufs, queues_ * (rxd + txd + 2 * kMaxBurst));
  std::string pname = fmt::format("shoal_p{}", id_);
  auto* pool = driver_ == "net_af_xdp"
                   ? one_area_pool(pname, mbufs, socket)
                   : rte_pktmbuf_pool_create(pname.c_str(), mbufs, 256, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket);
  if (!pool)
    throw std::runtime_error(
        fmt::format("{}: no memory for {} mbufs: {} (give DPDK huge pages, or fewer "
                    "descriptors)",
                    who, mbufs, rte_strerror(rte_errno)));
  pool_ = pool;
  for (uint32_t qi = 0; qi < queues_; ++qi) {
    auto q = uint16_t(qi);
    if (int r = rte_eth_rx_queue_setup(id_, q, rxd, unsigned(socket), nullptr, pool); r != 0)
      throw std::runtime_error(fmt::format("{}: port {} receive queue {}: {}", who, o.port, q, rte_strerror(-r)));
    if (int r = rte_eth_tx_queue_setup(id_, q, txd, unsigned(socket), nullptr); r != 0)
      throw std::runtime_error(fmt::format("{}: port {} send queue {}: {}", who, o.port, q, rte_strerror(-r)));
  }
  if (int r = rte_eth_dev_start(id_); r != 0)
    throw std::runtime_error(fmt::format("{}: cannot start port {}: {}", who, o.port, rte_strerror(-r)));
  started_ = true;
  if (o.promisc) rte_eth_promiscuous_enable(id_);
  uint16_t mtu = 1500;
  if (rte_eth_dev_get_mtu(id_, &mtu) == 0) mtu_ = mtu;
  bursts_ = std::make_unique<Burst[]>(queues_);
}

DpdkPort::~DpdkPort() {
  if (started_) rte_eth_dev_stop(id_);
  if (started_ || !probed_.empty()) rte_eth_dev_close(id_);
  if (!probed_.empty()) rte_eal_hotplug_remove("vdev", probed_.c_str());
  if (pool_) rte_mempool_free(static_cast<rte_mempool*>(pool_));
}

uint32_t DpdkPort::rx_burst(uint16_t queue, uint32_t max) {
  return rte_eth_rx_burst(id_, queue, bursts_[queue].m, uint16_t(std::min(max, kMaxBurst)));
}

const uint8_t* DpdkPort::rx_frame(uint16_t queue, uint32_t i, uint32_t& len) {
  Burst& b = bursts_[queue];
  rte_mbuf* m = b.m[i];
  len = rte_pktmbuf_pkt_len(m);
  if (m->nb_segs == 1) return rte_pktmbuf_mtod(m, const uint8_t*);
  b.gather.resize(len);
  return static_cast<const uint8_t*>(rte_pktmbuf_read(m, 0, len, b.gather.data()));
}

void DpdkPort::rx_done(uint16_t queue, uint32_t n) { rte_pktmbuf_free_bulk(bursts_[queue].m, n); }

uint32_t DpdkPort::send(uint16_t queue, const uint8_t* const* data, const uint32_t* len, uint32_t n) {
  rte_mbuf* m[kMaxBurst];
  uint32_t sent = 0;
  while (sent < n) {
    uint32_t k = std::min(n - sent, kMaxBurst);
    if (rte_pktmbuf_alloc_bulk(static_cast<rte_mempool*>(pool_), m, k) != 0) break;
    for (uint32_t i = 0; i < k; ++i) {
      char* d = rte_pktmbuf_append(m[i], uint16_t(len[sent + i]));
      std::memcpy(d, data[sent + i], len[sent + i]);
    }
    uint16_t took = rte_eth_tx_burst(id_, queue, m, uint16_t(k));
    if (took < k) rte_pktmbuf_free_bulk(m + took, k - took);
    sent += took;
    if (took < k) break;
  }
  return sent;
}

DpdkStats DpdkPort::stats() const {
  DpdkStats s;
  rte_eth_stats st{};
  if (rte_eth_stats_get(id_, &st) != 0) return s;
  s.ipackets = st.ipackets;
  s.opackets = st.opackets;
  s.imissed = st.imissed;
  s.ierrors = st.ierrors;
  s.oerrors = st.oerrors;
  s.rx_nombuf = st.rx_nombuf;
  return s;
}

#else  // built without DPDK

struct DpdkPort::Burst {};
std::shared_ptr<DpdkPort> DpdkPort::acquire(const std::string& who, const DpdkOptions&) {
  throw std::runtime_error(
      fmt::format("{}: this Shoal was built without DPDK (install libdpdk-dev, then rebuild)", who));
}
void DpdkPort::open(const std::string&, const DpdkOptions&) {}
DpdkPort::~DpdkPort() = default;
uint32_t DpdkPort::rx_burst(uint16_t, uint32_t) { return 0; }
const uint8_t* DpdkPort::rx_frame(uint16_t, uint32_t, uint32_t& len) { return len = 0, nullptr; }
void DpdkPort::rx_done(uint16_t, uint32_t) {}
uint32_t DpdkPort::send(uint16_t, const uint8_t* const*, const uint32_t*, uint32_t) { return 0; }
DpdkStats DpdkPort::stats() const { return {}; }

#endif

}  // namespace shoal::io
