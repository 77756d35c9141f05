// The exponential mechanism's RDP (rdp.cpp: one Gumbel-max selection is (2/z)-bounded range,
// hence alpha / (2 z^2) at order alpha, and (2/z)-DP) against closed forms and a tiny
// explicit instance computed here: the Gumbel-max selection probabilities by numerical
// integration, their privacy-loss range, and their exact Rényi divergences. Also the
// accountant composing the new schemes with SGD steps by adding RDP (Mironov 2017, Prop. 1).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dpgnn/privacy/accountant.h"
#include "dpgnn/privacy/mechanism.h"
#include "dpgnn/privacy/rdp.h"

namespace dpgnn::privacy {
namespace {

TEST(RdpExponential, ClosedFormAlphaOverTwoZSquaredCappedByPureDp) {
  // eps-BR with eps = 2/z -> eps^2/8 zCDP -> alpha eps^2 / 8 = alpha / (2 z^2); eps-DP -> <= eps.
  for (double z : {0.5, 1.0, 3.0, 10.0, 250.0}) {
    const std::vector<double> orders = {1.1, 2.0, 3.5, 8.0, 64.0, 1024.0};
    const std::vector<double> rdp = rdp_exponential(z, orders);
    ASSERT_EQ(rdp.size(), orders.size());
    for (std::size_t i = 0; i < orders.size(); ++i) {
      const double eps = 2.0 / z;
      const double want = std::min(orders[i] * eps * eps / 8.0, eps);
      EXPECT_NEAR(rdp[i], want, 1e-15 * want) << "alpha = " << orders[i] << ", z = " << z;
      EXPECT_LE(rdp[i], eps) << "alpha = " << orders[i] << ", z = " << z;  // never above pure DP
    }
  }
  // Spot values: z = 10, alpha = 2 -> 2 / 200 = 0.01; z = 1, alpha = 8 -> min(4, 2) = 2.
  EXPECT_DOUBLE_EQ(rdp_exponential(10.0, {2.0})[0], 0.01);
  EXPECT_DOUBLE_EQ(rdp_exponential(1.0, {8.0})[0], 2.0);
  EXPECT_DOUBLE_EQ(rdp_exponential(1.0, {3.0})[0], 1.5);
  EXPECT_THROW(rdp_exponential(0.0, {2.0}), std::invalid_argument);
  EXPECT_THROW(rdp_exponential(1.0, {0.5}), std::invalid_argument);
}

// P(argmax_r u_r + G_r = r) with G_r ~ Gumbel(0, beta) i.i.d., by integrating over the
// winner's noise g: density f(g) = e^{-(g/beta + e^{-g/beta})}/beta, and every other r' must
// stay below: F(u_r + g - u_r') with F(t) = exp(-e^{-t/beta}). Substituting s = g / beta.
std::vector<long double> gumbel_argmax_probabilities(const std::vector<long double>& u,
                                                     long double beta) {
  std::vector<long double> p(u.size(), 0);
  const long double lo = -8, hi = 60;  // e^{-e^{8}} and e^{-60}: negligible
  const int steps = 40000;             // Simpson on [lo, hi]
  const long double h = (hi - lo) / steps;
  for (std::size_t r = 0; r < u.size(); ++r) {
    auto f = [&](long double s) {
      long double log_v = -(s + std::exp(-s));
      for (std::size_t o = 0; o < u.size(); ++o)
        if (o != r) log_v += -std::exp(-(s + (u[r] - u[o]) / beta));
      return std::exp(log_v);
    };
    long double sum = f(lo) + f(hi);
    for (int k = 1; k < steps; ++k) sum += f(lo + k * h) * ((k % 2) ? 4 : 2);
    p[r] = sum * h / 3;
  }
  return p;
}

TEST(RdpExponential, GumbelMaxOnATinyInstanceIsBoundedRangeAndWithinTheBound) {
  // Utilities of 4 candidates with sensitivity Delta = 1; the neighbour moves them by +-Delta
  // in opposite directions (the worst case for the range), beta = z Delta.
  const std::vector<long double> u = {0.3L, 0.9L, 0.1L, 0.5L};
  const std::vector<long double> u2 = {1.3L, -0.1L, 0.6L, 0.5L};  // shifts +1, -1, +0.5, 0
  for (double z : {0.5, 1.0, 4.0}) {
    const long double beta = z;
    const auto p = gumbel_argmax_probabilities(u, beta);
    const auto q = gumbel_argmax_probabilities(u2, beta);
    long double sum_p = 0, z_p = 0, z_q = 0;
    for (std::size_t r = 0; r < u.size(); ++r) {
      sum_p += p[r];
      z_p += std::exp(u[r] / beta);
      z_q += std::exp(u2[r] / beta);
    }
    EXPECT_NEAR(static_cast<double>(sum_p), 1.0, 1e-12);
    // The Gumbel-max identity: P(r) = e^{u_r / beta} / Z.
    for (std::size_t r = 0; r < u.size(); ++r)
      EXPECT_NEAR(static_cast<double>(p[r]), static_cast<double>(std::exp(u[r] / beta) / z_p), 1e-12);
    // Privacy-loss range: max - min of ln p/q is exactly 2 Delta / beta = 2 / z here (the
    // shifts +Delta and -Delta both occur), and never more.
    long double lmin = INFINITY, lmax = -INFINITY;
    for (std::size_t r = 0; r < u.size(); ++r) {
      const long double l = std::log(p[r] / q[r]);
      lmin = std::min(lmin, l);
      lmax = std::max(lmax, l);
    }
    EXPECT_NEAR(static_cast<double>(lmax - lmin), 2.0 / z, 1e-9);
    EXPECT_LE(static_cast<double>(lmin), 0.0);  // the range contains 0: eps-DP with eps = 2/z
    EXPECT_GE(static_cast<double>(lmax), 0.0);
    // Exact Rényi divergences of this instance (both directions) never exceed the bound.
    const std::vector<double> orders = {1.5, 2.0, 4.0, 16.0, 128.0};
    const std::vector<double> bound = rdp_exponential(z, orders);
    for (std::size_t i = 0; i < orders.size(); ++i) {
      const long double a = orders[i];
      long double s_pq = 0, s_qp = 0;
      for (std::size_t r = 0; r < u.size(); ++r) {
        s_pq += std::pow(p[r], a) * std::pow(q[r], 1 - a);
        s_qp += std::pow(q[r], a) * std::pow(p[r], 1 - a);
      }
      EXPECT_LE(static_cast<double>(std::log(s_pq) / (a - 1)), bound[i]) << a << " " << z;
      EXPECT_LE(static_cast<double>(std::log(s_qp) / (a - 1)), bound[i]) << a << " " << z;
    }
  }
}

TEST(RdpExponential, AccountantComposesReleasesAndSgdStepsByAddingRdp) {
  // DPAR-like history: M * K Gumbel selections, M * K Laplace values, then T SGD steps of a
  // group-WOR mechanism sampling everything with g = 1 (= the plain Gaussian).
  const std::vector<double> orders = {2.0, 8.0, 32.0};
  Accountant acc(orders);
  const std::int64_t selections = 6, values = 6, steps = 40;
  const double ze = 20.0, zl = 30.0, zg = 5.0;
  acc.step(Mechanism::exponential(ze), selections);
  acc.step(Mechanism::laplace(zl), values);
  acc.step(Mechanism::group_wor(100, 100, 1, zg), steps);
  const std::vector<double> total = acc.total_rdp();
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i];
    const double exp_rdp = std::min(a / (2 * ze * ze), 2 / ze);
    // Mironov 2017, Table II, evaluated here in long double (no cancellation at z = 30).
    const long double la = a, lz = zl;
    const double lap_rdp = static_cast<double>(
        std::log(la / (2 * la - 1) * std::exp((la - 1) / lz) +
                 (la - 1) / (2 * la - 1) * std::exp(-la / lz)) / (la - 1));
    const double gauss = a / (2 * zg * zg);
    const double want = selections * exp_rdp + values * lap_rdp + steps * gauss;
    EXPECT_NEAR(total[i], want, 1e-12 * want) << a;
  }
  EXPECT_EQ(acc.total_steps(), selections + values + steps);
  // The serialisation round trip keeps the history (and so the epsilon) bit for bit.
  Accountant back(orders);
  back.restore(acc.serialise());
  EXPECT_EQ(back.serialise(), acc.serialise());
  EXPECT_EQ(back.epsilon(1e-5).epsilon, acc.epsilon(1e-5).epsilon);
}

}  // namespace
}  // namespace dpgnn::privacy
