// Socket: Click's user-level socket transport. Packets pushed or pulled in
// are sent to a TCP, UDP or UNIX-domain peer; what the peer sends leaves
// output 0 (a stream, a read at a time; datagrams, one packet each).
//
// One socket per element, shared by every worker's copy: the home worker's
// copy accepts, connects and reads; every copy writes, a whole packet at a
// time under the connection's lock (a stream's packets never interleave).
// A push waits for a full socket, as Click's blocks, until the router stops;
// a pull input is pulled only while the socket takes more.
#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <utility>

#include "shoal/core/runtime.hh"
#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"

namespace shoal {

namespace {

std::string socket_error(const std::string& what) { return fmt::format("{}: {}", what, std::strerror(errno)); }

// The socket, shared by the copies of one element (and by its successor
// across a hot swap of the same settings).
struct SocketConn {
  std::mutex mu;  // opening, writing, and changing `active` or `remote`
  bool tried = false;
  std::string error;
  int fd = -1;                  // the socket (a stream server's listening one)
  std::atomic<int> active{-1};  // the one data goes through
  sockaddr_storage remote{};    // where writes go (a datagram server: the last sender)
  socklen_t remote_len = 0;
  bool have_remote = false;
  std::string unlink_path;  // a UNIX server's bound file
  ~SocketConn() {
    int a = active.load();
    if (a >= 0 && a != fd) ::close(a);
    if (fd >= 0) ::close(fd);
    if (!unlink_path.empty()) ::unlink(unlink_path.c_str());
  }
  // The copy that reads, whose task may sleep on `active`: woken when
  // another copy closes it (mu held to change).
  Element* reader = nullptr;
  void close_active() {  // (mu held)
    int a = active.exchange(-1);
    if (a >= 0 && a != fd) ::close(a);
    if (Element* r = reader) r->worker().post([r] { r->wake_task(); });
  }
};

}  // namespace

class Socket : public Element {
 public:
  void configure(Args& a) override {
    std::string type;
    a.read_mp("TYPE", type);
    for (char& c : type) c = char(std::toupper(uint8_t(c)));
    // (the keywords first: the documentation probe reaches them with no TYPE)
    a.read("CLIENT", client_).read("SNAPLEN", snaplen_).read("NODELAY", nodelay_).read("SNDBUF", sndbuf_);
    a.read("RCVBUF", rcvbuf_).read("TIMESTAMP", timestamp_).read("ALLOW", allow_).read("DENY", deny_);
    a.read("VERBOSE", verbose_).read("PROPER", proper_).read("HEADROOM", headroom_).read("BURST", burst_);
    a.read("CONNECT_TIMEOUT", connect_timeout_);
    Args::note_keyword("FILENAME");  // (the other type's arguments, for the probe)
    Args::note_keyword("LOCALFILENAME");
    if (type != "UNIX" && type != "UNIX_DGRAM") {
      IPv4Addr ip, lip;
      std::string port, lport;
      a.read_mp("ADDR", ip).read_mp("PORT", port).read_p("LOCALADDR", lip).read_p("LOCALPORT", lport);
      uint16_t p = 0, lp = 0;
      int proto = type == "TCP" ? IPPROTO_TCP : IPPROTO_UDP;
      if (!parse_port(trim(port), proto, p)) a.fail(fmt::format("bad PORT '{}'", port));
      if (!lport.empty() && !parse_port(trim(lport), proto, lp)) a.fail(fmt::format("bad LOCALPORT '{}'", lport));
      local_given_ = a.has("LOCALADDR") || a.has("LOCALPORT") || !lport.empty() || lip.host();
      remote_ip_zero_ = ip.host() == 0;
      set_inet(remote_, remote_len_, ip, p);
      set_inet(local_, local_len_, lip, lp);
      family_ = AF_INET;
      stream_ = type == "TCP";
      if (type != "TCP" && type != "UDP")
        a.fail(fmt::format("unknown socket type '{}' (TCP, UDP, UNIX or UNIX_DGRAM)", type));
    } else {
      std::string file, lfile;
      a.read_mp("FILENAME", file).read_p("LOCALFILENAME", lfile);
      if (!set_unix(remote_, remote_len_, file)) a.fail(fmt::format("FILENAME '{}' is empty or too long", file));
      local_given_ = !lfile.empty();
      if (local_given_ && !set_unix(local_, local_len_, lfile))
        a.fail(fmt::format("LOCALFILENAME '{}' is too long", lfile));
      family_ = AF_UNIX;
      stream_ = type == "UNIX";
    }
    a.complete();
    settings_ =
        fmt::format("{}|{}|{}|{}|{}", type, std::string(reinterpret_cast<const char*>(&remote_), remote_len_),
                    std::string(reinterpret_cast<const char*>(&local_), local_len_), bool(client_), local_given_);
    if (snaplen_ < 1 || snaplen_ + 64 > PacketPool::kMaxFrame) a.fail("SNAPLEN must be 1 to 65535");
    if (burst_ < 1) a.fail("BURST must be at least 1");
    if ((!allow_.empty() || !deny_.empty()) && family_ != AF_INET) a.fail("ALLOW and DENY need a TCP or UDP socket");
  }

