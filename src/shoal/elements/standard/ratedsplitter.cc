// RatedSplitter and BandwidthRatedSplitter: packets within a rate (packets
// or bytes per second) leave on output 0, the rest on output 1.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/standard/tokenbucket.hh"

namespace shoal {

template <bool Bandwidth>
class RatedSplitterT : public PacketElement<RatedSplitterT<Bandwidth>> {
 public:
  void configure(Args& a) override {
    tb_.configure(a, Bandwidth);
    a.complete();
  }
  void initialize() override { r_over_ = this->add_drop_reason("over-rate"); }
  void push(int port, PacketBatch* b) override {
    tb_.refill(this->worker().now_ns());
    PacketElement<RatedSplitterT<Bandwidth>>::push(port, b);
  }
  int process(Packet* p) {
    bool ok;
    if constexpr (Bandwidth) {
      ok = tb_.contains(TokenBucket::kBandwidthThreshold);
      if (ok) tb_.remove(p->length());
    } else {
      ok = tb_.remove_if(1);
    }
    if (ok) return 0;
    return this->noutputs() > 1 ? 1 : this->drop_code(r_over_);
  }
  void add_handlers() override {
    add_read_handler_rate("rate");
    add_read_handler_rate("config");
  }

 private:
  void add_read_handler_rate(const char* name) {
    this->add_read_handler(
        name, [this] { return Bandwidth ? fmt::format("{}Bps", tb_.rate()) : std::to_string(tb_.rate()); });
  }
  TokenBucket tb_;
  uint16_t r_over_ = 0;
};

using RatedSplitter = RatedSplitterT<false>;
using BandwidthRatedSplitter = RatedSplitterT<true>;

SHOAL_ELEMENT(RatedSplitter, .name = "RatedSplitter", .ports = "1/1-2", .processing = "h/h",
              .summary = "splits packets by rate",
              .description =
                  "Click's RatedSplitter: packets within RATE packets per second (a token bucket that starts "
                  "full and holds BURST_DURATION of RATE, or BURST_SIZE packets) leave on output 0, the "
                  "others on output 1, or are dropped ('over-rate') when it is not connected.",
              .args = {{"RATE", "unsigned", "packets per second"},
                       {"BURST_DURATION", "time", "bucket size as a time at RATE (default 20 ms)"},
                       {"BURST_SIZE", "unsigned", "bucket size in packets"}},
              .handlers = {{"rate", "r", "RATE"}, {"config", "r", "RATE"}},
              .example = "src -> s :: RatedSplitter(1000); s[0] -> ok; s[1] -> excess;");

SHOAL_ELEMENT(BandwidthRatedSplitter, .name = "BandwidthRatedSplitter", .ports = "1/1-2", .processing = "h/h",
              .summary = "splits packets by bandwidth",
              .description =
                  "Click's BandwidthRatedSplitter: RatedSplitter counting bytes. RATE is a bandwidth; the bucket "
                  "holds BURST_DURATION of RATE (or BURST_BYTES) plus 131072 bytes, and a packet goes to output "
                  "0 while at least 131072 are left (so a packet larger than the burst still passes).",
              .args = {{"RATE", "bandwidth", "bytes per second (Bps, kbps, Mbps, ...)"},
                       {"BURST_DURATION", "time", "bucket size as a time at RATE (default 20 ms)"},
                       {"BURST_BYTES", "unsigned", "bucket size in bytes"}},
              .handlers = {{"rate", "r", "RATE"}, {"config", "r", "RATE"}},
              .example = "src -> s :: BandwidthRatedSplitter(10Mbps); s[0] -> ok; s[1] -> excess;");

}  // namespace shoal
