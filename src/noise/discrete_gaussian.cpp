// Exact discrete Gaussian noise (see noise.h). The three algorithms are those of Canonne,
// Kamath & Steinke 2020 (arXiv:2004.00010, Section 5, "Sampling"). Every random outcome is
// the one exact integer arithmetic gives: floating point only finds it faster when a wide
// margin makes it certain (Bernoulli(exp(-x)) below).
#include "dpgnn/noise/discrete_gaussian.h"

#include <ATen/Parallel.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dpgnn/noise/staircase_gaussian.h"
#include "dpgnn/util/error.h"

namespace dpgnn::noise {
namespace {

using u128 = SecureStream::u128;

// sigma in grid units (before the rounding allowance): 31/32 of 2^26.
constexpr double kGridSteps = 0x1.fp25;

// ---- Bernoulli(exp(-x)) for rational x, exactly -------------------------------------------
//
// CKS20 Algorithm 1 (after Devroye 1986, and von Neumann's exponential sampler) for
// 0 <= x <= 1: K = 1, 2, ... while Bernoulli(x / K) succeeds; P[K > k] = x^k / k!, and
// P[K odd] = exp(-x). The K coins can be decided by ONE uniform U in [0, 1): K is the first
// k with U >= tau_k, tau_k = x^k / k! (P[K > k] = P[U < tau_k] = tau_k, as the coins give,
// since tau_k decreases in k when x <= 1). So Bernoulli(exp(-x)) = [the first k with
// U >= tau_k is odd], a deterministic function of U. U is drawn lazily in b-bit digits
// (b = kDigitBits): after L digits U lies in a cell [c, c + 1) / 2^(b L), which decides
// U >= tau_k (c / 2^(b L) >= tau_k) or U < tau_k ((c + 1) / 2^(b L) <= tau_k), or straddles tau_k and needs another
// digit. Every tau_k is rational (x = n / d), so exact_exp_minus below decides all of this
// in exact integer arithmetic; the fast path decides the same comparisons for the first
// digit in double precision with a safety margin far above its rounding error, and hands
// over to the exact path whenever the margin does not decide (probability ~2^-15 per draw). The
// outcome and the number of digits read are the exact path's in every case, whatever the
// floating-point unit does: only the speed depends on it.
// Before issue 24 each coin was a uniform below d K (up to 105 bits) compared with n, with
// 128-bit divisions: the sampler ran at half today's speed (docs/benchmarks.md).

constexpr int kDigitBits = 16;
constexpr double kDigitScale = 0x1.0p16;  // 2^kDigitBits

// Unsigned integers to double through signed conversions (one instruction each; the
// unsigned 64-bit conversion branches on the top bit, a coin flip for random values).
// Below 2^63: exact rounding (2^-53 relative).
inline double small_to_double(std::uint64_t v) { return static_cast<double>(static_cast<std::int64_t>(v)); }

// A 128-bit integer to double within 2 2^-53 relative: the top 63 bits rounded (2^-53), the
// rest truncated (below 2^-62), times an exact power of two. Inline: libgcc's exact
// conversion was a fifth of the sampler's time.
inline double to_double(u128 v) {
  const auto hi = static_cast<std::uint64_t>(v >> 64);
  if (hi == 0) {
    const auto lo = static_cast<std::uint64_t>(v);
    return small_to_double(lo >> 1) * 2.0 + small_to_double(lo & 1);
  }
  const int shift = 65 - __builtin_clzll(hi);  // v >> shift < 2^63
  const std::uint64_t scale_bits = static_cast<std::uint64_t>(1023 + shift) << 52;
  double scale;
  std::memcpy(&scale, &scale_bits, sizeof scale);  // 2^shift
  return small_to_double(static_cast<std::uint64_t>(v >> shift)) * scale;
}

// Unsigned big integers (little-endian 32-bit limbs), for the exact path only.
struct Big {
  std::vector<std::uint32_t> limb;
  Big() = default;
  explicit Big(u128 v) {
    for (; v != 0; v >>= 32) limb.push_back(static_cast<std::uint32_t>(v));
  }
};

Big mul(const Big& a, const Big& b) {
  Big r;
  if (a.limb.empty() || b.limb.empty()) return r;
  r.limb.assign(a.limb.size() + b.limb.size(), 0);
  for (std::size_t i = 0; i < a.limb.size(); ++i) {
    std::uint64_t carry = 0;
    for (std::size_t j = 0; j < b.limb.size(); ++j) {
      const std::uint64_t cur = static_cast<std::uint64_t>(a.limb[i]) * b.limb[j] + r.limb[i + j] + carry;
      r.limb[i + j] = static_cast<std::uint32_t>(cur);
      carry = cur >> 32;
    }
    r.limb[i + b.limb.size()] = static_cast<std::uint32_t>(carry);
  }
  while (!r.limb.empty() && r.limb.back() == 0) r.limb.pop_back();
  return r;
}

Big add(const Big& a, const Big& b) {
  Big r;
  const std::size_t n = std::max(a.limb.size(), b.limb.size());
  r.limb.resize(n + 1);
  std::uint64_t carry = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t cur = carry + (i < a.limb.size() ? a.limb[i] : 0) + (i < b.limb.size() ? b.limb[i] : 0);
    r.limb[i] = static_cast<std::uint32_t>(cur);
    carry = cur >> 32;
  }
  r.limb[n] = static_cast<std::uint32_t>(carry);
  while (!r.limb.empty() && r.limb.back() == 0) r.limb.pop_back();
  return r;
}

Big shift_left(const Big& a, std::size_t bits) {  // a * 2^bits
  Big r;
  if (a.limb.empty()) return r;
  const std::size_t limbs = bits / 32, rest = bits % 32;
  r.limb.assign(limbs + a.limb.size() + 1, 0);
  for (std::size_t i = 0; i < a.limb.size(); ++i) {
    const std::uint64_t v = static_cast<std::uint64_t>(a.limb[i]) << rest;
    r.limb[limbs + i] |= static_cast<std::uint32_t>(v);
    r.limb[limbs + i + 1] |= static_cast<std::uint32_t>(v >> 32);
  }
  while (!r.limb.empty() && r.limb.back() == 0) r.limb.pop_back();
  return r;
}

int compare(const Big& a, const Big& b) {
  if (a.limb.size() != b.limb.size()) return a.limb.size() < b.limb.size() ? -1 : 1;
  for (std::size_t i = a.limb.size(); i-- > 0;)
    if (a.limb[i] != b.limb[i]) return a.limb[i] < b.limb[i] ? -1 : 1;
  return 0;
}

// Bernoulli(exp(-n/d)), n <= d, d >= 1, by the comparisons above in exact arithmetic, given
// U's first digit `first` (already read from rng); reads further digits only while the cell
// straddles a threshold. Terminates with probability 1 (a further digit is needed with
// probability about 2^-b per threshold in play).
__attribute__((noinline)) bool exact_exp_minus(SecureStream& rng, std::uint64_t first, u128 n, u128 d) {
  const Big N(n), D(d);
  Big c(first), p = N, q = D;  // tau_k = p / q
  std::size_t digits = 1;
  for (std::uint64_t k = 1;;) {
    const Big lo = mul(c, q), tau = shift_left(p, kDigitBits * digits);  // both scaled by q 2^(b digits)
    if (compare(lo, tau) >= 0) return (k % 2) == 1;          // U >= tau_k: K = k
    if (compare(add(lo, q), tau) <= 0) {                      // U < tau_k: go on to tau_{k+1}
      ++k;
      p = mul(p, N);
      q = mul(mul(q, D), Big(k));
      continue;
    }
    c = add(shift_left(c, kDigitBits), Big(rng.bits(kDigitBits)));
    ++digits;
  }
}

// 1 / k as doubles, for tau_{k} = tau_{k-1} x / k.
constexpr double kInv[] = {0, 1, 1.0 / 2, 1.0 / 3, 1.0 / 4, 1.0 / 5, 1.0 / 6, 1.0 / 7, 1.0 / 8, 1.0 / 9,
                           1.0 / 10, 1.0 / 11, 1.0 / 12, 1.0 / 13, 1.0 / 14, 1.0 / 15, 1.0 / 16, 1.0 / 17};
// Terms the loop tries before the exact path: for a nonzero digit (U >= 2^-16) and x <= 1,
// tau_9 = x^9 / 9! < 2^-18 is certainly below U, so 16 is plenty.
constexpr int kFastTerms = 16;
// Relative error bound used by the fast path. Its true error: x within 8 2^-53 (n and d
// converted by to_double, 3 2^-53 each, and one division), then per term one product and one
// rounded 1/k (3 2^-53 each): below 8 2^-53 + 16 * 6 2^-53 < 2^-46 for 16 terms; 2^-40
// leaves a wide margin, and the margin products themselves round by only 2^-53.
constexpr double kEps = 0x1.0p-40;

// The comparisons term by term, for the draws the first four terms leave open (below).
__attribute__((noinline)) bool exp_minus_le1_loop(SecureStream& rng, std::uint64_t w, u128 n, u128 d, double x) {
  const double lo = small_to_double(w), hi = lo + 1.0;  // the cell, in units of 2^-b
  double tau = x * kDigitScale;                               // tau_k in units of 2^-b
  for (int k = 1; k <= kFastTerms; ++k) {
    if (tau * (1 + kEps) <= lo) return (k & 1) != 0;  // U >= tau_k for sure: K = k
    if (tau * (1 - kEps) < hi) break;                  // the cell may straddle tau_k
    tau = tau * x * kInv[k + 1];                       // U < tau_k for sure
  }
  return exact_exp_minus(rng, w, n, d);
}

// Bernoulli(exp(-n/d)) for 0 <= n <= d, d >= 1 (see above). `x` is n/d in double, within
// 8 2^-53 relative (the allowance in kEps). The first four thresholds are compared at once,
// without branches (the outcome of each is a coin flip a branch predictor would miss): when
// every comparison is certain and U >= tau_4, K - 1 is the number of thresholds above U.
// Otherwise (probability about x^4 / 24 + 2^-14) the term-by-term loop decides.
inline __attribute__((always_inline)) bool decide_exp_minus_le1(SecureStream& rng, std::uint64_t w, u128 n, u128 d,
                                                                double x) {
  const double lo = small_to_double(w), hi = lo + 1.0;
#if defined(__SSE2__)
  // tau_1..tau_4 times 2^b, two to an SSE2 register: [x, x^2 / 2] and [x^3 / 6, x^4 / 24]
  // (each at most four roundings and a rounded constant: far inside kEps).
  const double x2 = x * x;
  const __m128d t12 = _mm_mul_pd(_mm_set_pd(x2, x), _mm_set_pd(kDigitScale / 2, kDigitScale));
  const __m128d t34 =
      _mm_mul_pd(_mm_mul_pd(_mm_set1_pd(x2), _mm_set_pd(x2, x)), _mm_set_pd(kDigitScale / 24, kDigitScale / 6));
  const __m128d shrink = _mm_set1_pd(1 - kEps), grow = _mm_set1_pd(1 + kEps);
  const __m128d vhi = _mm_set1_pd(hi), vlo = _mm_set1_pd(lo);
  // bit k-1: U < tau_k for sure (below) / U >= tau_k for sure (above).
  const int below = _mm_movemask_pd(_mm_cmpge_pd(_mm_mul_pd(t12, shrink), vhi)) |
                    (_mm_movemask_pd(_mm_cmpge_pd(_mm_mul_pd(t34, shrink), vhi)) << 2);
  const int above = _mm_movemask_pd(_mm_cmple_pd(_mm_mul_pd(t12, grow), vlo)) |
                    (_mm_movemask_pd(_mm_cmple_pd(_mm_mul_pd(t34, grow), vlo)) << 2);
  // Certain when each of tau_1..tau_3 is decided and U >= tau_4: K - 1 = below's bit count
  // (certain decisions are right, and U < tau_k implies U < tau_{k-1}, so below is a prefix).
  const int certain = (((below | above) & 7) == 7) & ((above >> 3) & 1);
#else
  const double x2 = x * x;
  const double t[4] = {x * kDigitScale, x2 * (kDigitScale / 2), x2 * (x * (kDigitScale / 6)),
                       x2 * (x2 * (kDigitScale / 24))};
  int below = 0, above = 0;
  for (int k = 0; k < 4; ++k) {
    below |= static_cast<int>(t[k] * (1 - kEps) >= hi) << k;
    above |= static_cast<int>(t[k] * (1 + kEps) <= lo) << k;
  }
  const int certain = (((below | above) & 7) == 7) & ((above >> 3) & 1);
#endif
  if (__builtin_expect(certain == 0, 0)) return exp_minus_le1_loop(rng, w, n, d, x);
  return (__builtin_popcount(static_cast<unsigned>(below & 7)) & 1) == 0;
}

inline __attribute__((always_inline)) bool bernoulli_exp_minus_le1(SecureStream& rng, u128 n, u128 d, double x) {
  return decide_exp_minus_le1(rng, rng.bits(kDigitBits), n, d, x);
}

// The same for small x (x <= 1/32 in the Laplace's low part), where U >= tau_1 = x decides
// 97% of the draws with one comparison (a well-predicted branch).
inline __attribute__((always_inline)) bool bernoulli_exp_minus_small(SecureStream& rng, u128 n, u128 d, double x) {
  const auto w = rng.bits(kDigitBits);
  if (x * kDigitScale * (1 + kEps) <= small_to_double(w)) return true;  // U >= tau_1 for sure: K = 1
  return decide_exp_minus_le1(rng, w, n, d, x);
}

// floor(2^b / k!) for k = 0..kLastFactorial, b = kDigitBits; the last is 0 (k! > 2^b).
constexpr int kLastFactorial = kDigitBits == 16 ? 9 : 13;
struct InvFactorials {
  std::uint64_t v[kLastFactorial + 1] = {};
  constexpr InvFactorials() {
    std::uint64_t f = 1;
    for (int k = 1; k <= kLastFactorial; ++k) {
      f *= static_cast<std::uint64_t>(k);
      v[k] = (std::uint64_t{1} << kDigitBits) / f;
    }
  }
};
constexpr InvFactorials kInvFactorial{};
static_assert(kInvFactorial.v[kLastFactorial] == 0 && kInvFactorial.v[kLastFactorial - 1] > 0,
              "table ends at k! > 2^b");

// Bernoulli(exp(-1)): the comparisons above with tau_k = 1 / k!, exactly in integers for the
// first digit w: U < 1/k! for sure iff w < floor(2^b / k!); U >= 1/k! for sure iff
// w > floor(2^b / k!) or (k <= 2, where 2^b / k! is an integer) w >= it; else straddles.
__attribute__((noinline)) bool exp_minus_one_loop(SecureStream& rng, std::uint64_t w) {
  if (w >= kInvFactorial.v[2]) return false;  // tau_1 = 1 > U always; U >= 1/2: K = 2
  for (int k = 3; k <= kLastFactorial; ++k) {
    if (w < kInvFactorial.v[k]) continue;
    if (w > kInvFactorial.v[k]) return (k & 1) != 0;
    break;
  }
  return exact_exp_minus(rng, w, 1, 1);
}

// As bernoulli_exp_minus_le1, without branches for tau_2..tau_5 (2^b / 2 is an integer,
// so w < it decides tau_2 exactly); the loop takes the rest (w <= floor(2^b / 6!) or w on a
// threshold: probability 0.15%).
inline __attribute__((always_inline)) bool bernoulli_exp_minus_one(SecureStream& rng) {
  const auto w = rng.bits(kDigitBits);
  const auto& f = kInvFactorial.v;
  const int open = (w == f[3]) | (w == f[4]) | (w == f[5]) | (w <= f[6]);
  if (__builtin_expect(open != 0, 0)) return exp_minus_one_loop(rng, w);
  const int below = (w < f[2]) + (w < f[3]) + (w < f[4]) + (w < f[5]);  // K = 2 + below
  return (below & 1) != 0;
}

std::uint64_t isqrt(std::uint64_t v) {
  auto r = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(v)));
  while (r * r > v) --r;
  while ((r + 1) * (r + 1) <= v) ++r;
  return r;
}

