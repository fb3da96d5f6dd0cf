// Small standard elements: Discard, Counter, Null, Idle, Paint, CheckPaint,
// PaintSwitch, Strip, Unstrip, Switch, RoundRobinSwitch, SetTimestamp.
#include <fmt/format.h>

#include "shoal/elements/common.hh"

namespace shoal {

// ---------------------------------------------------------------- Discard
class Discard : public Element {
 public:
  void configure(Args& a) override {
    a.read("BURST", burst_).read("ACTIVE", active_);
    a.complete();
  }
  void initialize() override {
    r_ = add_drop_reason("discard");
    if (input_proc(0) == Proc::Pull) {
      add_task();
      set_task_active(active_);
      pt_.init(this, burst_);
    }
  }
  void push(int, PacketBatch* b) override {
    count_.add(b->live());
    drop_all(b, r_);
  }
  bool run_task() override {
    PacketBatch* b = pt_.pull();
    if (!b) return false;
    push(0, b);
    return true;
  }
  void wake_task() override {
    if (active_) set_task_active(true);
  }
  void add_handlers() override {
    add_stat_handler("count", count_);
    add_write_handler("reset_counts", [this](const std::string&) { count_.set(0); });
  }

 private:
  Stat count_;
  uint16_t r_ = 0;
  uint32_t burst_ = 32;
  bool active_ = true;
  PullTask pt_;
};
SHOAL_ELEMENT(Discard, .name = "Discard", .ports = "1/0", .processing = "a/",
              .summary = "drops every packet, counting them",
              .description =
                  "Frees every packet it receives; each is counted as a drop with reason 'discard'. "
                  "On a pull input it runs a task that pulls continuously.",
              .args = {{"BURST", "unsigned", "packets per pull in pull mode (default 32)"},
                       {"ACTIVE", "boolean", "pull when true (default true)"}},
              .handlers = {{"count", "r", "packets discarded"}, {"reset_counts", "w", "zero the count"}},
              .example = "FastUDPFlows(LIMIT 1000) -> Discard;");

// ---------------------------------------------------------------- Counter
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
              .example = "src -> c :: Counter -> Discard;  // read c.count");

// ---------------------------------------------------------------- Null
class Null : public PacketElement<Null> {
 public:
  void process(Packet*) {}
};
SHOAL_ELEMENT(Null, .name = "Null", .ports = "1/1", .processing = "a/a", .summary = "passes packets unchanged",
              .description = "Does nothing: a placeholder in a chain.", .args = {}, .handlers = {},
              .example = "src -> Null -> Discard;");

// ---------------------------------------------------------------- Idle
class Idle : public Element {
 public:
  void initialize() override { r_ = add_drop_reason("idle"); }
  void push(int, PacketBatch* b) override { drop_all(b, r_); }
  PacketBatch* pull(int, uint32_t) override { return nullptr; }
  Notifier* notifier() override {
    n_.sleep();
    return &n_;
  }

 private:
  uint16_t r_ = 0;
  Notifier n_;
};
SHOAL_ELEMENT(Idle, .name = "Idle", .ports = "-/-", .processing = "a/a", .summary = "never emits packets; drops input",
              .description =
                  "Has any number of ports. Never produces packets; packets pushed to it are dropped "
                  "(reason 'idle'). Useful to tie off unused ports.",
              .args = {}, .handlers = {}, .example = "c :: Classifier(12/0800, -); c[1] -> Idle;");

// ---------------------------------------------------------------- Paint
class Paint : public PacketElement<Paint> {
 public:
  void configure(Args& a) override {
    std::string anno = "PAINT";
    a.read_mp("COLOR", color_).read_p("ANNO", anno);
    a.complete();
    if (anno != "PAINT" && anno != "0") a.fail("ANNO: only the PAINT annotation is supported");
  }
  void process(Packet* p) { p->anno().paint = color_; }
  void add_handlers() override {
    add_read_handler("color", [this] { return std::to_string(color_); });
    add_write_handler("color", [this](const std::string& v) {
      uint64_t c;
      if (!parse_uint(trim(v), c) || c > 255) throw std::runtime_error("expected a color 0-255");
      color_ = uint8_t(c);
    });
  }

 private:
  uint8_t color_ = 0;
};
SHOAL_ELEMENT(Paint, .name = "Paint", .ports = "1/1", .processing = "a/a", .summary = "sets the paint annotation",
              .description = "Sets each packet's PAINT annotation to COLOR.",
              .args = {{"COLOR", "byte", "the color (0-255), mandatory"},
                       {"ANNO", "annotation", "PAINT (the only one)"}},
              .handlers = {{"color", "rw", "the color"}}, .example = "src -> Paint(2) -> PaintSwitch -> ...");

