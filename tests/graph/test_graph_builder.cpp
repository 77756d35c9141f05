#include <gtest/gtest.h>

#include "dpgnn/graph/graph_builder.h"
#include "dpgnn/graph/validate.h"
#include "dpgnn/util/error.h"

namespace dpgnn::graph {
namespace {

std::vector<NodeId> row(const CsrGraph& g, std::int64_t v) {
  return {g.out_neigh(v).begin(), g.out_neigh(v).end()};
}

TEST(GraphBuilder, SymmetrisesAndRemovesSelfLoopsAndDuplicatesCountingThem) {
  BuildReport rep;
  // 0-1 twice (once reversed), a self-loop on 2, 2-3.
  const CsrGraph g = build_csr(4, {0, 1, 2, 2}, {1, 0, 2, 3}, BuildOptions{}, &rep, "test");
  EXPECT_EQ(rep.input_edges, 4);
  EXPECT_EQ(rep.self_loops_removed, 1);
  EXPECT_EQ(rep.duplicates_removed, 2);  // 0->1 and 1->0 each appear twice after symmetrising
  EXPECT_EQ(row(g, 0), (std::vector<NodeId>{1}));
  EXPECT_EQ(row(g, 1), (std::vector<NodeId>{0}));
  EXPECT_EQ(row(g, 2), (std::vector<NodeId>{3}));
  EXPECT_EQ(row(g, 3), (std::vector<NodeId>{2}));
  EXPECT_TRUE(g.is_symmetric());
}

TEST(GraphBuilder, KeepsADirectedGraphWhenAsked) {
  BuildOptions opt;
  opt.symmetrize = false;
  const CsrGraph g = build_csr(3, {0, 1}, {1, 2}, opt, nullptr, "test");
  EXPECT_EQ(g.num_edges(), 2);
  EXPECT_FALSE(g.is_symmetric());
}

TEST(GraphBuilder, RejectsIdsOutOfRangeNamingTheInputAndTheEdge) {
  try {
    build_csr(3, {0, 5}, {1, 1}, BuildOptions{}, nullptr, "edges.csv");
    FAIL();
  } catch (const DataError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("edges.csv"), std::string::npos) << m;
    EXPECT_NE(m.find("edge 1"), std::string::npos) << m;
  }
}

TEST(GraphStats, CountsUndirectedPairsSelfLoopsDuplicatesAndIsolatedNodes) {
  // Directed entries: 0->1, 1->0 (one pair), 0->1 again (duplicate), 2->2 (self-loop), 3 isolated.
  const CsrGraph g({0, 2, 3, 4, 4}, {1, 1, 0, 2});
  std::vector<std::uint8_t> m(4, 0);
  const DatasetStats s = compute_stats(g, m, m, m);
  EXPECT_EQ(s.undirected_edges, 1);
  EXPECT_EQ(s.self_loops, 1);
  EXPECT_EQ(s.duplicate_edges, 1);
  EXPECT_EQ(s.isolated, 2);  // node 2 only has itself; node 3 has nothing
}

}  // namespace
}  // namespace dpgnn::graph