// The Laplace scale t of CKS20 Algorithm 3 and its split t = T 2^m, T <= 64 (below).
struct LaplaceScale {
  std::uint64_t t = 1, high = 1;  // t = high << low_bits
  int low_bits = 0, high_bits = 1;  // high <= 2^high_bits
  double inv_t = 1, inv_high = 1;
};

// CKS20 Algorithm 3 takes t = floor(sigma) + 1; its correctness holds for any t >= 1 (the
// proposal times the acceptance is exp(-|y|/t - (|y| - sigma^2/t)^2 / (2 sigma^2)) =
// exp(-y^2 / (2 sigma^2) - sigma^2 / (2 t^2)), proportional to the target whatever t is),
// and the acceptance rate varies slowly around t = sigma (relative change < 0.1% for t 3%
// larger). Rounding t up to T 2^m (m the least with ceil(t / 2^m) <= 64, so 33 <= T <= 64
// when m > 0, t at most 3% larger) lets the Laplace split its uniform.
LaplaceScale laplace_scale(std::uint64_t variance) {
  LaplaceScale s;
  const std::uint64_t t0 = isqrt(variance) + 1;
  while ((t0 >> s.low_bits) > 64) ++s.low_bits;
  s.high = ((t0 - 1) >> s.low_bits) + 1;  // ceil(t0 / 2^m) <= 64
  s.t = s.high << s.low_bits;
  while ((std::uint64_t{1} << s.high_bits) < s.high) ++s.high_bits;
  s.inv_t = 1.0 / static_cast<double>(s.t);
  s.inv_high = 1.0 / static_cast<double>(s.high);
  return s;
}

