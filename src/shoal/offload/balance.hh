// The adaptive CPU/device split (NBA §3.4, and past it): a controller fed
// one observation per epoch (the packets per second that left the worker's
// graph, how full its batches arrived, and the p99 latency of its device
// batches) that answers the share of batches to mark for the device next.
//
//   NBA's hill climbing: the share moves by STEP in one direction while the
//   throughput does not fall by more than the noise band, and turns back when
//   it does. The epoch after a move is not compared (NBA waits for the new
//   share to apply): batches already sent to the device under the old share
//   still finish in it, and comparing it would credit one share with the
//   other's rate. At 0 or 1 it turns back, so a change of traffic is noticed
//   from the ends too: it probes one step in, returns if that was worse, and
//   then waits twice as long before the next probe (1, 2, 4 .. 128 epochs),
//   since the curve may fall off a cliff next to an end.
//   Sweeps (past NBA): hill climbing alone stops on a local top, and the
//   curve is often not concave (sending some batches to the device can be
//   worse than none and than all: CPU batches wait behind device ones to
//   keep order). So the climb starts from the best of a sweep over shares
//   0, 1/4, .. 1 (each held two epochs, the first to settle), and the sweep
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
#include <cstdint>

namespace shoal::offload {

struct BalanceParams {
  double step = 0.05;      // share moved per epoch
  double noise = 0.02;     // relative throughput change taken as no change
  double light = 0;        // mean batch fill below which load is light (0: never)
  double latency_us = 0;   // p99 bound for device batches (0: none)
  uint32_t relax = 10;     // epochs within the bound before the ceiling rises
  uint32_t explore = 500;  // epochs between sweeps (0: sweep once, at the start)
};

class HillClimber {
 public:
  enum class State : uint8_t { Climbing, Bounded, Light, Sweeping };
  static constexpr int kPoints = 5;  // the sweep's shares: 0, 1/4, 1/2, 3/4, 1

  // With `sweep` false the climb starts at `start` (and sweeps only after
  // `explore` epochs).
  explicit HillClimber(const BalanceParams& p, double start = 0.5, bool sweep = true)
      : p_(p), share_(std::clamp(start, 0.0, 1.0)) {
    if (sweep) begin_sweep();
  }

  // One epoch: its throughput (any unit, the same every epoch), mean batch
  // fill (0..1) and the p99 latency in microseconds of its device batches
  // (< 0: none finished). Returns the share for the next epoch.
  double update(double rate, double fill, double p99_us) {
    ++epochs_;
    if (p_.light > 0 && fill < p_.light) {
      state_ = State::Light;
      have_last_ = false;  // the rates of a light epoch say nothing about the split
      return 0;
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
      share_ = ceiling_;
      dir_ = -1;
      within_ = 0;
      have_last_ = probing_ = false;
      settle_ = true;
      return share_;
    }
    if (p_.latency_us > 0 && p99_us >= 0 && ceiling_ < 1 && ++within_ >= p_.relax) {
      ceiling_ = std::min(1.0, ceiling_ + p_.step);
      within_ = 0;
    }
    state_ = ceiling_ < 1 ? State::Bounded : State::Climbing;
    if (settle_) {  // the epoch after a move
      settle_ = false;
      return share_;
    }
    const double top = std::min(1.0, ceiling_);
    const bool fell = have_last_ && rate < last_ * (1 - p_.noise);
    if (fell) {
      dir_ = -dir_;
      ++turns_;
    }
    if (probing_) {  // the epoch after a step in from an end
      probing_ = false;
      backoff_ = fell ? std::min<uint32_t>(backoff_ ? 2 * backoff_ : 1, 128) : 0;
      hold_ = backoff_;
    }
    last_ = rate, have_last_ = true;
    const bool at_end = share_ <= 0 || share_ >= top;
    if (at_end && hold_ > 0) {  // waiting before the next probe
      --hold_;
      if (share_ > top) share_ = top;
      return share_;
    }
    double next = share_ + dir_ * p_.step;
    if (next >= top) next = top, dir_ = -1;
    if (next <= 0) next = 0, dir_ = 1;
    probing_ = at_end && next != share_;
    settle_ = next != share_;
    share_ = next;
    return share_;
  }

  double share() const { return share_; }
  uint64_t sweeps() const { return sweeps_; }
  double ceiling() const { return ceiling_; }
  State state() const { return state_; }
  uint64_t epochs() const { return epochs_; }
  uint64_t turns() const { return turns_; }
  uint64_t over_bound() const { return over_; }
  static const char* name(State s) {
    return s == State::Climbing  ? "climbing"
           : s == State::Bounded ? "bounded"
           : s == State::Light   ? "light"
                                 : "sweeping";
  }

 private:
  void begin_sweep() {
    point_ = 0, settled_ = probing_ = false, since_sweep_ = 0, hold_ = backoff_ = 0;
    for (double& r : sweep_rate_) r = -1;
    share_ = 0;
    state_ = State::Sweeping;
  }
  // One epoch of the sweep: the first at a point settles, the second
  // measures it; points above the latency ceiling are skipped, and a point
  // over the bound lowers the ceiling. After the last: climb from the best.
  double sweep(double rate, double p99_us) {
    if (!settled_) {
      settled_ = true;
      return share_;
    }
    const bool over = p_.latency_us > 0 && p99_us > p_.latency_us && share_ > 0;
    if (over) {
      ++over_;
      ceiling_ = std::min(ceiling_, std::max(0.0, share_ - p_.step));
    } else {
      sweep_rate_[point_] = rate;
    }
    for (++point_; point_<kPoints&& double(point_) / (kPoints - 1)> ceiling_ + 1e-9; ++point_) {}
    if (point_ < kPoints) {
      share_ = double(point_) / (kPoints - 1);
      settled_ = false;
      return share_;
    }
    int best = 0;
    for (int k = 1; k < kPoints; ++k)
      if (sweep_rate_[k] > sweep_rate_[best]) best = k;
    point_ = -1;
    ++sweeps_;
    share_ = std::min(ceiling_, double(best) / (kPoints - 1));
    // toward the better neighbour
    double lo = best > 0 ? sweep_rate_[best - 1] : -1, hi = best + 1 < kPoints ? sweep_rate_[best + 1] : -1;
    dir_ = hi > lo ? 1 : -1;
    have_last_ = false;
    settle_ = true;
    state_ = ceiling_ < 1 ? State::Bounded : State::Climbing;
    return share_;
  }

  BalanceParams p_;
  double share_, ceiling_ = 1, last_ = 0;
  int dir_ = 1;
  bool have_last_ = false;
  State state_ = State::Climbing;
  uint32_t within_ = 0, hold_ = 0, backoff_ = 0;
  bool probing_ = false, settle_ = false;
  uint64_t epochs_ = 0, turns_ = 0, over_ = 0, sweeps_ = 0;
  int point_ = -1;  // the sweep's point now (-1: climbing)
  bool settled_ = false;
  uint32_t since_sweep_ = 0;
  double sweep_rate_[kPoints] = {};
};

}  // namespace shoal::offload
