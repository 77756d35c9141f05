// RDP of the Gaussian mechanism on a uniformly random subset of m of n records, sampled
// without replacement, under replace-one neighbours (n is public). The DRW family's
// accountant (DESIGN.md decision 3). Source: Wang, Balle & Kasiviswanathan 2019,
// "Subsampled Rényi Differential Privacy and Analytical Moments Accountant" (AISTATS;
// arXiv 1808.00087). gamma = m/n; eps(alpha) = alpha/(2 z^2) is the Gaussian's RDP with
// z = sigma / (2C) (noise_convention.h).
//
// Integer alpha >= 2 — their Theorem 9:
//   eps'(alpha) <= 1/(alpha-1) ln(1 + gamma^2 C(alpha,2) B_2 + sum_{j=3}^{alpha} gamma^j C(alpha,j) B_j)
//   B_2 = min(4 (e^{eps(2)} - 1), 2 e^{eps(2)})        (the min{2, (e^{eps(inf)}-1)^2} factor
//   B_j = 2 e^{(j-1) eps(j)}                            is 2 for the Gaussian: eps(inf) = inf)
// tightened for the Gaussian for alpha <= 256 (arXiv 1808.00087, Theorem 27):
// B_j = min(2 e^{(j-1) eps(j)}, 4 Xi_j), where for even j,
//   Xi_j = Delta^j s (0), the j-th forward difference at 0 of s(k) = e^{(k-1) eps(k)} =
//          e^{k(k-1)/(2 z^2)}, i.e. Xi_j = E_{x~N(0,z^2)}[(L(x) - 1)^j] with
//          L(x) = e^{(2x-1)/(2 z^2)} (because E[L^k] = s(k)), and for odd j the geometric
//   mean sqrt(Xi_{j-1} Xi_{j+1}) of the neighbouring even differences (Cauchy-Schwarz).
// Orders above 256 use Theorem 9 alone (O(alpha) instead of O(alpha^2) work; same choice
// as dp_accounting and the reference tables).
// Fractional alpha — their Corollary 10: (alpha - 1) eps'(alpha) is bounded by the linear
// interpolation of (alpha - 1) eps' between floor(alpha) and ceil(alpha), with
// (1 - 1) eps'(1) = 0; so orders in (1, 2) get eps'(2).
// Sampling everything (m = n) is the plain Gaussian alpha/(2 z^2) exactly.
//
// Numerics: every term is a logarithm. Xi_j is first tried as the alternating binomial
// sum in long double, scaled by its largest term; when that sum cancels by more than six
// digits (large z) Xi_j is instead integrated in log space from its integral form, whose
// integrand (L - 1)^j phi is >= 0 for even j — no cancellation at all.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/rdp.h"
#include "log_math.h"
#include "rdp_internal.h"
#include "format.h"

namespace dpgnn::privacy {

namespace detail {

// ln Xi_j for even j >= 2 by the alternating sum (NaN if it cancels by more than 6 digits).
double wor_log_forward_difference_sum(long j, double z) {
  const double t = 1.0 / (2.0 * z * z);
  // sum_k (-1)^{j-k} C(j,k) e^{t k(k-1)}, scaled by its largest term.
  const double dj = static_cast<double>(j);
  std::vector<double> log_terms(static_cast<std::size_t>(j) + 1);
  double max_term = kNegInf;
  for (long k = 0; k <= j; ++k) {
    const double dk = static_cast<double>(k);
    log_terms[static_cast<std::size_t>(k)] = detail::log_binomial(dj, dk) + t * dk * (dk - 1.0);
    max_term = std::max(max_term, log_terms[static_cast<std::size_t>(k)]);
  }
  long double signed_sum = 0.0L, abs_sum = 0.0L;
  for (long k = 0; k <= j; ++k) {
    const long double v = std::exp(static_cast<long double>(log_terms[static_cast<std::size_t>(k)]) -
                                   static_cast<long double>(max_term));
    signed_sum += ((j - k) % 2 == 0) ? v : -v;
    abs_sum += v;
  }
  if (signed_sum > 0.0L && abs_sum < 1e6L * signed_sum)
    return max_term + static_cast<double>(std::log(signed_sum));
  return std::numeric_limits<double>::quiet_NaN();
}

// ln Xi_j for even j >= 2 by integrating E_{x~N(0,z^2)}[(e^u - 1)^j], u = (2x - 1)/(2 z^2).
double wor_log_forward_difference_quadrature(long j, double z) {
  const double dj = static_cast<double>(j);
  const double two_z2 = 2.0 * z * z;
  const double log_norm = -0.5 * std::log(2.0 * std::acos(-1.0)) - std::log(z);
  auto log_integrand = [&](double x) {
    const double u = (2.0 * x - 1.0) / two_z2;
    if (u == 0.0) return kNegInf;
    const double log_abs = u > 0.0 ? detail::log_expm1(u) : std::log(-std::expm1(u));
    return log_norm - x * x / two_z2 + dj * log_abs;
  };
  const double panel = std::min(z, z * z) / 4.0;
  const double lo = -40.0 * z - 1.0, hi = dj + 40.0 * z + 1.0;
  // Away from u = 0 (a zero of the integrand, not a peak), |d/dx log integrand| <=
  // (|x| + j)/z^2 <= (hi + j)/z^2.
  const double margin = 60.0 + 1.5 * panel * (hi + dj) / (z * z);
  return detail::log_integrate(log_integrand, lo, hi, panel, margin);
}

}  // namespace detail

namespace {

using detail::kNegInf;

constexpr long kMaxTightenedOrder = 256;

// ln Xi_j for even j >= 2 (see the file comment).
double log_forward_difference_even(long j, double z) {
  if (j == 2) return detail::log_expm1(1.0 / (z * z));  // s(2) - 2 s(1) + s(0) = e^{2t} - 1
  const double by_sum = detail::wor_log_forward_difference_sum(j, z);
  return std::isnan(by_sum) ? detail::wor_log_forward_difference_quadrature(j, z) : by_sum;
}

class WorBound {
 public:
  WorBound(double gamma, double z) : gamma_(gamma), z_(z), t_(1.0 / (2.0 * z * z)) {}

