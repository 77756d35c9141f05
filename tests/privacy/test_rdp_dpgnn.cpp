// Node-level DP-GNN (Daigavane et al., Theorem 1): every row of the independent reference
// table and the properties of the hypergeometric bound.
#include <gtest/gtest.h>

#include <cmath>

#include "dpgnn/privacy/conversion.h"
#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/rdp.h"
#include "reference_csv.h"

namespace dpgnn::privacy {
namespace {

using testing::read_reference_csv;
using testing::relative_error;

TEST(RdpDpGnn, EpsilonAfterTStepsMatchesEveryReferenceRowAndOrder) {
  DPGNN_REQUIRE_REFERENCE();
  const std::vector<double> orders = default_orders();
  for (const auto& row : read_reference_csv("dpgnn_hypergeometric_epsilon.csv")) {
    const Mechanism m = Mechanism::dpgnn(
        static_cast<std::int64_t>(row.at("dataset_size")),
        static_cast<std::int64_t>(row.at("batch_size")),
        static_cast<std::int64_t>(row.at("max_degree")),
        static_cast<std::int64_t>(row.at("layers")), row.at("noise_multiplier"));
    EXPECT_EQ(m.group_size(), static_cast<std::int64_t>(row.at("n_k_r")));
    std::vector<double> rdp = rdp_per_step(m, orders);
    for (double& r : rdp) r *= row.at("steps");
    const EpsilonAtOrder e = epsilon_from_rdp(orders, rdp, row.at("delta"));
    EXPECT_LT(relative_error(e.epsilon, row.at("epsilon")), 1e-4)
        << m.to_string() << " T=" << row.at("steps") << " got " << e.epsilon << " want "
        << row.at("epsilon");
    EXPECT_DOUBLE_EQ(e.order, row.at("order"));
  }
}

TEST(RdpDpGnn, NeighbourhoodBoundIsTheGeometricSum) {
  EXPECT_EQ(neighbourhood_bound(3, 1), 4);
  EXPECT_EQ(neighbourhood_bound(7, 2), 57);
  EXPECT_EQ(neighbourhood_bound(10, 2), 111);
  EXPECT_EQ(neighbourhood_bound(1, 5), 6);
  EXPECT_EQ(neighbourhood_bound(2, 10), 2047);
  EXPECT_THROW(neighbourhood_bound(0, 1), std::invalid_argument);
  EXPECT_THROW(neighbourhood_bound(1000000, 4), std::invalid_argument);  // > 2^53
}

TEST(RdpDpGnn, SamplingEveryNodeIsThePlainGaussian) {
  // m = N: rho = N(K, r) surely, so gamma(alpha) = alpha / (2 z^2).
  const std::vector<double> orders = default_orders();
  const std::vector<double> rdp = rdp_dpgnn(40, 40, 13, 0.9, orders);
  for (std::size_t i = 0; i < orders.size(); ++i)
    EXPECT_NEAR(rdp[i], orders[i] / (2 * 0.9 * 0.9), 1e-12 * rdp[i]);
}

TEST(RdpDpGnn, SmallCaseMatchesTheHypergeometricExpectationByHand) {
  // N = 5, G = 2, m = 2: P(rho=0) = 3/10, P(1) = 6/10, P(2) = 1/10.
  const double z = 1.3, a = 3.5, c = a * (a - 1) / (2 * z * z * 4);
  const double want = std::log(0.3 + 0.6 * std::exp(c) + 0.1 * std::exp(4 * c)) / (a - 1);
  EXPECT_NEAR(rdp_dpgnn(5, 2, 2, z, {a})[0], want, 1e-14 * want);
}

TEST(RdpDpGnn, GrowsWithBatchAndShrinksWithNoise) {
  for (double a : {1.5, 4.0, 32.0, 1024.0}) {
    double previous = 0.0;
    for (std::int64_t m : {1, 10, 100, 1000, 90941}) {
      const double r = rdp_per_step(Mechanism::dpgnn(90941, m, 5, 2, 2.0), {a})[0];
      EXPECT_GT(r, previous) << "m=" << m << " alpha=" << a;
      previous = r;
    }
    previous = INFINITY;
    for (double z : {0.5, 1.0, 4.0, 100.0, 1e5}) {
      const double r = rdp_per_step(Mechanism::dpgnn(90941, 1000, 5, 2, z), {a})[0];
      EXPECT_LT(r, previous) << "z=" << z << " alpha=" << a;
      EXPECT_GT(r, 0.0);
      previous = r;
    }
  }
}

TEST(RdpDpGnn, RejectsNeighbourhoodsLargerThanTheTrainingSet) {
  EXPECT_THROW(Mechanism::dpgnn(100, 10, 10, 2, 1.0), std::invalid_argument);  // 111 > 100
  EXPECT_THROW(Mechanism::dpgnn(100, 101, 3, 1, 1.0), std::invalid_argument);
  EXPECT_THROW(Mechanism::dpgnn(100, 0, 3, 1, 1.0), std::invalid_argument);
  EXPECT_THROW(Mechanism::dpgnn(100, 10, 3, 0, 1.0), std::invalid_argument);
  EXPECT_THROW(rdp_dpgnn(100, 10, 101, 1.0, {2.0}), std::invalid_argument);
}

}  // namespace
}  // namespace dpgnn::privacy
