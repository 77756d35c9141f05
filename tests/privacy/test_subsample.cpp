// Amplification of a whole run by a hidden sample without replacement (privacy/subsample.h):
// the closed form log(1 + q (e^eps - 1)) of Balle, Barthe & Gaboardi 2018 (Sec. 5) against
// values computed independently (mpmath, 30 digits), its inverse, the conversion at delta / q,
// and the accountant and calibration that use it.
#include <cmath>
#include <gtest/gtest.h>

#include "dpgnn/privacy/accountant.h"
#include "dpgnn/privacy/calibration.h"
#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/rdp.h"
#include "dpgnn/privacy/subsample.h"

namespace dpgnn::privacy {
namespace {

TEST(Subsample, AmplifiedEpsilonMatchesTheClosedForm) {
  // mpmath: log(1 + q (exp(eps) - 1)) with mp.dps = 30.
  EXPECT_NEAR(amplified_epsilon(3.0, 0.09), 0.99978531732709497082, 1e-14);
  EXPECT_NEAR(amplified_epsilon(1.0, 0.5), 0.62011450695827752463, 1e-14);
  EXPECT_NEAR(amplified_epsilon(10.0, 0.01), 5.39931433653905026162, 1e-13);
  EXPECT_EQ(amplified_epsilon(2.5, 1.0), 2.5);
  // Large epsilon: 1000 + log(1/2 + e^-1000 / 2), no overflow.
  EXPECT_NEAR(amplified_epsilon(1000.0, 0.5), 999.30685281944005469, 1e-10);
  // The inverse: log(1 + (e^1 - 1) / 0.09).
  EXPECT_NEAR(inner_epsilon(1.0, 0.09), 3.00032273704653520355, 1e-13);
  for (double q : {0.01, 0.09, 0.5, 1.0})
    for (double e : {0.0, 0.1, 1.0, 8.0, 50.0})
      EXPECT_NEAR(amplified_epsilon(inner_epsilon(e, q), q), e, 1e-12 * std::max(1.0, e)) << q << " " << e;
  EXPECT_THROW(amplified_epsilon(1.0, 0.0), std::invalid_argument);
  EXPECT_THROW(amplified_epsilon(1.0, 1.5), std::invalid_argument);
  EXPECT_THROW(amplified_epsilon(-1.0, 0.5), std::invalid_argument);
}

TEST(Subsample, TextRoundTripsAndBadTextIsRefused) {
  const Subsample s = Subsample::of(14666, 1320);
  EXPECT_EQ(s.to_string(), "subsample n=14666 m=1320");
  EXPECT_EQ(Subsample::parse(s.to_string()), s);
  EXPECT_DOUBLE_EQ(s.rate(), 1320.0 / 14666.0);
  for (const char* bad : {"", "subsample", "subsample n=10", "subsample n=10 m=11", "subsample n=10 m=0",
                          "subsample n=x m=1", "subsample m=1 n=10", "subsample n=10 m=2 extra", "wor n=10 m=2"})
    EXPECT_THROW(Subsample::parse(bad), std::invalid_argument) << bad;
}

TEST(Subsample, TheRunEpsilonConvertsAtDeltaOverQAndAmplifies) {
  const auto orders = default_orders();
  const auto rdp = rdp_per_step(Mechanism::gaussian(2.0), orders);
  const double delta = 1e-5;
  const Subsample s = Subsample::of(1000, 90);
  const double inner = epsilon_from_rdp(orders, rdp, delta / s.rate()).epsilon;
  EXPECT_NEAR(epsilon_of_run(orders, rdp, delta, Conversion::kBalle, s).epsilon,
              std::log1p(s.rate() * std::expm1(inner)), 1e-14);
  // Without a subsample: the plain conversion.
  EXPECT_EQ(epsilon_of_run(orders, rdp, delta, Conversion::kBalle, std::nullopt).epsilon,
            epsilon_from_rdp(orders, rdp, delta).epsilon);
  // Sampling amplifies: smaller epsilon than the whole data set at the same delta.
  EXPECT_LT(epsilon_of_run(orders, rdp, delta, Conversion::kBalle, s).epsilon,
            epsilon_from_rdp(orders, rdp, delta).epsilon);
  // delta / q must stay below 1.
  EXPECT_THROW(epsilon_of_run(orders, rdp, 0.5, Conversion::kBalle, Subsample::of(10, 1)), std::invalid_argument);
  // delta_of_run inverts it: the delta at the amplified epsilon is at most delta (the same order).
  const double eps = epsilon_of_run(orders, rdp, delta, Conversion::kBalle, s).epsilon;
  EXPECT_LE(delta_of_run(orders, rdp, eps, Conversion::kBalle, s).delta, delta * (1 + 1e-9));
}

TEST(Subsample, TheAccountantAmplifiesSerialisesAndKeepsOneSubsample) {
  Accountant plain, sampled;
  plain.step(Mechanism::gaussian(3.0), 20);
  sampled.step(Mechanism::gaussian(3.0), 20);
  const Subsample s = Subsample::of(500, 50);
  sampled.set_subsample(s);
  sampled.set_subsample(s);  // the same again: fine (a resumed run sets it from config and ledger)
  EXPECT_THROW(sampled.set_subsample(Subsample::of(500, 51)), std::invalid_argument);
  const double delta = 1e-5;
  EXPECT_NEAR(sampled.epsilon(delta).epsilon,
              amplified_epsilon(Accountant(plain).epsilon(delta / 0.1).epsilon, 0.1), 1e-14);
  EXPECT_TRUE(sampled.would_exceed(sampled.epsilon(delta).epsilon, delta, Mechanism::gaussian(3.0)));
  EXPECT_FALSE(sampled.would_exceed(plain.epsilon(delta).epsilon, delta, Mechanism::gaussian(3.0)));
  const std::string text = sampled.serialise();
  EXPECT_EQ(text.rfind("subsample n=500 m=50\n", 0), 0u) << text;
  Accountant back;
  back.restore(text);
  ASSERT_TRUE(back.subsample().has_value());
  EXPECT_EQ(*back.subsample(), s);
  EXPECT_EQ(back.epsilon(delta).epsilon, sampled.epsilon(delta).epsilon);
  EXPECT_THROW(back.restore("1 gaussian z=2\nsubsample n=5 m=1\n"), std::invalid_argument);
}

TEST(Subsample, CalibrationMeetsTheAmplifiedTargetWithLessNoise) {
  CalibrationOptions plain, sampled;
  sampled.subsample = Subsample::of(10000, 900);
  const Mechanism step = Mechanism::group_wor(900, 900, 1, 1.0);
  const auto a = calibrate_noise_multiplier(step, 100, 1.0, 1e-5, plain);
  const auto b = calibrate_noise_multiplier(step, 100, 1.0, 1e-5, sampled);
  EXPECT_LT(b.noise_multiplier, a.noise_multiplier);
  Accountant acc;
  acc.set_subsample(*sampled.subsample);
  acc.step(step.with_noise_multiplier(b.noise_multiplier), 100);
  EXPECT_LE(acc.epsilon(1e-5).epsilon, 1.0);
  EXPECT_GT(acc.epsilon(1e-5).epsilon, 1.0 * (1 - 1e-5));
}

}  // namespace
}  // namespace dpgnn::privacy
