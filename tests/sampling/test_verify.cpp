// The runtime verifier must catch every kind of broken subgraph set (a verifier that
// passes everything would hide a privacy bug), and accept correct ones.
#include <gtest/gtest.h>

#include "dpgnn/sampling/verify.h"
#include "dpgnn/util/error.h"
#include "test_graphs.h"

namespace dpgnn::sampling {
namespace {

// Path 0-1-2-3-4-5, training nodes 0, 2, 4; two subgraphs {0,1} and {2,3} and {4,5}.
struct Fixture {
  testing::TestGraph t = [] {
    auto t = testing::path_graph(6);
    t.train = {1, 0, 1, 0, 1, 0};
    return t;
  }();
  SubgraphSet good() const {
    SubgraphSet s;
    s.roots = {0, 2, 4};
    s.node_ptr = {0, 2, 4, 6};
    s.nodes = {0, 1, 2, 3, 4, 5};
    s.edge_ptr = {0, 1, 2, 3};
    s.edges = {{0, 1}, {2, 3}, {4, 5}};
    return s;
  }
  SubgraphChecks checks() const {
    SubgraphChecks c;
    c.max_size = 2;
    c.every_candidate_covered = true;
    return c;
  }
  bool ok(const SubgraphSet& s, const SubgraphChecks& c) const { return check_subgraphs(t.g, t.train, s, c).ok(); }
};

TEST(VerifySubgraphs, AcceptsAValidDisjointSet) {
  Fixture f;
  EXPECT_TRUE(f.ok(f.good(), f.checks()));
  EXPECT_NO_THROW(verify_subgraphs(f.t.g, f.t.train, f.good(), f.checks(), "test"));
}

TEST(VerifySubgraphs, CatchesANodeInTwoSubgraphs) {
  Fixture f;
  SubgraphSet s = f.good();
  s.nodes[3] = 1;  // {2, 1}: node 1 twice over the set
  s.edges[1] = {1, 2};
  EXPECT_FALSE(f.ok(s, f.checks()));
  EXPECT_THROW(verify_subgraphs(f.t.g, f.t.train, s, f.checks(), "test"), Error);
}

TEST(VerifySubgraphs, CatchesAnOversizedSubgraph) {
  Fixture f;
  SubgraphSet s;
  s.roots = {0, 4};
  s.node_ptr = {0, 4, 6};
  s.nodes = {0, 1, 2, 3, 4, 5};
  s.edge_ptr = {0, 0, 0};
  EXPECT_FALSE(f.ok(s, f.checks()));  // size 4 > 2
  auto c = f.checks();
  c.max_size = 4;
  EXPECT_TRUE(f.ok(s, c));
}

TEST(VerifySubgraphs, CatchesARootThatIsNotATrainingNode) {
  Fixture f;
  SubgraphSet s = f.good();
  s.roots[2] = 5;
  s.nodes[4] = 5;
  s.nodes[5] = 4;
  EXPECT_FALSE(f.ok(s, f.checks()));
}

TEST(VerifySubgraphs, CatchesAnEdgeThatIsNotInTheGraph) {
  Fixture f;
  SubgraphSet s = f.good();
  s.nodes = {0, 1, 2, 5, 4, 3};  // subgraphs {0,1}, {2,5}, {4,3}
  s.edges = {{0, 1}, {2, 5}, {4, 3}};  // (2, 5) is not an edge of the path
  EXPECT_FALSE(f.ok(s, f.checks()));
  s.edges = {{0, 1}, {4, 3}};
  s.edge_ptr = {0, 1, 1, 2};
  EXPECT_TRUE(f.ok(s, f.checks()));
}

TEST(VerifySubgraphs, CatchesAnEdgeLeavingItsSubgraph) {
  Fixture f;
  SubgraphSet s = f.good();
  s.edges[0] = {1, 2};  // an edge of the graph, but node 2 is in another subgraph
  EXPECT_FALSE(f.ok(s, f.checks()));
}

TEST(VerifySubgraphs, CatchesAnUnassignedTrainingNode) {
  Fixture f;
  SubgraphSet s;
  s.roots = {0, 2};
  s.node_ptr = {0, 2, 4};
  s.nodes = {0, 1, 2, 3};
  s.edge_ptr = {0, 1, 2};
  s.edges = {{0, 1}, {2, 3}};
  EXPECT_FALSE(f.ok(s, f.checks()));  // training node 4 is missing
  auto c = f.checks();
  c.every_candidate_covered = false;
  EXPECT_TRUE(f.ok(s, c));
}

TEST(VerifySubgraphs, CatchesTheOccurrenceBound) {
  Fixture f;
  SubgraphSet s;
  s.roots = {0, 2, 4};
  s.node_ptr = {0, 2, 4, 6};
  s.nodes = {0, 1, 2, 1, 4, 3};  // node 1 twice: fine for overlap <= 2, not for <= 1
  s.edge_ptr = {0, 0, 0, 0};
  SubgraphChecks c;
  c.disjoint = false;
  c.every_candidate_is_root = true;
  c.max_occurrence = 2;
  EXPECT_TRUE(f.ok(s, c));
  c.max_occurrence = 1;
  EXPECT_FALSE(f.ok(s, c));
  EXPECT_EQ(check_subgraphs(f.t.g, f.t.train, s, c).max_occurrence, 2);
}

TEST(VerifySubgraphs, CatchesMalformedPointers) {
  Fixture f;
  SubgraphSet s = f.good();
  s.node_ptr = {0, 2, 4};
  EXPECT_FALSE(f.ok(s, f.checks()));
  s = f.good();
  s.edges.push_back({0, 1});
  EXPECT_FALSE(f.ok(s, f.checks()));
  s = f.good();
  s.nodes[0] = 17;
  EXPECT_FALSE(f.ok(s, f.checks()));
}

}  // namespace
}  // namespace dpgnn::sampling
