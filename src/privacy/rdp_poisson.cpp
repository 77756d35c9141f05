// RDP of the Poisson-subsampled Gaussian mechanism under add/remove neighbours:
// Mironov, Talwar & Zhang 2019, "Rényi Differential Privacy of the Sampled Gaussian
// Mechanism" (arXiv 1908.10530).
//
// With mu0 = N(0, s^2), mu1 = N(1, s^2) (s = noise multiplier, sensitivity 1) and
// mu = (1 - q) mu0 + q mu1, the step is (alpha, eps)-RDP with eps = ln(A_alpha)/(alpha - 1),
//   A_alpha = E_{z ~ mu0}[(mu(z)/mu0(z))^alpha]                        (their Sec. 3.3;
// Theorem 4 shows this direction dominates the reverse one B_alpha).
// Writing L(z) = mu1(z)/mu0(z) = exp((2z - 1)/(2 s^2)) and x = q (L - 1):
//   A_alpha = E[(1 + x)^alpha].
// Integer alpha (their Sec. 3.3, eq. for integer alpha): expanding the binomial,
//   A_alpha = sum_{i=0}^{alpha} C(alpha,i) q^i (1-q)^{alpha-i} exp((i^2 - i)/(2 s^2)),
// and since the binomial weights sum to 1 we sum the non-negative terms of
//   A_alpha - 1 = sum_{i>=2} C(alpha,i) q^i (1-q)^{alpha-i} expm1((i^2 - i)/(2 s^2))
// in log space, so RDP values far below machine epsilon keep full relative precision.
// Fractional alpha: exact numerical integration instead of the paper's two-series
// expansion (whose truncation in dp_accounting over-estimates at some (q, s); see the
// reference README). Because E[x] = 0 (E[L] = 1),
//   A_alpha - 1 = E[(1 + x)^alpha - 1 - alpha x],
// whose integrand is >= 0 for alpha > 1 (convexity), so it is integrated in log space with
// no cancellation; (1 + x)^alpha - 1 - alpha x is evaluated as
// [e^y - 1 - y] + alpha [ln(1 + x) - x] with y = alpha ln(1 + x), each bracket by series
// near 0 (log_math.h). The integrand is a mixture of bumps of width s centred in
// [0, alpha], so [-40 s - 1, alpha + 40 s + 1] holds all but e^-800 of its mass.
#include <cmath>
#include <stdexcept>
#include <string>

#include "dpgnn/privacy/orders.h"
#include "dpgnn/privacy/rdp.h"
#include "log_math.h"
#include "rdp_internal.h"
#include "format.h"

namespace dpgnn::privacy {

namespace detail {

// ln(A_alpha - 1) for integer alpha >= 2, 0 < q < 1.
double poisson_log_a_minus_1_integer(double q, double s, long alpha) {
  const double t = 1.0 / (2.0 * s * s);
  const double log_q = std::log(q), log_1mq = std::log1p(-q);
  detail::LogSum sum;
  for (long i = 2; i <= alpha; ++i) {
    const double di = static_cast<double>(i);
    sum.add(detail::log_binomial(static_cast<double>(alpha), di) + di * log_q +
            (static_cast<double>(alpha) - di) * log_1mq + detail::log_expm1(t * di * (di - 1.0)));
  }
  return sum.value();
}

}  // namespace detail

namespace {

using detail::kNegInf;

// ln((1 + x)^alpha - 1 - alpha x) with 1 + x = 1 - q + q e^u, for 0 < q < 1, alpha > 1.
double log_g(double u, double q, double alpha, double log_q, double log_1mq) {
  const double log_1px = detail::log_add(log_1mq, log_q + u);  // ln(1 + x), x > -1
  const double y = alpha * log_1px;
  if (y > 30.0) {
    // e^y dominates: g = e^y (1 - r), r = (1 + alpha x) e^{-y} in (0, 1), x = e^{ln(1+x)} - 1 > 0,
    // all in logs (x may overflow a double).
    const double log_x = detail::log_expm1(log_1px);
    const double r = std::exp(detail::log_add(0.0, std::log(alpha) + log_x) - y);
    return y + std::log1p(-r);
  }
  // |y| <= 30 (y >= alpha ln(1 - q) > -inf): x is finite; take it straight from u for
  // accuracy when it is tiny.
  const double x = u < 700.0 ? q * std::expm1(u) : std::expm1(log_1px);
  const double l = std::log1p(x);
  const double g = detail::expm1_minus_x(alpha * l) + alpha * detail::log1p_minus_x(x);
  return g > 0.0 ? std::log(g) : kNegInf;
}

}  // namespace

namespace detail {

// ln(A_alpha - 1) for any alpha > 1, 0 < q < 1, by quadrature (see the file comment).
double poisson_log_a_minus_1_quadrature(double q, double s, double alpha) {
  const double log_q = std::log(q), log_1mq = std::log1p(-q);
  const double two_s2 = 2.0 * s * s;
  const double log_norm = -0.5 * std::log(2.0 * std::acos(-1.0)) - std::log(s);
  auto log_integrand = [&](double z) {
    const double u = (2.0 * z - 1.0) / two_s2;
    return log_norm - z * z / two_s2 + log_g(u, q, alpha, log_q, log_1mq);
  };
  // Panels resolve the Gaussian bumps (width s) and the switch of ln(1 + x) from slope 0 to
  // slope alpha/s^2 in z (width ~ s^2); 16 Gauss nodes per panel.
  const double panel = std::min(s, s * s) / 4.0;
  const double lo = -40.0 * s - 1.0, hi = alpha + 40.0 * s + 1.0;
  // |d/dz log integrand| <= (|z| + alpha)/s^2 <= (hi + alpha)/s^2 on [lo, hi].
  const double margin = 60.0 + 1.5 * panel * (hi + alpha) / (s * s);
  return detail::log_integrate(log_integrand, lo, hi, panel, margin);
}

}  // namespace detail

std::vector<double> rdp_poisson(double q, double s, const std::vector<double>& orders) {
  validate_orders(orders);
  if (!std::isfinite(q) || !(q > 0.0) || q > 1.0)
    throw std::invalid_argument("poisson: sampling_rate must be in (0, 1], got " +
                                detail::format_double(q));
  detail::check_noise_multiplier(s);
  if (q == 1.0) return rdp_gaussian(s, orders);  // no sampling: A_alpha = e^{alpha(alpha-1)/(2s^2)}
  std::vector<double> rdp;
  rdp.reserve(orders.size());
  for (double alpha : orders) {
    const bool integer = alpha == std::floor(alpha) && alpha <= 1e6;
    const double log_am1 =
        integer ? detail::poisson_log_a_minus_1_integer(q, s, static_cast<long>(alpha))
                : detail::poisson_log_a_minus_1_quadrature(q, s, alpha);
    // ln A = ln(1 + e^{ln(A - 1)}), exact for tiny A - 1.
    const double log_a = detail::log_add(0.0, log_am1);
    rdp.push_back(log_a / (alpha - 1.0));
  }
  detail::check_finite_rdp(rdp, orders, "poisson");
  return rdp;
}

}  // namespace dpgnn::privacy
