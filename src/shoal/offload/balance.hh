// The adaptive CPU/device split (NBA §3.4, and past it): a controller fed
// one observation per epoch (the packets per second that left the worker's
// graph, how full its batches arrived, and the p99 latency of its device
// batches) that answers the share of batches to mark for the device next.
//
//   NBA's hill climbing, with a memory: the climb keeps a home, the share
//   with the best rate measured so far, and moves by STEP in one direction
//   while the rate stays within the noise band of home's (taking the home
//   along when it is better); when it falls below that band it returns home
//   and tries the other side. NBA compares each epoch with the last one, so a
//   slope gentler than the band per step (a device that loses 1.5% a step)
//   is never seen and the share drifts down it to the end; against home the
//   losses add up until they are seen. The epoch after a move is not
//   compared (NBA waits for the new share to apply): batches sent under the
//   old share still finish in it; OffloadBalancer makes it a quarter epoch.
//   A home whose two sides were both worse (or whose only side, at 0 or 1)
//   is a top: the next probe waits so that probes cost at most 1% of the
//   throughput (a probe that lost 60% for two epochs waits 120 epochs; one
//   that lost 2%, four), doubling while they keep failing, up to 128.
//   The band is NOISE, or twice the noise measured between epochs at one
//   share if that is more (a band narrower than the noise turns on noise),
//   at most 10% (wider, the climb is blind to most curves).
//   A change of traffic: when the rate at home moves by more than three
//   bands (and 25%) five measured epochs running, it sweeps again at once,
//   rather than waiting for a probe or the next periodic sweep. (Home's
//   rate starts as the median of its first three epochs, the first of which
//   may still carry the last share's work: on the host backend a sweep's
//   visit to 1 left a backlog that made every sweep look like a change.)
//   Sweeps (past NBA): hill climbing alone stops on a local top, and the
//   curve is often not concave (sending some batches to the device can be
//   worse than none and than all: CPU batches wait behind device ones to
//   keep order). So the climb starts from the best of a sweep over shares
//   0, 1/4, .. 1 (each held two epochs, the first to settle: a quarter
//   epoch in OffloadBalancer), then 0 again (a sweep on a ramp is redone), and the sweep
//   is repeated every `explore` epochs to find a top that moved away.
//   Latency bound (NBA's future work): while the device batches' p99 is over
//   the bound, the share falls by a step per epoch and a ceiling is set at the
//   last share that kept it; the ceiling is raised again by a step after
//   `relax` epochs within the bound, so a device that got faster is found.
//   Light load: when batches arrive less than `light` full (the source had
//   little waiting), the worker is not saturated, and throughput says nothing
//   about the split; every batch stays on the CPU, where latency is lowest
//   and no aggregate waits to fill, until load returns (the climbing state is
//   kept).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace shoal::offload {

// Error diffusion of a share over runs of batches: a run goes to the device
// when the running sum of the share crosses a whole number, so any stretch of
// runs gets the share to within one run, evenly spread. PHASE (0 to 1) is
// where the sum starts. Workers that apply one share (SHARED climbers) and
// start at the same phase stay in step: each sends its run to the device at
// the same time, the device gets every worker's aggregate at once and then
// none. Phases i/N spread N workers' device runs over the cycle: at any run,
// at most floor(N * share) + 1 of them go to the device.
class ShareDiffuser {
 public:
  explicit ShareDiffuser(double phase = 0) : acc_(phase) {}
  // Whether the next run goes to the device.
  bool next(double share) {
    acc_ += share;
    if (acc_ < 1 - 1e-9) return false;
    acc_ -= 1;
    return true;
  }

 private:
  double acc_;
};

struct BalanceParams {
  double step = 0.05;      // share moved per epoch
  double noise = 0.02;     // relative throughput change taken as no change (at least)
  double light = 0;        // mean batch fill below which load is light (0: never)
  double latency_us = 0;   // p99 bound for device batches (0: none)
  uint32_t relax = 10;     // epochs within the bound before the ceiling rises
  uint32_t explore = 500;  // epochs between sweeps (0: sweep once, at the start)
  // An epoch at a device share in which no device batch finished (p99 < 0)
  // is measured again, up to kMaxWait epochs: its rate lacks the device's
  // packets (a device still loading its kernels, the first aggregates in
  // flight); so is an epoch at 0 in which some did (the last share's work
  // draining). For callers whose p99 comes from the device batches.
  bool wait_for_device = false;
};

