// AverageCounter: counts packets and bytes and their rate since the first.
#include <fmt/format.h>

#include <atomic>

#include "shoal/elements/common.hh"

namespace shoal {

class AverageCounter : public Element {
 public:
  void configure(Args& a) override {
    double ignore = 0;
    a.read_p("IGNORE", ignore).read("LINK_FCS", link_fcs_);
    a.complete();
    if (ignore < 0) a.fail("IGNORE must not be negative");
    ignore_ns_ = uint64_t(ignore * 1e9);
  }
  void initialize() override { s_ = shared_state<Shared>(this); }
  void push(int, PacketBatch* b) override {
    count(b);
    output_push(0, b);
  }
  PacketBatch* pull(int, uint32_t max) override {
    PacketBatch* b = input_pull(0, max);
    if (b) count(b);
    return b;
  }
  void add_handlers() override {
    // The workers' copies share one count, so worker 0's answer is the total.
    add_read_handler("count", [this] { return std::to_string(s_->packets.load()); });
    add_read_handler("byte_count", [this] { return std::to_string(s_->bytes.load()); });
    add_read_handler("bit_count", [this] { return std::to_string(s_->bytes.load() * 8); });
    add_read_handler("link_count", [this] { return std::to_string(link_bits()); });
    add_read_handler("rate", [this] { return rate(double(s_->packets.load())); });
    add_read_handler("byte_rate", [this] { return rate(double(s_->bytes.load())); });
    add_read_handler("bit_rate", [this] { return rate(double(s_->bytes.load()) * 8); });
    add_read_handler("link_rate", [this] { return rate(double(link_bits())); });
    add_read_handler("time", [this] { return fmt::format("{:.6f}", double(span_ns()) / 1e9); });
    add_write_handler("reset", [this](const std::string&) {
      s_->packets = 0;
      s_->bytes = 0;
      s_->first = 0;
      s_->last = 0;
    });
  }

 private:
  struct Shared {
    std::atomic<uint64_t> packets{0}, bytes{0}, first{0}, last{0};  // first/last: ns, 0 = none yet
  };
  // Packets in the first IGNORE seconds after the first one are not counted
  // (they would make the rate of a starting source look low).
  void count(PacketBatch* b) {
    uint64_t now = worker().now_ns(), first = 0;
    s_->first.compare_exchange_strong(first, now);
    first = s_->first.load();
    uint64_t last = s_->last.load();
    while (last < now && !s_->last.compare_exchange_weak(last, now)) {}
    if (now - first < ignore_ns_) return;
    uint64_t bytes = 0;
    b->for_each([&](uint32_t, Packet* p) { bytes += p->length(); });
    s_->packets += b->live();
    s_->bytes += bytes;
  }
  uint64_t link_bits() const {  // with Ethernet's preamble, gap (and FCS) per packet
    return (s_->bytes.load() + s_->packets.load() * (20 + (link_fcs_ ? 4 : 0))) * 8;
  }
  uint64_t span_ns() const {
    uint64_t f = s_->first.load(), l = s_->last.load();
    return l > f + ignore_ns_ ? l - f - ignore_ns_ : 0;
  }
  std::string rate(double n) const {
    uint64_t d = span_ns();
    return d ? fmt::format("{:.0f}", n * 1e9 / double(d)) : "0";
  }
  std::shared_ptr<Shared> s_;
  uint64_t ignore_ns_ = 0;
  bool link_fcs_ = true;
};
SHOAL_ELEMENT(AverageCounter, .name = "AverageCounter", .ports = "1/1", .processing = "a/a",
              .summary = "counts packets and bytes, and their average rate",
              .description =
                  "Click's AverageCounter: counts what passes and reports rates over the time from the first "
                  "packet to the last, not counting the first IGNORE seconds. One count for all workers. "
                  "link_count and link_rate add Ethernet's 20 bytes of preamble and gap (and 4 of FCS with "
                  "LINK_FCS) per packet.",
              .args = {{"IGNORE", "real", "seconds after the first packet not counted (default 0)"},
                       {"LINK_FCS", "boolean", "count the FCS in link_count/link_rate (default true)"}},
              .handlers = {{"count", "r", "packets"},
                           {"byte_count", "r", "bytes"},
                           {"bit_count", "r", "bits"},
                           {"link_count", "r", "bits on the wire"},
                           {"rate", "r", "packets per second"},
                           {"byte_rate", "r", "bytes per second"},
                           {"bit_rate", "r", "bits per second"},
                           {"link_rate", "r", "bits per second on the wire"},
                           {"time", "r", "seconds measured"},
                           {"reset", "w", "start again"}},
              .example = "FromDump(in.pcap, STOP true) -> ac :: AverageCounter -> Discard;  // read ac.rate");

// FastClick's thread-safe versions: one count for all workers, as
// AverageCounter's here.
class AverageCounterMP : public AverageCounter {};
SHOAL_ELEMENT(AverageCounterMP, .name = "AverageCounterMP", .ports = "1/1", .processing = "a/a",
              .summary = "counts packets and bytes, and their average rate (AverageCounter)",
              .description =
                  "FastClick's AverageCounterMP (atomic counts): AverageCounter, which keeps one count for all "
                  "workers (see AverageCounter for arguments and handlers).",
              .args = {{"IGNORE", "real", "seconds after the first packet not counted (default 0)"},
                       {"LINK_FCS", "boolean", "count the FCS in link_count/link_rate (default true)"}},
              .handlers = {{"count", "r", "packets"},
                           {"rate", "r", "packets per second"},
                           {"reset", "w", "start again"}},
              .example = "src -> ac :: AverageCounterMP -> Discard;");
class AverageCounterIMP : public AverageCounter {};
SHOAL_ELEMENT(AverageCounterIMP, .name = "AverageCounterIMP", .ports = "1/1", .processing = "a/a",
              .summary = "counts packets and bytes, and their average rate (AverageCounter)",
              .description =
                  "FastClick's AverageCounterIMP (per-thread counts): AverageCounter, which keeps one count for "
                  "all workers (see AverageCounter for arguments and handlers).",
              .args = {{"IGNORE", "real", "seconds after the first packet not counted (default 0)"},
                       {"LINK_FCS", "boolean", "count the FCS in link_count/link_rate (default true)"}},
              .handlers = {{"count", "r", "packets"},
                           {"rate", "r", "packets per second"},
                           {"reset", "w", "start again"}},
              .example = "src -> ac :: AverageCounterIMP -> Discard;");

}  // namespace shoal
