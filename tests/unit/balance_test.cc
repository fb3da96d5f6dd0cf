// The adaptive CPU/device split: the hill climber (offload/balance.hh) on
// made-up throughput curves (OffloadBalancer's adaptive mode in real graphs:
// offload_test.cc).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <thread>

#include "shoal/offload/balance.hh"
#include "shoal/offload/shared_climber.hh"

using namespace shoal;
using offload::BalanceParams;
using offload::HillClimber;
using offload::SharedClimber;

namespace {

// Runs the climber for `epochs` on throughput curve f(share) with
// multiplicative noise; returns the shares it chose.
// With `lag`, an epoch's rate is the mean of its share's and the previous
// epoch's share's (batches sent under the old share finish in it).
std::vector<double> climb(HillClimber& h, int epochs, const std::function<double(double, int)>& f, double noise = 0,
                          const std::function<double(double)>& p99 = {}, bool lag = false) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-noise, noise);
  std::vector<double> out;
  double s = h.share(), prev = s;
  for (int e = 0; e < epochs; ++e) {
    double rate = (lag ? (f(s, e) + f(prev, e)) / 2 : f(s, e)) * (1 + u(rng));
    prev = s;
    s = h.update(rate, 1.0, p99 ? p99(s) : -1);
    out.push_back(s);
  }
  return out;
}
double mean(const std::vector<double>& v, size_t from, size_t to) {
  double m = 0;
  for (size_t i = from; i < to; ++i) m += v[i];
  return m / double(to - from);
}

}  // namespace

// The mean throughput over epochs [from, to) of shares s on curve f, in
// percent of f's best.
double achieved(const std::vector<double>& s, size_t from, size_t to, const std::function<double(double, int)>& f) {
  double got = 0, top = 0;
  for (int k = 0; k <= 100; ++k) top = std::max(top, f(k / 100.0, 0));
  for (size_t i = from; i < to; ++i) got += f(s[i], 0);
  return 100 * got / double(to - from) / top;
}

TEST(HillClimber, ReachesNinetyFivePercentOfTheBestSplit) {
  // NBA's measure: the throughput it achieves against the best fixed split,
  // over a long run (its periodic sweeps included). Near the top the curve
  // is flatter than the noise band, so the share wanders there; what counts
  // is the throughput.
  for (double best : {0.0, 0.3, 0.6, 1.0}) {
    HillClimber h(BalanceParams{}, 0.5);
    auto f = [&](double w, int) { return 100 - 80 * (w - best) * (w - best); };
    auto s = climb(h, 1000, f, 0.002);
    EXPECT_GE(achieved(s, 0, 1000, f), 95) << "best " << best << ": mean share " << mean(s, 0, 1000);
    for (double x : s) ASSERT_TRUE(x >= 0 && x <= 1);
  }
}

TEST(HillClimber, TheSweepFindsATopThatClimbingAloneMisses) {
  // What the host backend measures for the IPv4 router: everything on the
  // CPU is best, everything on the device second, and any mix is worse than
  // both (CPU batches wait behind device ones to keep order). Climbing from
  // 0.5 alone would end at 1.
  auto f = [](double w, int) { return w == 0 ? 100.0 : 30 + 40 * (w - 0.5) * (w - 0.5) / 0.25 - 10 * (1 - w); };
  HillClimber alone(BalanceParams{}, 0.5, false);
  auto a = climb(alone, 200, f);
  EXPECT_GT(mean(a, 100, 200), 0.8) << "(the local top this test is about)";
  HillClimber h(BalanceParams{}, 0.5);
  auto s = climb(h, 1000, f);
  EXPECT_GE(achieved(s, 0, 1000, f), 90);
  EXPECT_EQ(h.sweeps(), 2u);  // at the start and after 500 epochs
}