class HillClimber {
 public:
  enum class State : uint8_t { Climbing, Bounded, Light, Sweeping };
  static constexpr int kPoints = 5;  // the sweep's shares: 0, 1/4, 1/2, 3/4, 1
  // What the probes from a top may cost: after a probe that lost L of the
  // throughput (for about two epochs), the next waits 2L / kProbeBudget
  // epochs (and at least twice the last wait), at most kMaxHold.
  static constexpr double kProbeBudget = 0.01;
  static constexpr uint32_t kMaxHold = 128;
  static constexpr uint32_t kMaxWait = 8;   // epochs waited for a device share's first finished batch
  static constexpr double kMaxBand = 0.1;   // the widest band the noise measured gives
  static constexpr double kMaxStretch = 8;  // the longest epoch, in INTERVALs (epoch_ns)

  // With `sweep` false the climb starts at `start` (and sweeps only after
  // `explore` epochs).
  explicit HillClimber(const BalanceParams& p, double start = 0.5, bool sweep = true)
      : p_(p), share_(std::clamp(start, 0.0, 1.0)), home_(share_) {
    if (sweep) begin_sweep();
  }

  // One epoch: its throughput (any unit, the same every epoch), mean batch
  // fill (0..1) and the p99 latency in microseconds of its device batches
  // (< 0: none finished). Returns the share for the next epoch.
  double update(double rate, double fill, double p99_us) {
    ++epochs_;
    last_p99_ = p99_us;
    if (p_.light > 0 && fill < p_.light) {
      state_ = State::Light;
      light_ = true;  // the rates of a light epoch say nothing about the split
      return 0;
    }
    if (light_) {  // load is back: home, measured again after an epoch to settle
      light_ = false;
      have_home_ = false;
      state_ = ceiling_ < 1 ? State::Bounded : State::Climbing;
      return move(home_, true);
    }
    if (point_ >= 0) return sweep(rate, p99_us);
    if (p_.explore && ++since_sweep_ >= p_.explore) {
      begin_sweep();
      return share_;
    }
    if (p_.latency_us > 0 && p99_us > p_.latency_us && share_ > 0) {
      state_ = State::Bounded;
      ++over_;
      ceiling_ = std::max(0.0, share_ - p_.step);
      home_ = ceiling_;
      dir_ = -1;
      within_ = hold_ = failed_ = 0;
      have_home_ = false;
      return move(ceiling_, true);
    }
    // (raised only while home is at the ceiling, and then probed at once:
    // the relaxing is there to find a device that got faster)
    if (p_.latency_us > 0 && p99_us >= 0 && ceiling_ < 1 && same(home_, ceiling_) && same(share_, home_) &&
        ++within_ >= p_.relax) {
      ceiling_ = std::min(1.0, ceiling_ + p_.step);
      within_ = 0;
      hold_ = 0, dir_ = 1;
    }
    state_ = ceiling_ < 1 ? State::Bounded : State::Climbing;
    if (settle_) {  // the epoch after a move
      settle_ = false;
      return share_;
    }
    if (undelivered(p99_us)) return share_;
    // The noise: how much the rate moves between measured epochs at one share.
    // (an epoch's change counted up to 50%: one burst of completions in an
    // epoch must not blind the climb for dozens after)
    if (have_prev_ && !moved_) dev_ = 0.9 * dev_ + 0.1 * std::min(0.5, std::abs(rate / prev_ - 1));
    prev_ = rate, have_prev_ = true, moved_ = false;
    const double band = this->band(), top = std::min(1.0, ceiling_);
    if (same(share_, home_)) return at_home(rate, band, top);
    // Away from home (a probe, or a climb past it): compared with home's
    // rate, not the last epoch's, so that a slope gentler than the band per
    // step is still seen once it adds up to the band.
    const double next = share_ + dir_ * p_.step;
    if (rate < home_rate_ * (1 - band) || next < -1e-9 || next > top + 1e-9) {
      if (rate > home_rate_) {  // (an end reached while still rising: it is the new home)
        home_ = share_, home_rate_ = home_first_[0] = rate, home_n_ = 1;
        failed_ = 0;
        return at_home(rate, band, top);
      }
      ++turns_;
      dir_ = -dir_;
      if (++failed_ >= 2 || at_end(home_, top)) hold_after(1 - rate / home_rate_);
      return move(home_);
    }
    if (rate > home_rate_) {  // better: home moves here
      home_ = share_, home_rate_ = home_first_[0] = rate, home_n_ = 1;
      failed_ = 0, backoff_ = 0;
    }
    return move(next);
  }

