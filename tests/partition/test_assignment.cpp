// Tests of the node -> part assignments (METIS, random), the METIS limits and the partition
// quality measures, on graphs whose answers are known by construction.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "dpgnn/graph/graph_builder.h"
#include "dpgnn/partition/assignment.h"
#include "dpgnn/util/error.h"
#include "partition_test_data.h"

namespace dpgnn::partition {
namespace {

graph::CsrGraph undirected(std::int64_t n, const std::vector<std::pair<int, int>>& edges) {
  std::vector<std::int64_t> s, d;
  for (auto [a, b] : edges) {
    s.push_back(a);
    d.push_back(b);
  }
  return graph::build_csr(n, s, d, graph::BuildOptions{}, nullptr, "test");
}

// Two 5-cliques {0..4} and {5..9} joined by the single edge 4-5.
graph::CsrGraph two_cliques() {
  std::vector<std::pair<int, int>> e;
  for (int base : {0, 5})
    for (int a = 0; a < 5; ++a)
      for (int b = a + 1; b < 5; ++b) e.push_back({base + a, base + b});
  e.push_back({4, 5});
  return undirected(10, e);
}

TEST(MetisLimits, NodeCountBeyondIdxTypeIsAUsageErrorNamingTheLimit) {
  try {
    check_metis_limits(kMetisIdxMax + 1, 0, "big.h5");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("big.h5"), std::string::npos) << m;
    EXPECT_NE(m.find("2147483648 nodes"), std::string::npos) << m;
    EXPECT_NE(m.find("2147483647"), std::string::npos) << m;
    EXPECT_NE(m.find("--method random"), std::string::npos) << m;
  }
}

TEST(MetisLimits, AdjacencyBeyondIdxTypeIsAUsageErrorAndTheLimitItselfIsAccepted) {
  EXPECT_NO_THROW(check_metis_limits(1000, kMetisIdxMax, "ok.h5"));
  EXPECT_NO_THROW(check_metis_limits(kMetisIdxMax, 0, "ok.h5"));
  // ogbn-papers100M-like: 111M nodes, 3.2B adjacency entries.
  try {
    check_metis_limits(111'059'956, 3'231'371'744, "papers.h5");
    FAIL() << "expected UsageError";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("3231371744"), std::string::npos) << m;
    EXPECT_NE(m.find("2147483647"), std::string::npos) << m;
  }
}

TEST(NumParts, MustLieBetweenOneAndTheNumberOfNodes) {
  EXPECT_THROW(check_num_parts(0, 10, "x"), UsageError);
  EXPECT_THROW(check_num_parts(11, 10, "x"), UsageError);
  EXPECT_NO_THROW(check_num_parts(10, 10, "x"));
  EXPECT_THROW(random_assignment(10, 11, 0), UsageError);
}

TEST(MethodName, ParsesMetisAndRandomAndRejectsOthers) {
  EXPECT_EQ(parse_method("metis"), Method::metis);
  EXPECT_EQ(parse_method("random"), Method::random);
  EXPECT_THROW(parse_method("hash"), UsageError);
}

TEST(RandomAssignment, PartSizesDifferByAtMostOne) {
  for (auto [n, p] : {std::pair<int, int>{1000, 8}, {1003, 4}, {7, 7}, {10, 3}}) {
    const auto part = random_assignment(n, p, 42);
    std::vector<std::int64_t> size(p, 0);
    for (PartId x : part) {
      ASSERT_GE(x, 0);
      ASSERT_LT(x, p);
      ++size[x];
    }
    EXPECT_EQ(*std::min_element(size.begin(), size.end()), n / p) << n << " nodes, " << p << " parts";
    EXPECT_EQ(*std::max_element(size.begin(), size.end()), (n + p - 1) / p) << n << " nodes, " << p << " parts";
  }
}

TEST(RandomAssignment, IsDeterministicForASeedAndChangesWithTheSeed) {
  const auto a = random_assignment(5000, 4, 7), b = random_assignment(5000, 4, 7), c = random_assignment(5000, 4, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(RandomAssignment, IsNotTheIdentityBlockSplit) {
  // A random permutation puts about 1/P of part 0's block-split nodes in each part; the
  // block split would put all 250 of nodes 0..249 in part 0.
  const auto a = random_assignment(1000, 4, 3);
  int first_block_in_part0 = 0;
  for (int v = 0; v < 250; ++v) first_block_in_part0 += a[v] == 0 ? 1 : 0;
  EXPECT_GT(first_block_in_part0, 30);
  EXPECT_LT(first_block_in_part0, 100);
}

TEST(RandomAssignment, EachNodeLandsInEveryPartEquallyOftenOverSeeds) {
  // Over 4000 seeds node 0 should be in each of 4 parts ~1000 times; chi-square with 3
  // degrees of freedom, 99.9% quantile 16.27.
  std::vector<int> count(4, 0);
  const int seeds = 4000;
  for (int s = 0; s < seeds; ++s) ++count[random_assignment(20, 4, static_cast<std::uint64_t>(s))[0]];
  double chi2 = 0;
  for (int c : count) chi2 += (c - seeds / 4.0) * (c - seeds / 4.0) / (seeds / 4.0);
  EXPECT_LT(chi2, 16.27);
}

TEST(EvaluatePartition, CountsCutEdgesOncePerUnorderedPair) {
  // Path 0-1-2-3 split {0,1 | 2,3}: one cut edge of three.
  const auto g = undirected(4, {{0, 1}, {1, 2}, {2, 3}});
  const std::vector<std::uint8_t> train{1, 0, 1, 1};
  const auto q = evaluate_partition(g, train, {0, 0, 1, 1}, 2);
  EXPECT_EQ(q.undirected_edges, 3);
  EXPECT_EQ(q.edge_cut, 1);
  EXPECT_EQ(q.part_nodes, (std::vector<std::int64_t>{2, 2}));
  EXPECT_EQ(q.part_edges, (std::vector<std::int64_t>{3, 3}));  // degrees 1+2 and 2+1
  EXPECT_EQ(q.part_train_nodes, (std::vector<std::int64_t>{1, 2}));
  EXPECT_DOUBLE_EQ(q.balance_train_nodes, 2.0 / 1.5);
  EXPECT_DOUBLE_EQ(q.balance_edges, 1.0);
}

TEST(EvaluatePartition, CountsADirectedPairStoredInOneOrBothDirectionsOnce) {
  // Entries 0->1, 1->0 (one pair), 2->0 only (one pair), 1->2 and 2->1 (one pair), 3->3 (loop).
  graph::CsrGraph g({0, 1, 3, 5, 6}, {1, 0, 2, 0, 1, 3});
  const auto q = evaluate_partition(g, {1, 1, 1, 1}, {0, 1, 1, 0}, 2);
  EXPECT_EQ(q.undirected_edges, 3);
  EXPECT_EQ(q.edge_cut, 2);  // {0,1} and {0,2}
}

TEST(BalanceWeights, AreTrainingIndicatorAndRowLengthWithUnitFallbackForZeroTotals) {
  const auto g = undirected(3, {{0, 1}, {0, 2}});
  EXPECT_EQ(balance_weights(g, {1, 0, 1}), (std::vector<std::int32_t>{1, 2, 0, 1, 1, 1}));
  EXPECT_EQ(balance_weights(g, {0, 0, 0}), (std::vector<std::int32_t>{1, 2, 1, 1, 1, 1}));
  const graph::CsrGraph empty({0, 0, 0}, {});
  EXPECT_EQ(balance_weights(empty, {1, 0}), (std::vector<std::int32_t>{1, 1, 0, 1}));
}

TEST(MetisAssignment, SeparatesTwoCliquesJoinedByOneEdge) {
  const auto g = two_cliques();
  const std::vector<std::uint8_t> train(10, 1);
  MetisOptions o;
  o.num_parts = 2;
  o.imbalance = 0.05;
  const auto part = metis_assignment(g, train, o, "two_cliques");
  const auto q = evaluate_partition(g, train, part, 2);
  EXPECT_EQ(q.edge_cut, 1);
  EXPECT_EQ(q.part_nodes, (std::vector<std::int64_t>{5, 5}));
  for (int v = 1; v < 5; ++v) EXPECT_EQ(part[v], part[0]);
  for (int v = 6; v < 10; ++v) EXPECT_EQ(part[v], part[5]);
}

TEST(MetisAssignment, OnePartPutsEveryNodeInPartZero) {
  const auto g = two_cliques();
  MetisOptions o;
  o.num_parts = 1;
  EXPECT_EQ(metis_assignment(g, std::vector<std::uint8_t>(10, 1), o, "x"), std::vector<PartId>(10, 0));
}

TEST(MetisAssignment, AcceptsDirectedInputBySymmetrisingIt) {
  // The two cliques with every edge stored in one direction only (u < v), plus self-loops.
  const auto full = two_cliques();
  std::vector<graph::EdgeIdx> ip{0};
  std::vector<graph::NodeId> idx;
  for (std::int64_t u = 0; u < 10; ++u) {
    idx.push_back(static_cast<graph::NodeId>(u));
    for (auto v : full.out_neigh(u))
      if (v > u) idx.push_back(v);
    ip.push_back(static_cast<graph::EdgeIdx>(idx.size()));
  }
  const graph::CsrGraph g(ip, idx);
  MetisOptions o;
  o.num_parts = 2;
  const auto part = metis_assignment(g, std::vector<std::uint8_t>(10, 1), o, "directed");
  EXPECT_EQ(evaluate_partition(full, std::vector<std::uint8_t>(10, 1), part, 2).edge_cut, 1);
}

TEST(MetisAssignment, IsDeterministicForASeedAndBalancesBothConstraints) {
  testing::ClusteredSpec spec;
  spec.nodes = 800;
  const auto d = testing::clustered_dataset(spec);
  MetisOptions o;
  o.num_parts = 4;
  o.imbalance = 0.05;
  o.seed = 11;
  const auto a = metis_assignment(d.graph, d.train_mask, o, "clustered");
  const auto b = metis_assignment(d.graph, d.train_mask, o, "clustered");
  EXPECT_EQ(a, b);
  const auto q = evaluate_partition(d.graph, d.train_mask, a, 4);
  EXPECT_LE(q.balance_train_nodes, 1.05 + 1e-9);
  EXPECT_LE(q.balance_edges, 1.05 + 1e-9);
  // Between the planted clusters run ~11% of the edges (expected inter-cluster degree
  // 0.002*600 = 1.2 against intra 0.05*199 = 10); a structure-blind split cuts ~75%.
  EXPECT_LT(q.edge_cut_fraction(), 0.25);
}

TEST(MetisAssignment, RejectsAnImbalanceOutsideMetisRange) {
  const auto g = two_cliques();
  MetisOptions o;
  o.num_parts = 2;
  o.imbalance = 0.0;
  EXPECT_THROW(metis_assignment(g, std::vector<std::uint8_t>(10, 1), o, "x"), UsageError);
}

}  // namespace
}  // namespace dpgnn::partition
