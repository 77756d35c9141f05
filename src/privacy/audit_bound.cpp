// Steinke, Nasr & Jagielski 2023 ("Privacy Auditing with One (1) Training Run"), Theorem 3
// and Algorithm 2; see audit_bound.h for the statement. All binomial probabilities are
// carried as logarithms: with r in the thousands and p near 1 the individual terms underflow
// a double long before the tail they sum to is negligible.
#include "dpgnn/privacy/audit_bound.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "log_math.h"

namespace dpgnn::privacy {
namespace {

using detail::kNegInf;

void validate(const AuditCounts& c, double delta) {
  if (!(0 <= c.correct && c.correct <= c.guesses && c.guesses <= c.canaries))
    throw std::invalid_argument("audit: need 0 <= correct (" + std::to_string(c.correct) + ") <= guesses (" +
                                std::to_string(c.guesses) + ") <= canaries (" + std::to_string(c.canaries) + ")");
  if (!(delta >= 0.0 && delta <= 1.0))
    throw std::invalid_argument("audit: delta must be in [0, 1], got " + std::to_string(delta));
}

// ln p and ln(1 - p) for p = e^eps / (e^eps + 1) = 1 / (1 + e^-eps), without overflow.
struct LogOdds {
  double log_p, log_q;
  explicit LogOdds(double eps) {
    const double l = std::log1p(std::exp(-eps));  // ln(1 + e^-eps), eps >= 0
    log_p = -l;
    log_q = -eps - l;  // ln(1 - p) = ln(e^-eps / (1 + e^-eps))
  }
};

double log_pmf(std::int64_t r, std::int64_t k, const LogOdds& o) {
  return detail::log_binomial(static_cast<double>(r), static_cast<double>(k)) + static_cast<double>(k) * o.log_p +
         static_cast<double>(r - k) * o.log_q;
}

}  // namespace

double log_binomial_upper_tail(std::int64_t r, std::int64_t v, double eps) {
  if (r < 0) throw std::invalid_argument("audit: r must be >= 0");
  if (!(eps >= 0.0) || !std::isfinite(eps)) throw std::invalid_argument("audit: eps must be finite and >= 0");
  if (v <= 0) return 0.0;
  if (v > r) return kNegInf;
  const LogOdds o(eps);
  detail::LogSum s;
  for (std::int64_t k = v; k <= r; ++k) s.add(log_pmf(r, k, o));
  return std::min(0.0, s.value());
}

double audit_p_value(const AuditCounts& c, double eps, double delta) {
  validate(c, delta);
  if (!(eps >= 0.0) || !std::isfinite(eps)) throw std::invalid_argument("audit: eps must be finite and >= 0");
  const std::int64_t r = c.guesses, v = c.correct;
  // Pure-DP part of Theorem 3: P[Bin(r, p) >= v].
  const double tail = std::exp(log_binomial_upper_tail(r, v, eps));
  // The delta part: 2 m delta * max_{i=1..v} P[v - i <= Bin(r, p) < v] / i (Theorem 3; the
  // authors' Algorithm 2 takes the same maximum over i = 1..v).
  double log_alpha = kNegInf;
  if (delta > 0.0 && v > 0) {
    const LogOdds o(eps);
    double log_window = kNegInf;  // ln P[v - i <= Bin < v]
    for (std::int64_t i = 1; i <= v; ++i) {
      log_window = detail::log_add(log_window, log_pmf(r, v - i, o));
      log_alpha = std::max(log_alpha, log_window - std::log(static_cast<double>(i)));
    }
  }
  const double p = tail + 2.0 * static_cast<double>(c.canaries) * delta * std::exp(log_alpha);
  return std::min(1.0, p);
}

double audit_epsilon_lower_bound(const AuditCounts& c, double delta, double beta) {
  validate(c, delta);
  if (!(beta > 0.0 && beta < 1.0)) throw std::invalid_argument("audit: beta must be in (0, 1), got " + std::to_string(beta));
  if (audit_p_value(c, 0.0, delta) >= beta) return 0.0;
  // Invariant (Algorithm 2): p(lo) < beta <= p(hi).
  double lo = 0.0, hi = 1.0;
  while (audit_p_value(c, hi, delta) < beta) {
    lo = hi;
    hi *= 2.0;
    // P[Bin(r, p) >= v] -> 1 as eps -> infinity for v <= r, so this ends; 2^12 is far past
    // any double-precision p < 1.
    if (hi > 4096.0) return lo;
  }
  while (hi - lo > 1e-10) {
    const double mid = 0.5 * (lo + hi);
    if (audit_p_value(c, mid, delta) < beta)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

}  // namespace dpgnn::privacy
