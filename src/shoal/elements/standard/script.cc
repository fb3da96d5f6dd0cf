// Script and DriverManager: Click's small control language. One interpreter
// serves both; it runs on worker 0 and reaches every worker's copy of an
// element through the runtime's handler access.
#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

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
        size_t e = s.find(c, i + 1);
        i = e == std::string_view::npos ? s.size() : e + 1;
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

std::string unquote(const std::string& w) {
  std::string s;
  if (w.size() >= 2 && (w.front() == '"' || w.front() == '\'') && parse_string(w, s)) return s;
  return w;
}

std::string num(double v) {
  if (std::floor(v) == v && std::fabs(v) < 9e15) return fmt::format("{}", int64_t(v));
  return fmt::format("{:.6g}", v);
}

}  // namespace

class ScriptBase : public Element {
 public:
  enum class Type { Active, Passive, Driver, Packet };
  struct Stmt {
    std::string op;
    std::string rest;
    Loc loc;
  };

  void initialize() override {
    timer_.owner = this;
    r_exit_ = add_drop_reason("script-exit");
    if (type_ != Type::Packet && ninputs() + noutputs() > 0)
      throw std::runtime_error("only a Script of TYPE PACKET has ports");
    // Control scripts run once, on worker 0; packet scripts on every worker.
    if (type_ != Type::Packet && worker().id() != 0) return;
    for (size_t i = 0; i < prog_.size(); ++i)
      if (prog_[i].op == "label") labels_[trim(prog_[i].rest).data()] = i;
    for (auto& s : prog_)
      if (s.op == "init") {
        auto w = words(s.rest);
        if (!w.empty()) vars_[w[0]] = w.size() > 1 ? expand(join(w, 1)) : "";
      }
    if (type_ == Type::Active || type_ == Type::Driver) {
      add_task();
      set_task_active(true);
    }
  }

  // TYPE PACKET: the script runs from the top for each packet; `return N`
  // sends it to output N, `end` to output 0, `exit` drops it.
  void push(int, PacketBatch* b) override {
    b->for_each([&](uint32_t i, Packet*) {
      int port = run_packet();
      b->result(i) = int16_t(port >= 0 && port < noutputs() ? port : drop_code(port == kExit ? r_exit_ : no_port()));
    });
    dispatch(b);
  }

  bool run_task() override {
    set_task_active(false);
    step();
    return true;
  }
  void run_timer(Timer&) override {
    // A wait's timer ends the wait; a stop-event wait's poll timer only
    // looks again (step() checks for the event).
    if (waiting_ == Wait::Timer) waiting_ = Wait::None;
    step();
  }