// ---------------------------------------------------------------- CheckPaint
class CheckPaint : public PacketElement<CheckPaint> {
 public:
  void configure(Args& a) override {
    a.read_mp("COLOR", color_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("wrong-paint"); }
  int process(Packet* p) {
    if (p->anno().paint == color_) return 0;
    return noutputs() > 1 ? 1 : drop_code(r_);
  }

 private:
  uint8_t color_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(CheckPaint, .name = "CheckPaint", .ports = "1/1-2", .processing = "a/ah",
              .summary = "checks the paint annotation",
              .description =
                  "Packets whose PAINT annotation equals COLOR leave on output 0; the others leave on "
                  "output 1 if it exists, else are dropped (reason 'wrong-paint').",
              .args = {{"COLOR", "byte", "the expected color, mandatory"}}, .handlers = {},
              .example = "in -> cp :: CheckPaint(1) -> out; cp[1] -> Discard;");

// ---------------------------------------------------------------- PaintSwitch
class PaintSwitch : public PacketElement<PaintSwitch> {
 public:
  void configure(Args& a) override {
    std::string anno = "PAINT";
    a.read_p("ANNO", anno);
    a.complete();
    if (anno != "PAINT" && anno != "0") a.fail("ANNO: only the PAINT annotation is supported");
  }
  int process(Packet* p) { return p->anno().paint; }
};
SHOAL_ELEMENT(PaintSwitch, .name = "PaintSwitch", .ports = "1/-", .processing = "h/h",
              .summary = "sends packets to the output named by their paint",
              .description =
                  "Each packet leaves on the output equal to its PAINT annotation; packets whose paint "
                  "has no output are dropped (reason 'no-such-output').",
              .args = {{"ANNO", "annotation", "PAINT (the only one)"}}, .handlers = {},
              .example = "ps :: PaintSwitch; ps[0] -> a; ps[1] -> b;");

// ---------------------------------------------------------------- Strip / Unstrip
class Strip : public PacketElement<Strip> {
 public:
  void configure(Args& a) override {
    a.read_mp("LENGTH", n_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("too-short"); }
  int process(Packet* p) {
    if (p->length() < n_) return drop_code(r_);
    p->pull(n_);
    return 0;
  }

 private:
  uint32_t n_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Strip, .name = "Strip", .ports = "1/1", .processing = "a/a",
              .summary = "removes bytes from the front of packets",
              .description =
                  "Removes LENGTH bytes from the front of each packet (the bytes stay in the headroom, "
                  "so Unstrip can restore them). Shorter packets are dropped (reason 'too-short').",
              .args = {{"LENGTH", "unsigned", "bytes to strip, mandatory"}}, .handlers = {},
              .example = "FromDump(f.pcap) -> Strip(14) -> CheckIPHeader -> ...");

class Unstrip : public PacketElement<Unstrip> {
 public:
  void configure(Args& a) override {
    a.read_mp("LENGTH", n_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("no-headroom"); }
  int process(Packet* p) { return p->push(n_) ? 0 : drop_code(r_); }

 private:
  uint32_t n_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Unstrip, .name = "Unstrip", .ports = "1/1", .processing = "a/a",
              .summary = "puts back bytes at the front of packets",
              .description =
                  "Extends each packet by LENGTH bytes at the front, exposing headroom (typically bytes "
                  "an earlier Strip removed). Packets without that headroom are dropped "
                  "(reason 'no-headroom').",
              .args = {{"LENGTH", "unsigned", "bytes to restore, mandatory"}}, .handlers = {},
              .example = "... -> Strip(14) -> x -> Unstrip(14) -> ToDump(out.pcap);");

// ---------------------------------------------------------------- Switch
class Switch : public PacketElement<Switch> {
 public:
  void configure(Args& a) override {
    a.read_p("OUTPUT", out_);
    a.complete();
  }
  void initialize() override {
    r_ = add_drop_reason("switched-off");
    if (out_ >= noutputs())
      throw std::runtime_error(fmt::format("OUTPUT {} out of range (0 to {})", out_, noutputs() - 1));
  }
  int process(Packet*) { return out_ < 0 ? drop_code(r_) : out_; }
  void add_handlers() override {
    add_read_handler("switch", [this] { return std::to_string(out_); });
    add_write_handler("switch", [this](const std::string& v) {
      int64_t o;
      if (!parse_int(trim(v), o) || o < -1 || o >= noutputs()) throw std::runtime_error("output out of range");
      out_ = int(o);
    });
  }

 private:
  int out_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(Switch, .name = "Switch", .ports = "1/-", .processing = "h/h",
              .summary = "sends all packets to one output, settable at run time",
              .description =
                  "Every packet leaves on output OUTPUT; -1 drops them (reason 'switched-off'). The "
                  "'switch' handler changes the output while running.",
              .args = {{"OUTPUT", "integer", "the output, or -1 (default 0)"}},
              .handlers = {{"switch", "rw", "the current output"}},
              .example = "s :: Switch(0); s[0] -> a; s[1] -> b;  // write s.switch 1");

// ---------------------------------------------------------------- RoundRobinSwitch
class RoundRobinSwitch : public PacketElement<RoundRobinSwitch> {
 public:
  int process(Packet*) {
    int o = next_;
    if (++next_ >= noutputs()) next_ = 0;
    return o;
  }

 private:
  int next_ = 0;
};
SHOAL_ELEMENT(RoundRobinSwitch, .name = "RoundRobinSwitch", .ports = "1/1-", .processing = "h/h",
              .summary = "sends packets to its outputs in turn",
              .description = "Packet i leaves on output i mod the number of outputs (per worker).", .args = {},
              .handlers = {}, .example = "rr :: RoundRobinSwitch; rr[0] -> q0; rr[1] -> q1;");

// ---------------------------------------------------------------- SetTimestamp
class SetTimestamp : public PacketElement<SetTimestamp> {
 public:
  void configure(Args& a) override {
    std::string t;
    a.read_p("TIMESTAMP", t);
    a.complete();
    if (!t.empty()) {
      if (!parse_timestamp(t, fixed_)) a.fail(fmt::format("TIMESTAMP expects SECONDS[.FRACTION], got '{}'", t));
      has_fixed_ = true;
    }
  }
  void process(Packet* p) { p->set_timestamp_ns(has_fixed_ ? fixed_ : realtime_ns()); }

 private:
  uint64_t fixed_ = 0;
  bool has_fixed_ = false;
};
SHOAL_ELEMENT(SetTimestamp, .name = "SetTimestamp", .ports = "1/1", .processing = "a/a",
              .summary = "sets the timestamp annotation",
              .description =
                  "Sets each packet's timestamp to the current wall-clock time, or to TIMESTAMP "
                  "(seconds since the epoch, fractional) when given.",
              .args = {{"TIMESTAMP", "real", "fixed timestamp in seconds"}}, .handlers = {},
              .example = "InfiniteSource(LIMIT 5) -> SetTimestamp -> ToDump(out.pcap);");

}  // namespace shoal

namespace shoal {

// ---------------------------------------------------------------- Truncate
class Truncate : public PacketElement<Truncate> {
 public:
  void configure(Args& a) override {
    a.read_mp("LENGTH", n_);
    a.complete();
  }
  void process(Packet* p) {
    if (p->length() > n_) {
      p->take(p->length() - n_);
      truncated_.add();
    }
  }
  void add_handlers() override { add_stat_handler("truncated", truncated_); }

 private:
  uint32_t n_ = 0;
  Stat truncated_;
};
SHOAL_ELEMENT(Truncate, .name = "Truncate", .ports = "1/1", .processing = "a/a",
              .summary = "limits packets to a length",
              .description =
                  "Shortens every packet longer than LENGTH bytes to LENGTH bytes (the tail is removed, "
                  "the buffer keeps it as tailroom).",
              .args = {{"LENGTH", "unsigned", "maximum length, mandatory"}},
              .handlers = {{"truncated", "r", "packets shortened"}},
              .example = "FromDump(in.pcap) -> Truncate(96) -> ToDump(headers.pcap);");

// ---------------------------------------------------------------- CheckLength
class CheckLength : public PacketElement<CheckLength> {
 public:
  void configure(Args& a) override {
    a.read_mp("LENGTH", n_);
    a.complete();
  }
  void initialize() override { r_ = add_drop_reason("too-long"); }
  int process(Packet* p) {
    if (p->length() <= n_) return 0;
    return noutputs() > 1 ? 1 : drop_code(r_);
  }

 private:
  uint32_t n_ = 0;
  uint16_t r_ = 0;
};
SHOAL_ELEMENT(
    CheckLength, .name = "CheckLength", .ports = "1/1-2", .processing = "a/ah",
    .summary = "splits off packets longer than a length",
    .description =
        "Packets of at most LENGTH bytes leave on output 0; longer ones on output 1 if it "
        "exists, else they are dropped ('too-long').",
    .args = {{"LENGTH", "unsigned", "the largest length for output 0"}},
    .example =
        "rt6[1] -> cl :: CheckLength(1500) -> out; cl[1] -> ICMP6Error(fd00::1, packettoobig, MTU 1500) -> rt6;");

}  // namespace shoal