TEST(HillClimber, ACurveSeenOneEpochLateStillGivesItsTop) {
  // What the host backend measured for the IPv4 router at 64 bytes (Mpps at
  // each share): everything on the CPU is best by far, a 5% device share
  // costs 60%. Each epoch's rate mixes in the previous share's, so the
  // epoch after a move must not be compared.
  auto f = [](double w, int) {
    const double xs[] = {0, 0.05, 0.1, 0.25, 0.5, 0.75, 1}, ys[] = {25, 9.8, 7.5, 4.7, 3.1, 4.6, 5.8};
    for (int i = 0; i < 6; ++i)
      if (w <= xs[i + 1] + 1e-12) return ys[i] + (w - xs[i]) / (xs[i + 1] - xs[i]) * (ys[i + 1] - ys[i]);
    return 5.8;
  };
  for (double noise : {0.0, 0.03}) {
    HillClimber h(BalanceParams{}, 0.5);
    auto s = climb(h, 1000, f, noise, {}, true);
    EXPECT_GE(achieved(s, 0, 1000, f), 95) << "noise " << noise;
  }
}

TEST(HillClimber, StaysNearTheTopDespiteNoise) {
  // +-1% noise on every observation, inside the 2% band: it may wander on
  // the flat top but is pulled back where the curve falls.
  HillClimber h(BalanceParams{}, 0.1, false);
  auto s = climb(
      h, 400, [](double w, int) { return 100 - 200 * (w - 0.7) * (w - 0.7); }, 0.01);
  EXPECT_NEAR(mean(s, 200, 400), 0.7, 0.15);
}

TEST(HillClimber, FollowsAChangeOfTrafficWithinAFewDozenEpochs) {
  // The best split moves from 0.2 to 0.8 at epoch 150 (a workload where the
  // device starts to pay): with STEP 0.05 it needs 12 epochs to get there.
  HillClimber h(BalanceParams{}, 0.5);
  auto s = climb(h, 300, [](double w, int e) {
    double best = e < 150 ? 0.2 : 0.8;
    return 100 - 80 * (w - best) * (w - best);
  });
  EXPECT_NEAR(mean(s, 100, 150), 0.2, 0.1);
  EXPECT_NEAR(mean(s, 190, 300), 0.8, 0.1);
}

TEST(HillClimber, KeepsTheP99UnderTheBound) {
  // Throughput grows with the device share, but so does latency: p99 =
  // 1000 us x share, bound 500 us. The share settles at 0.5 and probes one
  // step up after RELAX epochs within the bound, for one epoch.
  BalanceParams p;
  p.latency_us = 500;
  p.relax = 5;
  HillClimber h(p, 1.0);
  auto s = climb(
      h, 300, [](double w, int) { return 50 + 50 * w; }, 0, [](double w) { return 1000 * w; });
  size_t over = 0;
  for (size_t i = 100; i < 300; ++i) {
    over += s[i] > 0.5 + 1e-9;
    ASSERT_FALSE(s[i] > 0.5 + 1e-9 && s[i - 1] > 0.5 + 1e-9) << "a share over the bound was kept, epoch " << i;
  }
  EXPECT_LE(over, 200u / p.relax) << "probes over the bound at most once per RELAX epochs";
  EXPECT_GT(mean(s, 100, 300), 0.4) << "it stays close to the bound";
  EXPECT_GT(h.over_bound(), 0u);
  EXPECT_LE(h.ceiling(), 0.5 + 1e-9);
}

TEST(HillClimber, LightLoadKeepsEverythingOnTheCpuAndResumes) {
  BalanceParams p;
  p.light = 0.5;
  HillClimber h(p, 0.8, false);
  EXPECT_EQ(h.update(100, 0.1, -1), 0);
  EXPECT_EQ(h.state(), HillClimber::State::Light);
  // load returns: its home (the share it had), after an epoch to settle, then climbing
  // resumes from there
  EXPECT_NEAR(h.update(100, 0.9, -1), 0.8, 1e-9);
  EXPECT_TRUE(h.settling());
  EXPECT_EQ(h.state(), HillClimber::State::Climbing);
  EXPECT_NEAR(h.update(100, 0.9, -1), 0.8, 1e-9);   // (settled)
  EXPECT_NEAR(h.update(100, 0.9, -1), 0.85, 1e-9);  // home measured: a probe one step on
}

