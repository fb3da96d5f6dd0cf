// Script and DriverManager: Click's small control language (Click's
// elements/standard/script.cc documentation is the specification). One
// interpreter serves both; control scripts run on worker 0 and reach every
// worker's copy of an element through the runtime's handler access.
#include <fmt/format.h>
#include <fmt/printf.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>

#include "shoal/core/graph.hh"
#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"

namespace shoal {

namespace {

// Splits on spaces, keeping quoted strings and $(...) groups whole.
std::vector<std::string> words(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i >= s.size()) break;
    size_t b = i;
    int depth = 0;
    while (i < s.size() && (depth > 0 || !std::isspace(static_cast<unsigned char>(s[i])))) {
      char c = s[i];
      if (c == '"' || c == '\'') {
        size_t e = i + 1;
        while (e < s.size() && s[e] != c) e += (c == '"' && s[e] == '\\') ? 2 : 1;
        i = e >= s.size() ? s.size() : e + 1;
        continue;
      }
      if (c == '(') ++depth;
      if (c == ')' && depth > 0) --depth;
      ++i;
    }
    out.emplace_back(s.substr(b, i - b));
  }
  return out;
}

// One layer of quotes off every quoted part of s (Click's cp_unquote).
std::string unquote(std::string_view w) {
  std::string out;
  size_t i = 0;
  while (i < w.size()) {
    char c = w[i];
    if (c == '"' || c == '\'') {
      size_t e = i + 1;
      while (e < w.size() && w[e] != c) e += (c == '"' && w[e] == '\\') ? 2 : 1;
      if (e >= w.size()) {  // unterminated: as written
        out.append(w.substr(i));
        break;
      }
      std::string part;
      if (parse_string(w.substr(i, e + 1 - i), part))
        out += part;
      else
        out.append(w.substr(i + 1, e - i - 1));
      i = e + 1;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

std::string join(const std::vector<std::string>& w, size_t from) {
  std::string s;
  for (size_t i = from; i < w.size(); ++i) s += (i > from ? " " : "") + w[i];
  return s;
}

// Click's numbers: integers (decimal, 0x hex) exactly, else reals.
struct Num {
  bool integral = true;
  int64_t i = 0;
  double d = 0;
  double real() const { return integral ? double(i) : d; }
};
bool parse_num(const std::string& s, Num& n) {
  int64_t i;
  if (parse_int(s, i)) return n = {true, i, double(i)}, true;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    uint64_t u;
    if (parse_uint(s, u) && u <= uint64_t(INT64_MAX)) return n = {true, int64_t(u), double(u)}, true;
  }
  double d;
  if (parse_double(s, d)) return n = {false, 0, d}, true;
  return false;
}
std::string num(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9e15) return fmt::format("{}", int64_t(v));
  return fmt::format("{:.12g}", v);
}
const char* tf(bool b) { return b ? "true" : "false"; }

bool truth(const std::string& s) {
  bool b;
  if (parse_bool(s, b)) return b;
  double d;
  return parse_double(s, d) ? d != 0 : !s.empty();
}

int signal_number(const std::string& w) {
  static const std::map<std::string, int> names = {
      {"INT", SIGINT},   {"TERM", SIGTERM}, {"HUP", SIGHUP},   {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"QUIT", SIGQUIT},
      {"ALRM", SIGALRM}, {"PIPE", SIGPIPE}, {"CHLD", SIGCHLD}, {"KILL", SIGKILL}, {"STOP", SIGSTOP}, {"CONT", SIGCONT}};
  std::string n = w;
  if (n.rfind("SIG", 0) == 0) n.erase(0, 3);
  auto it = names.find(n);
  if (it != names.end()) return it->second;
  uint64_t u;
  return parse_uint(n, u) && u > 0 && u < 64 ? int(u) : -1;
}

}  // namespace

class ScriptBase;

// The TYPE SIGNAL scripts of one run, in configuration order: the first to
// register polls the runtime's signal generations and, for each signal
// posted, runs every script that takes it, in order (Click: "If multiple
// Script elements select the same signal, all the scripts will run").
struct SignalHub {
  std::vector<ScriptBase*> scripts;
  std::array<uint64_t, 64> seen{};
};

class ScriptBase : public Element {
 public:
  enum class Type { Active, Passive, Driver, Packet, Signal };
  struct Stmt {
    std::string op;
    std::string rest;
    Loc loc;
  };

  void initialize() override {
    timer_.owner = this;
    r_exit_ = add_drop_reason("script-exit");
    // Click: PACKET is the default type of a Script with ports.
    if (!type_given_ && ninputs() + noutputs() > 0) type_ = Type::Packet;
    if (type_ != Type::Packet && ninputs() + noutputs() > 0)
      throw std::runtime_error("only a Script of TYPE PACKET has ports");
    // Control scripts run once, on worker 0; packet scripts on every worker.
    if (type_ != Type::Packet && !on_home_thread()) return;
    for (size_t i = 0; i < prog_.size(); ++i)
      if (prog_[i].op == "label") labels_[trim(prog_[i].rest).data()] = i;
    for (auto& s : prog_)
      if (s.op == "init" || s.op == "initq" || s.op == "export" || s.op == "exportq") {
        auto w = words(s.rest);
        if (w.empty()) continue;
        std::string v = w.size() > 1 ? expand(join(w, 1)) : "";
        vars_[w[0]] = s.op.back() == 'q' ? unquote(v) : v;
      }
    if (type_ == Type::Active || type_ == Type::Driver) {
      add_task();
      set_task_active(true);
    }
    if (type_ == Type::Signal) {
      Runtime& rt = worker().runtime();
      auto& hub = rt.extension<SignalHub>();
      for (int sig : signals_) rt.take_signal(sig);
      hub.scripts.push_back(this);
      if (hub.scripts.size() == 1) {
        poll_timer_.owner = this;
        poll_timer_.id = 1;
        poll_timer_.background = true;
        worker().schedule(poll_timer_, worker().now_ns() + kSignalPoll);
      }
    }
  }

