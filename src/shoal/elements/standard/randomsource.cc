// RandomSource: packets of random bytes, as Click's.
#include "shoal/core/runtime.hh"
#include "shoal/core/worker.hh"
#include "shoal/elements/clickrandom.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class RandomSource : public SourceElement {
 public:
  void configure(Args& a) override {
    a.read_mp("LENGTH", length_).read_p("LIMIT", limit_).read_p("BURST", burst_).read_p("ACTIVE", active_);
    a.read("TIMESTAMP", timestamp_);
    read_source_args(a, 1);
    a.complete();
    if (length_ > 65535) a.fail("LENGTH must be at most 65535");
  }
  void initialize() override {
    // One stream: worker 0's (or StaticThreadSched's choice); the other
    // workers' copies stay idle.
    if (!on_home_thread()) limit_ = 0, end_call_owner_ = false;
    rng_ = &click_random_of(worker().runtime(), worker().id());
    SourceElement::initialize();
  }
  uint32_t produce(PacketBatch* b, uint32_t max, bool&) override {
    uint32_t made = 0;
    for (; made < max; ++made) {
      Packet* p = worker().pool().alloc(length_);
      if (!p) break;  // the pool is empty: later (back-pressure)
      p->set_length(length_);
      // Click's bytes: a random() word at a time, in this CPU's byte order
      uint8_t* d = p->data();
      for (uint32_t i = 0; i < length_; i += 4) {
        const uint32_t r = rng_->random();
        for (uint32_t k = 0; k < 4 && i + k < length_; ++k) d[i + k] = uint8_t(r >> (8 * k));
      }
      if (timestamp_) p->set_timestamp_ns(realtime_ns());
      b->append(p);
    }
    return made;
  }

 private:
  uint32_t length_ = 0;
  bool timestamp_ = true;
  ClickRandom* rng_ = nullptr;
};
SHOAL_ELEMENT(RandomSource, .name = "RandomSource", .ports = "0/1", .processing = "a/a",
              .summary = "generates packets of random bytes",
              .description =
                  "Click's RandomSource: packets of LENGTH bytes filled with Click's random numbers (one 31-bit word "
                  "per 4 bytes, as Click fills them; RandomSeed makes them repeatable), BURST per task run or pull, "
                  "until LIMIT. Timestamps are the current time unless TIMESTAMP is false. One worker emits (worker 0, "
                  "or StaticThreadSched's choice).",
              .args = {{"LENGTH", "unsigned", "the packets' length, mandatory"},
                       {"LIMIT", "integer", "packets to emit; -1 (default) for no limit"},
                       {"BURST", "unsigned", "packets per task run (default 1, as in Click)"},
                       {"ACTIVE", "boolean", "emit when true (default true)"},
                       {"STOP", "boolean", "stop the router at LIMIT (default false)"},
                       {"END_CALL", "handler call", "call a write handler at LIMIT"},
                       {"TIMESTAMP", "boolean", "set the timestamp annotation (default true)"}},
              .handlers = {{"count", "r", "packets emitted"}, {"active", "rw", "emitting or paused"}},
              .example = "RandomSeed(1); RandomSource(64, LIMIT 100, STOP true) -> Queue -> ...;");

}  // namespace shoal