  double share() const { return share_; }
  // Whether the next epoch only settles the last move (its rate is not
  // compared: batches sent under the old share still finish in it), so the
  // caller may make it shorter.
  bool settling() const { return settle_ || (point_ >= 0 && !settled_); }
  // How long the next epoch should last, for epochs of `interval_ns`: a
  // quarter of one when it only settles a move, yet at least the last
  // epoch's p99 of device batches (the batches in flight under the old
  // share finish in it), and when it measures, at least twice that p99
  // (completions come in bursts up to a p99 apart: a shorter epoch measures
  // the bursts; the host backend on two cores: a 50 ms p99 against 20 ms
  // epochs, and rates from 0 to twice the mean at one share); at most
  // kMaxStretch of them.
  uint64_t epoch_ns(uint64_t interval_ns) const {
    const double p99_ns = std::max(0.0, last_p99_) * 1000;
    const double want =
        settling() ? std::max(double(interval_ns) / 4, p99_ns) : std::max(double(interval_ns), 2 * p99_ns);
    return uint64_t(std::min(want, double(interval_ns) * kMaxStretch));
  }
  uint64_t sweeps() const { return sweeps_; }
  double ceiling() const { return ceiling_; }
  State state() const { return state_; }
  uint64_t epochs() const { return epochs_; }
  uint64_t turns() const { return turns_; }
  uint64_t over_bound() const { return over_; }
  // Sweeps begun because the rate at a held share changed (a change of traffic).
  uint64_t changes() const { return changes_; }
  // Sweeps repeated because 0, measured again at a sweep's end, had moved by
  // more than two bands and 10% (the sweep ran on a ramp: a pipeline
  // starting, a device warming up); at most twice in a row.
  uint64_t ramp_sweeps() const { return ramp_sweeps_; }
  // Epochs measured again because no device batch finished in them.
  uint64_t waits() const { return waits_; }
  // The relative change taken as none: NOISE, or twice the noise measured if
  // more (up to kMaxBand).
  double band() const { return std::max(p_.noise, std::min(kMaxBand, 2 * dev_)); }
  static const char* name(State s) {
    return s == State::Climbing  ? "climbing"
           : s == State::Bounded ? "bounded"
           : s == State::Light   ? "light"
                                 : "sweeping";
  }