  // ln A(alpha), where eps'(alpha) = ln A(alpha) / (alpha - 1), for integer alpha >= 1.
  double log_a(long alpha) {
    if (alpha == 1) return 0.0;
    auto it = log_a_.find(alpha);
    if (it != log_a_.end()) return it->second;
    const double da = static_cast<double>(alpha);
    const double log_gamma = std::log(gamma_);
    detail::LogSum sum;
    for (long j = 2; j <= alpha; ++j) {
      const double dj = static_cast<double>(j);
      // Theorem 9's term: ln(2 e^{(j-1) eps(j)}) = ln 2 + t j (j-1).
      double log_b = std::log(2.0) + t_ * dj * (dj - 1.0);
      if (j == 2) {
        log_b = std::min(std::log(4.0) + detail::log_expm1(2.0 * t_), std::log(2.0) + 2.0 * t_);
      } else if (alpha <= kMaxTightenedOrder) {
        const long lo = 2 * (j / 2), hi = 2 * ((j + 1) / 2);
        const double log_xi = 0.5 * (log_xi_even(lo) + log_xi_even(hi));
        log_b = std::min(log_b, std::log(4.0) + log_xi);
      }
      sum.add(dj * log_gamma + detail::log_binomial(da, dj) + log_b);
    }
    const double value = detail::log_add(0.0, sum.value());  // ln(1 + sum)
    log_a_[alpha] = value;
    return value;
  }

  double rdp(double alpha) {
    if (gamma_ == 1.0) return alpha * t_;  // plain Gaussian: alpha / (2 z^2)
    const double lo = std::floor(alpha);
    if (lo == alpha) return log_a(static_cast<long>(alpha)) / (alpha - 1.0);
    // Corollary 10: interpolate (alpha - 1) eps'(alpha) linearly.
    const double w = alpha - lo;
    const double x = log_a(static_cast<long>(lo));
    const double y = log_a(static_cast<long>(lo) + 1);
    return ((1.0 - w) * x + w * y) / (alpha - 1.0);
  }

 private:
  double log_xi_even(long j) {
    auto it = log_xi_.find(j);
    if (it != log_xi_.end()) return it->second;
    const double value = log_forward_difference_even(j, z_);
    log_xi_[j] = value;
    return value;
  }

  double gamma_, z_, t_;
  std::map<long, double> log_a_;
  std::map<long, double> log_xi_;
};

}  // namespace

std::vector<double> rdp_wor(double gamma, double z, const std::vector<double>& orders) {
  validate_orders(orders);
  if (!std::isfinite(gamma) || !(gamma > 0.0) || gamma > 1.0)
    throw std::invalid_argument("wor: sampling fraction m/n must be in (0, 1], got " +
                                detail::format_double(gamma));
  detail::check_noise_multiplier(z);
  WorBound bound(gamma, z);
  std::vector<double> rdp;
  rdp.reserve(orders.size());
  for (double a : orders) rdp.push_back(bound.rdp(a));
  detail::check_finite_rdp(rdp, orders, "wor");
  return rdp;
}

}  // namespace dpgnn::privacy