  void initialize() override {
    r_not_connected_ = add_drop_reason("not-connected");
    r_send_ = add_drop_reason("send-error");
    // Click: no outputs and CLIENT unset means a client; no inputs, a
    // server; a local address makes a client unless CLIENT false.
    if (!client_) client_ = (noutputs() == 0 || local_given_) && ninputs() > 0;
    for (auto [name, el] : {std::pair{&allow_, &allow_el_}, std::pair{&deny_, &deny_el_}})
      if (!name->empty() && !(*el = find_element_from(*this, *name)))
        throw std::runtime_error(fmt::format("no element named '{}' (ALLOW and DENY name route tables)", *name));
    if (Runtime* old = worker().runtime().replacing(); old && worker().id() < old->nworkers())
      if (auto* o = dynamic_cast<Socket*>(old->router(worker().id()).find(name()));
          o && o->conn_ && o->settings_ == settings_ && *o->client_ == *client_)
        conn_ = o->conn_;
    if (!conn_) conn_ = shared_state<SocketConn>(this);
    {
      std::lock_guard<std::mutex> g(conn_->mu);
      if (!conn_->tried) {
        conn_->tried = true;
        conn_->error = open();
      }
      if (!conn_->error.empty()) throw std::runtime_error(conn_->error);
    }
    reader_ = on_home_thread();
    if (reader_) {
      std::lock_guard<std::mutex> g(conn_->mu);
      conn_->reader = this;
    }
    pulls_ = ninputs() > 0 && input_proc(0) == Proc::Pull;
    if (pulls_ && !reader_) pt_.init(this, burst_);
    if (reader_ || pulls_) {
      add_task();
      set_task_active(true);
    }
  }

  void cleanup() override {
    if (watched_ >= 0) worker().remove_select(watched_, this);
    watched_ = -1;
    if (conn_) {
      std::lock_guard<std::mutex> g(conn_->mu);
      if (conn_->reader == this) conn_->reader = nullptr;
    }
    if (pending_) {  // a packet partly written when the router stopped
      drop(pending_, r_send_);
      pending_ = nullptr;
    }
    conn_.reset();
  }

  void push(int, PacketBatch* b) override {
    b->for_each([&](uint32_t, Packet* p) { write_blocking(p); });
    recycle(b);
  }

  bool run_task() override {
    bool did = false;
    if (reader_) did |= read_some();
    if (pulls_) did |= reader_ ? write_pulled() : pull_blocking();
    if (reader_ && !did && !pulls_) sleep_on_socket();
    return did;
  }

  void add_handlers() override {
    add_read_handler("connected", [this] { return conn_ && conn_->active.load() >= 0 ? "true" : "false"; });
    add_stat_handler("sent", sent_);
    add_stat_handler("received", received_);
    add_stat_handler("truncated", truncated_);
    add_stat_handler("connections", connections_);
    add_stat_handler("refused", refused_);
  }

 private:
  static void set_inet(sockaddr_storage& s, socklen_t& len, const IPv4Addr& ip, uint16_t port) {
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_port = htons(port);
    std::memcpy(&in.sin_addr, ip.b.data(), 4);
    std::memcpy(&s, &in, sizeof in);
    len = sizeof in;
  }
  static bool set_unix(sockaddr_storage& s, socklen_t& len, const std::string& path) {
    sockaddr_un un{};
    if (path.empty() || path.size() >= sizeof un.sun_path) return false;
    un.sun_family = AF_UNIX;
    std::memcpy(un.sun_path, path.data(), path.size());
    std::memcpy(&s, &un, sizeof un);
    len = socklen_t(offsetof(sockaddr_un, sun_path) + path.size() + 1);
    return true;
  }
  std::string where(const sockaddr_storage& s) const {
    if (s.ss_family == AF_UNIX) return reinterpret_cast<const sockaddr_un&>(s).sun_path;
    auto& in = reinterpret_cast<const sockaddr_in&>(s);
    return fmt::format("{}:{}", format_ipv4(reinterpret_cast<const uint8_t*>(&in.sin_addr)), ntohs(in.sin_port));
  }

