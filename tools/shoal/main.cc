// The `shoal` command: run, check, elements, gen, bench, version.
#include <fmt/format.h>
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <thread>

#include "common.hh"
#include "mkrouter.hh"
#include "shoal/classbench/classbench.hh"
#include "shoal/core/version.hh"
#include "shoal/device/device.hh"
#include "shoal/io/dpdk.hh"
#include "shoal/io/outfile.hh"
#include "shoal/io/pcap.hh"
#include "shoal/io/traffic.hh"
#include "shoal/offload/services.hh"
#include "shoal_commit.hh"

namespace shoal::tool {

namespace {
// The signals a run handles; blocked in every thread and taken by one
// thread with sigtimedwait, so handling them may lock, print and read
// statistics (nothing of that is async-signal-safe in a handler).
// The signal thread's own wake-up at the end of a run, so exiting does
// not wait out its poll.
int wake_signal() { return SIGRTMIN + 2; }

sigset_t run_signals() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, wake_signal()}) sigaddset(&set, s);
  return set;
}
}  // namespace

bool parse_defines(const std::vector<std::string>& words, config::Defines& defs, std::string& err) {
  for (auto& w : words) {
    size_t eq = w.find('=');
    if (eq == std::string::npos || eq == 0) {
      err = fmt::format("'{}' is not NAME=value", w);
      return false;
    }
    std::string name = w.substr(0, eq);
    if (name[0] == '$') name.erase(0, 1);
    defs[name] = w.substr(eq + 1);
  }
  return true;
}

namespace {
// Drops by element and reason, summed over workers, split into deliberate
// discards and losses (Element::is_loss_reason).
struct DropTally {
  uint64_t discarded = 0, lost = 0;
  std::string discarded_text, lost_text;  // "N elem:reason, ..."
  nlohmann::json by_element = nlohmann::json::object();
};

DropTally tally_drops(Runtime& rt) {
  DropTally t;
  Router& r0 = rt.router(0);
  for (size_t i = 0; i < r0.size(); ++i) {
    Element* e = r0.element(i);
    nlohmann::json d = nlohmann::json::object();
    for (size_t k = 0; k < e->drop_reasons().size(); ++k) {
      uint64_t n = 0;
      for (int w = 0; w < rt.nworkers(); ++w) n += rt.router(w).element(i)->drop_reasons()[k].count.get();
      if (!n) continue;
      const auto& reason = e->drop_reasons()[k];
      d[reason.name] = n;
      std::string& text = reason.loss ? t.lost_text : t.discarded_text;
      (reason.loss ? t.lost : t.discarded) += n;
      text += fmt::format("{}{} {}:{}", text.empty() ? "" : ", ", n, e->name(), reason.name);
    }
    if (!d.empty()) t.by_element[e->name()] = d;
  }
  return t;
}

}  // namespace

// Whether e sent work through the offload framework in this run.
static bool offloads(Runtime& rt, Element* e) {
  std::string v, err;
  uint64_t n = 0;
  return rt.read_handler(e->name() + ".offload_aggregates", v, err) && parse_uint(v, n) && n > 0;
}

// The handlers a statistics dump shows: not the structural ones, and an
// element's offload_* handlers only when it offloads in this run.
bool shown_handler(Runtime& rt, Element* e, const Handler& hd) {
  // Handlers that take parameters (a lookup, a Script's add) are not statistics.
  if (!hd.read || hd.read_param || hd.name == "ports" || hd.name == "handlers" || hd.name == "name" ||
      hd.name == "class" || hd.name == "config")
    return false;
  if (hd.name.rfind("offload_", 0) == 0) return offloads(rt, e);
  return true;
}

nlohmann::json stats_json(Runtime& rt) {
  nlohmann::json j;
  nlohmann::json elems = nlohmann::json::object();
  Router& r0 = rt.router(0);
  for (size_t i = 0; i < r0.size(); ++i) {
    Element* e = r0.element(i);
    nlohmann::json h = nlohmann::json::object();
    h["class"] = std::string(e->class_name());
    for (auto& hd : e->handlers()) {
      if (!shown_handler(rt, e, hd)) continue;
      std::string v, err;
      if (!rt.read_handler(e->name() + "." + hd.name, v, err)) continue;
      if (hd.numeric) {
        double x;
        if (parse_double(v, x)) {
          uint64_t u;
          if (parse_uint(v, u))
            h[hd.name] = u;
          else
            h[hd.name] = x;
          continue;
        }
      }
      h[hd.name] = v;
    }
    elems[e->name()] = h;
  }
  Accounting a = rt.accounting();
  DropTally t = tally_drops(rt);
  j["elements"] = elems;
  j["drops"] = t.by_element;
  j["accounting"] = {{"received", a.received},   {"created", a.created}, {"sent", a.sent}, {"dropped", a.dropped},
                     {"discarded", t.discarded}, {"lost", t.lost},       {"held", a.held}, {"balanced", a.balanced()}};
  j["threads"] = rt.nworkers();
  j["elapsed_s"] = double(rt.elapsed_ns()) / 1e9;
  if (!rt.errors().empty()) j["errors"] = rt.errors();
  return j;
}

bool write_file(const std::string& path, const std::string& text, std::string& err) {
  io::OutFile f;
  if (!f.open(path, false, err)) return false;
  f.put(text);
  f.end_record();
  if (!f.close()) {
    err = f.error();
    return false;
  }
  return true;
}

