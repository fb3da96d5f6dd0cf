// `shoal ctl`: a client of a running router's ControlSocket (Click's
// protocol), for reading and writing handlers from a shell.

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "common.hh"
#include "shoal/core/args.hh"

namespace shoal::tool {

namespace {

const char* kCtlHelp =
    "'shoal ctl' reads and writes the handlers of a running router through its ControlSocket.\n"
    "\n"
    "Usage: shoal ctl (-p PORT [--host HOST] | -u SOCKET) COMMAND\n"
    "\n"
    "Commands:\n"
    "  read ELEMENT.HANDLER [PARAMS...]   print the handler's value\n"
    "  write ELEMENT.HANDLER [VALUE...]   write VALUE (the words joined by spaces)\n"
    "  check ELEMENT.HANDLER              whether the handler exists and is readable\n"
    "  checkwrite ELEMENT.HANDLER         whether it is writable\n"
    "  list                               the router's elements\n"
    "  stop                               stop the router\n"
    "  reload                             re-read the router's configuration file and swap it in (`shoal run\n"
    "                                     FILE`): state carried, a broken file refused with the old one running\n"
    "\n"
    "  -p, --port PORT      the ControlSocket's TCP port\n"
    "      --host HOST      its host (default 127.0.0.1)\n"
    "  -u, --unix SOCKET    its UNIX socket\n"
    "      --timeout S      seconds to wait for the router (default 10)\n"
    "\n"
    "Exit status: 0 on success, 1 when the router refused the command (its reply is printed),\n"
    "2 when it could not be reached.\n";

class Conn {
 public:
  ~Conn() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool open_unix(const std::string& path, std::string& err) {
    sockaddr_un sa{};
    if (path.size() >= sizeof sa.sun_path) return err = "socket path too long", false;
    sa.sun_family = AF_UNIX;
    std::memcpy(sa.sun_path, path.data(), path.size());
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) < 0)
      return err = fmt::format("cannot connect to {}: {}", path, std::strerror(errno)), false;
    return true;
  }
  bool open_tcp(const std::string& host, const std::string& port, std::string& err) {
    addrinfo hints{}, *res = nullptr;
    hints.ai_socktype = SOCK_STREAM;
    if (int r = ::getaddrinfo(host.c_str(), port.c_str(), &hints, &res); r != 0)
      return err = fmt::format("{}:{}: {}", host, port, gai_strerror(r)), false;
    for (addrinfo* a = res; a; a = a->ai_next) {
      fd_ = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
      if (fd_ >= 0 && ::connect(fd_, a->ai_addr, a->ai_addrlen) == 0) break;
      err = fmt::format("cannot connect to {}:{}: {}", host, port, std::strerror(errno));
      if (fd_ >= 0) ::close(fd_), fd_ = -1;
    }
    ::freeaddrinfo(res);
    return fd_ >= 0;
  }
  bool send_all(std::string_view s, std::string& err) {
    while (!s.empty()) {
      ssize_t n = ::send(fd_, s.data(), s.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return err = fmt::format("send: {}", std::strerror(errno)), false;
      s.remove_prefix(size_t(n));
    }
    return true;
  }
  // Reads until `buf_` holds n bytes (or a line, for n == 0).
  bool fill(size_t n, bool line, std::string& err) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (line ? buf_.find('\n') == std::string::npos : buf_.size() < n) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return err = "timed out waiting for the router", false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, int(left.count())) <= 0) continue;
      char tmp[65536];
      ssize_t r = ::recv(fd_, tmp, sizeof tmp, 0);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) return err = "the router closed the connection", false;
      buf_.append(tmp, size_t(r));
    }
    return true;
  }
  bool line(std::string& out, std::string& err) {
    if (!fill(0, true, err)) return false;
    size_t nl = buf_.find('\n');
    out = buf_.substr(0, nl);
    buf_.erase(0, nl + 1);
    if (!out.empty() && out.back() == '\r') out.pop_back();
    return true;
  }
  bool bytes(size_t n, std::string& out, std::string& err) {
    if (!fill(n, false, err)) return false;
    out = buf_.substr(0, n);
    buf_.erase(0, n);
    return true;
  }
  // One reply: its code and its text (continuation lines joined).
  bool reply(int& code, std::string& text, std::string& err) {
    text.clear();
    for (;;) {
      std::string l;
      if (!line(l, err)) return false;
      if (l.size() < 4 || !std::isdigit(static_cast<unsigned char>(l[0])))
        return err = fmt::format("unexpected reply '{}'", l), false;
      code = std::atoi(l.substr(0, 3).c_str());
      text += (text.empty() ? "" : "\n") + l.substr(4);
      if (l[3] == ' ') return true;
    }
  }
  int timeout_ms = 10000;

 private:
  int fd_ = -1;
  std::string buf_;
};

}  // namespace

