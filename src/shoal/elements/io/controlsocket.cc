// ControlSocket: Click's control protocol (READ, WRITE, WRITEDATA, ...) on a
// TCP port or a UNIX socket, so Click's tools and scripts drive a running
// Shoal. The sockets are served by a thread of their own; every handler call
// is handed to worker 0 and runs there, as a Script's would, so a client sees
// its writes in order.

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <memory>
#include <thread>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"

namespace shoal {

namespace {

constexpr const char* kBanner = "Click::ControlSocket/1.3\r\n";

// Click's reply codes (include/click/controlsocket.hh).
enum Code {
  kOK = 200,
  kSyntax = 500,
  kUnimplemented = 501,
  kNoElement = 510,
  kNoHandler = 511,
  kHandlerError = 520,
  kTooBig = 521,
  kPermission = 530,
  kNoRouter = 540,
};

std::string upper(std::string s) {
  for (auto& c : s) c = char(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The first word of `s` (spaces and tabs separate) and what follows it.
std::string_view first_word(std::string_view s, std::string_view& rest) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return rest = {}, std::string_view();
  size_t e = s.find_first_of(" \t", b);
  if (e == std::string_view::npos) e = s.size();
  rest = trim(s.substr(e));
  return s.substr(b, e - b);
}

}  // namespace

class ControlSocket : public Element {
 public:
  ~ControlSocket() override { shutdown(); }

  void configure(Args& a) override {
    std::string type, where;
    a.read_mp("TYPE", type).read_mp("PORT", where);
    a.read("READONLY", readonly_).read("VERBOSE", verbose_).read("LOCALHOST", localhost_);
    a.read("RETRIES", retries_).read("RETRY_WARNINGS", retry_warnings_).read("MODE", mode_text_);
    a.read("MAX_LINE", max_line_).read("MAX_DATA", max_data_).read("MAX_CONNECTIONS", max_conns_);
    std::string proxy;
    a.read("PROXY", proxy);
    a.complete();
    if (!proxy.empty()) a.fail("PROXY (Click's kernel handler proxy) is not supported");
    type = upper(type);
    if (type == "TCP") {
      unix_ = false;
      std::string p = where;
      if (!p.empty() && p.back() == '+') {
        port_plus_ = true;
        p.pop_back();
      }
      uint64_t v = 0;
      if (!parse_uint(p, v) || v > 65535) a.fail(fmt::format("bad TCP port '{}'", where));
      port_ = uint16_t(v);
    } else if (type == "UNIX") {
      unix_ = true;
      path_ = where;
      if (path_.empty() || path_.size() >= sizeof(sockaddr_un::sun_path))
        a.fail(fmt::format("bad UNIX socket name '{}' (1 to {} bytes)", where, sizeof(sockaddr_un::sun_path) - 1));
      uint64_t m = 0;
      if (!mode_text_.empty() && (!parse_octal(mode_text_, m) || m > 0777))
        a.fail(fmt::format("MODE expects octal permissions such as 0600, not '{}'", mode_text_));
      if (!mode_text_.empty()) mode_ = unsigned(m);
    } else {
      a.fail(fmt::format("TYPE must be TCP or UNIX, not '{}'", type));
    }
    if (max_line_ < 64) max_line_ = 64;
  }

  void initialize() override {
    if (worker().id() != 0) return;  // one socket per router: worker 0's copy serves it
    keepalive_.owner = this;
    worker().schedule(keepalive_, worker().now_ns() + kKeepalive);
    // A configuration hot-swapped in takes the old one's socket, and its
    // connections, rather than open another (hot_swapped).
    if (!worker().runtime().replacement()) start();
  }

  // Hot swap: the old router's socket thread goes on serving, for this
  // router now; a client's connection carries on across the swap.
  void hot_swapped(Element* old) override {
    if (worker().id() != 0) return;
    auto* o = dynamic_cast<ControlSocket*>(old);
    ControlSocket* server = o ? o->server_ : nullptr;
    if (server && server->thread_.joinable() && server->same_socket(*this)) {
      server_ = server;
      server->serve_for_.store(this);
    } else {
      start();
    }
  }

