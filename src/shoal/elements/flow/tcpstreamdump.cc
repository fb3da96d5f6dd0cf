// TCPStreamDump: writes each direction of each TCP connection to its own file,
// as tcpflow names them; a byte's file offset is its stream offset.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <list>
#include <mutex>
#include <set>
#include <unordered_map>

#include "shoal/elements/common.hh"
#include "shoal/elements/flow/flowipmanager.hh"
#include "shoal/elements/flow/tcpreassembler.hh"

namespace shoal {

namespace {

// "010.000.000.001.40000": tcpflow's form of an IPv4 endpoint; IPv6
// addresses in full hex groups.
std::string endpoint_name(const uint32_t* a, uint8_t family, uint16_t port) {
  if (family == 4)
    return fmt::format("{:03d}.{:03d}.{:03d}.{:03d}.{:05d}", a[0] >> 24, (a[0] >> 16) & 255, (a[0] >> 8) & 255,
                       a[0] & 255, port);
  std::string s;
  for (int i = 0; i < 4; ++i) s += fmt::format("{:04x}.{:04x}.", a[i] >> 16, a[i] & 0xffff);
  return s + fmt::format("{:05d}", port);
}

}  // namespace

class TCPStreamDump : public Element, private flow::StreamSink {
 public:
  ~TCPStreamDump() override {
    for (auto& [key, f] : files_)
      if (f.fd >= 0) ::close(f.fd);
  }
  void configure(Args& a) override {
    a.read_mp("DIR", dir_).read("MAX_OPEN", max_open_);
    a.complete();
    // DIR, or the folder it is to be made in, must be writable (it is made at initialize)
    std::error_code ec;
    std::filesystem::path d(dir_);
    bool exists = std::filesystem::exists(d, ec);
    if (exists && !std::filesystem::is_directory(d, ec)) a.fail(fmt::format("DIR '{}' is not a directory", dir_));
    std::string where = exists ? dir_ : (d.has_parent_path() ? d.parent_path().string() : ".");
    if (::access(where.c_str(), W_OK) != 0) a.fail(fmt::format("DIR '{}': {}: {}", dir_, where, std::strerror(errno)));
    if (max_open_ < 1) max_open_ = 1;
    names_ = shared_state<Names>(this);
    mgr_ = &FlowIPManager::require(this, a);
    TCPReassembler::require(this, a).add_sink(this);
  }
  void initialize() override {
    std::error_code ec;
    std::filesystem::create_directory(dir_, ec);
    if (ec) throw std::runtime_error(fmt::format("DIR '{}': {}", dir_, ec.message()));
  }
  void push(int, PacketBatch* b) override { output_push(0, b); }
  PacketBatch* pull(int, uint32_t max) override { return input_pull(0, max); }
  void on_stop() override {
    for (auto& [key, f] : files_) close_file(f);
  }
  void add_handlers() override {
    add_stat_handler("files", files_made_);
    add_stat_handler("bytes", bytes_);
    add_stat_handler("gaps", gaps_);
    add_stat_handler("lost_bytes", lost_);
  }

 private:
  struct File {
    std::string path;
    int fd = -1;
    std::list<uint64_t>::iterator lru;
  };
  static uint64_t key(uint32_t flow, uint8_t dir) { return (uint64_t(flow) << 1) | dir; }

