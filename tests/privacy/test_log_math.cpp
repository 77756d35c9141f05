// The numerical helpers under every accountant: log-sum-exp, the remainders of expm1 and
// log1p near zero, log-binomials, and the log-space quadrature.
#include <gtest/gtest.h>

#include <cmath>

#include "log_math.h"

namespace dpgnn::privacy::detail {
namespace {

TEST(LogMath, LogSumExpHandlesHugeAndEmptyInputs) {
  EXPECT_NEAR(log_sum_exp({1000.0, 1000.0}), 1000.0 + std::log(2.0), 1e-12);
  EXPECT_NEAR(log_sum_exp({-1000.0, 0.0}), 0.0, 1e-300);
  EXPECT_EQ(log_sum_exp({}), kNegInf);
  EXPECT_EQ(log_add(kNegInf, 3.0), 3.0);
  LogSum s;
  for (double x : {-5.0, 700.0, 2.0, 700.0}) s.add(x);
  EXPECT_NEAR(s.value(), 700.0 + std::log(2.0), 1e-12);
}

TEST(LogMath, RemaindersOfExpm1AndLog1pKeepFullPrecisionNearZero) {
  // Oracles: the Taylor series summed in long double with many terms (no cancellation for
  // these arguments), and the direct formula in long double where it does not cancel.
  for (double x : {1e-12, -3e-9, 1e-4, 0.3, -0.45, 0.7, 5.0}) {
    long double want_e = 0.0L, term = static_cast<long double>(x);
    for (int k = 2; k < 80; ++k) {
      term *= static_cast<long double>(x) / k;  // x^k / k!
      want_e += term;
    }
    EXPECT_NEAR(expm1_minus_x(x), static_cast<double>(want_e),
                1e-15 * std::fabs(static_cast<double>(want_e))) << x;
    long double want_l = 0.0L;
    if (std::fabs(x) < 0.5) {
      long double power = static_cast<long double>(x);
      for (int k = 2; k < 200; ++k) {
        power *= static_cast<long double>(x);
        want_l += ((k % 2 == 0) ? -power : power) / k;
      }
    } else {
      want_l = std::log1p(static_cast<long double>(x)) - static_cast<long double>(x);
    }
    EXPECT_NEAR(log1p_minus_x(x), static_cast<double>(want_l),
                1e-14 * std::fabs(static_cast<double>(want_l))) << x;
  }
  EXPECT_NEAR(expm1_minus_x(1e-10), 5e-21, 1e-30);
  EXPECT_NEAR(log1p_minus_x(1e-10), -5e-21, 1e-30);
  EXPECT_NEAR(log_expm1(1e-20), std::log(1e-20), 1e-12);
  EXPECT_NEAR(log_expm1(800.0), 800.0, 1e-12);
}

TEST(LogMath, LogBinomialIsExactForSmallIntegers) {
  EXPECT_NEAR(log_binomial(10, 3), std::log(120.0), 1e-13);
  EXPECT_EQ(log_binomial(7, 0), 0.0);
  EXPECT_EQ(log_binomial(7, 7), 0.0);
  EXPECT_NEAR(log_binomial(2.5, 2), std::log(2.5 * 1.5 / 2), 1e-13);
}

TEST(LogMath, QuadratureIntegratesGaussiansOfAnyScaleToOne) {
  for (double s : {0.05, 1.0, 300.0})
    for (double mu : {0.0, 17.0}) {
      auto log_phi = [&](double z) {
        return -0.5 * std::log(2 * M_PI) - std::log(s) - (z - mu) * (z - mu) / (2 * s * s);
      };
      EXPECT_NEAR(log_integrate(log_phi, mu - 40 * s, mu + 40 * s, s / 4, 100.0), 0.0, 1e-13);
    }
  // A far-out bump of weight e^{500} next to one of weight 1.
  auto mixture = [](double z) {
    return log_add(-0.5 * std::log(2 * M_PI) - z * z / 2,
                   500.0 - 0.5 * std::log(2 * M_PI) - (z - 50) * (z - 50) / 2);
  };
  EXPECT_NEAR(log_integrate(mixture, -40, 90, 0.25, 200.0), 500.0, 1e-12);
}

}  // namespace
}  // namespace dpgnn::privacy::detail