  // The socket keeps the router running, as Click's selected file
  // descriptors keep its driver going, until something stops it.
  void run_timer(Timer& t) override { worker().schedule(t, worker().now_ns() + kKeepalive); }

  // A router stopping for a hot swap keeps its socket for the next one.
  void on_stop() override {
    if (!worker().runtime().swap_pending()) stop_serving();
  }
  void cleanup() override { stop_serving(); }

  void add_handlers() override {
    add_read_handler("port", [this] { return unix_ ? std::string() : std::to_string(server_->bound_port_.load()); });
    add_read_handler("filename", [this] { return unix_ ? path_ : std::string(); });
    add_read_handler(
        "connections", [this] { return std::to_string(server_->nconns_.load()); }, Agg::Sum, true);
    add_read_handler(
        "commands", [this] { return std::to_string(server_->ncommands_.load()); }, Agg::Sum, true);
  }

 private:
  static constexpr uint64_t kKeepalive = 100000000;  // 100 ms

  struct Conn {
    int fd = -1;
    std::string in, out;
    // A WRITEDATA or READDATA waiting for its bytes, or a WRITEUNTIL for its
    // terminator line.
    enum { kLine, kData, kUntil } mode = kLine;
    bool read_data = false;  // READDATA: the bytes are the read's parameter
    std::string handler, until, acc;
    size_t need = 0;
    bool closing = false;  // QUIT: close once the reply is written
  };

  static bool parse_octal(std::string_view s, uint64_t& out) {
    if (s.empty()) return false;
    out = 0;
    for (char c : s) {
      if (c < '0' || c > '7') return false;
      out = out * 8 + uint64_t(c - '0');
      if (out > 07777) return false;
    }
    return true;
  }

