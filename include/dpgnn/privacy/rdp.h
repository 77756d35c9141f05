// Per-step Rényi DP of one noisy, subsampled gradient step, at a list of orders.
//
// rdp[i] is a bound on D_{alpha_i}(M(D) || M(D')) over all neighbouring D, D' for ONE
// step; T identical steps give T * rdp (Mironov 2017, Proposition 1). All arguments use
// the noise convention of noise_convention.h (z = sigma / sensitivity), so every scheme at
// sampling rate 1 reduces to the plain Gaussian alpha / (2 z^2).
// Sources and exactness per scheme are documented at each function and in docs/privacy.md.
// Results are finite and >= 0: a bound that overflows a double (absurdly small noise) is
// reported as std::invalid_argument naming the order, never returned as +inf.
#pragma once

#include <cstdint>
#include <vector>

#include "dpgnn/privacy/mechanism.h"

namespace dpgnn::privacy {

// Plain Gaussian mechanism: alpha / (2 z^2) (Mironov 2017, Corollary 3).
std::vector<double> rdp_gaussian(double noise_multiplier, const std::vector<double>& orders);

// Poisson-subsampled Gaussian, add/remove (Mironov, Talwar & Zhang 2019): exact.
// Integer alpha: the binomial sum of their Section 3.3; fractional alpha: numerical
// integration of A_alpha = E_{z~N(0,s^2)}[(1 - q + q e^{(2z-1)/(2 s^2)})^alpha].
std::vector<double> rdp_poisson(double sampling_rate, double noise_multiplier,
                                const std::vector<double>& orders);

// Uniform sampling without replacement of a fraction q = m/n, replace-one (Wang, Balle &
// Kasiviswanathan 2019): an upper bound (Theorem 9, tightened for the Gaussian for
// integer orders <= 256; Corollary 10 interpolation for fractional orders).
std::vector<double> rdp_wor(double sampling_rate, double noise_multiplier,
                            const std::vector<double>& orders);

// Node-level DP-GNN step (Daigavane et al., Theorem 1): exact expectation over
// rho ~ Hypergeometric(N = dataset_size, N(K, r) = group_size, m = batch_size).
std::vector<double> rdp_dpgnn(std::int64_t dataset_size, std::int64_t batch_size,
                              std::int64_t group_size, double noise_multiplier,
                              const std::vector<double>& orders);

// ONE selection of the exponential mechanism by Gumbel-max noise of scale beta on utilities
// of sensitivity Delta, z = beta / Delta: eps-bounded range with eps = 2 / z (Dong, Durfee &
// Rogers 2020), hence (eps^2 / 8)-zCDP (Cesar & Rogers 2021), i.e. alpha / (2 z^2) at order
// alpha (Bun & Steinke 2016, Def. 1.1); also eps-DP, so never more than 2 / z (Rényi
// divergence is non-decreasing in alpha). Returns min(alpha / (2 z^2), 2 / z). A one-shot
// Gumbel top-K is K selections (Durfee & Rogers 2019): K events.
std::vector<double> rdp_exponential(double noise_multiplier, const std::vector<double>& orders);

// The Laplace mechanism on ONE coordinate, scale b = z * Delta (Mironov 2017, Proposition 6
// / Table II): 1/(alpha-1) ln(alpha/(2alpha-1) e^{(alpha-1)/z} + (alpha-1)/(2alpha-1)
// e^{-alpha/z}), exact; <= 1/z (its value at alpha = infinity).
std::vector<double> rdp_laplace(double noise_multiplier, const std::vector<double>& orders);

// k-ary randomized response at eps = 1 / z (rdp_rr.cpp; Mironov 2017 Table II, k outputs):
// 1/(alpha-1) [ln(e^{alpha eps} + e^{-(alpha-1) eps} + k - 2) - ln(e^eps + k - 1)], exact;
// <= eps (its value at alpha = infinity).
std::vector<double> rdp_randomized_response(std::int64_t categories, double noise_multiplier,
                                            const std::vector<double>& orders);

// Dispatch on the mechanism's scheme (kGroupWor: rdp_dpgnn with group size g).
std::vector<double> rdp_per_step(const Mechanism& mechanism, const std::vector<double>& orders);

}  // namespace dpgnn::privacy
