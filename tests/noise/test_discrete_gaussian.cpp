// noise/discrete_gaussian: the exact discrete Gaussian (Canonne, Kamath & Steinke 2020) against its
// pmf computed here directly (p(k) proportional to exp(-k^2 / (2 s2)), summed over a range
// wide enough that the rest is below 1e-300), by moments and chi-square goodness of fit;
// determinism given the key; the grid's variance bound.
// Chi-square critical values: the closed form of the chi-square survival function for even
// degrees of freedom, Q(x; 2k) = exp(-x/2) sum_{i<k} (x/2)^i / i!, solved for Q = 1e-4:
// 26 dof -> 61.657 (false alarm probability 1e-4 per test).
#include <ATen/Parallel.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

#include "dpgnn/noise/discrete_gaussian.h"
#include "dpgnn/noise/prefetch.h"
#include "dpgnn/util/error.h"
#include "chi_square.h"

namespace dpgnn::noise {
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

// One draw at a time, or (batched) the batch sampler the noise chunks use; the
// distribution tests run on both.
std::vector<std::int64_t> draws(std::uint64_t s2, std::size_t n, std::uint64_t seed, bool batched) {
  SecureStream rng(secret_from_pinned_seed(seed), StreamPurpose::noise, 0);
  std::vector<std::int64_t> v(n);
  if (batched) {
    sample_discrete_gaussian(rng, s2, v.data(), n);
  } else {
    for (auto& x : v) x = sample_discrete_gaussian(rng, s2);
  }
  return v;
}

// Bins [edges[i], edges[i+1]) plus the two tails; returns the chi-square statistic.
double chi_square(const std::vector<std::int64_t>& xs, const Pmf& pmf, const std::vector<std::int64_t>& edges) {
  return testing::chi_square(xs, edges, [&](std::int64_t lo, std::int64_t hi) { return pmf.mass(lo, hi); }).statistic;
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
  for (bool batched : {false, true}) {
    SCOPED_TRACE(batched ? "batched" : "one at a time");
    const std::uint64_t s2 = 10;
    const Pmf pmf(static_cast<double>(s2));
    const auto xs = draws(s2, 200000, 1, batched);
    std::vector<std::int64_t> edges;
    for (std::int64_t k = -12; k <= 13; ++k) edges.push_back(k);  // 25 unit bins + 2 tails: 26 dof
    EXPECT_LT(chi_square(xs, pmf, edges), 61.657);
    check_moments(xs, pmf);
  }
}

TEST(DiscreteGaussian, ScaleOneIsNotTheContinuousVariance) {
  for (bool batched : {false, true}) {
    SCOPED_TRACE(batched ? "batched" : "one at a time");
    // At s2 = 1 the discrete Gaussian's variance is below 1 (CKS20 Proposition 19): the test
    // can tell the exact sampler from a rounded continuous one (variance 1 + 1/12).
    const Pmf pmf(1.0);
    const auto xs = draws(1, 200000, 2, batched);
    std::vector<std::int64_t> edges;
    for (std::int64_t k = -3; k <= 4; ++k) edges.push_back(k);  // 7 bins + 2 tails: 8 dof
    EXPECT_LT(chi_square(xs, pmf, edges), 31.83);               // Q(31.83; 8) = 1e-4 (closed form)
    check_moments(xs, pmf);
    EXPECT_LT(pmf.variance, 1.0);
  }
}

TEST(DiscreteGaussian, LargeScaleFitsTheExactPmf) {
  for (bool batched : {false, true}) {
    SCOPED_TRACE(batched ? "batched" : "one at a time");
    const std::uint64_t s2 = 1000;
    const Pmf pmf(static_cast<double>(s2));
    const auto xs = draws(s2, 200000, 3, batched);
    std::vector<std::int64_t> edges;
    for (std::int64_t k = -125; k <= 125; k += 10) edges.push_back(k);  // 25 bins + 2 tails
    EXPECT_LT(chi_square(xs, pmf, edges), 61.657);
    check_moments(xs, pmf);
  }
}

// sigma ~ 351: the Laplace scale t = 352 = 44 * 2^3 is split into a 6-bit high part and a
// 3-bit low part (noise.cpp, sample_discrete_laplace), which the smaller scales above do not
// reach.
TEST(DiscreteGaussian, SplitLaplaceScaleFitsTheExactPmf) {
  for (bool batched : {false, true}) {
    SCOPED_TRACE(batched ? "batched" : "one at a time");
    const std::uint64_t s2 = 123457;
    const Pmf pmf(static_cast<double>(s2));
    const auto xs = draws(s2, 200000, 5, batched);
    std::vector<std::int64_t> edges;
    for (std::int64_t k = -1250; k <= 1250; k += 100) edges.push_back(k);  // 25 bins + 2 tails
    EXPECT_LT(chi_square(xs, pmf, edges), 61.657);
    check_moments(xs, pmf);
  }
}

TEST(DiscreteGaussian, TheTrainersScaleHasTheRightMoments) {
  for (bool batched : {false, true}) {
    SCOPED_TRACE(batched ? "batched" : "one at a time");
    // The grid the trainer uses puts s2 near 2^52; the pmf there is the Gaussian's to within
    // 1e-300 in variance (Poisson summation), so var = s2 and E[Y^4] = 3 s2^2.
    const std::uint64_t s2 = (std::uint64_t{1} << 52) + 12345;
    const auto xs = draws(s2, 100000, 4, batched);
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

// The fast path of Bernoulli(exp(-n/d)) decides in double precision what the exact path
// decides in big integers: on the same stream both must give the same answers and leave the
// stream at the same position, at the scales the sampler uses (n/d = u/t with t ~ 2^26; the
// Gaussian acceptance's fractional part with d ~ 2^105; x = 0, x = 1, tiny x).
TEST(DiscreteGaussian, FastBernoulliMatchesTheExactPath) {
  using u128 = unsigned __int128;
  SecureStream params(secret_from_pinned_seed(11), StreamPurpose::noise, 9);
  std::vector<std::pair<u128, u128>> cases = {{0, 1}, {1, 1}, {5, 5}, {1, 3}, {2, 3}, {1, u128{1} << 100}};
  for (int i = 0; i < 40; ++i) {
    const u128 t = (params.next_u64() >> 38) + 1;  // up to 2^26
    cases.push_back({params.below(static_cast<std::uint64_t>(t)), t});
    const u128 d = (static_cast<u128>(params.next_u64() >> 23) << 64) | params.next_u64();  // ~2^105
    cases.push_back({params.below(d), d});
  }
  for (const auto& [n, d] : cases) {
    SecureStream fast(secret_from_pinned_seed(12), StreamPurpose::noise, 1),
        exact(secret_from_pinned_seed(12), StreamPurpose::noise, 1);
    int agree = 0;
    for (int k = 0; k < 3000; ++k)
      agree += detail::bernoulli_exp_minus(fast, n, d, false) == detail::bernoulli_exp_minus(exact, n, d, true);
    EXPECT_EQ(agree, 3000) << static_cast<double>(n) << " / " << static_cast<double>(d);
    EXPECT_EQ(fast.next_u64(), exact.next_u64()) << "same bits read";
  }
  SecureStream fast(secret_from_pinned_seed(13), StreamPurpose::noise, 1),
      exact(secret_from_pinned_seed(13), StreamPurpose::noise, 1);
  for (int k = 0; k < 100000; ++k)
    ASSERT_EQ(detail::bernoulli_exp_minus_one(fast, false), detail::bernoulli_exp_minus_one(exact, true)) << k;
  EXPECT_EQ(fast.next_u64(), exact.next_u64());
}

// The exact path alone (no floating point at all) has the right success rate, exp(-x), for
// x = 0.3, 0.999 and 1 (five standard errors).
TEST(DiscreteGaussian, ExactBernoulliHasTheRightRate) {
  SecureStream rng(secret_from_pinned_seed(14), StreamPurpose::noise, 0);
  const int n = 200000;
  for (const auto& [num, den] : std::vector<std::pair<int, int>>{{3, 10}, {999, 1000}, {1, 1}}) {
    int hits = 0;
    for (int k = 0; k < n; ++k) hits += detail::bernoulli_exp_minus(rng, num, den, true);
    const double p = std::exp(-static_cast<double>(num) / den);
    EXPECT_NEAR(hits / static_cast<double>(n), p, 5 * std::sqrt(p * (1 - p) / n)) << num << "/" << den;
  }
}

// Kolmogorov-Smirnov distance between the empirical and the exact CDF at a small variance,
// where a wrong tail or a wrong Bernoulli rate shows (Dvoretzky-Kiefer-Wolfowitz: P[D >
// sqrt(ln(2/a) / (2 n))] <= a; a = 1e-4, n = 400,000 gives 0.00348).
TEST(DiscreteGaussian, SmallVarianceCdfIsTheExactOne) {
  for (bool batched : {false, true}) {
    SCOPED_TRACE(batched ? "batched" : "one at a time");
    for (std::uint64_t s2 : {2ULL, 50ULL}) {
      const Pmf pmf(static_cast<double>(s2));
      const auto xs = draws(s2, 400000, 20 + s2, batched);
      std::map<std::int64_t, std::size_t> counts;
      for (auto x : xs) ++counts[x];
      double cdf = 0, ecdf = 0, worst = 0;
      for (std::int64_t k = -pmf.radius; k <= pmf.radius; ++k) {
        cdf += pmf.p[static_cast<std::size_t>(k + pmf.radius)];
        const auto it = counts.find(k);
        if (it != counts.end()) ecdf += static_cast<double>(it->second) / static_cast<double>(xs.size());
        worst = std::max(worst, std::abs(cdf - ecdf));
      }
      EXPECT_LT(worst, 0.00348) << "s2 " << s2;
    }
  }
}

TEST(DiscreteGaussian, NoiseDoesNotDependOnTheThreadCount) {
  const std::size_t n = 4 * kNoiseChunk + 3;
  const Secret key = secret_from_pinned_seed(21);
  const std::uint64_t s2 = (std::uint64_t{1} << 52) + 7;
  std::vector<double> ref(n, 1.0);
  at::set_num_threads(1);
  add_discrete_gaussian_noise(ref.data(), n, s2, key, 8);
  for (int threads : {2, 3}) {
    at::set_num_threads(threads);
    std::vector<double> v(n, 1.0);
    add_discrete_gaussian_noise(v.data(), n, s2, key, 8);
    EXPECT_EQ(v, ref) << "at::parallel_for with " << threads << " threads";
  }
  at::set_num_threads(1);
  for (int threads : {1, 2, 5}) {
    std::vector<double> v(n, 1.0);
    add_discrete_gaussian_noise_threads(v.data(), n, s2, key, 8, threads);
    EXPECT_EQ(v, ref) << threads << " std::threads";
  }
}

std::vector<double> direct_noise(const Secret& key, std::size_t n, std::uint64_t step, std::uint64_t s2) {
  std::vector<double> v(n, 0.5);
  add_discrete_gaussian_noise(v.data(), n, s2, key, step);
  return v;
}

TEST(NoisePrefetcher, GivesTheDirectNoiseStepAfterStep) {
  const std::size_t n = 2 * kNoiseChunk + 5;
  const Secret key = secret_from_pinned_seed(31);
  for (int threads : {1, 2, 3}) {
    NoisePrefetcher pre(key, n, threads);
    pre.request(0, 1000);
    for (std::uint64_t t = 0; t < 4; ++t) {
      std::vector<double> v(n, 0.5);
      pre.add_to(v.data(), t, 1000);
      pre.request(t + 1, 1000);
      ASSERT_EQ(v, direct_noise(key, n, t, 1000)) << "step " << t << ", " << threads << " threads";
    }
    EXPECT_EQ(pre.hits(), 4u);
    EXPECT_EQ(pre.misses(), 0u);
  }
}

TEST(NoisePrefetcher, RecomputesWhenTheVarianceChanges) {
  const std::size_t n = kNoiseChunk + 9;
  const Secret key = secret_from_pinned_seed(32);
  NoisePrefetcher pre(key, n, 2);
  pre.request(3, 1000);
  std::vector<double> v(n, 0.5);
  pre.add_to(v.data(), 3, 2000);  // recalibrated: the prefetched vector is for 1000
  EXPECT_EQ(v, direct_noise(key, n, 3, 2000));
  EXPECT_EQ(pre.misses(), 1u);
  // Two requests ahead, consumed in order; a step never requested is drawn on the spot.
  pre.request(4, 2000);
  pre.request(5, 2000);
  for (std::uint64_t t : {4, 5, 7}) {
    std::vector<double> w(n, 0.5);
    pre.add_to(w.data(), t, 2000);
    EXPECT_EQ(w, direct_noise(key, n, t, 2000)) << "step " << t;
  }
  EXPECT_EQ(pre.hits(), 2u);
  EXPECT_EQ(pre.misses(), 2u);
  // A vector is consumed once: asking again draws it again (the same values).
  std::vector<double> again(n, 0.5);
  pre.add_to(again.data(), 5, 2000);
  EXPECT_EQ(again, direct_noise(key, n, 5, 2000));
}

TEST(NoisePrefetcher, SurfacesErrorsAndShutsDownCleanly) {
  const Secret key = secret_from_pinned_seed(33);
  {
    NoisePrefetcher pre(key, 100, 2);
    pre.request(1, 0);  // variance 0: the sampler refuses it on the background thread
    std::vector<double> v(100, 0.0);
    EXPECT_THROW(pre.add_to(v.data(), 1, 0), Error);
    pre.add_to(v.data(), 2, 1000);  // still usable
    EXPECT_EQ(v, [&] {
      std::vector<double> w(100, 0.0);
      add_discrete_gaussian_noise(w.data(), 100, 1000, key, 2);
      return w;
    }());
  }
  // Destroyed while a long draw runs: cancelled and joined, no hang.
  NoisePrefetcher* pre = new NoisePrefetcher(key, 64 * kNoiseChunk, 2);
  pre->request(0, std::uint64_t{1} << 52);
  pre->request(1, std::uint64_t{1} << 52);
  delete pre;
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
}  // namespace dpgnn::noise
