// train/noise: the exact discrete Gaussian (Canonne, Kamath & Steinke 2020) against its
// pmf computed here directly (p(k) proportional to exp(-k^2 / (2 s2)), summed over a range
// wide enough that the rest is below 1e-300), by moments and chi-square goodness of fit;
// determinism given the key; the grid's variance bound.
// Chi-square critical values: the closed form of the chi-square survival function for even
// degrees of freedom, Q(x; 2k) = exp(-x/2) sum_{i<k} (x/2)^i / i!, solved for Q = 1e-4:
// 26 dof -> 61.657 (false alarm probability 1e-4 per test).
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "dpgnn/train/noise.h"
#include "dpgnn/util/error.h"

namespace dpgnn::train {
namespace {

// The exact pmf on [-R, R] (R = 40 sqrt(s2) + 10: the mass outside is < exp(-800)).
struct Pmf {
  std::int64_t radius;
  std::vector<double> p;  // p[k + radius]
  double variance = 0, fourth = 0;
  explicit Pmf(double s2) : radius(static_cast<std::int64_t>(40 * std::sqrt(s2)) + 10) {
    double z = 0;
    for (std::int64_t k = -radius; k <= radius; ++k) {
      p.push_back(std::exp(-static_cast<double>(k) * k / (2 * s2)));
      z += p.back();
    }
    for (std::int64_t k = -radius; k <= radius; ++k) {
      auto& v = p[static_cast<std::size_t>(k + radius)];
      v /= z;
      variance += v * k * k;
      fourth += v * static_cast<double>(k) * k * k * k;
    }
  }
  double mass(std::int64_t lo, std::int64_t hi) const {  // P[lo <= Y < hi], clamped to the range
    double m = 0;
    for (std::int64_t k = std::max(lo, -radius); k < std::min(hi, radius + 1); ++k)
      m += p[static_cast<std::size_t>(k + radius)];
    return m;
  }
};

std::vector<std::int64_t> draws(std::uint64_t s2, std::size_t n, std::uint64_t seed = 1) {
  SecureStream rng(secret_from_pinned_seed(seed), StreamPurpose::noise, 0);
  std::vector<std::int64_t> v(n);
  for (auto& x : v) x = sample_discrete_gaussian(rng, s2);
  return v;
}

// Bins [edges[i], edges[i+1]) plus the two tails; returns the chi-square statistic.
double chi_square(const std::vector<std::int64_t>& xs, const Pmf& pmf, const std::vector<std::int64_t>& edges) {
  const std::int64_t big = std::int64_t{1} << 62;
  std::vector<std::int64_t> e = {-big};
  e.insert(e.end(), edges.begin(), edges.end());
  e.push_back(big);
  std::vector<double> observed(e.size() - 1);
  for (auto x : xs) {
    std::size_t b = 0;
    while (!(x >= e[b] && x < e[b + 1])) ++b;
    observed[b] += 1;
  }
  double chi = 0;
  for (std::size_t b = 0; b + 1 < e.size(); ++b) {
    const double expected = pmf.mass(e[b], e[b + 1]) * static_cast<double>(xs.size());
    chi += (observed[b] - expected) * (observed[b] - expected) / expected;
  }
  return chi;
}

void check_moments(const std::vector<std::int64_t>& xs, const Pmf& pmf) {
  const double n = static_cast<double>(xs.size());
  double m1 = 0, m2 = 0, m4 = 0;
  for (auto x : xs) {
    const double d = static_cast<double>(x);
    m1 += d;
    m2 += d * d;
    m4 += d * d * d * d;
  }
  m1 /= n;
  m2 /= n;
  m4 /= n;
  // Five standard errors: sd(mean) = sqrt(var / n), sd(m2) = sqrt((m4 - var^2) / n),
  // sd(m4) <= sqrt(E[Y^8] / n) with E[Y^8] ~ 105 var^4 (Gaussian).
  const double v = pmf.variance;
  EXPECT_NEAR(m1, 0.0, 5 * std::sqrt(v / n));
  EXPECT_NEAR(m2, v, 5 * std::sqrt((pmf.fourth - v * v) / n));
  EXPECT_NEAR(m4, pmf.fourth, 5 * std::sqrt(105 * v * v * v * v / n));
}

TEST(DiscreteGaussian, SmallScaleFitsTheExactPmf) {
  const std::uint64_t s2 = 10;
  const Pmf pmf(static_cast<double>(s2));
  const auto xs = draws(s2, 200000);
  std::vector<std::int64_t> edges;
  for (std::int64_t k = -12; k <= 13; ++k) edges.push_back(k);  // 25 unit bins + 2 tails: 26 dof
  EXPECT_LT(chi_square(xs, pmf, edges), 61.657);
  check_moments(xs, pmf);
}

TEST(DiscreteGaussian, ScaleOneIsNotTheContinuousVariance) {
  // At s2 = 1 the discrete Gaussian's variance is below 1 (CKS20 Proposition 19): the test
  // can tell the exact sampler from a rounded continuous one (variance 1 + 1/12).
  const Pmf pmf(1.0);
  const auto xs = draws(1, 200000, 2);
  std::vector<std::int64_t> edges;
  for (std::int64_t k = -3; k <= 4; ++k) edges.push_back(k);  // 7 bins + 2 tails: 8 dof
  EXPECT_LT(chi_square(xs, pmf, edges), 31.83);             // Q(31.83; 8) = 1e-4 (closed form)
  check_moments(xs, pmf);
  EXPECT_LT(pmf.variance, 1.0);
}

TEST(DiscreteGaussian, LargeScaleFitsTheExactPmf) {
  const std::uint64_t s2 = 1000;
  const Pmf pmf(static_cast<double>(s2));
  const auto xs = draws(s2, 200000, 3);
  std::vector<std::int64_t> edges;
  for (std::int64_t k = -125; k <= 125; k += 10) edges.push_back(k);  // 25 bins + 2 tails
  EXPECT_LT(chi_square(xs, pmf, edges), 61.657);
  check_moments(xs, pmf);
}

TEST(DiscreteGaussian, TheTrainersScaleHasTheRightMoments) {
  // The grid the trainer uses puts s2 near 2^52; the pmf there is the Gaussian's to within
  // 1e-300 in variance (Poisson summation), so var = s2 and E[Y^4] = 3 s2^2.
  const std::uint64_t s2 = (std::uint64_t{1} << 52) + 12345;
  const auto xs = draws(s2, 100000, 4);
  const double n = static_cast<double>(xs.size()), v = static_cast<double>(s2);
  double m1 = 0, m2 = 0, m4 = 0;
  for (auto x : xs) {
    const double d = static_cast<double>(x) / std::sqrt(v);
    m1 += d;
    m2 += d * d;
    m4 += d * d * d * d;
  }
  EXPECT_NEAR(m1 / n, 0.0, 5 / std::sqrt(n));
  EXPECT_NEAR(m2 / n, 1.0, 5 * std::sqrt(2 / n));
  EXPECT_NEAR(m4 / n, 3.0, 5 * std::sqrt(96 / n));
}

TEST(DiscreteGaussian, NoiseIsDeterministicGivenTheKeyAndDiffersAcrossKeysAndSteps) {
  const std::size_t n = 3 * kNoiseChunk + 17;  // several chunks, drawn in parallel
  auto noise = [&](std::uint64_t seed, std::uint64_t step) {
    std::vector<double> v(n, 5.0);
    add_discrete_gaussian_noise(v.data(), n, 1000, secret_from_pinned_seed(seed), step);
    return v;
  };
  const auto a = noise(1, 3);
  EXPECT_EQ(a, noise(1, 3));
  EXPECT_NE(a, noise(2, 3));
  EXPECT_NE(a, noise(1, 4));
  for (double x : a) ASSERT_EQ(x, std::round(x)) << "noise keeps the sum on the grid";
  // Chunks are independent streams: the first and the second chunk differ.
  EXPECT_NE(std::vector<double>(a.begin(), a.begin() + 100),
            std::vector<double>(a.begin() + kNoiseChunk, a.begin() + kNoiseChunk + 100));
}

TEST(NoiseGrid, VarianceCoversTheRoundedSensitivity) {
  // s2 >= (z (Delta / gamma + sqrt(P)))^2 (noise.h), checked in long double here.
  for (double z : {0.001, 0.5, 1.0, 4.0}) {
    for (std::int64_t p : {1LL, 92000LL, 10000000LL}) {
      const double delta = 2.0, sigma = z * delta;
      const NoiseGrid g = make_noise_grid(sigma, delta, p);
      const long double need = static_cast<long double>(z) *
                               (static_cast<long double>(delta) / g.gamma + std::sqrt(static_cast<long double>(p)));
      EXPECT_GE(static_cast<long double>(g.variance), need * need) << "z " << z << " P " << p;
      EXPECT_GE(g.sigma_effective, sigma);
      EXPECT_LT(g.sigma_effective, sigma * (1 + 1e-3)) << "z " << z << " P " << p;
    }
  }
  EXPECT_THROW(make_noise_grid(0.0, 2.0, 10), UsageError);
  // m C / gamma = m 2^25 (31/32) / z grid units must stay below 2^52.
  const NoiseGrid tiny = make_noise_grid(2e-3, 2.0, 1000);  // z = 0.001
  EXPECT_NO_THROW(check_exact_grid_sum(tiny, 1.0, 100000));
  EXPECT_THROW(check_exact_grid_sum(tiny, 1.0, 200000000), UsageError);
  EXPECT_THROW(make_noise_grid(1e6, 1.0, 1000000), UsageError);  // z sqrt(P) = 1e9 > 2^27
}

// Two changed ranks (an example moving between ranks, DPAR's graph sampling): the allowance
// covers both roundings, s2 >= (z (Delta / gamma + 2 sqrt(P)))^2.
TEST(NoiseGrid, TwoChangedRanksDoubleTheRoundingAllowance) {
  for (double z : {0.5, 4.0}) {
    const std::int64_t p = 92000;
    const double delta = 2.0, sigma = z * delta;
    const NoiseGrid one = make_noise_grid(sigma, delta, p);
    const NoiseGrid two = make_noise_grid(sigma, delta, p, 2);
    EXPECT_EQ(two.gamma, one.gamma);
    const long double need = static_cast<long double>(z) * (static_cast<long double>(delta) / two.gamma +
                                                            2.0L * std::sqrt(static_cast<long double>(p)));
    EXPECT_GE(static_cast<long double>(two.variance), need * need) << "z " << z;
    EXPECT_GT(two.variance, one.variance);
    EXPECT_LT(two.sigma_effective, sigma * (1 + 1e-3));
  }
  EXPECT_THROW(make_noise_grid(1.0, 2.0, 10, 0), UsageError);
}

}  // namespace
}  // namespace dpgnn::train
