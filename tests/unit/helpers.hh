// Test helpers: load a configuration from text, run it to completion in
// process, read handlers, read back pcap files.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "shoal/config/config.hh"
#include "shoal/core/runtime.hh"
#include "shoal/io/pcap.hh"
#include "shoal/offload/services.hh"

namespace shoal::test {

struct Run {
  Program prog;
  std::unique_ptr<Runtime> rt;
  std::string errors;
  bool ok = false;
  std::string h(const std::string& path) {
    std::string v, err;
    if (!rt->read_handler(path, v, err)) ADD_FAILURE() << err;
    return v;
  }
  uint64_t n(const std::string& path) { return std::stoull(h(path)); }
};

inline std::unique_ptr<Run> load(const std::string& text, const config::Defines& defs = {}) {
  auto r = std::make_unique<Run>();
  Diagnostics d;
  r->ok = config::load_string("test.click", text, defs, r->prog, d);
  r->errors = d.text();
  return r;
}

// Loads, configures, initializes and runs until stopped or quiescent.
// The device offloading tests use: SHOAL_TEST_DEVICE (auto, host, cuda),
// default auto (CUDA on a GPU machine, else the host backend).
// A run's options: the runtime's and the offload layer's.
struct Options : RunOptions {
  offload::Options offload;
};

inline Options default_options() {
  Options opt;
  if (const char* d = std::getenv("SHOAL_TEST_DEVICE")) opt.offload.device.kind = d;
  opt.duration_s = 30;  // a safety net: every test graph ends by itself
  return opt;
}

inline std::unique_ptr<Run> run_with(const std::string& text, Options opt, const config::Defines& defs = {});

inline std::unique_ptr<Run> run(const std::string& text, int threads = 1, uint32_t pool = 4096,
                                const config::Defines& defs = {}) {
  Options opt = default_options();
  opt.threads = threads;
  opt.pool.count = pool;
  return run_with(text, opt, defs);
}

inline std::unique_ptr<Run> run_with(const std::string& text, Options opt, const config::Defines& defs) {
  auto r = load(text, defs);
  if (!r->ok) return r;
  r->rt = std::make_unique<Runtime>(r->prog, opt);
  offload::set_options(*r->rt, opt.offload);
  for (auto& e : r->prog.elements)
    if (e.info->name == "DriverManager") r->rt->set_driver_manager();
  Diagnostics d;
  if (!r->rt->configure(d) || !r->rt->initialize(d)) {
    r->errors = d.text();
    r->ok = false;
    r->rt->cleanup();
    return r;
  }
  r->rt->run();
  r->ok = true;
  return r;
}

// Checks the accounting identity, that the run reported no error (a failed
// write or read) unless the test expects one, and that no offloaded work
// fell back to the CPU for a device fault (a test of the device would then
// compare the CPU with itself) unless the test is about fallback.
inline void finish(Run& r, bool expect_errors = false, bool allow_fallback = false) {
  Accounting a = r.rt->accounting();
  if (!allow_fallback)
    for (size_t i = 0; i < r.rt->router(0).size(); ++i) {
      Element* e = r.rt->router(0).element(i);
      for (const char* h : {"offload_cpu_fault", "cpu_fault"}) {
        std::string v, err;
        if (!e->find_handler(h) || !r.rt->read_handler(e->name() + "." + h, v, err)) continue;
        std::string why;
        r.rt->read_handler(e->name() + (h[0] == 'o' ? ".offload_last_error" : ".last_error"), why, err);
        EXPECT_EQ(v, "0") << e->name() << "." << h << ": work meant for the device ran on the CPU: " << why;
      }
    }
  std::string errs;
  for (auto& e : r.rt->errors()) errs += e + "\n";
  EXPECT_EQ(r.rt->failed(), expect_errors) << errs;
  EXPECT_TRUE(a.balanced()) << "received " << a.received << " created " << a.created << " sent " << a.sent
                            << " dropped " << a.dropped << " held " << a.held;
  r.rt->cleanup();
}

struct Frame {
  std::vector<uint8_t> bytes;
  uint64_t ts;
};

// The data lines of an IP summary dump (not its '!' lines), each followed by
// `sep`.
inline std::string summary_lines(const std::string& path, const char* sep = " ") {
  std::ifstream f(path);
  std::string line, body;
  while (std::getline(f, line))
    if (!line.empty() && line[0] != '!') body += line + sep;
  return body;
}

inline std::vector<Frame> read_pcap(const std::string& path) {
  io::PcapReader rd;
  std::string err;
  std::vector<Frame> out;
  if (!rd.open(path, err)) {
    ADD_FAILURE() << err;
    return out;
  }
  const uint8_t* d;
  uint32_t cap, wire;
  uint64_t ts;
  while (rd.next(d, cap, wire, ts, err) == 1) out.push_back({std::vector<uint8_t>(d, d + cap), ts});
  return out;
}

#ifdef SHOAL_SOURCE_DIR
// An examples/ configuration with its examples/ paths made absolute (tests
// run from the build directory).
inline std::string example_config(const std::string& file) {
  std::string root = SHOAL_SOURCE_DIR;
  std::ifstream f(root + "/examples/" + file);
  if (!f) {
    ADD_FAILURE() << "no examples/" << file;
    return "";
  }
  std::string cfg((std::istreambuf_iterator<char>(f)), {});
  for (size_t p = cfg.find("examples/"); p != std::string::npos; p = cfg.find("examples/", p + root.size() + 10))
    cfg.replace(p, 9, root + "/examples/");
  return cfg;
}
#endif

inline std::string tmpdir() {
  // a new directory per process (named after the pid, but never one an
  // earlier process of the same pid left: files there would be appended to)
  static std::string dir = [] {
    std::string t = std::filesystem::temp_directory_path() / ("shoal-unit-" + std::to_string(getpid()) + "-XXXXXX");
    if (!::mkdtemp(t.data())) throw std::runtime_error("tmpdir: cannot make " + t);
    return t;
  }();
  return dir;
}

// The device a device test runs on: the host backend (with each operation
// delayed by up to host_delay_us, and fault_rate of them failing), or what
// SHOAL_TEST_DEVICE names (cuda: bench/gpu/run.sh, which must then be CUDA:
// no silent fallback).
inline std::shared_ptr<dev::Device> open_test_device(double fault_rate = 0, uint32_t host_delay_us = 0) {
  dev::DeviceOptions o;
  o.kind = std::getenv("SHOAL_TEST_DEVICE") ? std::getenv("SHOAL_TEST_DEVICE") : "host";
  if (o.kind == "host") o.delay_us = host_delay_us;
  o.fault_rate = fault_rate;
  std::string detail, err;
  auto d = dev::open_device(o, detail, err);
  EXPECT_TRUE(d) << err;
  if (d && o.kind == "cuda") {
    EXPECT_STREQ(d->kind(), "cuda") << detail;
  }
  return d;
}

}  // namespace shoal::test
