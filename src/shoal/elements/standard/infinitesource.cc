// InfiniteSource and RatedSource: one packet's bytes, repeated.
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "shoal/core/runtime.hh"
#include "shoal/core/worker.hh"
#include "shoal/elements/common.hh"
#include "shoal/kernels/flowhash.hh"

namespace shoal {

namespace {
const char kDefaultData[] = "Random bullshit in a packet, at least 64 bytes long. Well, now it is.";
}

// Common to both: the packet template and its owner worker. All copies of the
// packet belong to one flow, so one worker emits them (traffic is spread by
// flow hash); the other workers' copies stay idle.
class TemplateSource : public SourceElement {
 protected:
  void read_template(Args& a) {
    DataString d;
    d.bytes = kDefaultData;
    int64_t length = -1;
    a.read_p("DATA", d).read("LENGTH", length).read("DATASIZE", length);
    data_ = d.bytes;
    if (length >= 0) data_.resize(size_t(length), '\0');
  }
  void initialize() override {
    // Its worker: StaticThreadSched's choice, else Click's thread 0 under
    // `shoal click`, else the one its flow hashes to.
    if (!home_thread_set() && !worker().runtime().options().click_placement) {
      uint32_t h = k::flow_hash(reinterpret_cast<const uint8_t*>(data_.data()), uint32_t(data_.size()));
      set_home_thread(int(h % uint32_t(worker().nworkers())));
    }
    if (!on_home_thread()) limit_ = 0, end_call_owner_ = false;
    SourceElement::initialize();
  }
  void add_handlers() override {
    SourceElement::add_handlers();
    add_read_handler("length", [this] { return std::to_string(data_.size()); });
    add_write_handler("length", [this](const std::string& v) {
      uint64_t n;
      if (!parse_uint(trim(v), n) || n > 65535) throw std::runtime_error("expected a length up to 65535");
      data_.resize(size_t(n), '\0');
    });
    add_write_handler("data", [this](const std::string& v) {
      DataString d;
      if (!parse_data(trim(v), d)) throw std::runtime_error("expected a data string");
      data_ = d.bytes;
    });
  }
  uint32_t make(PacketBatch* b, uint32_t n) {
    uint64_t ts = 0;
    uint32_t made = 0;
    for (; made < n; ++made) {
      Packet* p = worker().pool().make(reinterpret_cast<const uint8_t*>(data_.data()), uint32_t(data_.size()));
      if (!p) break;  // pool exhausted: emit later (back-pressure)
      p->set_timestamp_ns(ts);
      b->append(p);
    }
    return made;
  }
  std::string data_;
};

class InfiniteSource : public TemplateSource {
 public:
  void configure(Args& a) override {
    read_template(a);
    a.read_p("LIMIT", limit_).read_p("BURST", burst_).read_p("ACTIVE", active_);  // Click's positional order
    read_source_args(a, 1);
    a.complete();
  }
  uint32_t produce(PacketBatch* b, uint32_t max, bool&) override { return make(b, max); }
};
SHOAL_ELEMENT(InfiniteSource, .name = "InfiniteSource", .ports = "0/1", .processing = "a/a",
              .summary = "generates copies of one packet as fast as it can",
              .description =
                  "Emits copies of DATA, BURST packets per task run (push) or per pull, until LIMIT "
                  "packets (all workers together, since one flow goes to one worker). With STOP true the "
                  "router stops when the limit is reached. When the packet pool is empty it waits.",
              .args = {{"DATA", "data string", "packet contents (Click's default text if absent)"},
                       {"LENGTH", "unsigned", "pad or cut DATA to this length (also DATASIZE)"},
                       {"LIMIT", "integer", "packets to emit; -1 (default) for no limit"},
                       {"BURST", "unsigned", "packets per task run (default 1, as in Click)"},
                       {"ACTIVE", "boolean", "emit when true (default true)"},
                       {"STOP", "boolean", "stop the router at LIMIT (default false)"},
                       {"END_CALL", "handler call", "call a write handler ('elem.handler VALUE') at LIMIT"}},
              .handlers = {{"count", "r", "packets emitted"},
                           {"active", "rw", "emitting or paused"},
                           {"reset", "w", "zero the count and resume"},
                           {"limit", "r", "the limit"},
                           {"length", "rw", "the packet length (DATA cut or zero-padded)"},
                           {"data", "w", "new packet contents"}},
              .example = "InfiniteSource(LENGTH 64, LIMIT 1000, BURST 32, STOP true) -> Counter -> Discard;");

class RatedSource : public TemplateSource {
 public:
  void configure(Args& a) override {
    read_template(a);
    a.read_p("RATE", rate_);
    int64_t lim = -1;
    a.read_p("LIMIT", lim);
    read_source_args(a, 32);
    if (lim >= 0 && limit_ < 0) limit_ = lim;
    a.complete();
    if (rate_ <= 0) a.fail("RATE must be positive");
  }
  bool rate_limited() const override { return true; }
  uint32_t produce(PacketBatch* b, uint32_t max, bool&) override {
    uint64_t now = worker().now_ns();
    if (!start_) start_ = now;
    // Packets due by now at RATE, minus those already made.
    uint64_t due = uint64_t(double(now - start_) * rate_ / 1e9) + 1;
    uint64_t have = emitted_.get();
    if (due <= have) {
      // Sleep until the next one is due (simulated time jumps there).
      sleep_until(start_ + uint64_t(std::ceil(double(have) * 1e9 / rate_)));
      return 0;
    }
    return make(b, uint32_t(std::min<uint64_t>(max, due - have)));
  }

 private:
  double rate_ = 10;
  uint64_t start_ = 0;
};
SHOAL_ELEMENT(RatedSource, .name = "RatedSource", .ports = "0/1", .processing = "a/a",
              .summary = "generates copies of one packet at a fixed rate",
              .description = "Like InfiniteSource, but emits RATE packets per second (evenly, by the worker clock).",
              .args = {{"DATA", "data string", "packet contents"},
                       {"RATE", "real", "packets per second (default 10)"},
                       {"LIMIT", "integer", "packets to emit; -1 (default) for no limit"},
                       {"LENGTH", "unsigned", "pad or cut DATA to this length (also DATASIZE)"},
                       {"BURST", "unsigned", "packets per task run (default 1, as in Click)"},
                       {"ACTIVE", "boolean", "emit when true"},
                       {"STOP", "boolean", "stop the router at LIMIT"},
                       {"END_CALL", "handler call", "call a write handler ('elem.handler VALUE') when done"}},
              .handlers = {{"count", "r", "packets emitted"}, {"active", "rw", "emitting or paused"}},
              .example = "RatedSource(RATE 1000, LIMIT 5000, STOP true) -> Queue -> ...");

}  // namespace shoal
