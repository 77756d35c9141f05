// THE noise convention of dpgnn, in one place (DESIGN.md decision 2).
//
//   noise_multiplier z = sigma / sensitivity,
//   sigma = standard deviation of the Gaussian noise added to the SUM of the clipped
//           per-example (per-subgraph, per-node) contributions, each clipped to norm C.
//
// The sensitivity of that sum depends on the neighbouring relation:
//   replace-one (kWor: DRW, DRW-R, DRW-D) : 2C     (one contribution replaced: |g - g'| <= 2C)
//   add/remove  (kPoisson: DP-MLP)        : C      (one contribution added or removed)
//   plain Gaussian (kGaussian)            : C      (add/remove, nothing sampled)
//   node-level DP-GNN (kDpGnn)            : 2C N(K, r)  (a node changes up to N(K, r)
//                                                  terms; Daigavane et al., Lemma 1/Thm 1)
//   group WOR (kGroupWor)                 : 2C g   (a unit changes up to g terms, each by 2C)
// With these, the per-step RDP of every Gaussian scheme at sampling rate 1 is alpha / (2 z^2).
//
// Two schemes add other noise, and there "noise std" means the noise SCALE, z * sensitivity,
// with `clip` read as the sensitivity Delta of the released quantity:
//   exponential (kExponential)            : Delta = the utility's sensitivity (e.g. DPAR's
//                                          per-entry clip C_2); Gumbel scale beta = z Delta
//   Laplace (kLaplace)                    : Delta = the coordinate's L1 sensitivity;
//                                          Laplace scale b = z Delta
// Beware: Google's dp_accounting reads the same argument as sigma/(2C) in its replace-one
// RDP path but as sigma/C in its PLD accountant (its issue #378); dpgnn never does that.
// The trainer converts (clip, z, scheme) to sigma with noise_std() and nothing else.
#pragma once

#include <cstdint>

#include "dpgnn/privacy/mechanism.h"

namespace dpgnn::privacy {

// The L2 sensitivity of the clipped sum for `scheme` with clip norm `clip` (> 0) and
// group size N(K, r) or g (used by kDpGnn and kGroupWor only, >= 1); for kExponential and
// kLaplace, `clip` itself (the sensitivity Delta). Throws std::invalid_argument.
double sensitivity(Scheme scheme, double clip, std::int64_t group_size = 1);

// sigma = noise_multiplier * sensitivity(scheme, clip, group_size) (the Gumbel or Laplace
// scale for kExponential and kLaplace).
double noise_std(Scheme scheme, double clip, double noise_multiplier,
                 std::int64_t group_size = 1);

// noise_multiplier = sigma / sensitivity(scheme, clip, group_size).
double noise_multiplier_from_std(Scheme scheme, double clip, double sigma,
                                 std::int64_t group_size = 1);

// The same, reading the scheme and N(K, r) or g from a mechanism.
double noise_std(const Mechanism& mechanism, double clip);

}  // namespace dpgnn::privacy
