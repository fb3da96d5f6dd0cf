// RandomSample: passes each packet with probability P.
#include <fmt/format.h>

#include <random>

#include "shoal/elements/common.hh"

namespace shoal {

class RandomSample : public PacketElement<RandomSample> {
 public:
  void configure(Args& a) override {
    double p = -1, drop = -1;
    a.read_p("P", p).read("SAMPLE", p).read("DROP", drop).read("ACTIVE", active_).read("SEED", seed_);
    a.complete();
    if ((p < 0) == (drop < 0)) a.fail("give one of P (SAMPLE) and DROP");
    if (drop >= 0) p = 1 - drop;
    if (p < 0 || p > 1) a.fail("the probability must be between 0 and 1");
    set(p);
  }
  void initialize() override {
    r_ = add_drop_reason("not-sampled");
    rng_.seed(uint32_t(seed_ + uint64_t(worker().id()) * 0x9e3779b9u + uint64_t(index())));
  }
  int process(Packet*) {
    if (!active_ || threshold_ == UINT32_MAX || uint32_t(rng_()) < threshold_) return 0;
    return noutputs() > 1 ? 1 : drop_code(r_);
  }
  void add_handlers() override {
    add_read_handler("sampling_prob", [this] { return fmt::format("{:.6g}", p_); });
    add_write_handler("sampling_prob", [this](const std::string& v) { set(prob(v)); });
    add_read_handler("drop_prob", [this] { return fmt::format("{:.6g}", 1 - p_); });
    add_write_handler("drop_prob", [this](const std::string& v) { set(1 - prob(v)); });
    add_read_handler("active", [this] { return std::string(active_ ? "true" : "false"); });
    add_write_handler("active", [this](const std::string& v) {
      if (!parse_bool(trim(v), active_)) throw std::runtime_error("expected true or false");
    });
  }

 private:
  static double prob(const std::string& v) {
    double p;
    if (!parse_double(trim(v), p) || p < 0 || p > 1) throw std::runtime_error("expected a probability (0 to 1)");
    return p;
  }
  void set(double p) {
    p_ = p;
    threshold_ = p >= 1 ? UINT32_MAX : uint32_t(p * 4294967296.0);
  }
  double p_ = 1;
  uint32_t threshold_ = UINT32_MAX;  // a packet passes when a 32-bit draw is below it
  uint64_t seed_ = 1;
  bool active_ = true;
  uint16_t r_ = 0;
  std::mt19937 rng_;
};
SHOAL_ELEMENT(RandomSample, .name = "RandomSample", .ports = "1/1-2", .processing = "a/ah",
              .summary = "passes each packet with a given probability",
              .description =
                  "Click's RandomSample: each packet leaves on output 0 with probability P (or is dropped "
                  "with probability DROP); the others leave on output 1, or are dropped ('not-sampled') when "
                  "it is not connected. While ACTIVE is false every packet passes. Each worker draws from its "
                  "own generator, seeded from SEED, so runs repeat.",
              .args = {{"P", "real", "probability of passing (also SAMPLE)"},
                       {"SAMPLE", "real", "the same as P"},
                       {"DROP", "real", "probability of not passing (instead of P)"},
                       {"ACTIVE", "boolean", "sample when true (default true)"},
                       {"SEED", "unsigned", "random seed (default 1)"}},
              .handlers = {{"sampling_prob", "rw", "P"}, {"drop_prob", "rw", "1 - P"}, {"active", "rw", "ACTIVE"}},
              .example = "src -> RandomSample(0.01) -> ToDump(sample.pcap);");

}  // namespace shoal
