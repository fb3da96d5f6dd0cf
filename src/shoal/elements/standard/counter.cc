// Counter: counts packets and bytes.
#include <fmt/format.h>

#include "shoal/core/runtime.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class Counter : public Element {
 public:
  void configure(Args& a) override {
    std::string call, bcall;
    a.read("COUNT_CALL", call).read("BYTE_COUNT_CALL", bcall);
    a.complete();
    auto parse = [&](const std::string& c, const char* kw, Call& out) {
      if (c.empty()) return;
      auto w = split_words(c);
      if (w.size() < 2 || !parse_uint(w[0], out.at) || out.at == 0)
        a.fail(fmt::format("{} expects 'N HANDLER [VALUE]'", kw));
      out.handler = std::string(w[1]);
      size_t v = c.find(w[1]) + w[1].size();
      out.value = std::string(trim(std::string_view(c).substr(v)));
    };
    parse(call, "COUNT_CALL", count_call_);
    parse(bcall, "BYTE_COUNT_CALL", byte_call_);
  }
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
  // Hot swap: the counts go on from the old configuration's.
  void hot_swapped(Element* old) override {
    auto* o = dynamic_cast<Counter*>(old);
    if (!o) return;
    count_.set(o->count_.get());
    bytes_.set(o->bytes_.get());
    first_.set(o->first_.get());
    last_.set(o->last_.get());
  }

 private:
  void account(PacketBatch* b) {
    uint64_t bytes = 0;
    b->for_each([&](uint32_t, Packet* p) { bytes += p->length(); });
    if (!first_.get()) first_.set(worker().now_ns());
    last_.set(worker().now_ns());
    uint64_t c0 = count_.get(), b0 = bytes_.get();
    count_.add(b->live());
    bytes_.add(bytes);
    // Click's COUNT_CALL / BYTE_COUNT_CALL: once, when the count reaches N.
    if (count_call_.at && c0 < count_call_.at && count_.get() >= count_call_.at) call(count_call_);
    if (byte_call_.at && b0 < byte_call_.at && bytes_.get() >= byte_call_.at) call(byte_call_);
  }
  struct Call {
    uint64_t at = 0;
    std::string handler, value;
  };
  void call(const Call& c) {
    std::string err;
    if (!worker().runtime().write_handler(c.handler, c.value, err, worker().id()))
      run_error(fmt::format("COUNT_CALL {}: {}", c.handler, err));
  }
  Call count_call_, byte_call_;
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
                  "averages from the first to the latest packet seen. Counts are summed over workers. "
                  "COUNT_CALL N HANDLER [VALUE] calls a write handler once, when the packet count reaches N "
                  "(BYTE_COUNT_CALL: the byte count), after the batch that reached it. A reload or hot swap carries "
                  "the counts to the new configuration's Counter of the same name.",
              .args = {{"COUNT_CALL", "N HANDLER [VALUE]", "call a write handler at N packets"},
                       {"BYTE_COUNT_CALL", "N HANDLER [VALUE]", "call a write handler at N bytes"}},
              .handlers = {{"count", "r", "packets"},
                           {"byte_count", "r", "bytes"},
                           {"rate", "r", "packets per second"},
                           {"byte_rate", "r", "bytes per second"},
                           {"bit_rate", "r", "bits per second"},
                           {"reset", "w", "zero the counters"},
                           {"reset_counts", "w", "same as reset"}},
              .example = "src -> c :: Counter -> Discard;  // read c.count", .forwards_all = true);

// FastClick's CounterMP: a Counter safe with several threads, which every
// Counter is here (each worker counts in its copy; reads sum them).
class CounterMP : public Counter {};
SHOAL_ELEMENT(CounterMP, .name = "CounterMP", .ports = "1/1", .processing = "a/a",
              .summary = "counts packets and bytes (Counter)",
              .description =
                  "FastClick's CounterMP, its per-thread counter: Shoal's Counter already counts per worker and sums "
                  "the workers' counts when read, so this is Counter (see Counter for arguments and handlers).",
              .args = {{"COUNT_CALL", "N HANDLER [VALUE]", "call a write handler at N packets"},
                       {"BYTE_COUNT_CALL", "N HANDLER [VALUE]", "call a write handler at N bytes"}},
              .handlers = {{"count", "r", "packets"},
                           {"byte_count", "r", "bytes"},
                           {"rate", "r", "packets per second"},
                           {"reset", "w", "zero the counters"}},
              .example = "src -> c :: CounterMP -> Discard;", .forwards_all = true);

}  // namespace shoal
