// Numerically careful scalar helpers for the RDP accountants: log-sum-exp, log-binomials,
// expm1/log1p remainders, and a log-space Gauss-Legendre quadrature. See log_math.h.
#include "log_math.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace dpgnn::privacy::detail {

double log_add(double a, double b) {
  if (a < b) std::swap(a, b);
  if (b == kNegInf) return a;
  return a + std::log1p(std::exp(b - a));
}

double log_sum_exp(const std::vector<double>& xs) {
  LogSum s;
  for (double x : xs) s.add(x);
  return s.value();
}

void LogSum::add(double log_term) {
  if (log_term == kNegInf) return;
  if (log_term > max_) {
    // Rescale what we have to the new maximum.
    scaled_sum_ = (max_ == kNegInf ? 0.0 : scaled_sum_ * std::exp(max_ - log_term)) + 1.0;
    max_ = log_term;
  } else {
    scaled_sum_ += std::exp(log_term - max_);
  }
}

double LogSum::value() const {
  if (max_ == kNegInf) return kNegInf;
  return max_ + std::log(scaled_sum_);
}

double log_binomial(double n, double k) {
  if (k == 0.0 || k == n) return 0.0;
  return std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0);
}

double log_expm1(double x) {
  // x > 0. For x > 40, e^{-x} < 5e-18 and ln(e^x - 1) = x + ln(1 - e^{-x}).
  if (x > 40.0) return x + std::log1p(-std::exp(-x));
  return std::log(std::expm1(x));
}

double expm1_minus_x(double x) {
  if (std::fabs(x) < 0.5) {
    // sum_{k>=2} x^k / k!; |x| < 0.5 gives 1e-17 relative after 20 terms.
    double term = x * x / 2.0;
    double sum = 0.0;
    for (int k = 3; k < 30; ++k) {
      sum += term;
      term *= x / k;
      if (std::fabs(term) < 1e-18 * std::fabs(sum)) break;
    }
    return sum + term;
  }
  return std::expm1(x) - x;
}

double log1p_minus_x(double x) {
  if (std::fabs(x) < 0.5) {
    // -sum_{k>=2} (-x)^k / k ... written as sum_{k>=2} (-1)^{k+1} x^k / k.
    double power = x * x;  // x^k
    double sum = 0.0;
    for (int k = 2; k < 80; ++k) {
      const double term = ((k % 2 == 0) ? -1.0 : 1.0) * power / k;
      sum += term;
      if (std::fabs(term) < 1e-18 * std::fabs(sum)) break;
      power *= x;
    }
    return sum;
  }
  return std::log1p(x) - x;
}

namespace {

constexpr int kGaussNodes = 16;

// Gauss-Legendre nodes/weights on [-1, 1] by Newton's method on P_16 (Golub-Welsch would
// need an eigen-solver; Newton from the Chebyshev guesses converges in a few steps).
struct GaussLegendre {
  std::array<double, kGaussNodes> x{};
  std::array<double, kGaussNodes> w{};
  GaussLegendre() {
    const double pi = std::acos(-1.0);
    for (int i = 0; i < kGaussNodes; ++i) {
      double z = std::cos(pi * (i + 0.75) / (kGaussNodes + 0.5));
      double dp = 0.0;
      for (int iter = 0; iter < 100; ++iter) {
        double p0 = 1.0, p1 = 0.0;
        for (int j = 1; j <= kGaussNodes; ++j) {
          const double p2 = p1;
          p1 = p0;
          p0 = ((2.0 * j - 1.0) * z * p1 - (j - 1.0) * p2) / j;
        }
        dp = kGaussNodes * (z * p0 - p1) / (z * z - 1.0);
        const double dz = p0 / dp;
        z -= dz;
        if (std::fabs(dz) < 1e-16) break;
      }
      x[i] = z;
      w[i] = 2.0 / ((1.0 - z * z) * dp * dp);
    }
  }
};

const GaussLegendre& gauss_legendre() {
  static const GaussLegendre rule;
  return rule;
}

}  // namespace

double log_integrate(const std::function<double(double)>& log_f, double lo, double hi,
                     double panel, double margin) {
  const GaussLegendre& rule = gauss_legendre();
  const double span = hi - lo;
  const long panels = std::max(1L, static_cast<long>(std::ceil(span / panel)));
  const double width = span / static_cast<double>(panels);
  const double half = 0.5 * width;
  auto mid = [&](long p) { return lo + (static_cast<double>(p) + 0.5) * width; };
  // Pass 1: the log-integrand at every panel's midpoint, to find where the mass is.
  std::vector<double> at_mid(static_cast<std::size_t>(panels));
  double peak = kNegInf;
  for (long p = 0; p < panels; ++p) {
    at_mid[static_cast<std::size_t>(p)] = log_f(mid(p));
    peak = std::max(peak, at_mid[static_cast<std::size_t>(p)]);
  }
  // Pass 2: 16-node Gauss-Legendre on every panel that, or whose neighbour, is within
  // `margin` of the peak.
  LogSum total;
  for (long p = 0; p < panels; ++p) {
    double near = at_mid[static_cast<std::size_t>(p)];
    if (p > 0) near = std::max(near, at_mid[static_cast<std::size_t>(p - 1)]);
    if (p + 1 < panels) near = std::max(near, at_mid[static_cast<std::size_t>(p + 1)]);
    if (near < peak - margin) continue;
    for (int i = 0; i < kGaussNodes; ++i) {
      const double value = log_f(mid(p) + half * rule.x[i]);
      if (value == kNegInf) continue;
      total.add(value + std::log(half * rule.w[i]));
    }
  }
  return total.value();
}

}  // namespace dpgnn::privacy::detail