TEST(HillClimber, SeesASlopeGentlerThanTheBandPerStep) {
  // The device pays, but each step of 0.05 gains only 1.5% (under the 2%
  // band): comparing each epoch with the last (NBA) never sees the slope
  // and walks away from 1 as readily as toward it; against the home's rate
  // the steps add up. No noise, so what is tested is the rule.
  auto f = [](double w, int) { return 50 + 15 * w; };
  HillClimber h(BalanceParams{}, 0.5);
  auto s = climb(h, 1000, f, 0, {}, true);
  EXPECT_GE(achieved(s, 100, 1000, f), 99);
  EXPECT_GT(mean(s, 100, 1000), 0.95);
}

TEST(HillClimber, ProbesFromATopCostAboutOnePercent) {
  // The IPv4 router on the H200 (16 workers, 64 bytes; Mpps by share, and a
  // 5% share costing half): all on the CPU is best by far. After the sweep
  // each probe from 0 loses about half for an epoch; the waits between
  // probes grow with that loss, so probes take about 1% of the epochs, not
  // NBA's every other one nor doubling waits from one epoch.
  auto f = [](double w, int) {
    const double xs[] = {0, 0.05, 0.25, 0.5, 0.75, 1}, ys[] = {288.6, 150, 134.4, 112.4, 79.9, 65.3};
    for (int i = 0; i < 5; ++i)
      if (w <= xs[i + 1] + 1e-12) return ys[i] + (w - xs[i]) / (xs[i + 1] - xs[i]) * (ys[i + 1] - ys[i]);
    return 65.3;
  };
  HillClimber h(BalanceParams{}, 0.5);
  auto s = climb(h, 500, f, 0.01, {}, true);
  size_t off = 0;
  for (size_t i = 20; i < 500; ++i) off += s[i] > 0;
  EXPECT_LE(off, 480u * 3 / 100) << "epochs off the top after the sweep";
  EXPECT_GE(achieved(s, 20, 500, f), 98.5);
}

TEST(HillClimber, SweepsAgainWhenTheTrafficChanges) {
  // All on the CPU is best until epoch 300; then the packets grow and the
  // device is best at 1, with a dip at small shares (CPU batches waiting
  // behind device ones), so no probe from 0 would find it. The rate at home
  // changes past three bands: it sweeps again at once, not at EXPLORE.
  auto f = [](double w, int e) {
    if (e < 300) return 100 - 60 * w;
    return w < 0.25 ? 40 - 40 * w : 30 + 40 * w;  // 40 at 0, 30 at 0.25, 70 at 1
  };
  HillClimber h(BalanceParams{}, 0.5);
  auto s = climb(h, 400, f, 0.01, {}, true);
  EXPECT_NEAR(mean(s, 100, 300), 0, 0.02);
  EXPECT_EQ(h.changes(), 1u);
  EXPECT_EQ(h.sweeps(), 2u);
  EXPECT_GT(mean(s, 330, 400), 0.9) << "within 30 epochs of the change";
}

TEST(HillClimber, TheSweepsBacklogIsNotAChangeOfTraffic) {
  // A device that drains slowly (the host backend: its work runs on the
  // worker's cores): an epoch's rate is the mean over its share and the two
  // epochs' before, so the first epoch back at 0 after the sweep's visit to
  // 1 still runs at a fraction of the CPU's rate. Taken alone as home's
  // rate, it makes a probe look better (home moves off the top) or the
  // epochs after it a change of traffic (each sweep beginning the next);
  // home's rate is the median of its first three epochs, and the first
  // probe waits for them. (A guard: no change seen, no sweep repeated, the
  // top kept.)
  auto f = [](double w) { return 100 - 90 * w; };
  HillClimber h(BalanceParams{}, 0.5);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-0.01, 0.01);
  double s[3] = {h.share(), h.share(), h.share()};
  double got = 0;
  for (int e = 0; e < 400; ++e) {
    const double rate = (f(s[0]) + f(s[1]) + f(s[2])) / 3 * (1 + u(rng));
    s[2] = s[1], s[1] = s[0];
    s[0] = h.update(rate, 1.0, -1);
    if (e >= 20) got += f(s[0]);
  }
  EXPECT_GE(got / 380, 99.8) << "the rate after the sweep, of 100 at the top";
  EXPECT_EQ(h.changes(), 0u);
  EXPECT_EQ(h.sweeps(), 1u);
  EXPECT_EQ(h.share(), 0);
}

