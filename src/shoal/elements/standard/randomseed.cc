// RandomSeed: sets the seed of Click's random numbers (elements/clickrandom.hh).
#include <fmt/format.h>

#include <random>

#include "shoal/elements/clickrandom.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class RandomSeed : public Element {
 public:
  void configure(Args& a) override {
    int64_t seed = -1;
    a.read_p("SEED", seed);
    a.complete();
    if (seed > int64_t(UINT32_MAX)) a.fail("SEED must be below 2^32");
    given_ = seed >= 0, seed_ = uint32_t(seed);
  }
  void initialize() override { reseed(); }
  void add_handlers() override {
    add_read_handler("seed", [this] { return given_ ? std::to_string(seed_) : std::string(); });
    add_write_handler("seed", [this](const std::string& v) {
      std::string_view t = trim(v);
      if (t.empty()) {
        given_ = false;
      } else {
        uint64_t s;
        if (!parse_uint(t, s) || s > UINT32_MAX)
          throw std::runtime_error("expected an unsigned seed, or nothing for a truly random one");
        seed_ = uint32_t(s), given_ = true;
      }
      reseed();
    });
  }

 private:
  // Worker w's generator gets SEED + w (worker 0: SEED, as Click's one).
  void reseed() {
    uint32_t s = given_ ? seed_ : std::random_device{}();
    click_random_of(worker().runtime(), worker().id()).srandom(s + uint32_t(worker().id()));
  }
  uint32_t seed_ = 0;
  bool given_ = false;
};
SHOAL_ELEMENT(RandomSeed, .name = "RandomSeed", .ports = "0/0", .processing = "a/a",
              .summary = "sets the seed of the random numbers elements draw",
              .description =
                  "Click's RandomSeed: the generator that elements choosing at random draw from (the rewriters' "
                  "port and address ranges) is seeded with SEED, or with a truly random value without one. The "
                  "generator and the way a number is picked in a range are Click's (the C library's random() after "
                  "srandom(SEED), click_random), so a configuration draws what Click draws. Each worker has its own "
                  "generator, seeded SEED plus its number; without RandomSeed worker w's seed is 1 + w.",
              .args = {{"SEED", "unsigned", "the seed (default: a truly random one)"}},
              .handlers = {{"seed", "rw", "the seed; writing one reseeds (nothing: a truly random seed)"}},
              .example = "RandomSeed(1); rw :: UDPRewriter(pattern 1.0.0.2 1024-65534 - - 0 1, drop);");

}  // namespace shoal
