// Small graphs for the sampler tests, and an independent checker of subgraph sets.
//
// The checker here is written separately from sampling/verify.cpp on purpose (std::set of
// edge pairs, plain counting), so the sampler tests do not only trust the verifier that
// ships with the samplers.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "dpgnn/graph/csr_graph.h"
#include "dpgnn/graph/graph_builder.h"
#include "dpgnn/sampling/subgraph_set.h"

namespace dpgnn::sampling::testing {

struct TestGraph {
  std::string name;
  graph::CsrGraph g;
  std::vector<std::uint8_t> train;                      // root mask
  std::set<std::pair<std::int64_t, std::int64_t>> edges;  // both directions
};

inline TestGraph make_graph(std::string name, std::int64_t n,
                            const std::vector<std::pair<std::int64_t, std::int64_t>>& undirected,
                            std::vector<std::uint8_t> train) {
  std::vector<std::int64_t> src, dst;
  TestGraph t;
  t.name = std::move(name);
  for (auto [u, v] : undirected) {
    src.push_back(u);
    dst.push_back(v);
    if (u != v) {
      t.edges.insert({u, v});
      t.edges.insert({v, u});
    }
  }
  t.g = graph::build_csr(n, src, dst, graph::BuildOptions{}, nullptr, t.name);
  t.train = std::move(train);
  return t;
}

inline std::vector<std::uint8_t> all_train(std::int64_t n) { return std::vector<std::uint8_t>(n, 1); }

inline TestGraph path_graph(std::int64_t n) {
  std::vector<std::pair<std::int64_t, std::int64_t>> e;
  for (std::int64_t v = 0; v + 1 < n; ++v) e.push_back({v, v + 1});
  return make_graph("path", n, e, all_train(n));
}

inline TestGraph star_graph(std::int64_t leaves) {
  std::vector<std::pair<std::int64_t, std::int64_t>> e;
  for (std::int64_t v = 1; v <= leaves; ++v) e.push_back({0, v});
  return make_graph("star", leaves + 1, e, all_train(leaves + 1));
}

inline TestGraph clique_graph(std::int64_t n) {
  std::vector<std::pair<std::int64_t, std::int64_t>> e;
  for (std::int64_t u = 0; u < n; ++u)
    for (std::int64_t v = u + 1; v < n; ++v) e.push_back({u, v});
  return make_graph("clique", n, e, all_train(n));
}

// Erdos-Renyi G(n, p) with a fixed generator; every third node is a training node.
inline TestGraph random_graph(std::int64_t n, double p, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::bernoulli_distribution coin(p);
  std::vector<std::pair<std::int64_t, std::int64_t>> e;
  for (std::int64_t u = 0; u < n; ++u)
    for (std::int64_t v = u + 1; v < n; ++v)
      if (coin(gen)) e.push_back({u, v});
  std::vector<std::uint8_t> train(n, 0);
  for (std::int64_t v = 0; v < n; v += 3) train[v] = 1;
  return make_graph("random", n, e, train);
}

// Two triangles, a path of three, and four isolated nodes (two of them training nodes).
inline TestGraph disconnected_graph() {
  std::vector<std::pair<std::int64_t, std::int64_t>> e = {{0, 1}, {1, 2}, {2, 0}, {3, 4}, {4, 5},
                                                          {5, 3}, {6, 7}, {7, 8}};
  std::vector<std::uint8_t> train = {1, 0, 0, 1, 1, 1, 0, 1, 0, 1, 0, 1, 0};
  return make_graph("disconnected", 13, e, train);
}

// A hub adjacent to every other node plus a sparse random graph among the others.
inline TestGraph hub_graph(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::bernoulli_distribution coin(0.05);
  std::vector<std::pair<std::int64_t, std::int64_t>> e;
  for (std::int64_t v = 1; v < n; ++v) e.push_back({0, v});
  for (std::int64_t u = 1; u < n; ++u)
    for (std::int64_t v = u + 1; v < n; ++v)
      if (coin(gen)) e.push_back({u, v});
  return make_graph("hub", n, e, all_train(n));
}

inline TestGraph no_training_nodes_graph() {
  TestGraph t = path_graph(6);
  t.name = "no-training";
  t.train.assign(6, 0);
  return t;
}

// Occurrences of each node over all subgraphs.
inline std::vector<std::int64_t> occurrences(const SubgraphSet& s, std::int64_t n) {
  std::vector<std::int64_t> c(n, 0);
  for (std::int64_t v : s.nodes) c.at(v)++;
  return c;
}

// Asserts the invariants of a disjoint sampler's output (DRW family, node, split).
inline void expect_valid_disjoint(const TestGraph& t, const SubgraphSet& s, std::int64_t max_size) {
  const std::int64_t n = t.g.num_nodes();
  ASSERT_EQ(s.node_ptr.size(), s.roots.size() + 1);
  ASSERT_EQ(s.edge_ptr.size(), s.roots.size() + 1);
  const auto occ = occurrences(s, n);
  for (std::int64_t v = 0; v < n; ++v) {
    EXPECT_LE(occ[v], 1) << t.name << ": node " << v << " in several subgraphs";
    if (t.train[v]) {
      EXPECT_EQ(occ[v], 1) << t.name << ": training node " << v << " unassigned";
    }
  }
  for (std::int64_t i = 0; i < s.size(); ++i) {
    const std::int64_t b = s.node_ptr[i], e = s.node_ptr[i + 1];
    ASSERT_LT(b, e);
    EXPECT_EQ(s.nodes[b], s.roots[i]);
    EXPECT_EQ(t.train.at(s.roots[i]), 1) << t.name << ": root " << s.roots[i] << " is not a training node";
    EXPECT_LE(e - b, max_size) << t.name << ": subgraph " << i;
    std::set<std::int64_t> members(s.nodes.begin() + b, s.nodes.begin() + e);
    std::set<std::pair<std::int64_t, std::int64_t>> seen;
    for (std::int64_t k = s.edge_ptr[i]; k < s.edge_ptr[i + 1]; ++k) {
      auto [u, v] = s.edges[k];
      EXPECT_TRUE(t.edges.count({u, v})) << t.name << ": (" << u << ", " << v << ") is not an edge";
      EXPECT_TRUE(members.count(u) && members.count(v)) << t.name << ": edge leaves its subgraph";
      EXPECT_TRUE(seen.insert({std::min(u, v), std::max(u, v)}).second) << t.name << ": repeated edge";
    }
  }
}

}  // namespace dpgnn::sampling::testing
