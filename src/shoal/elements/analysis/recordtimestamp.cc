// RecordTimestamp: FastClick's element that notes when each numbered packet
// passed, for TimestampDiff to work out its latency.
#include <fmt/format.h>

#include <mutex>

#include "shoal/elements/analysis/recordtimestamp.hh"
#include "shoal/elements/common.hh"

namespace shoal {

class RecordTimestamp : public PacketElement<RecordTimestamp> {
 public:
  void configure(Args& a) override {
    uint64_t n = 0;
    int64_t offset = -1;
    a.read("COUNTER", counter_).read("N", n).read("OFFSET", offset).read("DYNAMIC", dynamic_);
    a.read("NET_ORDER", net_order_).read("SAMPLE", sample_);
    a.complete();
    if (offset < -1 || offset > 65535) a.fail("OFFSET must be between 0 and 65535 (or -1: in arrival order)");
    if (sample_ == 0) a.fail("SAMPLE must be at least 1");
    if (n > latency::Slots::kMaxLimit) a.fail(fmt::format("N is at most {}", latency::Slots::kMaxLimit));
    offset_ = offset;
    n_ = n ? n : 65536;
  }
  void initialize() override {
    if (!counter_.empty()) {  // its NET_ORDER rules
      Element* c = find_element_from(*this, counter_);
      if (!c || c->class_name() != "NumberPacket")
        throw std::runtime_error(fmt::format("COUNTER '{}' is not a NumberPacket element", counter_));
      const Handler* h = c->find_handler("net_order");
      net_order_ = h && h->read && h->read() == "true";
    }
    bool first = false;
    rec_ = shared_state_named<latency::Recorded>(this, latency::recorded_key(name()), &first);
    if (first) {
      rec_->sample = sample_;
      rec_->times = std::make_unique<latency::Slots>(dynamic_ ? latency::Slots::kMaxLimit : n_, n_);
    }
  }
  void add_handlers() override {
    add_read_handler(
        "recorded", [this] { return std::to_string(rec_->recorded.load(std::memory_order_relaxed)); }, Agg::First,
        true);
    add_read_handler(
        "out_of_range", [this] { return std::to_string(rec_->out_of_range.load(std::memory_order_relaxed)); },
        Agg::First, true);
    add_read_handler("net_order", [this] { return net_order_ ? std::string("true") : std::string("false"); });
  }
  // One time for the batch (its packets pass together).
  void begin_batch(PacketBatch*) { now_ = monotonic_ns(); }
  int process(Packet* p) {
    uint64_t i;
    if (offset_ >= 0) {
      if (p->length() < uint64_t(offset_) + 8) return out_of_range();
      i = latency::read_number(p->data() + offset_, net_order_);
      if (sample_ > 1) {
        if (i % sample_) return 0;
        i /= sample_;
      }
    } else {
      i = rec_->next.fetch_add(1, std::memory_order_relaxed);
    }
    if (i >= rec_->times->limit()) return out_of_range();
    rec_->times->at(i, true)->store(now_ ? now_ : monotonic_ns(), std::memory_order_release);
    rec_->recorded.fetch_add(1, std::memory_order_relaxed);
    return 0;
  }
  bool finish_batch(PacketBatch*) {
    now_ = 0;
    return false;
  }

 private:
  int out_of_range() {
    rec_->out_of_range.fetch_add(1, std::memory_order_relaxed);
    return 0;  // (the packet goes on, untimed)
  }
  std::string counter_;
  uint64_t n_ = 65536, sample_ = 1;
  int64_t offset_ = -1;
  bool dynamic_ = false, net_order_ = false;
  uint64_t now_ = 0;
  std::shared_ptr<latency::Recorded> rec_;
};
SHOAL_ELEMENT(RecordTimestamp, .name = "RecordTimestamp", .ports = "1/1", .processing = "a/a",
              .summary = "notes when each numbered packet passes, for TimestampDiff",
              .description =
                  "FastClick's RecordTimestamp: notes the time (the monotonic clock, or simulated time under "
                  "--simtime) at which each packet passes, in slot i of a table for the packet numbered i: the "
                  "number NumberPacket wrote at OFFSET, or without OFFSET the packets in the order they arrive. With "
                  "SAMPLE s only packets whose number is a multiple of s are noted. The table has N slots (DYNAMIC: "
                  "it grows as needed, up to 2^32), is shared by every worker's copy, and is read by the "
                  "TimestampDiff elements that name this one as RECORDER. A packet whose number is beyond the table, "
                  "or too short to hold one, passes untimed and is counted (out_of_range), where FastClick stops.",
              .args = {{"N", "unsigned", "slots of the table (default 65536)"},
                       {"OFFSET", "integer", "where the packet's number is (default -1: numbered in arrival order)"},
                       {"COUNTER", "element", "a NumberPacket whose NET_ORDER this follows"},
                       {"DYNAMIC", "boolean", "let the table grow beyond N (default false)"},
                       {"NET_ORDER", "boolean", "the number is in network byte order (default false)"},
                       {"SAMPLE", "unsigned", "note one packet in SAMPLE (default 1)"}},
              .handlers = {{"recorded", "r", "times noted"},
                           {"out_of_range", "r", "packets not timed: numbered beyond the table, or too short"},
                           {"net_order", "r", "whether numbers are read in network order"}},
              .example =
                  "src -> NumberPacket(40) -> rt :: RecordTimestamp(OFFSET 40) -> graph -> td :: TimestampDiff(rt) -> "
                  "Discard;");

}  // namespace shoal
