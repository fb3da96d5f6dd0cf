// `shoal click`: Click's command line, with Click's meaning and output
// formats, so Click users' scripts and Click's own test runner work
// unchanged; `shoal` called as `click` or `click-buildtool` (the links in
// build/click-bin) behaves the same.
#include <fmt/format.h>
#include <fnmatch.h>
#include <sys/resource.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>
#include <sstream>

#include "common.hh"
#include "shoal/core/element.hh"
#include "shoal/core/version.hh"

namespace shoal::tool {

namespace {

const char* kClickHelp =
    "'shoal click' runs a Click configuration with Click's command line.\n"
    "\n"
    "Usage: shoal click [OPTION]... [ROUTERFILE] [PARAM=VALUE]...\n"
    "\n"
    "  -f, --file FILE           read the configuration from FILE ('-': standard input)\n"
    "  -e, --expression EXPR     use EXPR as the configuration\n"
    "  -h, --handler ELT.H       print the value of read handler H at exit (ELT: a name,\n"
    "                            a class, or a pattern with * ? [)\n"
    "  -x, --exit-handler ELT.H  exit with the value of read handler H\n"
    "  -o, --output FILE         write the flattened configuration to FILE ('-': stdout)\n"
    "  -q, --quit                initialize, then quit without running\n"
    "  -t, --time                print user, system and wall time at exit\n"
    "  -j, --threads N           worker threads\n"
    "      --simtime[=START]     simulated time from START (default 1000000000 s): it moves only\n"
    "                            when nothing is left to do now\n"
    "      --batch N             packets per batch (default 1: one packet goes through the\n"
    "                            graph before the next, as in Click; more is faster, but a\n"
    "                            batch's packets leave an element's outputs grouped by output)\n"
    "  -p, --port PORT           serve a ControlSocket on TCP port PORT (on localhost)\n"
    "  -u, --unix-socket FILE    serve a ControlSocket on UNIX socket FILE\n"
    "  -R, --allow-reconfigure   allow hot swap: writing the global 'hotconfig' handler installs\n"
    "                            a new configuration, whose elements take the state of the old\n"
    "                            ones of the same name and class (a bad one leaves the old)\n"
    "  -w, --no-warnings         accepted\n"
    "  -v, --version             print the version\n"
    "      --help                this text\n";

struct ClickArgs {
  std::string file, expr, output;
  bool have_expr = false, quit = false, report_time = false, simtime = false, reconfigure = false;
  double simtime_start = 1e9;  // Click's default: 1000000000 s
  std::vector<std::string> handlers, defines;
  std::vector<std::string> sockets;  // ControlSocket configurations (-p, -u)
  std::string exit_handler;
  int threads = 1;
  uint32_t batch = 1;  // Click's model: each packet goes through before the next
};

// Elements `pattern` names, as Click's -h expands it: an element name, else
// a glob over names, else a class name; false (with a message) for none.
bool expand_elements(Runtime& rt, const std::string& pattern, const std::string& handler, std::vector<Element*>& out,
                     bool& several) {
  Router& r = rt.router(0);
  several = false;
  if (Element* e = r.find(pattern)) return out.push_back(e), true;
  bool glob = pattern.find_first_of("*?[") != std::string::npos;
  bool any = false;
  for (size_t i = 0; i < r.size(); ++i) {
    Element* e = r.element(i);
    if (glob ? fnmatch(pattern.c_str(), e->name().c_str(), 0) == 0 : e->class_name() == pattern) {
      any = true;
      const Handler* h = e->find_handler(handler);
      if (h && h->read) out.push_back(e);
    }
  }
  if (!any) fmt::print(stderr, "click: {} '{}'\n", glob ? "no element matching" : "no element", pattern);
  several = true;
  return any;
}

// Click's format: the value (with a final newline); with several handlers,
// each as "NAME:\nVALUE\n\n".
bool print_handler(Runtime& rt, const std::string& path, bool print_name) {
  std::string v, err;
  if (!rt.read_handler(path, v, err)) {
    fmt::print(stderr, "click: no '{}' handler\n", path);
    return false;
  }
  if (print_name) fmt::print("{}:\n", path);
  if (!v.empty() && v.back() != '\n') v += '\n';
  fmt::print("{}{}", v, print_name ? "\n" : "");
  return true;
}

bool print_handlers(Runtime& rt, const std::vector<std::string>& handlers) {
  bool ok = true, names = handlers.size() > 1;
  for (auto& h : handlers) {
    size_t dot = h.rfind('.');
    if (dot == std::string::npos) {
      ok &= print_handler(rt, h, names);
      continue;
    }
    std::vector<Element*> els;
    bool several = false;
    if (!expand_elements(rt, h.substr(0, dot), h.substr(dot + 1), els, several)) {
      ok = false;
      continue;
    }
    for (Element* e : els) ok &= print_handler(rt, e->name() + h.substr(dot), names || several);
  }
  std::fflush(stdout);
  return ok;
}

// Click's -o (Router::unparse): every element as "NAME :: CLASS(CONFIG);",
// a blank line, then the connections as chains, each hop after the first on
// a line of its own ("a -> b\n    -> [1] c;"). A connection into port 0 of
// an element continues with a connection out of that element (the first
// into port 0 of its target, else the last found), as Click chains them;
// what no chain reaches (cycles) starts chains of its own.
std::string flat_config(const Program& p) {
  std::string o;
  for (auto& e : p.elements)
    o += e.config.empty() ? fmt::format("{} :: {};\n", e.name, e.info->name)
                          : fmt::format("{} :: {}({});\n", e.name, e.info->name, e.config);
  if (!p.elements.empty()) o += "\n";
  size_t nc = p.conns.size();
  std::vector<int> next(nc, -1);
  std::vector<bool> start(nc, true), used(nc, false);
  for (size_t c = 0; c < nc; ++c) {
    const auto& k = p.conns[c];
    if (k.to_port != 0) continue;
    int result = -1;
    for (size_t d = 0; d < nc; ++d)
      if (d != c && p.conns[d].from == k.to && p.conns[d].from_port == 0) {
        result = int(d);
        if (p.conns[d].to_port == 0) break;
      }
    if (result >= 0) {
      next[c] = result;
      start[size_t(result)] = false;
    }
  }
  for (bool done = false; !done;) {
    for (size_t c = 0; c < nc; ++c) {
      if (used[c] || !start[c]) continue;
      const auto& first = p.conns[c];
      o += p.elements[size_t(first.from)].name;
      if (first.from_port) o += fmt::format(" [{}]", first.from_port);
      for (int d = int(c); d >= 0 && !used[size_t(d)]; d = next[size_t(d)]) {
        const auto& k = p.conns[size_t(d)];
        o += size_t(d) == c ? " -> " : "\n    -> ";
        if (k.to_port) o += fmt::format("[{}] ", k.to_port);
        o += p.elements[size_t(k.to)].name;
        used[size_t(d)] = true;
      }
      o += ";\n";
    }
    done = true;  // cycles: a connection no chain reached starts one
    for (size_t c = 0; c < nc && done; ++c)
      if (!used[c]) start[c] = true, done = false;
  }
  return o;
}

int parse_click_args(int argc, char** argv, ClickArgs& ca) {
  auto need = [&](int& i, const std::string& opt, const std::string& rest, std::string& out) {
    if (!rest.empty()) return out = rest, true;
    if (i + 1 >= argc) {
      fmt::print(stderr, "click: option '{}' requires an argument\n", opt);
      return false;
    }
    out = argv[++i];
    return true;
  };
  bool only_positional = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (!only_positional && a == "--") {
      only_positional = true;
      continue;
    }
    if (!only_positional && a.size() > 2 && a.rfind("--", 0) == 0) {
      size_t eq = a.find('=');
      std::string name = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
      std::string val = eq == std::string::npos ? "" : a.substr(eq + 1);
      std::string v;
      if (name == "help") return fmt::print("{}", kClickHelp), 0;
      if (name == "version") return fmt::print("click (shoal) {}\n", kVersion), 0;
      if (name == "file") {
        if (!need(i, a, val, ca.file)) return 1;
      } else if (name == "expression") {
        if (!need(i, a, val, ca.expr)) return 1;
        ca.have_expr = true;
      } else if (name == "handler") {
        if (!need(i, a, val, v)) return 1;
        ca.handlers.push_back(v);
      } else if (name == "exit-handler") {
        if (!need(i, a, val, ca.exit_handler)) return 1;
      } else if (name == "output") {
        if (!need(i, a, val, ca.output)) return 1;
      } else if (name == "threads") {
        if (!need(i, a, val, v)) return 1;
        ca.threads = std::max(1, std::atoi(v.c_str()));
      } else if (name == "batch") {
        if (!need(i, a, val, v)) return 1;
        int64_t n = 0;
        if (!parse_int(v, n) || n < 1 || n > 4096) {
          fmt::print(stderr, "click: --batch expects 1 to 4096, not '{}'\n", v);
          return 1;
        }
        ca.batch = uint32_t(n);
      } else if (name == "port" || name == "unix-socket") {
        if (!need(i, a, val, v)) return 1;
        ca.sockets.push_back((name == "port" ? "TCP, " : "UNIX, ") + v);
      } else if (name == "allow-reconfigure") {
        ca.reconfigure = true;
      } else if (name == "quit") {
        ca.quit = true;
      } else if (name == "time") {
        ca.report_time = true;
      } else if (name == "simtime" || name == "simulation-time") {
        ca.simtime = true;
        if (!val.empty() &&
            (!parse_double(val, ca.simtime_start) || !(ca.simtime_start >= 0) || ca.simtime_start > 1.8e10)) {
          fmt::print(stderr, "click: --simtime expects a start time in seconds, not '{}'\n", val);
          return 1;
        }
      } else if (name == "warnings" || name == "no-warnings") {
        // accepted (see --help)
      } else {
        fmt::print(stderr, "click: option '--{}' is not supported by shoal click (see --help)\n", name);
        return 1;
      }
      continue;
    }
    if (!only_positional && a.size() > 1 && a[0] == '-') {
      for (size_t j = 1; j < a.size(); ++j) {
        char c = a[j];
        std::string rest = a.substr(j + 1), v;
        switch (c) {
          case 'q': ca.quit = true; continue;
          case 'R': ca.reconfigure = true; continue;
          case 't': ca.report_time = true; continue;
          case 'w': continue;
          case 'v': return fmt::print("click (shoal) {}\n", kVersion), 0;
          case 'f':
            if (!need(i, "-f", rest, ca.file)) return 1;
            break;
          case 'e':
            if (!need(i, "-e", rest, ca.expr)) return 1;
            ca.have_expr = true;
            break;
          case 'h':
            if (!need(i, "-h", rest, v)) return 1;
            ca.handlers.push_back(v);
            break;
          case 'x':
            if (!need(i, "-x", rest, ca.exit_handler)) return 1;
            break;
          case 'o':
            if (!need(i, "-o", rest, ca.output)) return 1;
            break;
          case 'p':
          case 'u':
            if (!need(i, c == 'p' ? "-p" : "-u", rest, v)) return 1;
            ca.sockets.push_back((c == 'p' ? "TCP, " : "UNIX, ") + v);
            break;
          case 'j':
            if (!need(i, "-j", rest, v)) return 1;
            ca.threads = std::max(1, std::atoi(v.c_str()));
            break;
          default:
            fmt::print(stderr, "click: option '-{}' is not supported by shoal click (see --help)\n", c);
            return 1;
        }
        break;  // the option took the rest of this word (or the next)
      }
      continue;
    }
    size_t eq = a.find('=');
    if (eq != std::string::npos && eq > 0 && a.find('/') > eq) {
      ca.defines.push_back(a);
    } else if (ca.file.empty() && !ca.have_expr) {
      ca.file = a;
    } else {
      fmt::print(stderr, "click: too many configuration files ('{}')\n", a);
      return 1;
    }
  }
  return -1;  // go on
}

}  // namespace