// Discrete Laplace with scale t (P[Y = y] proportional to exp(-|y| / t)), CKS20 Algorithm 2
// with s = 1: |Y| = U + t V with U in [0, t), P[U = u] proportional to exp(-u/t), V ~
// Geometric with P[V >= v] = exp(-v) (a run of Bernoulli(exp(-1))), a sign, and -0 rejected.
// CKS20 draw U uniform and accept it with probability exp(-U/t) (63% on average, each try a
// 26-bit draw and a Bernoulli). Here t = T 2^m and U = H 2^m + L, H < T, L < 2^m: since
// exp(-U/t) = exp(-H/T) exp(-L/t), H and L are independent, H with P proportional to exp(-H/T)
// (uniform below T, accepted with exp(-H/T): the 63% loop on a 6-bit draw) and L with P
// proportional to exp(-L/t) (uniform below 2^m, accepted with exp(-L/t) >= exp(-1/32): 97%+).
std::int64_t sample_discrete_laplace(SecureStream& rng, const LaplaceScale& s) {
  for (;;) {
    std::uint64_t h, l;
    // x = h / T and l / t: integers below 2^53 times a rounded reciprocal, within 2^-52 of
    // the ratio, inside the fast path's allowance.
    do h = rng.below(s.high);
    while (!bernoulli_exp_minus_le1(rng, h, s.high, small_to_double(h) * s.inv_high));
    do l = s.low_bits == 0 ? 0 : rng.bits(s.low_bits);
    while (!bernoulli_exp_minus_le1(rng, l, s.t, small_to_double(l) * s.inv_t));
    std::uint64_t v = 0;
    while (bernoulli_exp_minus_one(rng)) ++v;
    const std::uint64_t x = (h << s.low_bits) + l + s.t * v;
    const bool negative = rng.bits(1) != 0;
    if (negative && x == 0) continue;
    return negative ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
  }
}

}  // namespace

