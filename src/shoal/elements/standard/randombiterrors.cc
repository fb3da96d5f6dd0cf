// RandomBitErrors: Click's RandomBitErrors, each bit of each packet changed
// (flipped, set or cleared) with probability P.
#include <fmt/format.h>

#include <bit>
#include <cmath>
#include <vector>

#include "shoal/core/worker.hh"
#include "shoal/elements/clickrandom.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class RandomBitErrors : public PacketElement<RandomBitErrors> {
 public:
  RandomBitErrors() {
    for (int k = 0; k <= 8; ++k)
      for (int b = 0; b < 256; ++b)
        if (std::popcount(unsigned(b)) == k) masks_[k].push_back(uint8_t(b));
  }
  void configure(Args& a) override {
    std::string kind = "flip";
    a.read_mp("P", p_).read_p("KIND", kind).read_p("ACTIVE", on_);
    a.complete();
    if (!(p_ >= 0 && p_ <= 1)) a.fail("P must be between 0 and 1");
    if (!set_kind(kind)) a.fail(fmt::format("bad KIND '{}' (flip, set or clear)", kind));
    set_p(p_);
  }
  void initialize() override { rng_ = &click_random_of(worker().runtime(), worker().id()); }
  void process(Packet* p) {
    if (!on_ || p_ == 0) return;
    uint8_t* d = p->data();
    for (uint32_t i = 0, n = p->length(); i < n; ++i) {
      // How many of the byte's 8 bits change: binomial(8, P), from one
      // draw against the cumulative probabilities (28-bit, as Click's).
      uint32_t v = (rng_->random() >> 3) & 0xfffffff;
      if (v <= cum_[0]) continue;
      int nb = 1;
      while (nb < 8 && v > cum_[nb]) ++nb;
      const auto& m = masks_[nb];
      uint8_t bits = m[(rng_->random() >> 5) % m.size()];
      d[i] = kind_ == 0 ? uint8_t(d[i] & ~bits) : kind_ == 1 ? uint8_t(d[i] | bits) : uint8_t(d[i] ^ bits);
    }
  }
  void add_handlers() override {
    add_read_handler("p_bit_error", [this] { return fmt::format("{}", p_); });
    add_write_handler("p_bit_error", [this](const std::string& v) {
      double x;
      if (!parse_double(trim(v), x) || !(x >= 0 && x <= 1)) throw std::runtime_error("expected a probability 0 to 1");
      set_p(x);
    });
    add_read_handler("error_kind", [this] { return std::string(kKinds[kind_]); });
    add_write_handler("error_kind", [this](const std::string& v) {
      if (!set_kind(std::string(trim(v)))) throw std::runtime_error("expected flip, set or clear");
    });
    add_read_handler("active", [this] { return on_ ? "true" : "false"; });
    add_write_handler("active", [this](const std::string& v) {
      if (!parse_bool(trim(v), on_)) throw std::runtime_error("expected a boolean");
    });
  }

 private:
  static constexpr const char* kKinds[3] = {"clear", "set", "flip"};
  bool set_kind(const std::string& k) {
    for (int i = 0; i < 3; ++i)
      if (k == kKinds[i]) return kind_ = i, true;
    return k.empty() ? (kind_ = 2, true) : false;
  }
  void set_p(double p) {
    p_ = p;
    double c = 0;
    for (int k = 0; k <= 8; ++k) {  // P(at most k of 8 bits change)
      c += std::tgamma(9) / (std::tgamma(k + 1) * std::tgamma(9 - k)) * std::pow(p, k) * std::pow(1 - p, 8 - k);
      cum_[k] = uint32_t(std::min(c, 1.0) * 0xfffffff);
    }
    cum_[8] = 0xfffffff;
  }

  double p_ = 0;
  int kind_ = 2;
  bool on_ = true;
  uint32_t cum_[9] = {};
  std::vector<uint8_t> masks_[9];
  ClickRandom* rng_ = nullptr;
};
SHOAL_ELEMENT(RandomBitErrors, .name = "RandomBitErrors", .ports = "1/1", .processing = "a/a",
              .summary = "changes each bit of each packet with a probability",
              .description =
                  "Changes each bit of each packet's data with probability P: KIND flip (the default) flips it, "
                  "set sets it to 1, clear to 0. Only while active (ACTIVE, default true). Click's random "
                  "numbers (RandomSeed makes the errors repeatable).",
              .args = {{"P", "real", "the probability that a bit changes (0 to 1)"},
                       {"KIND", "keyword", "flip, set or clear (default flip)"},
                       {"ACTIVE", "boolean", "change bits (default true)"}},
              .handlers = {{"p_bit_error", "rw", "P"},
                           {"error_kind", "rw", "KIND"},
                           {"active", "rw", "whether bits are changed"}},
              .example = "... -> RandomBitErrors(0.001) -> CheckIPHeader -> ...  // a noisy link");

}  // namespace shoal