  // TYPE PACKET: the script runs from the top for each packet; `return N`
  // sends it to output N, `end` to output 0, `exit` drops it.
  void push(int port, PacketBatch* b) override {
    vars_["input"] = std::to_string(port);
    b->for_each([&](uint32_t i, Packet*) {
      int out = run_packet();
      b->result(i) = int16_t(out >= 0 && out < noutputs() ? out : drop_code(out == kExit ? r_exit_ : no_port()));
    });
    dispatch(b);
  }

  bool run_task() override {
    set_task_active(false);
    step();
    return true;
  }
  void run_timer(Timer& t) override {
    if (t.id == 1) return poll_signals();
    // A wait's timer ends the wait; a stop-event wait's poll timer only
    // looks again (step() checks for the event).
    if (waiting_ == Wait::Timer) waiting_ = Wait::None;
    step();
  }

  void add_handlers() override {
    add_write_handler("run", [this](const std::string& v) { run_with(v); });
    add_read_param_handler("run", [this](const std::string& v) { return run_with(v); });
    add_write_handler("step", [this](const std::string& v) {
      uint64_t n = 1;
      parse_uint(trim(v), n);
      for (uint64_t i = 0; i < n; ++i) step_once();
    });
    add_write_handler("goto", [this](const std::string& v) {
      std::string l(trim(v));
      if (!labels_.count(l)) throw std::runtime_error(fmt::format("no label '{}'", l));
      pc_ = labels_[l];
      waiting_ = Wait::None;
      worker().unschedule(timer_);
      step();
    });
    add_write_handler("set", [this](const std::string& v) {
      auto w = words(v);
      if (w.empty()) throw std::runtime_error("expected a variable name");
      vars_[w[0]] = join(w, 1);
    });
    add_read_param_handler("get", [this](const std::string& v) {
      auto it = vars_.find(std::string(trim(v)));
      return it == vars_.end() ? std::string() : it->second;
    });
    for (auto& f : functions())
      add_read_param_handler(f.first, [this, name = f.first](const std::string& v) { return call(name, v); });
    // Reading files is for the configuration itself, not for ControlSocket
    // clients (Click's private handlers).
    set_handler_private("cat");
    set_handler_private("catq");
    // Exported variables: a read and a write handler each.
    for (auto& s : prog_)
      if (s.op == "export" || s.op == "exportq") {
        auto w = words(s.rest);
        if (w.empty()) continue;
        std::string var = w[0];
        add_read_handler(
            var,
            [this, var] {
              auto it = vars_.find(var);
              return it == vars_.end() ? std::string() : it->second;
            },
            Agg::Sum);
        add_write_handler(var, [this, var](const std::string& v) { vars_[var] = v; });
      }
  }

 protected:
  void parse(Args& a, bool driver_syntax) {
    if (!driver_syntax) Args::note_keyword("TYPE");
    for (auto& it : a.items()) {
      it.used = true;
      std::string_view t = trim(it.text);
      if (t.empty()) continue;
      std::string kw, rest;
      if (!driver_syntax && looks_like_keyword(t, &kw, &rest) && kw == "TYPE") {
        type_given_ = true;
        auto w = words(rest);
        std::string ty = w.empty() ? "" : w[0];
        if (ty == "ACTIVE")
          type_ = Type::Active;
        else if (ty == "PASSIVE")
          type_ = Type::Passive;
        else if (ty == "DRIVER")
          type_ = Type::Driver;
        else if (ty == "PACKET")
          type_ = Type::Packet;
        else if (ty == "SIGNAL")
          type_ = Type::Signal;
        else
          a.fail(it, fmt::format("TYPE must be ACTIVE, PASSIVE, DRIVER, PACKET or SIGNAL, not '{}'", rest));
        if ((type_ == Type::Signal) != (w.size() > 1))
          a.fail(it, type_ == Type::Signal ? "TYPE SIGNAL needs the signals it takes (INT, HUP, USR1...)"
                                           : fmt::format("TYPE {} takes no more words", ty));
        for (size_t i = 1; i < w.size(); ++i) {
          int sig = signal_number(w[i]);
          if (sig < 0 || sig == SIGKILL || sig == SIGSTOP)
            a.fail(it, fmt::format("'{}' is not a signal a Script can take", w[i]));
          signals_.push_back(sig);
        }
        continue;
      }
      size_t sp = 0;
      while (sp < t.size() && !std::isspace(static_cast<unsigned char>(t[sp]))) ++sp;
      Stmt s{std::string(t.substr(0, sp)), std::string(trim(t.substr(sp))), it.loc};
      if (driver_syntax) translate_driver(s, a, it);
      if (!kOps.count(s.op) && s.op != "wait_stop_event") a.fail(it, fmt::format("unknown statement '{}'", s.op));
      if (type_ == Type::Packet && (s.op == "wait" || s.op == "pause" || s.op == "stop"))
        a.fail(it, fmt::format("'{}' cannot run inside a TYPE PACKET script", s.op));
      if (s.op == "wait" && s.rest.empty()) s.op = "pause";  // Click: wait with no time is pause
      if ((s.op == "wait") && s.rest.find('$') == std::string::npos) {
        Duration d;
        if (!parse_duration(s.rest, d)) a.fail(it, fmt::format("wait expects a time, got '{}'", s.rest));
      }
      if ((s.op == "set" || s.op == "setq" || s.op == "init" || s.op == "initq" || s.op == "export" ||
           s.op == "exportq") &&
          words(s.rest).empty())
        a.fail(it, fmt::format("'{}' needs a variable name", s.op));
      prog_.push_back(std::move(s));
    }
    if (driver_syntax) {
      if (prog_.empty()) prog_.push_back({"wait_stop_event", "", {}});
      prog_.push_back({"stop", "", {}});
    }
    for (auto& s : prog_)
      if (s.op == "goto") {
        auto w = words(s.rest);
        if (w.empty()) throw ConfigError(s.loc, fmt::format("{}: goto needs a label", name()));
        if (kSpecialLabels.count(w[0])) continue;
        bool found = false;
        for (auto& t : prog_) found |= t.op == "label" && trim(t.rest) == w[0];
        if (!found) throw ConfigError(s.loc, fmt::format("{}: goto to undefined label '{}'", name(), w[0]));
      }
  }

