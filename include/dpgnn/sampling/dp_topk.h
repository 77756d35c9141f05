// DP top-K release of one APPR vector: DPAR's DP-APPR mechanisms (Zhang et al., "DPAR:
// Decoupled Graph Neural Networks with Node-Level Differential Privacy", Sec. 3.1,
// Algorithm 1 = DP-APPR-EM with options I/II, and Appendix B, Algorithm 3 = DP-APPR-GM).
//
// The candidates are a public universe of U items 0..U-1 (the caller maps node ids to
// candidate indices); the APPR vector is sparse over them and every other entry is 0.
//  - gm  (Appendix B / Algorithm 3, lines 6-10): clip the l2 norm, v <- v / max(1, ||v||_2 / C1);
//        add N(0, sigma^2) to EVERY one of the U entries; report the K largest noisy entries
//        with their noisy values. sigma = noise_scale (calibrated by the caller).
//  - em0 (Algorithm 1, lines 6-10 and option I, line 12): clip each entry,
//        v_j <- v_j / max(1, |v_j| / C2) = min(v_j, C2) for v_j >= 0; add Gumbel(0, beta) to
//        every one of the U entries; report the K indices with the largest noisy scores
//        (the one-shot Gumbel form of the exponential mechanism's top-K, Durfee & Rogers 2019,
//        DPAR's Corollary 1); every reported value is 1/K. beta = noise_scale (= C2/eps_1).
//  - em1 (Algorithm 1, option II, line 13): the same indices; each reported value is the
//        CLIPPED entry plus independent Laplace(0, b), b = value_noise_scale (= K C2 / eps_2).
//
// The U - |support| zero entries are never materialised (U may be 10^6..10^9 or more): their
// noise is iid, so the K largest of them are drawn directly as the top order statistics of
// n = U - |support| iid draws (Renyi's representation / sequential maxima: the largest of n
// iid uniforms is V_1^{1/n}, the next the previous times V_2^{1/(n-1)}, ...; Devroye,
// "Non-Uniform Random Variate Generation", 1986, Sec. V.3), mapped through the noise's inverse
// CDF in log space, and given distinct uniformly random indices among the non-support
// candidates (exchangeability: which zero entries hold the largest noise is a uniform
// random ordered K-subset, independent of the values). The result has exactly the
// distribution of the direct mechanism over all U entries; the cost is O(|support| + K)
// draws (plus rejections when the support fills most of the universe).
//
// Every random number comes from the SecureStream passed in (DESIGN.md 7: the noise is
// hidden, so it is keyed by a secret, never by the public seed).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "dpgnn/sampling/appr.h"
#include "dpgnn/util/secure_rng.h"

namespace dpgnn::sampling {

enum class TopKMechanism { gm, em0, em1 };

struct TopKOptions {
  TopKMechanism mechanism = TopKMechanism::gm;
  int k = 2;                       // K >= 1 (DPAR Sec. 4: 2)
  double clip = 0.01;              // > 0: C1 (gm: l2 norm of the vector; DPAR: 0.01) or
                                   //      C2 (em0/em1: each entry; DPAR: 0.001)
  double noise_scale = 1.0;        // > 0: gm: Gaussian std sigma; em0/em1: Gumbel scale beta
  double value_noise_scale = 1.0;  // > 0: em1 only: Laplace scale b of each reported value
};

// K entries ordered by decreasing noisy score (gm: the value is that score).
struct TopK {
  std::vector<std::int64_t> index;
  std::vector<double> value;
};

// One DP top-K release of `v` (indices strictly increasing in [0, universe), values finite
// and >= 0) over the universe [0, universe). Throws std::invalid_argument naming the
// offending option or input: k < 1, clip <= 0, noise_scale <= 0, value_noise_scale <= 0
// (em1 only), non-finite options, universe < 1, an index outside [0, universe) or out of
// order, or a negative or non-finite value. Reports min(k, members) entries.
TopK dp_topk(const SparseVector& v, std::int64_t universe, const TopKOptions& o, SecureStream& rng);

// A universe that is a subset of [0, range): the `members` indices for which is_member holds
// (DPAR's graph sampling: the training nodes of the hidden sample). The zero entries are then
// the members outside the support, and their indices are drawn uniformly among those members
// (rejection over [0, range): about range / members draws each). is_member empty = every
// index of [0, range) (members must then equal range).
struct TopKUniverse {
  std::int64_t range = 0;
  std::int64_t members = 0;
  std::function<bool(std::int64_t)> is_member;
};
// As above over `universe`; additionally throws std::invalid_argument when a support index is
// not a member or members is outside [1, range].
TopK dp_topk(const SparseVector& v, const TopKUniverse& universe, const TopKOptions& o, SecureStream& rng);

// ---- samplers (exposed for tests; every one draws only from `rng`) ----------------------
namespace topk_detail {

// Uniform in (0, 1): rng.uniform() redrawn while it is 0 (so logarithms stay finite).
double open_uniform(SecureStream& rng);
// Standard normal, Box-Muller (Box & Muller 1958): sqrt(-2 ln U1) cos(2 pi U2), U1 in (0, 1].
double standard_normal(SecureStream& rng);
// Gumbel(0, beta) (max-stable, CDF exp(-exp(-x / beta))): -beta ln(-ln U), U in (0, 1).
double gumbel(SecureStream& rng, double beta);
// Laplace(0, b) by the inverse CDF: b ln(2U) for U < 1/2, -b ln(2(1-U)) otherwise, U in (0, 1).
double laplace(SecureStream& rng, double b);
// The upper-tail standard normal quantile: x with Q(x) = 1 - Phi(x) = t, for t in (0, 1),
// accurate to a few ulps even for t = 1e-300 (Acklam's rational approximation refined by
// Halley steps on erfc).
double normal_upper_quantile(double t);
// The `count` largest of n iid noise draws (count <= n), largest first, as log-CDF values
// L_1 >= L_2 >= ... (L_i = ln F(X_(i))): L_1 = ln(V_1)/n, L_{i+1} = L_i + ln(V_{i+1})/(n-i).
std::vector<double> top_order_statistics_log_cdf(SecureStream& rng, std::uint64_t n, int count);
// Map a log-CDF value L = ln u to the noise value F^{-1}(u):
double gaussian_from_log_cdf(double log_u, double sigma);  // sigma * Phi^{-1}(e^L), via t = -expm1(L)
double gumbel_from_log_cdf(double log_u, double beta);     // -beta ln(-L)

}  // namespace topk_detail
}  // namespace dpgnn::sampling