NoiseGrid make_noise_grid(double sigma, double sensitivity, std::int64_t num_params, int changed_ranks) {
  if (!(sigma > 0.0) || !(sensitivity > 0.0) || num_params < 1 || changed_ranks < 1)
    throw UsageError("noise: sigma, sensitivity, the parameter count and the changed ranks must be positive");
  const double z = sigma / sensitivity;
  const double root_p = static_cast<double>(changed_ranks) * std::sqrt(static_cast<double>(num_params));
  if (z * root_p > 0x1.0p27)
    throw UsageError("noise: noise multiplier x sqrt(parameters) = " + std::to_string(z * root_p) +
                     " exceeds 2^27, the range of the exact discrete Gaussian sampler");
  NoiseGrid g;
  // gamma = sigma / (31/32 2^26) keeps t = floor(sqrt(s2)) + 1 just below 2^26, so the
  // uniform draws below t and below multiples of t reject rarely (a power of two just above
  // t would reject half of them).
  g.gamma = sigma / kGridSteps;
  // s2 = ceil((z (Delta / gamma + sqrt(P)))^2) + 1 (noise.h), where z Delta / gamma = sigma /
  // gamma. Computed in long double and raised by a relative 1e-12 (about 2^12 grid units
  // of variance), far more than the rounding of sigma, gamma and z in double, so that no
  // floating-point rounding can make s2 too small.
  const long double scale = (static_cast<long double>(sigma) / static_cast<long double>(g.gamma) +
                             static_cast<long double>(z) * static_cast<long double>(changed_ranks) *
                                 std::sqrt(static_cast<long double>(num_params))) *
                            (1.0L + 1e-12L);
  g.variance = static_cast<std::uint64_t>(std::ceil(scale * scale)) + 1;
  g.sigma_effective = g.gamma * std::sqrt(static_cast<double>(g.variance));
  return g;
}

