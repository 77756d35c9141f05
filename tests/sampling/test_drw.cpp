// DRW, DRW-R and DRW-D (Ayle et al. 2022, Appendix B): the invariants the privacy
// analysis needs, on synthetic graphs chosen to hit every branch (dead ends, isolated
// roots, no training nodes), plus the uniformity of the walk's choices.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "dpgnn/sampling/sampler.h"
#include "dpgnn/sampling/verify.h"
#include "dpgnn/util/error.h"
#include "test_graphs.h"

namespace dpgnn::sampling {
namespace {

using testing::TestGraph;

std::vector<TestGraph> all_graphs() {
  std::vector<TestGraph> v;
  v.push_back(testing::random_graph(300, 0.02, 7));
  v.push_back(testing::random_graph(200, 0.2, 8));
  v.push_back(testing::star_graph(40));
  v.push_back(testing::path_graph(50));
  v.push_back(testing::clique_graph(30));
  v.push_back(testing::disconnected_graph());
  v.push_back(testing::hub_graph(120, 9));
  v.push_back(testing::no_training_nodes_graph());
  return v;
}

SubgraphSet drw(const TestGraph& t, std::int64_t L, std::int64_t R, std::int64_t W, SamplerKey key,
                EdgeMode edges = EdgeMode::walk) {
  DrwOptions o;
  o.walk_length = L;
  o.restarts = R;
  o.walkers = W;
  o.edges = edges;
  return sample_drw(t.g, t.train, o, key);
}

TEST(DrwSampler, EveryTrainingNodeIsInExactlyOneSubgraphAndSizesAreBounded) {
  for (const auto& t : all_graphs()) {
    for (std::int64_t L : {1, 3, 8}) {
      for (std::int64_t R : {1, 3}) {
        for (std::int64_t W : {1, 4, 16}) {
          SCOPED_TRACE(t.name + " L=" + std::to_string(L) + " R=" + std::to_string(R) +
                       " W=" + std::to_string(W));
          const SubgraphSet s = drw(t, L, R, W, {11, 0, 0});
          testing::expect_valid_disjoint(t, s, 1 + R * L);
          SamplerOptions so;
          so.kind = R == 1 ? SamplerKind::drw : SamplerKind::drw_r;
          so.walk_length = L;
          so.restarts = R;
          EXPECT_TRUE(check_subgraphs(t.g, t.train, s, checks_for(so)).ok());
        }
      }
    }
  }
}

TEST(DrwSampler, WalkEdgesFollowTheWalkAndInducedEdgesAreAllEdgesAmongTheNodes) {
  const TestGraph t = testing::random_graph(200, 0.1, 3);
  const SubgraphSet walk = drw(t, 5, 1, 1, {5, 0, 0}, EdgeMode::walk);
  for (std::int64_t i = 0; i < walk.size(); ++i) {
    const std::int64_t b = walk.node_ptr[i], k = walk.node_ptr[i + 1] - b;
    ASSERT_EQ(walk.edge_ptr[i + 1] - walk.edge_ptr[i], k - 1);
    for (std::int64_t j = 0; j + 1 < k; ++j)  // a DRW subgraph is the walk itself
      EXPECT_EQ(walk.edges[walk.edge_ptr[i] + j], std::make_pair(walk.nodes[b + j], walk.nodes[b + j + 1]));
  }
  const SubgraphSet induced = drw(t, 5, 1, 1, {5, 0, 0}, EdgeMode::induced);
  ASSERT_EQ(induced.nodes, walk.nodes);  // the edge mode does not change the walks
  for (std::int64_t i = 0; i < induced.size(); ++i) {
    std::set<std::pair<std::int64_t, std::int64_t>> expected;
    for (std::int64_t a = induced.node_ptr[i]; a < induced.node_ptr[i + 1]; ++a)
      for (std::int64_t c = induced.node_ptr[i]; c < induced.node_ptr[i + 1]; ++c) {
        const std::int64_t u = induced.nodes[a], v = induced.nodes[c];
        if (u < v && t.edges.count({u, v})) expected.insert({u, v});
      }
    std::set<std::pair<std::int64_t, std::int64_t>> got;
    for (std::int64_t k = induced.edge_ptr[i]; k < induced.edge_ptr[i + 1]; ++k) {
      auto [u, v] = induced.edges[k];
      got.insert({std::min(u, v), std::max(u, v)});
    }
    EXPECT_EQ(got, expected) << "subgraph " << i;
  }
}

TEST(DrwSampler, RestartWalksAllStartAtTheRoot) {
  // DRW-R walk edges form a tree hanging from the root: every edge's first node was
  // already in the subgraph when the edge was walked, its second node is new.
  const TestGraph t = testing::random_graph(300, 0.03, 4);
  const SubgraphSet s = drw(t, 3, 4, 1, {2, 0, 0});
  for (std::int64_t i = 0; i < s.size(); ++i) {
    std::set<std::int64_t> reached = {s.roots[i]};
    std::int64_t next = s.node_ptr[i] + 1;
    for (std::int64_t k = s.edge_ptr[i]; k < s.edge_ptr[i + 1]; ++k) {
      auto [a, b] = s.edges[k];
      EXPECT_TRUE(reached.count(a));
      EXPECT_EQ(b, s.nodes[next++]);
      reached.insert(b);
    }
    EXPECT_EQ(next, s.node_ptr[i + 1]);
  }
}

TEST(DrwSampler, StarAbsorbsTheCentreInTheFirstWalkAndLeavesTheRestAlone) {
  // With every node training, the first walk reaches the centre (at once, or after one
  // step from a leaf); after that every remaining leaf is a dead end, a subgraph of one.
  const TestGraph t = testing::star_graph(30);
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const SubgraphSet s = drw(t, 4, 1, 1, {seed, 0, 0});
    const std::int64_t first = s.subgraph_size(0);
    EXPECT_EQ(first, s.roots[0] == 0 ? 2 : 3);
    EXPECT_EQ(s.size(), 31 - first + 1);
    for (std::int64_t i = 1; i < s.size(); ++i) EXPECT_EQ(s.subgraph_size(i), 1);
  }
}

TEST(DrwSampler, APathIsCutIntoConsecutiveStretches) {
  const TestGraph t = testing::path_graph(40);
  const SubgraphSet s = drw(t, 3, 1, 1, {1, 0, 0});
  for (std::int64_t i = 0; i < s.size(); ++i)
    for (std::int64_t k = s.node_ptr[i]; k + 1 < s.node_ptr[i + 1]; ++k)
      EXPECT_EQ(std::abs(s.nodes[k] - s.nodes[k + 1]), 1);
}

TEST(DrwSampler, NoTrainingNodesGiveNoSubgraphs) {
  const TestGraph t = testing::no_training_nodes_graph();
  const SubgraphSet s = drw(t, 3, 2, 4, {1, 0, 0});
  EXPECT_EQ(s.size(), 0);
  EXPECT_TRUE(s.nodes.empty());
  EXPECT_EQ(s.node_ptr, std::vector<std::int64_t>{0});
}

TEST(DrwSampler, IsDeterministicForAKeyAndChangesWithSeedPartAndEpoch) {
  const TestGraph t = testing::random_graph(300, 0.05, 5);
  for (std::int64_t W : {1, 16}) {
    const SubgraphSet a = drw(t, 4, 2, W, {42, 3, 0});
    const SubgraphSet b = drw(t, 4, 2, W, {42, 3, 0});
    EXPECT_EQ(a.roots, b.roots);
    EXPECT_EQ(a.nodes, b.nodes);
    EXPECT_EQ(a.edges, b.edges);
    EXPECT_NE(a.nodes, drw(t, 4, 2, W, {43, 3, 0}).nodes);  // another seed
    EXPECT_NE(a.nodes, drw(t, 4, 2, W, {42, 4, 0}).nodes);  // another part
    EXPECT_NE(a.nodes, drw(t, 4, 2, W, {42, 3, 1}).nodes);  // DRW-D: the next epoch
  }
}

TEST(DrwSampler, OneWalkerVisitsACliqueInAUniformlyRandomOrder) {
  // On a 5-clique with L = 4 and every node training, the first walk of the paper's
  // sequential algorithm is a uniformly random permutation: the root is uniform and each
  // step is uniform among the unassigned nodes. 120 permutations, 36,000 runs (300
  // expected each); Pearson's chi-square with 119 degrees of freedom, rejected at
  // p < 1e-4 (critical value 185.09, scipy.stats.chi2.isf(1e-4, 119)). This covers the
  // rejection draws; the broom test below also reaches the collecting fallback.
  const TestGraph t = testing::clique_graph(5);
  std::map<std::vector<std::int64_t>, std::int64_t> counts;
  const std::int64_t runs = 36000;
  for (std::int64_t r = 0; r < runs; ++r) {
    const SubgraphSet s = drw(t, 4, 1, 1, {static_cast<std::uint64_t>(r), 0, 0});
    ASSERT_EQ(s.size(), 1);
    counts[s.nodes]++;
  }
  ASSERT_EQ(counts.size(), 120u);
  const double expected = static_cast<double>(runs) / 120.0;
  double chi2 = 0;
  for (const auto& [perm, c] : counts) chi2 += (c - expected) * (c - expected) / expected;
  EXPECT_LT(chi2, 185.09);
}

TEST(DrwSampler, AStepIsUniformOverTheNeighbours) {
  // Node 0 (the only training node) has neighbours 1..6 of different degrees (1..3 are
  // also adjacent to each other). With L = 1 the single walk takes one step: uniform
  // over 1..6 whatever their degrees.
  // 6 outcomes, 30,000 runs; chi-square with 5 degrees of freedom, p < 1e-4: 25.74.
  std::vector<std::pair<std::int64_t, std::int64_t>> e = {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5},
                                                          {0, 6}, {1, 2}, {2, 3}};
  std::vector<std::uint8_t> train = {1, 0, 0, 0, 0, 0, 0};
  const TestGraph t = testing::make_graph("fan", 7, e, train);
  std::vector<double> counts(7, 0);
  const int runs = 30000;
  for (int r = 0; r < runs; ++r) counts[drw(t, 1, 1, 1, {static_cast<std::uint64_t>(r), 0, 0}).nodes[1]]++;
  double chi2 = 0;
  for (int v = 1; v <= 6; ++v) chi2 += (counts[v] - runs / 6.0) * (counts[v] - runs / 6.0) / (runs / 6.0);
  EXPECT_LT(chi2, 25.74);
}

