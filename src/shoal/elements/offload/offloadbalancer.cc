// OffloadBalancer: picks the device or the CPU for each batch, at a fixed
// share or adaptively (offload/balance.hh).
#include <fmt/format.h>

#include <algorithm>
#include <atomic>

#include "shoal/elements/common.hh"
#include "shoal/offload/balance.hh"
#include "shoal/offload/services.hh"
#include "shoal/offload/shared_climber.hh"

namespace shoal {

class OffloadBalancer : public Element {
 public:
  void configure(Args& a) override {
    std::string mode = "fixed";
    Duration interval{100000000};
    double latency_us = 0;
    a.read_p("FRACTION", fraction_)
        .read("MODE", mode)
        .read("INTERVAL", interval)
        .read("STEP", params_.step)
        .read("NOISE", params_.noise)
        .read("LATENCY", latency_us)
        .read("LIGHT", params_.light)
        .read("RELAX", params_.relax)
        .read("EXPLORE", params_.explore)
        .read("SHARED", shared_);
    a.complete();
    if (!(fraction_ >= 0 && fraction_ <= 1)) a.fail("FRACTION: 0 to 1");
    if (mode != "fixed" && mode != "adaptive") a.fail("MODE: fixed or adaptive");
    adaptive_ = mode == "adaptive";
    if (!(params_.step > 0 && params_.step <= 0.5)) a.fail("STEP: above 0, at most 0.5");
    if (!(params_.noise >= 0 && params_.noise < 1)) a.fail("NOISE: 0 to 1");
    if (!(params_.light >= 0 && params_.light <= 1)) a.fail("LIGHT: 0 to 1");
    if (!(latency_us >= 0)) a.fail("LATENCY: microseconds, 0 for none");
    if (interval.ns < 1000000) a.fail("INTERVAL: at least 1ms");
    if (params_.relax == 0) a.fail("RELAX: at least 1 epoch");
    if (!adaptive_ && (latency_us > 0 || params_.light > 0)) a.fail("LATENCY and LIGHT need MODE adaptive");
    // (sweep while climbing would lose the sweep's start)
    if (params_.explore && params_.explore < 2 * offload::HillClimber::kPoints)
      a.fail(fmt::format("EXPLORE: 0, or at least {} intervals", 2 * offload::HillClimber::kPoints));
    params_.latency_us = latency_us;
    params_.wait_for_device = true;  // (the p99 it gives the climber is its device batches')
    interval_ns_ = interval.ns;
  }
  void initialize() override {
    climber_ = offload::HillClimber(params_, fraction_);
    share_ = fraction_;
    auto& svc = offload::services(worker().runtime());
    run_ = std::max(1u, svc.options.batches);
    // (each worker's runs at its own phase: offload::ShareDiffuser)
    diffuser_ = offload::ShareDiffuser(double(worker().id()) / double(std::max(1, worker().runtime().nworkers())));
    publish();
    if (adaptive_) samples_ = &svc.latencies(worker().id());
    // (one climber for every worker's copy: they share the element's name)
    if (adaptive_ && shared_)
      all_ = svc.shared_climber(name(), params_, fraction_, uint32_t(worker().runtime().nworkers()), interval_ns_);
  }
  void push(int, PacketBatch* b) override {
    if (adaptive_) observe(b);
    // Error diffusion over runs of as many batches as make one aggregate
    // (HostToDevice's and the offloadable elements' BATCHES): exactly the
    // share, evenly spread, and a run for the device fills an aggregate.
    // (Deciding batch by batch would send the device one batch at a time:
    // each CPU batch behind an aggregate still being filled launches it
    // early, to keep order, so a split would pay a whole aggregate's cost
    // for every batch.)
    if (run_left_ == 0) {
      run_left_ = run_;
      if (all_) share_ = all_->share();
      run_device_ = diffuser_.next(share_);
    }
    --run_left_;
    if (run_device_) {
      b->anno.device = 0;
      to_device_.add();
    } else {
      b->anno.device = -1;
      to_cpu_.add();
    }
    output_push(0, b);
  }
  // (the read handlers read what the climber last published: they run on
  // another thread; with several workers and SHARED false, worker 0's copy
  // answers)
  void add_handlers() override {
    add_read_handler("fraction", [this] { return fmt::format("{:.3f}", stats().share.load()); });
    add_write_handler("fraction", [this](const std::string& v) {
      double f;
      if (!parse_double(trim(v), f) || !(f >= 0 && f <= 1)) throw std::runtime_error("FRACTION: 0 to 1");
      share_ = fraction_ = f;
      if (all_) {
        all_->set(f);
        return;
      }
      climber_ = offload::HillClimber(params_, f, false);  // adaptive: climbing resumes from there
      publish();
    });
    add_read_handler("mode", [this] { return std::string(adaptive_ ? "adaptive" : "fixed"); });
    add_read_handler("shared", [this] { return std::string(all_ ? "true" : "false"); });
    add_read_handler("state", [this] {
      return adaptive_ ? std::string(offload::HillClimber::name(offload::HillClimber::State(stats().state.load())))
                       : std::string("fixed");
    });
    add_read_handler("ceiling", [this] { return fmt::format("{:.3f}", stats().ceiling.load()); });
    add_read_handler("rate", [this] { return fmt::format("{:.0f}", stats().rate.load()); });
    add_read_handler("latency_p99", [this] {
      int64_t p = stats().p99.load();
      return p < 0 ? std::string("-") : fmt::format("{}", p);
    });
    add_read_handler("epochs", [this] { return std::to_string(stats().epochs.load()); });
    add_read_handler("turns", [this] { return std::to_string(stats().turns.load()); });
    add_read_handler("over_bound", [this] { return std::to_string(stats().over.load()); });
    add_read_handler("sweeps", [this] { return std::to_string(stats().sweeps.load()); });
    add_read_handler("band", [this] { return fmt::format("{:.3f}", stats().band.load()); });
    add_read_handler("changes", [this] { return std::to_string(stats().changes.load()); });
    add_read_handler("waits", [this] { return std::to_string(stats().waits.load()); });
    add_read_handler("ramp_sweeps", [this] { return std::to_string(stats().ramp_sweeps.load()); });
    add_stat_handler("to_device", to_device_);
    add_stat_handler("to_cpu", to_cpu_);
  }