  void open_listener() {
    if (unix_) {
      lfd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
      if (lfd_ < 0) throw std::runtime_error(fmt::format("socket: {}", std::strerror(errno)));
      sockaddr_un sa{};
      sa.sun_family = AF_UNIX;
      std::memcpy(sa.sun_path, path_.data(), path_.size());
      struct stat st {};
      // A socket left by an earlier run is replaced; any other file is not.
      if (::lstat(path_.c_str(), &st) == 0) {
        if (!S_ISSOCK(st.st_mode))
          throw std::runtime_error(fmt::format("'{}' exists and is not a socket; not replacing it", path_));
        ::unlink(path_.c_str());
      }
      mode_t old = ::umask(0777 & ~mode_);
      int r = ::bind(lfd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa);
      int e = errno;
      ::umask(old);
      if (r < 0) throw std::runtime_error(fmt::format("cannot bind UNIX socket '{}': {}", path_, std::strerror(e)));
      ::chmod(path_.c_str(), mode_);
      bound_unix_ = true;
    } else {
      int last = 0;
      for (int i = 0; i <= (port_plus_ ? 64 : retries_); ++i) {
        uint16_t port = port_plus_ ? uint16_t(port_ + i) : port_;
        if (port_plus_ && port < port_) break;  // wrapped
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) throw std::runtime_error(fmt::format("socket: {}", std::strerror(errno)));
        int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(port);
        sa.sin_addr.s_addr = htonl(localhost_ ? INADDR_LOOPBACK : INADDR_ANY);
        if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0) {
          lfd_ = fd;
          socklen_t len = sizeof sa;
          ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
          bound_port_ = ntohs(sa.sin_port);
          break;
        }
        last = errno;
        ::close(fd);
        if (!port_plus_ && i < retries_) std::this_thread::sleep_for(std::chrono::seconds(1));
      }
      if (lfd_ < 0)
        throw std::runtime_error(
            fmt::format("cannot bind TCP port {}{}: {}", port_, port_plus_ ? "+" : "", std::strerror(last)));
    }
    if (::listen(lfd_, 16) < 0) throw std::runtime_error(fmt::format("listen: {}", std::strerror(errno)));
    ::fcntl(lfd_, F_SETFL, ::fcntl(lfd_, F_GETFL) | O_NONBLOCK);
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) < 0) throw std::runtime_error("pipe2 failed");
  }

  void start() {
    open_listener();
    quit_.store(false);
    thread_ = std::thread([this] { serve(); });
  }
  // The same socket as `o` asks for (so o may take this one's).
  bool same_socket(const ControlSocket& o) const {
    return unix_ == o.unix_ && (unix_ ? path_ == o.path_ : port_ == o.port_ && port_plus_ == o.port_plus_);
  }
  // Ends the socket thread this element serves through, unless it serves
  // a newer router now (the one that took it shuts it down).
  void stop_serving() {
    if (server_ == this && serve_for_.load() == this)
      shutdown();
    else if (server_ != this && server_->serve_for_.load() == this)
      server_->shutdown();
  }

  void shutdown() {
    if (thread_.joinable()) {
      quit_.store(true);
      char c = 0;
      [[maybe_unused]] ssize_t r = ::write(wake_[1], &c, 1);
      thread_.join();
    }
    for (int* fd : {&lfd_, &wake_[0], &wake_[1]})
      if (*fd >= 0) ::close(*fd), *fd = -1;
    if (bound_unix_) ::unlink(path_.c_str()), bound_unix_ = false;
  }

  // ---- the socket thread ------------------------------------------------

  void serve() {
    std::vector<std::unique_ptr<Conn>> conns;
    std::vector<pollfd> pf;
    while (!quit_.load()) {
      pf.clear();
      pf.push_back({wake_[0], POLLIN, 0});
      pf.push_back({lfd_, short(int(conns.size()) < max_conns_ ? POLLIN : 0), 0});
      for (auto& c : conns) {
        bool more_in = !c->closing && c->out.size() <= kMaxOut;
        pf.push_back({c->fd, short((more_in ? POLLIN : 0) | (c->out.empty() ? 0 : POLLOUT)), 0});
      }
      if (::poll(pf.data(), pf.size(), 200) < 0 && errno != EINTR) break;
      if (quit_.load()) break;
      if (pf[1].revents & POLLIN) accept_one(conns);
      for (size_t i = 0; i < conns.size() && i + 2 < pf.size(); ++i) {
        Conn& c = *conns[i];
        short ev = pf[i + 2].revents;
        bool ok = true;
        if (ev & (POLLIN | POLLHUP | POLLERR)) ok = read_from(c);
        if (ok && !c.out.empty()) ok = write_to(c);
        if (ok && c.closing && c.out.empty()) ok = false;
        if (!ok) {
          ::close(c.fd);
          c.fd = -1;
        }
      }
      std::erase_if(conns, [](const std::unique_ptr<Conn>& c) { return c->fd < 0; });
      nconns_.store(int(conns.size()));
    }
    for (auto& c : conns) {
      write_to(*c);  // a last try at what is owed
      ::close(c->fd);
    }
    nconns_.store(0);
  }

  void accept_one(std::vector<std::unique_ptr<Conn>>& conns) {
    int fd = ::accept4(lfd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    auto c = std::make_unique<Conn>();
    c->fd = fd;
    c->out = kBanner;
    if (verbose_) fmt::print(stderr, "{}: opened connection {}\n", name(), fd);
    conns.push_back(std::move(c));
  }

  bool write_to(Conn& c) {
    while (!c.out.empty()) {
      ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
      if (n < 0) return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
      c.out.erase(0, size_t(n));
    }
    return true;
  }

  // Reads what the client sent and answers every whole command in it;
  // false when the connection is over.
  bool read_from(Conn& c) {
    char buf[16384];
    for (;;) {
      ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
      if (n == 0) {  // the client is done sending: answer what it sent, then close
        process(c);  // (a last command without its newline is not run, as in Click)
        c.closing = true;
        return true;
      }
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) break;
        return false;
      }
      c.in.append(buf, size_t(n));
      if (!process(c)) return false;
      // A client that sends without reading its replies is not read from
      // while they pile up (poll waits for it to read them).
      if (c.out.size() > kMaxOut && (!write_to(c) || c.out.size() > kMaxOut)) break;
    }
    return true;
  }

  static constexpr size_t kMaxOut = size_t(64) << 20;

  bool process(Conn& c) {
    while (!c.closing) {
      if (c.mode == Conn::kData) {
        if (c.in.size() < c.need) return true;
        std::string data = c.in.substr(0, c.need);
        c.in.erase(0, c.need);
        c.mode = Conn::kLine;
        if (c.read_data)
          do_read(c, c.handler, data);
        else
          do_write(c, c.handler, data);
        continue;
      }
      size_t nl = c.in.find('\n');
      if (nl == std::string::npos) {
        if (c.in.size() > size_t(max_line_)) {
          reply(c, kSyntax, fmt::format("Line too long (more than {} bytes)", max_line_));
          c.closing = true;
        }
        return true;
      }
      std::string line = c.in.substr(0, nl);
      c.in.erase(0, nl + 1);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      if (c.mode == Conn::kUntil) {
        if (line == c.until) {
          c.mode = Conn::kLine;
          do_write(c, c.handler, c.acc);
          c.acc.clear();
        } else {
          if (c.acc.size() + line.size() > size_t(max_data_)) {
            reply(c, kTooBig, "Data too big");
            c.closing = true;
            return true;
          }
          c.acc += line + "\n";
        }
        continue;
      }
      command(c, line);
    }
    return true;
  }

  void command(Conn& c, std::string_view line) {
    std::string_view rest;
    std::string cmd = upper(std::string(first_word(line, rest)));
    if (cmd.empty()) return;
    ++ncommands_;
    std::string_view arg;
    std::string handler(first_word(rest, arg));
    auto need_handler = [&] {
      if (!handler.empty()) return true;
      reply(c, kSyntax, "Wrong number of arguments");
      return false;
    };
    if (cmd == "READ" || cmd == "GET") {
      if (need_handler()) do_read(c, handler, std::string(arg));
    } else if (cmd == "WRITE" || cmd == "SET") {
      if (need_handler()) do_write(c, handler, std::string(arg));
    } else if (cmd == "READDATA" || cmd == "WRITEDATA") {
      if (!need_handler()) return;
      uint64_t n = 0;
      if (!parse_uint(trim(arg), n)) return reply(c, kSyntax, "Syntax error");
      if (n > uint64_t(max_data_)) {
        reply(c, kTooBig, "Data too big");
        c.closing = true;
        return;
      }
      c.mode = Conn::kData;
      c.need = size_t(n);
      c.read_data = cmd == "READDATA";
      c.handler = handler;
    } else if (cmd == "WRITEUNTIL") {
      if (!need_handler()) return;
      c.mode = Conn::kUntil;
      c.until = std::string(trim(arg));
      c.handler = handler;
      c.acc.clear();
    } else if (cmd == "CHECKREAD" || cmd == "CHECKWRITE") {
      if (!need_handler()) return;
      bool write = cmd == "CHECKWRITE";
      if (check(c, handler, write)) reply(c, kOK, fmt::format("{} handler '{}' OK", write ? "Write" : "Read", handler));
    } else if (cmd == "LLRPC") {
      reply(c, kUnimplemented, "LLRPC is not supported");
    } else if (cmd == "QUIT") {
      reply(c, kOK, "Goodbye!");
      c.closing = true;
    } else {
      reply(c, kUnimplemented, fmt::format("Command '{}' unimplemented", cmd));
    }
  }

  static void reply(Conn& c, int code, std::string_view msg) {
    // Click's multi-line replies: "CODE-line" for all but the last line.
    size_t b = 0;
    for (;;) {
      size_t e = msg.find('\n', b);
      if (e == std::string_view::npos) {
        c.out += fmt::format("{} {}\r\n", code, msg.substr(b));
        return;
      }
      c.out += fmt::format("{}-{}\r\n", code, msg.substr(b, e - b));
      b = e + 1;
    }
  }

  // Whether `path` names a handler a client may call (read or write side);
  // else the error reply, in Click's words.
  bool check(Conn& c, const std::string& path, bool write) {
    size_t dot = path.rfind('.');
    if (dot == std::string::npos) return true;  // a global handler: the runtime answers
    Runtime& rt = target().worker().runtime();
    std::string ename = path.substr(0, dot);
    Element* e = rt.router(0).find(ename);
    if (!e) return reply(c, kNoElement, fmt::format("No element named '{}'", ename)), false;
    const Handler* h = e->find_handler(std::string_view(path).substr(dot + 1));
    if (!h || h->hidden) return reply(c, kNoHandler, fmt::format("No handler named '{}'", path)), false;
    if (write ? !h->write : !h->read)
      return reply(c, kNoHandler, fmt::format("Handler '{}' is not {}", path, write ? "writable" : "readable")), false;
    if (write && readonly_) return reply(c, kPermission, fmt::format("Permission denied for '{}'", path)), false;
    return true;
  }

  void do_read(Conn& c, const std::string& path, const std::string& param) {
    if (!check(c, path, false)) return;
    std::string out, err;
    bool ok = false;
    if (!on_worker0([&](ControlSocket& t) { ok = t.worker().runtime().read_handler(path, out, err, param); }))
      return reply(c, kNoRouter, "Router is stopping"), void(c.closing = true);
    if (!ok) return reply(c, kHandlerError, fmt::format("Read handler '{}' error:\n{}", path, err));
    reply(c, kOK, fmt::format("Read handler '{}' OK", path));
    c.out += fmt::format("DATA {}\r\n", out.size());
    c.out += out;
  }

  void do_write(Conn& c, const std::string& path, const std::string& value) {
    if (path.find('.') == std::string::npos && readonly_)
      return reply(c, kPermission, fmt::format("Permission denied for '{}'", path));
    if (!check(c, path, true)) return;
    std::string err;
    bool ok = false;
    if (!on_worker0([&](ControlSocket& t) { ok = t.worker().runtime().write_handler(path, value, err, 0); }))
      return reply(c, kNoRouter, "Router is stopping"), void(c.closing = true);
    if (!ok) return reply(c, kHandlerError, fmt::format("Write handler '{}' error:\n{}", path, err));
    reply(c, kOK, fmt::format("Write handler '{}' OK", path));
  }

  // The element whose router the socket serves (this one, or the one a
  // hot swap put in its place).
  ControlSocket& target() const { return *serve_for_.load(); }

  // Runs f on the served router's worker 0 and waits for it; false when the
  // router stops before the worker took it. While a hot swap is under way
  // the call waits for the new router and goes to it.
  template <class F>
  bool on_worker0(F&& f) {
    for (;;) {
      ControlSocket* t = serve_for_.load();
      auto done = std::make_shared<std::promise<void>>();
      std::future<void> fut = done->get_future();
      // 0: waiting, 1: the worker runs f, 2: given up (f must not run: the
      // references it holds are gone).
      auto state = std::make_shared<std::atomic<int>>(0);
      t->worker().post([f = &f, t, done, state] {
        int waiting = 0;
        if (state->compare_exchange_strong(waiting, 1)) (*f)(*t);
        done->set_value();
      });
      bool moved = false;
      while (fut.wait_for(std::chrono::milliseconds(10)) != std::future_status::ready) {
        Runtime& rt = t->worker().runtime();
        moved = serve_for_.load() != t;
        if (!quit_.load() && !moved && (!rt.stopping() || rt.swap_pending())) continue;
        int waiting = 0;
        if (state->compare_exchange_strong(waiting, 2)) break;
        fut.wait();  // the worker is inside f: it finishes
        return true;
      }
      if (fut.wait_for(std::chrono::seconds(0)) == std::future_status::ready && state->load() == 1) return true;
      if (!moved || quit_.load()) return false;
    }
  }

  bool unix_ = false, port_plus_ = false, bound_unix_ = false;
  bool readonly_ = false, verbose_ = false, localhost_ = true, retry_warnings_ = true;
  int retries_ = 0;
  uint16_t port_ = 0;
  std::atomic<uint16_t> bound_port_{0};
  std::string path_, mode_text_;
  unsigned mode_ = 0600;
  int max_line_ = 65536, max_data_ = 64 << 20, max_conns_ = 64;
  int lfd_ = -1;
  int wake_[2] = {-1, -1};
  std::thread thread_;
  std::atomic<bool> quit_{false};
  std::atomic<int> nconns_{0};
  std::atomic<uint64_t> ncommands_{0};
  Timer keepalive_;
  ControlSocket* server_ = this;                 // the element whose thread serves this one's socket
  std::atomic<ControlSocket*> serve_for_{this};  // (on the server) the element whose router it serves
};