TEST(HillClimber, ASweepMeasuredOnARampIsDoneAgain) {
  // The pipeline starts slowly (the first 8 epochs at 50% of their rate,
  // rising), so the sweep's early points are measured low and the last, 1,
  // looks best; a quarter share is best by far, and from 1 no climb reaches
  // it (the curve dips between). Measured again after the last point, 0 has
  // moved past the band: the sweep is done again, on the level.
  auto f = [](double w, int e) {
    const double xs[] = {0, 0.25, 0.5, 0.75, 1}, ys[] = {60, 100, 50, 50, 70};
    double r = ys[4];
    for (int i = 0; i < 4; ++i)
      if (w <= xs[i + 1] + 1e-12) {
        r = ys[i] + (w - xs[i]) / (xs[i + 1] - xs[i]) * (ys[i + 1] - ys[i]);
        break;
      }
    return r * std::min(1.0, 0.5 + e / 16.0);
  };
  HillClimber h(BalanceParams{}, 0.5);
  auto s = climb(h, 300, f, 0.005);
  EXPECT_EQ(h.ramp_sweeps(), 1u);
  EXPECT_EQ(h.sweeps(), 1u) << "(a sweep done again counts once)";
  EXPECT_NEAR(mean(s, 40, 300), 0.25, 0.05);
}

TEST(HillClimber, ADeviceShareIsMeasuredOnceTheDeviceDelivers) {
  // The device is best (all of it: 100, none: 50), but for its first 12
  // epochs (a GPU loading its kernels) no device batch finishes: an epoch at
  // share w lets only the CPU's part out, 50 (1 - w), and has no p99. The
  // sweep measures each device share once the device delivers, so it ends
  // at 1; measured at once, every device share looked worse than 0 and the
  // climb had to walk up from there.
  auto run = [](bool wait) {
    BalanceParams p;
    p.wait_for_device = wait;
    HillClimber h(p, 0.5);
    std::vector<double> out;
    double s = h.share();
    for (int e = 0; e < 200; ++e) {
      const bool stalled = e < 12;
      const double rate = stalled ? 50 * (1 - s) : 50 + 50 * s;
      s = h.update(rate, 1.0, s > 0 && !stalled ? 100 : -1);
      out.push_back(s);
    }
    return std::make_pair(out, h.waits());
  };
  auto [with, waits] = run(true);
  EXPECT_GT(mean(with, 30, 60), 0.95);
  EXPECT_GT(waits, 0u);
  EXPECT_LE(waits, uint64_t(HillClimber::kMaxWait) + 4) << "waits only while the device has not delivered";
  auto [without, none] = run(false);
  EXPECT_LT(mean(without, 30, 60), 0.9) << "(the case this test is about)";
  EXPECT_EQ(none, 0u);
}

TEST(HillClimber, WidensItsBandToTheNoiseItMeasures) {
  // +-12% noise on every epoch, six times the 2% band, on a router-like
  // curve (all on the CPU best, a small share costing much). With the band
  // fixed, a lucky epoch at a worse share becomes home and noise alone turns
  // the climb (about 83% of the best); the band it measures (twice the mean
  // change between epochs at one share) keeps it at the top.
  auto f = [](double w, int) { return w < 0.25 ? 288 - 600 * w : 134 - 90 * (w - 0.25); };
  HillClimber h(BalanceParams{}, 0.5);
  auto s = climb(h, 1000, f, 0.12, {}, true);
  EXPECT_GT(h.band(), 0.05);
  EXPECT_GE(achieved(s, 100, 1000, f), 96);
}

