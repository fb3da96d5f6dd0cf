// CheckNumberPacket: FastClick's element that tallies the numbers
// NumberPacket wrote, to see which packets arrived and how often.
#include <fmt/format.h>

#include <charconv>
#include <climits>
#include <stdexcept>

#include "shoal/elements/analysis/latency.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class CheckNumberPacket : public PacketElement<CheckNumberPacket> {
 public:
  void configure(Args& a) override {
    int64_t offset = 40;
    uint64_t count = 0;
    a.read_p("OFFSET", offset).read_p("COUNT", count).read("NET_ORDER", net_order_);
    a.complete();
    if (offset < 0 || offset > 65535) a.fail("OFFSET must be between 0 and 65535");
    if (count > latency::Slots::kMaxLimit) a.fail(fmt::format("COUNT is at most {}", latency::Slots::kMaxLimit));
    offset_ = uint32_t(offset);
    count_ = count;
  }
  void initialize() override {
    bool first = false;
    st_ = shared_state<State>(this, &first);
    if (first) st_->count.store(count_, std::memory_order_relaxed);
    r_short_ = add_drop_reason("too-short");
    r_scope_ = add_drop_reason("out-of-scope");
  }
  void add_handlers() override {
    add_read_handler(
        "count", [this] { return std::to_string(st_->count.load(std::memory_order_relaxed)); }, Agg::First, true);
    add_write_handler("count", [this](const std::string& v) {
      uint64_t n = 0;
      auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
      if (ec != std::errc() || end != v.data() + v.size() || n > latency::Slots::kMaxLimit)
        throw std::runtime_error(fmt::format("count: '{}' is not a number up to {}", v, latency::Slots::kMaxLimit));
      st_->count.store(n, std::memory_order_relaxed);  // (the tallies below it stay)
    });
    // The number seen most (least) often, as FastClick writes it: "[number] : times".
    add_read_handler("max", [this] { return extreme(true); });
    add_read_handler("min", [this] { return extreme(false); });
    add_read_handler("dump", [this] {
      std::string s;
      const uint64_t n = st_->count.load(std::memory_order_relaxed);
      for (uint64_t i = 0; i < n; ++i) s += fmt::format("{}: {}\n", i, st_->seen.get(i));
      return s;
    });
  }
  int process(Packet* p) {
    if (p->length() < uint64_t(offset_) + 8) return noutputs() > 1 ? 1 : drop_code(r_short_);
    const uint64_t n = latency::read_number(p->data() + offset_, net_order_);
    if (n >= st_->count.load(std::memory_order_relaxed)) {
      if (!warned_)
        run_error(fmt::format("{} out of scope (count is {})", n, st_->count.load(std::memory_order_relaxed)), false);
      warned_ = true;
      return noutputs() > 1 ? 1 : drop_code(r_scope_);
    }
    st_->seen.at(n, true)->fetch_add(1, std::memory_order_relaxed);
    return 0;
  }

 private:
  struct State {
    std::atomic<uint64_t> count{0};
    latency::Slots seen{latency::Slots::kMaxLimit, 0};  // times each number was seen
  };
  std::string extreme(bool max) const {
    const uint64_t n = st_->count.load(std::memory_order_relaxed);
    int64_t at = -1;
    uint64_t best = max ? 0 : UINT64_MAX;
    for (uint64_t i = 0; i < n; ++i) {
      const uint64_t v = st_->seen.get(i);
      if (at < 0 || (max ? v > best : v < best)) at = int64_t(i), best = v;
    }
    return at < 0 ? "[-1] : " + std::string(max ? "-1" : std::to_string(INT_MAX)) : fmt::format("[{}] : {}", at, best);
  }
  uint32_t offset_ = 40;
  uint64_t count_ = 0;
  bool net_order_ = false, warned_ = false;
  std::shared_ptr<State> st_;
  uint16_t r_short_ = 0, r_scope_ = 0;
};
SHOAL_ELEMENT(CheckNumberPacket, .name = "CheckNumberPacket", .ports = "1/1-2", .processing = "a/ah",
              .summary = "tallies the numbers NumberPacket wrote into packets",
              .description =
                  "FastClick's CheckNumberPacket: reads the 64-bit number at OFFSET (as NumberPacket wrote it, in "
                  "network order with NET_ORDER) and counts how often each number below COUNT was seen; the packet "
                  "leaves on output 0. A packet too short to hold a number, or whose number is COUNT or more, leaves "
                  "on output 1 if there is one, else is dropped ('too-short', 'out-of-scope'; the first out-of-scope "
                  "number is also reported). The tallies are shared by every worker's copy.",
              .args = {{"OFFSET", "unsigned", "where the number is (default 40)"},
                       {"COUNT", "unsigned", "numbers 0 to COUNT-1 are tallied (default 0)"},
                       {"NET_ORDER", "boolean", "the number is in network byte order (default false)"}},
              .handlers = {{"count", "rw", "COUNT; written at run time, the tallies below it stay"},
                           {"max", "r", "the number seen most often and how often, as '[number] : times'"},
                           {"min", "r", "the number seen least often, the same way"},
                           {"dump", "r", "each number below COUNT and the times it was seen, a line each"}},
              .example = "src -> NumberPacket -> link -> c :: CheckNumberPacket(COUNT 1000) -> Discard;");

}  // namespace shoal
