// Epsilon of a history of mechanisms by privacy loss distributions (pld.h), for the schemes
// with a proven dominating pair; `exponential` has none implemented here and a history
// holding it is accounted by RDP (accountant.h falls back per history).
//
// Dominating pair of one step, in dpgnn's noise convention (noise_convention.h: mu = 1/z for
// every Gaussian scheme, sensitivity 2C replace-one or C add/remove):
//   gaussian   N(mu,1) vs N(0,1): mu-GDP (Dong, Roth & Su 2022, Thm 2.7). All Gaussian steps
//              together are GDP with mu = sqrt(sum_i T_i / z_i^2) (ibid., Cor. 3.3), so a
//              history of them alone is answered by the exact closed form (gdp_epsilon).
//   poisson    the remove pair ((1-q) N(0,1) + q N(mu,1), N(0,1)) and the add pair (the same
//              reversed), each composed over the whole history, the worse of the two (the
//              neighbouring dataset is fixed for the run, so the direction is too; Zhu, Dong &
//              Wang 2022, Sec. 5; Koskela et al. 2020).
//   wor        fixed-size sampling of m of n without replacement under replace-one: C_p(G_mu),
//              p = m/n (Dong, Roth & Su 2022, Thm 4.2; Zhu, Dong & Wang 2022, Prop. 30 /
//              Cor. 32), the symmetric pair of pld.h. NOT the Poisson pair with q = m/n, which
//              is not proven for this sampling (Lebeda, Regehr, Kamath & Steinke 2024).
//   dpgnn, groupwor  m of n without replacement, a unit in at most g examples (g = N(K, r) for
//              dpgnn), noise std z 2C g (noise_convention.h): the count mixture of pld.h with
//              mu = 1/(g z), k ~ Hypergeometric(n, g, m). Proof: Daigavane et al.'s proof of
//              their Theorem 1 (Appendix B) with its Renyi step (their Lemma 5) replaced by the
//              joint convexity of the hockey-stick divergence H_a, an f-divergence for every
//              a >= 0: conditioned on the batch, the two outputs are Gaussians shifted by at
//              most 2Ck, so H_a <= sum_k P'[k] H_a(G_{k mu}) with k's law P' for the changed
//              unit; H_a(G_s) grows with s and Hypergeometric(n, g, m) stochastically
//              dominates P' (their Lemma 6), so H_a <= sum_k P[k] H_a(G_{k mu}), in both
//              directions and for every a >= 0: the pair dominates the step in the sense of
//              Zhu, Dong & Wang 2022 (Def. 7), whose Thm 10 extends it to adaptive
//              composition. Its Renyi divergence is exactly Daigavane et al.'s gamma, so the
//              PLD is never looser than their RDP.
//   laplace    one coordinate, scale b = z Delta: Lap(1/z, 1) vs Lap(0, 1), the worst-case
//              pair of the Laplace mechanism (Sommer, Meiser & Mohammadi 2019, Sec. 5;
//              Koskela, Jälkö, Prediger & Honkela 2021; dp_accounting's LaplacePrivacyLoss),
//              mirror-symmetric under y -> 1/z - y, so both directions are the same.
// m = n (wor, dpgnn, groupwor) and q = 1 (poisson) are the plain Gaussian.
#pragma once

#include <optional>
#include <vector>

#include "dpgnn/privacy/accountant.h"
#include "dpgnn/privacy/mechanism.h"
#include "dpgnn/privacy/subsample.h"

namespace dpgnn::privacy {

// True for the schemes with a dominating pair above (all but exponential).
bool has_pld(Scheme scheme);
bool has_pld(const std::vector<AccountantEvent>& events);

struct PldOptions {
  double grid = 1e-4;   // loss grid h (coarsened by 2 while the window exceeds max_points)
  double tail = 1e-20;  // per-step tail and window tail bounds, added to delta
  std::size_t max_points = std::size_t{1} << 21;
};

// Epsilon at delta (an upper bound; +infinity if the tails alone exceed delta) and delta at
// epsilon of the composition of `events`. Throw std::invalid_argument for an event without
// a PLD or bad delta/epsilon; std::domain_error when the losses are too large to represent
// (absurdly small noise): the caller uses RDP then.
double pld_epsilon(const std::vector<AccountantEvent>& events, double delta, const PldOptions& options = {});
double pld_delta(const std::vector<AccountantEvent>& events, double epsilon, const PldOptions& options = {});

// The run's PLD epsilon as epsilon_of_run (subsample.h) defines it: with a hidden subsample
// of rate q, epsilon at delta / q amplified by Balle, Barthe & Gaboardi 2018, Sec. 5.
// nullopt when the history has a scheme without a PLD or its losses are unrepresentable
// (the caller keeps RDP then).
std::optional<double> pld_epsilon_of_run(const std::vector<AccountantEvent>& events, double delta,
                                         const std::optional<Subsample>& subsample);
// Its delta at epsilon: q times the inner delta at the inner epsilon.
std::optional<double> pld_delta_of_run(const std::vector<AccountantEvent>& events, double epsilon,
                                       const std::optional<Subsample>& subsample);

}  // namespace dpgnn::privacy
