// Counter: counts packets and bytes.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

class Counter : public Element {
 public:
  void initialize() override {}
  void push(int, PacketBatch* b) override {
    account(b);
    output_push(0, b);
  }
  PacketBatch* pull(int, uint32_t max) override {
    PacketBatch* b = input_pull(0, max);
    if (b) account(b);
    return b;
  }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_stat_handler("byte_count", bytes_);
    add_read_handler(
        "rate", [this] { return fmt::format("{:.6g}", rate(count_.get())); }, Agg::Sum, true);
    add_read_handler(
        "byte_rate", [this] { return fmt::format("{:.6g}", rate(bytes_.get())); }, Agg::Sum, true);
    add_read_handler(
        "bit_rate", [this] { return fmt::format("{:.6g}", 8 * rate(bytes_.get())); }, Agg::Sum, true);
    auto reset = [this](const std::string&) {
      count_.set(0);
      bytes_.set(0);
      first_.set(0);
      last_.set(0);
    };
    add_write_handler("reset", reset);
    add_write_handler("reset_counts", reset);
  }

 private:
  void account(PacketBatch* b) {
    uint64_t bytes = 0;
    b->for_each([&](uint32_t, Packet* p) { bytes += p->length(); });
    if (!first_.get()) first_.set(worker().now_ns());
    last_.set(worker().now_ns());
    count_.add(b->live());
    bytes_.add(bytes);
  }
  // Average over the interval from the first to the latest batch seen.
  double rate(uint64_t n) const {
    uint64_t f = first_.get(), l = last_.get();
    return l > f ? double(n) * 1e9 / double(l - f) : 0.0;
  }
  Stat count_, bytes_, first_, last_;
};
SHOAL_ELEMENT(Counter, .name = "Counter", .ports = "1/1", .processing = "a/a", .summary = "counts packets and bytes",
              .description =
                  "Passes packets through unchanged, counting packets and bytes per batch. Rates are "
                  "averages from the first to the latest packet seen. Counts are summed over workers.",
              .args = {},
              .handlers = {{"count", "r", "packets"},
                           {"byte_count", "r", "bytes"},
                           {"rate", "r", "packets per second"},
                           {"byte_rate", "r", "bytes per second"},
                           {"bit_rate", "r", "bits per second"},
                           {"reset", "w", "zero the counters"},
                           {"reset_counts", "w", "same as reset"}},
              .example = "src -> c :: Counter -> Discard;  // read c.count", .forwards_all = true);

}  // namespace shoal
