// Batch selection (DESIGN.md 3): uniform without replacement, a pure function of
// (batch secret, step, M, m) so every rank draws the same batch, and Poisson sampling at rate q.
// Critical values are scipy.stats.chi2.isf(1e-4, dof) (false alarm probability 1e-4).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "dpgnn/sampling/batch.h"
#include "dpgnn/util/secure_rng.h"
#include "dpgnn/util/error.h"

namespace dpgnn::sampling {
namespace {

// A fixed batch secret per test number (the trainer's pinned-seed derivation).
Secret key(std::uint64_t n) { return secret_from_pinned_seed(n); }

TEST(BatchWithoutReplacement, ReturnsMDistinctSortedIdsInRange) {
  for (std::int64_t total : {1, 2, 10, 1000}) {
    for (std::int64_t m : {std::int64_t{1}, total / 2 + 1, total}) {
      for (std::uint64_t step = 0; step < 20; ++step) {
        const auto b = sample_batch_without_replacement(key(7), step, total, m);
        ASSERT_EQ(static_cast<std::int64_t>(b.size()), m);
        EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
        EXPECT_EQ(std::adjacent_find(b.begin(), b.end()), b.end());
        EXPECT_GE(b.front(), 0);
        EXPECT_LT(b.back(), total);
      }
    }
  }
}

TEST(BatchWithoutReplacement, EveryMSubsetIsEquallyLikely) {
  // M = 6, m = 3: 20 subsets, 40,000 draws (2,000 expected each); 19 dof: 50.80.
  std::map<std::vector<std::int64_t>, double> counts;
  const int draws = 40000;
  for (int s = 0; s < draws; ++s) counts[sample_batch_without_replacement(key(2024), s, 6, 3)]++;
  ASSERT_EQ(counts.size(), 20u);
  double chi2 = 0;
  for (const auto& [subset, c] : counts) chi2 += (c - 2000.0) * (c - 2000.0) / 2000.0;
  EXPECT_LT(chi2, 50.80);
}

TEST(BatchWithoutReplacement, EveryIdIsEquallyLikelyInALargeSpace) {
  // M = 1000, m = 10, 20,000 steps: each id is in a batch with probability 1/100 (200
  // expected). Pearson's statistic over the 1000 counts, 999 dof: 1173.85.
  std::vector<double> counts(1000, 0);
  for (int s = 0; s < 20000; ++s)
    for (auto id : sample_batch_without_replacement(key(99), s, 1000, 10)) counts[id]++;
  double chi2 = 0;
  for (double c : counts) chi2 += (c - 200.0) * (c - 200.0) / 200.0;
  EXPECT_LT(chi2, 1173.85);
}

TEST(BatchWithoutReplacement, IsTheSameOnEveryRank) {
  // "Ranks" that draw in different orders and interleave other draws still agree: the
  // batch depends on (secret, step, M, m) only.
  std::vector<std::vector<std::int64_t>> rank0, rank3;
  for (std::uint64_t step = 0; step < 50; ++step) rank0.push_back(sample_batch_without_replacement(key(5), step, 12345, 64));
  for (std::uint64_t step = 50; step-- > 0;) {
    sample_batch_without_replacement(key(6), step, 999, 3);  // unrelated draws in between
    rank3.insert(rank3.begin(), sample_batch_without_replacement(key(5), step, 12345, 64));
  }
  EXPECT_EQ(rank0, rank3);
  EXPECT_NE(rank0[0], rank0[1]);  // steps differ
  EXPECT_NE(sample_batch_without_replacement(key(5), 0, 12345, 64), sample_batch_without_replacement(key(6), 0, 12345, 64));
}

TEST(BatchWithoutReplacement, CostsOrderMNotOrderTotal) {
  // M = 10^15 would need petabytes if the algorithm touched every id.
  const auto b = sample_batch_without_replacement(key(1), 1, 1000000000000000LL, 1000);
  EXPECT_EQ(b.size(), 1000u);
  EXPECT_EQ(std::set<std::int64_t>(b.begin(), b.end()).size(), 1000u);
}

TEST(BatchWithoutReplacement, RejectsBadSizes) {
  EXPECT_THROW(sample_batch_without_replacement(key(1), 0, 10, 11), UsageError);
  EXPECT_THROW(sample_batch_without_replacement(key(1), 0, 10, 0), UsageError);
  EXPECT_THROW(sample_batch_without_replacement(key(1), 0, 10, -3), UsageError);
  EXPECT_THROW(sample_batch_without_replacement(key(1), 0, 0, 1), UsageError);
}

TEST(BatchPoisson, SelectsEachIdWithProbabilityQ) {
  // M = 100,000, q = 0.01: the size is Binomial(1e5, 0.01), mean 1000, sd 31.46; 5 sd
  // (two-sided false alarm 6e-7) for one step, and the mean over 200 steps within 5 sd/sqrt(200).
  double sum = 0;
  for (std::uint64_t step = 0; step < 200; ++step) {
    const auto b = sample_batch_poisson(key(3), step, 100000, 0.01);
    EXPECT_NEAR(static_cast<double>(b.size()), 1000.0, 5 * 31.46);
    EXPECT_TRUE(std::is_sorted(b.begin(), b.end()));
    EXPECT_EQ(std::adjacent_find(b.begin(), b.end()), b.end());
    if (!b.empty()) {
      EXPECT_GE(b.front(), 0);
      EXPECT_LT(b.back(), 100000);
    }
    sum += static_cast<double>(b.size());
  }
  EXPECT_NEAR(sum / 200.0, 1000.0, 5 * 31.46 / std::sqrt(200.0));
}

TEST(BatchPoisson, EveryIdIsIncludedIndependentlyAtRateQ) {
  // M = 50, q = 0.2, 20,000 steps: each count is Binomial(20000, 0.2), independent across
  // ids, so sum (O - E)^2 / (E (1 - q)) is chi-square with 50 dof: 95.97 (isf(1e-4, 50)).
  std::vector<double> counts(50, 0);
  for (int s = 0; s < 20000; ++s)
    for (auto id : sample_batch_poisson(key(8), s, 50, 0.2)) counts[id]++;
  double chi2 = 0;
  for (double c : counts) chi2 += (c - 4000.0) * (c - 4000.0) / (4000.0 * 0.8);
  EXPECT_LT(chi2, 95.97);
}

TEST(BatchPoisson, IsAPureFunctionAndQOneTakesEverything) {
  EXPECT_EQ(sample_batch_poisson(key(1), 5, 1000, 0.1), sample_batch_poisson(key(1), 5, 1000, 0.1));
  EXPECT_EQ(sample_batch_poisson(key(1), 5, 7, 1.0), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(BatchPoisson, RejectsRatesOutsideZeroOne) {
  EXPECT_THROW(sample_batch_poisson(key(1), 0, 10, 0.0), UsageError);
  EXPECT_THROW(sample_batch_poisson(key(1), 0, 10, -0.5), UsageError);
  EXPECT_THROW(sample_batch_poisson(key(1), 0, 10, 1.5), UsageError);
  EXPECT_THROW(sample_batch_poisson(key(1), 0, 10, std::numeric_limits<double>::quiet_NaN()), UsageError);
}

}  // namespace
}  // namespace dpgnn::sampling
