// Standard normal CDF helpers for the PLD accountant (internal; standard library only).
#pragma once

#include <cmath>

namespace dpgnn::privacy::detail {

// Phi(x) = erfc(-x / sqrt 2) / 2: accurate in both tails (no 1 - small cancellation).
inline double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// Phi(b) - Phi(a) for a <= b (either may be infinite), computed from the tail that keeps
// relative precision: both upper tails when a >= 0, both lower tails when b <= 0.
inline double normal_mass(double a, double b) {
  if (!(a < b)) return 0.0;
  if (a >= 0.0) return normal_cdf(-a) - normal_cdf(-b);
  if (b <= 0.0) return normal_cdf(b) - normal_cdf(a);
  return 1.0 - normal_cdf(a) - normal_cdf(-b);
}

// A bound on the rounding error of normal_cdf(x): erfc within a few ulp, and the rounding of
// its argument x / sqrt 2, which erfc's slope (d ln erfc(t) / dt ~ -2t) magnifies by 2 t^2.
inline double normal_cdf_error(double x) {
  constexpr double u = 0x1p-53;
  if (std::isinf(x)) return 0.0;
  return (8.0 + 2.0 * x * x) * u * normal_cdf(x);
}

// A bound on the rounding error of normal_mass(a, b) (the two CDF errors and the subtraction).
inline double normal_mass_error(double a, double b) {
  constexpr double u = 0x1p-53;
  if (!(a < b)) return 0.0;
  if (a >= 0.0) return normal_cdf_error(-a) + normal_cdf_error(-b) + u * normal_mass(a, b);
  if (b <= 0.0) return normal_cdf_error(b) + normal_cdf_error(a) + u * normal_mass(a, b);
  return normal_cdf_error(a) + normal_cdf_error(-b) + 3.0 * u;
}

// ln Phi(x), with the asymptotic series for x < -35 where erfc underflows
// (Abramowitz & Stegun 26.2.12).
inline double log_normal_cdf(double x) {
  if (x > -35.0) return std::log(normal_cdf(x));
  const double x2 = x * x;
  return -0.5 * x2 - std::log(-x) - 0.5 * std::log(2.0 * M_PI) +
         std::log1p(-1.0 / x2 + 3.0 / (x2 * x2));
}

}  // namespace dpgnn::privacy::detail
