// Poisson-subsampled Gaussian (Mironov, Talwar & Zhang 2019): every row of the independent
// reference tables, the MNIST anchor, and the properties the bound must have.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <utility>

#include "dpgnn/privacy/conversion.h"
#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/rdp.h"
#include "rdp_internal.h"
#include "reference_csv.h"

namespace dpgnn::privacy {
namespace {

using testing::read_reference_csv;
using testing::relative_error;

TEST(RdpPoisson, PerStepRdpMatchesEveryReferenceRowIncludingFractionalOrders) {
  DPGNN_REQUIRE_REFERENCE();
  for (const auto& row : read_reference_csv("poisson_addremove_rdp_per_step.csv")) {
    const double got = rdp_poisson(row.at("sampling_rate"), row.at("noise_multiplier"),
                                   {row.at("order")})[0];
    EXPECT_LT(relative_error(got, row.at("rdp_per_step")), 1e-6)
        << "q=" << row.at("sampling_rate") << " z=" << row.at("noise_multiplier")
        << " alpha=" << row.at("order") << " got " << got << " want " << row.at("rdp_per_step");
  }
}

TEST(RdpPoisson, EpsilonAfterTStepsMatchesEveryReferenceRowAndOrder) {
  DPGNN_REQUIRE_REFERENCE();
  const std::vector<double> orders = default_orders();
  std::map<std::pair<double, double>, std::vector<double>> per_step;  // rows share (q, z)
  for (const auto& row : read_reference_csv("poisson_addremove_epsilon.csv")) {
    const std::pair<double, double> key{row.at("sampling_rate"), row.at("noise_multiplier")};
    if (!per_step.count(key)) per_step[key] = rdp_poisson(key.first, key.second, orders);
    std::vector<double> rdp = per_step[key];
    for (double& r : rdp) r *= row.at("steps");
    const EpsilonAtOrder e = epsilon_from_rdp(orders, rdp, row.at("delta"));
    EXPECT_LT(relative_error(e.epsilon, row.at("epsilon")), 1e-4)
        << "q=" << row.at("sampling_rate") << " z=" << row.at("noise_multiplier")
        << " T=" << row.at("steps") << " got " << e.epsilon << " want " << row.at("epsilon");
    EXPECT_DOUBLE_EQ(e.order, row.at("order"));
  }
}

TEST(RdpPoisson, MnistDpSgdAnchorGivesThePublishedEpsilonWithBothConversions) {
  // README anchor: q = 256/60000, z = 1.1, 14063 steps, delta = 1e-5.
  const std::vector<double> orders = default_orders();
  std::vector<double> rdp = rdp_poisson(256.0 / 60000.0, 1.1, orders);
  for (double& r : rdp) r *= 14063;
  const EpsilonAtOrder balle = epsilon_from_rdp(orders, rdp, 1e-5, Conversion::kBalle);
  EXPECT_NEAR(balle.epsilon, 2.596656, 2.596656 * 1e-4);
  EXPECT_DOUBLE_EQ(balle.order, 8.1);
  const EpsilonAtOrder mironov = epsilon_from_rdp(orders, rdp, 1e-5, Conversion::kMironov);
  EXPECT_NEAR(mironov.epsilon, 3.008381, 3.008381 * 1e-4);
}

TEST(RdpPoisson, RateOneIsThePlainGaussianAtEveryOrder) {
  const std::vector<double> orders = default_orders();
  for (double z : {0.5, 1.0, 3.7}) {
    const std::vector<double> rdp = rdp_poisson(1.0, z, orders);
    for (std::size_t i = 0; i < orders.size(); ++i)
      EXPECT_DOUBLE_EQ(rdp[i], orders[i] / (2 * z * z));
  }
}

TEST(RdpPoisson, QuadratureAgreesWithTheExactBinomialSumAtIntegerOrders) {
  // The fractional-order integral evaluated at integer orders must reproduce the finite
  // binomial sum (two independent computations of ln(A_alpha - 1)).
  for (double q : {1e-6, 1e-3, 0.05, 0.5, 0.99})
    for (double s : {0.3, 0.8, 2.0, 20.0, 1e4})
      for (long a : {2L, 3L, 7L, 16L, 64L}) {
        const double exact = detail::poisson_log_a_minus_1_integer(q, s, a);
        const double quad = detail::poisson_log_a_minus_1_quadrature(q, s, static_cast<double>(a));
        EXPECT_NEAR(quad, exact, 1e-9 * std::max(1.0, std::fabs(exact)))
            << "q=" << q << " s=" << s << " alpha=" << a;
      }
}

TEST(RdpPoisson, IsFiniteAndPositiveForTinyRatesHugeNoiseAndLargeOrders) {
  const std::vector<double> orders = default_orders();
  for (double q : {1e-9, 1e-4, 0.9})
    for (double z : {0.4, 1e3, 1e6}) {
      const std::vector<double> rdp = rdp_poisson(q, z, orders);
      for (std::size_t i = 0; i < rdp.size(); ++i) {
        EXPECT_TRUE(std::isfinite(rdp[i])) << q << " " << z << " " << orders[i];
        EXPECT_GT(rdp[i], 0.0) << q << " " << z << " " << orders[i];
        // Never above the unsampled Gaussian.
        EXPECT_LE(rdp[i], orders[i] / (2 * z * z) * (1 + 1e-12));
      }
    }
  // Small-q, large-z limit: rdp -> alpha q^2 / z^2 ... to leading order alpha q^2 (e^{1/z^2}-1)/2.
  const double q = 1e-5, z = 100.0, a = 2.0;
  EXPECT_NEAR(rdp_poisson(q, z, {a})[0], std::log1p(q * q * std::expm1(1 / (z * z))), 1e-25);
}

TEST(RdpPoisson, GrowsWithRateAndOrderAndShrinksWithNoise) {
  const std::vector<double> orders = {1.5, 2, 3.5, 8, 20.5, 64};
  for (std::size_t i = 0; i < orders.size(); ++i) {
    double previous = 0.0;
    for (double q : {1e-4, 1e-3, 0.01, 0.1, 0.5, 1.0}) {
      const double r = rdp_poisson(q, 1.3, {orders[i]})[0];
      EXPECT_GT(r, previous) << "q=" << q << " alpha=" << orders[i];
      previous = r;
    }
    previous = INFINITY;
    for (double z : {0.5, 0.9, 1.5, 4.0, 30.0}) {
      const double r = rdp_poisson(0.02, z, {orders[i]})[0];
      EXPECT_LT(r, previous) << "z=" << z << " alpha=" << orders[i];
      previous = r;
    }
  }
  const std::vector<double> rdp = rdp_poisson(0.02, 1.1, default_orders());
  for (std::size_t i = 1; i < rdp.size(); ++i) EXPECT_GE(rdp[i], rdp[i - 1]);
}

TEST(RdpPoisson, RejectsRatesOutsideTheUnitIntervalAndNonPositiveNoise) {
  const std::vector<double> o = {2.0};
  EXPECT_THROW(rdp_poisson(0.0, 1.0, o), std::invalid_argument);
  EXPECT_THROW(rdp_poisson(-0.1, 1.0, o), std::invalid_argument);
  EXPECT_THROW(rdp_poisson(1.5, 1.0, o), std::invalid_argument);
  EXPECT_THROW(rdp_poisson(NAN, 1.0, o), std::invalid_argument);
  EXPECT_THROW(rdp_poisson(0.1, 0.0, o), std::invalid_argument);
  EXPECT_THROW(rdp_poisson(0.1, -1.0, o), std::invalid_argument);
  EXPECT_THROW(rdp_poisson(0.1, INFINITY, o), std::invalid_argument);
  EXPECT_THROW(rdp_poisson(0.1, 1.0, {1.0}), std::invalid_argument);
  EXPECT_THROW(rdp_poisson(0.1, 1e-300, o), std::invalid_argument);  // overflow, not +inf
}

}  // namespace
}  // namespace dpgnn::privacy