// "received R + created C = sent S + discarded D (...) + lost L (...) +
// held H: balanced": deliberate discards and losses apart, by reason.
std::string accounting_line(const Accounting& a, Runtime& rt, bool running) {
  DropTally t = tally_drops(rt);
  auto part = [](const char* what, uint64_t n, const std::string& why) {
    return fmt::format("{} {}{}", what, n, why.empty() ? "" : " (" + why + ")");
  };
  uint64_t other = a.dropped - std::min(a.dropped, t.discarded + t.lost);  // drops without a reason: none expected
  // While running, counters are read one after another as packets move:
  // the difference is packets in flight, not an imbalance.
  uint64_t in = a.received + a.created, out = a.sent + a.dropped + a.held;
  std::string verdict = a.balanced() ? "balanced"
                        : running    ? (in > out ? fmt::format("{} in flight", in - out) : std::string("in flight"))
                                     : std::string("UNBALANCED");
  // Frames a capture ring lost never reached Shoal: outside the identity,
  // said after it.
  std::string kernel;
  for (size_t i = 0; i < rt.router(0).size(); ++i) {
    Element* e = rt.router(0).element(i);
    std::string v, err;
    uint64_t n = 0;
    if (e->find_handler("kernel_drops") && rt.read_handler(e->name() + ".kernel_drops", v, err) && parse_uint(v, n) &&
        n)
      kernel += fmt::format("{}{} {}", kernel.empty() ? "" : ", ", n, e->name());
  }
  // After reloads: drops of elements the new configuration no longer has,
  // and packets the old one held that nothing took.
  std::string swapped;
  if (other && rt.swaps())
    swapped = fmt::format(" (at {} reload{}: {} held by the old configuration, the rest by its elements now gone)",
                          rt.swaps(), rt.swaps() > 1 ? "s" : "", rt.swap_dropped());
  return fmt::format("received {} + created {} = sent {} + {} + {}{} + held {}: {}{}", a.received, a.created, a.sent,
                     part("discarded", t.discarded, t.discarded_text), part("lost", t.lost, t.lost_text),
                     other ? fmt::format(" + dropped {}{}", other, swapped) : "", a.held, verdict,
                     kernel.empty() ? "" : "; lost by the kernel before capture: " + kernel);
}

