#include "shoal/io/xdp.hh"

#include <fmt/format.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#ifdef SHOAL_HAVE_XDP
#include <linux/if_link.h>
#include <xdp/libxdp.h>
#include <xdp/xsk.h>
#endif

namespace shoal::io {

uint32_t interface_queues(const std::string& dev) {
  std::error_code ec;
  uint32_t n = 0;
  for (auto& e : std::filesystem::directory_iterator("/sys/class/net/" + dev + "/queues", ec))
    if (e.path().filename().string().rfind("rx-", 0) == 0) ++n;
  return n;
}

#ifdef SHOAL_HAVE_XDP

namespace {

// libxdp and libbpf explain every fallback on stderr ("No bpffs found ...,
// falling back to loading single prog"): quiet unless SHOAL_XDP_DEBUG is
// set, since Shoal reports what it could not do itself.
int quiet_xdp(enum libxdp_print_level, const char* fmt, va_list ap) {
  return std::getenv("SHOAL_XDP_DEBUG") ? std::vfprintf(stderr, fmt, ap) : 0;
}
int quiet_bpf(enum libbpf_print_level, const char* fmt, va_list ap) {
  return std::getenv("SHOAL_XDP_DEBUG") ? std::vfprintf(stderr, fmt, ap) : 0;
}

uint32_t link_mtu(const std::string& dev) {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return 1500;
  ifreq ifr{};
  std::snprintf(ifr.ifr_name, IFNAMSIZ, "%s", dev.c_str());
  uint32_t mtu = ioctl(fd, SIOCGIFMTU, &ifr) < 0 ? 1500 : uint32_t(ifr.ifr_mtu);
  ::close(fd);
  return mtu;
}

bool same_options(const XdpOptions& a, const XdpOptions& b) {
  return a.mode == b.mode && a.copy == b.copy && a.frames == b.frames && a.frame_size == b.frame_size &&
         a.ring_size == b.ring_size;
}

}  // namespace

struct XskPort::Impl {
  void* area = nullptr;
  size_t area_len = 0;
  xsk_umem* umem = nullptr;
  xsk_socket* xsk = nullptr;
  xsk_ring_prod fq{}, tx{};
  xsk_ring_cons cq{}, rx{};
  int fd = -1;
  bool has_rx = false;
  std::vector<uint64_t> free;  // send-side frames (UMEM offsets)
  uint32_t tx_idx = 0, tx_reserved = 0, tx_put = 0;
  uint8_t* at(uint64_t addr) { return static_cast<uint8_t*>(xsk_umem__get_data(area, addr)); }
  void reclaim() {
    uint32_t idx = 0;
    uint32_t n = xsk_ring_cons__peek(&cq, cq.size, &idx);
    for (uint32_t i = 0; i < n; ++i) free.push_back(*xsk_ring_cons__comp_addr(&cq, idx + i));
    if (n) xsk_ring_cons__release(&cq, n);
  }
};

std::shared_ptr<XskPort> XskPort::acquire(const std::string& who, const XdpOptions& o, bool rx) {
  static std::mutex mu;
  static std::map<std::pair<std::string, uint32_t>, std::weak_ptr<XskPort>> ports;
  std::lock_guard lk(mu);
  auto& slot = ports[{o.dev, o.queue}];
  if (auto p = slot.lock()) {
    if (!same_options(p->opt_, o))
      throw std::runtime_error(fmt::format(
          "{}: queue {} of {} is already open here with other MODE, ZEROCOPY, FRAMES, FRAME_SIZE or RING_SIZE "
          "(the elements of one interface share its socket: give them the same settings)",
          who, o.queue, o.dev));
    if (rx && !p->impl_->has_rx)
      throw std::runtime_error(fmt::format("{}: queue {} of {} is already open for sending only", who, o.queue, o.dev));
    return p;
  }
  std::shared_ptr<XskPort> p(new XskPort);
  p->open(who, o, rx);
  slot = p;
  return p;
}

void XskPort::open(const std::string& who, const XdpOptions& o, bool rx) {
  static std::once_flag quiet;
  std::call_once(quiet, [] {
    libxdp_set_print(quiet_xdp);
    libbpf_set_print(quiet_bpf);
  });
  opt_ = o;
  dev_ = o.dev;
  queue_ = o.queue;
  frame_size_ = o.frame_size;
  if (if_nametoindex(o.dev.c_str()) == 0)
    throw std::runtime_error(fmt::format("{}: no interface named '{}'", who, o.dev));
  uint32_t nq = interface_queues(o.dev);
  if (nq && o.queue >= nq)
    throw std::runtime_error(fmt::format(
        "{}: {} has {} receive queue{}, so there is no queue {} (each worker binds its own queue, from QUEUE on: "
        "run fewer workers, or give the interface more queues: ethtool -L {} combined N)",
        who, o.dev, nq, nq == 1 ? "" : "s", o.queue, o.dev));
  mtu_ = link_mtu(o.dev);
  impl_ = std::make_unique<Impl>();
  Impl& m = *impl_;
  m.has_rx = rx;
  rx_ = rx;
  m.area_len = size_t(o.frames) * o.frame_size;
  m.area = mmap(nullptr, m.area_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (m.area == MAP_FAILED) {
    m.area = nullptr;
    throw std::runtime_error(
        fmt::format("{}: cannot map a UMEM of {} bytes: {}", who, m.area_len, std::strerror(errno)));
  }
  // Half the frames feed the fill ring, half the send side.
  uint32_t half = o.frames / 2;
  xsk_umem_config uc{};
  uc.fill_size = half;
  uc.comp_size = half;
  uc.frame_size = o.frame_size;
  uc.frame_headroom = 0;
  uc.flags = 0;
  if (int r = xsk_umem__create(&m.umem, m.area, m.area_len, &m.fq, &m.cq, &uc); r != 0) {
    int e = -r;
    close();
    throw std::runtime_error(fmt::format("{}: cannot register the UMEM: {}{}", who, std::strerror(e),
                                         e == EPERM || e == ENOMEM
                                             ? " (needs CAP_NET_ADMIN and CAP_IPC_LOCK, or a higher "
                                               "RLIMIT_MEMLOCK: run as root)"
                                             : ""));
  }
  auto try_bind = [&](uint32_t xdp_flags) {
    xsk_socket_config sc{};
    sc.rx_size = o.ring_size;
    sc.tx_size = o.ring_size;
    sc.libxdp_flags = 0;  // load libxdp's redirect program when receiving
    sc.xdp_flags = xdp_flags;
    sc.bind_flags = XDP_USE_NEED_WAKEUP;
    if (o.copy == XdpCopy::ZeroCopy) sc.bind_flags |= XDP_ZEROCOPY;
    if (o.copy == XdpCopy::Copy) sc.bind_flags |= XDP_COPY;
    int r = 0;
    // A socket this process or another closed a moment ago may still hold the
    // queue while the kernel tears it down: retry EBUSY for a second.
    for (int i = 0; i < 20; ++i) {
      r = xsk_socket__create(&m.xsk, o.dev.c_str(), o.queue, m.umem, rx ? &m.rx : nullptr, &m.tx, &sc);
      if (r != -EBUSY) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return -r;
  };
  int err = 0;
  if (o.mode != XdpMode::Generic) {
    err = try_bind(XDP_FLAGS_DRV_MODE);
    native_ = err == 0;
  }
  if (o.mode == XdpMode::Generic || (o.mode == XdpMode::Auto && err != 0 && err != EPERM && err != EBUSY))
    err = try_bind(XDP_FLAGS_SKB_MODE);
  if (err != 0) {
    close();
    std::string why = std::strerror(err);
    if (err == EPERM || err == EACCES)
      why += " (needs CAP_NET_ADMIN and CAP_BPF: run as root)";
    else if (err == EBUSY || err == EEXIST)
      why += fmt::format(
          " (another AF_XDP socket holds queue {} of {}, or another XDP program is attached: "
          "`ip link show {}` shows it, `ip link set dev {} xdp off` removes it)",
          o.queue, o.dev, o.dev, o.dev);
    else if (err == EOPNOTSUPP && o.copy == XdpCopy::ZeroCopy)
      why += " (the driver has no zero-copy AF_XDP: ZEROCOPY auto or false)";
    else if (err == EOPNOTSUPP || err == EINVAL)
      why += o.mode == XdpMode::Native ? " (the driver has no native XDP: MODE auto or generic)"
                                       : " (the MTU may be too large for XDP, or the kernel lacks AF_XDP)";
    throw std::runtime_error(
        fmt::format("{}: cannot bind an AF_XDP socket to queue {} of {}: {}", who, o.queue, o.dev, why));
  }
  m.fd = xsk_socket__fd(m.xsk);
  xdp_options xo{};
  socklen_t xl = sizeof xo;
  if (getsockopt(m.fd, SOL_XDP, XDP_OPTIONS, &xo, &xl) == 0) zero_copy_ = (xo.flags & XDP_OPTIONS_ZEROCOPY) != 0;
  // Frames 0..half-1 go to the fill ring (when receiving), the rest send.
  uint32_t first_tx = 0;
  if (rx) {
    uint32_t idx = 0;
    uint32_t n = xsk_ring_prod__reserve(&m.fq, half, &idx);
    for (uint32_t i = 0; i < n; ++i) *xsk_ring_prod__fill_addr(&m.fq, idx + i) = uint64_t(i) * o.frame_size;
    xsk_ring_prod__submit(&m.fq, n);
    first_tx = n;
  }
  for (uint32_t i = o.frames; i-- > first_tx;) m.free.push_back(uint64_t(i) * o.frame_size);
}

XskPort::~XskPort() { close(); }

void XskPort::close() {
  if (!impl_) return;
  Impl& m = *impl_;
  if (m.xsk) {
    // Let queued frames leave (copy mode sends them inside sendto).
    for (int i = 0; i < 100 && tx_pending() > 0; ++i) {
      kick();
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    xsk_socket__delete(m.xsk);
    m.xsk = nullptr;
  }
  if (m.umem) xsk_umem__delete(m.umem);
  m.umem = nullptr;
  if (m.area) munmap(m.area, m.area_len);
  m.area = nullptr;
  impl_.reset();
}

uint32_t XskPort::rx_peek(uint32_t max, uint32_t& idx) {
  Impl& m = *impl_;
  uint32_t n = xsk_ring_cons__peek(&m.rx, max, &idx);
  // need-wakeup: the driver waits for a call before it fills the ring again.
  if (n == 0 && xsk_ring_prod__needs_wakeup(&m.fq)) recvfrom(m.fd, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr);
  return n;
}

uint32_t XskPort::rx_ready() {
  Impl& m = *impl_;
  if (!m.has_rx) return 0;
  return xsk_cons_nb_avail(&m.rx, m.rx.size);
}

const uint8_t* XskPort::rx_frame(uint32_t idx, uint32_t& len) {
  Impl& m = *impl_;
  const xdp_desc* d = xsk_ring_cons__rx_desc(&m.rx, idx);
  len = d->len;
  return m.at(d->addr);
}

void XskPort::rx_release(uint32_t idx, uint32_t n) {
  Impl& m = *impl_;
  // Every frame received goes straight back to the fill ring: it holds
  // every receive frame, so the reservation cannot fall short.
  uint32_t fi = 0;
  uint32_t got = xsk_ring_prod__reserve(&m.fq, n, &fi);
  const uint64_t mask = ~uint64_t(frame_size_ - 1);
  for (uint32_t i = 0; i < n; ++i) {
    uint64_t addr = xsk_ring_cons__rx_desc(&m.rx, idx + i)->addr & mask;
    if (i < got)
      *xsk_ring_prod__fill_addr(&m.fq, fi + i) = addr;
    else
      m.free.push_back(addr);
  }
  xsk_ring_prod__submit(&m.fq, got);
  xsk_ring_cons__release(&m.rx, n);
}

uint32_t XskPort::reserve(uint32_t n) {
  Impl& m = *impl_;
  if (m.free.size() < n) m.reclaim();
  n = std::min<uint32_t>(n, uint32_t(m.free.size()));
  m.tx_reserved = n ? xsk_ring_prod__reserve(&m.tx, n, &m.tx_idx) : 0;
  m.tx_put = 0;
  return m.tx_reserved;
}

void XskPort::put(const uint8_t* data, uint32_t len) {
  Impl& m = *impl_;
  uint64_t addr = m.free.back();
  m.free.pop_back();
  std::memcpy(m.at(addr), data, len);
  xdp_desc* d = xsk_ring_prod__tx_desc(&m.tx, m.tx_idx + m.tx_put++);
  d->addr = addr;
  d->len = len;
  d->options = 0;
}

void XskPort::flush() {
  Impl& m = *impl_;
  if (m.tx_put) xsk_ring_prod__submit(&m.tx, m.tx_put);
  m.tx_reserved = m.tx_put = 0;
  // Copy mode sends at most 32 frames a call: call until the ring drains
  // or the kernel stops taking them.
  for (int i = 0; i < 64; ++i) {
    uint32_t before = tx_pending();
    if (before == 0) break;
    kick();
    if (tx_pending() >= before) break;
  }
  m.reclaim();
}

uint32_t XskPort::tx_room() {
  Impl& m = *impl_;
  m.reclaim();
  return std::min<uint32_t>(uint32_t(m.free.size()), xsk_prod_nb_free(&m.tx, m.tx.size));
}

uint32_t XskPort::tx_pending() {
  Impl& m = *impl_;
  return m.tx.size - xsk_prod_nb_free(&m.tx, m.tx.size);
}

void XskPort::kick() {
  Impl& m = *impl_;
  if (!xsk_ring_prod__needs_wakeup(&m.tx)) return;
  // EAGAIN/EBUSY (the completion ring is full, the driver busy) and
  // ENOBUFS: the frames stay queued and the next kick sends them.
  if (sendto(m.fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0 && errno == EAGAIN) m.reclaim();
}

XdpStats XskPort::stats() const {
  XdpStats s;
  if (!impl_ || impl_->fd < 0) return s;
  xdp_statistics st{};
  socklen_t len = sizeof st;
  if (getsockopt(impl_->fd, SOL_XDP, XDP_STATISTICS, &st, &len) != 0) return s;
  s.rx_dropped = st.rx_dropped;
  s.rx_invalid = st.rx_invalid_descs;
  s.tx_invalid = st.tx_invalid_descs;
  if (len >= sizeof st) {
    s.rx_ring_full = st.rx_ring_full;
    s.rx_fill_empty = st.rx_fill_ring_empty_descs;
  }
  return s;
}

#else  // built without libxdp

struct XskPort::Impl {};

std::shared_ptr<XskPort> XskPort::acquire(const std::string& who, const XdpOptions&, bool) {
  throw std::runtime_error(
      fmt::format("{}: this Shoal was built without AF_XDP (install libxdp-dev and libbpf-dev, then rebuild)", who));
}
void XskPort::open(const std::string&, const XdpOptions&, bool) {}
XskPort::~XskPort() = default;
void XskPort::close() {}
uint32_t XskPort::rx_peek(uint32_t, uint32_t&) { return 0; }
uint32_t XskPort::rx_ready() { return 0; }
const uint8_t* XskPort::rx_frame(uint32_t, uint32_t& len) { return len = 0, nullptr; }
void XskPort::rx_release(uint32_t, uint32_t) {}
uint32_t XskPort::reserve(uint32_t) { return 0; }
void XskPort::put(const uint8_t*, uint32_t) {}
void XskPort::flush() {}
uint32_t XskPort::tx_room() { return 0; }
uint32_t XskPort::tx_pending() { return 0; }
void XskPort::kick() {}
XdpStats XskPort::stats() const { return {}; }

#endif

uint64_t XskPort::kernel_drops() const {
  XdpStats s = stats();
  return s.rx_dropped + s.rx_ring_full + s.rx_fill_empty;
}

std::string XskPort::mode_text() const {
  const char* copy = zero_copy_ ? "zero-copy" : "copy";
  if (!rx_) return fmt::format("send only (no XDP program), {}", copy);
  return fmt::format("{} XDP, {}", native_ ? "native" : "generic", copy);
}

}  // namespace shoal::io
