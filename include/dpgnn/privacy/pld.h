// Privacy loss distributions (PLDs): the numerical core of the PLD accountant.
//
// A pair of output distributions (P, Q) of one step is described by its privacy loss
// L = ln(dP/dQ)(Y), Y ~ P (Dwork & Rothblum 2016; Sommer, Meiser & Mohammadi 2019), and
//   delta(eps) = H_{e^eps}(P || Q) = E_P[(1 - e^{eps - L})_+] + P[L = +inf]
// (Sommer et al. 2019; Koskela et al. 2020). Independent composition adds the losses, so the PLD of T
// steps is the T-fold convolution of the one-step PLDs (Sommer et al. 2019; Koskela,
// Jälkö & Honkela 2020), computed here by FFT on the grid h Z.
//
// Everything here errs on the safe side (an upper bound on delta(eps), hence on eps(delta)):
//  * discretisation is pessimistic: each loss l in a grid cell [a, b] is split between a and
//    b keeping the mass and E[e^{-L}] (the "connect the dots" discretisation of Doroshenko,
//    Ghazi, Kamath, Kumar & Manurangsi 2022): by Jensen, (1 - e^eps x)_+ being
//    convex in x = e^{-l}, the hockey-stick curve only grows for every eps, so the discrete
//    pair dominates the true one, and domination survives composition;
//  * the upper tail of a step beyond the grid goes to the +inf atom (counted in delta); the
//    lower tail is rounded up to the grid's lowest point;
//  * the FFT convolution is circular on a window [a h, (a + N) h); mass below the window
//    wraps to higher losses (pessimistic), mass above it would wrap to lower losses, so a
//    Chernoff bound on P[sum > window] (from the exact moment generating function of the
//    discrete PLDs) is added to the +inf atom;
//  * floating-point rounding is charged, never ignored (issue 34: uncharged, the FFT's noise
//    floor let epsilon fall below the exact value at delta 1e-15 and 1e-18). The cell masses of
//    the discretisation carry a bound on their rounding error, which is added to the P-mass,
//    subtracted from the Q-mass and moves mass to the upper point of its cell (each only
//    raises the hockey-stick curve, and the composition's with it: monotone coupling). The FFT
//    convolution's error is bounded in the l2 norm (Higham 2002, "Accuracy and Stability of
//    Numerical Algorithms", Thm 24.2, for the forward and inverse transforms; the mean-value
//    bound for the powers and products in between) and delta() and epsilon() add the most it
//    can raise delta: ||error||_2 sqrt(#grid points of the window above eps) (Cauchy-Schwarz;
//    the hockey-stick weights are <= 1). As in dp_accounting and the PRV accountant (Gopi,
//    Lee & Wutschitz 2021), the error is explicit: at deltas far below the FFT's noise floor the
//    charged epsilon rises to the window's top (still an upper bound) and the accountant
//    reports the smaller RDP value instead.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace dpgnn::privacy {

// A privacy loss distribution on the grid h Z: mass[j] at loss (offset + j) h, plus an atom
// at +infinity. Total mass <= 1 (mass at -infinity is dropped: it never contributes).
struct DiscretePld {
  double h = 1e-4;
  std::int64_t offset = 0;
  std::vector<double> mass;
  double infinity_mass = 0.0;
  // A composed PLD's floating-point error (compose): the masses of the exact convolution on
  // the window's grid points [window_lo, window_hi] differ from `mass` (0 outside its range)
  // by a vector of l2 norm <= mass_error_l2. 0 for an exact (discretised) PLD.
  double mass_error_l2 = 0.0;
  std::int64_t window_lo = 0, window_hi = -1;

  // What the mass error can add to delta at eps: mass_error_l2 sqrt(#window points above eps).
  double error_charge(double epsilon) const;

  // delta(eps) = inf + sum_{l > eps} m_l (1 - e^{eps - l}) + error_charge(eps).
  double delta(double epsilon) const;
  // The smallest eps >= 0 with delta(eps) <= target (+infinity when the atom at +inf alone
  // is >= target). delta is continuous and decreasing in eps between grid points, so the
  // crossing is solved exactly on its cell.
  double epsilon(double delta) const;
};

// The one-step pairs dpgnn needs. The Gaussian mixtures, with remove pair
// R = ((1 - q) N(0,1) + q N(mu,1),  N(0,1)):
//   kRemove     R itself;
//   kAdd        R reversed (N(0,1), (1 - q) N(0,1) + q N(mu,1));
//   kSymmetric  the symmetric pair whose trade-off function is C_q(G_mu) =
//               min(f_q, f_q^{-1})** with f_q = T(R) (Dong, Roth & Su 2022, Thm 4.2 and the
//               piecewise form following it; Zhu, Dong & Wang 2022, Prop. 30 / Cor. 32): the
//               losses > 0 of R, their mirror image (mass e^{-l} P_R(l) at -l) and an atom at
//               0. q = 1 is the plain Gaussian N(mu,1) vs N(0,1).
// And two more:
//   kCountMixture  a unit in at most g of n examples, m of them drawn without replacement,
//               the Gaussian shift k mu when k of its examples are drawn, with k revealed:
//               P = (k, N(k mu, 1)), Q = (k, N(0, 1)), k ~ Hypergeometric(n, g, m). Its
//               curve is delta(eps) = sum_k P[k] delta_{G_{k mu}}(eps).
//   kLaplace    Lap(mu, 1) vs Lap(0, 1) (scale 1, shift mu = sensitivity / scale): losses in
//               [-mu, mu], delta(eps) = 1 - e^{(eps - mu)/2} for 0 <= eps < mu, else 0.
enum class PairKind { kRemove, kAdd, kSymmetric, kCountMixture, kLaplace };

struct MixturePair {
  PairKind kind = PairKind::kSymmetric;
  double q = 1.0;   // in (0, 1]; m / n for kCountMixture, 1 for kLaplace
  double mu = 1.0;  // > 0
  std::int64_t n = 0, m = 0, g = 0;  // kCountMixture only: population, batch, group bound
  bool operator<(const MixturePair& o) const;
};

// Exact hockey-stick curve of the pair (closed form from normal CDFs).
double pair_delta(const MixturePair& pair, double epsilon);

// Pessimistic discretisation on the grid h Z; the P-mass above the grid's top (chosen so
// that it is <= tail) goes to +infinity. Throws std::domain_error when the losses leave the
// range where e^{loss} is representable.
DiscretePld discretise(const MixturePair& pair, double h, double tail = 1e-20);

// The PLD of the composition of count_i copies of each part (all on the same grid h; exact
// parts, mass_error_l2 == 0), with its rounding error bound (mass_error_l2, the window).
// Throws std::domain_error if the window would need more than max_points grid points (the
// caller retries on a coarser grid).
DiscretePld compose(const std::vector<std::pair<const DiscretePld*, std::int64_t>>& parts,
                    double tail = 1e-20, std::size_t max_points = std::size_t{1} << 21);

// Exact mu-GDP (Dong, Roth & Su 2022, Def. 2.6 / Cor. 2.13; Balle & Wang 2018, Thm 8):
//   delta(eps) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2),
// and the eps that meets delta (bisection on this decreasing function, upper end returned).
double gdp_delta(double mu, double epsilon);
double gdp_epsilon(double mu, double delta);

}  // namespace dpgnn::privacy
