// KernelTun: a Linux TUN device (IFF_TUN, no packet information) made when
// the router starts, given ADDR/MASK, the MTU and IFF_UP by ioctl (and a
// default route through GATEWAY), closed (so gone) when it ends. What the
// host's stack routes to it leaves output 0 as IP packets; what is pushed or
// pulled in goes to the host's stack.
//
// Every worker's copy writes through the one descriptor (a TUN write is one
// packet, atomic); the home worker's copy reads. A hot swap's KernelTun of
// the same name and settings keeps the old one's device, so the interface,
// its address and routes stay up across the swap.
#include "shoal/elements/io/kerneltun.hh"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "shoal/core/runtime.hh"
#include "shoal/core/worker.hh"

namespace shoal {

namespace {
std::string tun_io_error(const std::string& what) { return fmt::format("{}: {}", what, std::strerror(errno)); }
}  // namespace

bool KernelTun::parse_prefix(std::string_view text, uint32_t& addr, uint32_t& mask) {
  // Click's IPPrefixArg: "ADDR/LEN", "ADDR/MASK" or "ADDR MASK".
  std::string p(trim(text));
  if (auto sp = p.find_first_of(" \t"); sp != std::string::npos && p.find('/') == std::string::npos)
    p = p.substr(0, sp) + "/" + std::string(trim(std::string_view(p).substr(sp)));
  return parse_ipv4_prefix(p, addr, mask);
}

void KernelTun::check_settings(Args& a) {
  if (tun_.gw && (tun_.gw & tun_.mask) != (tun_.addr & tun_.mask))
    a.fail("bad GATEWAY: it is not on the device's network");
  if (tun_.mtu < 20 || tun_.mtu + 14 > PacketPool::kMaxFrame) a.fail("MTU must be 20 to 65535");
  if (burst_ < 1) a.fail("BURST must be at least 1");
  if (headroom_ > 8192) a.fail("HEADROOM too big (at most 8192)");
  if (tun_.devname.size() >= 16) a.fail(fmt::format("DEVNAME '{}' is longer than 15 characters", tun_.devname));
  if (tun_.ether && !tun_.tap) a.fail("ETHER needs a TAP device (KernelTap, or TAP true)");
}

void KernelTun::configure(Args& a) {
  std::string prefix;
  IPv4Addr gw;
  a.read_mp("ADDR", prefix).read_p("GATEWAY", gw).read("TAP", tun_.tap).read("DEVNAME", tun_.devname);
  a.read("DEV_NAME", tun_.devname).read("ETHER", tun_.ether).read("MTU", tun_.mtu).read("BURST", burst_);
  a.read("HEADROOM", headroom_).read("IGNORE_QUEUE_OVERFLOWS", ignore_overflows_);
  a.complete();
  if (!parse_prefix(prefix, tun_.addr, tun_.mask))
    a.fail(fmt::format("ADDR '{}' is not an IPv4 address and prefix", prefix));
  tun_.gw = gw.host();
  check_settings(a);
}

void KernelTun::initialize() {
  r_not_ip_ = add_drop_reason("not-ip");
  r_no_ip_header_ = add_drop_reason("no-ip-header");
  r_mtu_ = add_drop_reason("exceeds-mtu");
  r_short_ = add_drop_reason("too-short");
  r_send_ = add_drop_reason("send-error");
  if (Runtime* old = worker().runtime().replacing(); old && worker().id() < old->nworkers())
    if (auto* o = dynamic_cast<KernelTun*>(old->router(worker().id()).find(name()));
        o && o->dev_ && o->device_key() == device_key() && o->tun_.key() == tun_.key())
      dev_ = o->dev_;
  if (!dev_) dev_ = shared_state_named<TunDevice>(this, device_key());
  {
    std::lock_guard<std::mutex> g(dev_->mu);
    if (const std::string& err = dev_->open(tun_); !err.empty()) throw std::runtime_error(err);
  }
  reader_ = noutputs() > 0 && on_home_thread();
  bool pulls = ninputs() > 0 && input_proc(0) == Proc::Pull;
  if (pulls) pt_.init(this, burst_);
  if (reader_ || pulls) {
    add_task();
    set_task_active(true);
  }
  // The reader sleeps while the device has nothing; the worker wakes it.
  selecting_ = reader_ && worker().add_select(dev_->fd, this);
}

void KernelTun::cleanup() {
  if (selecting_) worker().remove_select(dev_->fd, this);
  dev_.reset();
}

void KernelTun::push(int, PacketBatch* b) {
  b->for_each([&](uint32_t, Packet* p) { write(p); });
  recycle(b);
}

bool KernelTun::run_task() {
  bool did = reader_ && read_some() > 0;
  bool pulls = ninputs() > 0 && input_proc(0) == Proc::Pull;
  // Nothing to read and nothing to pull: asleep until the device has a
  // packet (Worker::add_select).
  if (selecting_ && !did && !pulls) set_task_active(false);
  if (pulls) {
    // The reader's task stays scheduled to read; another copy's sleeps on
    // the upstream notifier.
    PacketBatch* b = reader_ ? input_pull(0, burst_) : pt_.pull();
    if (b) {
      push(0, b);
      did = true;
    }
  }
  return did;
}

uint32_t KernelTun::read_some() {
  selected_.add();
  uint32_t mtu_in = tun_.mtu + (tun_.tap ? 14 : 0), n = 0;
  PacketBatch* out0 = nullptr;
  PacketBatch* out1 = nullptr;
  uint64_t now = 0;
  while (n < burst_ && !(out0 && out0->full()) && !(out1 && out1->full())) {
    Packet* p = worker().pool().alloc(mtu_in);
    if (!p) break;  // no buffer: the frame waits in the device's queue
    ssize_t got = ::read(dev_->fd, p->data(), mtu_in);
    if (got <= 0) {
      worker().pool().free(p);
      if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
          !(ignore_overflows_ && errno == ENOBUFS))
        run_error(tun_io_error(fmt::format("reading {}", dev_->name)), false);
      break;
    }
    ++n;
    received(1);
    packets_.add();
    p->take(mtu_in - uint32_t(got));
    if (!now) now = realtime_ns();
    p->set_timestamp_ns(now);
    bool ip = true;
    if (tun_.tap) {
      p->set_mac_header(0);
      if (mark_ip_ && got >= 34 && p->data()[12] == 0x08 && p->data()[13] == 0x00) {
        p->set_network_header(14);  // (FromHost, as Click's)
        std::memcpy(p->anno().dst_ip, p->data() + 14 + 16, 4);
      }
    } else {
      uint8_t v = p->data()[0] >> 4;
      ip = (v == 4 && got >= 20) || (v == 6 && got >= 40);
      if (ip) p->set_network_header(0);
    }
    if (ip) {
      if (!out0) out0 = new_batch();
      out0->append(p);
    } else if (noutputs() > 1) {
      if (!out1) out1 = new_batch();
      out1->append(p);
    } else {
      drop(p, r_not_ip_);
    }
  }
  if (out0) output_push(0, out0);
  if (out1) output_push(1, out1);
  return n;
}

