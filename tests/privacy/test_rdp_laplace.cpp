// The Laplace mechanism's RDP (rdp_laplace.cpp, Mironov 2017 Proposition 6) against a direct
// numerical integration of the Rényi divergence written here, independently of the closed
// form: (1/(alpha-1)) ln of the integral over the real line of p(x)^alpha q(x)^(1-alpha),
// p = Lap(0, z), q = Lap(1, z) (sensitivity 1, scale z), by composite Gauss-Legendre in
// long double on the three pieces where |x| and |x - 1| are linear.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "dpgnn/privacy/rdp.h"

namespace dpgnn::privacy {
namespace {

// n-point Gauss-Legendre nodes and weights on [-1, 1], by Newton's method on P_n.
struct GaussLegendre {
  std::vector<long double> x, w;
  explicit GaussLegendre(int n) {
    const long double pi = 3.141592653589793238462643383279502884L;
    for (int i = 1; i <= n; ++i) {
      long double t = std::cos(pi * (i - 0.25L) / (n + 0.5L));
      long double dp = 0;
      for (int it = 0; it < 100; ++it) {
        long double p0 = 1, p1 = t;  // P_0, P_1
        for (int k = 2; k <= n; ++k) {
          const long double p2 = ((2 * k - 1) * t * p1 - (k - 1) * p0) / k;
          p0 = p1;
          p1 = p2;
        }
        dp = n * (t * p1 - p0) / (t * t - 1);  // P_n'(t)
        const long double step = p1 / dp;
        t -= step;
        if (std::fabs(step) < 1e-21L) break;
      }
      x.push_back(t);
      w.push_back(2 / ((1 - t * t) * dp * dp));
    }
  }
};

// D_alpha(Lap(0, z) || Lap(1, z)). The integrand is written as p(x) (q(x)/p(x))^(1-alpha),
// and the integral as 1 + J with J = integral of p(x) expm1((1-alpha) ln(q(x)/p(x))), so that a
// divergence of 1e-7 is not lost to the 1 (ln q/p = (|x| - |x-1|) / z exactly).
long double renyi_laplace_by_quadrature(long double alpha, long double z) {
  static const GaussLegendre gl(20);
  auto integrand = [&](long double x) {
    const long double log_p = -std::fabs(x) / z - std::log(2 * z);
    const long double log_ratio = (std::fabs(x) - std::fabs(x - 1)) / z;  // ln q/p
    return std::exp(log_p) * std::expm1((1 - alpha) * log_ratio);
  };
  // Panels narrow enough that the integrand's exponential rate times the width is <= 1/4.
  auto integrate = [&](long double lo, long double hi, long double rate) {
    const long double width = 0.25L / rate;
    const long long panels = static_cast<long long>(std::ceil((hi - lo) / width));
    const long double h = (hi - lo) / panels;
    long double sum = 0;
    for (long long k = 0; k < panels; ++k) {
      const long double a = lo + k * h, mid = a + h / 2;
      long double s = 0;
      for (std::size_t i = 0; i < gl.x.size(); ++i) s += gl.w[i] * integrand(mid + gl.x[i] * h / 2);
      sum += s * h / 2;
    }
    return sum;
  };
  // Tails end where p has fallen by e^-90 (negligible at 1e-9 relative even next to J).
  const long double tail = 90 * z;
  long double j = integrate(-tail, 0, 1 / z);
  j += integrate(0, 1, (2 * alpha - 1) / z);  // p (q/p)^(1-alpha) ~ e^{-(2alpha-1)x/z} here
  j += integrate(1, 1 + tail, 1 / z);
  return std::log1p(j) / (alpha - 1);
}

TEST(RdpLaplace, MatchesDirectNumericalIntegrationOfTheRenyiDivergence) {
  for (double z : {0.1, 1.0, 10.0, 1000.0}) {
    const std::vector<double> orders = {1.5, 2.0, 8.0, 64.0, 256.0};
    const std::vector<double> rdp = rdp_laplace(z, orders);
    for (std::size_t i = 0; i < orders.size(); ++i) {
      const double want = static_cast<double>(renyi_laplace_by_quadrature(orders[i], z));
      EXPECT_NEAR(rdp[i], want, 1e-9 * want) << "alpha = " << orders[i] << ", z = " << z;
    }
  }
}

TEST(RdpLaplace, NeverAbovePureDpAndTendsToItAtLargeOrders) {
  // eps(infinity) = 1/z (Mironov 2017, Table II), and RDP is non-decreasing in alpha.
  for (double z : {1e-3, 0.1, 1.0, 10.0, 1e4}) {
    const std::vector<double> orders = {1.01, 1.5, 2.0, 8.0, 64.0, 1024.0, 1e6};
    const std::vector<double> rdp = rdp_laplace(z, orders);
    for (std::size_t i = 0; i < orders.size(); ++i) {
      EXPECT_LE(rdp[i], (1.0 / z) * (1 + 1e-15)) << "alpha = " << orders[i] << ", z = " << z;
      EXPECT_GT(rdp[i], 0.0);
      if (i > 0) {
        EXPECT_GE(rdp[i], rdp[i - 1] * (1 - 1e-15)) << orders[i];
      }
    }
    if (z <= 1.0) {
      // ln(alpha/(2 alpha - 1))/(alpha - 1) + 1/z at alpha = 1e6 differs from 1/z by ~ln2/1e6.
      EXPECT_NEAR(rdp.back(), 1.0 / z, 1e-6 + 1e-9 / z) << z;
    }
  }
}

TEST(RdpLaplace, OrdersNearOneGiveTheKullbackLeiblerDivergence) {
  // KL(Lap(0, z) || Lap(1, z)) = 1/z + e^{-1/z} - 1 (direct integration of p ln p/q).
  for (double z : {0.5, 1.0, 100.0}) {
    const double kl = 1.0 / z + std::expm1(-1.0 / z);
    const double rdp = rdp_laplace(z, {1.0 + 1e-7})[0];
    EXPECT_NEAR(rdp, kl, 1e-5 * kl) << z;
  }
}

TEST(RdpLaplace, NonsenseNoiseIsRejected) {
  EXPECT_THROW(rdp_laplace(0.0, {2.0}), std::invalid_argument);
  EXPECT_THROW(rdp_laplace(-1.0, {2.0}), std::invalid_argument);
  EXPECT_THROW(rdp_laplace(NAN, {2.0}), std::invalid_argument);
  EXPECT_THROW(rdp_laplace(1.0, {1.0}), std::invalid_argument);
}

}  // namespace
}  // namespace dpgnn::privacy