  // Makes, binds, connects or listens (conn_->mu held); an error text.
  std::string open() {
    SocketConn& c = *conn_;
    int type = (stream_ ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC;
    c.fd = socket(family_, type, 0);
    if (c.fd < 0) return socket_error("socket");
    auto opt = [&](int level, int name, int v, const char* what) {
      return setsockopt(c.fd, level, name, &v, sizeof v) < 0 ? socket_error(what) : std::string();
    };
    std::string e;
    if (family_ == AF_INET && stream_ && nodelay_ && !(e = opt(IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY")).empty())
      return e;
    if (sndbuf_ > 0 && !(e = opt(SOL_SOCKET, SO_SNDBUF, int(sndbuf_), "SO_SNDBUF")).empty()) return e;
    if (rcvbuf_ > 0 && !(e = opt(SOL_SOCKET, SO_RCVBUF, int(rcvbuf_), "SO_RCVBUF")).empty()) return e;
    // A server binds the address given; a client its local one, if given.
    const sockaddr_storage* bind_to = *client_ ? (local_given_ ? &local_ : nullptr) : &remote_;
    socklen_t bind_len = *client_ ? local_len_ : remote_len_;
    if (bind_to) {
      if (family_ == AF_INET && !(e = opt(SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR")).empty()) return e;
      if (bind(c.fd, reinterpret_cast<const sockaddr*>(bind_to), bind_len) < 0)
        return socket_error(fmt::format("bind {}", where(*bind_to)));
      if (family_ == AF_UNIX) c.unlink_path = reinterpret_cast<const sockaddr_un*>(bind_to)->sun_path;
    }
    if (*client_) {
      c.remote = remote_;
      c.remote_len = remote_len_;
      c.have_remote = !remote_ip_zero_;
      if (stream_ && !(e = connect_stream()).empty()) return e;
      if (fcntl(c.fd, F_SETFL, O_NONBLOCK) < 0) return socket_error("fcntl");
      c.active = c.fd;
      if (stream_) connections_.add();
    } else {
      if (fcntl(c.fd, F_SETFL, O_NONBLOCK) < 0) return socket_error("fcntl");
      if (stream_) {
        if (listen(c.fd, 2) < 0) return socket_error("listen");
        if (verbose_) fmt::print(stderr, "{}: listening for connections on {}\n", name(), where(remote_));
      } else {
        c.active = c.fd;
      }
    }
    return {};
  }

  // Connects within CONNECT_TIMEOUT (Click's connect blocks).
  std::string connect_stream() {
    int fd = conn_->fd;
    if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0) return socket_error("fcntl");
    if (connect(fd, reinterpret_cast<const sockaddr*>(&remote_), remote_len_) < 0) {
      if (errno != EINPROGRESS) return socket_error(fmt::format("connect to {}", where(remote_)));
      pollfd p{fd, POLLOUT, 0};
      int n = poll(&p, 1, int(connect_timeout_.ns / 1000000));
      int err = 0;
      socklen_t len = sizeof err;
      if (n == 0) return fmt::format("connect to {}: timed out", where(remote_));
      if (n < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0) return socket_error("connect");
      if (err) {
        errno = err;
        return socket_error(fmt::format("connect to {}", where(remote_)));
      }
    }
    if (verbose_) fmt::print(stderr, "{}: opened connection to {}\n", name(), where(remote_));
    return {};
  }

  // Click's ALLOW and DENY: an address a route of ALLOW covers is let in;
  // otherwise one a route of DENY covers is refused.
  bool allowed(const sockaddr_storage& from) {
    if (family_ != AF_INET || (!allow_el_ && !deny_el_)) return true;
    auto& in = reinterpret_cast<const sockaddr_in&>(from);
    std::string addr = format_ipv4(reinterpret_cast<const uint8_t*>(&in.sin_addr));
    auto routed = [&](Element* e, const std::string& what) {
      const Handler* h = e ? e->find_handler("lookup") : nullptr;
      if (e && (!h || !h->read_param)) {
        run_error(fmt::format("{} '{}' is not a route table (it has no 'lookup' handler)", what, e->name()));
        return false;
      }
      return e && h->read_param(addr) != "-1";
    };
    return routed(allow_el_, "ALLOW") || !routed(deny_el_, "DENY");
  }

  // The home worker: accepts a connection when there is none, then reads
  // up to BURST packets.
  bool read_some() {
    SocketConn& c = *conn_;
    bool did = false;
    if (stream_ && !*client_ && c.active.load() < 0) {
      sockaddr_storage from{};
      socklen_t flen = sizeof from;
      int a = accept4(c.fd, reinterpret_cast<sockaddr*>(&from), &flen, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (a < 0) return false;
      if (!allowed(from)) {
        refused_.add();
        if (verbose_) fmt::print(stderr, "{}: refused connection from {}\n", name(), where(from));
        ::close(a);
        return true;
      }
      if (family_ == AF_INET && nodelay_) {
        int one = 1;
        setsockopt(a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      }
      std::lock_guard<std::mutex> g(c.mu);
      c.active = a;
      connections_.add();
      if (verbose_) fmt::print(stderr, "{}: opened connection from {}\n", name(), where(from));
      did = true;
    }
    int fd = c.active.load();
    if (fd < 0 || noutputs() == 0) return did;
    PacketBatch* b = nullptr;
    uint64_t now = 0;
    for (uint32_t i = 0; i < burst_ && !(b && b->full()); ++i) {
      Packet* p = worker().pool().alloc(uint32_t(snaplen_));
      if (!p) break;  // no buffer: the data waits in the socket
      sockaddr_storage from{};
      socklen_t flen = sizeof from;
      ssize_t n = stream_ ? ::read(fd, p->data(), snaplen_)
                          : recvfrom(fd, p->data(), snaplen_, MSG_TRUNC, reinterpret_cast<sockaddr*>(&from), &flen);
      if (n < 0 && errno == EINTR) {
        worker().pool().free(p);
        continue;
      }
      if (n <= 0) {
        worker().pool().free(p);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        if (stream_ || n < 0) lost_connection(n == 0 ? "closed by the peer" : std::strerror(errno));
        if (!stream_ && n == 0) continue;  // an empty datagram: nothing to emit
        break;
      }
      if (!stream_ && !*client_) {
        if (!allowed(from)) {
          worker().pool().free(p);
          refused_.add();
          continue;
        }
        std::lock_guard<std::mutex> g(c.mu);
        std::memcpy(&c.remote, &from, flen);
        c.remote_len = flen;
        c.have_remote = true;
      }
      if (uint64_t(n) > snaplen_) {
        truncated_.add();
        n = ssize_t(snaplen_);
      }
      p->take(uint32_t(snaplen_ - uint64_t(n)));
      if (timestamp_) {
        if (!now) now = realtime_ns();
        p->set_timestamp_ns(now);
      }
      received(1);
      received_.add();
      if (!b) b = new_batch();
      b->append(p);
      did = true;
    }
    if (b) output_push(0, b);
    return did;
  }

  // The reader found nothing: its task sleeps until the descriptor it waits
  // on (a server's listening socket while no one is connected, else the
  // connection) is readable. It polls where there is none, or where it
  // would not read what comes (no output: the connection is only written).
  void sleep_on_socket() {
    int a = conn_->active.load(), fd = -1;
    if (stream_ && !*client_ && a < 0)
      fd = conn_->fd;
    else if (noutputs() > 0)
      fd = a;
    if (fd != watched_) {
      if (watched_ >= 0) worker().remove_select(watched_, this);
      watched_ = fd >= 0 && worker().add_select(fd, this) ? fd : -1;
    }
    if (watched_ >= 0) set_task_active(false);
  }

  void lost_connection(const char* why) {
    std::lock_guard<std::mutex> g(conn_->mu);
    if (verbose_) fmt::print(stderr, "{}: connection {}\n", name(), why);
    if (stream_) conn_->close_active();
  }

  // Writes what it can of p at `done` bytes in, without waiting: the bytes
  // written so far (p->length(): all), or -1 when the connection failed.
  // (conn_->mu held)
  int64_t write_some(Packet* p, uint32_t done) {
    SocketConn& c = *conn_;
    int fd = c.active.load();
    while (done < p->length()) {
      ssize_t n;
      if (stream_) {
        n = ::send(fd, p->data() + done, p->length() - done, MSG_NOSIGNAL);
      } else {
        sockaddr_storage to = c.remote;
        if (*client_ && remote_ip_zero_) {  // Click: to the packet's DST_IP annotation
          auto& in = reinterpret_cast<sockaddr_in&>(to);
          std::memcpy(&in.sin_addr, p->anno().dst_ip, 4);
        }
        n = sendto(fd, p->data(), p->length(), MSG_NOSIGNAL, reinterpret_cast<const sockaddr*>(&to), c.remote_len);
      }
      if (n >= 0) {
        done = stream_ ? done + uint32_t(n) : p->length();
        continue;
      }
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) return done;
      if (!send_error_reported_) {
        send_error_reported_ = true;
        run_error(socket_error(fmt::format("send to {}", where(c.remote))), false);
      }
      if (stream_) c.close_active();
      return -1;
    }
    return done;
  }

  // A packet written whole, waiting (as Click's push blocks) for room until
  // the router stops; dropped when there is no connection or it fails.
  void write_blocking(Packet* p) {
    std::lock_guard<std::mutex> g(conn_->mu);
    if (conn_->active.load() < 0 || (!stream_ && !conn_->have_remote && !(*client_ && remote_ip_zero_)))
      return drop(p, r_not_connected_);
    uint32_t done = 0;
    for (;;) {
      int64_t n = write_some(p, done);
      if (n < 0) return drop(p, r_send_);
      if (n == p->length()) break;
      done = uint32_t(n);
      if (worker().runtime().stopping()) {
        if (stream_ && done) conn_->close_active();  // half a packet sent: the stream is broken
        return drop(p, r_send_);
      }
      pollfd pf{conn_->active.load(), POLLOUT, 0};
      poll(&pf, 1, 50);
    }
    sent_.add();
    sent(p);
  }

  // The home worker's pull: only while the socket takes more; a packet half
  // written waits for the rest.
  bool write_pulled() {
    bool did = false;
    for (uint32_t i = 0; i < burst_; ++i) {
      if (!pending_) {
        if (conn_->active.load() < 0) return did;
        PacketBatch* b = input_pull(0, 1);
        if (!b) return did;
        b->for_each([&](uint32_t, Packet* p) { pending_ = p; });
        recycle(b);
        pending_done_ = 0;
        did = true;
      }
      std::unique_lock<std::mutex> g(conn_->mu);
      if (conn_->active.load() < 0 || (!stream_ && !conn_->have_remote && !(*client_ && remote_ip_zero_))) {
        g.unlock();
        drop(std::exchange(pending_, nullptr), pending_done_ ? r_send_ : r_not_connected_);
        continue;
      }
      int64_t n = write_some(pending_, pending_done_);
      g.unlock();
      if (n < 0) {
        drop(std::exchange(pending_, nullptr), r_send_);
      } else if (n == pending_->length()) {
        sent_.add();
        sent(std::exchange(pending_, nullptr));
        did = true;
      } else {
        pending_done_ = uint32_t(n);
        return did;  // full: the rest when it drains
      }
    }
    return did;
  }

  // Another worker's copy pulls and writes, waiting for room.
  bool pull_blocking() {
    PacketBatch* b = pt_.pull();
    if (!b) return false;
    push(0, b);
    return true;
  }

  int family_ = AF_INET;
  bool stream_ = true, local_given_ = false, remote_ip_zero_ = false;
  sockaddr_storage remote_{}, local_{};
  socklen_t remote_len_ = 0, local_len_ = 0;
  std::optional<bool> client_;
  uint64_t snaplen_ = 2048;
  bool nodelay_ = true, timestamp_ = true, verbose_ = false, proper_ = false;
  int64_t sndbuf_ = 0, rcvbuf_ = 0, headroom_ = 0;
  uint32_t burst_ = 32;
  Duration connect_timeout_{5'000'000'000};
  std::string allow_, deny_, settings_;
  Element* allow_el_ = nullptr;
  Element* deny_el_ = nullptr;
  std::shared_ptr<SocketConn> conn_;
  bool reader_ = false, pulls_ = false, send_error_reported_ = false;
  int watched_ = -1;  // the descriptor the reader's task sleeps on (Worker::add_select)
  PullTask pt_;
  Packet* pending_ = nullptr;
  uint32_t pending_done_ = 0;
  uint16_t r_not_connected_ = 0, r_send_ = 0;
  Stat sent_, received_, truncated_, connections_, refused_;
};
SHOAL_ELEMENT(
    Socket, .name = "Socket", .ports = "0-1/0-1", .processing = "a/h",
    .summary = "sends packets to, and receives them from, a TCP, UDP or UNIX-domain socket",
    .description =
        "Socket(TCP, ADDR, PORT [, LOCALADDR, LOCALPORT]), Socket(UDP, ...), Socket(UNIX, FILENAME [, "
        "LOCALFILENAME]), Socket(UNIX_DGRAM, ...). Packets pushed or pulled in are sent to the peer (a stream's "
        "bytes, or a datagram each); what the peer sends leaves output 0 (a read of up to SNAPLEN bytes each, "
        "or a datagram; longer datagrams are cut and counted by 'truncated'), time-stamped when TIMESTAMP. "
        "A server (the default; a client when CLIENT is true, or when there is no output, or a local address "
        "is given, and there is an input) binds ADDR:PORT or FILENAME: a stream server accepts one connection "
        "at a time and takes the next when it closes; a datagram server sends to whoever sent to it last. A "
        "client binds its local address if given and connects (a stream, within CONNECT_TIMEOUT, or the router "
        "does not start); a UDP client with ADDR 0.0.0.0 sends each packet to its DST_IP annotation. ALLOW and "
        "DENY name route tables (RadixIPLookup and the like): a server refuses a connection or datagram from an "
        "address DENY routes, unless ALLOW routes it ('refused'). A pushed packet waits for room in the socket, "
        "as Click's blocks (until the router stops); a pull input is pulled only while the socket takes more. "
        "A packet with no connection to go to is dropped ('not-connected'); one the socket refuses "
        "('send-error'; a stream then closes). With several workers, every copy writes, a whole packet at a "
        "time, through the one socket; the element's home worker accepts and reads. A hot swap to a Socket of "
        "the same settings keeps the socket and its connection.",
    .args = {{"TYPE", "keyword", "TCP, UDP, UNIX or UNIX_DGRAM"},
             {"ADDR", "IPv4 address", "TCP, UDP: the peer's address (a client), or the address bound (a server)"},
             {"PORT", "TCP or UDP port", "TCP, UDP: the peer's port, or the port bound"},
             {"LOCALADDR", "IPv4 address", "TCP, UDP: a client's local address"},
             {"LOCALPORT", "TCP or UDP port", "TCP, UDP: a client's local port"},
             {"FILENAME", "file name", "UNIX, UNIX_DGRAM: the peer's socket file, or the one bound"},
             {"LOCALFILENAME", "file name", "UNIX, UNIX_DGRAM: a client's local socket file"},
             {"CLIENT", "boolean", "connect (true) or bind and accept (false); default as described"},
             {"SNAPLEN", "unsigned", "longest packet read (default 2048)"},
             {"NODELAY", "boolean", "TCP: no Nagle delay (default true)"},
             {"SNDBUF", "unsigned", "the socket's send buffer (bytes)"},
             {"RCVBUF", "unsigned", "the socket's receive buffer (bytes)"},
             {"TIMESTAMP", "boolean", "time-stamp what is read (default true)"},
             {"ALLOW", "element", "a route table: addresses it routes are let in"},
             {"DENY", "element", "a route table: addresses it routes are refused (unless ALLOW routes them)"},
             {"VERBOSE", "boolean", "report connections opened and closed (default false)"},
             {"CONNECT_TIMEOUT", "time", "how long a stream client waits to connect (default 5s)"},
             {"BURST", "unsigned", "reads, or pulls, per task run (default 32)"},
             {"PROPER", "boolean", "accepted for Click compatibility (PlanetLab's Proper)"},
             {"HEADROOM", "unsigned", "accepted for Click compatibility"}},
    .handlers = {{"connected", "r", "whether there is a connection (a datagram socket: always)"},
                 {"sent", "r", "packets sent"},
                 {"received", "r", "packets read"},
                 {"truncated", "r", "datagrams cut to SNAPLEN"},
                 {"connections", "r", "stream connections made or accepted"},
                 {"refused", "r", "connections and datagrams refused by ALLOW and DENY"}},
    .example = "// an echo server: each connection's bytes come back\ns :: Socket(TCP, 127.0.0.1, 7777);\ns -> s;");

}  // namespace shoal