 private:
  static bool same(double a, double b) { return std::abs(a - b) < 1e-9; }
  // An epoch to measure again (with wait_for_device; at most kMaxWait in a
  // row): at a device share, no device batch finished in it (its rate lacks
  // the device's packets); at 0, some did (the last share's batches still
  // draining: on the host backend their completions came in bursts that
  // made 0 look 15-20% faster, or slower, for an epoch or two after a
  // device share, and a sweep's end took the difference for a ramp).
  bool undelivered(double p99_us) {
    const bool unsettled = share_ > 0 ? p99_us < 0 : p99_us >= 0;
    if (p_.wait_for_device && unsettled && waited_ < kMaxWait) {
      ++waited_, ++waits_;
      moved_ = true;  // (nor a sample of the noise)
      return true;
    }
    waited_ = 0;
    return false;
  }
  bool at_end(double s, double top) const { return s <= 1e-9 || s >= top - 1e-9; }
  double move(double s, bool settle = false) {
    s = std::round(s * 1e6) / 1e6;  // (on the grid: steps added and taken back leave no 1e-17)
    settle_ = settle || !same(s, share_);
    moved_ = moved_ || settle_;
    share_ = s;
    return share_;
  }
  // At home: its rate kept as a running mean; a change of traffic (the rate
  // there off by more than three bands and 25%, five measured epochs
  // running, home held meanwhile) sweeps again; else, when the wait is over,
  // a probe one step in the climb's direction (turning at an end).
  double at_home(double rate, double band, double top) {
    if (!have_home_) {
      home_rate_ = home_first_[0] = rate, have_home_ = true, changed_ = 0, home_n_ = 1;
    } else if (home_n_ < 3) {  // the first epochs' median (the first may still carry the last share's work)
      home_first_[home_n_++] = rate;
      home_rate_ = home_n_ == 2 ? (home_first_[0] + rate) / 2
                                : std::max(std::min(home_first_[0], home_first_[1]),
                                           std::min(std::max(home_first_[0], home_first_[1]), rate));
    } else if (std::abs(rate / home_rate_ - 1) > std::max(0.25, 3 * band)) {
      if (++changed_ >= 5) {
        ++changes_;
        begin_sweep();
      }
      return share_;
    } else {
      changed_ = 0;
      home_rate_ = 0.7 * home_rate_ + 0.3 * rate;
    }
    if (home_ > top + 1e-9) {  // (the latency ceiling came down past it)
      home_ = top, have_home_ = false;
      return move(top);
    }
    if (hold_ > 0) {
      --hold_;
      return share_;
    }
    double next = home_ + dir_ * p_.step;
    if (next > top + 1e-9) dir_ = -1, next = home_ - p_.step;
    if (next < -1e-9) dir_ = 1, next = home_ + p_.step;
    return move(std::clamp(next, 0.0, top));
  }
  // Both sides of home were worse (or the only side, at an end): wait before
  // the next probe, so that probes cost at most kProbeBudget of the
  // throughput, doubling while they keep failing.
  void hold_after(double loss) {
    const auto by_loss = uint32_t(std::ceil(2 * std::max(0.0, loss) / kProbeBudget));
    backoff_ = std::min(kMaxHold, std::max(backoff_ ? 2 * backoff_ : 1, by_loss));
    hold_ = backoff_;
    failed_ = 0;
  }
  void begin_sweep() {
    point_ = 0, settled_ = false, since_sweep_ = 0, hold_ = backoff_ = failed_ = 0, changed_ = 0;
    for (double& r : sweep_rate_) r = -1;
    moved_ = true;
    share_ = 0;
    state_ = State::Sweeping;
  }
  // One epoch of the sweep: the first at a point settles, the second
  // measures it; points above the latency ceiling are skipped, and a point
  // over the bound lowers the ceiling. After the last, 0 once more: if it
  // moved past the band the sweep is done again (its points were measured
  // on a ramp); else climb from the best.
  double sweep(double rate, double p99_us) {
    if (!settled_) {
      settled_ = true;
      return share_;
    }
    if (undelivered(p99_us)) return share_;
    if (point_ == kPoints) {  // 0 again, after the last point: was the sweep measured on a ramp?
      // (two epochs, the higher taken: the first may still carry the last point's work)
      if (!rechecked_) {
        rechecked_ = true, recheck_ = rate;
        return share_;
      }
      rate = std::max(rate, recheck_);
      rechecked_ = false;
      const double first = sweep_rate_[0];
      const bool ramp = first > 0 && std::abs(rate / first - 1) > std::max(0.1, 2 * band());
      if (ramp && ramps_ < 2) {
        ++ramps_, ++ramp_sweeps_;
        begin_sweep();
        return share_;
      }
      sweep_rate_[0] = ramp ? rate : (first + rate) / 2;
      ramps_ = 0;
      return end_sweep();
    }
    const bool over = p_.latency_us > 0 && p99_us > p_.latency_us && share_ > 0;
    if (over) {
      ++over_;
      ceiling_ = std::min(ceiling_, std::max(0.0, share_ - p_.step));
    } else {
      sweep_rate_[point_] = rate;
    }
    for (++point_; point_<kPoints&& double(point_) / (kPoints - 1)> ceiling_ + 1e-9; ++point_) {}
    share_ = point_ < kPoints ? double(point_) / (kPoints - 1) : 0;  // (past the last: 0 again)
    settled_ = false;
    moved_ = true;
    return share_;
  }
  // The sweep's end: climb from its best point.
  double end_sweep() {
    int best = 0;
    for (int k = 1; k < kPoints; ++k)
      if (sweep_rate_[k] > sweep_rate_[best]) best = k;
    point_ = -1;
    ++sweeps_;
    // toward the better neighbour
    double lo = best > 0 ? sweep_rate_[best - 1] : -1, hi = best + 1 < kPoints ? sweep_rate_[best + 1] : -1;
    dir_ = hi > lo ? 1 : -1;
    home_ = std::min(ceiling_, double(best) / (kPoints - 1));
    have_home_ = false;
    hold_ = 2;  // (home measured three epochs before the first probe: the sweep's last point's work drains)
    state_ = ceiling_ < 1 ? State::Bounded : State::Climbing;
    return move(home_, true);
  }

  BalanceParams p_;
  double share_, home_, ceiling_ = 1, home_rate_ = 0, prev_ = 0, dev_ = 0;
  int dir_ = 1;
  bool have_home_ = false, have_prev_ = false, moved_ = true, light_ = false;
  State state_ = State::Climbing;
  uint32_t within_ = 0, hold_ = 0, backoff_ = 0, failed_ = 0, changed_ = 0, home_n_ = 0, waited_ = 0;
  bool settle_ = false;
  uint64_t epochs_ = 0, turns_ = 0, over_ = 0, sweeps_ = 0, changes_ = 0, waits_ = 0, ramp_sweeps_ = 0;
  uint32_t ramps_ = 0;    // sweeps repeated in a row because 0 measured again at the end differed
  double recheck_ = 0;    // the first of the two epochs at 0 after a sweep's last point
  double last_p99_ = -1;  // the last epoch's p99 of device batches (us; < 0: none finished)
  bool rechecked_ = false;
  int point_ = -1;  // the sweep's point now (-1: climbing)
  bool settled_ = false;
  uint32_t since_sweep_ = 0;
  double sweep_rate_[kPoints] = {};
  double home_first_[3] = {};  // home's first three rates
};

}  // namespace shoal::offload
