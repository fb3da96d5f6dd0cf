// ToIPSummaryDump: one line of Click's IP summary text per packet.
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <fstream>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/io/ipsummarydump.hh"
#include "shoal/io/outfile.hh"
#include "shoal/io/shared_file.hh"

namespace shoal {

class ToIPSummaryDump : public Element {
 public:
  void configure(Args& a) override {
    std::string contents = "timestamp ip_src sport ip_dst dport ip_proto";
    OutputPath out;
    a.read_mp("FILENAME", out)
        .read_p("CONTENTS", contents)
        .read("FIELDS", contents)
        .read("DATA", contents)
        .read("BANNER", banner_)
        .read("HEADER", header_)
        .read("BAD_PACKETS", bad_packets_)
        .read("VERBOSE", verbose_)
        .read("CAREFUL_TRUNC", careful_trunc_)
        .read("MULTIPACKET", multipacket_)
        .read("BINARY", binary_);
    a.complete();
    if (multipacket_) a.fail("MULTIPACKET true is not supported");
    file_ = out.path;
    std::string bad;
    if (!ipsum::parse_fields(contents, fields_, bad)) a.fail(fmt::format("unknown CONTENTS field '{}'", bad));
    if (fields_.empty()) a.fail("CONTENTS names no field");
    for (int f : fields_)
      if (binary_ && ipsum::binary_size(f) < 0)
        a.fail(fmt::format("cannot use field {} with BINARY", ipsum::field_name(f)));
    write_error_ = add_drop_reason("write-error");
  }
  void initialize() override {
    std::string err;
    auto make = [&](io::OutFile& o) {
      if (!o.open(file_, false, err) || !header_) return;
      o.put("!IPSummaryDump 1.3\n");
      if (!banner_.empty()) o.put("!creator " + banner_ + "\n");
      std::string data = "!data";
      for (int f : fields_) data += std::string(" ") + ipsum::field_name(f);
      o.put(data + (binary_ ? "\n!binary\n" : "\n"));
      o.end_record();
      if (o.flush()) err = o.error(), o.close();
    };
    if (!out_.open(registry(), file_, make, [](io::OutFile& o) { return o.is_open(); }))
      throw std::runtime_error(err.empty() ? file_ + ": cannot open for writing" : err);
    // A pull input (after a Queue or a scheduler): a task pulls, as Click's.
    if (input_proc(0) == Proc::Pull) {
      add_task();
      pt_.init(this, 32);
    }
  }
  bool run_task() override {
    PacketBatch* b = pt_.pull();
    if (!b) return false;
    push(0, b);
    return true;
  }
  void push(int, PacketBatch* b) override {
    // One line per packet, written per batch: a line that could not be
    // written is a packet dropped as 'write-error' (the file keeps whole lines).
    uint64_t lost = 0;
    std::string err;
    out_.with([&](io::OutFile& o) {
      uint64_t before = o.records_lost();
      b->for_each([&](uint32_t, Packet* p) {
        text_.clear();
        line(p, text_);
        o.put(text_);
        o.end_record();
      });
      o.flush();
      lost = o.records_lost() - before;
      if (lost) err = o.error();
    });
    uint64_t keep = b->live() - lost, i = 0;
    bool forward = noutputs() > 0;  // Click's optional output: written packets go on
    b->for_each([&](uint32_t slot, Packet* p) {
      if (i++ < keep) {
        if (!forward) sent(p);
      } else {
        drop(p, write_error_);
        b->kill(slot);
      }
    });
    count_.add(keep);
    if (lost) run_error(err);
    if (forward)
      output_push(0, b);
    else
      recycle(b);
  }
  void on_stop() override {
    std::string err;
    // A hot swap's new element of the same file shares this writer and goes
    // on writing it: flushed, not closed (closed with the last holder).
    bool swap = worker().runtime().swap_pending();
    out_.with([&](io::OutFile& o) {
      if (!o.is_open()) return;
      if (swap ? o.flush() != 0 : !o.close()) err = o.error();
    });
    if (!err.empty()) run_error(err);
  }
  void cleanup() override { out_.close(); }
  void add_handlers() override { add_stat_handler("count", count_); }

