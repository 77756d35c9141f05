// Calibration: the noise multiplier found meets the target and is the smallest that does
// (a 1% smaller one exceeds it), for every scheme; steps calibration is exact; unreachable
// targets are reported.
#include <gtest/gtest.h>

#include <cmath>

#include "dpgnn/privacy/calibration.h"
#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/rdp.h"

namespace dpgnn::privacy {
namespace {

double epsilon_of(const Mechanism& m, std::int64_t steps, double delta) {
  const std::vector<double> orders = default_orders();
  std::vector<double> rdp = rdp_per_step(m, orders);
  for (double& r : rdp) r *= static_cast<double>(steps);
  return epsilon_from_rdp(orders, rdp, delta).epsilon;
}

TEST(Epsilon, GrowsWithStepsAndRateAndShrinksWithNoiseForEveryScheme) {
  const double delta = 1e-5;
  // Steps.
  for (const Mechanism& m : {Mechanism::wor(1000, 10, 1.0), Mechanism::poisson(0.01, 1.0),
                             Mechanism::dpgnn(90941, 100, 3, 2, 1.0), Mechanism::gaussian(20.0)}) {
    double previous = 0.0;
    for (std::int64_t t : {1, 10, 100, 1000, 10000}) {
      const double e = epsilon_of(m, t, delta);
      EXPECT_GT(e, previous) << m.to_string() << " T=" << t;
      previous = e;
    }
  }
  // Rate (below 1) and noise.
  double previous_wor = 0.0, previous_poisson = 0.0, previous_dpgnn = 0.0;
  for (std::int64_t m : {5, 10, 50, 100, 200}) {
    const double e_wor = epsilon_of(Mechanism::wor(1000, m, 1.0), 100, delta);
    const double e_poisson = epsilon_of(Mechanism::poisson(m / 1000.0, 1.0), 100, delta);
    const double e_dpgnn = epsilon_of(Mechanism::dpgnn(1000, m, 3, 1, 1.0), 100, delta);
    EXPECT_GT(e_wor, previous_wor) << m;
    EXPECT_GT(e_poisson, previous_poisson) << m;
    EXPECT_GT(e_dpgnn, previous_dpgnn) << m;
    previous_wor = e_wor;
    previous_poisson = e_poisson;
    previous_dpgnn = e_dpgnn;
  }
  previous_wor = previous_poisson = previous_dpgnn = INFINITY;
  for (double z : {0.7, 1.0, 2.0, 5.0, 20.0}) {
    const double e_wor = epsilon_of(Mechanism::wor(1000, 10, z), 100, delta);
    const double e_poisson = epsilon_of(Mechanism::poisson(0.01, z), 100, delta);
    const double e_dpgnn = epsilon_of(Mechanism::dpgnn(1000, 10, 3, 1, z), 100, delta);
    EXPECT_LT(e_wor, previous_wor) << z;
    EXPECT_LT(e_poisson, previous_poisson) << z;
    EXPECT_LT(e_dpgnn, previous_dpgnn) << z;
    previous_wor = e_wor;
    previous_poisson = e_poisson;
    previous_dpgnn = e_dpgnn;
  }
}

TEST(Calibration, CalibratedNoiseMeetsTheTargetAndOnePercentLessExceedsIt) {
  const double delta = 1e-5;
  struct Case {
    Mechanism sampling;
    std::int64_t steps;
    double target;
  };
  const std::vector<Case> cases = {
      {Mechanism::wor(1000, 10, 1.0), 1000, 2.0},
      {Mechanism::wor(60000, 256, 1.0), 10000, 8.0},
      {Mechanism::poisson(0.01, 1.0), 500, 1.0},
      {Mechanism::dpgnn(90941, 1000, 7, 2, 1.0), 200, 4.0},
      {Mechanism::gaussian(1.0), 3, 5.0},
  };
  for (const Case& c : cases) {
    const NoiseCalibration cal = calibrate_noise_multiplier(c.sampling, c.steps, c.target, delta);
    const Mechanism found = c.sampling.with_noise_multiplier(cal.noise_multiplier);
    EXPECT_LE(epsilon_of(found, c.steps, delta), c.target) << found.to_string();
    EXPECT_EQ(epsilon_of(found, c.steps, delta), cal.epsilon);
    const Mechanism less = c.sampling.with_noise_multiplier(0.99 * cal.noise_multiplier);
    EXPECT_GT(epsilon_of(less, c.steps, delta), c.target) << less.to_string();
  }
}

TEST(Calibration, PlainGaussianNoiseMatchesTheClosedFormInverse) {
  // One Gaussian step with the Mironov conversion at a single order alpha:
  // eps = alpha/(2 z^2) + ln(1/delta)/(alpha-1)  =>  z = sqrt(alpha / (2 (eps - ln(1/delta)/(alpha-1)))).
  CalibrationOptions opt;
  opt.orders = {16.0};
  opt.conversion = Conversion::kMironov;
  opt.relative_tolerance = 1e-12;
  const double eps = 3.0, delta = 1e-5, a = 16.0;
  const double want = std::sqrt(a / (2 * (eps - std::log(1 / delta) / (a - 1))));
  const NoiseCalibration cal = calibrate_noise_multiplier(Mechanism::gaussian(1.0), 1, eps, delta, opt);
  EXPECT_NEAR(cal.noise_multiplier, want, 1e-10 * want);
}

TEST(Calibration, LargestStepCountIsExactAtTheBoundary) {
  const Mechanism m = Mechanism::wor(1000, 10, 1.0);
  const StepsCalibration c = calibrate_steps(m, 3.0, 1e-5);
  ASSERT_GT(c.steps, 1);
  EXPECT_LE(epsilon_of(m, c.steps, 1e-5), 3.0);
  EXPECT_GT(epsilon_of(m, c.steps + 1, 1e-5), 3.0);
  EXPECT_EQ(c.epsilon, epsilon_of(m, c.steps, 1e-5));
  // Even one step exceeding the target gives zero steps.
  EXPECT_EQ(calibrate_steps(Mechanism::gaussian(0.5), 0.1, 1e-5).steps, 0);
  // A cap is respected.
  EXPECT_EQ(calibrate_steps(Mechanism::wor(1000, 1, 50.0), 5.0, 1e-5, 1000).steps, 1000);
}

TEST(Calibration, UnreachableTargetsAndBadInputAreReported) {
  // With at most 1e3 noise the target cannot be reached.
  CalibrationOptions opt;
  opt.max_noise_multiplier = 1e3;
  EXPECT_THROW(calibrate_noise_multiplier(Mechanism::wor(100, 50, 1.0), 100000, 1e-3, 1e-5, opt),
               std::invalid_argument);
  EXPECT_THROW(calibrate_noise_multiplier(Mechanism::wor(100, 5, 1.0), 10, 0.0, 1e-5),
               std::invalid_argument);
  EXPECT_THROW(calibrate_noise_multiplier(Mechanism::wor(100, 5, 1.0), 0, 1.0, 1e-5),
               std::invalid_argument);
  EXPECT_THROW(calibrate_noise_multiplier(Mechanism::wor(100, 5, 1.0), 10, 1.0, 1.0),
               std::invalid_argument);
  EXPECT_THROW(calibrate_steps(Mechanism::wor(100, 5, 1.0), -1.0, 1e-5), std::invalid_argument);
}

}  // namespace
}  // namespace dpgnn::privacy