void KernelTun::write(Packet* p) {
  uint32_t len;
  if (tun_.tap) {
    if (p->length() < 14) return drop(p, r_short_);
    len = p->length() - 14;
  } else {
    // IP from the network header on; what comes before it is taken off.
    if (!p->has_network_header() || p->network_header_offset() < 0 ||
        uint64_t(p->network_header_offset()) + 20 > p->length())
      return drop(p, r_no_ip_header_);
    p->pull(uint32_t(p->network_header_offset()));
    uint8_t v = p->data()[0] >> 4;
    if (v != 4 && v != 6) return drop(p, r_not_ip_);
    len = p->length();
  }
  if (len > tun_.mtu) return drop(p, r_mtu_);
  for (;;) {
    ssize_t w = ::write(dev_->fd, p->data(), p->length());
    if (w == ssize_t(p->length())) break;
    if (w < 0 && errno == EINTR) continue;
    if (!(ignore_overflows_ && w < 0 && (errno == ENOBUFS || errno == EAGAIN)) && !write_error_reported_) {
      write_error_reported_ = true;
      run_error(w < 0 ? tun_io_error(fmt::format("writing {}", dev_->name)) : "short write", false);
    }
    return drop(p, r_send_);
  }
  sent_.add();
  sent(p);
}

void KernelTun::add_handlers() {
  add_read_handler("dev_name", [this] { return dev_ ? dev_->name : std::string(); });
  add_stat_handler("packets", packets_);
  add_stat_handler("sent", sent_);
  add_stat_handler("selected_calls", selected_);
}