  void add_handlers() override {
    add_write_handler("run", [this](const std::string&) { restart(); });
    add_write_handler("step", [this](const std::string&) {
      if (waiting_ == Wait::Pause) waiting_ = Wait::None, step();
    });
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
        if (rest == "ACTIVE")
          type_ = Type::Active;
        else if (rest == "PASSIVE")
          type_ = Type::Passive;
        else if (rest == "DRIVER")
          type_ = Type::Driver;
        else if (rest == "PACKET")
          type_ = Type::Packet;
        else
          a.fail(it, fmt::format("TYPE must be ACTIVE, PASSIVE, DRIVER or PACKET, not '{}'", rest));
        continue;
      }
      size_t sp = 0;
      while (sp < t.size() && !std::isspace(static_cast<unsigned char>(t[sp]))) ++sp;
      Stmt s{std::string(t.substr(0, sp)), std::string(trim(t.substr(sp))), it.loc};
      if (driver_syntax) translate_driver(s, a, it);
      if (!kScriptOps.count(s.op) && s.op != "wait_stop_event") a.fail(it, fmt::format("unknown statement '{}'", s.op));
      if (type_ == Type::Packet && (s.op == "wait" || s.op == "pause" || s.op == "stop"))
        a.fail(it, fmt::format("'{}' cannot run inside a TYPE PACKET script", s.op));
      if ((s.op == "wait") && s.rest.find('$') == std::string::npos) {
        Duration d;
        if (!parse_duration(s.rest, d)) a.fail(it, fmt::format("wait expects a time, got '{}'", s.rest));
      }
      prog_.push_back(std::move(s));
    }
    if (driver_syntax) {
      if (prog_.empty()) prog_.push_back({"wait_stop_event", "", {}});
      prog_.push_back({"stop", "", {}});
    }
    for (auto& s : prog_)
      if (s.op == "goto") {
        auto w = words(s.rest);
        if (w.empty()) a.fail("goto needs a label");
        bool found = false;
        for (auto& t : prog_) found |= t.op == "label" && trim(t.rest) == w[0];
        if (!found) throw ConfigError(s.loc, fmt::format("{}: goto to undefined label '{}'", name(), w[0]));
      }
  }

  Type type_ = Type::Active;

 private:
  static inline const std::set<std::string> kScriptOps = {"set",  "init",   "print", "printn", "read", "write",
                                                          "wait", "pause",  "label", "goto",   "loop", "end",
                                                          "exit", "return", "stop",  "export"};
  enum class Wait { None, Timer, Pause, StopEvent };
  static constexpr int kExit = -1000;
  uint16_t no_port() {
    if (r_no_port_ == UINT16_MAX) r_no_port_ = add_drop_reason("no-such-output");
    return r_no_port_;
  }

  // Runs the whole script for one packet; returns the output port or kExit.
  int run_packet() {
    size_t pc = 0;
    for (int guard = 0; guard < 100000 && pc < prog_.size(); ++guard) {
      const Stmt& s = prog_[pc++];
      if (s.op == "return") {
        int64_t port = 0;
        std::string v = trim(expand(s.rest)).data();
        if (!v.empty() && !parse_int(v, port)) return kExit;
        return int(port);
      }
      if (s.op == "end") return 0;
      if (s.op == "exit") return kExit;
      if (s.op == "goto") {
        auto w = words(s.rest);
        if (w.size() >= 2 && !truth(unquote(expand(join(w, 1))))) continue;
        pc = labels_[w[0]];
        continue;
      }
      if (s.op == "loop") {
        pc = 0;
        continue;
      }
      simple(s);
    }
    return 0;
  }

  // Statements that neither wait nor jump: set, print, read, write.
  void simple(const Stmt& s) {
    Runtime& rt = worker().runtime();
    if (s.op == "set") {
      auto w = words(s.rest);
      if (!w.empty()) vars_[w[0]] = unquote(expand(join(w, 1)));
    } else if (s.op == "print" || s.op == "printn") {
      // Click's print: [>FILE | >>FILE] TEXT. TEXT that starts with a
      // letter, '@' or '_' names a read handler, whose value is printed;
      // otherwise TEXT is printed, expanded and unquoted.
      std::string text(trim(s.rest)), file;
      bool append = false;
      if (!text.empty() && text[0] == '>') {
        append = text.size() > 1 && text[1] == '>';
        text = std::string(trim(std::string_view(text).substr(append ? 2 : 1)));
        size_t sp = text.find_first_of(" \t");
        file = text.substr(0, sp);
        text = sp == std::string::npos ? "" : std::string(trim(std::string_view(text).substr(sp)));
      }
      std::string line;
      unsigned char c0 = text.empty() ? 0 : static_cast<unsigned char>(text[0]);
      if (std::isalpha(c0) || c0 == '@' || c0 == '_') {
        auto w = words(expand(text));
        line = w.empty() ? "" : read(w[0]);
      } else {
        for (auto& w : words(expand(text))) line += (line.empty() ? "" : " ") + unquote(w);
      }
      if (s.op == "print" && (line.empty() || line.back() != '\n')) line += '\n';
      if (file.empty() || file == "-") {
        std::fputs(line.c_str(), stdout);
        std::fflush(stdout);
      } else if (FILE* f = std::fopen(file.c_str(), append ? "ab" : "wb")) {
        bool ok = std::fputs(line.c_str(), f) >= 0;
        if (std::fclose(f) != 0 || !ok) run_error(fmt::format("print >{}: {}", file, std::strerror(errno)));
      } else {
        run_error(fmt::format("print >{}: {}", file, std::strerror(errno)));
      }
    } else if (s.op == "read") {
      std::string h = trim(expand(s.rest)).data();
      std::string v = read(h);
      std::fputs(fmt::format("{}:\n{}\n", h, v).c_str(), stdout);
      std::fflush(stdout);
    } else if (s.op == "write") {
      auto w = words(expand(s.rest));
      if (w.empty()) return;
      std::string err, val;
      for (size_t i = 1; i < w.size(); ++i) val += (i > 1 ? " " : "") + unquote(w[i]);
      if (!rt.write_handler(w[0], val, err, worker().id())) fmt::print(stderr, "{}: write {}: {}\n", name(), w[0], err);
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
    } else if (s.op == "wait_time") {
      s.op = "wait";
    } else if (s.op == "write_skip") {
      s.op = "write";
    } else if (s.op == "save" || s.op == "append") {
      a.fail(it, fmt::format("DriverManager '{}' is not supported", s.op));
    } else if (!kScriptOps.count(s.op)) {
      a.fail(it, fmt::format("unknown DriverManager instruction '{}'", s.op));
    }
  }

  static std::string join(const std::vector<std::string>& w, size_t from) {
    std::string s;
    for (size_t i = from; i < w.size(); ++i) s += (i > from ? " " : "") + w[i];
    return s;
  }

  void restart() {
    pc_ = 0;
    waiting_ = Wait::None;
    paused_for_stop_ = false;
    worker().unschedule(timer_);
    step();
  }

  std::string read(const std::string& path) {
    std::string v, err;
    if (!worker().runtime().read_handler(path, v, err)) {
      fmt::print(stderr, "{}: read {}: {}\n", name(), path, err);
      return "";
    }
    while (!v.empty() && v.back() == '\n') v.pop_back();
    return v;
  }

  // $var, ${var} and $(expression) substitution.
  std::string expand(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
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
      size_t b = i + 1, e;
      bool brace = s[b] == '{';
      if (brace) ++b;
      e = b;
      while (e < s.size() && (std::isalnum(static_cast<unsigned char>(s[e])) || s[e] == '_')) ++e;
      std::string v = s.substr(b, e - b);
      auto it = vars_.find(v);
      out += it != vars_.end() ? it->second : "";
      i = (brace && e < s.size() && s[e] == '}') ? e : e - 1;
    }
    return out;
  }

  std::string eval(const std::string& expr) {
    auto w = words(expr);
    if (w.empty()) return "";
    const std::string& op = w[0];
    std::vector<double> a;
    for (size_t i = 1; i < w.size(); ++i) {
      double x = 0;
      parse_double(unquote(w[i]), x);
      a.push_back(x);
    }
    auto need = [&](size_t n) { return a.size() >= n; };
    if (op == "add") {
      double s = 0;
      for (double x : a) s += x;
      return num(s);
    }
    if (op == "mul") {
      double s = 1;
      for (double x : a) s *= x;
      return num(s);
    }
    if (op == "sub" && need(2)) return num(a[0] - a[1]);
    if (op == "div" && need(2)) return a[1] == 0 ? "nan" : num(a[0] / a[1]);
    if (op == "idiv" && need(2)) return a[1] == 0 ? "nan" : num(std::trunc(a[0] / a[1]));
    if (op == "mod" && need(2)) return a[1] == 0 ? "nan" : num(std::fmod(a[0], a[1]));
    if (op == "neg" && need(1)) return num(-a[0]);
    if (op == "min" && need(1)) return num(*std::min_element(a.begin(), a.end()));
    if (op == "max" && need(1)) return num(*std::max_element(a.begin(), a.end()));
    if ((op == "eq" || op == "ne") && w.size() >= 3) {
      std::string l = unquote(w[1]), r = unquote(w[2]);
      double x, y;
      bool same = parse_double(l, x) && parse_double(r, y) ? x == y : l == r;
      return same == (op == "eq") ? "true" : "false";
    }
    if (op == "lt" && need(2)) return a[0] < a[1] ? "true" : "false";
    if (op == "gt" && need(2)) return a[0] > a[1] ? "true" : "false";
    if (op == "le" && need(2)) return a[0] <= a[1] ? "true" : "false";
    if (op == "ge" && need(2)) return a[0] >= a[1] ? "true" : "false";
    if (op == "not" && w.size() >= 2) return truth(unquote(w[1])) ? "false" : "true";
    if (op == "and") {
      for (size_t i = 1; i < w.size(); ++i)
        if (!truth(unquote(w[i]))) return "false";
      return "true";
    }
    if (op == "or") {
      for (size_t i = 1; i < w.size(); ++i)
        if (truth(unquote(w[i]))) return "true";
      return "false";
    }
    if (op == "if" && w.size() >= 4) return truth(unquote(w[1])) ? unquote(w[2]) : unquote(w[3]);
    if (op == "now") return fmt::format("{:.9f}", double(realtime_ns()) / 1e9);
    if (op.find('.') != std::string::npos || op == "version" || op == "threads") return read(op);
    auto it = vars_.find(op);
    if (it != vars_.end()) return it->second;
    fmt::print(stderr, "{}: unknown expression '$({})'\n", name(), expr);
    return "";
  }

  static bool truth(const std::string& s) {
    bool b;
    if (parse_bool(s, b)) return b;
    double d;
    return parse_double(s, d) ? d != 0 : !s.empty();
  }

  // Runs statements until one waits or the script ends.
  void step() {
    Runtime& rt = worker().runtime();
    int jumps = 0;
    auto jump = [&](size_t to) {
      // Click's limit: a script that jumps this often without waiting would
      // never give the worker back.
      if (++jumps < kMaxJumps) return pc_ = to, true;
      run_error("too many jumps, giving up", false);  // Click's words; Click's exit status too
      pc_ = prog_.size();
      return false;
    };
    for (int guard = 0; guard < 100000 && pc_ < prog_.size(); ++guard) {
      if (waiting_ == Wait::StopEvent) {
        if (!rt.take_stop_event()) {
          worker().schedule(timer_, worker().now_ns() + 1000000);  // poll each ms
          return;
        }
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
      if (s.op == "label" || s.op == "export") continue;
      if (s.op == "init") continue;
      if (s.op == "set" || s.op == "print" || s.op == "printn" || s.op == "read" || s.op == "write") {
        simple(s);
      } else if (s.op == "wait") {
        Duration d;
        std::string t = trim(expand(s.rest)).data();
        if (!parse_duration(t, d)) {
          fmt::print(stderr, "{}: wait: bad time '{}'\n", name(), t);
          continue;
        }
        waiting_ = Wait::Timer;
        worker().schedule(timer_, worker().now_ns() + d.ns);
        return;
      } else if (s.op == "pause") {
        if (type_ == Type::Driver) {
          stop_events_needed_ = 1;
          waiting_ = Wait::StopEvent;
          paused_for_stop_ = true;
          continue;
        }
        waiting_ = Wait::Pause;
        return;
      } else if (s.op == "goto") {
        auto w = words(s.rest);
        if (w.size() >= 2 && !truth(unquote(expand(join(w, 1))))) continue;
        jump(labels_[w[0]]);
      } else if (s.op == "loop") {
        jump(0);
      } else if (s.op == "end" || s.op == "exit" || s.op == "return") {
        pc_ = prog_.size();
      } else if (s.op == "stop") {
        // A DriverManager stops the router; a Script asks, like any element.
        if (type_ == Type::Driver)
          rt.stop_now();
        else
          rt.stop_event();
        pc_ = prog_.size();
      }
    }
    if (pc_ < prog_.size()) worker().schedule(timer_, worker().now_ns());  // guard hit: continue later
  }

  static constexpr int kMaxJumps = 1000;
  std::vector<Stmt> prog_;
  std::map<std::string, size_t> labels_;
  std::map<std::string, std::string> vars_;
  size_t pc_ = 0;
  Wait waiting_ = Wait::None;
  uint64_t stop_events_needed_ = 0;
  bool paused_for_stop_ = false;
  Timer timer_;
  uint16_t r_exit_ = 0, r_no_port_ = UINT16_MAX;
};

