// Numerically careful scalar helpers shared by the RDP accountants (internal header).
//
// Every accountant works with quantities such as C(alpha, j) q^j exp(j(j-1)/(2 sigma^2))
// that overflow a double long before the privacy loss they describe becomes meaningless
// (alpha = 1024, sigma = 0.5), or that differ from 1 by less than machine epsilon (tiny
// rates, huge noise). So everything is carried as logarithms, combined with log-sum-exp,
// and the "1 + tiny" and "tiny - tiny" cases use expm1/log1p or explicit series.
// Standard library only (the privacy module is audited on its own).
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

namespace dpgnn::privacy::detail {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// ln(e^a + e^b), exact for a or b = -inf.
double log_add(double a, double b);

// ln(sum_i e^{x_i}) over a vector (max-shifted); -inf for an empty or all -inf input.
double log_sum_exp(const std::vector<double>& xs);

// Streaming log-sum-exp: add terms one by one without storing them.
class LogSum {
 public:
  void add(double log_term);
  double value() const;  // ln(sum of added terms); -inf if none

 private:
  double max_ = kNegInf;
  double scaled_sum_ = 0.0;  // sum of e^{term - max_}
};

// ln C(n, k) for real n >= k >= 0 via lgamma (exact for the small integer cases).
double log_binomial(double n, double k);

// ln(e^x - 1) for x > 0, accurate for tiny x (expm1) and large x (no overflow).
double log_expm1(double x);

// e^x - 1 - x, accurate for all x (series near 0, where the subtraction would cancel).
double expm1_minus_x(double x);

// ln(1 + x) - x for x > -1, accurate for all x (series near 0).
double log1p_minus_x(double x);

// ln of the integral over the real line of exp(log_f(z)), for a log-integrand that is
// -inf or finite everywhere, smooth, and has all but a negligible part of its mass inside
// [lo, hi]. Composite Gauss-Legendre (16 nodes per panel) on panels of width at most
// `panel`, summed in log space. Panels whose midpoint and neighbours' midpoints are all
// more than `margin` below the largest midpoint value are skipped: the caller chooses
// margin >= 60 + (the most log_f can rise within one and a half panels), so each skipped
// panel adds less than e^-60 relative. Used for the fractional-order Poisson RDP integral
// and the Gaussian forward differences (see rdp_poisson.cpp, rdp_wor.cpp).
double log_integrate(const std::function<double(double)>& log_f, double lo, double hi,
                     double panel, double margin);

}  // namespace dpgnn::privacy::detail
