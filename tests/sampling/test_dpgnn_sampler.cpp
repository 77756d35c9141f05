// DP-GNN's SAMPLE-SUBGRAPHS (Daigavane et al., Algorithms 1-3): the occurrence bound of
// Lemma 1 on adversarial graphs, and the cases where the output is known exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "dpgnn/sampling/sampler.h"
#include "dpgnn/sampling/verify.h"
#include "dpgnn/util/error.h"
#include "test_graphs.h"

namespace dpgnn::sampling {
namespace {

using testing::TestGraph;

SubgraphSet dpgnn(const TestGraph& t, std::int64_t k, std::int64_t r, std::uint64_t seed,
                  EdgeMode edges = EdgeMode::walk) {
  DpgnnOptions o;
  o.max_degree = k;
  o.layers = r;
  o.edges = edges;
  return sample_dpgnn(t.g, t.train, o, {seed, 0, 0});
}

TEST(DpgnnSampler, OccurrenceBoundIsTheGeometricSum) {
  // N(K, r) = sum_{i=0}^{r} K^i, Lemma 1, evaluated by hand.
  EXPECT_EQ(dpgnn_occurrence_bound(1, 0), 1);
  EXPECT_EQ(dpgnn_occurrence_bound(1, 2), 3);
  EXPECT_EQ(dpgnn_occurrence_bound(2, 1), 3);
  EXPECT_EQ(dpgnn_occurrence_bound(2, 2), 7);
  EXPECT_EQ(dpgnn_occurrence_bound(3, 1), 4);
  EXPECT_EQ(dpgnn_occurrence_bound(3, 2), 13);
  EXPECT_EQ(dpgnn_occurrence_bound(10, 3), 1111);
  EXPECT_THROW(dpgnn_occurrence_bound(0, 2), UsageError);
  EXPECT_THROW(dpgnn_occurrence_bound(2, -1), UsageError);
  EXPECT_THROW(dpgnn_occurrence_bound(1000000, 5), UsageError);  // 10^30 overflows
}

TEST(DpgnnSampler, NoNodeOccursMoreThanNKrTimesOnAdversarialGraphs) {
  std::vector<TestGraph> graphs;
  graphs.push_back(testing::star_graph(60));
  graphs.push_back(testing::clique_graph(40));
  graphs.push_back(testing::hub_graph(150, 1));
  graphs.push_back(testing::random_graph(200, 0.1, 2));
  for (const auto& t : graphs) {
    for (std::int64_t k : {1, 2, 3}) {
      for (std::int64_t r : {1, 2}) {
        const std::int64_t bound = (r == 1) ? 1 + k : 1 + k + k * k;  // Lemma 1 by hand
        for (std::uint64_t seed = 0; seed < 15; ++seed) {
          SCOPED_TRACE(t.name + " K=" + std::to_string(k) + " r=" + std::to_string(r) +
                       " seed=" + std::to_string(seed));
          const SubgraphSet s = dpgnn(t, k, r, seed);
          const auto occ = testing::occurrences(s, t.g.num_nodes());
          EXPECT_LE(*std::max_element(occ.begin(), occ.end()), bound);
          // One subgraph per training node, rooted at it, in node order.
          std::vector<std::int64_t> train_nodes;
          for (std::int64_t v = 0; v < t.g.num_nodes(); ++v)
            if (t.train[v]) train_nodes.push_back(v);
          EXPECT_EQ(s.roots, train_nodes);
          for (std::int64_t i = 0; i < s.size(); ++i) {
            EXPECT_EQ(s.nodes[s.node_ptr[i]], s.roots[i]);
            for (std::int64_t e = s.edge_ptr[i]; e < s.edge_ptr[i + 1]; ++e)
              EXPECT_TRUE(t.edges.count(s.edges[e]));
          }
          SamplerOptions so;
          so.kind = SamplerKind::dpgnn;
          so.max_degree = k;
          so.layers = r;
          EXPECT_TRUE(check_subgraphs(t.g, t.train, s, checks_for(so)).ok());
        }
      }
    }
  }
}

TEST(DpgnnSampler, AStarCentreWithManyTrainingNeighboursIsDropped) {
  // The centre of a 60-leaf star has |RE| = 60 training in-neighbours; with K = 1 each is
  // kept with p = 1/120 and the centre is dropped whenever two or more survive. Either
  // way the centre may be in at most K = 1 leaf's first hop, and so in at most 1 + 1
  // subgraphs for r = 1 (its own and one leaf's).
  const TestGraph t = testing::star_graph(60);
  for (std::uint64_t seed = 0; seed < 50; ++seed) {
    const auto occ = testing::occurrences(dpgnn(t, 1, 1, seed), 61);
    EXPECT_LE(occ[0], 2);
  }
}

TEST(DpgnnSampler, WithKAtLeastTwiceTheDegreeSubgraphsAreFullRHopBalls) {
  // On a path every |RE_v| <= 2, so K = 4 gives p = min(1, 4 / (2 |RE_v|)) = 1: every
  // edge is kept and none is dropped (<= K survive). S_v is then the ball of radius r.
  const TestGraph t = testing::path_graph(12);
  for (std::int64_t r : {0, 1, 2, 3}) {
    const SubgraphSet s = dpgnn(t, 4, r, 1);
    ASSERT_EQ(s.size(), 12);
    for (std::int64_t v = 0; v < 12; ++v) {
      std::set<std::int64_t> got(s.nodes.begin() + s.node_ptr[v], s.nodes.begin() + s.node_ptr[v + 1]);
      std::set<std::int64_t> ball;
      for (std::int64_t u = std::max<std::int64_t>(0, v - r); u <= std::min<std::int64_t>(11, v + r); ++u)
        ball.insert(u);
      EXPECT_EQ(got, ball) << "v=" << v << " r=" << r;
      // The walk edges are the path edges inside the ball.
      EXPECT_EQ(s.edge_ptr[v + 1] - s.edge_ptr[v], static_cast<std::int64_t>(ball.size()) - 1);
    }
  }
}

TEST(DpgnnSampler, NeighbourhoodsGrowOnlyThroughTrainingNodesAsWritten) {
  // Algorithm 1 builds E_v from in-edges whose source is a training node, so a node that
  // is not a training node has an empty edge list: on the path 0-1-2-3 with only node 0
  // training, S_0 = {0, 1} for every r >= 1.
  TestGraph t = testing::path_graph(4);
  t.train = {1, 0, 0, 0};
  for (std::int64_t r : {1, 2, 3}) {
    const SubgraphSet s = dpgnn(t, 4, r, 3);
    ASSERT_EQ(s.size(), 1);
    EXPECT_EQ(s.nodes, (std::vector<std::int64_t>{0, 1}));
  }
}

TEST(DpgnnSampler, IsDeterministicForAKey) {
  const TestGraph t = testing::hub_graph(100, 4);
  const SubgraphSet a = dpgnn(t, 2, 2, 9), b = dpgnn(t, 2, 2, 9), c = dpgnn(t, 2, 2, 10);
  EXPECT_EQ(a.nodes, b.nodes);
  EXPECT_EQ(a.edges, b.edges);
  EXPECT_NE(a.nodes, c.nodes);
}

TEST(DpgnnSampler, InducedEdgesKeepTheNodesAndTheBound) {
  const TestGraph t = testing::clique_graph(25);
  const SubgraphSet walk = dpgnn(t, 3, 2, 4, EdgeMode::walk);
  const SubgraphSet induced = dpgnn(t, 3, 2, 4, EdgeMode::induced);
  EXPECT_EQ(walk.nodes, induced.nodes);
  for (std::int64_t i = 0; i < induced.size(); ++i) {
    const std::int64_t k = induced.subgraph_size(i);  // a clique: all pairs
    EXPECT_EQ(induced.edge_ptr[i + 1] - induced.edge_ptr[i], k * (k - 1) / 2);
  }
}

}  // namespace
}  // namespace dpgnn::sampling