SHOAL_ELEMENT(
    KernelTun, .name = "KernelTun", .ports = "0-1/1-2", .processing = "a/h",
    .summary = "hands IP packets to the host's own stack through a TUN device, and takes what it routes there",
    .description =
        "Makes a Linux TUN device (DEVNAME, or the next free tunN) and gives it the address ADDR with netmask "
        "MASK, the MTU, and IFF_UP; with GATEWAY (on that network), a default route through it. The host then "
        "routes to KernelTun what it sends to ADDR/MASK's other addresses (what it sends to ADDR itself it keeps): "
        "those IP packets leave output 0, with the network header set and the time they were read. A frame that "
        "is not IPv4 or IPv6 leaves output 1, or is dropped ('not-ip') without one. Packets pushed or pulled in "
        "go to the host's stack: IP from the network header on (what comes before it, an Ethernet header say, is "
        "taken off); a packet with no network header is dropped ('no-ip-header'), one longer than MTU "
        "('exceeds-mtu'), and one the device refuses ('send-error', reported once unless IGNORE_QUEUE_OVERFLOWS). "
        "The device is gone when the router ends. Making it needs CAP_NET_ADMIN; without it, or without the "
        "kernel's tun module, the router does not start. With several workers, every copy writes through the one "
        "device and the element's home worker reads it. A hot swap to a KernelTun of the same name and settings "
        "keeps the device (with its routes).",
    .args = {{"ADDR", "IPv4 prefix", "the host's address on the device and its network: ADDR/LEN or ADDR/MASK"},
             {"GATEWAY", "IPv4 address", "add a default route through this address (on ADDR's network)"},
             {"TAP", "boolean", "a TAP device: Ethernet frames, as KernelTap (default false)"},
             {"DEVNAME", "string", "the device's name (default: the kernel picks tunN or tapN)"},
             {"DEV_NAME", "string", "the same as DEVNAME (Click's older name)"},
             {"ETHER", "Ethernet address", "the TAP device's Ethernet address (default: the kernel's random one)"},
             {"MTU", "unsigned", "the device's MTU, without link headers (default 1500)"},
             {"BURST", "unsigned", "packets read, or pulled, per task run (default 32)"},
             {"HEADROOM", "unsigned", "accepted for Click compatibility (Shoal's packets have headroom)"},
             {"IGNORE_QUEUE_OVERFLOWS", "boolean",
              "do not report a full device queue (ENOBUFS); the packets are still counted drops"}},
    .handlers = {{"dev_name", "r", "the device's name"},
                 {"packets", "r", "packets read from the device"},
                 {"sent", "r", "packets written to the device"},
                 {"selected_calls", "r", "times the device was read"}},
    .example =
        "tun :: KernelTun(10.77.0.1/24);\ntun -> IPClassifier(icmp type echo) -> ICMPPingResponder -> tun;\n"
        "// ping 10.77.0.2: Shoal answers");

}  // namespace shoal