TEST(HillClimber, EpochsStretchToTheDeviceBatchesLatency) {
  // A quarter INTERVAL to settle a move, a whole one to measure; but never
  // less than the last p99 of device batches to settle (the old share's
  // batches in flight finish in it), twice it to measure (completions come
  // in bursts), and at most kMaxStretch INTERVALs.
  const uint64_t interval = 20000000;  // 20 ms
  HillClimber h(BalanceParams{}, 0.5);
  auto want = [&](double p99_us) {
    const double p = std::max(0.0, p99_us) * 1000;
    const double w = h.settling() ? std::max(interval / 4.0, p) : std::max(double(interval), 2 * p);
    return uint64_t(std::min(w, interval * HillClimber::kMaxStretch));
  };
  EXPECT_EQ(h.epoch_ns(interval), interval / 4) << "the sweep's first point settles; no device batch yet";
  int settles = 0, measures = 0;
  for (int e = 0; e < 60; ++e) {
    const double p99 = e % 3 == 0 ? -1 : e % 3 == 1 ? 50000 : 5e6;  // none, 50 ms, 5 s
    h.update(100 - e % 7, 1, p99);
    EXPECT_EQ(h.epoch_ns(interval), want(p99)) << "epoch " << e;
    (h.settling() ? settles : measures) += p99 == 50000;
  }
  EXPECT_GT(settles, 0);
  EXPECT_GT(measures, 0);
  h.update(100, 1, 50000);
  EXPECT_GE(h.epoch_ns(interval), 50000000u);
  h.update(100, 1, 1e7);
  EXPECT_EQ(h.epoch_ns(interval), uint64_t(interval * HillClimber::kMaxStretch));
}

TEST(HillClimber, AtZeroAnEpochInWhichDeviceBatchesFinishIsStillDraining) {
  // All-CPU is best (100; any device share 50). After a device share, the
  // first two epochs at 0 still finish its batches, in a burst (180). The
  // sweep's end measures 0 again: taken at once, the burst looked like a
  // ramp and the sweep was done again; waited out, it ends at 0 at once.
  auto run = [](bool wait) {
    BalanceParams p;
    p.wait_for_device = wait;
    HillClimber h(p, 0.5);
    double s = h.share(), last_device = -1;
    int since_device = 99;
    for (int e = 0; e < 40; ++e) {
      since_device = s > 0 ? 0 : since_device + 1;
      if (s > 0) last_device = e;
      const bool draining = s == 0 && last_device >= 0 && since_device <= 2;
      s = h.update(s > 0 ? 50 : draining ? 180 : 100, 1.0, s > 0 || draining ? 5000 : -1);
    }
    return std::make_tuple(h.ramp_sweeps(), h.waits(), s);
  };
  auto [ramps, waits, share] = run(true);
  EXPECT_EQ(ramps, 0u);
  EXPECT_GT(waits, 0u);
  EXPECT_EQ(share, 0);
  auto [ramps_without, none, share_without] = run(false);
  EXPECT_GT(ramps_without, 0u) << "(the case this test is about)";
  EXPECT_EQ(none, 0u);
}