int cmd_click_flatten(int argc, char** argv) { return cmd_click(argc, argv, true); }

int cmd_click(int argc, char** argv, bool flatten) {
  ClickArgs ca;
  if (int rc = parse_click_args(argc, argv, ca); rc >= 0) return rc;
  // click-flatten: the configuration, flattened, to standard output (or
  // -o FILE), without running it.
  if (flatten) {
    ca.quit = true;
    if (ca.output.empty()) ca.output = "-";
  }
  RunArgs ra;
  ra.quiet = true;
  ra.click_messages = true;
  ra.batch = ca.batch;
  ra.threads = ca.threads;
  ra.words = ca.defines;
  ra.init_only = ca.quit;
  ra.simtime = ca.simtime;
  ra.simtime_start = ca.simtime_start;
  ra.hotswap = ca.reconfigure;
  if (ca.have_expr) {
    ra.text = ca.expr, ra.text_name = "config";
  } else if (ca.file.empty() || ca.file == "-") {
    ra.text.assign(std::istreambuf_iterator<char>(std::cin), {});
    ra.text_name = "<stdin>";
  } else {
    ra.file = ca.file;
  }
  // -p and -u add ControlSockets to the configuration, as Click's do.
  if (!ca.sockets.empty()) {
    if (ra.text_name.empty()) {
      std::ifstream f(ra.file, std::ios::binary);
      if (!f) return fmt::print(stderr, "click: {}: {}\n", ra.file, std::strerror(errno)), 1;
      ra.text.assign(std::istreambuf_iterator<char>(f), {});
      ra.text_name = ra.file;
    }
    // Named as Click names them (click_driver@@ControlSocket, then @1...);
    // a hot-swapped configuration gets them too, and takes their sockets.
    for (size_t i = 0; i < ca.sockets.size(); ++i)
      ra.hot_suffix += fmt::format("\nclick_driver@@ControlSocket{} :: ControlSocket({});",
                                   i ? fmt::format("@{}", i) : "", ca.sockets[i]);
    ra.text += ra.hot_suffix;
  }
  auto t0 = std::chrono::steady_clock::now();
  rusage r0{};
  getrusage(RUSAGE_SELF, &r0);
  ra.at_init = [&](Runtime& rt) {
    if (ca.output.empty()) return true;
    std::string err;
    if (write_file(ca.output, flat_config(rt.program()), err)) return true;
    fmt::print(stderr, "click: {}\n", err);
    return false;
  };
  ra.at_exit = [&](Runtime& rt) {
    int rc = 0;
    if (ca.report_time) {
      rusage r1{};
      getrusage(RUSAGE_SELF, &r1);
      auto tv = [](const timeval& a, const timeval& b) {
        return double(a.tv_sec - b.tv_sec) + (a.tv_usec - b.tv_usec) / 1e6;
      };
      double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      fmt::print("{:.3f}u {:.3f}s {}:{:05.2f}\n", tv(r1.ru_utime, r0.ru_utime), tv(r1.ru_stime, r0.ru_stime),
                 int(wall / 60), wall - 60 * int(wall / 60));
    }
    if (!ca.handlers.empty() && !print_handlers(rt, ca.handlers)) rc = 1;
    if (!ca.exit_handler.empty()) {
      std::string v, err;
      int64_t n = 0;
      bool b = false;
      if (!rt.read_handler(ca.exit_handler, v, err)) {
        fmt::print(stderr, "click: {}\n", err);
        return 1;
      }
      std::string_view t = trim(v);
      if (parse_int(t, n)) return int(n);
      if (parse_bool(t, b)) return b ? 0 : 1;
      fmt::print(stderr, "click: exit handler value should be integer\n");
      return 1;
    }
    return rc;
  };
  return cmd_run(ra);
}

// `click-buildtool provides NAME...`: whether this Click has the features
// (element classes, and the user-level driver with threads).
int cmd_click_buildtool(int argc, char** argv) {
  if (argc < 2 || std::string(argv[1]) != "provides") {
    fmt::print(stderr, "click-buildtool: shoal answers only 'provides NAME...'\n");
    return 1;
  }
  static const std::set<std::string> features = {"userlevel", "umultithread", "int64", "ip6", "pcap"};
  for (int i = 2; i < argc; ++i)
    if (!features.count(argv[i]) && !Registry::instance().find(argv[i])) return 1;
  return 0;
}

}  // namespace shoal::tool