  Type type_ = Type::Active;
  bool type_given_ = false;

 private:
  static inline const std::set<std::string> kOps = {
      "set",  "setq",   "init",    "initq",  "export", "exportq", "print", "printq", "printn", "printnq",
      "read", "readq",  "write",   "writeq", "wait",   "pause",   "label", "goto",   "loop",   "end",
      "exit", "return", "returnq", "stop",   "error",  "errorq",  "save",  "append"};
  static inline const std::set<std::string> kSpecialLabels = {"exit", "end", "loop", "error", "stop"};
  static constexpr uint64_t kSignalPoll = 5 * 1000 * 1000;  // 5 ms
  enum class Wait { None, Timer, Pause, StopEvent };
  // What ended a run of statements.
  enum class End { Running, Blocked, Done, Exit, Return, Error };
  static constexpr int kExit = -1000;
  uint16_t no_port() {
    if (r_no_port_ == UINT16_MAX) r_no_port_ = add_drop_reason("no-such-output");
    return r_no_port_;
  }

  // ---------------------------------------------------------------- signals
  void poll_signals() {
    Runtime& rt = worker().runtime();
    auto& hub = rt.extension<SignalHub>();
    for (int sig = 1; sig < 64; ++sig) {
      if (!rt.signal_taken(sig)) continue;
      uint64_t g = rt.signal_generation(sig);
      if (g == hub.seen[size_t(sig)]) continue;
      hub.seen[size_t(sig)] = g;
      for (ScriptBase* s : hub.scripts)
        if (std::find(s->signals_.begin(), s->signals_.end(), sig) != s->signals_.end() && !s->disabled_) s->restart();
    }
    worker().schedule(poll_timer_, worker().now_ns() + kSignalPoll);
  }

  // ---------------------------------------------------------------- packets
  // Runs the whole script for one packet; returns the output port or kExit.
  int run_packet() {
    size_t pc = 0;
    int jumps = 0;
    while (pc < prog_.size()) {
      const Stmt& s = prog_[pc++];
      if (s.op == "return" || s.op == "returnq") {
        int64_t port = 0;
        std::string v(trim(unquote(expand(s.rest))));
        if (!v.empty() && !parse_int(v, port)) return kExit;
        return int(port);
      }
      if (s.op == "end") return 0;
      if (s.op == "exit" || s.op == "error" || s.op == "errorq") return kExit;
      if (s.op == "goto" || s.op == "loop") {
        auto w = words(s.rest);
        if (s.op == "goto" && w.size() >= 2 && !truth(unquote(expand(join(w, 1))))) continue;
        std::string l = s.op == "loop" ? "loop" : w[0];
        if (l == "exit" || l == "error") return kExit;
        if (l == "end" || l == "stop") return 0;
        if (++jumps >= kMaxJumps) {
          run_error("too many jumps, giving up", false);
          return kExit;
        }
        pc = l == "loop" ? 0 : labels_[l];
        continue;
      }
      simple(s);
    }
    return 0;
  }

  // ---------------------------------------------------------------- statements
  // Statements that neither wait nor jump: set, print, read, write.
  void simple(const Stmt& s) {
    Runtime& rt = worker().runtime();
    const std::string& op = s.op;
    if (op == "set" || op == "setq") {
      auto w = words(s.rest);
      std::string v = expand(join(w, 1));
      vars_[w[0]] = op == "setq" ? unquote(v) : v;
    } else if (op == "print" || op == "printn" || op == "printq" || op == "printnq" || op == "save" || op == "append") {
      print(s);
    } else if (op == "read" || op == "readq") {
      auto w = words(expand(s.rest));
      if (w.empty()) return;
      std::string param = join(w, 1);
      if (op == "readq") param = unquote(param);
      std::string shown, v;
      if (read_value(w[0], param, v, &shown)) {
        while (!v.empty() && v.back() == '\n') v.pop_back();
        std::fputs(fmt::format("{}:\n{}\n", shown, v).c_str(), stderr);
        std::fflush(stderr);
      }
    } else if (op == "write" || op == "writeq") {
      auto w = words(expand(s.rest));
      if (w.empty()) return;
      std::string err, val = unquote(join(w, 1));
      // A name without a dot is this script's handler, else a global one
      // (stop, timewarp).
      std::string path = w[0].find('.') != std::string::npos || !find_handler(w[0]) ? w[0] : name() + "." + w[0];
      bool ok = rt.write_handler(path, val, err, worker().id());
      write_status_ = ok ? 0 : -EINVAL;
      if (!ok) call_error(val.empty() ? path : path + " " + val, path, err);
    }
  }

  // print, printn, printq, printnq; save FILE TEXT and append FILE TEXT
  // (DriverManager's) are prints to a file.
  void print(const Stmt& s) {
    std::string text(trim(s.rest)), file;
    bool append = s.op == "append", newline = s.op == "print" || s.op == "printq";
    if (s.op == "save" || s.op == "append") {
      auto w = words(text);
      file = w.empty() ? "" : unquote(expand(w[0]));
      text = join(w, 1);
    } else if (!text.empty() && text[0] == '>') {
      append = text.size() > 1 && text[1] == '>';
      text = std::string(trim(std::string_view(text).substr(append ? 2 : 1)));
      size_t sp = text.find_first_of(" \t");
      file = unquote(expand(text.substr(0, sp)));
      text = sp == std::string::npos ? "" : std::string(trim(std::string_view(text).substr(sp)));
    }
    // TEXT that starts with a letter, '@' or '_' (as written, before
    // expansion) names a read handler, whose value is printed; otherwise
    // TEXT is printed, expanded, with a layer of quotes removed.
    std::string line, x = expand(text);
    unsigned char c0 = text.empty() ? 0 : static_cast<unsigned char>(text[0]);
    if (std::isalpha(c0) || c0 == '@' || c0 == '_') {
      auto w = words(x);
      std::string param = join(w, 1);
      if (s.op == "printq" || s.op == "printnq") param = unquote(param);
      if (!read_value(w[0], param, line)) return;
    } else {
      line = unquote(x);
    }
    if (newline && (line.empty() || line.back() != '\n')) line += '\n';
    if (file.empty() || file == "-") {
      std::fputs(line.c_str(), stdout);
      std::fflush(stdout);
    } else {
      write_file_text(file, line, append);
    }
  }