// Workers that share a device (the model): a worker's host work per packet
// is 1 on the CPU and H for a packet it sends to the device, which serves
// at most D packets per unit of time for all of them together; past that,
// every worker waits for its device packets (order is kept), and all slow
// by the same factor. Worker i's rate with shares s:
//   u_i = 1 / ((1 - s_i) + s_i H),  r_i = u_i min(1, D / sum_j s_j u_j).
// With 16 workers, H 0.4 and D 6 the best common share is about 0.31 (19.6
// against 16 all-CPU and 6 all-device). A worker that raises its own share
// gains (its u_i rises, the common factor falls by a sixteenth as much), so
// climbers per worker climb to the device together.
namespace {
constexpr int kWorkers = 16;
constexpr double kHostCost = 0.4, kDevice = 6;
std::vector<double> shared_device_rates(const std::vector<double>& s) {
  std::vector<double> r(s.size());
  double demand = 0;
  for (size_t i = 0; i < s.size(); ++i) demand += s[i] * (r[i] = 1 / ((1 - s[i]) + s[i] * kHostCost));
  const double f = demand > kDevice ? kDevice / demand : 1;
  for (double& x : r) x *= f;
  return r;
}
double total_at(double share) {
  double t = 0;
  for (double r : shared_device_rates(std::vector<double>(kWorkers, share))) t += r;
  return t;
}
double best_fixed() {
  double top = 0;
  for (int k = 0; k <= 100; ++k) top = std::max(top, total_at(k / 100.0));
  return top;
}
}  // namespace

TEST(SharedClimber, FindsTheBestCommonShareWhereClimbersPerWorkerOverrunTheDevice) {
  const double top = best_fixed();
  ASSERT_GT(top, 1.2 * total_at(0)) << "the model: a split beats all-CPU";
  ASSERT_LT(total_at(1), 0.5 * total_at(0)) << "the model: all-device is far worse";
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(-0.03, 0.03);
  const int epochs = 600;
  // Climbers per worker, each on its own worker's rate.
  std::vector<HillClimber> own(kWorkers, HillClimber(BalanceParams{}, 0.5));
  std::vector<double> s(kWorkers, 0.5);
  double own_late = 0;
  for (int e = 0; e < epochs; ++e) {
    auto r = shared_device_rates(s);
    double t = 0;
    for (int i = 0; i < kWorkers; ++i)
      t += r[size_t(i)], s[size_t(i)] = own[size_t(i)].update(r[size_t(i)] * (1 + noise(rng)), 1, 100);
    if (e >= epochs / 3) own_late += t;
  }
  const int late_epochs = epochs - epochs / 3;
  own_late /= late_epochs;
  // One climber for all: every worker reports its packets out, ticks of a
  // sixteenth of the interval, in turn (a worker's order within a tick
  // changes nothing).
  const uint64_t interval = 16000000;  // 16 ms (the device batches' p99: 100 us)
  SharedClimber all(BalanceParams{}, 0.5, kWorkers, interval);
  std::vector<double> out(kWorkers, 0);
  double all_late = 0;
  uint64_t late_ticks = 0, now = 1;
  const uint64_t ticks = uint64_t(epochs) * 16, tick = interval / 16;
  for (uint64_t k = 0; k < ticks; ++k, now += tick) {
    auto r = shared_device_rates(std::vector<double>(kWorkers, all.share()));
    double t = 0;
    for (int i = 0; i < kWorkers; ++i) {
      t += r[size_t(i)];
      out[size_t(i)] += r[size_t(i)] * double(tick) * (1 + noise(rng));
      all.observe(uint32_t(i), now, uint64_t(out[size_t(i)]), 1.0, [&] { return all.share() > 0 ? 100 : -1; });
    }
    if (k >= ticks / 3) all_late += t, ++late_ticks;
  }
  all_late /= double(late_ticks);
  EXPECT_GT(all.updates(), uint64_t(epochs) / 2) << "epochs ended";
  EXPECT_GE(all_late, 0.95 * top) << "one climber on the total rate: NBA's near-optimal";
  EXPECT_LT(own_late, 0.8 * top) << "climbers per worker climb past the best common share (the model's point)";
  fmt::print("the best common rate {:.1f}: one climber {:.1f}%, one per worker {:.1f}% (all-CPU {:.1f}%)\n", top,
             100 * all_late / top, 100 * own_late / top, 100 * total_at(0) / top);
}

