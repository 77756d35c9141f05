// k-ary randomized response's RDP (rdp_rr.cpp) against the Rényi divergence summed directly
// over the k outputs of two rows of the k-RR matrix, written here in long double from the
// mechanism's definition (not from the closed form), maximised over the pairs of inputs.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dpgnn/privacy/accountant.h"
#include "dpgnn/privacy/mechanism.h"
#include "dpgnn/privacy/rdp.h"

namespace dpgnn::privacy {
namespace {

// P(output = o | input = v) of k-RR at eps.
long double rr_probability(int k, long double eps, int v, int o) {
  const long double norm = std::exp(eps) + (k - 1);
  return (o == v ? std::exp(eps) : 1.0L) / norm;
}

long double renyi_by_enumeration(int k, long double eps, long double alpha) {
  long double worst = 0;
  for (int v = 0; v < k; ++v)
    for (int w = 0; w < k; ++w) {
      if (v == w) continue;
      long double sum = 0;
      for (int o = 0; o < k; ++o)
        sum += std::pow(rr_probability(k, eps, v, o), alpha) * std::pow(rr_probability(k, eps, w, o), 1 - alpha);
      worst = std::max(worst, std::log(sum) / (alpha - 1));
    }
  return worst;
}

TEST(RdpRandomizedResponse, MatchesTheDivergenceSummedOverTheOutputs) {
  const std::vector<double> orders = {1.1, 1.5, 2.0, 8.0, 64.0};
  for (int k : {2, 3, 7, 15}) {
    for (double eps : {0.05, 0.5, 2.0, 4.0, 9.0}) {
      const std::vector<double> rdp = rdp_randomized_response(k, 1.0 / eps, orders);
      for (std::size_t i = 0; i < orders.size(); ++i) {
        const double want = static_cast<double>(renyi_by_enumeration(k, eps, orders[i]));
        EXPECT_NEAR(rdp[i], want, 1e-9 * want + 1e-15) << "k = " << k << ", eps = " << eps << ", alpha = " << orders[i];
      }
    }
  }
}

TEST(RdpRandomizedResponse, TwoCategoriesIsMironovsTableIIRow) {
  // Mironov 2017, Table II, randomized response with p = e^eps / (1 + e^eps):
  // 1/(alpha-1) ln(p^alpha (1-p)^(1-alpha) + (1-p)^alpha p^(1-alpha)).
  const double eps = 1.3, p = std::exp(eps) / (1 + std::exp(eps));
  for (double a : {1.5, 3.0, 20.0}) {
    const double want = std::log(std::pow(p, a) * std::pow(1 - p, 1 - a) + std::pow(1 - p, a) * std::pow(p, 1 - a)) / (a - 1);
    EXPECT_NEAR(rdp_randomized_response(2, 1 / eps, {a})[0], want, 1e-12);
  }
}

TEST(RdpRandomizedResponse, TendsToItsPureEpsilonAndNeverExceedsIt) {
  for (int k : {2, 10}) {
    const double eps = 4.0;
    const std::vector<double> orders = {1.01, 2, 32, 1024, 1e6};
    const std::vector<double> rdp = rdp_randomized_response(k, 1 / eps, orders);
    for (std::size_t i = 0; i < rdp.size(); ++i) EXPECT_LE(rdp[i], eps) << orders[i];
    for (std::size_t i = 1; i < rdp.size(); ++i) EXPECT_GE(rdp[i], rdp[i - 1]) << "non-decreasing in the order";
    EXPECT_NEAR(rdp.back(), eps, 1e-4);
  }
}

TEST(RdpRandomizedResponse, IsAMechanismTheAccountantAndTheLedgerText) {
  const Mechanism m = Mechanism::randomized_response(7, 0.25);
  EXPECT_EQ(m.to_string(), "rr k=7 z=0.25");
  EXPECT_EQ(Mechanism::parse(m.to_string()), m);
  EXPECT_NE(m, Mechanism::randomized_response(6, 0.25));
  EXPECT_THROW(Mechanism::randomized_response(1, 0.25), std::invalid_argument);
  EXPECT_THROW(Mechanism::parse("rr z=0.25"), std::invalid_argument);
  // One release at eps 4 alone: through RDP at the default orders (up to 1024) its (eps, delta)
  // is the pure 4 plus at most ln(1/delta) / 1023.
  Accountant acc(AccountantKind::kPld);
  acc.step(m);
  const double spent = acc.epsilon(1e-5).epsilon;
  EXPECT_LE(spent, 4.0 + std::log(1e5) / 1023);
  EXPECT_GT(spent, 3.5);
  EXPECT_FALSE(acc.epsilon(1e-5).pld) << "randomized response is accounted by RDP";
}

}  // namespace
}  // namespace dpgnn::privacy