  // A file that does not exist yet appears whole: the text goes to a
  // temporary file renamed into place, so a process waiting for the file
  // (a shell loop on `[ -f FILE ]`) never reads it empty. An existing file
  // (or a device, a pipe) is truncated or appended to in place.
  void write_file_text(const std::string& file, const std::string& text, bool append) {
    struct stat st;
    bool fresh = ::stat(file.c_str(), &st) != 0 && errno == ENOENT;
    std::string path = fresh ? fmt::format("{}.shoal-tmp.{}", file, ::getpid()) : file;
    FILE* f = std::fopen(path.c_str(), append && !fresh ? "ab" : "wb");
    if (!f) return run_error(fmt::format("print >{}: {}", file, std::strerror(errno)));
    bool ok = std::fputs(text.c_str(), f) >= 0;
    ok &= std::fclose(f) == 0;
    if (ok && fresh) ok = std::rename(path.c_str(), file.c_str()) == 0;
    if (!ok) {
      run_error(fmt::format("print >{}: {}", file, std::strerror(errno)));
      if (fresh) std::remove(path.c_str());
    }
  }

  // DriverManager is a Script of type DRIVER (as in Click): every Script
  // statement, plus its own names (wait_stop, wait_pause, wait_time,
  // write_skip), so FastClick's timing idiom `set t0 $(now), pause, set t1
  // $(now), print ...` runs unchanged.
  static void translate_driver(Stmt& s, Args& a, const ArgItem& it) {
    if (s.op == "wait_stop" || s.op == "wait_pause") {
      uint64_t n = 1;
      if (!s.rest.empty() && !parse_uint(s.rest, n)) a.fail(it, fmt::format("{} expects a count", s.op));
      s.op = "wait_stop_event";
      s.rest = std::to_string(n);
    } else if (s.op == "wait_time" || s.op == "wait_for") {
      s.op = "wait";
    } else if (s.op == "write_skip") {
      s.op = "write";
    } else if (!kOps.count(s.op)) {
      a.fail(it, fmt::format("unknown DriverManager instruction '{}'", s.op));
    }
  }

  // The run handler: a PASSIVE script's body with $args, $1... and $#; its
  // `return` value is the handler's.
  std::string run_with(const std::string& args) {
    auto w = words(args);
    vars_["args"] = args;
    vars_["#"] = std::to_string(w.size());
    for (size_t i = 0; i < w.size(); ++i) vars_[std::to_string(i + 1)] = w[i];
    ret_.clear();
    restart();
    return ret_;
  }

  void restart() {
    pc_ = 0;
    waiting_ = Wait::None;
    paused_for_stop_ = false;
    pauses_ = 0;
    worker().unschedule(timer_);
    step();
  }

  // The step handler: past one pause, or ends a wait now.
  void step_once() {
    if (waiting_ == Wait::Pause) {
      if (pauses_ > 1) return void(--pauses_);
      waiting_ = Wait::None;
      step();
    } else if (waiting_ == Wait::Timer) {
      worker().unschedule(timer_);
      waiting_ = Wait::None;
      step();
    }
  }

  // ---------------------------------------------------------------- handlers
  // A read handler's value: NAME is ELEMENT.HANDLER, or one of this
  // script's own handlers (add, sub... an exported variable). `shown` gets
  // the name as Click prints it ("s0.length").
  bool read_value(const std::string& nm, const std::string& param, std::string& out, std::string* shown = nullptr) {
    bool own = nm.find('.') == std::string::npos;
    std::string path = own ? name() + "." + nm : nm;
    if (shown) *shown = path;
    if (own && functions().count(nm)) return out = call(nm, param), true;
    if (own && nm == "get") {
      auto it = vars_.find(std::string(trim(param)));
      return out = it == vars_.end() ? "" : it->second, true;
    }
    std::string err;
    if (own && (nm == "version" || nm == "threads" || nm == "stopping") && param.empty() &&
        worker().runtime().read_handler(nm, out, err))
      return true;
    if (!worker().runtime().read_handler(path, out, err, param)) {
      call_error(param.empty() ? path : path + " " + std::string(param), path, err);
      return false;
    }
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return true;
  }

