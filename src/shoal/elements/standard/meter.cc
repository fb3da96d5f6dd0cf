// Meter and BandwidthMeter: send the whole stream to the output of its
// current rate (packets or bytes per second), as Click's.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/standard/rateewma.hh"
#include "shoal/elements/standard/tokenbucket.hh"  // (whole_bytes_per_sec)

namespace shoal {

template <bool kBytes>
class MeterT : public PacketElement<MeterT<kBytes>> {
 public:
  void configure(Args& a) override {
    for (ArgItem* it : a.rest_positional()) {
      uint64_t v = 0;
      if constexpr (kBytes) {
        Bandwidth bw;
        if (!parse_bandwidth(it->text, bw)) a.fail(*it, fmt::format("'{}' is not a bandwidth", it->text));
        v = whole_bytes_per_sec(bw);
      } else {
        if (!parse_uint(it->text, v)) a.fail(*it, fmt::format("'{}' is not a rate (packets per second)", it->text));
      }
      if (v > (UINT64_MAX >> RateEWMA::kScale)) a.fail(*it, "rate too large");
      if (!rates_.empty() && v <= rates_.back())
        a.fail(*it, fmt::format("rate {} must be greater than rate {}", rates_.size() + 1, rates_.size()));
      rates_.push_back(v);
      meters_.push_back(RateEWMA::scaled_threshold(v));
    }
    a.complete();
    if (rates_.empty()) a.fail("at least one rate is required");
  }
  void initialize() override {
    if (this->noutputs() != int(rates_.size()) + 1)
      throw std::runtime_error(
          fmt::format("{} rates need {} outputs, not {}", rates_.size(), rates_.size() + 1, this->noutputs()));
  }
  int process(Packet* p) {
    rate_.update(kBytes ? int64_t(p->length()) : 1, this->worker().now_ns());
    rate_.publish(pub_);
    const int64_t r = rate_.scaled_average();
    size_t i = 0;
    while (i < meters_.size() && r >= int64_t(meters_[i])) ++i;
    return int(i);
  }
  void add_handlers() override {
    this->add_read_handler("rate",
                           [this] { return fmt::format("{:.6g}", RateEWMA::per_second_at(pub_, monotonic_ns())); });
    this->add_read_handler("meters", [this] {
      std::string s;
      for (uint64_t r : rates_) s += fmt::format("{}{}", s.empty() ? "" : " ", r);
      return s;
    });
  }

 private:
  std::vector<uint64_t> rates_, meters_;
  RateEWMA rate_;
  RateEWMA::Published pub_;  // what the rate handler reads
};
using Meter = MeterT<false>;
using BandwidthMeter = MeterT<true>;

SHOAL_ELEMENT(Meter, .name = "Meter", .ports = "1/2-", .processing = "h/h",
              .summary = "sends the stream to the output of its current rate (packets per second)",
              .description =
                  "Click's Meter(RATE1, RATE2, ...): measures the arrival rate in packets per second as Click's "
                  "moving average (per 1 ms epoch, alpha 1/16) and sends each packet to output 0 while the rate is "
                  "below RATE1, to output 1 while it is below RATE2, and so on, to output N at RATEN or above: the "
                  "whole stream switches, it is not split (RatedSplitter splits). Rates must increase; N rates need "
                  "N+1 outputs. Each worker's copy measures the packets it sees.",
              .args = {{"RATE1, RATE2, ...", "unsigned", "rates in packets per second, increasing"}},
              .handlers = {{"rate", "r", "the measured rate (packets per second)"}, {"meters", "r", "the rates"}},
              .example = "src -> m :: Meter(10000) -> dst; m[1] -> Discard;  // drops the stream above 10,000 pps");
SHOAL_ELEMENT(BandwidthMeter, .name = "BandwidthMeter", .ports = "1/2-", .processing = "h/h",
              .summary = "sends the stream to the output of its current rate (bytes per second)",
              .description =
                  "Click's BandwidthMeter(RATE1, RATE2, ...): Meter measuring bytes per second. Rates are "
                  "bandwidths (\"1Mbps\", \"125kBps\"; a bare number is bytes per second).",
              .args = {{"RATE1, RATE2, ...", "bandwidth", "rates, increasing"}},
              .handlers = {{"rate", "r", "the measured rate (bytes per second)"}, {"meters", "r", "the rates"}},
              .example = "src -> m :: BandwidthMeter(10Mbps) -> dst; m[1] -> Discard;");

}  // namespace shoal