 private:
  // Counts the epoch's batches and their fill; at its end, gives the
  // climber the rate (packets per second that left this worker's graph:
  // sent or dropped, as NBA counts packets transmitted out; packets entering
  // here would count those a device swallows into aggregates in flight),
  // the mean batch fill and the p99 latency of the device batches that
  // finished in it.
  void observe(PacketBatch* b) {
    const uint64_t now = worker().now_ns(), out = worker().sent.get() + worker().dropped.get();
    if (all_) {
      const double fill = double(b->live()) / double(std::max<uint32_t>(1, b->capacity()));
      all_->observe(uint32_t(worker().id()), now, out, fill, [this] { return take_p99(); });
      return;
    }
    if (!epoch_start_) epoch_start_ = now, out_start_ = out;
    ++batches_;
    fill_ += double(b->live()) / double(std::max<uint32_t>(1, b->capacity()));
    // (an epoch that only settles a move is a quarter of INTERVAL, and
    // epochs stretch to the device batches' p99: HillClimber::epoch_ns)
    if (now - epoch_start_ < climber_.epoch_ns(interval_ns_)) return;
    double secs = double(now - epoch_start_) / 1e9;
    last_rate_ = double(out - out_start_) / secs;
    last_p99_ = take_p99();
    share_ = climber_.update(last_rate_, fill_ / double(batches_), last_p99_);
    epoch_start_ = now, out_start_ = out, batches_ = 0, fill_ = 0;
    publish();
  }
  // The p99 of the worker's device batches since the last look (-1: none).
  int64_t take_p99() {
    auto& v = samples_->us;
    if (v.empty()) return -1;
    auto at = v.begin() + long(std::min(v.size() - 1, size_t(double(v.size()) * 0.99)));
    std::nth_element(v.begin(), at, v.end());
    const int64_t p = *at;
    v.clear();
    return p;
  }
  void publish() { own_.publish(climber_, share_, last_rate_, last_p99_); }
  const offload::ClimberStats& stats() const { return all_ ? all_->stats() : own_; }

