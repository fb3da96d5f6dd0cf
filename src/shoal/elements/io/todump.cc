// ToDump: writes packets to a pcap file.
#include <fmt/format.h>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"
#include "shoal/io/pcap.hh"
#include "shoal/io/shared_file.hh"

namespace shoal {

class ToDump : public Element {
 public:
  void configure(Args& a) override {
    std::string encap = "ETHER";
    OutputPath out;
    a.read_mp("FILENAME", out)
        .read_p("SNAPLEN", snaplen_)
        .read_p("ENCAP", encap)
        .read("NANO", nano_)
        .read("BURST", burst_)
        .read("USE_ENCAP_FROM", use_from_);
    a.complete();
    file_ = out.path;
    linktype_ = io::linktype_from_name(encap);
    if (linktype_ < 0) a.fail(fmt::format("unknown ENCAP '{}' (ETHER, IP, IPV4, IPV6, SLL)", encap));
    if (snaplen_ == 0) snaplen_ = 262144;
    write_error_ = add_drop_reason("write-error");
  }
  void initialize() override {
    std::string err;
    if (!out_.open(
            registry(), file_, [&](io::PcapWriter& w) { w.open(file_, linktype_, snaplen_, nano_, err); },
            [](io::PcapWriter& w) { return w.is_open(); }))
      throw std::runtime_error(err.empty() ? file_ + ": could not open for writing" : err);
    if (input_proc(0) == Proc::Pull) {
      add_task();
      pt_.init(this, burst_);
    }
  }
  void push(int, PacketBatch* b) override {
    // Written and flushed per batch, so each packet's fate is known here: a
    // failed write leaves the file cut at its last whole record, and the
    // packets it lost are drops ('write-error'), not sends.
    uint64_t lost = 0;
    std::string err;
    out_.with([&](io::PcapWriter& w) {
      uint64_t before = w.records_lost();
      b->for_each([&](uint32_t, Packet* p) { w.write(p->data(), p->length(), p->length(), p->timestamp_ns()); });
      w.flush();
      lost = w.records_lost() - before;
      if (lost) err = w.error();
    });
    uint64_t keep = b->live() - lost, i = 0;
    b->for_each([&](uint32_t, Packet* p) {
      if (i++ < keep)
        sent(p);
      else
        drop(p, write_error_);
    });
    count_.add(keep);
    if (lost) run_error(err);
    recycle(b);
  }
  bool run_task() override {
    PacketBatch* b = pt_.pull();
    if (!b) return false;
    push(0, b);
    return true;
  }
  void on_stop() override {
    // A hot swap's new ToDump of the same file shares this writer and goes
    // on writing it: the file stays open (closed with the last holder).
    if (worker().runtime().swap_pending()) return;
    std::string err;
    out_.with([&](io::PcapWriter& w) {
      if (w.is_open() && !w.close()) err = w.error();
    });
    if (!err.empty()) run_error(err);
  }
  void cleanup() override { out_.close(); }
  // Hot swap: the count goes on (the file too, when it is the same one).
  void hot_swapped(Element* old) override {
    if (auto* o = dynamic_cast<ToDump*>(old); o && o->file_ == file_) count_.set(o->count_.get());
  }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_read_handler("filename", [this] { return file_; });
  }

 private:
  static io::SharedRegistry<io::PcapWriter>& registry() {
    static io::SharedRegistry<io::PcapWriter> r;
    return r;
  }
  std::string file_, use_from_;
  uint32_t snaplen_ = 262144, burst_ = 32;
  bool nano_ = true;
  int linktype_ = 1;
  uint16_t write_error_ = 0;
  io::SharedFile<io::PcapWriter> out_;
  Stat count_;
  PullTask pt_;
};
SHOAL_ELEMENT(ToDump, .name = "ToDump", .ports = "1/0", .processing = "a/", .summary = "writes packets to a pcap file",
              .description =
                  "Writes every packet to FILENAME in pcap format with nanosecond timestamps (NANO "
                  "false: microseconds), link type ENCAP. Packets written count as sent. Every write "
                  "is checked: on a failure (a full disk) the file is cut back to its last whole "
                  "packet, so it stays readable, the run reports the file and the reason and ends "
                  "with a failure status, and the packets not written are dropped as 'write-error'. The copies on "
                  "several workers share one file (per-flow order is kept, flows interleave). On a pull "
                  "input it runs a task that pulls.",
              .args = {{"FILENAME", "string", "output file, mandatory"},
                       {"SNAPLEN", "unsigned", "bytes kept per packet (default 262144)"},
                       {"ENCAP", "ETHER|IP|IPV4|IPV6|SLL", "link type (default ETHER)"},
                       {"NANO", "boolean", "nanosecond timestamps (default true)"},
                       {"BURST", "unsigned", "packets per pull in pull mode"},
                       {"USE_ENCAP_FROM", "element", "accepted for Click compatibility; ENCAP decides"}},
              .handlers = {{"count", "r", "packets written"}, {"filename", "r", "the file"}},
              .example = "FromDump(in.pcap, STOP true) -> ToDump(out.pcap);");

}  // namespace shoal
