// McastSocket: Click's multicast UDP transport. Packets pushed in are sent
// as datagrams to MCASTIP:MCASTPORT; datagrams received on that group come
// out of output 0. With SOURCEIP, the sending socket is bound to it (and the
// group joined on that interface), and datagrams this element sent itself
// are filtered out when the group loops them back.
//
// Shoal runs a copy of the graph per worker: every copy sends what it is
// given through a socket of its own; one copy (the element's home worker)
// receives, since every socket joined to a group gets every datagram.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "shoal/core/runtime.hh"
#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

namespace {
// The ports every copy of an element sends from (a router's copies filter
// each other's looped-back datagrams as their own).
struct OwnPorts {
  std::mutex mu;
  std::map<std::pair<const Runtime*, std::string>, std::set<uint16_t>> ports;
};
OwnPorts& own_ports() {
  static OwnPorts o;
  return o;
}
}  // namespace

class McastSocket : public Element {
 public:
  ~McastSocket() override { close_all(); }

  void configure(Args& a) override {
    IPv4Addr group, source;
    uint16_t group_port = 0, source_port = 0;
    std::string gport, sport;
    a.read_mp("MCASTIP", group).read_mp("MCASTPORT", gport);
    a.read_p("SOURCEIP", source).read_p("SOURCEPORT", sport);
    a.read("SNAPLEN", snaplen_).read("HEADROOM", headroom_).read("TIMESTAMP", timestamp_);
    a.read("RCVBUF", rcvbuf_).read("SNDBUF", sndbuf_).read("LOOP", loop_).read("BURST", burst_);
    a.complete();
    if (!parse_port(trim(gport), IPPROTO_UDP, group_port)) a.fail(fmt::format("bad MCASTPORT '{}'", gport));
    if (!sport.empty() && !parse_port(trim(sport), IPPROTO_UDP, source_port))
      a.fail(fmt::format("bad SOURCEPORT '{}'", sport));
    if ((group.b[0] & 0xf0) != 0xe0) a.fail(fmt::format("MCASTIP {} is not a multicast address", ip_text(group)));
    if (snaplen_ < 1 || snaplen_ > 65535) a.fail("SNAPLEN must be 1 to 65535");
    if (burst_ < 1) a.fail("BURST must be at least 1");
    group_ = sockaddr_in{};
    group_.sin_family = AF_INET;
    group_.sin_port = htons(group_port);
    std::memcpy(&group_.sin_addr, group.b.data(), 4);
    source_ = sockaddr_in{};
    source_.sin_family = AF_INET;
    source_.sin_port = htons(source_port);
    std::memcpy(&source_.sin_addr, source.b.data(), 4);  // 0.0.0.0: none
  }

  void initialize() override {
    r_send_ = add_drop_reason("send-error");
    r_pool_ = add_drop_reason("pool-empty");
    if (ninputs() > 0) open_sender();
    if (noutputs() > 0 && on_home_thread()) {
      open_receiver();
      add_task();
      set_task_active(true);
    }
  }

  void cleanup() override { close_all(); }

  void push(int, PacketBatch* b) override {
    b->for_each([&](uint32_t, Packet* p) {
      if (send_fd_ >= 0 && send(p)) {
        sent_.add();
        sent(p);
      } else {
        drop(p, r_send_);
      }
    });
    recycle(b);
  }

