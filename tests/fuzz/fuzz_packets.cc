// libFuzzer harness: packets through configurations, not just parsing. The
// first input byte picks a configuration (every golden test's that reads a
// pcap, and the IP router, firewall, IDS, SDN and NF-chain examples); the rest is cut into packets
// (two length bytes, then that many bytes), written as a pcap to a memory
// file that the configuration's FromDump reads. A run must end by itself
// (libFuzzer's -timeout catches a hang), raise no sanitizer report, and
// keep the accounting identity (received + created = sent + dropped + held).
// Seeds (tests/fuzz/seeds-packets) are written by tests/fuzz/packet_seed.py,
// which knows the configurations' order.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "shoal/config/config.hh"
#include "shoal/core/runtime.hh"

namespace {

struct Conf {
  std::string name, text;
};

std::vector<Conf> load_configs() {
  std::vector<Conf> out;
  auto add = [&](const std::filesystem::path& p) {
    std::ifstream f(p);
    std::stringstream ss;
    ss << f.rdbuf();
    if (ss.str().find("FromDump($IN") != std::string::npos) out.push_back({p.string(), ss.str()});
  };
  std::filesystem::path root = SHOAL_SOURCE_DIR;
  std::vector<std::filesystem::path> golden;
  for (auto& d : std::filesystem::directory_iterator(root / "tests/golden"))
    if (std::filesystem::exists(d.path() / "config.click")) golden.push_back(d.path() / "config.click");
  std::sort(golden.begin(), golden.end());
  for (auto& g : golden) add(g);
  for (const char* e : {"ipv4-fastpath", "firewall", "ids-router", "ids-std-router", "ids-suricata", "sdn-forwarder",
                        "divergence", "nf-chain"})
    add(root / "examples" / (std::string(e) + ".click"));
  if (out.empty()) std::abort();  // run from anywhere: the paths are absolute
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::vector<Conf> confs = load_configs();
  static const std::string outdir = [] {
    char tmpl[] = "/tmp/shoal-fuzz-XXXXXX";
    return std::string(mkdtemp(tmpl) ? tmpl : "/tmp");
  }();
  if (size < 1) return 0;
  const Conf& conf = confs[data[0] % confs.size()];
  // The packets, as an Ethernet pcap in a memory file.
  std::string pcap;
  auto u32 = [&](uint32_t v) { pcap.append(reinterpret_cast<const char*>(&v), 4); };
  u32(0xa1b2c3d4), u32(2 | (4u << 16)), u32(0), u32(0), u32(65535), u32(1);
  uint32_t n = 0;
  for (size_t i = 1; i + 2 <= size && n < 512; ++n) {
    size_t len = std::min<size_t>(size_t(data[i]) | size_t(data[i + 1] & 0x07) << 8, size - i - 2);
    u32(1700000000 + n), u32(0), u32(uint32_t(len)), u32(uint32_t(len));
    pcap.append(reinterpret_cast<const char*>(data + i + 2), len);
    i += 2 + len;
  }
  int fd = memfd_create("fuzz.pcap", 0);
  if (fd < 0 || write(fd, pcap.data(), pcap.size()) != ssize_t(pcap.size())) std::abort();
  std::string in = "/proc/self/fd/" + std::to_string(fd);

  shoal::SourceManager::instance().clear();
  shoal::Program prog;
  shoal::Diagnostics diag;
  bool ok =
      shoal::config::load_file(conf.name, {{"IN", in}, {"OUT", outdir + "/o-"}, {"LOG", outdir + "/l-"}}, prog, diag);
  if (!ok) std::abort();  // the configurations are known good
  shoal::RunOptions opt;
  opt.pool.count = 1024;
  opt.duration_s = 20;  // a safety net; the input ends the run
  shoal::Runtime rt(prog, opt);
  for (auto& e : prog.elements)
    if (e.info->name == "DriverManager") rt.set_driver_manager();
  shoal::Diagnostics d2;
  if (!rt.configure(d2) || !rt.initialize(d2)) {
    fprintf(stderr, "%s", d2.text().c_str());
    std::abort();
  }
  rt.run();
  shoal::Accounting a = rt.accounting();
  rt.cleanup();
  close(fd);
  if (!a.balanced() || a.received != n) {
    fprintf(stderr, "%s: %u packets: received %lu created %lu sent %lu dropped %lu held %lu\n", conf.name.c_str(), n,
            a.received, a.created, a.sent, a.dropped, a.held);
    std::abort();
  }
  return 0;
}