void check_exact_grid_sum(const NoiseGrid& grid, double clip, std::int64_t batch_size) {
  const double bound = static_cast<double>(batch_size) * clip / grid.gamma;
  if (!(bound < 0x1.0p52))
    throw UsageError("noise: batch size x clip norm / grid = " + std::to_string(bound) +
                     " grid units exceeds 2^52, where the float64 all-reduce of the grid integers stops being "
                     "exact; raise privacy.noise_multiplier or lower train.batch_size");
}

namespace {

// What one variance fixes, computed once per chunk rather than once per draw.
struct GaussianParams {
  std::uint64_t variance = 0;
  LaplaceScale scale;
  u128 d = 0;  // 2 sigma^2 t^2
  double inv_d = 0;
  explicit GaussianParams(std::uint64_t v) : variance(v) {
    if (v < 1 || v > (std::uint64_t{1} << 58))
      throw Error("sample_discrete_gaussian: variance " + std::to_string(v) + " outside [1, 2^58]", kExitInternal);
    scale = laplace_scale(v);
    d = static_cast<u128>(2) * v * (static_cast<u128>(scale.t) * scale.t);  // <= 2^118
    inv_d = 1.0 / to_double(d);
  }
};

std::int64_t sample(SecureStream& rng, const GaussianParams& g) {
  // CKS20 Algorithm 3 with sigma^2 = variance (an integer): t ~ floor(sigma) + 1
  // (laplace_scale); draw Y from the discrete Laplace of scale t; accept with probability
  // exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)) = exp(-(|Y| t - sigma^2)^2 / (2 sigma^2 t^2)).
  const std::uint64_t t = g.scale.t, variance = g.variance;
  const u128 d = g.d;
  for (;;) {
    const std::int64_t y = sample_discrete_laplace(rng, g.scale);
    const u128 ay = static_cast<u128>(y < 0 ? -static_cast<u128>(y) : static_cast<u128>(y));
    const u128 yt = ay * t;
    const u128 diff = yt >= variance ? yt - variance : variance - yt;
    // |Y| t - sigma^2 >= 2^63 would overflow the square. Such a Y would be accepted with
    // probability exp(-diff^2 / d) <= exp(-2^126 / 2^118) = exp(-256) (variance <= 2^58, t <=
    // 1.04 (sigma + 1)), so rejecting it outright moves the output distribution by less than
    // exp(-256) per draw.
    if ((diff >> 63) != 0) continue;
    // exp(-n/d) = exp(-1)^floor(n/d) exp(-(n mod d)/d) (CKS20 Algorithm 1, x > 1), with
    // floor(n/d) from a double estimate corrected in exact integers (no 128-bit division).
    // Far tails (estimate >= 2^50, only at small variances) take the exact division.
    const u128 n = diff * diff;
    const auto diff_double = small_to_double(static_cast<std::uint64_t>(diff));
    const double estimate = diff_double * diff_double * g.inv_d;
    u128 whole = estimate < 0x1.0p50 ? static_cast<std::uint64_t>(estimate) : n / d;
    while (whole > 0 && whole * d > n) --whole;
    while ((whole + 1) * d <= n) ++whole;
    bool accept = true;
    for (u128 i = 0; i < whole && accept; ++i) accept = bernoulli_exp_minus_one(rng);
    if (!accept) continue;
    const u128 rest = n - whole * d;
    // rest / d within 8 2^-53: to_double(rest) 3 2^-53, 1 / to_double(d) 4 2^-53, the product 2^-53.
    if (bernoulli_exp_minus_le1(rng, rest, d, to_double(rest) * g.inv_d)) return y;
  }
}

// The same algorithm for many draws at once, stage by stage over a batch of proposals, so
// that the coin flips become data instead of branches (one mispredicted branch per
// accept/reject decision cost more than the decision itself). Each stage keeps the draws it
// accepts, in order, by writing every candidate and advancing the write position by the
// acceptance bit. Exactness: every stage reads fresh keystream bits, accepted candidates of
// an independent sequence are independent draws from the accepted law (rejection sampling),
// and unused candidates at the end of a stage are independent of everything kept, so
// discarding them changes nothing; the stages combine independent H, L, V and sign into
// the Laplace draw of sample_discrete_laplace, then CKS20 Algorithm 3's acceptance.
// The bits read depend only on the keystream: the output is a pure function of the stream.
constexpr std::size_t kBatch = 256;

void sample_batch(SecureStream& rng, const GaussianParams& g, std::int64_t* out, std::size_t count) {
  const LaplaceScale& s = g.scale;
  const std::uint64_t t = s.t, variance = g.variance;
  const u128 d = g.d;
  std::uint64_t h[kBatch + 1], low[kBatch], v[kBatch + 1];
  std::int64_t y[kBatch + 1];
  while (count > 0) {
    // Proposals for this round: about count / 0.76 (Algorithm 3 accepts 76% at t ~ sigma).
    const std::size_t m = std::min(kBatch, count + count / 3 + 4);
    // H (see sample_discrete_laplace): a draw of high_bits bits is a uniform below T when it
    // is below T (else it is rejected, as below() would, but without a branch).
    for (std::size_t k = 0; k < m;) {
      const std::uint64_t c = rng.bits(s.high_bits);
      const std::uint64_t inside = c < s.high, h_try = inside != 0 ? c : 0;
      h[k] = h_try;
      k += inside & static_cast<std::uint64_t>(
                        bernoulli_exp_minus_le1(rng, h_try, s.high, small_to_double(h_try) * s.inv_high));
    }
    // L: accepted 97% and more, a well-predicted loop.
    for (std::size_t k = 0; k < m; ++k) {
      std::uint64_t l;
      do l = s.low_bits == 0 ? 0 : rng.bits(s.low_bits);
      while (!bernoulli_exp_minus_small(rng, l, t, small_to_double(l) * s.inv_t));
      low[k] = l;
    }
    // V: run lengths of Bernoulli(exp(-1)) successes, one value per failure.
    for (std::size_t k = 0, run = 0; k < m;) {
      const std::uint64_t coin = bernoulli_exp_minus_one(rng);
      v[k] = run;
      k += 1 - coin;
      run = (run + 1) * coin;
    }
    // Signs, -0 dropped (CKS20 Algorithm 2).
    std::size_t laplace = 0;
    for (std::size_t k = 0; k < m; ++k) {
      const std::uint64_t x = (h[k] << s.low_bits) + low[k] + t * v[k];
      const std::uint64_t negative = rng.bits(1);
      y[laplace] = negative != 0 ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
      laplace += 1 - (negative & static_cast<std::uint64_t>(x == 0));
    }
    // Algorithm 3's acceptance exp(-(|Y| t - sigma^2)^2 / (2 sigma^2 t^2)), as in sample():
    // floor(x) Bernoulli(exp(-1)) coins and one for the fractional part, which is drawn even
    // when a coin failed (more bits read, the same product of independent coins).
    std::size_t kept = 0;
    for (std::size_t k = 0; k < laplace && kept < count; ++k) {
      // |y| < 2^63 and t < 2^30: 64 x 64-bit products.
      const auto ay = static_cast<std::uint64_t>(y[k] < 0 ? -y[k] : y[k]);
      const u128 yt = static_cast<u128>(ay) * t;
      const u128 diff = yt >= variance ? yt - variance : variance - yt;
      if ((diff >> 63) != 0) continue;  // exp(-256) at most, see sample()
      const auto diff64 = static_cast<std::uint64_t>(diff);
      const u128 n = static_cast<u128>(diff64) * diff64;
      const auto diff_double = small_to_double(diff64);
      const double estimate = diff_double * diff_double * g.inv_d;
      // floor(x) = 0 for 91% of the proposals (x >= 1 needs |y| beyond 2.4 sigma), certainly
      // so when the estimate is below 1 - 2^-40; it is then x itself within 7 2^-53 (diff
      // and its square rounded, 1 / to_double(d) 3 2^-53, the product): the same decision as
      // below, without the exact floor and remainder (a well-predicted branch).
      if (estimate < 1 - 0x1.0p-40) {
        out[kept] = y[k];
        kept += static_cast<unsigned>(bernoulli_exp_minus_le1(rng, n, d, estimate));
        continue;
      }
      u128 whole = estimate < 0x1.0p50 ? static_cast<std::uint64_t>(estimate) : n / d;
      while (whole > 0 && whole * d > n) --whole;
      while ((whole + 1) * d <= n) ++whole;
      // Past x = 1 the coins stop at the first failure, as in sample().
      unsigned accept = 1;
      for (u128 i = 0; i < whole && accept; ++i) accept = bernoulli_exp_minus_one(rng);
      const u128 rest = n - whole * d;
      accept &= static_cast<unsigned>(bernoulli_exp_minus_le1(rng, rest, d, to_double(rest) * g.inv_d));
      out[kept] = y[k];
      kept += accept;
    }
    out += kept;
    count -= kept;
  }
}

}  // namespace