TEST(SharedClimber, AnIdleWorkerDoesNotStallTheEpochs) {
  // Worker 1 never reports: after an eighth of the interval past its end,
  // worker 0 ends each epoch alone.
  const uint64_t interval = 8000;
  SharedClimber all(BalanceParams{}, 0, 2, interval);
  uint64_t out = 0, now = 1;
  for (int k = 0; k < 400; ++k, now += 500) all.observe(0, now, out += 500, 1.0, [] { return int64_t(-1); });
  EXPECT_GT(all.updates(), 0u);
  // a tick is 1/16 of the interval: no epoch shorter than its length, none
  // longer than its length, its grace and a tick
  EXPECT_LE(all.updates(), 400u * 500 / (interval / 4));
  EXPECT_GE(all.updates(), 400u * 500 / (interval + interval / 8 + 500) - 1);
  EXPECT_NEAR(all.stats().rate.load(), 1e9, 1e8) << "one packet per ns (the idle worker's none)";
}

TEST(SharedClimber, ManyThreadsReportWithoutLossOrRace) {
  // Four threads report as workers do (ThreadSanitizer runs this): every
  // epoch ends once, and every packet they report is counted in one.
  const uint64_t interval = 2000000;  // 2 ms
  SharedClimber all(BalanceParams{}, 0, 4, interval);
  for (uint32_t w = 0; w < 4; ++w) all.observe(w, 1, 0, 1.0, [] { return int64_t(-1); });  // (begun at 0 packets)
  std::atomic<bool> stop{false};
  const auto t0 = std::chrono::steady_clock::now();
  auto clock = [&] {
    return 2 + uint64_t(
                   std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count());
  };
  std::vector<uint64_t> sent(4, 0);
  std::vector<std::thread> th;
  for (uint32_t w = 0; w < 4; ++w)
    th.emplace_back([&, w] {
      while (!stop.load()) all.observe(w, clock(), ++sent[w], 1.0, [] { return int64_t(-1); });
    });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  stop = true;
  for (auto& t : th) t.join();
  // a last epoch, ended by worker 0 past the grace: it counts what is left
  const uint64_t later = clock() + 2 * interval;
  for (uint32_t w = 0; w < 4; ++w) all.observe(w, later, sent[w], 1.0, [] { return int64_t(-1); });
  EXPECT_GT(all.updates(), 10u);
  EXPECT_EQ(all.stats().epochs.load(), all.updates()) << "the climber saw each epoch once";
  EXPECT_EQ(all.counted(), sent[0] + sent[1] + sent[2] + sent[3]);
}

// Error diffusion gives every worker its share to within one run, and phases
// i/N keep N workers from sending their device runs at the same time.
TEST(ShareDiffuser, PhasesSpreadTheWorkersDeviceRunsAndKeepEachOnesShare) {
  for (int n : {2, 4, 16}) {
    for (double share : {0.0, 0.1, 0.25, 0.31, 0.5, 0.75, 0.97, 1.0}) {
      SCOPED_TRACE(fmt::format("{} workers at {}", n, share));
      std::vector<offload::ShareDiffuser> spread, in_step(size_t(n), offload::ShareDiffuser(0));
      for (int i = 0; i < n; ++i) spread.emplace_back(double(i) / n);
      std::vector<int> device(size_t(n), 0);
      int most_spread = 0, most_in_step = 0;
      const int runs = 1000;
      for (int r = 1; r <= runs; ++r) {
        int now = 0, now_in_step = 0;
        for (size_t i = 0; i < size_t(n); ++i) {
          const bool d = spread[i].next(share);
          now += d, device[i] += d;
          now_in_step += in_step[i].next(share);
        }
        most_spread = std::max(most_spread, now);
        most_in_step = std::max(most_in_step, now_in_step);
        for (size_t i = 0; i < size_t(n); ++i) ASSERT_LE(std::abs(device[i] - r * share), 1.0) << "worker " << i;
      }
      EXPECT_LE(most_spread, int(std::floor(n * share + 1e-9)) + 1);
      // (in step, every worker's device run is at the same time)
      EXPECT_EQ(most_in_step, share > 0 ? n : 0);
    }
  }
}