namespace {

bool load(const std::string& file, const std::vector<std::string>& words, Program& prog, bool click_style = false) {
  config::Defines defs;
  std::string err;
  if (!parse_defines(words, defs, err)) {
    fmt::print(stderr, "shoal: {}\n", err);
    return false;
  }
  Diagnostics diag;
  diag.click_style = click_style;
  bool ok = config::load_file(file, defs, prog, diag);
  if (!ok) fmt::print(stderr, "{}", diag.text());
  return ok;
}

int cmd_check(const std::string& file, const std::vector<std::string>& words) {
  Program prog;
  if (!load(file, words, prog)) return 1;
  RunOptions opt;
  Runtime rt(prog, opt);
  Diagnostics diag;
  if (!rt.configure(diag)) {
    fmt::print(stderr, "{}", diag.text());
    return 1;
  }
  fmt::print("{}: ok ({} elements, {} connections)\n", file, prog.elements.size(), prog.conns.size());
  return 0;
}

// Statistics as --stats prints them: JSON (one line when interim), or text
// lines "element.handler: value" (a value of several lines as one quoted
// JSON string) ending with the accounting.
std::string stats_text(Runtime& rt, const std::string& format, bool interim, const std::string& device) {
  auto j = stats_json(rt);
  j["device"] = device;
  if (format == "json") {
    if (!interim) return j.dump(2) + "\n";
    j["interim"] = true;
    return j.dump() + "\n";
  }
  std::string o;
  if (interim) o += fmt::format("# statistics at {:.3f}s\n", j["elapsed_s"].get<double>());
  for (auto& [name, hs] : j["elements"].items())
    for (auto& [h, v] : hs.items()) {
      if (h == "class") continue;
      bool plain = v.is_string() && v.get<std::string>().find('\n') == std::string::npos;
      o += fmt::format("{}.{}: {}\n", name, h, plain ? v.get<std::string>() : v.dump());
    }
  o += "accounting: " + accounting_line(rt.accounting(), rt, interim) + "\n";
  return o;
}

std::string human(double v) {
  if (v >= 1e9) return fmt::format("{:.2f}G", v / 1e9);
  if (v >= 1e6) return fmt::format("{:.2f}M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:.1f}k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

// One live status line on a terminal: packets, rate, drops, elapsed, and
// progress through a pcap input.
void status_loop(const std::atomic<Runtime*>& current, std::atomic<bool>& done) {
  uint64_t last = 0;
  auto t0 = std::chrono::steady_clock::now();
  auto prev = t0;
  while (!done.load()) {
    for (int i = 0; i < 25 && !done.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (done.load()) break;
    Runtime& rt = *current.load();  // a reload replaces it
    std::string from;
    for (size_t i = 0; i < rt.router(0).size(); ++i)
      if (rt.router(0).element(i)->class_name() == "FromDump") from = rt.router(0).element(i)->name();
    auto now = std::chrono::steady_clock::now();
    Accounting a = rt.accounting();
    uint64_t pk = a.received + a.created;
    double dt = std::chrono::duration<double>(now - prev).count();
    double rate = dt > 0 ? double(pk - last) / dt : 0;
    last = pk;
    prev = now;
    std::string prog;
    if (!from.empty()) {
      std::string pos, size, err;
      if (rt.read_handler(from + ".filepos", pos, err) && rt.read_handler(from + ".filesize", size, err)) {
        double p = 0, s = 0;
        parse_double(pos, p);
        parse_double(size, s);
        if (s > 0) prog = fmt::format("  {}: {:.0f}%", from, 100 * p / s);
      }
    }
    fmt::print(stderr, "\r\033[K{} pkts  {}pps  {} dropped  {:.1f}s{}", human(double(pk)), human(rate),
               human(double(a.dropped)), std::chrono::duration<double>(now - t0).count(), prog);
  }
  fmt::print(stderr, "\r\033[K");
}

}  // namespace

int cmd_run(const RunArgs& ra) {
  // Blocked before any thread starts (workers, device threads), so only the
  // signal thread below takes them.
  sigset_t sigs = run_signals();
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);
  Program prog;
  if (ra.text_name.empty()) {
    if (!load(ra.file, ra.words, prog, ra.click_messages)) return 1;
  } else {
    config::Defines defs;
    std::string why;
    Diagnostics d;
    d.click_style = ra.click_messages;
    if (!parse_defines(ra.words, defs, why)) return fmt::print(stderr, "shoal: {}\n", why), 1;
    if (!config::load_string(ra.text_name, ra.text, defs, prog, d)) return fmt::print(stderr, "{}", d.text()), 1;
  }
  // The device is opened by the first element that offloads (offload::
  // Services), so a configuration without one never starts CUDA (its
  // driver's initialization, on a machine with a GPU). A device named on the
  // command line is checked now, so that a run asking for CUDA on a machine
  // without it fails before it starts.
  std::string err;
  DeviceChoice dev;
  if (ra.device != "auto" && !select_device(ra.device, dev, err)) {
    fmt::print(stderr, "shoal: {}\n", err);
    return 1;
  }
  if (ra.simtime) set_simulated_time(true, uint64_t(ra.simtime_start * 1e9));
  if (ra.dpdk) io::set_dpdk_args(*ra.dpdk);
  RunOptions opt;
  opt.threads = ra.threads;
  opt.click_messages = ra.click_messages;
  opt.click_placement = ra.click_messages;  // `shoal click`: Click's thread placement too
  opt.duration_s = ra.duration;
  opt.batch_capacity = ra.batch;
  opt.pool.count = ra.pool;
  offload::Options oo;
  oo.device.kind = ra.device;
  oo.device.delay_us = ra.device_delay_us;
  oo.device.fault_rate = ra.device_faults;
  oo.device.host_threads = ra.host_threads;
  oo.batches = ra.offload_batches;
  oo.timeout_us = ra.offload_timeout_us;
  oo.inflight = ra.offload_inflight;
  oo.schedule = ra.offload_schedule;
  oo.adaptive = ra.offload_adaptive;
  oo.latency_us = ra.offload_latency_us;
  oo.cpu_below = ra.offload_cpu_below;
  oo.flow_resident = !ra.offload_flow_serial;
  Runtime rt(prog, opt);
  std::atomic<Runtime*> current{&rt};  // the runtime running now (hot swaps replace it)
  // The device as the run has it: the one an element opened, else the one
  // named on the command line (checked above), else none.
  auto device_now = [&dev](Runtime& r) {
    const offload::Services& sv = offload::services(r);
    if (std::string d = sv.device_detail(); !d.empty()) return DeviceChoice{sv.device_kind(), d};
    return dev.kind.empty() ? DeviceChoice{"none", "no element opened one"} : dev;
  };
  offload::set_options(rt, oo);
  for (auto& e : prog.elements)
    if (e.info->name == "DriverManager") rt.set_driver_manager();
  // Hot swap (Click's -R) and reload: a new configuration's runtime,
  // configured and initialized beside the running one; its errors are the
  // write's (or the reload's), with `source` the name they give.
  Runtime::Reloader reload;
  std::function<std::unique_ptr<Runtime>(const std::string&, const std::string&, std::string&)> build;
  Runtime::Builder build_next = [&](const std::string& text, std::string& why) {
    return build(text, ra.click_messages ? "config" : "hotconfig", why);
  };
  build = [&](const std::string& text, const std::string& source, std::string& why) -> std::unique_ptr<Runtime> {
    auto next_prog = std::make_shared<Program>();
    config::Defines defs;
    Diagnostics d;
    d.click_style = ra.click_messages;
    if (!parse_defines(ra.words, defs, why)) return nullptr;
    // As Click: a configuration that does not parse says why; one that
    // parses but cannot be a router (ports, configuration, start-up) adds
    // that the router could not be initialized.
    const char* not_router = ra.click_messages ? "Router could not be initialized!" : "";
    int32_t id = SourceManager::instance().add(source, text + ra.hot_suffix);
    if (!config::parse_and_expand(id, defs, *next_prog, d)) {
      why = d.text();
      while (!why.empty() && why.back() == '\n') why.pop_back();
      return nullptr;
    }
    if (!next_prog->validate(d)) {
      why = d.text() + not_router;
      return nullptr;
    }
    auto next = std::make_unique<Runtime>(*next_prog, opt);
    next->own_program(next_prog);
    next->set_replacement(current.load());
    offload::set_options(*next, oo);
    for (auto& e : next_prog->elements)
      if (e.info->name == "DriverManager") next->set_driver_manager();
    if (!next->configure(d) || !next->initialize(d)) {
      why = d.text() + not_router;
      next->cleanup();
      return nullptr;
    }
    if (ra.hotswap) next->set_hotswap(build_next);
    if (reload) next->set_reload(reload);
    return next;
  };
  // `shoal run FILE` reloads FILE (SIGHUP, the 'reload' handler); a
  // configuration from standard input or the command line cannot be.
  if (!ra.click_messages && ra.text_name.empty() && ra.file != "-")
    reload = [&](std::string& why) -> std::unique_ptr<Runtime> {
      std::ifstream in(ra.file, std::ios::binary);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (!in.good() && !in.eof()) {
        why = fmt::format("cannot read {}: {}", ra.file, std::strerror(errno));
        return nullptr;
      }
      return build(text, ra.file, why);
    };
  if (ra.hotswap) rt.set_hotswap(build_next);
  if (reload) rt.set_reload(reload);
  // The ones the runtime running now replaced are kept, cleaned up, until the end.
  std::vector<std::unique_ptr<Runtime>> swapped;
  Diagnostics diag;
  diag.click_style = ra.click_messages;
  if (!rt.configure(diag) || !rt.initialize(diag)) {
    fmt::print(stderr, "{}", diag.text());
    if (ra.click_messages) fmt::print(stderr, "Router could not be initialized!\n");
    rt.cleanup();
    return 1;
  }
  if (ra.at_init && !ra.at_init(rt)) {
    rt.cleanup();
    return 1;
  }
  if (ra.init_only) {  // Click's -q: initialized, then straight to the exit handlers
    int rc = ra.at_exit ? ra.at_exit(rt) : 0;
    rt.cleanup();
    return rc;
  }
  HttpServer metrics, web;
  auto now = [&current]() -> Runtime& { return *current.load(); };
  if (!ra.metrics.empty()) {
    if (!start_metrics(metrics, ra.metrics, now, err)) {
      fmt::print(stderr, "shoal: {}\n", err);
      rt.cleanup();
      return 1;
    }
    fmt::print(stderr, "shoal: metrics at http://{}:{}/metrics\n", metrics.host(), metrics.port());
  }
  if (!ra.web.empty()) {
    if (!start_web(web, ra.web, now, ra.web_writes, err)) {
      fmt::print(stderr, "shoal: {}\n", err);
      metrics.stop();
      rt.cleanup();
      return 1;
    }
    fmt::print(stderr, "shoal: dashboard at http://{}:{}/{}\n", web.host(), web.port(),
               ra.web_writes ? " (handler writes enabled)" : "");
  }
  std::atomic<bool> done{false};
  std::thread status, periodic;
  // SIGINT, SIGTERM and SIGHUP stop the run cleanly (outputs flushed and
  // closed, statistics written); a second one exits at once. SIGUSR1 and
  // SIGUSR2 print the statistics so far and go on, as dd and Suricata do.
  // SIGHUP reloads the configuration file instead where it can (`shoal run
  // FILE`): a reload that fails says why and the old configuration runs on.
  std::atomic<bool> stop_signalled{false};
  std::thread signals([&] {
    sigset_t set = run_signals();
    int stops = 0;
    std::array<std::chrono::steady_clock::time_point, 64> posted{};
    while (!done.load()) {
      timespec ts{0, 200 * 1000 * 1000};
      int sig = sigtimedwait(&set, nullptr, &ts);
      if (sig <= 0 || sig == wake_signal()) continue;
      const char* name = sigabbrev_np(sig);
      // A signal a Script takes runs the Script instead; a stopping signal
      // that comes again within half a second stops the run all the same,
      // so Ctrl-C twice always ends it, whatever the Scripts do.
      Runtime& now_rt = *current.load();
      if (now_rt.signal_taken(sig)) {
        auto now = std::chrono::steady_clock::now();
        bool again = now - posted[size_t(sig)] < std::chrono::milliseconds(500);
        posted[size_t(sig)] = now;
        if (!again || sig == SIGUSR1 || sig == SIGUSR2) {
          now_rt.post_signal(sig);
          continue;
        }
      }
      if (sig == SIGHUP && now_rt.reload_enabled()) {
        std::string why;
        if (now_rt.write_handler("reload", "", why))
          fmt::print(stderr, "shoal: SIGHUP: reloading {}\n", ra.file);
        else
          fmt::print(stderr, "shoal: SIGHUP: {} not reloaded, the running configuration goes on:\n{}\n", ra.file, why);
        continue;
      }
      if (sig == SIGUSR1 || sig == SIGUSR2) {
        fmt::print(stderr, "shoal: SIG{}: {:.3f}s, {}\n", name, double(now_rt.elapsed_ns()) / 1e9,
                   accounting_line(now_rt.accounting(), now_rt, true));
        continue;
      }
      if (++stops > 1) {
        fmt::print(stderr, "shoal: SIG{} again: exiting now\n", name);
        std::_Exit(128 + sig);
      }
      if (!ra.quiet) fmt::print(stderr, "shoal: SIG{}: stopping\n", name);
      stop_signalled = true;
      now_rt.stop_now();
    }
  });
  if (!ra.quiet && isatty(2)) status = std::thread([&] { status_loop(current, done); });
  std::atomic<bool> stdout_failed{false};
  // Statistics to standard output, every write checked.
  auto print_stats = [&](bool interim) {
    std::string text = stats_text(*current.load(), ra.stats.empty() ? "text" : ra.stats, interim,
                                  device_now(*current.load()).kind),
                why;
    std::fflush(stdout);  // after what elements printed (Script's print)
    if (!write_file("-", text, why) && !stdout_failed.exchange(true))
      fmt::print(stderr, "shoal: error: statistics: {}\n", why);
  };
  if (ra.stats_interval > 0)
    periodic = std::thread([&] {
      auto next = std::chrono::steady_clock::now();
      while (!done.load()) {
        next += std::chrono::duration_cast<std::chrono::steady_clock::duration>(
            std::chrono::duration<double>(ra.stats_interval));
        while (!done.load() && std::chrono::steady_clock::now() < next)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (done.load()) break;
        print_stats(true);
      }
    });
  rt.run();
  // Hot swaps: the new runtime takes the old one's state and runs; a stop
  // signalled meanwhile stops it too.
  uint64_t swapped_before = 0;
  for (Runtime* cur = &rt; std::unique_ptr<Runtime> next = cur->take_next();) {
    next->continue_from(*cur);
    cur->cleanup();
    cur = next.get();
    swapped.push_back(std::move(next));
    current.store(cur);
    if (stop_signalled.load()) cur->stop_now();
    if (!ra.quiet && reload) {
      uint64_t left = cur->swap_dropped() - swapped_before;
      fmt::print(
          stderr, "shoal: running {} (reload {}){}\n", ra.file, cur->swaps(),
          left ? fmt::format(": {} packets the old configuration held, no new element took, dropped", left) : "");
    }
    swapped_before = cur->swap_dropped();
    cur->run();
  }
  Runtime& last = *current.load();
  metrics.stop();
  web.stop();
  done = true;
  if (status.joinable()) status.join();
  if (periodic.joinable()) periodic.join();
  pthread_kill(signals.native_handle(), wake_signal());
  signals.join();
  Accounting a = last.accounting();
  bool failed = last.failed();
  if (!ra.stats_out.empty()) {
    auto j = stats_json(last);
    j["device"] = device_now(last).kind;
    if (!write_file(ra.stats_out, j.dump(2) + "\n", err)) {
      fmt::print(stderr, "shoal: error: --stats-out: {}\n", err);
      failed = true;
    }
  }
  if (!ra.stats.empty()) print_stats(false);
  failed |= stdout_failed.load();
  int exit_rc = ra.at_exit ? ra.at_exit(last) : 0;
  if (!ra.quiet) {
    // The device line only when a device was asked for or used.
    bool used = false;
    for (size_t i = 0; i < last.router(0).size() && !used; ++i) used = offloads(last, last.router(0).element(i));
    if (used || ra.device != "auto") {
      DeviceChoice d = device_now(last);
      fmt::print(stderr, "shoal: device {}: {}\n", d.kind, d.detail);
    }
    fmt::print(stderr, "shoal: {:.3f}s, {}\n", double(last.elapsed_ns()) / 1e9, accounting_line(a, last));
  }
  last.cleanup();
  if (failed) {
    size_t n = last.errors().size();
    fmt::print(stderr, "shoal: the run failed: {} error{} (above)\n", n + (n == 0), n > 1 ? "s" : "");
    return 1;
  }
  if (exit_rc) return exit_rc;
  return a.balanced() ? 0 : 3;
}

namespace {

std::string ascii_lower(std::string_view s) {
  std::string o(s);
  for (char& c : o) c = char(std::tolower(static_cast<unsigned char>(c)));
  return o;
}

// One element's reference as `shoal elements NAME` prints it.
void print_element_text(const ElementInfo& i) {
  fmt::print("{} — {}\n\n", i.name, i.summary);
  fmt::print("Ports: {} (inputs/outputs)   Processing: {} ", i.ports, i.processing);
  fmt::print("(h push, l pull, a agnostic)\n\n{}\n", i.description);
  if (!i.args.empty()) {
    fmt::print("\nArguments:\n");
    for (auto& a : i.args) fmt::print("  {:<14} {:<18} {}\n", a.name, a.type, a.desc);
  }
  fmt::print("\nHandlers:\n");
  for (auto& hd : i.handlers) fmt::print("  {:<16} {:<3} {}\n", hd.name, hd.mode, hd.desc);
  fmt::print("  {:<16} {:<3} {}\n", "name, class, config, ports, handlers, drops", "r", "(every element)");
  fmt::print("  {:<16} {:<3} {}\n", "scheduled, home_thread", "r", "(elements that run a task)");
  fmt::print("\nExample:\n  {}\n", i.example);
}

// Markdown: table cells may not hold '|' or newlines.
std::string md_cell(std::string_view s) {
  std::string o;
  for (char c : s) {
    if (c == '|')
      o += "\\|";
    else if (c == '\n')
      o += ' ';
    else
      o += c;
  }
  return o;
}

void print_element_markdown(const ElementInfo& i) {
  fmt::print("## {}\n\n{}\n\n", i.name, i.summary);
  fmt::print("Ports `{}`, processing `{}`.\n\n{}\n", i.ports, i.processing, i.description);
  if (!i.args.empty()) {
    fmt::print("\n| argument | type | meaning |\n|---|---|---|\n");
    for (auto& a : i.args) fmt::print("| `{}` | {} | {} |\n", a.name, md_cell(a.type), md_cell(a.desc));
  }
  fmt::print("\n| handler | mode | meaning |\n|---|---|---|\n");
  for (auto& hd : i.handlers) fmt::print("| `{}` | {} | {} |\n", hd.name, hd.mode, md_cell(hd.desc));
  fmt::print("| `name`, `class`, `config`, `ports`, `handlers`, `drops` | r | every element |\n");
  fmt::print("| `scheduled`, `home_thread` | r | elements that run a task |\n");
  fmt::print("\n```click\n{}\n```\n\n", i.example);
}

int cmd_elements(const std::string& name, bool markdown) {
  auto& reg = Registry::instance();
  if (name.empty() && markdown) {  // docs/elements.md
    fmt::print(
        "# Shoal elements\n\n"
        "Generated by `shoal elements --markdown` from the elements' own documentation; CI checks that "
        "this file is current. `shoal elements NAME` prints one of them.\n\n"
        "| element | ports | processing | summary |\n|---|---|---|---|\n");
    for (auto* i : reg.all())
      fmt::print("| [{}](#{}) | `{}` | `{}` | {} |\n", i->name, ascii_lower(i->name), i->ports, i->processing,
                 md_cell(i->summary));
    fmt::print("\n");
    for (auto* i : reg.all()) print_element_markdown(*i);
    return 0;
  }
  if (name.empty()) {
    for (auto* i : reg.all()) fmt::print("{:<18} {:<6} {:<5} {}\n", i->name, i->ports, i->processing, i->summary);
    return 0;
  }
  const ElementInfo* i = reg.find(name);
  if (!i) {
    fmt::print(stderr, "shoal: no element class '{}'\n", name);
    return 1;
  }
  if (markdown)
    print_element_markdown(*i);
  else
    print_element_text(*i);
  return 0;
}

struct GenArgs {
  std::string out;
  uint64_t count = 1000;
  uint32_t size = 0, flows = 16, flowsize = 1;  // size 0: 64, or the smallest the headers allow
  bool imix = false, ipv6 = false;
  std::string proto = "udp";
  std::string start = "1700000000";
  double rate = 1e6;
  // ClassBench-style rule sets and traces that hit them
  std::string classbench, rules_out;
  size_t rules = 1000;
  int ports = 4;
  uint32_t seed = 1;
};

// shoal gen --classbench FLAVOR: the rule set to --rules-out, and a trace
// of packets hitting its rules to --out.
int cmd_gen_classbench(const GenArgs& g) {
  classify::GenSpec spec;
  if (!classify::parse_flavor(g.classbench, spec.flavor)) {
    fmt::print(stderr, "shoal gen: --classbench must be acl, fw or ipc\n");
    return 1;
  }
  if (g.rules_out.empty()) {
    fmt::print(stderr, "shoal gen: --classbench needs --rules-out FILE for the rule set\n");
    return 1;
  }
  if (g.ports < 1 || g.ports > 256) {
    fmt::print(stderr, "shoal gen: --ports must be 1-256\n");
    return 1;
  }
  spec.rules = g.rules;
  spec.seed = g.seed;
  spec.ports = g.ports;
  auto rules = classify::generate(spec);
  {
    std::string text = fmt::format("# shoal gen --classbench {} --rules {} --seed {} --ports {}\n", g.classbench,
                                   g.rules, g.seed, g.ports);
    for (const auto& r : rules) text += classify::unparse_rule(r) + "\n";
    std::string err;
    if (!write_file(g.rules_out, text, err)) {
      fmt::print(stderr, "shoal gen: {}\n", err);
      return 1;
    }
  }
  io::PcapWriter w;
  std::string err;
  if (!w.open(g.out, 1, 65535, true, err)) {
    fmt::print(stderr, "shoal gen: {}\n", err);
    return 1;
  }
  uint64_t t0 = 0;
  if (!parse_timestamp(g.start, t0)) {
    fmt::print(stderr, "shoal gen: --start expects SECONDS[.FRACTION], got '{}'\n", g.start);
    return 1;
  }
  static const uint32_t imix[] = {64, 64, 64, 64, 64, 64, 64, 570, 570, 570, 570, 1518};
  std::vector<uint8_t> buf(9100);
  double gap = g.rate > 0 ? 1e9 / g.rate : 0;
  auto keys = classify::trace_keys(rules, g.count, g.seed + 1);
  for (size_t i = 0; i < keys.size(); ++i) {
    uint32_t size = g.imix ? imix[i % std::size(imix)] : (g.size ? g.size : 64);
    uint32_t len = classify::build_frame(keys[i], size, buf.data());
    w.write(buf.data(), len, len, t0 + uint64_t(double(i) * gap));
  }
  if (!w.close()) {
    fmt::print(stderr, "shoal gen: {} ({} of {} packets written)\n", w.error(), w.records_written() - 1, keys.size());
    return 1;
  }
  fmt::print(stderr, "shoal gen: wrote {} {} rules to {} and {} packets hitting them to {}\n", rules.size(),
             g.classbench, g.rules_out, keys.size(), g.out);
  return 0;
}

int cmd_gen(const GenArgs& g) {
  if (!g.classbench.empty()) return cmd_gen_classbench(g);
  io::TrafficSpec s;
  s.imix = g.imix;
  s.flows = g.flows;
  s.flowsize = g.flowsize;
  s.ipv6 = g.ipv6;
  if (!io::parse_proto(g.proto, s.proto)) {
    fmt::print(stderr, "shoal gen: --proto must be udp, tcp, icmp or mix\n");
    return 1;
  }
  s.length = g.size ? g.size : std::max<uint32_t>(64, io::TrafficGen::min_length(s));
  if (!g.imix && s.length < io::TrafficGen::min_length(s)) {
    fmt::print(stderr, "shoal gen: --size {} is below the {} bytes of headers\n", g.size,
               io::TrafficGen::min_length(s));
    return 1;
  }
  if (g.size > 9018) {
    fmt::print(stderr, "shoal gen: --size {} is above 9018 (jumbo frame)\n", g.size);
    return 1;
  }
  io::TrafficGen gen(s);
  io::PcapWriter w;
  std::string err;
  if (!w.open(g.out, 1, 65535, true, err)) {
    fmt::print(stderr, "shoal gen: {}\n", err);
    return 1;
  }
  std::vector<uint8_t> buf(gen.max_length());
  uint64_t t0 = 0;
  if (!parse_timestamp(g.start, t0)) {
    fmt::print(stderr, "shoal gen: --start expects SECONDS[.FRACTION], got '{}'\n", g.start);
    return 1;
  }
  double gap = g.rate > 0 ? 1e9 / g.rate : 0;
  for (uint64_t i = 0; i < g.count; ++i) {
    gen.build(i, buf.data());
    w.write(buf.data(), gen.length_of(i), gen.length_of(i), t0 + uint64_t(double(i) * gap));
  }
  if (!w.close()) {
    fmt::print(stderr, "shoal gen: {} ({} of {} packets written)\n", w.error(), w.records_written() - 1, g.count);
    return 1;
  }
  fmt::print(stderr, "shoal gen: wrote {} packets of {} flows to {}\n", g.count, g.flows, g.out);
  return 0;
}

// What this build has, for `shoal version` and bug reports.
std::string build_features() {
  auto yes = [](bool b) { return b ? "yes" : "no"; };
#ifdef SHOAL_HAVE_HYPERSCAN
  constexpr bool hs = true;
#else
  constexpr bool hs = false;
#endif
#ifdef SHOAL_HAVE_PCRE2
  constexpr bool pcre = true;
#else
  constexpr bool pcre = false;
#endif
#ifdef SHOAL_HAVE_IPSEC_MB
  constexpr bool mb = true;
#else
  constexpr bool mb = false;
#endif
#ifdef SHOAL_HAVE_XDP
  constexpr bool xdp = true;
#else
  constexpr bool xdp = false;
#endif
#ifdef SHOAL_HAVE_DPDK
  constexpr bool dpdk = true;
#else
  constexpr bool dpdk = false;
#endif
  return fmt::format("CUDA {}, Hyperscan {}, PCRE2 {}, intel-ipsec-mb {}, DPDK {}, AF_XDP {}", yes(cuda_compiled()),
                     yes(hs), yes(pcre), yes(mb), yes(dpdk), yes(xdp));
}

int cmd_version() {
  fmt::print("shoal {} (commit {})\n", kVersion, SHOAL_COMMIT);
  fmt::print("built with: {}\n", build_features());
  fmt::print("CUDA backend: {}\n", cuda_compiled() ? "compiled" : "not compiled");
  DeviceChoice d;
  std::string err;
  select_device("auto", d, err);
  fmt::print("device (auto): {}: {}\n", d.kind, d.detail);
  fmt::print("elements: {}\n", Registry::instance().all().size());
  return 0;
}

}  // namespace
}  // namespace shoal::tool

namespace shoal::tool {
namespace {
int run_main(int argc, char** argv) {
  // A file-size limit (ulimit -f) makes writes fail with EFBIG, reported
  // like any other write error, instead of killing the process.
  std::signal(SIGXFSZ, SIG_IGN);
  // Click's command lines: `shoal click ...`, or shoal called as `click`
  // or `click-buildtool` (the links CMake makes in build/click-bin).
  std::string self = argv[0];
  self = self.substr(self.rfind('/') + 1);
  if (self == "click") return cmd_click(argc, argv);
  if (self == "click-buildtool") return cmd_click_buildtool(argc, argv);
  if (self == "click-flatten") return cmd_click_flatten(argc, argv);
  if (argc >= 2 && std::string(argv[1]) == "click") return cmd_click(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "bench") return cmd_bench(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "bench-ids") return cmd_bench_ids(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "bench-classify") return cmd_bench_classify(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "bench-flow") return cmd_bench_flow(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "bench-nf") return cmd_bench_nf(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "bench-snap") return cmd_bench_snap(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "bench-scale") return cmd_bench_scale(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "bench-ipsec") return cmd_bench_ipsec(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "ids") return cmd_ids(argc - 1, argv + 1);
  if (argc >= 2 && std::string(argv[1]) == "ctl") return cmd_ctl(argc - 1, argv + 1);
  CLI::App app{"Shoal: a batched, GPU-capable modular packet processor in the Click tradition"};
  app.set_version_flag("-V,--version",
                       fmt::format("shoal {} (commit {}; {})", kVersion, SHOAL_COMMIT, build_features()));
  app.require_subcommand(1);

  RunArgs ra;
  auto* run = app.add_subcommand("run", "run a configuration");
  run->add_option("config", ra.file, "Click configuration file")->required();
  run->add_option("defines", ra.words, "NAME=value settings for $NAME");
  run->add_option("-t,--threads", ra.threads, "worker threads (one graph copy each)")->check(CLI::Range(1, 256));
  run->add_option("-d,--duration", ra.duration, "stop after this many seconds");
  run->add_option("--stats", ra.stats, "print handlers at exit: json or text")->check(CLI::IsMember({"json", "text"}));
  run->add_option("--stats-out", ra.stats_out, "also write the exit statistics as JSON to this file");
  run->add_option("--stats-interval", ra.stats_interval,
                  "also print the statistics every S seconds (text, or as --stats says)");
  run->add_option("--device", ra.device, "auto, host or cuda")->check(CLI::IsMember({"auto", "host", "cuda"}));
  run->add_option("--batch", ra.batch, "batch capacity (packets)")->check(CLI::Range(1, 65536));
  run->add_option("--pool", ra.pool, "packet buffers per worker")->check(CLI::Range(64, 1 << 24));
  run->add_flag("-q,--quiet", ra.quiet, "no status line, no summary");
  run->add_option("--host-threads", ra.host_threads, "host device backend: threads (default min(4, cores))");
  run->add_option("--device-delay-us", ra.device_delay_us,
                  "host device backend: delay each operation by a random 0..N us (ordering tests)");
  run->add_option("--device-faults", ra.device_faults, "fail this fraction of device operations (fault tests)")
      ->check(CLI::Range(0.0, 1.0));
  run->add_option("--offload-batches", ra.offload_batches, "batches per aggregate for offloadable elements")
      ->check(CLI::Range(1, 1024));
  run->add_option("--offload-timeout-us", ra.offload_timeout_us, "longest wait for a partial aggregate");
  run->add_option(
      "--metrics", ra.metrics,
      "serve Prometheus metrics at http://[ADDR:]PORT/metrics while running (ADDR: 127.0.0.1 unless given)");
  run->add_option("--web", ra.web,
                  "serve a live dashboard of the graph at http://[ADDR:]PORT/ while running (ADDR: 127.0.0.1 unless "
                  "given): rates, drops and their reasons, device elements, every element's handlers");
  run->add_flag("--web-writes", ra.web_writes, "let the dashboard write writable handlers (default: read only)");
  run->add_option("--dpdk", ra.dpdk,
                  "DPDK's EAL arguments for FromDPDKDevice/ToDPDKDevice, e.g. \"-a 0000:03:00.0 --huge-dir /mnt/huge\" "
                  "(default: --in-memory, or --no-huge without huge pages; --no-pci when no NIC is bound to vfio-pci)");
  run->add_flag("--offload-schedule", ra.offload_schedule,
                "sort each aggregate's packets by protocol and length before the kernels (GASPP's packet scheduling)");
  run->add_option("--offload-inflight", ra.offload_inflight, "aggregates on the device per element")
      ->check(CLI::Range(1, 1024));
  run->add_flag("--offload-adaptive", ra.offload_adaptive,
                "adapt the aggregate size (up to --offload-batches) to the device: grow while the CPU would wait "
                "for it, then follow the throughput, shrink past --offload-latency-us (GPUNFV's dynamic batch "
                "sizing)");
  run->add_option("--offload-latency-us", ra.offload_latency_us,
                  "with --offload-adaptive: halve the aggregate when one takes longer than this (0: no bound)");
  run->add_option("--offload-cpu-below", ra.offload_cpu_below,
                  "with --offload-adaptive: an aggregate the timeout sends with fewer packets runs on the CPU");
  run->add_flag("--offload-flow-serial", ra.offload_flow_serial,
                "chains with per-flow state run one aggregate at a time, the state copied from the host each time "
                "(default: kept on the device, so aggregates overlap)");

  std::string check_file;
  std::vector<std::string> check_words;
  auto* check = app.add_subcommand("check", "validate a configuration without running it");
  check->add_option("config", check_file, "Click configuration file")->required();
  check->add_option("defines", check_words, "NAME=value settings");

  std::string ename;
  bool md = false;
  auto* elements = app.add_subcommand("elements", "list element classes, or document one");
  elements->add_option("name", ename, "element class");
  elements->add_flag("--markdown", md, "Markdown: one element, or with no NAME the whole reference (docs/elements.md)");

  GenArgs ga;
  auto* gen = app.add_subcommand("gen", "write a pcap of generated traffic");
  gen->add_option("-o,--out", ga.out, "output pcap")->required();
  gen->add_option("-n,--count", ga.count, "packets");
  gen->add_option("-s,--size", ga.size, "frame bytes (default 64, or the smallest the headers allow)");
  gen->add_flag("--imix", ga.imix, "7:4:1 mix of 64, 570 and 1518 bytes");
  gen->add_option("-f,--flows", ga.flows, "flows")->check(CLI::Range(1u, 1u << 24));
  gen->add_option("--flowsize", ga.flowsize, "consecutive packets per flow")->check(CLI::Range(1u, 1u << 24));
  gen->add_option("-p,--proto", ga.proto, "udp, tcp, icmp or mix");
  gen->add_flag("-6,--ipv6", ga.ipv6, "IPv6");
  gen->add_option("--start", ga.start, "first timestamp (seconds since the epoch)");
  gen->add_option("--rate", ga.rate, "packets per second, for timestamps");
  gen->add_option("--classbench", ga.classbench,
                  "write a ClassBench-style rule set (acl, fw or ipc) to --rules-out and packets hitting it");
  gen->add_option("--rules-out", ga.rules_out, "with --classbench: the rule file");
  gen->add_option("--rules", ga.rules, "with --classbench: rules in the set")
      ->check(CLI::Range(size_t(1), size_t(1) << 20));
  gen->add_option("--ports", ga.ports, "with --classbench: outputs the rules send to (0..N-1)");
  gen->add_option("--seed", ga.seed, "with --classbench: random seed");

  std::vector<std::string> mk_ifaces, mk_routes4, mk_routes6;
  std::string mk_out;
  auto* mkrouter = app.add_subcommand("mkrouter", "write the IP router configuration for some interfaces");
  mkrouter->add_option("-i,--iface", mk_ifaces, "NAME,ADDR/LEN[,ADDR6/LEN][,mtu=N][,mac=ETH] (repeat per interface)")
      ->required();
  mkrouter->add_option("--route", mk_routes4,
                       "extra IPv4 route 'PREFIX/LEN [GATEWAY] OUTPUT' (output 1 = first interface)");
  mkrouter->add_option("--route6", mk_routes6, "extra IPv6 route 'PREFIX/LEN [GATEWAY] OUTPUT'");
  mkrouter->add_option("-o,--out", mk_out, "write here instead of standard output");
  std::string mk_nat;
  mkrouter->add_option("--nat", mk_nat,
                       "NAME[,LO-HI]: source NAT (masquerade) of IPv4 connections leaving interface NAME, from its "
                       "address and ports LO-HI (default 1024-65535)");
  std::string mk_io = "afpacket";
  mkrouter
      ->add_option("--io", mk_io,
                   "how the interfaces are read and written: afpacket (FromDevice, default) or xdp "
                   "(FromXDPDevice)")
      ->check(CLI::IsMember({"afpacket", "xdp"}));

  app.add_subcommand("version", "version, CUDA backend and device");
  app.add_subcommand("bench",
                     "benchmarks (see shoal bench --help; also bench-ids, bench-classify, bench-flow, bench-nf, "
                     "bench-snap, bench-scale, bench-ipsec)");
  app.add_subcommand("click", "run a configuration with Click's command line (shoal click --help)");
  app.add_subcommand("ids", "Suricata-style IDS/IPS over a capture or an interface (shoal ids --help)");
  app.add_subcommand("ctl", "read and write a running router's handlers through its ControlSocket (shoal ctl --help)");

  CLI11_PARSE(app, argc, argv);
  if (*run) return cmd_run(ra);
  if (*check) return cmd_check(check_file, check_words);
  if (*elements) return cmd_elements(ename, md);
  if (*gen) return cmd_gen(ga);
  if (*mkrouter) {
    std::vector<RouterIface> ifs;
    for (auto& spec : mk_ifaces) {
      RouterIface f;
      std::string err;
      if (!parse_iface_spec(spec, f, err)) {
        fmt::print(stderr, "shoal mkrouter: {}\n", err);
        return 2;
      }
      ifs.push_back(f);
    }
    RouterNat nat;
    if (!mk_nat.empty()) {
      std::string err;
      if (!parse_nat_spec(mk_nat, ifs, nat, err)) {
        fmt::print(stderr, "shoal mkrouter: {}\n", err);
        return 2;
      }
    }
    std::string conf = make_router_config(ifs, mk_routes4, mk_routes6, nat, mk_io == "xdp");
    if (mk_out.empty()) {
      fmt::print("{}", conf);
    } else {
      std::string err;
      if (!write_file(mk_out, conf, err)) {
        fmt::print(stderr, "shoal mkrouter: {}\n", err);
        return 1;
      }
    }
    return 0;
  }
  return cmd_version();
}
}  // namespace
}  // namespace shoal::tool

int main(int argc, char** argv) {
  try {
    return shoal::tool::run_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "shoal: %s\n", e.what());
    return 1;
  }
}
