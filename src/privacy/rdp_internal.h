// Internal helpers shared by the per-scheme RDP files.
#pragma once

#include <vector>

namespace dpgnn::privacy::detail {

// Throws std::logic_error on NaN/negative entries and std::invalid_argument on +inf (noise too small), so no
// accountant ever returns a non-finite RDP.
void check_finite_rdp(const std::vector<double>& rdp, const std::vector<double>& orders,
                      const char* scheme);
// Throws std::invalid_argument unless the noise multiplier z is finite and > 0.
void check_noise_multiplier(double z);

// Exposed for the tests that check the two computations of each quantity against each other.
// Poisson (rdp_poisson.cpp): ln(A_alpha - 1) by the binomial sum (integer alpha >= 2) and by
// quadrature (any alpha > 1), 0 < q < 1.
double poisson_log_a_minus_1_integer(double q, double s, long alpha);
double poisson_log_a_minus_1_quadrature(double q, double s, double alpha);
// WOR (rdp_wor.cpp): ln of the j-th forward difference (even j >= 4) of e^{k(k-1)/(2 z^2)} at
// 0, by the alternating sum (NaN when it cancels too much) and by quadrature.
double wor_log_forward_difference_sum(long j, double z);
double wor_log_forward_difference_quadrature(long j, double z);

}  // namespace dpgnn::privacy::detail