 private:
  static io::SharedRegistry<io::OutFile>& registry() {
    static io::SharedRegistry<io::OutFile> r;
    return r;
  }
  // Click's ToIPSummaryDump: a '!bad WHY' line first (BAD_PACKETS true)
  // for a packet without a usable IP header, then the fields, '-' for
  // those the packet lacks.
  void line(Packet* p, std::string& out) {
    if (bad_packets_) {
      std::string why = ipsum::bad_reason(p);
      if (!why.empty()) {
        if (binary_)
          ipsum::write_binary_note(out, "!bad " + why + "\n");
        else
          out += "!bad " + why + "\n";
      }
    }
    if (binary_) return ipsum::write_binary(out, fields_, p);
    bool first = true;
    for (int f : fields_) {
      if (!first) out += ' ';
      first = false;
      ipsum::write_field(out, f, p);
    }
    out += '\n';
  }

  std::string file_, banner_;
  bool header_ = true, bad_packets_ = false, verbose_ = false, careful_trunc_ = true, multipacket_ = false,
       binary_ = false;
  std::vector<int> fields_;
  io::SharedFile<io::OutFile> out_;
  std::string text_;
  uint16_t write_error_ = 0;
  PullTask pt_;
  Stat count_;
};
SHOAL_ELEMENT(
    ToIPSummaryDump, .name = "ToIPSummaryDump", .ports = "1/0-1", .processing = "a/h",
    .summary = "writes one text line per IPv4 packet (Click's IP summary format)",
    .description =
        "Click's ToIPSummaryDump: '!IPSummaryDump 1.3', '!creator' and '!data FIELDS' header lines, then one line "
        "per packet with the CONTENTS fields, '-' for a field the packet lacks. Fields, with Click's names and "
        "synonyms (a name without '_' is ip_NAME: src, dst, proto, len...): timestamp ntimestamp ts_sec ts_usec "
        "ts_usec1 count link direction aggregate wire_len ip_src ip_dst ip_tos ip_dscp ip_ecn ip_ttl ip_frag "
        "ip_fragoff ip_id ip_sum ip_proto ip_hl ip_len ip_capture_len ip_opt sport dport tcp_seq tcp_ack tcp_off "
        "tcp_flags tcp_window tcp_urp tcp_opt udp_len icmp_type icmp_code icmp_type_name icmp_code_name "
        "icmp_flowid icmp_seq icmp_nextmtu payload_len payload payload_md5 payload_md5_hex eth_src eth_dst "
        "eth_type. The IP header is found from the network header annotation, an Ethernet IPv4 frame or a raw "
        "IPv4 packet. ip_opt is Click's text for IP options ('rr{1.0.0.1}+3', 'ssrr{A,B^C}', 'ts.ip{A=1}++5', "
        "'99=1:2'; NOP and EOL left out). With BINARY true, a '!binary' line ends the header and each packet is "
        "Click's binary record: a 4-byte length, then the fields at Click's sizes (ip_opt and tcp_opt: a length "
        "byte and the bytes; payload and the ICMP names have no binary form). "
        "With BAD_PACKETS true, a packet without a usable IP header gets a '!bad WHY' line first. "
        "A line that cannot be written is a packet dropped ('write-error'). With an output, the written "
        "packets go on through it.",
    .args = {{"FILENAME", "string", "output file ('-': standard output), mandatory"},
             {"CONTENTS", "fields",
              "space-separated fields (default: timestamp ip_src sport ip_dst dport ip_proto); "
              "also FIELDS"},
             {"DATA", "fields", "the same as CONTENTS"},
             {"BANNER", "string", "a '!creator' line"},
             {"HEADER", "boolean", "write the header lines (default true)"},
             {"BAD_PACKETS", "boolean", "write '!bad' lines for packets without a usable IP header (default false)"},
             {"VERBOSE", "boolean", "accepted (Click's)"},
             {"CAREFUL_TRUNC", "boolean", "accepted (Click's)"},
             {"MULTIPACKET", "boolean", "Click's; only false"},
             {"BINARY", "boolean", "Click's binary records instead of text lines (default false)"}},
    .handlers = {{"count", "r", "lines written"}},
    .example = "FromDump(in.pcap, STOP true) -> ToIPSummaryDump(out.txt, FIELDS src sport dst dport proto tcp_flags);");

}  // namespace shoal
