// TimestampDiff: FastClick's element that works out each numbered packet's
// latency from the time RecordTimestamp noted, and its statistics.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "shoal/elements/analysis/recordtimestamp.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class TimestampDiff : public PacketElement<TimestampDiff> {
 public:
  void configure(Args& a) override {
    int64_t offset = 40, tc_offset = -1;
    uint64_t n = 0;
    uint32_t tc_mask = 0xff;
    a.read_mp("RECORDER", recorder_).read("OFFSET", offset).read("N", n).read("MAXDELAY", max_delay_ms_);
    a.read("NANO", nano_).read("SAMPLE", sample_).read("VERBOSE", verbose_);
    a.read("TC_OFFSET", tc_offset).read("TC_MASK", tc_mask);
    a.complete();
    if (offset < 0 || offset > 65535) a.fail("OFFSET must be between 0 and 65535");
    if (tc_offset < -1 || tc_offset > 65535) a.fail("TC_OFFSET must be between 0 and 65535 (or -1: none)");
    if (tc_mask > 0xff) a.fail("TC_MASK is a byte");
    if (sample_ == 0) a.fail("SAMPLE must be at least 1");
    if (n > latency::Slots::kMaxLimit) a.fail(fmt::format("N is at most {}", latency::Slots::kMaxLimit));
    offset_ = uint32_t(offset);
    tc_offset_ = tc_offset;
    tc_mask_ = uint8_t(tc_mask);
    n_ = n;
  }
  void initialize() override {
    Element* r = find_element_from(*this, recorder_);
    if (!r || r->class_name() != "RecordTimestamp")
      throw std::runtime_error(fmt::format("RECORDER '{}' is not a RecordTimestamp element", recorder_));
    const Handler* h = r->find_handler("net_order");  // the recorder's (and its counter's) byte order
    net_order_ = h && h->read && h->read() == "true";
    rec_ = shared_state_named<latency::Recorded>(this, latency::recorded_key(r->name()));
    bool first = false;
    st_ = shared_state<State>(this, &first);
    if (first) st_->delays = std::make_unique<latency::Slots>(n_ ? n_ : latency::Slots::kMaxLimit, n_);
    r_untimed_ = add_drop_reason("no-timestamp");
  }
  void add_handlers() override {
    auto stat = [this](const char* name, auto f) {
      add_read_param_handler(name, [f](const std::string& arg) { return f(arg); });
    };
    stat("average", [this](const std::string& arg) { return number(summary(arg).mean); });
    stat("avg", [this](const std::string& arg) { return number(summary(arg).mean); });
    stat("avg_tc", [this](const std::string& arg) {  // "TC [BEGIN]"
      std::string rest;
      const std::string w = first_word(arg, rest);
      char* end = nullptr;
      const long tc = std::strtol(w.c_str(), &end, 10);
      if (w.empty()) return number(summary("").mean);  // (no class: every packet, as FastClick)
      if (*end || tc < 0 || tc > 255) throw std::runtime_error(fmt::format("avg_tc: '{}' is not a class (0-255)", w));
      return number(summary(rest, int(tc)).mean);
    });
    stat("min", [this](const std::string& arg) { return number(summary(arg).min); });
    stat("max", [this](const std::string& arg) { return number(summary(arg).max); });
    stat("stddev", [this](const std::string& arg) { return number(summary(arg).stddev); });
    static constexpr std::pair<const char*, double> kPercentiles[] = {
        {"perc00", 0},  {"perc01", 1},  {"perc05", 5},  {"perc10", 10}, {"perc25", 25},  {"median", 50},
        {"perc75", 75}, {"perc90", 90}, {"perc95", 95}, {"perc99", 99}, {"perc100", 100}};
    for (const auto& [name, percent] : kPercentiles)
      stat(name, [this, pc = percent](const std::string& arg) { return number(percentile(pc, arg)); });
    stat("perc", [this](const std::string& arg) {  // "P [BEGIN]"
      std::string rest;
      const std::string p = first_word(arg, rest);
      char* end = nullptr;
      const double pc = std::strtod(p.c_str(), &end);
      if (p.empty() || *end || pc < 0 || pc > 100)
        throw std::runtime_error(fmt::format("perc: '{}' is not a percentile (0 to 100)", p));
      return number(percentile(pc, rest));
    });
    add_read_handler("index", [this] {
      return std::to_string(int64_t(std::min(st_->n.load(std::memory_order_relaxed), st_->delays->limit())) - 1);
    });
    add_read_handler("last", [this] {
      const uint64_t n = std::min(st_->n.load(std::memory_order_relaxed), st_->delays->limit());
      return std::to_string(n ? uint32_t(st_->delays->get(n - 1)) : 0u);
    });
    add_read_handler("dump", [this] { return dump(true); });
    add_read_handler("dump_list", [this] { return dump(false); });
    add_read_handler(
        "timed", [this] { return std::to_string(st_->n.load(std::memory_order_relaxed)); }, Agg::First, true);
    add_read_handler(
        "too_late", [this] { return std::to_string(st_->too_late.load(std::memory_order_relaxed)); }, Agg::First, true);
    add_read_handler(
        "not_kept", [this] { return std::to_string(st_->not_kept.load(std::memory_order_relaxed)); }, Agg::First, true);
  }

  void begin_batch(PacketBatch*) { now_ = monotonic_ns(); }
  bool finish_batch(PacketBatch*) {
    now_ = 0;
    return false;
  }
  int process(Packet* p) {
    if (p->length() < uint64_t(offset_) + 8) return untimed();
    const uint64_t i = latency::read_number(p->data() + offset_, net_order_);
    if (sample_ > 1 && i % sample_) return 0;
    const uint64_t then = rec_->take(i);
    if (!then) return untimed();
    const uint64_t now = now_ ? now_ : monotonic_ns();
    const uint64_t ns = now > then ? now - then : 0, delay = nano_ ? ns : ns / 1000;
    if (ns >= uint64_t(max_delay_ms_) * 1000000u) {
      st_->too_late.fetch_add(1, std::memory_order_relaxed);
      if (verbose_)
        run_error(fmt::format("packet {} took {} ms, more than {} ms", i, ns / 1000000, max_delay_ms_), false);
      return 0;
    }
    const uint64_t at = st_->n.fetch_add(1, std::memory_order_relaxed);
    if (at >= st_->delays->limit()) {  // N delays kept already
      st_->not_kept.fetch_add(1, std::memory_order_relaxed);
      return 0;
    }
    const uint8_t tc = tc_offset_ >= 0 && uint64_t(tc_offset_) < p->length() ? p->data()[tc_offset_] & tc_mask_ : 0;
    const uint64_t v = kKept | uint64_t(tc) << 32 | std::min<uint64_t>(delay, UINT32_MAX);
    st_->delays->at(at, true)->store(v, std::memory_order_release);
    return 0;
  }

 private:
  static constexpr uint64_t kKept = uint64_t(1) << 40;  // a slot written (delay: the low 32 bits, tc: the next 8)
  struct State {
    std::unique_ptr<latency::Slots> delays;
    std::atomic<uint64_t> n{0}, too_late{0}, not_kept{0};
  };
  struct Summary {
    double min = 0, max = 0, mean = 0, stddev = 0;
  };
  int untimed() { return noutputs() > 1 ? 1 : drop_code(r_untimed_); }
  static std::string first_word(const std::string& s, std::string& rest) {
    const size_t b = s.find_first_not_of(" \t"), e = s.find_first_of(" \t", b == std::string::npos ? s.size() : b);
    if (b == std::string::npos) return rest = "", "";
    rest = e == std::string::npos ? "" : s.substr(e);
    return s.substr(b, e == std::string::npos ? std::string::npos : e - b);
  }
  // The delays kept from index BEGIN (the handler's parameter, default 0)
  // on, of traffic class tc (-1: any).
  std::vector<uint32_t> delays(const std::string& begin_arg, int tc = -1) const {
    const uint64_t n = std::min(st_->n.load(std::memory_order_relaxed), st_->delays->limit());
    const uint64_t begin = std::strtoull(begin_arg.c_str(), nullptr, 10);
    std::vector<uint32_t> d;
    for (uint64_t i = begin; i < n; ++i) {
      const uint64_t v = st_->delays->get(i);
      if (!(v & kKept) || (tc >= 0 && int((v >> 32) & 0xff) != tc)) continue;  // (one still being written: left out)
      d.push_back(uint32_t(v));
    }
    return d;
  }
  Summary summary(const std::string& arg, int tc = -1) const {
    const std::vector<uint32_t> d = delays(arg, tc);
    Summary s;
    if (d.empty()) return s;
    double sum = 0, sq = 0;
    s.min = *std::min_element(d.begin(), d.end());
    s.max = *std::max_element(d.begin(), d.end());
    for (uint32_t x : d) sum += x;
    s.mean = sum / double(d.size());
    for (uint32_t x : d) sq += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(sq / double(d.size()));
    return s;
  }
  // FastClick's: the element at index pc% of the way through the delays
  // from BEGIN (the least at 0%, the greatest at 100%).
  double percentile(double pc, const std::string& arg) const {
    std::vector<uint32_t> d = delays(arg);
    if (d.empty()) return 0;
    const size_t idx = size_t(pc * double(d.size()) / 100);
    if (idx == 0) return *std::min_element(d.begin(), d.end());
    if (idx >= d.size()) return *std::max_element(d.begin(), d.end());
    std::nth_element(d.begin(), d.begin() + ptrdiff_t(idx), d.end());
    return d[idx];
  }
  std::string dump(bool numbered) const {
    const std::vector<uint32_t> d = delays("");
    std::string s;
    for (size_t i = 0; i < d.size(); ++i) s += numbered ? fmt::format("{}: {}\n", i, d[i]) : fmt::format("{}\n", d[i]);
    return s;
  }
  // As FastClick prints a double (%.12g).
  static std::string number(double x) { return fmt::format("{:.12g}", x); }
  std::string recorder_;
  uint32_t offset_ = 40, max_delay_ms_ = 1000;
  uint64_t n_ = 0, sample_ = 1;
  int64_t tc_offset_ = -1;
  uint8_t tc_mask_ = 0xff;
  bool nano_ = false, verbose_ = false, net_order_ = false;
  uint64_t now_ = 0;
  std::shared_ptr<latency::Recorded> rec_;
  std::shared_ptr<State> st_;
  uint16_t r_untimed_ = 0;
};
SHOAL_ELEMENT(
    TimestampDiff, .name = "TimestampDiff", .ports = "1/1-2", .processing = "a/ah",
    .summary = "each numbered packet's latency since RecordTimestamp, and its statistics",
    .description =
        "FastClick's TimestampDiff: reads the number at OFFSET (as NumberPacket wrote it, in the byte order "
        "of the RECORDER and its COUNTER), takes the time the RECORDER (a RecordTimestamp) noted for that "
        "number, and keeps the difference to now in microseconds (nanoseconds with NANO). A delay of MAXDELAY "
        "ms or more is not kept but counted (too_late; reported with VERBOSE). Packets leave on output 0; one "
        "without a noted time (never noted, noted beyond the table, already read, or too short to hold a "
        "number) leaves on output 1 if there is one, else is dropped ('no-timestamp'). With SAMPLE s only "
        "packets whose number is a multiple of s are timed. N keeps at most N delays (0: as many as come, "
        "up to 2^32); delays are shared by every worker's copy. TC_OFFSET and TC_MASK take a traffic class "
        "byte from each packet, for avg_tc.\n\n"
        "The statistics handlers take an optional parameter, the index of the first delay to count (to leave "
        "a warm-up out); perc takes the percentile first, avg_tc the class. Percentiles are FastClick's: the "
        "delay at index P% of the way through, sorted. stddev is the population standard deviation (FastClick "
        "computes it about 0 by mistake).",
    .args = {{"RECORDER", "element", "the RecordTimestamp that noted the times (mandatory)"},
             {"OFFSET", "unsigned", "where the packet's number is (default 40)"},
             {"N", "unsigned", "delays kept at most (default 0: no bound but 2^32)"},
             {"MAXDELAY", "unsigned", "milliseconds from which a delay is not kept (default 1000)"},
             {"NANO", "boolean", "delays in nanoseconds (default false: microseconds)"},
             {"SAMPLE", "unsigned", "time one packet in SAMPLE (default 1)"},
             {"VERBOSE", "boolean", "report delays of MAXDELAY or more (default false)"},
             {"TC_OFFSET", "integer", "where a traffic class byte is (default -1: none)"},
             {"TC_MASK", "byte", "the bits of that byte that are the class (default 0xff)"}},
    .handlers = {{"average", "r", "mean delay ([BEGIN]); also 'avg'"},
                 {"avg_tc", "r", "mean delay of a traffic class (TC [BEGIN])"},
                 {"min", "r", "least delay"},
                 {"max", "r", "greatest delay"},
                 {"stddev", "r", "standard deviation of the delays"},
                 {"median", "r", "the 50th percentile"},
                 {"perc00", "r", "percentiles 0, 1, 5, 10, 25, 75, 90, 95, 99, 100: perc00 ... perc100"},
                 {"perc", "r", "any percentile (P [BEGIN])"},
                 {"index", "r", "the index of the last delay kept (-1: none)"},
                 {"last", "r", "the last delay kept"},
                 {"dump", "r", "every delay kept, 'index: delay' a line"},
                 {"dump_list", "r", "every delay kept, one a line"},
                 {"timed", "r", "delays under MAXDELAY worked out (kept or not)"},
                 {"too_late", "r", "delays of MAXDELAY or more, not kept"},
                 {"not_kept", "r", "delays not kept because N were kept already"}},
    .example =
        "src -> NumberPacket(40) -> rt :: RecordTimestamp(OFFSET 40) -> Queue -> DelayUnqueue(1ms) -> "
        "td :: TimestampDiff(rt) -> Discard;  // then read td.perc99");

}  // namespace shoal