TEST(DrwSampler, RestartsFromAHighDegreeRootTakeTheLeavesInAUniformOrder) {
  // Root 0 (the only training node) with 130 leaves, DRW-R with L = 1 and R = 130: walk r
  // takes one of the leaves still unassigned, so the leaves come out in a uniformly random
  // order. Late walks see rows that are mostly assigned: with one leaf left, 64 draws
  // all miss it with probability (129/130)^64 = 0.61, so the collecting fallback is taken
  // often. Position of leaf 1 over 13,000 runs:
  // uniform over 130 positions (100 expected each); chi-square with 129 dof, p < 1e-4:
  // 197.44 (scipy.stats.chi2.isf(1e-4, 129)).
  std::vector<std::pair<std::int64_t, std::int64_t>> e;
  for (std::int64_t v = 1; v <= 130; ++v) e.push_back({0, v});
  std::vector<std::uint8_t> train(131, 0);
  train[0] = 1;
  const TestGraph t = testing::make_graph("broom", 131, e, train);
  std::vector<double> position(130, 0);
  const int runs = 13000;
  for (int r = 0; r < runs; ++r) {
    const SubgraphSet s = drw(t, 1, 130, 1, {static_cast<std::uint64_t>(r), 0, 0});
    ASSERT_EQ(s.subgraph_size(0), 131);
    for (std::int64_t k = 1; k <= 130; ++k)
      if (s.nodes[k] == 1) position[k - 1]++;
  }
  double chi2 = 0;
  for (double c : position) chi2 += (c - 100.0) * (c - 100.0) / 100.0;
  EXPECT_LT(chi2, 197.44);
}

TEST(DrwSampler, RejectsBadParameters) {
  const TestGraph t = testing::path_graph(5);
  EXPECT_THROW(drw(t, 0, 1, 1, {}), UsageError);
  EXPECT_THROW(drw(t, 2, 0, 1, {}), UsageError);
  EXPECT_THROW(drw(t, 2, 1, 0, {}), UsageError);
  DrwOptions o;
  EXPECT_THROW(sample_drw(t.g, std::vector<std::uint8_t>(3, 1), o, {}), UsageError);
}

TEST(DrwSampler, MaxSizeBoundsFollowThePaper) {
  SamplerOptions o;
  o.walk_length = 6;
  o.restarts = 3;
  o.kind = SamplerKind::drw;
  EXPECT_EQ(max_subgraph_size_bound(o), 7);  // L + 1
  o.kind = SamplerKind::drw_r;
  EXPECT_EQ(max_subgraph_size_bound(o), 19);  // 1 + R * L
}

}  // namespace
}  // namespace dpgnn::sampling
