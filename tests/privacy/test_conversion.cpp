// RDP -> (epsilon, delta): the Balle et al. 2020 and Mironov 2017 formulas by hand, the
// minimisation over orders, and the inverse (delta for a given epsilon).
#include <gtest/gtest.h>

#include <cmath>

#include "dpgnn/privacy/conversion.h"

namespace dpgnn::privacy {
namespace {

TEST(Conversion, BalleFormulaIsAppliedAtEachOrderAndTheMinimumIsReported) {
  const std::vector<double> orders = {2.0, 8.0, 32.0};
  const std::vector<double> rdp = {0.5, 1.0, 3.0};
  const double d = 1e-6;
  auto balle = [&](double a, double r) {
    return r + std::log(1 - 1 / a) - (std::log(d) + std::log(a)) / (a - 1);
  };
  const double e2 = balle(2, 0.5), e8 = balle(8, 1.0), e32 = balle(32, 3.0);
  const EpsilonAtOrder got = epsilon_from_rdp(orders, rdp, d);
  EXPECT_NEAR(got.epsilon, std::min({e2, e8, e32}), 1e-14);
  EXPECT_EQ(got.order, e8 <= e2 && e8 <= e32 ? 8.0 : (e2 < e32 ? 2.0 : 32.0));
}

TEST(Conversion, MironovFormulaIsRdpPlusLogInverseDeltaOverAlphaMinusOne) {
  const std::vector<double> orders = {3.0, 10.0};
  const std::vector<double> rdp = {0.2, 0.9};
  const EpsilonAtOrder got = epsilon_from_rdp(orders, rdp, 1e-5, Conversion::kMironov);
  const double want = std::min(0.2 + std::log(1e5) / 2, 0.9 + std::log(1e5) / 9);
  EXPECT_NEAR(got.epsilon, want, 1e-14);
  EXPECT_EQ(got.order, 10.0);
}

TEST(Conversion, BalleIsNeverWorseThanMironov) {
  const std::vector<double> orders = {1.5, 2, 4, 8, 16, 64, 256};
  for (double scale : {1e-4, 0.01, 1.0, 30.0}) {
    std::vector<double> rdp;
    for (double a : orders) rdp.push_back(scale * a);
    EXPECT_LE(epsilon_from_rdp(orders, rdp, 1e-5, Conversion::kBalle).epsilon,
              epsilon_from_rdp(orders, rdp, 1e-5, Conversion::kMironov).epsilon);
  }
}

TEST(Conversion, EpsilonIsClippedAtZeroAndTinyRdpUsesTheTotalVariationBound) {
  // rdp = 1e-12 < delta^2: sqrt(1 - e^{-rdp}) = 1e-6 < delta = 1e-5, so (0, delta)-DP.
  EXPECT_EQ(epsilon_from_rdp({2.0, 4.0}, {1e-12, 2e-12}, 1e-5).epsilon, 0.0);
  EXPECT_EQ(delta_from_rdp({2.0}, {1e-12}, 0.0).delta, std::sqrt(-std::expm1(-1e-12)));
}

TEST(Conversion, DeltaForEpsilonInvertsEpsilonForDelta) {
  const std::vector<double> orders = {1.5, 2, 3, 5, 8, 13, 21, 34, 55};
  std::vector<double> rdp;
  for (double a : orders) rdp.push_back(0.01 * a + 0.002 * a * a);
  for (Conversion c : {Conversion::kBalle, Conversion::kMironov}) {
    const EpsilonAtOrder e = epsilon_from_rdp(orders, rdp, 1e-6, c);
    const DeltaAtOrder d = delta_from_rdp(orders, rdp, e.epsilon, c);
    EXPECT_NEAR(d.delta, 1e-6, 1e-6 * 1e-9);
    EXPECT_EQ(d.order, e.order);
    // More epsilon, less delta.
    EXPECT_LT(delta_from_rdp(orders, rdp, e.epsilon * 1.1, c).delta, 1e-6);
  }
}

TEST(Conversion, RejectsBadDeltaAndMalformedCurves) {
  const std::vector<double> o = {2.0}, r = {0.1};
  for (double d : std::vector<double>{0.0, 1.0, -1e-5, 1.5, NAN, INFINITY})
    EXPECT_THROW(epsilon_from_rdp(o, r, d), std::invalid_argument) << d;
  EXPECT_THROW(epsilon_from_rdp({2.0, 3.0}, r, 1e-5), std::invalid_argument);
  EXPECT_THROW(epsilon_from_rdp(o, {NAN}, 1e-5), std::invalid_argument);
  EXPECT_THROW(epsilon_from_rdp(o, {-1.0}, 1e-5), std::invalid_argument);
  EXPECT_THROW(epsilon_from_rdp({1.0}, r, 1e-5), std::invalid_argument);
  EXPECT_THROW(delta_from_rdp(o, r, -1.0), std::invalid_argument);
  EXPECT_THROW(parse_conversion("renyi"), std::invalid_argument);
  EXPECT_EQ(parse_conversion("mironov"), Conversion::kMironov);
}

}  // namespace
}  // namespace dpgnn::privacy