SHOAL_ELEMENT(ControlSocket, .name = "ControlSocket", .ports = "0/0", .processing = "a/a",
              .summary = "Click's control protocol on a TCP port or a UNIX socket",
              .description =
                  "Serves Click's ControlSocket protocol (version 1.3), so Click's tools, scripts and "
                  "`shoal ctl` read and write the running router's handlers. After the banner "
                  "'Click::ControlSocket/1.3', each line is a command: READ handler [PARAMS], WRITE "
                  "handler VALUE, READDATA handler N (then N bytes of parameters), WRITEDATA handler N "
                  "(then N bytes), WRITEUNTIL handler TERMINATOR (then lines up to one equal to "
                  "TERMINATOR), CHECKREAD handler, CHECKWRITE handler, QUIT. Replies are Click's: "
                  "'200 Read handler 'x' OK' then 'DATA N' and N bytes; 500 syntax error, 501 unknown "
                  "command (LLRPC included), 510 no such element, 511 no such handler (private ones, "
                  "like Script's cat, are hidden), 520 handler error (its message on the following "
                  "lines), 521 data too big, 530 permission denied (READONLY), 540 router stopping. "
                  "A line longer than MAX_LINE or data larger than MAX_DATA is refused and the "
                  "connection closed. TCP sockets listen on localhost unless LOCALHOST is false (Click "
                  "listens everywhere); PORT 'N+' takes the first free port from N (read it from the "
                  "'port' handler). A UNIX socket is made with MODE permissions (default 0600); a socket "
                  "file left by an earlier run is replaced, any other file is an error. Handler calls run "
                  "on worker 0 one at a time, in the order received, so a client reads its own writes. "
                  "The socket keeps the router running until something stops it (as in Click).",
              .args = {{"TYPE", "TCP|UNIX", "socket kind, mandatory"},
                       {"PORT", "port or filename", "TCP port ('N+': the first free from N) or UNIX socket path"},
                       {"READONLY", "boolean", "refuse writes (default false)"},
                       {"LOCALHOST", "boolean", "TCP: listen on 127.0.0.1 only (default true)"},
                       {"MODE", "octal", "UNIX socket permissions (default 0600)"},
                       {"VERBOSE", "boolean", "report connections on standard error"},
                       {"RETRIES", "integer", "TCP: tries to bind a busy port, a second apart (default 0)"},
                       {"RETRY_WARNINGS", "boolean", "accepted for Click compatibility"},
                       {"MAX_LINE", "integer", "longest command line in bytes (default 65536)"},
                       {"MAX_DATA", "integer", "largest WRITEDATA or READDATA in bytes (default 64 MiB)"},
                       {"MAX_CONNECTIONS", "integer", "clients served at once (default 64)"},
                       {"PROXY", "element", "Click's kernel handler proxy: not supported"}},
              .handlers = {{"port", "r", "the TCP port bound"},
                           {"filename", "r", "the UNIX socket path"},
                           {"connections", "r", "clients connected now"},
                           {"commands", "r", "commands received"}},
              .example = "ControlSocket(TCP, 7777);  // then: shoal ctl -p 7777 read c.count");

}  // namespace shoal
