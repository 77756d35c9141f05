// The noise of DP-SGD, added once per step at rank 0 (DESIGN.md decision 7), as an exact
// discrete Gaussian on a fine grid, which resists the floating-point attack on textbook
// Gaussian samplers (Mironov, "On significance of the least significant bits for
// differential privacy", CCS 2012).
//
// The mechanism, in grid units of width gamma:
//   every rank rounds its clipped local sum S_r to the grid, k_r = round(S_r / gamma);
//   rank 0 adds Y ~ N_Z(0, s2)^P, the discrete Gaussian of Canonne, Kamath & Steinke
//   ("The Discrete Gaussian for Differential Privacy", NeurIPS 2020; CKS20), drawn exactly
//   from the XChaCha20 keystream of the noise secret (util/secure_rng.h): at the grid's
//   variances (s2 >= 2^32) by rejection from a staircase envelope (staircase_gaussian.h),
//   otherwise by CKS20 Algorithm 3 (discrete Laplace rejection, Algorithm 2, with
//   Bernoulli(exp(-x)) of Algorithm 1); every outcome the one exact arithmetic gives;
//   the all-reduce sums integers held in doubles (exact below 2^53), and the gradient is
//   gamma * (sum_r k_r + Y), a post-processing of the integer vector.
// Privacy (CKS20 Theorem 4 per coordinate: an integer shift mu against N_Z(0, s2) costs
// mu^2 / (2 s2)-zCDP; independent coordinates add up, Bun & Steinke 2016 Lemma 2.3): if
// the integer query moves
// by at most D in L2 between neighbours, adding N_Z(0, s2)^P is (D^2 / (2 s2))-zCDP, i.e.
// RDP of order alpha alpha D^2 / (2 s2): at most the continuous Gaussian's alpha / (2 z^2)
// when s2 >= (z D)^2. Rounding moves each coordinate by at most 1/2, so one changed rank's
// k_r moves by at most Delta / gamma + sqrt(P) (triangle inequality, both sides rounded),
// hence s2 = ceil((z (Delta / gamma + sqrt(P)))^2) + 1, with sigma = z Delta. gamma is
// sigma / (31/32 2^26), so the added variance is gamma^2 s2 ~ sigma^2 (1 + z sqrt(P) / 2^26)^2
// (+ a rounding of 1 part in 2^51): the noise is slightly larger than the continuous one the
// accountant assumes, never smaller. docs/privacy.md "Secrets and noise" has the argument.
//
// The noise of step t is a pure function of (noise secret, t) - chunks of kNoiseChunk
// coordinates each read their own keystream (substream = chunk index), drawn in parallel -
// so a resumed run replays the steps after its last checkpoint with exactly the noise they
// had, and the number of threads changes nothing. NoisePrefetcher (noise/prefetch.h) draws
// the same vectors ahead of time.
#pragma once

#include <cstddef>
#include <cstdint>

#include "dpgnn/util/secure_rng.h"

namespace dpgnn::noise {

// The grid and the discrete variance for a mechanism with continuous noise std `sigma`,
// L2 sensitivity `sensitivity` (sigma = z * sensitivity) and `num_params` coordinates.
struct NoiseGrid {
  double gamma = 0.0;             // grid width, in gradient units
  std::uint64_t variance = 0;     // s2: the discrete Gaussian's scale^2, in grid units (integer)
  double sigma_effective = 0.0;   // gamma * sqrt(s2): the std actually added (>= sigma)
};
// `changed_ranks`: how many ranks' k_r a neighbouring dataset can move (1; 2 when one example
// can move from one rank to another, as under DPAR's graph sampling, where exchanging a
// sampled node for another moves its example to the other node's rank): the rounding
// allowance is changed_ranks sqrt(P), the sum of the examples' moves still Delta.
// Throws UsageError when sigma or sensitivity is not positive or the variance would not
// fit the exact sampler's integer range (z sqrt(P) > 2^27).
NoiseGrid make_noise_grid(double sigma, double sensitivity, std::int64_t num_params, int changed_ranks = 1);

// The all-reduce sums grid integers in float64, exact while every partial sum stays below
// 2^53. Each of the m clipped contributions moves a coordinate by at most the clip norm C,
// so |sum| <= m C / gamma (+ noise, < 2^32); throws UsageError unless m C / gamma < 2^52.
void check_exact_grid_sum(const NoiseGrid& grid, double clip, std::int64_t batch_size);

constexpr std::size_t kNoiseChunk = 1 << 16;
constexpr std::size_t noise_chunks(std::size_t n) { return (n + kNoiseChunk - 1) / kNoiseChunk; }

// One draw of N_Z(0, variance) (CKS20 Algorithm 3) from `rng`. variance in [1, 2^58].
// The draws for a given stream changed with the faster Bernoulli(exp(-x)) of 2026-11 (issue
// 24): a run recorded by an earlier version replays its steps with different (equally
// distributed) noise; within a version replays are bit-identical.
std::int64_t sample_discrete_gaussian(SecureStream& rng, std::uint64_t variance);
// `count` independent draws into out[0..count): for variance >= staircase::kMinVariance
// (2^32) by the staircase sampler, else by the same algorithm run stage by stage over
// batches of proposals (faster; reads the stream in a different order than `count` single
// draws, so the values differ). The noise chunks use this one.
void sample_discrete_gaussian(SecureStream& rng, std::uint64_t variance, std::int64_t* out, std::size_t count);

// grid_sum[i] += Y_i, Y ~ N_Z(0, variance)^n, from the keystream of (key, noise, step).
// grid_sum holds integers (as doubles); the result stays integer-valued. Chunks run on
// at::parallel_for (the caller's LibTorch threads); noise/prefetch.h draws the same
// noise on threads of its own, ahead of time.
void add_discrete_gaussian_noise(double* grid_sum, std::size_t n, std::uint64_t variance, const Secret& key,
                                 std::uint64_t step);

namespace detail {
// The sampler's building blocks, for tests: Bernoulli(exp(-n/d)) for 0 <= n <= d, d >= 1,
// and Bernoulli(exp(-1)), each decided by one lazily drawn uniform (noise.cpp). With
// `exact_only` the floating-point fast path is skipped; both must read the same bits and
// give the same answers.
bool bernoulli_exp_minus(SecureStream& rng, unsigned __int128 n, unsigned __int128 d, bool exact_only);
bool bernoulli_exp_minus_one(SecureStream& rng, bool exact_only);
}  // namespace detail

// The same for the coordinates of chunk `chunk` only, [chunk kNoiseChunk, min(n, (chunk + 1)
// kNoiseChunk)), from its own substream: any split of the chunks over threads gives the same
// vector.
void add_discrete_gaussian_noise_chunk(double* grid_sum, std::size_t n, std::uint64_t variance, const Secret& key,
                                       std::uint64_t step, std::size_t chunk);

}  // namespace dpgnn::noise
