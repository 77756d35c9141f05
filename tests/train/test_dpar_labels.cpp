// DPAR's label release (methods/dpar_labels.h): the keep probability on the 53-bit grid, never
// above the k-RR probability the accountant is told; the draws keep a label with that
// probability and spread the rest uniformly (binomial and chi-square bounds that fail with
// probability < 1e-6); the same key and node give the same draw; the stored form round-trips
// and a malformed one is refused; when the release is made.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "../../src/train/methods/dpar_labels.h"
#include "dpgnn/util/error.h"

namespace dpgnn::train::methods {
namespace {

TEST(DparLabels, TheKeepProbabilityIsTheKrrOneRoundedDownTo53Bits) {
  for (std::int64_t k : {2, 7, 40}) {
    for (double eps : {0.1, 1.0, 4.0, 30.0}) {
      const double p = std::exp(eps) / (std::exp(eps) + static_cast<double>(k - 1));
      const double q = rr_keep_probability(k, 1 / eps);
      EXPECT_LE(q, p) << k << " " << eps;
      EXPECT_GT(q, p - 1e-15) << k << " " << eps;
      EXPECT_EQ(std::ldexp(q, 53), std::floor(std::ldexp(q, 53))) << "a multiple of 2^-53";
    }
  }
}

TEST(DparLabels, KeepsALabelWithItsProbabilityAndSpreadsTheRestUniformly) {
  const Secret key = derive_secret(Secret{}, 9, "testlbls");
  const std::int64_t k = 5, n = 200000, label = 2;
  const double z = 1.0;  // eps 1: q = e / (e + 4) = 0.4046
  const double q = rr_keep_probability(k, z);
  std::vector<std::int64_t> counts(k, 0);
  for (std::int64_t node = 0; node < n; ++node) ++counts[respond(key, node, label, k, z)];
  const double sd = std::sqrt(n * q * (1 - q));
  EXPECT_NEAR(static_cast<double>(counts[label]), n * q, 5 * sd);
  double chi2 = 0;
  const double expected = n * (1 - q) / static_cast<double>(k - 1);
  for (std::int64_t c = 0; c < k; ++c)
    if (c != label) chi2 += std::pow(static_cast<double>(counts[c]) - expected, 2) / expected;
  EXPECT_LT(chi2, 33.0) << "3 degrees of freedom: P(chi2 > 33) < 1e-6";
  // Deterministic in (key, node); another key draws afresh.
  EXPECT_EQ(respond(key, 17, 0, k, z), respond(key, 17, 0, k, z));
  const Secret other = derive_secret(Secret{}, 10, "testlbls");
  std::int64_t same = 0;
  for (std::int64_t node = 0; node < 1000; ++node) same += respond(key, node, 0, k, z) == respond(other, node, 0, k, z);
  EXPECT_LT(same, 700);
}

TEST(DparLabels, TheStoredFormRoundTripsAndAMalformedOneIsRefused) {
  ReleasedLabels r;
  r.categories = 3;
  r.keep_probability = rr_keep_probability(3, 0.5);
  r.nodes = {1, 4, 9};
  r.labels = {0, 2, 1};
  const ReleasedLabels back = parse_labels(serialise_labels(r), "x");
  EXPECT_EQ(back.nodes, r.nodes);
  EXPECT_EQ(back.labels, r.labels);
  EXPECT_EQ(back.keep_probability, r.keep_probability);
  EXPECT_EQ(back.categories, 3);
  r.labels[1] = 3;
  EXPECT_THROW(parse_labels(serialise_labels(r), "x"), DataError);
  r.labels[1] = 2;
  r.nodes = {4, 1, 9};
  EXPECT_THROW(parse_labels(serialise_labels(r), "x"), DataError);
  EXPECT_THROW(parse_labels("{\"categories\": 3}", "x"), DataError);
}

TEST(DparLabels, IsReleasedOnlyWhenItsShareReachesTheMinimum) {
  Config c;
  c.privacy.target_epsilon = 8;
  c.dpar.label_min_epsilon = 3;
  c.dpar.label_fraction = 0;
  EXPECT_FALSE(label_release_on(c));
  c.dpar.label_fraction = 0.5;
  EXPECT_TRUE(label_release_on(c));   // 4 >= 3
  c.privacy.target_epsilon = 4;
  EXPECT_FALSE(label_release_on(c));  // 2 < 3: the whole budget to DP-SGD
}

}  // namespace
}  // namespace dpgnn::train::methods