std::int64_t sample_discrete_gaussian(SecureStream& rng, std::uint64_t variance) {
  return sample(rng, GaussianParams(variance));
}

void sample_discrete_gaussian(SecureStream& rng, std::uint64_t variance, std::int64_t* out, std::size_t count) {
  if (variance >= staircase::kMinVariance) {
    staircase::sample(*staircase::table_for(variance), rng, out, count);
    return;
  }
  const GaussianParams params(variance);
  for (std::size_t i = 0; i < count; i += kBatch) sample_batch(rng, params, out + i, std::min(kBatch, count - i));
}

namespace detail {
bool bernoulli_exp_minus(SecureStream& rng, unsigned __int128 n, unsigned __int128 d, bool exact_only) {
  if (exact_only) return exact_exp_minus(rng, rng.bits(kDigitBits), n, d);
  return bernoulli_exp_minus_le1(rng, n, d, to_double(n) / to_double(d));
}
bool bernoulli_exp_minus_one(SecureStream& rng, bool exact_only) {
  if (exact_only) return exact_exp_minus(rng, rng.bits(kDigitBits), 1, 1);
  return noise::bernoulli_exp_minus_one(rng);
}
}  // namespace detail

void add_discrete_gaussian_noise_chunk(double* grid_sum, std::size_t n, std::uint64_t variance, const Secret& key,
                                       std::uint64_t step, std::size_t chunk) {
  SecureStream rng(key, StreamPurpose::noise, step, static_cast<std::uint64_t>(chunk));
  const std::size_t lo = chunk * kNoiseChunk;
  const std::size_t hi = std::min(n, lo + kNoiseChunk);
  std::int64_t y[kBatch];
  // The trainer's grid (s2 near 2^52) takes the staircase sampler (staircase_gaussian.h);
  // small variances CKS20 Algorithm 3. Both are exact; the table is built once per variance.
  const std::shared_ptr<const staircase::Table> table =
      variance >= staircase::kMinVariance ? staircase::table_for(variance) : nullptr;
  const std::optional<GaussianParams> params =
      table ? std::nullopt : std::optional<GaussianParams>(std::in_place, variance);
  for (std::size_t i = lo; i < hi; i += kBatch) {
    const std::size_t len = std::min(kBatch, hi - i);
    if (table) {
      staircase::sample(*table, rng, y, len);
    } else {
      sample_batch(rng, *params, y, len);
    }
    for (std::size_t j = 0; j < len; ++j) grid_sum[i + j] += static_cast<double>(y[j]);
  }
}

void add_discrete_gaussian_noise(double* grid_sum, std::size_t n, std::uint64_t variance, const Secret& key,
                                 std::uint64_t step) {
  const auto chunks = static_cast<std::int64_t>(noise_chunks(n));
  at::parallel_for(0, chunks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c)
      add_discrete_gaussian_noise_chunk(grid_sum, n, variance, key, step, static_cast<std::size_t>(c));
  });
}

}  // namespace dpgnn::noise
