// DP top-K release of one APPR vector (see dp_topk.h): DPAR (Zhang et al.) Algorithm 1
// (DP-APPR-EM, options I and II) and Appendix B / Algorithm 3 (DP-APPR-GM), with the zero
// entries' noise drawn as order statistics instead of one variate per candidate.
//
// Floating-point caveat (as for every textbook sampler): the samplers below map 53-bit
// uniforms through floating-point functions, so the released values are not exactly the
// continuous distributions the privacy analysis assumes (Mironov, "On significance of the
// least significant bits for differential privacy", CCS 2012). The reported INDICES are what
// DPAR's top-K analysis protects; em1's and gm's reported values inherit this caveat.
#include "dpgnn/sampling/dp_topk.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace dpgnn::sampling {
namespace topk_detail {

double open_uniform(SecureStream& rng) {
  // uniform() is k 2^-53, k uniform in [0, 2^53); redrawing 0 leaves k uniform in [1, 2^53).
  for (;;) {
    const double u = rng.uniform();
    if (u > 0.0) return u;
  }
}

double standard_normal(SecureStream& rng) {
  // Box & Muller, "A note on the generation of random normal deviates", Ann. Math. Stat. 29
  // (1958): sqrt(-2 ln U1) cos(2 pi U2) is N(0, 1) for independent uniforms. U1 = 1 - uniform()
  // lies in (0, 1], so the logarithm is finite.
  const double u1 = 1.0 - rng.uniform();
  const double u2 = rng.uniform();
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

double gumbel(SecureStream& rng, double beta) {
  // Inverse CDF of Gumbel(0, beta), F(x) = exp(-exp(-x / beta)): F^{-1}(u) = -beta ln(-ln u)
  // (the noise of the one-shot top-K exponential mechanism, Durfee & Rogers, NeurIPS 2019;
  // DPAR Algorithm 1 line 8). u in (0, 1): both logarithms finite.
  return -beta * std::log(-std::log(open_uniform(rng)));
}

double laplace(SecureStream& rng, double b) {
  // Inverse CDF of Laplace(0, b): F(x) = e^{x/b} / 2 for x < 0, 1 - e^{-x/b} / 2 for x >= 0
  // (Dwork & Roth 2014, Def. 3.2). u in (0, 1) and 1 - u >= 2^-53: both logarithms finite.
  const double u = open_uniform(rng);
  return u < 0.5 ? b * std::log(2.0 * u) : -b * std::log(2.0 * (1.0 - u));
}

namespace {

// Acklam's rational approximation of Phi^{-1}(p) for p in (0, 1/2] (P. J. Acklam, "An
// algorithm for computing the inverse normal cumulative distribution function", 2003;
// relative error < 1.15e-9 before refinement).
double acklam_lower(double p) {
  static constexpr double a[6] = {-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
                                  1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[5] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                  6.680131188771972e+01,  -1.328068155288572e+01};
  static constexpr double c[6] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                  -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[4] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                  3.754408661907416e+00};
  constexpr double p_low = 0.02425;
  if (p < p_low) {
    const double q = std::sqrt(-2.0 * std::log(p));
    return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
           ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  }
  const double q = p - 0.5;
  const double r = q * q;
  return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
         (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
}

}  // namespace

double normal_upper_quantile(double t) {
  if (!(t > 0.0 && t < 1.0)) throw std::invalid_argument("normal_upper_quantile: t must be in (0, 1)");
  if (t > 0.5) return -normal_upper_quantile(1.0 - t);  // Q^{-1}(t) = -Q^{-1}(1 - t)
  // Start: Q^{-1}(t) = -Phi^{-1}(t) (symmetry), Phi^{-1} by Acklam.
  double x = -acklam_lower(t);
  // Halley's method on f(x) = Q(x) - t, Q(x) = erfc(x / sqrt 2) / 2, f' = -phi(x), f'' = x phi(x):
  // x <- x + r / (1 - x r / 2), r = (Q(x) - t) / phi(x) (Acklam's refinement step written for
  // the upper tail; erfc keeps full relative precision of Q(x) for large x, where 1 - Phi(x)
  // would cancel). Cubic convergence: one step from 1e-9 reaches double precision; at most 3.
  constexpr double kInvSqrt2 = 0.70710678118654752440084436210485;
  constexpr double kInvSqrt2Pi = 0.39894228040143267793994605993438;
  for (int it = 0; it < 3; ++it) {
    const double q = 0.5 * std::erfc(x * kInvSqrt2);
    const double phi = kInvSqrt2Pi * std::exp(-0.5 * x * x);
    if (!(phi > 0.0) || !std::isfinite(phi)) break;  // t below ~1e-305: keep Acklam's value
    const double r = (q - t) / phi;
    const double step = r / (1.0 - 0.5 * x * r);
    x += step;
    if (std::fabs(step) <= 1e-16 * std::max(1.0, std::fabs(x))) break;
  }
  return x;
}

std::vector<double> top_order_statistics_log_cdf(SecureStream& rng, std::uint64_t n, int count) {
  // Sequential maxima / Renyi's representation (Renyi, "On the theory of order statistics",
  // Acta Math. Hung. 4, 1953; Devroye, "Non-Uniform Random Variate Generation", 1986, Ch. V,
  // uniform order statistics): the largest of n iid U(0,1) is V_1^{1/n}; given it, the other
  // n-1 are iid uniform below it, so the next is that times V_2^{1/(n-1)}, and so on. In logs:
  // L_1 = ln(V_1)/n, L_{i+1} = L_i + ln(V_{i+1})/(n-i). With F continuous, F^{-1}(e^{L_i}) are
  // the top order statistics of n iid draws from F. Kept in log space: e^{L} rounds to 1
  // when n is large, ln does not.
  if (count < 0 || static_cast<std::uint64_t>(count) > n)
    throw std::invalid_argument("top_order_statistics_log_cdf: count must be in [0, n]");
  std::vector<double> out;
  out.reserve(static_cast<std::size_t>(count));
  double log_u = 0.0;
  for (int i = 0; i < count; ++i) {
    log_u += std::log(open_uniform(rng)) / static_cast<double>(n - static_cast<std::uint64_t>(i));
    out.push_back(log_u);
  }
  return out;
}

double gaussian_from_log_cdf(double log_u, double sigma) {
  // sigma Phi^{-1}(u) for u = e^{log_u}: with t = 1 - u = -expm1(log_u) (exact to rounding
  // even when u is 1 - 1e-12), Phi^{-1}(u) = Q^{-1}(t) in the upper half, and
  // Phi^{-1}(u) = -Q^{-1}(u) in the lower half.
  const double t = -std::expm1(log_u);
  if (t <= 0.5) return sigma * normal_upper_quantile(t);
  return -sigma * normal_upper_quantile(std::exp(log_u));
}

double gumbel_from_log_cdf(double log_u, double beta) {
  // F^{-1}(u) = -beta ln(-ln u) for Gumbel(0, beta), with ln u given exactly.
  return -beta * std::log(-log_u);
}

}  // namespace topk_detail

namespace {

bool finite_positive(double x) { return std::isfinite(x) && x > 0.0; }

void check_inputs(const SparseVector& v, const TopKUniverse& u, const TopKOptions& o) {
  const std::int64_t universe = u.range;
  if (o.k < 1) throw std::invalid_argument("dp_topk: k must be >= 1, got " + std::to_string(o.k));
  if (!finite_positive(o.clip))
    throw std::invalid_argument("dp_topk: clip must be finite and > 0, got " + std::to_string(o.clip));
  if (!finite_positive(o.noise_scale))
    throw std::invalid_argument("dp_topk: noise_scale must be finite and > 0, got " + std::to_string(o.noise_scale));
  if (o.mechanism == TopKMechanism::em1 && !finite_positive(o.value_noise_scale))
    throw std::invalid_argument("dp_topk: value_noise_scale must be finite and > 0 for em1, got " +
                                std::to_string(o.value_noise_scale));
  if (o.mechanism != TopKMechanism::gm && o.mechanism != TopKMechanism::em0 && o.mechanism != TopKMechanism::em1)
    throw std::invalid_argument("dp_topk: unknown mechanism");
  if (universe < 1) throw std::invalid_argument("dp_topk: universe must be >= 1, got " + std::to_string(universe));
  if (u.members < 1 || u.members > universe || (!u.is_member && u.members != universe))
    throw std::invalid_argument("dp_topk: the universe's members (" + std::to_string(u.members) +
                                ") must be in [1, " + std::to_string(universe) + "], all of it without a membership test");
  if (v.index.size() != v.value.size())
    throw std::invalid_argument("dp_topk: vector has " + std::to_string(v.index.size()) + " indices but " +
                                std::to_string(v.value.size()) + " values");
  for (std::size_t i = 0; i < v.index.size(); ++i) {
    if (v.index[i] < 0 || v.index[i] >= universe)
      throw std::invalid_argument("dp_topk: vector index " + std::to_string(v.index[i]) + " outside the universe [0, " +
                                  std::to_string(universe) + ")");
    if (u.is_member && !u.is_member(v.index[i]))
      throw std::invalid_argument("dp_topk: vector index " + std::to_string(v.index[i]) +
                                  " is not a member of the universe");
    if (i > 0 && v.index[i] <= v.index[i - 1])
      throw std::invalid_argument("dp_topk: vector indices must be strictly increasing");
    if (!(std::isfinite(v.value[i]) && v.value[i] >= 0.0))
      throw std::invalid_argument("dp_topk: vector value at index " + std::to_string(v.index[i]) +
                                  " must be finite and >= 0");
  }
}

struct Candidate {
  double score;     // clipped value + noise
  std::int64_t index;
  double clipped;   // clipped value (0 for a zero entry)
};

}  // namespace

TopK dp_topk(const SparseVector& v, std::int64_t universe, const TopKOptions& o, SecureStream& rng) {
  return dp_topk(v, TopKUniverse{universe, universe, {}}, o, rng);
}

TopK dp_topk(const SparseVector& v, const TopKUniverse& u, const TopKOptions& o, SecureStream& rng) {
  using namespace topk_detail;
  check_inputs(v, u, o);
  const std::int64_t universe = u.range;
  const std::size_t s = v.index.size();
  const bool gm = o.mechanism == TopKMechanism::gm;

  // Clipping.
  std::vector<double> clipped(s);
  if (gm) {
    // DPAR Algorithm 3 line 6: p <- p / max(1, ||p||_2 / C1). The norm is accumulated with a
    // running scale (as in LAPACK's dnrm2) so that huge entries cannot overflow.
    double scale = 0.0, ssq = 1.0;
    for (const double x : v.value) {
      if (x == 0.0) continue;
      if (scale < x) {
        ssq = 1.0 + ssq * (scale / x) * (scale / x);
        scale = x;
      } else {
        ssq += (x / scale) * (x / scale);
      }
    }
    const double norm = scale * std::sqrt(ssq);
    const double divisor = std::max(1.0, norm / o.clip);
    for (std::size_t i = 0; i < s; ++i) clipped[i] = v.value[i] / divisor;
  } else {
    // DPAR Algorithm 1 line 6: p[j] <- p[j] / max(1, |p[j]| / C2) = min(p[j], C2) for p[j] >= 0.
    for (std::size_t i = 0; i < s; ++i) clipped[i] = std::min(v.value[i], o.clip);
  }

  std::vector<Candidate> cand;
  cand.reserve(s + static_cast<std::size_t>(o.k));
  // Noise on the support entries, one explicit draw each: gm Algorithm 3 line 8, N(0, sigma^2);
  // em Algorithm 1 line 8, Gumbel(beta).
  for (std::size_t i = 0; i < s; ++i) {
    const double noise = gm ? o.noise_scale * standard_normal(rng) : gumbel(rng, o.noise_scale);
    cand.push_back(Candidate{clipped[i] + noise, v.index[i], clipped[i]});
  }

  // The n = U - |support| zero entries: their score is pure iid noise, and only their k
  // largest can be reported. Draw those k order statistics directly (topk_detail above) and
  // put them at distinct uniformly random non-support indices: by exchangeability the ordered
  // k-tuple of positions holding the k largest of n iid continuous draws is uniform over
  // ordered k-tuples of distinct positions and independent of the values.
  const std::uint64_t n = static_cast<std::uint64_t>(u.members) - s;
  const int count = static_cast<int>(std::min<std::uint64_t>(n, static_cast<std::uint64_t>(o.k)));
  const std::vector<double> log_u = top_order_statistics_log_cdf(rng, n, count);
  std::vector<std::int64_t> chosen;
  chosen.reserve(static_cast<std::size_t>(count));
  while (static_cast<int>(chosen.size()) < count) {
    // Rejection: uniform over [0, U), refused when not a member, in the support or already
    // taken, is uniform over the remaining non-support members.
    const auto j = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(universe)));
    if (u.is_member && !u.is_member(j)) continue;
    if (std::binary_search(v.index.begin(), v.index.end(), j)) continue;
    if (std::find(chosen.begin(), chosen.end(), j) != chosen.end()) continue;
    chosen.push_back(j);
  }
  for (int i = 0; i < count; ++i) {
    const double noise = gm ? gaussian_from_log_cdf(log_u[static_cast<std::size_t>(i)], o.noise_scale)
                            : gumbel_from_log_cdf(log_u[static_cast<std::size_t>(i)], o.noise_scale);
    cand.push_back(Candidate{noise, chosen[static_cast<std::size_t>(i)], 0.0});
  }

  // Report the k largest noisy scores (Algorithm 1 line 10, Algorithm 3 line 10). Ties have
  // probability 0; they are broken by index so the output is a function of the draws.
  // min(k, members) entries: with fewer members than k, every member is reported (the direct
  // mechanism's top-k of a vector shorter than k). members is public, so the output length
  // says nothing private, and no private quantity can make the mechanism refuse.
  const auto k = std::min(static_cast<std::size_t>(o.k), cand.size());
  std::partial_sort(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(k), cand.end(),
                    [](const Candidate& a, const Candidate& b) {
                      return a.score > b.score || (a.score == b.score && a.index < b.index);
                    });
  TopK out;
  out.index.reserve(k);
  out.value.reserve(k);
  for (std::size_t i = 0; i < k; ++i) {
    out.index.push_back(cand[i].index);
    switch (o.mechanism) {
      case TopKMechanism::gm:  // Algorithm 3: the noisy entries themselves
        out.value.push_back(cand[i].score);
        break;
      case TopKMechanism::em0:  // Algorithm 1 option I (line 12): 1/K each (K = the entries reported)
        out.value.push_back(1.0 / static_cast<double>(k));
        break;
      case TopKMechanism::em1:  // Algorithm 1 option II (line 13): clipped value + Laplace(K C2 / eps_2)
        out.value.push_back(cand[i].clipped + laplace(rng, o.value_noise_scale));
        break;
    }
  }
  return out;
}

}  // namespace dpgnn::sampling