  double fraction_ = 1, share_ = 1;
  offload::ShareDiffuser diffuser_;
  uint32_t run_ = 1, run_left_ = 0;  // batches per decision (an aggregate's worth), and left in this one
  bool run_device_ = false;
  bool adaptive_ = false, shared_ = true;
  std::shared_ptr<offload::SharedClimber> all_;  // (adaptive and SHARED: every worker's)
  offload::BalanceParams params_;
  offload::HillClimber climber_{offload::BalanceParams{}};
  uint64_t interval_ns_ = 100000000, epoch_start_ = 0, out_start_ = 0, batches_ = 0;
  double fill_ = 0, last_rate_ = 0;
  int64_t last_p99_ = -1;
  offload::LatencySamples* samples_ = nullptr;
  offload::ClimberStats own_;  // (the climber of this worker's copy: SHARED false)
  Stat to_device_, to_cpu_;
};
SHOAL_ELEMENT(
    OffloadBalancer, .name = "OffloadBalancer", .ports = "1/1", .processing = "a/a",
    .summary = "picks the device or the CPU for each batch: a fixed share, or adaptively",
    .description =
        "NBA's load balancer. Batches marked for the device (evenly spread by error diffusion, in runs of as many "
        "batches as make one aggregate, so that the device's aggregates fill; each worker at its own phase, so "
        "that workers do not send the device their runs at the same time) run their "
        "offloadable elements downstream (DirectIPLookup, LookupIP6Route, CheckIPHeader, DecIPTTL, IDSMatcher, "
        "SDNClassifier, ...) on the device: those aggregate them, copy only what they declared, run the chain of "
        "consecutive offloadable elements there and release the results in order; the others run on the CPU. "
        "The mark stays on the batch. With MODE fixed (the default) FRACTION of the batches go to the device. "
        "With MODE adaptive the share starts at FRACTION and is found by NBA's hill "
        "climbing, with a memory: every INTERVAL it measures the packets per second that left the graph "
        "(sent or dropped) of every worker together, as NBA does (SHARED true, the default: one share for all "
        "workers, applied by all before the next interval is compared; with SHARED false each worker's copy climbs "
        "on its own worker's rate, and workers sharing a device each gain by sending it more while slowing the "
        "others, so they climb past the share that is best for all), and keeps moving the share by STEP while that "
        "stays within the noise band of the best "
        "share measured so far (its home, which moves along when a share is better); when it falls below, it "
        "returns home and tries the other side (NBA compares each interval with the last, so a slope gentler than "
        "the band per step goes unseen). The band is NOISE, or twice the noise measured between intervals at one "
        "share if that is more (at most 10%). A home whose sides are both worse (or its only side, at 0 or 1) is a "
        "top: the next "
        "probe waits so that probes cost about 1% of the throughput (a probe that lost 60% waits 120 intervals), "
        "at most 128 intervals. The interval after a move only settles it (batches sent under the old share still "
        "finish in it): it lasts a quarter of INTERVAL and is not compared; it lasts at least the last p99 of the "
        "device batches, though, and an interval that is compared at least twice that p99 (completions a p99 "
        "apart come in bursts), at most 8 INTERVALs; nor is an interval at a device share in "
        "which no device batch finished (a device still loading its kernels), nor one at 0 in which some did (the "
        "last share's batches still draining), up to 8 in a row. Since climbing stops "
        "on a local top, "
        "and the curve is often not concave (a few batches on the device can cost more than none or all: CPU "
        "batches wait behind device ones to keep order), the climb starts from the best of a sweep over the "
        "shares 0, 0.25, .. 1 (then 0 again: if that moved past the band, the sweep ran on a ramp and is done again), "
        "repeated every EXPLORE intervals, and at once when the rate at home changes by more "
        "than three bands (and 25%) five intervals running (a change of traffic). With LATENCY, the "
        "share falls while the p99 "
        "latency of the device batches (from a batch's forming to its results) is over the bound, under a "
        "ceiling that rises again by a step after RELAX intervals within it. With LIGHT, intervals whose "
        "batches arrived less full than that on average (the worker is not saturated) send everything to the "
        "CPU, where no aggregate waits to fill. Decisions are visible through the handlers.",
    .args = {{"FRACTION", "0-1", "share of batches for the device; the adaptive mode's start (default 1)"},
             {"MODE", "fixed|adaptive", "a fixed share, or NBA's hill climbing (default fixed)"},
             {"INTERVAL", "time", "adaptive: observation interval (default 100ms)"},
             {"STEP", "0-0.5", "adaptive: share moved per interval (default 0.05)"},
             {"NOISE", "0-1",
              "adaptive: relative throughput change taken as none, at least (the band widens to the noise measured; "
              "default 0.02)"},
             {"LATENCY", "microseconds", "adaptive: p99 bound for device batches (default 0: none)"},
             {"LIGHT", "0-1",
              "adaptive: mean batch fill under which load counts as light (with SHARED, over every worker's "
              "batches; default 0: off)"},
             {"RELAX", "intervals", "adaptive: intervals within LATENCY before the ceiling rises (default 10)"},
             {"EXPLORE", "intervals", "adaptive: intervals between sweeps (default 500; 0: only the first)"},
             {"SHARED", "boolean",
              "adaptive: one climber for every worker, fed their total rate (default true, as NBA); false: one per "
              "worker, on its own rate"}},
    .handlers = {{"fraction", "rw", "the share now (writing it sets the share; adaptive climbing resumes from it)"},
                 {"mode", "r", "fixed or adaptive"},
                 {"shared", "r", "whether one climber serves every worker (adaptive with SHARED true)"},
                 {"state", "r", "fixed, sweeping, climbing, bounded (a latency ceiling below 1) or light"},
                 {"ceiling", "r", "the latency bound's ceiling on the share (1: none)"},
                 {"rate", "r",
                  "packets per second that left the graph in the last interval (every worker's with SHARED, else "
                  "the worker's)"},
                 {"latency_p99", "r",
                  "p99 microseconds of the last interval's device batches (- for none; with SHARED, the highest of the "
                  "workers')"},
                 {"epochs", "r", "intervals observed"},
                 {"turns", "r", "times the climb turned back on a fall in throughput"},
                 {"band", "r", "the relative change taken as none now (NOISE, or twice the noise measured)"},
                 {"changes", "r", "sweeps begun because the rate at home changed (a change of traffic)"},
                 {"ramp_sweeps", "r",
                  "sweeps done again because 0, measured again at the sweep's end, had moved (measured on a ramp)"},
                 {"waits", "r",
                  "intervals measured again because no device batch finished in them at a device share, or some did "
                  "at 0 (at most 8 in a row)"},
                 {"over_bound", "r", "intervals whose p99 was over LATENCY"},
                 {"sweeps", "r", "sweeps completed"},
                 {"to_device", "r", "batches marked for the device"},
                 {"to_cpu", "r", "batches left on the CPU"}},
    .example =
        "FromDump(in.pcap) -> CheckIPHeader(14) -> OffloadBalancer(MODE adaptive, LATENCY 500) -> rt :: "
        "DirectIPLookup(...);");

}  // namespace shoal