  using Fn = std::string (ScriptBase::*)(const std::string& op, const std::vector<std::string>& a);
  static const std::map<std::string, Fn>& functions() {
    static const std::map<std::string, Fn> f = {
        {"add", &ScriptBase::arith},       {"sub", &ScriptBase::arith},    {"mul", &ScriptBase::arith},
        {"div", &ScriptBase::arith},       {"idiv", &ScriptBase::arith},   {"min", &ScriptBase::arith},
        {"max", &ScriptBase::arith},       {"avg", &ScriptBase::arith},    {"count", &ScriptBase::arith},
        {"popcount", &ScriptBase::arith},  {"gt_vec", &ScriptBase::arith}, {"mod", &ScriptBase::modrem},
        {"rem", &ScriptBase::modrem},      {"neg", &ScriptBase::unary},    {"abs", &ScriptBase::unary},
        {"floor", &ScriptBase::unary},     {"round", &ScriptBase::unary},  {"ceil", &ScriptBase::unary},
        {"eq", &ScriptBase::compare},      {"ne", &ScriptBase::compare},   {"lt", &ScriptBase::compare},
        {"gt", &ScriptBase::compare},      {"le", &ScriptBase::compare},   {"ge", &ScriptBase::compare},
        {"not", &ScriptBase::logic},       {"and", &ScriptBase::logic},    {"or", &ScriptBase::logic},
        {"nand", &ScriptBase::logic},      {"nor", &ScriptBase::logic},    {"if", &ScriptBase::misc},
        {"in", &ScriptBase::misc},         {"first", &ScriptBase::misc},   {"now", &ScriptBase::misc},
        {"now_steady", &ScriptBase::misc}, {"random", &ScriptBase::misc},  {"length", &ScriptBase::misc},
        {"unquote", &ScriptBase::misc},    {"sprintf", &ScriptBase::misc}, {"readable", &ScriptBase::misc},
        {"writable", &ScriptBase::misc},   {"htons", &ScriptBase::misc},   {"htonl", &ScriptBase::misc},
        {"ntohs", &ScriptBase::misc},      {"ntohl", &ScriptBase::misc},   {"cat", &ScriptBase::misc},
        {"catq", &ScriptBase::misc},       {"kill", &ScriptBase::misc},    {"shift", &ScriptBase::misc}};
    return f;
  }
  std::string call(const std::string& op, const std::string& param) {
    if (op == "length") return std::to_string(param.size());  // the parameter string as given
    if (op == "unquote") return unquote(trim(param));
    std::vector<std::string> a;
    for (auto& w : words(param)) a.push_back(op == "sprintf" || op == "in" || op == "if" ? w : unquote(w));
    return (this->*functions().at(op))(op, a);
  }
  std::string fail_expr(const std::string& op, const std::string& why) {
    call_error(op, op, why);
    return "";
  }
  // Click's report of a failed handler call: the call, then the message
  // (less the handler's name the runtime puts first) indented.
  static void call_error(const std::string& call, const std::string& path, std::string err) {
    if (err.rfind(path + ": ", 0) == 0) err.erase(0, path.size() + 2);
    fmt::print(stderr, "While calling '{}':\n  {}\n", call, err);
  }
  std::string arith(const std::string& op, const std::vector<std::string>& a) {
    std::vector<Num> n(a.size());
    bool integral = true;
    for (size_t i = 0; i < a.size(); ++i) {
      if (!parse_num(a[i], n[i])) return fail_expr(op, fmt::format("expected a number, got '{}'", a[i]));
      integral &= n[i].integral;
    }
    if (op == "count") return std::to_string(a.size());
    if (op == "popcount")
      return std::to_string(std::count_if(n.begin(), n.end(), [](const Num& x) { return x.real() != 0; }));
    if (op == "gt_vec") {
      if (n.empty()) return "0";
      return std::to_string(
          std::count_if(n.begin() + 1, n.end(), [&](const Num& x) { return x.real() > n[0].real(); }));
    }
    if (n.empty()) return op == "mul" ? "1" : "0";
    if (op == "avg") {
      double s = 0;
      for (auto& x : n) s += x.real();
      return num(s / double(n.size()));
    }
    if (op == "div") {
      double r = n[0].real();
      for (size_t i = 1; i < n.size(); ++i) {
        if (n[i].real() == 0) return fail_expr(op, "division by zero");
        r /= n[i].real();
      }
      return num(r);
    }
    if (integral) {
      int64_t r = n[0].i;
      for (size_t i = 1; i < n.size(); ++i) {
        int64_t x = n[i].i;
        if (op == "add")
          r += x;
        else if (op == "sub")
          r -= x;
        else if (op == "mul")
          r *= x;
        else if (op == "min")
          r = std::min(r, x);
        else if (op == "max")
          r = std::max(r, x);
        else if (op == "idiv") {
          if (x == 0) return fail_expr(op, "division by zero");
          r /= x;
        }
      }
      return std::to_string(r);
    }
    double r = n[0].real();
    for (size_t i = 1; i < n.size(); ++i) {
      double x = n[i].real();
      if (op == "add")
        r += x;
      else if (op == "sub")
        r -= x;
      else if (op == "mul")
        r *= x;
      else if (op == "min")
        r = std::min(r, x);
      else if (op == "max")
        r = std::max(r, x);
      else if (op == "idiv") {
        if (x == 0) return fail_expr(op, "division by zero");
        r = std::trunc(r / x);
      }
    }
    return num(r);
  }
  std::string modrem(const std::string& op, const std::vector<std::string>& a) {
    Num x, y;
    if (a.size() != 2 || !parse_num(a[0], x) || !parse_num(a[1], y)) return fail_expr(op, "expected two numbers");
    if (y.real() == 0) return fail_expr(op, "division by zero");
    if (op == "mod") {
      if (!x.integral || !y.integral) return fail_expr(op, "expected two integers");
      return std::to_string(x.i % y.i);
    }
    return num(std::fmod(x.real(), y.real()));
  }
  std::string unary(const std::string& op, const std::vector<std::string>& a) {
    Num x;
    if (a.size() != 1 || !parse_num(a[0], x)) return fail_expr(op, "expected a number");
    if (x.integral) {
      if (op == "neg") return std::to_string(-x.i);
      if (op == "abs") return std::to_string(x.i < 0 ? -x.i : x.i);
      return std::to_string(x.i);
    }
    if (op == "neg") return num(-x.d);
    if (op == "abs") return num(std::fabs(x.d));
    if (op == "floor") return num(std::floor(x.d));
    if (op == "ceil") return num(std::ceil(x.d));
    return num(std::round(x.d));
  }
  std::string compare(const std::string& op, const std::vector<std::string>& a) {
    if (a.size() != 2) return fail_expr(op, "expected two arguments");
    Num x, y;
    int c;
    if (parse_num(a[0], x) && parse_num(a[1], y)) {
      if (x.integral && y.integral)
        c = x.i < y.i ? -1 : x.i > y.i;
      else
        c = x.real() < y.real() ? -1 : x.real() > y.real();
    } else {
      c = a[0].compare(a[1]);
      c = c < 0 ? -1 : c > 0;
    }
    if (op == "eq") return tf(c == 0);
    if (op == "ne") return tf(c != 0);
    if (op == "lt") return tf(c < 0);
    if (op == "gt") return tf(c > 0);
    if (op == "le") return tf(c <= 0);
    return tf(c >= 0);
  }
  std::string logic(const std::string& op, const std::vector<std::string>& a) {
    std::vector<bool> b;
    for (auto& s : a) {
      bool v;
      if (!parse_bool(s, v)) return fail_expr(op, fmt::format("expected a boolean, got '{}'", s));
      b.push_back(v);
    }
    if (op == "not") return b.size() == 1 ? tf(!b[0]) : fail_expr(op, "expected one boolean");
    bool all = std::all_of(b.begin(), b.end(), [](bool v) { return v; });
    bool any = std::any_of(b.begin(), b.end(), [](bool v) { return v; });
    if (op == "and") return tf(all);
    if (op == "or") return tf(any);
    if (op == "nand") return tf(!all);
    return tf(!any);
  }
  std::string misc(const std::string& op, const std::vector<std::string>& a) {
    Runtime& rt = worker().runtime();
    if (op == "if") {
      if (a.size() != 3) return fail_expr(op, "expected CONDITION THEN ELSE");
      return unquote(truth(unquote(a[0])) ? a[1] : a[2]);
    }
    if (op == "in") {
      for (size_t i = 1; i < a.size(); ++i)
        if (unquote(a[i]) == unquote(a[0])) return "true";
      return "false";
    }
    if (op == "first") return a.empty() ? "" : a[0];
    if (op == "now") {
      uint64_t t = realtime_ns();
      return fmt::format("{}.{:09d}", t / 1000000000, t % 1000000000);
    }
    if (op == "now_steady") {
      uint64_t t = worker().now_ns();
      return fmt::format("{}.{:09d}", t / 1000000000, t % 1000000000);
    }
    if (op == "random") {
      static thread_local std::mt19937_64 rng(std::random_device{}());
      Num lo{true, 0, 0}, hi{true, RAND_MAX, 0};
      if (a.size() == 1 && parse_num(a[0], hi) && hi.integral && hi.i > 0)
        hi.i -= 1;
      else if (a.size() == 2 && parse_num(a[0], lo) && parse_num(a[1], hi) && lo.integral && hi.integral &&
               lo.i <= hi.i) {
      } else if (!a.empty())
        return fail_expr(op, "expected no argument, N, or N1 N2");
      return std::to_string(std::uniform_int_distribution<int64_t>(lo.i, hi.i)(rng));
    }
    if (op == "htons" || op == "ntohs" || op == "htonl" || op == "ntohl") {
      Num x;
      if (a.size() != 1 || !parse_num(a[0], x) || !x.integral || x.i < 0) return fail_expr(op, "expected an integer");
      if (op.back() == 's') return std::to_string(((x.i & 0xff) << 8) | ((x.i >> 8) & 0xff));
      uint32_t v = uint32_t(x.i);
      return std::to_string(__builtin_bswap32(v));
    }
    if (op == "readable" || op == "writable") {
      for (auto& h : a) {
        std::string path = h.find('.') == std::string::npos ? name() + "." + h : h;
        size_t dot = path.rfind('.');
        Element* e = router().find(path.substr(0, dot));
        const Handler* hh = e ? e->find_handler(path.substr(dot + 1)) : nullptr;
        if (!hh || !(op == "readable" ? bool(hh->read) : bool(hh->write))) return "false";
      }
      return "true";
    }
    if (op == "cat" || op == "catq") {
      if (a.size() != 1) return fail_expr(op, "expected a file name");
      std::ifstream f(a[0], std::ios::binary);
      if (!f) return fail_expr(op, fmt::format("{}: {}", a[0], std::strerror(errno)));
      std::stringstream ss;
      ss << f.rdbuf();
      if (op == "cat") return ss.str();
      std::string q = "\"";
      for (char c : ss.str()) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
      return q + "\"";
    }
    if (op == "kill") {
      if (a.size() < 2) return fail_expr(op, "expected SIGNAL PID...");
      int sig = signal_number(a[0]);
      if (sig < 0) return fail_expr(op, fmt::format("'{}' is not a signal", a[0]));
      for (size_t i = 1; i < a.size(); ++i) {
        int64_t pid;
        if (!parse_int(a[i], pid) || pid <= 0) return fail_expr(op, fmt::format("'{}' is not a process ID", a[i]));
        if (::kill(pid_t(pid), sig) != 0) return fail_expr(op, std::strerror(errno));
      }
      return "";
    }
    if (op == "shift") {
      std::string var = a.empty() ? "args" : a[0];
      auto w = words(vars_[var]);
      if (w.empty()) return "";
      vars_[var] = join(w, 1);
      return w[0];
    }
    if (op == "sprintf") {
      if (a.empty()) return fail_expr(op, "expected a format");
      return sprintf(unquote(a[0]), a);
    }
    (void)rt;
    return fail_expr(op, "unknown");
  }
  // Click's sprintf: each conversion takes the next argument, as an integer
  // (d i u o x X c), a real (e f g E G) or a string (s).
  std::string sprintf(const std::string& fmtstr, const std::vector<std::string>& a) {
    std::string out;
    size_t arg = 1;
    for (size_t i = 0; i < fmtstr.size(); ++i) {
      if (fmtstr[i] != '%') {
        out += fmtstr[i];
        continue;
      }
      size_t j = i + 1;
      while (j < fmtstr.size() && std::strchr("-+ #0123456789.", fmtstr[j])) ++j;
      if (j >= fmtstr.size()) return fail_expr("sprintf", "bad format");
      char conv = fmtstr[j];
      std::string spec = fmtstr.substr(i, j - i);
      if (conv == '%') {
        out += '%';
      } else {
        std::string v = arg < a.size() ? unquote(a[arg++]) : "";
        Num n;
        if (std::strchr("diuoxXc", conv)) {
          if (!parse_num(v, n) || !n.integral)
            return fail_expr("sprintf", fmt::format("expected an integer, got '{}'", v));
          out += fmt::sprintf(spec + (conv == 'c' ? "c" : std::string("ll") + conv),
                              conv == 'c' ? (long long)(char)n.i : (long long)n.i);
        } else if (std::strchr("eEfgG", conv)) {
          if (!parse_num(v, n)) return fail_expr("sprintf", fmt::format("expected a number, got '{}'", v));
          out += fmt::sprintf(spec + conv, n.real());
        } else if (conv == 's') {
          out += fmt::sprintf(spec + 's', v);
        } else {
          return fail_expr("sprintf", fmt::format("bad conversion '%{}'", conv));
        }
      }
      i = j;
    }
    return out;
  }

