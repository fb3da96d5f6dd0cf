// TokenBucketTest: Click's test element for its token bucket, run against
// Shoal's (elements/standard/tokenbucket.hh, the one RatedUnqueue,
// RatedSplitter and the bandwidth elements use): rates and capacities as
// assigned, refills by whole ticks, removal at the edges, the tick count
// until a token is there, unlimited and idle buckets. At initialization it
// prints "All tests pass!" or fails with the first check that did not hold.
#include <fmt/format.h>

#include <string>

#include "shoal/core/diag.hh"
#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"
#include "shoal/elements/standard/tokenbucket.hh"

namespace shoal {

class TokenBucketTest : public Element {
 public:
  void configure(Args& a) override {
    a.complete();
    loc_ = a.element_loc();
  }
  void initialize() override {
    std::string failed = run();
    if (!failed.empty()) throw std::runtime_error(failed);
    const bool click = worker().runtime().options().click_messages;
    if (click && loc_.valid())
      fmt::print(stderr, "{}:{}: While initializing '{} :: {}':\n  All tests pass!\n",
                 SourceManager::instance().name(loc_.file), loc_.line, name(), class_name());
    else
      fmt::print(stderr, "{} :: {}: All tests pass!\n", name(), class_name());
  }

 private:
  static std::string run() {
#define SHOAL_TB_CHECK(x) \
  if (!(x)) return fmt::format("test '{}' failed", #x)
    constexpr uint64_t kHz = 1000;  // ticks a second (Click's CLICK_HZ)
    TokenBucket tb;
    tb.assign(1024, 2048);
    SHOAL_TB_CHECK(tb.rate() >= 1022 && tb.rate() <= 1026);
    SHOAL_TB_CHECK(tb.capacity() >= 2046 && tb.capacity() <= 2050);
    tb.set_full();
    tb.refill_tick(0);
    SHOAL_TB_CHECK(tb.remove_if(1024));
    SHOAL_TB_CHECK(tb.remove_if(1024));
    SHOAL_TB_CHECK(!tb.remove_if(1024));
    tb.refill_tick(kHz * 99 / 100);
    SHOAL_TB_CHECK(!tb.remove_if(1024));
    tb.refill_tick(kHz);
    SHOAL_TB_CHECK(tb.remove_if(1024));
    SHOAL_TB_CHECK(!tb.remove_if(1024));

    TokenBucket tb2(uint64_t(1) << 30, 1);  // the capacity grows to a tick's tokens
    SHOAL_TB_CHECK(tb2.full());
    SHOAL_TB_CHECK(tb2.remove_if(1000));

    TokenBucket tb3(1, uint64_t(1) << 30);
    SHOAL_TB_CHECK(tb3.remove_if(2 * (uint64_t(UINT32_MAX) / kHz)));

    TokenBucket tb4(2, 1);  // the rate ends up very slightly under 2
    tb4.refill_tick(0);
    tb4.clear();
    tb4.refill_tick(tb4.ticks_until_contains(1));
    SHOAL_TB_CHECK(tb4.contains(1));

    tb4.refill_tick(0);
    tb4.clear();
    const uint64_t done_at = tb4.ticks_until_contains(1);
    for (uint64_t now = 0; now < done_at;) {
      SHOAL_TB_CHECK(now == done_at - 1 || !tb4.contains(1));
      SHOAL_TB_CHECK(tb4.ticks_until_contains(1) <= done_at - now);
      tb4.refill_tick(++now);
    }
    SHOAL_TB_CHECK(tb4.contains(1));

    tb4.assign(true);
    SHOAL_TB_CHECK(tb4.rate() == TokenBucket::max_tokens);
    SHOAL_TB_CHECK(tb4.capacity() == TokenBucket::max_tokens);

    for (int i = 0; i < 2; ++i) {
      tb4.assign(false);
      tb4.clear();
      tb4.refill_tick(done_at + 1000);
      SHOAL_TB_CHECK(tb4.rate() == 0);
      SHOAL_TB_CHECK(tb4.capacity() == TokenBucket::max_tokens);
      SHOAL_TB_CHECK(tb4.empty());
      tb4.assign(0, 1024);
      SHOAL_TB_CHECK(tb4.rate() == 0);
      SHOAL_TB_CHECK(tb4.capacity() == 1024);
    }
    return {};
#undef SHOAL_TB_CHECK
  }
  Loc loc_;
};
SHOAL_ELEMENT(TokenBucketTest, .name = "TokenBucketTest", .ports = "0/0", .processing = "a/a",
              .summary = "checks the token bucket of the rated elements (Click's test element)",
              .description =
                  "Runs Click's checks of its token bucket against Shoal's (the one RatedUnqueue, RatedSplitter "
                  "and the bandwidth elements use) when the configuration is initialized: rates and capacities "
                  "as assigned, refills by whole 1 ms ticks, removal at the edges, the ticks until a token is "
                  "there, unlimited and idle buckets. Prints 'All tests pass!' to standard error, or fails "
                  "initialization with the check that did not hold.",
              .args = {}, .handlers = {}, .example = "TokenBucketTest;");

}  // namespace shoal
