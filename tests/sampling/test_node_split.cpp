// The single-node sampler (MLP / DP-MLP) and random disjoint graph splits (Igamberdiev &
// Habernal, Section 4.4).
#include <gtest/gtest.h>

#include <set>

#include "dpgnn/sampling/sampler.h"
#include "dpgnn/util/error.h"
#include "test_graphs.h"

namespace dpgnn::sampling {
namespace {

TEST(NodeSampler, EveryTrainingNodeIsItsOwnSubgraph) {
  const auto t = testing::random_graph(100, 0.05, 1);
  const SubgraphSet s = sample_nodes(t.train);
  testing::expect_valid_disjoint(t, s, 1);
  EXPECT_EQ(s.size(), 34);  // nodes 0, 3, ..., 99
  EXPECT_TRUE(s.edges.empty());
  EXPECT_FALSE(s.loss_on_all_nodes);
}

TEST(SplitSampler, SplitsPartitionTheTrainingNodesIntoNearlyEqualGroups) {
  auto t = testing::random_graph(100, 0.1, 2);  // 34 training nodes
  SplitOptions o;
  o.splits = 5;
  const SubgraphSet s = sample_splits(t.g, t.train, o, {1, 0, 0});
  ASSERT_EQ(s.size(), 5);
  std::multiset<std::int64_t> sizes;
  for (std::int64_t i = 0; i < 5; ++i) sizes.insert(s.subgraph_size(i));
  EXPECT_EQ(sizes, (std::multiset<std::int64_t>{6, 7, 7, 7, 7}));  // 34 = 7+7+7+7+6
  testing::expect_valid_disjoint(t, s, 7);
  EXPECT_TRUE(s.loss_on_all_nodes);
  for (std::int64_t v : s.nodes) EXPECT_EQ(t.train[v], 1);  // only training nodes
}

TEST(SplitSampler, SplitEdgesAreExactlyTheEdgesInsideTheSplit) {
  auto t = testing::random_graph(60, 0.3, 3);
  SplitOptions o;
  o.splits = 3;
  const SubgraphSet s = sample_splits(t.g, t.train, o, {4, 0, 0});
  for (std::int64_t i = 0; i < s.size(); ++i) {
    std::set<std::pair<std::int64_t, std::int64_t>> expected, got;
    for (std::int64_t a = s.node_ptr[i]; a < s.node_ptr[i + 1]; ++a)
      for (std::int64_t b = s.node_ptr[i]; b < s.node_ptr[i + 1]; ++b)
        if (s.nodes[a] < s.nodes[b] && t.edges.count({s.nodes[a], s.nodes[b]}))
          expected.insert({s.nodes[a], s.nodes[b]});
    for (std::int64_t e = s.edge_ptr[i]; e < s.edge_ptr[i + 1]; ++e)
      got.insert({std::min(s.edges[e].first, s.edges[e].second), std::max(s.edges[e].first, s.edges[e].second)});
    EXPECT_EQ(got, expected);
  }
}

TEST(SplitSampler, IsSeededAndCapsTheNumberOfSplitsAtTheTrainingNodes) {
  auto t = testing::random_graph(30, 0.2, 5);  // 10 training nodes
  SplitOptions o;
  o.splits = 4;
  EXPECT_EQ(sample_splits(t.g, t.train, o, {1, 0, 0}).nodes, sample_splits(t.g, t.train, o, {1, 0, 0}).nodes);
  EXPECT_NE(sample_splits(t.g, t.train, o, {1, 0, 0}).nodes, sample_splits(t.g, t.train, o, {2, 0, 0}).nodes);
  o.splits = 50;
  const SubgraphSet s = sample_splits(t.g, t.train, o, {1, 0, 0});
  EXPECT_EQ(s.size(), 10);
  o.splits = 0;
  EXPECT_THROW(sample_splits(t.g, t.train, o, {1, 0, 0}), UsageError);
}

TEST(SplitsPerPart, SharesTheTotalByLargestRemainderWithAtLeastOnePerNonEmptyPart) {
  // Worked by hand: 10 x {50, 30, 20} / 100 = {5, 3, 2} exactly.
  EXPECT_EQ(splits_per_part(10, {50, 30, 20}), (std::vector<std::int64_t>{5, 3, 2}));
  // 7 x {1, 1, 1} / 3 = 2.33 each: floors {2, 2, 2}, one left for the first of the equal remainders.
  EXPECT_EQ(splits_per_part(7, {1, 1, 1}), (std::vector<std::int64_t>{3, 2, 2}));
  // 4 x {97, 2, 1} / 100 = {3.88, 0.08, 0.04}: {3, 0, 0} + the largest remainder -> {4, 0, 0},
  // then every part with training nodes gets at least one: {4, 1, 1}.
  EXPECT_EQ(splits_per_part(4, {97, 2, 1}), (std::vector<std::int64_t>{4, 1, 1}));
  // A part without training nodes gets none; no training nodes at all: none anywhere.
  EXPECT_EQ(splits_per_part(6, {3, 0, 3}), (std::vector<std::int64_t>{3, 0, 3}));
  EXPECT_EQ(splits_per_part(6, {0, 0}), (std::vector<std::int64_t>{0, 0}));
}

}  // namespace
}  // namespace dpgnn::sampling