  // $var, ${var}, $1, $#, $?, $$ and $(HANDLER ARGS) substitution; a
  // variable the script does not have stays as written (Click's).
  std::string expand(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '$') {
        out += "\\$";
        ++i;
        continue;
      }
      if (s[i] != '$' || i + 1 >= s.size()) {
        out.push_back(s[i]);
        continue;
      }
      if (s[i + 1] == '(') {
        int depth = 1;
        size_t j = i + 2;
        for (; j < s.size() && depth; ++j) depth += s[j] == '(' ? 1 : s[j] == ')' ? -1 : 0;
        out += eval(expand(s.substr(i + 2, j - i - 3)));
        i = j - 1;
        continue;
      }
      if (s[i + 1] == '$' || s[i + 1] == '?' || s[i + 1] == '#') {
        char c = s[i + 1];
        out += c == '$' ? std::to_string(getpid()) : c == '?' ? std::to_string(write_status_) : vars_["#"];
        ++i;
        continue;
      }
      size_t b = i + 1, e;
      bool brace = s[b] == '{';
      if (brace) ++b;
      e = b;
      while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_')) ++e;
      std::string v = s.substr(b, e - b);
      auto it = vars_.find(v);
      if (it != vars_.end())
        out += it->second;
      else if (v.empty())
        out.push_back('$');
      else
        out += s.substr(i, (brace && e < s.size() && s[e] == '}' ? e + 1 : e) - i);
      i = (brace && e < s.size() && s[e] == '}') ? e : e - 1;
    }
    return out;
  }

  // $(HANDLER ARGS): a read handler, this script's own when HANDLER has
  // no dot (add, sub, lt, now...).
  std::string eval(const std::string& expr) {
    auto w = words(expr);
    if (w.empty()) return "";
    std::string v;
    if (w[0].find('.') == std::string::npos && !functions().count(w[0]) && w[0] != "get" && w[0] != "version" &&
        w[0] != "threads" && w[0] != "stopping") {
      auto it = vars_.find(w[0]);  // $(x) where x is a variable: its value
      if (it != vars_.end() && w.size() == 1) return it->second;
    }
    return read_value(w[0], join(w, 1), v) ? v : "";
  }

  // Runs statements until one waits or the script ends.
  void step() {
    Runtime& rt = worker().runtime();
    int jumps = 0;
    auto jump = [&](const std::string& label) {
      // Click's limit: a script that jumps this often without waiting would
      // never give the worker back.
      if (label == "exit" || label == "end" || label == "error") return void(pc_ = prog_.size());
      if (label == "stop") return stop_router(rt);
      if (++jumps < kMaxJumps) return void(pc_ = label == "loop" ? 0 : labels_[label]);
      run_error("too many jumps, giving up", false);  // Click's words; Click's exit status too
      pc_ = prog_.size();
    };
    while (pc_ < prog_.size()) {
      if (waiting_ == Wait::StopEvent) {
        if (!draining_) {
          if (!rt.take_stop_event()) {
            worker().schedule(timer_, worker().now_ns() + 1000000);  // poll each ms
            return;
          }
          draining_ = true;
          drain_until_ = worker().now_ns() + 2000000000ull;
        }
        // A source stopped after pushing its last packet: in Click those
        // packets have been processed by now. Elements that work
        // asynchronously (offload aggregates) finish theirs first, so what
        // the script does next (a handler write: new rules) comes after them
        // (bounded: a wedged device cannot hang the script).
        bool more = false;
        Router& r = worker().router();
        for (size_t i = 0; i < r.size(); ++i) more |= r.element(i)->settle();
        if (more && worker().now_ns() < drain_until_) {
          worker().schedule(timer_, worker().now_ns() + 50000);
          return;
        }
        draining_ = false;
        if (--stop_events_needed_ > 0) continue;
        waiting_ = Wait::None;
        if (!paused_for_stop_) ++pc_;  // past wait_stop_event (pause already moved on)
        paused_for_stop_ = false;
        continue;
      }
      const Stmt& s = prog_[pc_];
      if (s.op == "wait_stop_event") {
        uint64_t n = 1;
        parse_uint(s.rest, n);
        stop_events_needed_ = n;
        waiting_ = Wait::StopEvent;
        continue;
      }
      ++pc_;
      const std::string& op = s.op;
      if (op == "label" || op == "init" || op == "initq" || op == "export" || op == "exportq") continue;
      if (op == "wait") {
        Duration d;
        std::string t(trim(unquote(expand(s.rest))));
        if (!parse_duration(t, d)) {
          fmt::print(stderr, "{} :: {}: wait: bad time '{}'\n", name(), class_name(), t);
          continue;
        }
        waiting_ = Wait::Timer;
        worker().schedule(timer_, worker().now_ns() + d.ns);
        return;
      } else if (op == "pause") {
        uint64_t n = 1;
        std::string c(trim(expand(s.rest)));
        if (!c.empty() && (!parse_uint(c, n) || n == 0)) n = 1;
        if (type_ == Type::Driver) {
          stop_events_needed_ = n;
          waiting_ = Wait::StopEvent;
          paused_for_stop_ = true;
          continue;
        }
        pauses_ = n;
        waiting_ = Wait::Pause;
        return;
      } else if (op == "goto") {
        auto w = words(s.rest);
        if (w.size() >= 2 && !truth(unquote(expand(join(w, 1))))) continue;
        jump(w[0]);
      } else if (op == "loop") {
        jump("loop");
      } else if (op == "end" || op == "exit" || op == "return" || op == "returnq") {
        if (op.rfind("return", 0) == 0) {
          std::string v = expand(s.rest);
          ret_ = op == "returnq" ? unquote(v) : v;
        }
        if (op == "exit" && type_ == Type::Signal) disabled_ = true;
        pc_ = prog_.size();
      } else if (op == "error" || op == "errorq") {
        std::string m = expand(s.rest);
        if (op == "errorq") m = unquote(m);
        if (!m.empty()) run_error(m, false);
        pc_ = prog_.size();
      } else if (op == "stop") {
        stop_router(rt);
      } else {
        simple(s);
      }
    }
  }
  void stop_router(Runtime& rt) {
    // A DriverManager stops the router; a Script asks, like any element.
    if (type_ == Type::Driver)
      rt.stop_now();
    else
      rt.stop_event();
    pc_ = prog_.size();
  }

  static constexpr int kMaxJumps = 1000;
  std::vector<Stmt> prog_;
  std::vector<int> signals_;
  std::map<std::string, size_t> labels_;
  std::map<std::string, std::string> vars_;
  std::string ret_;
  size_t pc_ = 0;
  Wait waiting_ = Wait::None;
  uint64_t stop_events_needed_ = 0, pauses_ = 0;
  int write_status_ = 0;
  bool paused_for_stop_ = false, disabled_ = false;
  bool draining_ = false;  // a stop event taken: waiting for elements' asynchronous work
  uint64_t drain_until_ = 0;
  Timer timer_, poll_timer_;
  uint16_t r_exit_ = 0, r_no_port_ = UINT16_MAX;
};

