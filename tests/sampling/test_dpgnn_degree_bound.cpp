// DP-GNN degree bounding (issue 13, item 6; docs/privacy.md "DP-GNN degree bounding").
// Node-level adjacency: G and G minus a node v (its edges gone, no longer a training node;
// ids kept so subgraphs can be matched by root). Lemma 2's proof counts only the subgraphs
// that contain v; so with the same seed, no subgraph that does not contain v may differ.
// degree_bound: require must give 0 such subgraphs for every v; degree_bound: paper gives
// some on the same graph (the test can tell them apart).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

#include "dpgnn/sampling/sampler.h"
#include "dpgnn/util/error.h"
#include "test_graphs.h"

namespace dpgnn::sampling {
namespace {

using testing::TestGraph;
using Edge = std::pair<std::int64_t, std::int64_t>;

// A random graph whose every node has at most `k` neighbours (all nodes train), so the
// training in-degree is <= k: Lemma 2's hypothesis.
std::vector<Edge> bounded_degree_edges(std::int64_t n, std::int64_t k, std::int64_t tries, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
  std::vector<std::int64_t> deg(n, 0);
  std::set<Edge> seen;
  std::vector<Edge> e;
  for (std::int64_t t = 0; t < tries; ++t) {
    const std::int64_t u = pick(gen), v = pick(gen);
    if (u == v || deg[u] >= k || deg[v] >= k || !seen.insert({std::min(u, v), std::max(u, v)}).second) continue;
    ++deg[u];
    ++deg[v];
    e.push_back({u, v});
  }
  return e;
}

// The graph without v: same ids, v isolated and not a training node.
TestGraph without(const std::vector<Edge>& e, std::int64_t n, std::int64_t v) {
  std::vector<Edge> kept;
  for (const auto& [a, b] : e)
    if (a != v && b != v) kept.push_back({a, b});
  auto train = testing::all_train(n);
  train[v] = 0;
  return testing::make_graph("without", n, kept, train);
}

struct Sub {
  std::set<std::int64_t> nodes;
  std::set<Edge> edges;
  bool operator==(const Sub& o) const { return nodes == o.nodes && edges == o.edges; }
};

std::map<std::int64_t, Sub> by_root(const SubgraphSet& s) {
  std::map<std::int64_t, Sub> out;
  for (std::size_t i = 0; i < s.roots.size(); ++i) {
    Sub& sub = out[s.roots[i]];
    sub.nodes.insert(s.nodes.begin() + s.node_ptr[i], s.nodes.begin() + s.node_ptr[i + 1]);
    sub.edges.insert(s.edges.begin() + s.edge_ptr[i], s.edges.begin() + s.edge_ptr[i + 1]);
  }
  return out;
}

SubgraphSet run(const TestGraph& t, std::int64_t k, std::int64_t r, DegreeBound b, std::uint64_t seed) {
  DpgnnOptions o;
  o.max_degree = k;
  o.layers = r;
  o.degree_bound = b;
  return sample_dpgnn(t.g, t.train, o, {seed, 0, 0});
}

// Subgraphs of G (other than v's own) that differ in G without v although they do not
// contain v, summed over `trials` random v.
std::int64_t differing_without_v(const std::vector<Edge>& e, std::int64_t n, std::int64_t k, std::int64_t r,
                                 DegreeBound b, int trials, std::uint64_t seed) {
  const TestGraph g = testing::make_graph("g", n, e, testing::all_train(n));
  const auto full = by_root(run(g, k, r, b, seed));
  std::mt19937_64 gen(seed + 1);
  std::uniform_int_distribution<std::int64_t> pick(0, n - 1);
  std::int64_t bad = 0;
  for (int t = 0; t < trials; ++t) {
    const std::int64_t v = pick(gen);
    const auto reduced = by_root(run(without(e, n, v), k, r, b, seed));
    EXPECT_EQ(reduced.count(v), 0u);
    for (const auto& [root, sub] : full) {
      if (root == v || sub.nodes.count(v)) continue;
      const auto it = reduced.find(root);
      if (it == reduced.end() || !(it->second == sub)) ++bad;
    }
  }
  return bad;
}

TEST(DpgnnDegreeBound, RequireChangesOnlySubgraphsThatContainTheRemovedNode) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const std::int64_t n = 300, k = 3;
    const auto e = bounded_degree_edges(n, k, 2000, seed);
    for (std::int64_t r : {1, 2, 3})
      EXPECT_EQ(differing_without_v(e, n, k, r, DegreeBound::require, 25, seed), 0) << "seed " << seed << ", r " << r;
  }
}

TEST(DpgnnDegreeBound, PaperChangesSubgraphsThatDoNotContainTheRemovedNode) {
  // Degrees up to 3 with K = 2, so p = K / (2 |RE_u|) < 1 and coins are drawn.
  const std::int64_t n = 300;
  const auto e = bounded_degree_edges(n, 3, 2000, 5);
  EXPECT_GT(differing_without_v(e, n, 2, 2, DegreeBound::paper, 25, 5), 0);
}

TEST(DpgnnDegreeBound, RequireKeepsTheOccurrenceBoundAndUsesEveryTrainingEdge) {
  const std::int64_t n = 300, k = 4, r = 2;
  const auto e = bounded_degree_edges(n, k, 3000, 9);
  const TestGraph g = testing::make_graph("g", n, e, testing::all_train(n));
  const SubgraphSet s = run(g, k, r, DegreeBound::require, 9);
  const auto occ = testing::occurrences(s, n);
  EXPECT_LE(*std::max_element(occ.begin(), occ.end()), dpgnn_occurrence_bound(k, r));
  // r = 1: S_v is v and every neighbour (all train), E_v = RE's transpose, nothing dropped.
  const auto one = by_root(run(g, k, 1, DegreeBound::require, 9));
  for (std::int64_t v = 0; v < n; ++v) {
    std::set<std::int64_t> want{v};
    for (graph::NodeId w : g.g.out_neigh(v)) want.insert(w);
    EXPECT_EQ(one.at(v).nodes, want) << "node " << v;
  }
}

TEST(DpgnnDegreeBound, RequireRefusesAGraphWithTooManyTrainingInNeighbours) {
  const TestGraph star = testing::star_graph(5);  // the centre has 5 training neighbours
  try {
    run(star, 4, 2, DegreeBound::require, 1);
    FAIL() << "expected a DataError";
  } catch (const DataError& err) {
    EXPECT_NE(std::string(err.what()).find("node 0 has 5 training in-neighbours"), std::string::npos) << err.what();
  }
  EXPECT_NO_THROW(run(star, 5, 2, DegreeBound::require, 1));
  EXPECT_EQ(parse_degree_bound("require"), DegreeBound::require);
  EXPECT_EQ(parse_degree_bound("paper"), DegreeBound::paper);
  EXPECT_THROW(parse_degree_bound("covered"), UsageError);
}

}  // namespace
}  // namespace dpgnn::sampling