  // Reads the datagrams waiting (at most BURST, at most a batch) and pushes them out.
  bool run_task() override {
    if (recv_fd_ < 0) return false;
    PacketBatch* b = nullptr;
    for (uint32_t i = 0; i < burst_ && !(b && b->full()); ++i) {  // (a batch smaller than BURST: the rest waits)
      sockaddr_in from{};
      socklen_t flen = sizeof from;
      ssize_t n = recvfrom(recv_fd_, buf_.data(), buf_.size(), MSG_TRUNC, reinterpret_cast<sockaddr*>(&from), &flen);
      if (n < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
          run_error(fmt::format("receive: {}", std::strerror(errno)));
          ::close(recv_fd_);
          recv_fd_ = -1;
          set_task_active(false);
        }
        break;
      }
      if (own(from)) continue;  // our own traffic, looped back
      uint32_t len = uint32_t(std::min<ssize_t>(n, snaplen_));
      if (uint32_t(n) > len) truncated_.add();
      Packet* p = worker().pool().make(buf_.data(), len);
      if (!p) {
        count_lost(r_pool_);  // a datagram that found no packet buffer
        continue;
      }
      received(1);
      if (timestamp_) p->set_timestamp_ns(realtime_ns());
      if (!b) b = new_batch();
      b->append(p);
    }
    if (!b) return false;
    received_.add(b->live());
    output_push(0, b);
    return true;
  }

  void add_handlers() override {
    add_stat_handler("sent", sent_);
    add_stat_handler("received", received_);
    add_stat_handler("truncated", truncated_);
    add_read_handler("source_port", [this] { return std::to_string(ntohs(source_.sin_port)); });
  }

 private:
  static std::string ip_text(const IPv4Addr& a) { return fmt::format("{}.{}.{}.{}", a.b[0], a.b[1], a.b[2], a.b[3]); }
  std::pair<const Runtime*, std::string> key() const { return {&worker().runtime(), name()}; }

  [[noreturn]] void fail_sys(const char* what) {
    int e = errno;
    close_all();
    throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(e)));
  }
  void set_int(int fd, int level, int opt, int v, const char* what) {
    if (setsockopt(fd, level, opt, &v, sizeof v) < 0) fail_sys(what);
  }

  void open_sender() {
    send_fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
    if (send_fd_ < 0) fail_sys("socket");
    if (sndbuf_ >= 0) set_int(send_fd_, SOL_SOCKET, SO_SNDBUF, sndbuf_, "setsockopt(SO_SNDBUF)");
    if (source_.sin_addr.s_addr) {
      // Copies on other workers share a given SOURCEPORT.
      if (source_.sin_port) set_int(send_fd_, SOL_SOCKET, SO_REUSEPORT, 1, "setsockopt(SO_REUSEPORT)");
      sockaddr_in s = source_;
      if (bind(send_fd_, reinterpret_cast<sockaddr*>(&s), sizeof s) < 0) fail_sys("bind");
      socklen_t len = sizeof s;
      if (getsockname(send_fd_, reinterpret_cast<sockaddr*>(&s), &len) < 0) fail_sys("getsockname");
      source_.sin_port = s.sin_port;
      {
        std::lock_guard<std::mutex> g(own_ports().mu);
        own_ports().ports[key()].insert(ntohs(s.sin_port));
      }
      if (setsockopt(send_fd_, IPPROTO_IP, IP_MULTICAST_IF, &source_.sin_addr, sizeof source_.sin_addr) < 0)
        fail_sys("setsockopt(IP_MULTICAST_IF)");
    }
    set_int(send_fd_, IPPROTO_IP, IP_MULTICAST_LOOP, loop_ ? 1 : 0, "setsockopt(IP_MULTICAST_LOOP)");
  }

  void open_receiver() {
    recv_fd_ = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_UDP);
    if (recv_fd_ < 0) fail_sys("socket");
    if (rcvbuf_ >= 0) set_int(recv_fd_, SOL_SOCKET, SO_RCVBUF, rcvbuf_, "setsockopt(SO_RCVBUF)");
    // Other listeners on this machine may share the group's port.
    set_int(recv_fd_, SOL_SOCKET, SO_REUSEADDR, 1, "setsockopt(SO_REUSEADDR)");
    sockaddr_in g = group_;
    if (bind(recv_fd_, reinterpret_cast<sockaddr*>(&g), sizeof g) < 0) fail_sys("bind");
    ip_mreq mreq{};
    mreq.imr_multiaddr = group_.sin_addr;
    mreq.imr_interface = source_.sin_addr;  // the source's interface, or any
    if (setsockopt(recv_fd_, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof mreq) < 0)
      fail_sys("setsockopt(IP_ADD_MEMBERSHIP)");
    buf_.resize(65536);
  }

  // A datagram from one of this element's own sending sockets.
  bool own(const sockaddr_in& from) {
    if (!source_.sin_addr.s_addr || from.sin_addr.s_addr != source_.sin_addr.s_addr) return false;
    std::lock_guard<std::mutex> g(own_ports().mu);
    auto it = own_ports().ports.find(key());
    return it != own_ports().ports.end() && it->second.count(ntohs(from.sin_port));
  }

  // Sends one datagram; a full socket buffer is waited for (as Click's push
  // blocks), at most 100 ms, then the packet is dropped as a send error.
  bool send(const Packet* p) {
    for (int tries = 0; tries < 100; ++tries) {
      ssize_t n =
          sendto(send_fd_, p->data(), p->length(), 0, reinterpret_cast<const sockaddr*>(&group_), sizeof group_);
      if (n == ssize_t(p->length())) return true;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS)) {
        pollfd pfd{send_fd_, POLLOUT, 0};
        poll(&pfd, 1, 1);
        continue;
      }
      if (!send_error_reported_) {
        send_error_reported_ = true;
        run_error(fmt::format("send: {}", n < 0 ? std::strerror(errno) : "short write"), false);
      }
      return false;
    }
    return false;
  }

  void close_all() {
    if (recv_fd_ >= 0) ::close(recv_fd_), recv_fd_ = -1;
    if (send_fd_ >= 0) ::close(send_fd_), send_fd_ = -1;
  }

  sockaddr_in group_{}, source_{};
  int64_t snaplen_ = 2048, headroom_ = 0, rcvbuf_ = -1, sndbuf_ = -1;
  uint32_t burst_ = 32;
  bool timestamp_ = true, loop_ = true, send_error_reported_ = false;
  int send_fd_ = -1, recv_fd_ = -1;
  uint16_t r_send_ = 0, r_pool_ = 0;
  std::vector<uint8_t> buf_;
  Stat sent_, received_, truncated_;
};
SHOAL_ELEMENT(McastSocket, .name = "McastSocket", .ports = "0-1/0-1", .processing = "h/h",
              .summary = "sends and receives packets as multicast UDP datagrams",
              .description =
                  "Packets pushed in are sent as UDP datagrams to MCASTIP:MCASTPORT; datagrams received on that "
                  "group leave output 0 (their payload only), time-stamped when TIMESTAMP is true. With "
                  "SOURCEIP (and SOURCEPORT, by default any), datagrams go out from that address and its "
                  "interface, the group is joined there, and datagrams this element sent itself are filtered "
                  "out when the group loops them back (LOOP, default true: the host's other listeners, and "
                  "this one, hear what it sends). A full socket buffer is waited for up to 100 ms per packet; "
                  "a packet that still cannot go is dropped as 'send-error'. Datagrams longer than SNAPLEN "
                  "are cut (counted by 'truncated'). With several workers each copy sends through its own "
                  "socket and the element's home worker receives.",
              .args = {{"MCASTIP", "IPv4 address", "the multicast group"},
                       {"MCASTPORT", "UDP port", "the group's port"},
                       {"SOURCEIP", "IPv4 address", "local address to send from (and interface to join on)"},
                       {"SOURCEPORT", "UDP port", "local port to send from (default: any)"},
                       {"LOOP", "boolean", "deliver sent datagrams to this host's listeners (default true)"},
                       {"SNAPLEN", "unsigned", "longest datagram kept (default 2048)"},
                       {"TIMESTAMP", "boolean", "time-stamp received packets (default true)"},
                       {"RCVBUF", "integer", "receive socket buffer (bytes)"},
                       {"SNDBUF", "integer", "send socket buffer (bytes)"},
                       {"BURST", "unsigned", "datagrams read per task run (default 32)"},
                       {"HEADROOM", "unsigned", "accepted for Click compatibility"}},
              .handlers = {{"sent", "r", "datagrams sent"},
                           {"received", "r", "datagrams received (own traffic excluded)"},
                           {"truncated", "r", "datagrams cut to SNAPLEN"},
                           {"source_port", "r", "the port datagrams are sent from (SOURCEIP given)"}},
              .example =
                  "RatedSource(\"hello\", LIMIT 5) -> McastSocket(233.252.0.1, 1234, 127.0.0.1) -> "
                  "Print(got, CONTENTS ASCII) -> Discard;");

}  // namespace shoal