class Script : public ScriptBase {
 public:
  void configure(Args& a) override { parse(a, false); }
};
SHOAL_ELEMENT(
    Script, .name = "Script", .ports = "-/-", .processing = "h/h",
    .summary = "runs a small control script (Click's Script)",
    .description =
        "Click's Script. Each argument is an instruction: set/setq VAR TEXT, init/initq VAR TEXT, export/exportq "
        "VAR [TEXT] (also a read and write handler VAR), print/printn/printq/printnq [>FILE|>>FILE] TEXT|HANDLER, "
        "read/readq HANDLER [ARGS] (name and value to standard error), write/writeq HANDLER [ARGS] ($? is its "
        "status), wait TIME, pause [COUNT], label L, goto L [COND] (L may be exit, end, loop, error, stop), loop, "
        "end, exit, return/returnq [VALUE], error [MSG], stop. $VAR, ${VAR}, $1.., $#, $args, $?, $$ (the process "
        "ID) and $(HANDLER ARGS) expand; a handler without a dot is the script's own: add sub mul div idiv mod "
        "rem neg abs floor round ceil min max avg count popcount gt_vec eq ne lt gt le ge not and or nand nor if "
        "in first sprintf random length unquote readable writable now now_steady htons htonl ntohs ntohl cat "
        "catq kill get shift. A script that jumps 1,000 times without waiting gives up ('too many jumps'). "
        "TYPE ACTIVE (default) starts at once; PASSIVE runs from its run handler (read with parameters: "
        "$args, $1..., the return value is the handler's); DRIVER makes pause wait for stop events; SIGNAL "
        "SIG... runs each time the process receives one of the signals (INT, HUP, USR1...) instead of the "
        "default action (every script that takes a signal runs, in order; the same stopping signal twice "
        "within half a second stops the run all the same). These run once, on worker 0; writes reach every "
        "worker's copy. TYPE PACKET runs the script for each packet pushed in, on every worker ($input is the "
        "port): return N sends it to output N, end to output 0, exit drops it (reason 'script-exit').",
    .args = {{"TYPE", "ACTIVE|PASSIVE|DRIVER|PACKET|SIGNAL SIG...", "when it runs"},
             {"INSTRUCTION...", "instruction", "the script"}},
    .handlers = {{"run", "rw", "start from the top (read with parameters: a PASSIVE script's return value)"},
                 {"step", "w", "continue past COUNT pauses (default 1), or end a wait now"},
                 {"goto", "w", "continue at a label"},
                 {"set", "w", "VAR VALUE"},
                 {"get", "r", "a variable's value (read with parameters)"},
                 {"add, sub, ...", "r", "the expression functions, read with parameters"},
                 {"VAR", "rw", "each exported variable"}},
    .example = "Script(wait 1s, print $(c.count) packets, write c.reset, loop);", .own_variables = true);

class DriverManager : public ScriptBase {
 public:
  void configure(Args& a) override {
    type_ = Type::Driver;
    parse(a, true);
  }
};
SHOAL_ELEMENT(DriverManager, .name = "DriverManager", .ports = "0/0", .processing = "a/a",
              .summary = "decides when the router stops (Click's DriverManager)",
              .description =
                  "A Script of type DRIVER, as in Click: every Script instruction (set, print, goto, pause...), where "
                  "pause [N], wait_stop [N] and wait_pause [N] wait for N stop requests (e.g. from FromDump STOP "
                  "true), wait_time TIME and wait_for TIME are wait TIME, write_skip is write, and save FILE TEXT / "
                  "append FILE TEXT write a handler's value or text to a file. FastClick's timing idiom runs "
                  "unchanged: set t0 $(now), pause, set t1 $(now), print $(sub $t1 $t0). After the last instruction "
                  "the router stops. With a DriverManager present, stop requests go to it instead of stopping the "
                  "router. Empty: wait_stop, then stop.",
              .args = {{"INSTRUCTION...", "instruction", "the instructions"}}, .handlers = {},
              .example = "DriverManager(wait_stop, read c.count, stop);", .own_variables = true);

}  // namespace shoal
