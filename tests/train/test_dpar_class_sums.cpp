// DPAR's class sums (methods/dpar_class_sums.h): when dpar.learner auto chooses them; the partial
// sums take each training node's non-negative feature part clipped to norm 1 into its class's
// row, and replacing one node moves them by at most sqrt(2) (the sensitivity the noise is
// calibrated to; reached when the two nodes' classes differ); the release's noise has the
// standard deviation z sqrt(2) of that sensitivity (a chi-square bound failing with probability
// < 1e-6), is a pure function of the key, and sums over ranks to what one rank releases up to the
// per-rank rounding; the stored form round-trips and a malformed one is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "../../src/train/methods/dpar_class_sums.h"
#include "dpgnn/dist/local_group.h"
#include "dpgnn/partition/shard.h"
#include "dpgnn/util/error.h"

namespace dpgnn::train::methods {
namespace {

// A shard of `n` nodes (every one a training node unless `train` says otherwise).
partition::Shard make_shard(std::int64_t classes, std::int64_t features, std::vector<float> x,
                            std::vector<std::int64_t> labels, std::vector<std::uint8_t> train = {}) {
  partition::Shard s;
  s.file = "test.h5";
  s.meta.num_classes = classes;
  s.meta.num_features = features;
  const auto n = static_cast<std::int64_t>(labels.size());
  s.begin = 0;
  s.end = n;
  s.features = std::move(x);
  s.labels = std::move(labels);
  s.train_mask = train.empty() ? std::vector<std::uint8_t>(static_cast<std::size_t>(n), 1) : std::move(train);
  for (std::int64_t i = 0; i < n; ++i) s.new_to_old.push_back(i);
  return s;
}

TEST(DparClassSums, AutoChoosesThemForSmallBudgetsOnSmallSingleLabelMulticlassDataOnly) {
  Config c;
  c.method = "dpar";
  c.dpar.appr_nodes = 0;
  c.model.layers = 1;
  c.model.bias = false;
  c.privacy.target_epsilon = 1;
  graph::DatasetMeta meta;
  meta.num_classes = 7;
  c.dpar.learner = "sgd";
  EXPECT_FALSE(class_sums_chosen(c, meta, 100));
  c.dpar.learner = "class_sums";
  EXPECT_TRUE(class_sums_chosen(c, meta, 1000000)) << "asked for: always";
  c.dpar.learner = "auto";
  EXPECT_TRUE(class_sums_chosen(c, meta, 2999)) << "2999 x 1 < 3000";
  EXPECT_FALSE(class_sums_chosen(c, meta, 3000));
  c.privacy.target_epsilon = 2;
  EXPECT_FALSE(class_sums_chosen(c, meta, 1500)) << "1500 x 2 = 3000";
  EXPECT_TRUE(class_sums_chosen(c, meta, 1499));
  meta.num_classes = 2;
  EXPECT_FALSE(class_sums_chosen(c, meta, 100)) << "two classes: DP-SGD";
  meta.num_classes = 3;
  meta.multilabel = true;
  EXPECT_FALSE(class_sums_chosen(c, meta, 100)) << "multi-label";
  meta.multilabel = false;
  EXPECT_TRUE(class_sums_chosen(c, meta, 100));
  c.dpar.appr_nodes = 10;
  EXPECT_FALSE(class_sums_chosen(c, meta, 100)) << "with DP-APPR";
  c.dpar.appr_nodes = 0;
  c.dpar.label_fraction = 0.5;
  c.dpar.label_min_epsilon = 0.5;
  EXPECT_FALSE(class_sums_chosen(c, meta, 100)) << "with the label release";
  c.dpar.label_fraction = 0;
  c.model.bias = true;
  EXPECT_FALSE(class_sums_chosen(c, meta, 100)) << "a bias: not the linear model the sums are";
}

TEST(DparClassSums, SumTheClippedNonNegativePartsOfTheTrainingNodesIntoTheirClassRows) {
  // 3 nodes, 2 classes, 3 features: node 0 (class 1) has a negative entry, node 1 (class 0) a
  // norm above 1, node 2 is not a training node.
  const auto s = make_shard(2, 3, {0.6f, -0.5f, 0.8f, 3.0f, 4.0f, 0.0f, 1.0f, 1.0f, 1.0f}, {1, 0, 0}, {1, 1, 0});
  const std::vector<double> sums = local_class_sums(s);
  ASSERT_EQ(sums.size(), 6u);
  EXPECT_NEAR(sums[0], 0.6, 1e-7);  // class 0 <- node 1 / 5
  EXPECT_NEAR(sums[1], 0.8, 1e-7);
  EXPECT_EQ(sums[2], 0.0) << "node 2 is not a training node";
  EXPECT_NEAR(sums[3], 0.6, 1e-7);  // class 1 <- node 0's positive part, norm 1 already
  EXPECT_EQ(sums[4], 0.0) << "the negative entry is not summed";
  EXPECT_NEAR(sums[5], 0.8, 1e-7);
  auto bad = make_shard(2, 1, {1.0f}, {2});
  EXPECT_THROW(local_class_sums(bad), DataError);
}

TEST(DparClassSums, ReplacingOneNodeMovesTheSumsByAtMostSqrt2) {
  std::mt19937_64 rng(7);
  std::normal_distribution<float> g(0.0f, 1.0f);
  const std::int64_t C = 3, F = 5, n = 20;
  double largest = 0.0;
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<float> x(static_cast<std::size_t>(n * F));
    std::vector<std::int64_t> y(static_cast<std::size_t>(n));
    for (auto& v : x) v = g(rng) * (trial % 2 ? 3.0f : 0.3f);  // signed, some rows above norm 1
    for (auto& v : y) v = static_cast<std::int64_t>(rng() % C);
    const auto a = local_class_sums(make_shard(C, F, x, y));
    // Replace node 4 by arbitrary other data.
    for (std::int64_t f = 0; f < F; ++f) x[4 * F + f] = g(rng) * 2.0f;
    y[4] = static_cast<std::int64_t>(rng() % C);
    const auto b = local_class_sums(make_shard(C, F, x, y));
    double d2 = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) d2 += (a[i] - b[i]) * (a[i] - b[i]);
    largest = std::max(largest, std::sqrt(d2));
  }
  EXPECT_LE(largest, std::sqrt(2.0) + 1e-9);
  EXPECT_GT(largest, 1.3) << "the bound is reached nearly (two full-norm rows in different classes)";
}

