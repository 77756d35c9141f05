// The Accountant: composition of heterogeneous steps, exact restore from its text history,
// would_exceed exact at the boundary, and cheap per-step calls.
#include <gtest/gtest.h>

#include <cmath>
#include <ctime>

#include "dpgnn/privacy/accountant.h"
#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/rdp.h"

namespace dpgnn::privacy {
namespace {

TEST(Accountant, HeterogeneousStepsComposeToTheSumOfPerStepRdp) {
  // DRW-D: the number of subgraphs changes at each re-sampling; plus a Gaussian release.
  const Mechanism a = Mechanism::wor(1000, 10, 1.0), b = Mechanism::wor(980, 10, 1.0),
                  c = Mechanism::gaussian(5.0), d = Mechanism::poisson(0.01, 1.2);
  Accountant acc;
  acc.step(a, 30);
  acc.step(b, 20);
  acc.step(c);
  acc.step(d, 7);
  const std::vector<double> orders = default_orders();
  const std::vector<double> ra = rdp_per_step(a, orders), rb = rdp_per_step(b, orders),
                            rc = rdp_per_step(c, orders), rd = rdp_per_step(d, orders);
  const std::vector<double> total = acc.total_rdp();
  std::vector<double> want(orders.size());
  for (std::size_t i = 0; i < orders.size(); ++i) {
    want[i] = 30 * ra[i] + 20 * rb[i] + rc[i] + 7 * rd[i];
    EXPECT_NEAR(total[i], want[i], 1e-12 * want[i]);
  }
  const EpsilonAtOrder e = acc.epsilon(1e-5);
  const EpsilonAtOrder e_want = epsilon_from_rdp(orders, want, 1e-5);
  EXPECT_NEAR(e.epsilon, e_want.epsilon, 1e-12 * e_want.epsilon);
  EXPECT_EQ(acc.total_steps(), 58);
}

TEST(Accountant, EpsilonGrowsWithEveryStep) {
  Accountant acc;
  EXPECT_EQ(acc.epsilon(1e-5).epsilon, 0.0);
  double previous = 0.0;
  for (int i = 0; i < 20; ++i) {
    acc.step(Mechanism::wor(500, 25, 1.1), 5);
    const double e = acc.epsilon(1e-5).epsilon;
    EXPECT_GT(e, previous);
    previous = e;
  }
}

TEST(Accountant, StepsOneByOneAndInBulkGiveTheSameHistoryAndEpsilon) {
  const Mechanism m = Mechanism::poisson(0.004, 1.1);
  Accountant one_by_one, bulk;
  for (int i = 0; i < 1000; ++i) one_by_one.step(m);
  bulk.step(m, 600);
  bulk.step(m, 400);
  EXPECT_EQ(one_by_one.serialise(), bulk.serialise());
  EXPECT_EQ(one_by_one.epsilon(1e-5).epsilon, bulk.epsilon(1e-5).epsilon);
  ASSERT_EQ(bulk.history().size(), 1u);
  EXPECT_EQ(bulk.history()[0].count, 1000);
}

TEST(Accountant, SerialisedHistoryRestoresTheSameEpsilonBitForBit) {
  Accountant acc;
  acc.step(Mechanism::wor(12345, 77, 0.8123456789012345), 100);
  acc.step(Mechanism::dpgnn(90941, 100, 7, 2, 1.0 / 3.0), 3);
  acc.step(Mechanism::poisson(1.0 / 7.0, 2.0 / 3.0), 11);
  acc.step(Mechanism::gaussian(std::sqrt(2.0)));
  const std::string text = acc.serialise();
  Accountant resumed;
  resumed.restore(text);
  EXPECT_EQ(resumed.history(), acc.history());
  EXPECT_EQ(resumed.serialise(), text);
  EXPECT_EQ(resumed.epsilon(1e-5).epsilon, acc.epsilon(1e-5).epsilon);
  EXPECT_EQ(resumed.epsilon(1e-5).order, acc.epsilon(1e-5).order);
  EXPECT_EQ(resumed.delta(2.0).delta, acc.delta(2.0).delta);
  // One event per line, readable.
  EXPECT_EQ(Accountant::event_line(Mechanism::wor(1000, 10, 1.0), 5), "5 wor n=1000 m=10 z=1");
}

TEST(Accountant, RestoreRejectsMalformedLinesAndKeepsTheOldHistory) {
  Accountant acc;
  acc.step(Mechanism::gaussian(2.0));
  const std::string before = acc.serialise();
  for (const char* bad : {"0 wor n=10 m=2 z=1\n", "x wor n=10 m=2 z=1\n", "3 wor n=10 m=20 z=1\n",
                          "3 wor n=10 m=2\n", "3 wor n=10 m=2 z=1 q=0.5\n", "3 gumbel z=1\n",
                          "3 poisson q=0.1 z=-1\n", "3 poisson q=0.1x z=1\n"}) {
    EXPECT_THROW(acc.restore(std::string("1 gaussian z=2\n") + bad), std::invalid_argument) << bad;
    EXPECT_EQ(acc.serialise(), before);
  }
}

TEST(Accountant, WouldExceedIsExactAtTheBoundary) {
  const Mechanism m = Mechanism::wor(1000, 10, 1.0);
  Accountant acc;
  acc.step(m, 99);
  Accountant after = acc;
  after.step(m);
  const double e100 = after.epsilon(1e-5).epsilon;
  // Exactly at the target: allowed. One ulp below the value: the step must be refused.
  EXPECT_FALSE(acc.would_exceed(e100, 1e-5, m));
  EXPECT_TRUE(acc.would_exceed(std::nextafter(e100, 0.0), 1e-5, m));
  EXPECT_TRUE(acc.would_exceed(e100, 1e-5, m, 2));
  // would_exceed does not record anything.
  EXPECT_EQ(acc.total_steps(), 99);
}

TEST(Accountant, HundredThousandStepsWithEpsilonEachStepAreCheap) {
  Accountant acc;
  const Mechanism m = Mechanism::poisson(0.01, 1.0);
  // CPU time, not wall time: the suite shares a 2-core machine with parallel builds.
  const std::clock_t start = std::clock();
  double e = 0.0;
  for (int i = 0; i < 100000; ++i) {
    if (!acc.would_exceed(1e9, 1e-5, m)) acc.step(m);
    e = acc.epsilon(1e-5).epsilon;
  }
  const double seconds = static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  EXPECT_EQ(acc.total_steps(), 100000);
  EXPECT_GT(e, 0.0);
  EXPECT_LT(seconds, 10.0);
}

TEST(Accountant, RejectsZeroCountsAndBadDelta) {
  Accountant acc;
  EXPECT_THROW(acc.step(Mechanism::gaussian(1.0), 0), std::invalid_argument);
  EXPECT_THROW(acc.epsilon(0.0), std::invalid_argument);
  EXPECT_THROW(Accountant({0.5, 2.0}), std::invalid_argument);
}

}  // namespace
}  // namespace dpgnn::privacy