  // A new file name for this direction: tcpflow's "SRC-DST", with "-2", "-3"
  // for later connections on the same tuple in this run.
  std::string new_path(uint32_t flow, uint8_t dir) {
    const flow::Flow& f = mgr_->table().flow(flow);
    bool a_sends = (f.orig_dir ^ dir) == 0;
    const k::ConnKey& k = f.key;
    std::string name = a_sends ? endpoint_name(k.a, k.family, k.pa) + "-" + endpoint_name(k.b, k.family, k.pb)
                               : endpoint_name(k.b, k.family, k.pb) + "-" + endpoint_name(k.a, k.family, k.pa);
    std::lock_guard<std::mutex> g(names_->mu);  // the copies on every worker share the names
    std::string path = dir_ + "/" + name;
    for (int n = 2; !names_->used.insert(path).second; ++n) path = dir_ + "/" + name + "-" + std::to_string(n);
    return path;
  }
  File* open_file(uint32_t flow, uint8_t dir) {
    auto [it, fresh] = files_.try_emplace(key(flow, dir));
    File& f = it->second;
    if (fresh) f.path = new_path(flow, dir);
    if (f.fd >= 0) {
      lru_.splice(lru_.end(), lru_, f.lru);
      return &f;
    }
    while (open_ >= max_open_) close_file(files_[lru_.front()]);
    f.fd = ::open(f.path.c_str(), O_WRONLY | O_CREAT | (fresh ? O_TRUNC : 0) | O_CLOEXEC, 0644);
    if (f.fd < 0) {
      run_error(fmt::format("{}: {}", f.path, std::strerror(errno)));
      return nullptr;
    }
    if (fresh) files_made_.add(1);
    ++open_;
    lru_.push_back(it->first);
    f.lru = std::prev(lru_.end());
    return &f;
  }
  void close_file(File& f) {
    if (f.fd < 0) return;
    if (::close(f.fd) != 0) run_error(fmt::format("{}: {}", f.path, std::strerror(errno)));
    f.fd = -1;
    lru_.erase(f.lru);
    --open_;
  }

  void stream_data(uint32_t flow, uint8_t dir, uint64_t offset, const uint8_t* data, uint32_t len) override {
    File* f = open_file(flow, dir);
    if (!f) {
      lost_.add(len);
      return;
    }
    for (uint32_t done = 0; done < len;) {
      ssize_t w = ::pwrite(f->fd, data + done, len - done, off_t(offset + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        run_error(fmt::format("{}: {}", f->path, w < 0 ? std::strerror(errno) : "short write"));
        lost_.add(len - done);
        return;
      }
      done += uint32_t(w);
    }
    bytes_.add(len);
  }
  // A gap stays a hole in the file (zeros, sparse): later bytes keep their
  // stream offsets.
  void stream_gap(uint32_t, uint8_t, uint64_t, uint64_t) override { gaps_.add(1); }
  void stream_end(uint32_t flow, uint8_t dir) override {
    auto it = files_.find(key(flow, dir));
    if (it == files_.end()) return;
    close_file(it->second);
    files_.erase(it);
  }

  struct Names {
    std::mutex mu;
    std::set<std::string> used;
  };
  std::shared_ptr<Names> names_;
  std::string dir_;
  int max_open_ = 256;
  int open_ = 0;
  FlowIPManager* mgr_ = nullptr;
  std::unordered_map<uint64_t, File> files_;
  std::list<uint64_t> lru_;  // open files, least recently written first
  Stat files_made_, bytes_, gaps_, lost_;
};
SHOAL_ELEMENT(
    TCPStreamDump, .name = "TCPStreamDump", .ports = "1/1", .processing = "a/a",
    .summary = "writes each direction of each TCP connection to a file",
    .description =
        "Packets pass unchanged. Each direction's stream from the TCPReassembler upstream goes to its own file in DIR, "
        "named as tcpflow names them: SRC-DST, each endpoint as the address (IPv4 as four 3-digit numbers, IPv6 as "
        "eight 4-digit hex groups, dot-separated) and the 5-digit port, e.g. "
        "010.000.000.001.40000-010.000.000.002.00080 "
        "for what 10.0.0.1:40000 sent. A later connection on the same tuple gets '-2', '-3'. A byte's file offset is "
        "its stream offset, so a gap is a hole (zeros) in the file. At most MAX_OPEN files are open at once (the least "
        "recently written is closed and reopened when needed). A failed write is a run error, and the bytes are "
        "counted in lost_bytes.",
    .args = {{"DIR", "directory", "where the files go (made if missing, in a folder that exists), mandatory"},
             {"MAX_OPEN", "integer", "files open at once (default 256)"}},
    .handlers = {{"files", "r", "files written"},
                 {"bytes", "r", "bytes written"},
                 {"gaps", "r", "gaps in the streams"},
                 {"lost_bytes", "r", "bytes that could not be written"}},
    .example = "FromDump(in.pcap, STOP true) -> FlowIPManager -> TCPReassembler -> TCPStreamDump(streams) -> Discard;");

}  // namespace shoal