class Script : public ScriptBase {
 public:
  void configure(Args& a) override { parse(a, false); }
};
SHOAL_ELEMENT(Script, .name = "Script", .ports = "-/-", .processing = "h/h",
              .summary = "runs a small control script (Click's Script)",
              .description =
                  "Each argument is a statement: set VAR EXPR, init VAR EXPR, print ARGS, printn ARGS, read "
                  "HANDLER, write HANDLER ARGS, wait TIME, pause, label L, goto L [COND], loop, end, stop. $VAR and "
                  "$(EXPR) expand; EXPR is a handler (c.count, summed over workers) or an operator: add sub mul div "
                  "idiv mod neg min max eq ne lt gt le ge not and or if now. TYPE ACTIVE (default) starts at once; "
                  "PASSIVE waits for the run handler; DRIVER makes pause wait for a stop event. These run once, "
                  "on worker 0; writes reach every worker's copy. TYPE PACKET runs the script for each packet "
                  "pushed in, on every worker: return N sends it to output N, end to output 0, exit drops it "
                  "(reason 'script-exit'); wait, pause and stop are not allowed there.",
              .args = {{"TYPE", "ACTIVE|PASSIVE|DRIVER|PACKET", "when it runs"},
                       {"STATEMENT...", "statement", "the script"}},
              .handlers = {{"run", "w", "start from the top"}, {"step", "w", "continue after pause"}},
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
                  "A Script of type DRIVER, as in Click: every Script statement (set, print, goto, pause...), where "
                  "pause and wait_stop [N] / wait_pause [N] wait for N stop requests (e.g. from FromDump STOP "
                  "true), and wait_time TIME is wait TIME. FastClick's timing idiom runs unchanged: set t0 "
                  "$(now), pause, set t1 $(now), print $(sub $t1 $t0). After the last instruction the router stops. "
                  "With a DriverManager present, stop "
                  "requests go to it instead of stopping the router. Empty: wait_stop, then stop.",
              .args = {{"INSTRUCTION...", "instruction", "the instructions"}}, .handlers = {},
              .example = "DriverManager(wait_stop, read c.count, stop);", .own_variables = true);

}  // namespace shoal
