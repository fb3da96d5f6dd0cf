// RawSocket: IPv4 packets through a raw socket of one protocol (the host's
// own addresses and routes), as Click's user-level RawSocket.
//
// One socket for every worker's copy, made at start and closed at the end:
// the home worker reads, every copy sends (a raw send is one packet).
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>

#include "shoal/core/runtime.hh"
#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

namespace {
std::string raw_socket_error(const std::string& what) { return fmt::format("{}: {}", what, std::strerror(errno)); }
}  // namespace

// The socket the copies share; and, for TCP and UDP with a PORT, a socket
// bound to that port, so the host's stack treats the port as taken (as
// Click's does).
struct RawSocketFd {
  std::mutex mu;
  int fd = -1, port_fd = -1;
  ~RawSocketFd() {
    if (fd >= 0) ::close(fd);
    if (port_fd >= 0) ::close(port_fd);
  }
  // Empty, or why the socket could not be made.
  std::string open(int proto, uint16_t port) {
    if (fd >= 0) return {};
    fd = ::socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
    if (fd < 0) return raw_socket_error("socket");
    int one = 1;
    if (::setsockopt(fd, IPPROTO_IP, IP_HDRINCL, &one, sizeof one) < 0) return raw_socket_error("IP_HDRINCL");
    if (::setsockopt(fd, SOL_SOCKET, SO_BROADCAST, &one, sizeof one) < 0) return raw_socket_error("SO_BROADCAST");
    if (port && (proto == IPPROTO_TCP || proto == IPPROTO_UDP)) {
      port_fd = ::socket(AF_INET, (proto == IPPROTO_UDP ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC, proto);
      if (port_fd < 0) return raw_socket_error("socket");
      sockaddr_in sin{};
      sin.sin_family = AF_INET;
      sin.sin_port = htons(port);
      if (::bind(port_fd, reinterpret_cast<sockaddr*>(&sin), sizeof sin) < 0)
        return raw_socket_error(fmt::format("binding port {}", port));
    }
    return {};
  }
};

class RawSocket : public Element {
 public:
  void configure(Args& a) override {
    std::string type, port;
    a.read_mp("TYPE", type).read_p("PORT", port).read("SNAPLEN", snaplen_).read("HEADROOM", headroom_);
    a.read("BURST", burst_);
    a.complete();
    uint8_t p;
    std::string lower(trim(type));
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    if (!parse_ip_proto(lower, p)) a.fail(fmt::format("TYPE: '{}' is not an IP protocol", type));
    proto_ = p;
    if (!port.empty()) {
      uint64_t n;
      bool ok = proto_ == IPPROTO_TCP || proto_ == IPPROTO_UDP ? parse_port(trim(port), proto_, port_)
                                                               : parse_uint(trim(port), n) && n <= 0xffff;
      if (!ok) a.fail(fmt::format("PORT: '{}' is not a port", port));
      if (proto_ != IPPROTO_TCP && proto_ != IPPROTO_UDP) port_ = uint16_t(n);
    }
    if (snaplen_ < 20 || snaplen_ > 65535) a.fail("SNAPLEN must be 20 to 65535");
    if (burst_ < 1) a.fail("BURST must be at least 1");
  }
  void initialize() override {
    r_runt_ = add_drop_reason("runt");
    r_send_ = add_drop_reason("send-error");
    sock_ = shared_state<RawSocketFd>(this);
    {
      std::lock_guard<std::mutex> g(sock_->mu);
      if (std::string err = sock_->open(proto_, port_); !err.empty()) throw std::runtime_error(err);
    }
    reader_ = noutputs() > 0 && on_home_thread();
    bool pulls = ninputs() > 0 && input_proc(0) == Proc::Pull;
    if (pulls) pt_.init(this, burst_);
    if (reader_ || pulls) {
      add_task();
      set_task_active(true);
    }
    // The reader sleeps while the socket has nothing; the worker wakes it.
    selecting_ = reader_ && worker().add_select(sock_->fd, this);
  }
  void cleanup() override {
    if (selecting_) worker().remove_select(sock_->fd, this);
    sock_.reset();
  }
  void push(int, PacketBatch* b) override {
    b->for_each([&](uint32_t, Packet* p) { send(p); });
    recycle(b);
  }
  bool run_task() override {
    bool did = reader_ && read_some() > 0;
    bool pulls = ninputs() > 0 && input_proc(0) == Proc::Pull;
    if (selecting_ && !did && !pulls) set_task_active(false);  // until the socket has a packet
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
  void add_handlers() override {
    add_stat_handler("packets", packets_);
    add_stat_handler("sent", sent_);
  }

 private:
  // What the host hands the socket: every IPv4 packet of the protocol it
  // receives, header included, cut to SNAPLEN.
  uint32_t read_some() {
    uint32_t n = 0;
    PacketBatch* out = nullptr;
    while (n < burst_ && !(out && out->full())) {
      Packet* p = worker().pool().alloc(snaplen_);
      if (!p) break;  // no buffer: the packet waits in the socket
      ssize_t got = ::recv(sock_->fd, p->data(), snaplen_, MSG_TRUNC);
      if (got <= 0) {
        worker().pool().free(p);
        if (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
          run_error(raw_socket_error("recv"), false);
        break;
      }
      ++n;
      received(1);
      packets_.add();
      if (uint32_t(got) < snaplen_) p->take(snaplen_ - uint32_t(got));
      p->set_timestamp_ns(realtime_ns());
      p->set_network_header(0);
      if (p->length() >= 20) std::memcpy(p->anno().dst_ip, p->data() + 16, 4);
      if (!out) out = new_batch();
      out->append(p);
    }
    if (out) output_push(0, out);
    return n;
  }
  // An IPv4 packet (from the network header, else from the start) to its
  // destination; the kernel fills a zero ID and checksum.
  void send(Packet* p) {
    if (p->has_network_header() && p->network_header_offset() > 0 && uint64_t(p->network_header_offset()) < p->length())
      p->pull(uint32_t(p->network_header_offset()));
    if (p->length() < 20 || (p->data()[0] >> 4) != 4) return drop(p, r_runt_);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    std::memcpy(&sin.sin_addr, p->data() + 16, 4);
    for (;;) {
      ssize_t w = ::sendto(sock_->fd, p->data(), p->length(), 0, reinterpret_cast<sockaddr*>(&sin), sizeof sin);
      if (w == ssize_t(p->length())) break;
      if (w < 0 && errno == EINTR) continue;
      if (!send_error_reported_) {
        send_error_reported_ = true;
        run_error(w < 0 ? raw_socket_error("sendto") : "short send", false);
      }
      return drop(p, r_send_);
    }
    sent_.add();
    sent(p);
  }

  std::shared_ptr<RawSocketFd> sock_;
  int proto_ = 0;
  uint16_t port_ = 0;
  uint32_t snaplen_ = 2048, headroom_ = 0, burst_ = 32;
  bool reader_ = false, send_error_reported_ = false, selecting_ = false;
  PullTask pt_;
  uint16_t r_runt_ = 0, r_send_ = 0;
  Stat packets_, sent_;
};
SHOAL_ELEMENT(
    RawSocket, .name = "RawSocket", .ports = "0-1/0-1", .processing = "a/h",
    .summary = "sends and receives IPv4 packets of one protocol through a raw socket",
    .description =
        "Click's RawSocket: a raw IPv4 socket (IP_HDRINCL, broadcast allowed) of protocol TYPE (TCP, UDP, ICMP, "
        "GRE, or a number). Output 0: every packet of that protocol the host receives (a copy; the host's stack "
        "still answers it), IP header first, cut to SNAPLEN, with the network header, DST_IP and the time it was "
        "read. Input: IPv4 packets (from the network header on) sent through the host's routes to their "
        "destination as they are (the kernel fills a zero IP ID and the header checksum); fewer than 20 bytes "
        "or not IPv4: dropped ('runt'); refused by the kernel: dropped ('send-error', reported once). For TCP and "
        "UDP, PORT binds an ordinary socket to that port, so the host does not answer it itself (no ICMP port "
        "unreachable for UDP), as Click's does. Needs CAP_NET_RAW; without it the router does not start. With "
        "several workers, one socket: the home worker reads, every copy sends.",
    .args = {{"TYPE", "IP protocol", "TCP, UDP, ICMP, GRE or a number, mandatory"},
             {"PORT", "port", "for TCP and UDP, a port to hold with a bound socket"},
             {"SNAPLEN", "unsigned", "largest packet read (default 2048)"},
             {"HEADROOM", "unsigned", "accepted for Click compatibility (Shoal's packets have headroom)"},
             {"BURST", "unsigned", "packets read, or pulled, per task run (default 32)"}},
    .handlers = {{"packets", "r", "packets read"}, {"sent", "r", "packets sent"}},
    .example = "r :: RawSocket(UDP, 5353) -> IPPrint(in) -> IPMirror -> r;");

}  // namespace shoal
