// The adaptive CPU/device split: the hill climber (offload/balance.hh) on
// made-up throughput curves (OffloadBalancer's adaptive mode in real graphs:
// offload_test.cc).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "shoal/offload/balance.hh"

using namespace shoal;
using offload::BalanceParams;
using offload::HillClimber;

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
  // load returns: climbing resumes from where it was
  double s = h.update(100, 0.9, -1);
  EXPECT_EQ(h.state(), HillClimber::State::Climbing);
  EXPECT_NEAR(s, 0.85, 1e-9);
}
