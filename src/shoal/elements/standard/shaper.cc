// Shaper and BandwidthShaper: pull elements that let at most RATE packets
// (or bytes) per second through, as Click's.
#include <fmt/format.h>

#include "shoal/elements/common.hh"
#include "shoal/elements/standard/gaprate.hh"
#include "shoal/elements/standard/tokenbucket.hh"  // (whole_bytes_per_sec)

namespace shoal {

template <bool kBytes>
class ShaperT : public Element {
 public:
  void configure(Args& a) override {
    if constexpr (kBytes) {
      Bandwidth bw;
      a.read_mp("RATE", bw);
      rate_ = whole_bytes_per_sec(bw);
    } else {
      a.read_mp("RATE", rate_);
    }
    a.complete();
  }
  void initialize() override {
    timer_.owner = this;
    gap_.set_rate(rate_, worker().now_ns());
  }
  // Output 0: what the rate allows now (the packets it allows at once, one
  // for bytes), else nothing, with a timer to wake the puller when it will.
  // Output 1: packets pulled only while the rate does not allow one.
  PacketBatch* pull(int port, uint32_t max) override {
    resolve();
    const uint64_t now = worker().now_ns();
    const bool go = gap_.need_update(now);
    if (port == 1) return go ? nullptr : input_pull(0, max);
    if (!go) {
      if (sleeps()) {
        if (uint64_t when = gap_.expiry_ns(); when && !timer_.scheduled) worker().schedule(timer_, std::max(when, now));
        notifier_.sleep();
      }
      return nullptr;
    }
    uint32_t n = kBytes ? 1 : uint32_t(std::min<uint64_t>(max, gap_.allowed(now)));
    PacketBatch* b = input_pull(0, std::max<uint32_t>(n, 1));
    if (b && b->empty()) recycle(b), b = nullptr;
    if (!b) {
      if (sleeps() && up_ && !up_->active) notifier_.sleep();
      return nullptr;
    }
    int64_t used = 0;
    b->for_each([&](uint32_t, Packet* p) { used += kBytes ? int64_t(p->length()) : 1; });
    gap_.update_with(used);
    return b;
  }
  // With one output, pullers sleep on this element while the rate holds
  // packets back (Click's Shaper has no notifier: they pulled in vain).
  Notifier* notifier() override { return noutputs() == 1 ? &notifier_ : nullptr; }
  void run_timer(Timer&) override { notifier_.wake(); }
  void wake_task() override { notifier_.wake(); }
  void add_handlers() override {
    add_read_handler("rate", [this] { return rate_text(); });
    add_read_handler("config", [this] { return rate_text(); });
    add_write_handler("rate", [this](const std::string& v) {
      uint64_t r = 0;
      if constexpr (kBytes) {
        Bandwidth bw;
        if (!parse_bandwidth(trim(v), bw)) throw std::runtime_error("expected a bandwidth");
        r = whole_bytes_per_sec(bw);
      } else if (!parse_uint(trim(v), r)) {
        throw std::runtime_error("expected a rate (packets per second)");
      }
      rate_ = r;
      gap_.set_rate(r, worker().now_ns());
      notifier_.wake();
    });
    add_write_handler("reset", [this](const std::string&) {
      gap_.reset();
      notifier_.wake();
    });
  }

 private:
  bool sleeps() const { return noutputs() == 1; }
  std::string rate_text() const { return kBytes ? fmt::format("{}Bps", rate_) : std::to_string(rate_); }
  // Listens to the input's notifier, so a puller asleep on ours wakes when
  // packets come.
  void resolve() {
    if (resolved_) return;
    resolved_ = true;
    up_ = upstream_notifier(this, 0);
    if (up_) up_->listeners.push_back(this);
  }
  uint64_t rate_ = 0;
  GapRate gap_;
  Timer timer_;
  Notifier notifier_;
  Notifier* up_ = nullptr;
  bool resolved_ = false;
};
using Shaper = ShaperT<false>;
using BandwidthShaper = ShaperT<true>;

SHOAL_ELEMENT(Shaper, .name = "Shaper", .ports = "1/1-2", .processing = "l/l",
              .summary = "a pull element that lets at most RATE packets per second through",
              .description =
                  "Click's Shaper: a pull on output 0 returns packets only while the rate allows (Click's GapRate: "
                  "within each second, the share of RATE that has elapsed against what went, so evenly spaced "
                  "pulls see evenly spaced packets), else nothing. With one output, the element pulling from it "
                  "sleeps until the next packet may go or its input has packets again. A pull on output 1 returns "
                  "packets only while the rate does not allow one: they are pulled without shaping (sampling in "
                  "pull context). Shaper holds no packet; RatedUnqueue is the push-side form, RatedSplitter the "
                  "splitting one.",
              .args = {{"RATE", "unsigned", "packets per second, mandatory"}},
              .handlers = {{"rate", "rw", "RATE (a write takes effect at once)"},
                           {"config", "r", "RATE"},
                           {"reset", "w", "forgets the past: one packet may go at once"}},
              .example = "src -> q :: Queue -> Shaper(1000) -> Unqueue -> dst;");
SHOAL_ELEMENT(BandwidthShaper, .name = "BandwidthShaper", .ports = "1/1-2", .processing = "l/l",
              .summary = "a pull element that lets at most RATE bytes per second through",
              .description =
                  "Click's BandwidthShaper: Shaper counting bytes. RATE is a bandwidth (\"10Mbps\", \"125kBps\"); a "
                  "pull returns one packet when the bytes sent so far this second are within the elapsed share of "
                  "RATE, so a large packet may overdraw and the next waits for it.",
              .args = {{"RATE", "bandwidth", "bytes per second (Bps, kbps, Mbps, ...), mandatory"}},
              .handlers = {{"rate", "rw", "RATE"}, {"config", "r", "RATE"}, {"reset", "w", "forgets the past"}},
              .example = "src -> q :: Queue -> BandwidthShaper(1Mbps) -> Unqueue -> ToDevice(eth0);");

}  // namespace shoal