int cmd_ctl(int argc, char** argv) {
  std::string port, host = "127.0.0.1", unix_path;
  std::vector<std::string> cmd;
  double timeout = 10;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string& out) {
      if (i + 1 >= argc) return fmt::print(stderr, "shoal ctl: {} needs a value\n", a), false;
      out = argv[++i];
      return true;
    };
    if (!cmd.empty()) {
      cmd.push_back(a);
    } else if (a == "-h" || a == "--help") {
      return fmt::print("{}", kCtlHelp), 0;
    } else if (a == "-p" || a == "--port") {
      if (!value(port)) return 2;
    } else if (a == "--host") {
      if (!value(host)) return 2;
    } else if (a == "-u" || a == "--unix") {
      if (!value(unix_path)) return 2;
    } else if (a == "--timeout") {
      std::string v;
      if (!value(v) || !parse_double(v, timeout) || !(timeout > 0))
        return fmt::print(stderr, "shoal ctl: --timeout expects seconds\n"), 2;
    } else if (a.size() > 1 && a[0] == '-') {
      return fmt::print(stderr, "shoal ctl: unknown option '{}' (shoal ctl --help)\n", a), 2;
    } else {
      cmd.push_back(a);
    }
  }
  if (cmd.empty() || (port.empty() == unix_path.empty())) return fmt::print(stderr, "{}", kCtlHelp), 2;
  auto join = [&](size_t from) {
    std::string s;
    for (size_t k = from; k < cmd.size(); ++k) s += (k > from ? " " : "") + cmd[k];
    return s;
  };
  const std::string& verb = cmd[0];
  std::string request;
  bool reads = false;
  if ((verb == "read" || verb == "check" || verb == "checkwrite") && cmd.size() >= 2) {
    std::string params = join(2);
    if (verb == "read") {
      request = params.empty() ? fmt::format("READ {}\n", cmd[1])
                               : fmt::format("READDATA {} {}\n{}", cmd[1], params.size(), params);
      reads = true;
    } else {
      request = fmt::format("{} {}\n", verb == "check" ? "CHECKREAD" : "CHECKWRITE", cmd[1]);
    }
  } else if (verb == "write" && cmd.size() >= 2) {
    std::string v = join(2);
    request = fmt::format("WRITEDATA {} {}\n{}", cmd[1], v.size(), v);
  } else if (verb == "list" && cmd.size() == 1) {
    request = "READ list\n";
    reads = true;
  } else if (verb == "stop" && cmd.size() == 1) {
    request = "WRITE stop\n";
  } else if (verb == "reload" && cmd.size() == 1) {
    request = "WRITE reload\n";
  } else {
    return fmt::print(stderr, "shoal ctl: bad command '{}' (shoal ctl --help)\n", join(0)), 2;
  }

  Conn c;
  c.timeout_ms = int(timeout * 1000);
  std::string err, banner, text, data;
  int code = 0;
  bool ok = unix_path.empty() ? c.open_tcp(host, port, err) : c.open_unix(unix_path, err);
  if (ok) ok = c.line(banner, err);
  if (ok && banner.rfind("Click::ControlSocket/", 0) != 0)
    ok = false, err = fmt::format("not a ControlSocket: '{}'", banner);
  if (ok) ok = c.send_all(request + "QUIT\n", err) && c.reply(code, text, err);
  if (!ok) return fmt::print(stderr, "shoal ctl: {}\n", err), 2;
  if (code / 100 != 2) return fmt::print(stderr, "shoal ctl: {} {}\n", code, text), 1;
  if (reads) {
    std::string l;
    uint64_t n = 0;
    if (!c.line(l, err) || l.rfind("DATA ", 0) != 0 || !parse_uint(trim(l.substr(5)), n) ||
        !c.bytes(size_t(n), data, err))
      return fmt::print(stderr, "shoal ctl: {}\n", err.empty() ? "bad DATA reply" : err), 2;
    fmt::print("{}{}", data, !data.empty() && data.back() == '\n' ? "" : "\n");
  }
  return 0;
}

}  // namespace shoal::tool
