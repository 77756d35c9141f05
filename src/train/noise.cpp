// Exact discrete Gaussian noise (see noise.h). The three algorithms are those of Canonne,
// Kamath & Steinke 2020 (arXiv:2004.00010, Section 5, "Sampling"), in 128-bit integer
// arithmetic: no floating point decides any random outcome.
#include "dpgnn/train/noise.h"

#include <ATen/Parallel.h>

#include <cmath>
#include <string>

#include "dpgnn/util/error.h"

namespace dpgnn::train {
namespace {

using u128 = SecureStream::u128;

// sigma in grid units (before the rounding allowance): 31/32 of 2^26.
constexpr double kGridSteps = 0x1.fp25;

// Bernoulli(n / d), 0 <= n <= d, d >= 1: a uniform integer below d is < n.
bool bernoulli(SecureStream& rng, u128 n, u128 d) { return rng.below(d) < n; }

// Bernoulli(exp(-n/d)) for 0 <= n/d <= 1 (CKS20 Algorithm 1, first case): K = 1, 2, ...
// while Bernoulli(gamma / K) succeeds; the answer is whether the final K is odd. K > 64
// has probability < 1/64! (< 2^-295); then d*K could leave 128 bits, so it is treated as
// an unsuccessful coin (documented deviation, far below any meaningful probability).
bool bernoulli_exp_minus_le1(SecureStream& rng, u128 n, u128 d) {
  std::uint64_t k = 1;
  while (k <= 64 && bernoulli(rng, n, d * k)) ++k;
  return (k % 2) == 1;
}

// Bernoulli(exp(-n/d)) for any n/d >= 0 (CKS20 Algorithm 1, second case: floor(gamma)
// independent Bernoulli(exp(-1)) coins, then one for the fractional part).
bool bernoulli_exp_minus(SecureStream& rng, u128 n, u128 d) {
  const u128 whole = n / d;
  for (u128 i = 0; i < whole; ++i)
    if (!bernoulli_exp_minus_le1(rng, 1, 1)) return false;
  return bernoulli_exp_minus_le1(rng, n % d, d);
}

// Discrete Laplace with scale t (P[Y = y] proportional to exp(-|y| / t)), CKS20 Algorithm 2
// with s = 1.
std::int64_t sample_discrete_laplace(SecureStream& rng, std::uint64_t t) {
  for (;;) {
    const std::uint64_t u = rng.below(t);
    if (!bernoulli_exp_minus_le1(rng, u, t)) continue;
    std::uint64_t v = 0;
    while (bernoulli_exp_minus_le1(rng, 1, 1)) ++v;
    const std::uint64_t x = u + t * v;
    const bool negative = rng.bits(1) != 0;
    if (negative && x == 0) continue;
    return negative ? -static_cast<std::int64_t>(x) : static_cast<std::int64_t>(x);
  }
}

std::uint64_t isqrt(std::uint64_t v) {
  auto r = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(v)));
  while (r * r > v) --r;
  while ((r + 1) * (r + 1) <= v) ++r;
  return r;
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

std::int64_t sample_discrete_gaussian(SecureStream& rng, std::uint64_t variance) {
  if (variance < 1 || variance > (std::uint64_t{1} << 58))
    throw Error("sample_discrete_gaussian: variance " + std::to_string(variance) + " outside [1, 2^58]",
                kExitInternal);
  // CKS20 Algorithm 3 with sigma^2 = variance (an integer): t = floor(sigma) + 1; draw Y from
  // the discrete Laplace of scale t; accept with probability
  // exp(-(|Y| - sigma^2/t)^2 / (2 sigma^2)) = exp(-(|Y| t - sigma^2)^2 / (2 sigma^2 t^2)).
  const std::uint64_t t = isqrt(variance) + 1;
  const u128 d = static_cast<u128>(2) * variance * (static_cast<u128>(t) * t);  // <= 2^117
  for (;;) {
    const std::int64_t y = sample_discrete_laplace(rng, t);
    const u128 ay = static_cast<u128>(y < 0 ? -static_cast<u128>(y) : static_cast<u128>(y));
    const u128 yt = ay * t;
    const u128 diff = yt >= variance ? yt - variance : variance - yt;
    // |Y| t - sigma^2 >= 2^63 would overflow the square. Such a Y would be accepted with
    // probability exp(-diff^2 / d) <= exp(-2^126 / 2^117) = exp(-512) (variance <= 2^58), so
    // rejecting it outright moves the output distribution by less than exp(-512) per draw.
    if ((diff >> 63) != 0) continue;
    if (bernoulli_exp_minus(rng, diff * diff, d)) return y;
  }
}

void add_discrete_gaussian_noise(double* grid_sum, std::size_t n, std::uint64_t variance, const Secret& key,
                                 std::uint64_t step) {
  const std::int64_t chunks = static_cast<std::int64_t>((n + kNoiseChunk - 1) / kNoiseChunk);
  at::parallel_for(0, chunks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t c = begin; c < end; ++c) {
      SecureStream rng(key, StreamPurpose::noise, step, static_cast<std::uint64_t>(c));
      const std::size_t lo = static_cast<std::size_t>(c) * kNoiseChunk;
      const std::size_t hi = std::min(n, lo + kNoiseChunk);
      for (std::size_t i = lo; i < hi; ++i) grid_sum[i] += static_cast<double>(sample_discrete_gaussian(rng, variance));
    }
  });
}

}  // namespace dpgnn::train