TEST(DparClassSums, TheNoiseHasTheStandardDeviationOfSensitivitySqrt2AndIsAFunctionOfTheKey) {
  const std::int64_t C = 4, F = 2000, n = 50;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(0.0f, 0.1f);
  std::vector<float> x(static_cast<std::size_t>(n * F));
  std::vector<std::int64_t> y(static_cast<std::size_t>(n));
  for (auto& v : x) v = u(rng);
  for (auto& v : y) v = static_cast<std::int64_t>(rng() % C);
  const auto shard = make_shard(C, F, x, y);
  const std::vector<double> exact = local_class_sums(shard);
  const Secret key = derive_secret(Secret{}, 1, "testclss");
  const double z = 0.75;
  auto release = [&](const Secret& k, int ranks) {
    // Every rank holds the whole shard's rows [r n / ranks, (r + 1) n / ranks).
    dist::LocalGroup group(ranks);
    std::vector<ClassSums> out(static_cast<std::size_t>(ranks));
    group.run([&](dist::Communicator& comm) {
      const std::int64_t lo = comm.rank() * n / ranks, hi = (comm.rank() + 1) * n / ranks;
      const auto part = make_shard(C, F, std::vector<float>(x.begin() + lo * F, x.begin() + hi * F),
                                   std::vector<std::int64_t>(y.begin() + lo, y.begin() + hi));
      out[static_cast<std::size_t>(comm.rank())] = release_class_sums(part, comm, k, z, n);
    });
    for (const auto& o : out) EXPECT_EQ(o.values, out[0].values) << "every rank holds the same release";
    return out[0];
  };
  const ClassSums r = release(key, 1);
  ASSERT_EQ(static_cast<std::int64_t>(r.values.size()), C * F);
  double ss = 0.0;
  for (std::size_t i = 0; i < exact.size(); ++i) {
    const double e = static_cast<double>(r.values[i]) * r.gamma - exact[i];
    ss += e * e;
  }
  // The sum of 8000 squared N(0, s^2) / s^2 is chi-square(8000), of relative sd sqrt(2 / 8000) = 1.6%:
  // within 5 sd (+-8%) with probability > 1 - 1e-6; a sensitivity of 2 or 1 would give 2 or 0.5.
  const double sigma = z * std::sqrt(2.0), dof = static_cast<double>(C * F);
  EXPECT_NEAR(ss / (sigma * sigma) / dof, 1.0, 0.08);
  EXPECT_EQ(release(key, 1).values, r.values) << "the same key: the same bytes (a crash recomputes them)";
  EXPECT_NE(release(derive_secret(Secret{}, 2, "testclss"), 1).values, r.values);
  // Two ranks round their partial sums to the grid apart: at most one unit per coordinate more.
  const ClassSums two = release(key, 2);
  for (std::size_t i = 0; i < r.values.size(); ++i) EXPECT_LE(std::abs(two.values[i] - r.values[i]), 1);
  // The weights: each released class sum less its component along the overall sum's direction,
  // over U; so every class's weights are orthogonal to that direction.
  const std::vector<float> w = class_sum_weights(r);
  ASSERT_EQ(static_cast<std::int64_t>(w.size()), C * F);
  std::vector<double> m(static_cast<std::size_t>(F), 0.0);
  for (std::int64_t c = 0; c < C; ++c)
    for (std::int64_t f = 0; f < F; ++f) m[f] += static_cast<double>(r.values[c * F + f]) * r.gamma;
  double mm = 0.0;
  for (double v : m) mm += v * v;
  for (std::int64_t c = 0; c < C; ++c) {
    double along = 0.0, wm = 0.0;
    for (std::int64_t f = 0; f < F; ++f) {
      along += static_cast<double>(r.values[c * F + f]) * r.gamma * m[f] / mm;
      wm += static_cast<double>(w[c * F + f]) * m[f];
    }
    EXPECT_NEAR(wm / std::sqrt(mm), 0.0, 1e-4) << "class " << c << " keeps no part along the overall sum";
    const std::int64_t f = 7;
    const double expect = (static_cast<double>(r.values[c * F + f]) * r.gamma - along * m[f]) / n;
    EXPECT_NEAR(w[c * F + f], expect, 1e-5 * std::abs(expect) + 1e-7);
  }
}

TEST(DparClassSums, TheStoredFormRoundTripsAndAMalformedOneIsRefused) {
  ClassSums r;
  r.classes = 2;
  r.features = 3;
  r.training_nodes = 10;
  r.gamma = 0.1 / 3;
  r.values = {1, -2, 3, 4, 5, -6};
  const ClassSums back = parse_class_sums(serialise_class_sums(r), "x");
  EXPECT_EQ(back.values, r.values);
  EXPECT_EQ(back.gamma, r.gamma);
  EXPECT_EQ(back.training_nodes, 10);
  r.values.pop_back();
  EXPECT_THROW(parse_class_sums(serialise_class_sums(r), "x"), DataError);
  r.values.push_back(0);
  r.gamma = 0;
  EXPECT_THROW(parse_class_sums(serialise_class_sums(r), "x"), DataError);
  EXPECT_THROW(parse_class_sums("{\"classes\": 2}", "x"), DataError);
}

}  // namespace
}  // namespace dpgnn::train::methods
