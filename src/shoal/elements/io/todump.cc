// ToDump: writes packets to a pcap file.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/io/pcap.hh"
#include "shoal/io/shared_file.hh"

namespace shoal {

class ToDump : public Element {
 public:
  void configure(Args& a) override {
    std::string encap = "ETHER";
    a.read_mp("FILENAME", file_)
        .read_p("SNAPLEN", snaplen_)
        .read_p("ENCAP", encap)
        .read("NANO", nano_)
        .read("BURST", burst_)
        .read("USE_ENCAP_FROM", use_from_);
    a.complete();
    if (file_.empty()) a.fail("FILENAME is empty");
    linktype_ = io::linktype_from_name(encap);
    if (linktype_ < 0) a.fail(fmt::format("unknown ENCAP '{}' (ETHER, IP, IPV4, IPV6, SLL)", encap));
    if (snaplen_ == 0) snaplen_ = 262144;
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
    out_.with([&](io::PcapWriter& w) {
      b->for_each([&](uint32_t, Packet* p) {
        w.write(p->data(), p->length(), p->length(), p->timestamp_ns());
        sent(p);
      });
    });
    count_.add(b->live());
    recycle(b);
  }
  bool run_task() override {
    PacketBatch* b = pt_.pull();
    if (!b) return false;
    push(0, b);
    return true;
  }
  void on_stop() override {
    out_.with([](io::PcapWriter& w) { w.flush(); });
  }
  void cleanup() override { out_.close(); }
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
  io::SharedFile<io::PcapWriter> out_;
  Stat count_;
  PullTask pt_;
};
SHOAL_ELEMENT(ToDump, .name = "ToDump", .ports = "1/0", .processing = "a/", .summary = "writes packets to a pcap file",
              .description =
                  "Writes every packet to FILENAME in pcap format with nanosecond timestamps (NANO "
                  "false: microseconds), link type ENCAP. Packets written count as sent. The copies on "
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
