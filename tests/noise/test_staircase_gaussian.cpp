// noise/staircase_gaussian: the staircase sampler of the exact discrete Gaussian against its
// pmf computed here directly (p(k) proportional to exp(-k^2 / (2 s2))) or, at the trainer's
// scale, against the Gaussian (Poisson summation: the difference is far below what 400,000
// draws can see), by chi-square goodness of fit; on shapes whose tails, wide blocks and
// certified (MPFR) path are hit often; and the fast path against the certified one.
// Chi-square critical values: Q(x; 2k) = exp(-x/2) sum_{i<k} (x/2)^i / i! (the closed form
// of the survival function for even degrees of freedom), solved for Q = 1e-4 below.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "dpgnn/noise/staircase_gaussian.h"
#include "dpgnn/util/error.h"
#include "chi_square.h"

namespace dpgnn::noise::staircase {
namespace {

// Q(x; dof), the chi-square survival function, in closed form: even dof 2k: exp(-x/2)
// sum_{i<k} (x/2)^i / i!; odd dof 2k+1: erfc(sqrt(x/2)) + exp(-x/2) sum_{j<k} (x/2)^(j+1/2) /
// Gamma(j + 3/2) (Abramowitz & Stegun 26.4.4-26.4.5).
double chi_square_survival(double x, int dof) {
  const double h = x / 2;
  double sum = 0;
  if (dof % 2 == 0) {
    double term = 1;
    for (int i = 0; i < dof / 2; ++i) {
      if (i > 0) term *= h / i;
      sum += term;
    }
    return std::exp(-h) * sum;
  }
  for (int j = 0; j < dof / 2; ++j) sum += std::exp((j + 0.5) * std::log(h) - h - std::lgamma(j + 1.5));
  return std::erfc(std::sqrt(h)) + sum;
}

double critical_value(int dof) {  // Q(x; dof) = 1e-4
  double lo = 0, hi = 1000;
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (chi_square_survival(mid, dof) > 1e-4 ? lo : hi) = mid;
  }
  return hi;
}

std::vector<std::int64_t> draws(const Table& table, std::size_t n, std::uint64_t seed, bool exact_only = false) {
  SecureStream rng(secret_from_pinned_seed(seed), StreamPurpose::noise, 0);
  std::vector<std::int64_t> v(n);
  sample(table, rng, v.data(), n, exact_only);
  return v;
}

// P[X in [lo, hi)] for the discrete Gaussian, from its unnormalised pmf summed over
// [-radius, radius] (radius 40 sigma: the rest is below exp(-800)).
struct ExactMass {
  std::uint64_t s2;
  std::int64_t radius;
  long double z = 0;
  explicit ExactMass(std::uint64_t variance)
      : s2(variance), radius(static_cast<std::int64_t>(40 * std::sqrt(static_cast<double>(variance))) + 10) {
    z = sum(-radius, radius + 1);
  }
  long double sum(std::int64_t lo, std::int64_t hi) const {
    long double m = 0;
    for (std::int64_t k = std::max(lo, -radius); k < std::min(hi, radius + 1); ++k)
      m += std::exp(-static_cast<long double>(k) * k / (2.0L * s2));
    return m;
  }
  double operator()(std::int64_t lo, std::int64_t hi) const { return static_cast<double>(sum(lo, hi) / z); }
};

// The Gaussian's mass of the integers in [lo, hi): the normal law of [lo - 1/2, hi - 1/2).
double gaussian_mass(std::uint64_t s2, std::int64_t lo, std::int64_t hi) {
  const long double sd = std::sqrt(static_cast<long double>(s2));
  auto cdf = [&](long double x) { return 0.5L * std::erfc(-x / (sd * std::sqrt(2.0L))); };
  return static_cast<double>(cdf(static_cast<long double>(hi) - 0.5L) - cdf(static_cast<long double>(lo) - 0.5L));
}

// Chi-square over bins [edges[i], edges[i+1]) plus the two tails (edges.size() degrees of
// freedom), each bin expected to hold at least 5 draws.
template <typename Mass>
double chi_square(const std::vector<std::int64_t>& xs, const std::vector<std::int64_t>& edges, const Mass& mass) {
  const auto r = testing::chi_square(xs, edges, mass);
  EXPECT_GT(r.least_expected, 5.0);
  return r.statistic;
}

std::vector<std::int64_t> edges(std::int64_t first, std::int64_t step, int count) {
  std::vector<std::int64_t> v;
  for (int i = 0; i < count; ++i) v.push_back(first + step * i);
  return v;
}

void expect_fits_exact_pmf(std::uint64_t s2, Shape shape, std::size_t n, std::uint64_t seed,
                           const std::vector<std::int64_t>& bin_edges) {
  const auto table = make_table(s2, shape);
  const auto xs = draws(*table, n, seed);
  const ExactMass mass(s2);
  const int dof = static_cast<int>(bin_edges.size());  // edges + 1 bins
  EXPECT_LT(chi_square(xs, bin_edges, mass), critical_value(dof));
}

TEST(StaircaseGaussian, CoarseBlocksAndNearTailsFitTheExactPmf) {
  // sigma 20, blocks of 2, tails past 2 sigma: 4.6% of the proposals are tail proposals,
  // every one decided by the certified path.
  const auto before = counters();
  expect_fits_exact_pmf(400, {1, 20}, 300000, 1, edges(-66, 4, 34));
  const auto after = counters();
  EXPECT_GT(after.tail - before.tail, 5000u);
  EXPECT_GE(after.certified - before.certified, after.tail - before.tail);
}

TEST(StaircaseGaussian, MostlyTailsFitTheExactPmf) {
  // sigma 10, single-integer blocks, tails past 0.3 sigma: three quarters of the draws come
  // from the geometric tails.
  const auto before = counters();
  expect_fits_exact_pmf(100, {0, 3}, 200000, 2, edges(-31, 2, 32));
  EXPECT_GT(counters().tail - before.tail, 100000u);
}

TEST(StaircaseGaussian, WideBlocksFitTheExactPmf) {
  // sigma 100, blocks of 64: r = (x^2 - a^2) / (2 s2) reaches 2.2, beyond the fast path's
  // polynomial (r <= 1/4), so the certified path decides a large share.
  const auto before = counters();
  expect_fits_exact_pmf(10000, {6, 5}, 200000, 3, edges(-350, 25, 29));
  EXPECT_GT(counters().certified - before.certified, 10000u);
}

TEST(StaircaseGaussian, DefaultShapeAtTheSmallestVarianceFitsTheExactPmf) {
  const std::uint64_t s2 = kMinVariance;  // sigma 65,536
  expect_fits_exact_pmf(s2, default_shape(s2), 400000, 4, edges(-4 * 65536, 65536 / 4, 33));
}

TEST(StaircaseGaussian, TheTrainersScaleFitsTheGaussian) {
  const std::uint64_t s2 = (std::uint64_t{1} << 52) + 12345;  // sigma ~ 2^26
  const auto xs = draws(*table_for(s2), 400000, 5);
  const std::int64_t quarter = std::int64_t{1} << 24;
  const auto e = edges(-16 * quarter, quarter, 33);
  EXPECT_LT(chi_square(xs, e, [&](std::int64_t lo, std::int64_t hi) { return gaussian_mass(s2, lo, hi); }),
            critical_value(33));
  // Parity: a rounded continuous sampler could still pass the bins; the low bit is a fair coin.
  std::size_t odd = 0;
  for (auto x : xs) odd += static_cast<std::size_t>(x & 1);
  EXPECT_NEAR(static_cast<double>(odd) / static_cast<double>(xs.size()), 0.5, 5 * 0.5 / std::sqrt(400000.0));
}

// Every decision the floating-point estimate makes is the certified path's, and neither
// reads more of the stream than the other: the same values and the same next word.
TEST(StaircaseGaussian, FastPathDecidesAsTheCertifiedPath) {
  const std::vector<std::pair<std::uint64_t, Shape>> cases = {
      {(std::uint64_t{1} << 52) + 12345, default_shape((std::uint64_t{1} << 52) + 12345)},
      {kMinVariance, default_shape(kMinVariance)},
      {400, {1, 20}},
      {10000, {6, 5}}};
  for (const auto& [s2, shape] : cases) {
    SCOPED_TRACE("s2 " + std::to_string(s2));
    const auto table = make_table(s2, shape);
    for (std::uint64_t seed : {11, 12}) {
      SecureStream fast_rng(secret_from_pinned_seed(seed), StreamPurpose::noise, 0);
      SecureStream exact_rng(secret_from_pinned_seed(seed), StreamPurpose::noise, 0);
      std::vector<std::int64_t> fast(20000), exact(20000);
      sample(*table, fast_rng, fast.data(), fast.size(), false);
      sample(*table, exact_rng, exact.data(), exact.size(), true);
      EXPECT_EQ(fast, exact);
      EXPECT_EQ(fast_rng.next_u64(), exact_rng.next_u64());
    }
  }
}

TEST(StaircaseGaussian, DefaultShapesKeepTheFastPathInRange) {
  // sigma / 128 < w <= sigma / 64 (w at most 2^20) and tails past 8 sigma, from 2^32 to 2^58.
  for (int bits = 32; bits <= 58; ++bits) {
    const std::uint64_t s2 = std::uint64_t{1} << bits;
    const Shape s = default_shape(s2);
    const double sigma = std::sqrt(static_cast<double>(s2)), w = std::ldexp(1.0, s.block_bits);
    if (s.block_bits < 20) {
      EXPECT_GT(w, sigma / 128.5) << bits;
    } else {
      EXPECT_EQ(w, std::ldexp(1.0, 20)) << bits;  // the cap
    }
    EXPECT_LE(w, sigma / 64) << bits;
    EXPECT_GE(static_cast<double>(s.blocks_per_side) * w, 8 * sigma) << bits;
    EXPECT_NO_THROW(make_table(s2, s)) << bits;
  }
}

TEST(StaircaseGaussian, RefusesShapesItCannotUse) {
  EXPECT_THROW(make_table(0, {1, 1}), UsageError);
  EXPECT_THROW(make_table(std::uint64_t{1} << 59, {1, 1}), UsageError);
  EXPECT_THROW(make_table(100, {41, 1}), UsageError);
  EXPECT_THROW(make_table(100, {1, 0}), UsageError);
  EXPECT_THROW(make_table(100, {30, 1u << 20}), UsageError);  // the fast path's product overflows
}

}  // namespace
}  // namespace dpgnn::noise::staircase
