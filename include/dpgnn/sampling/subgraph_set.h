// A set of subgraphs produced by a sampler over one partition's training graph.
//
// Node ids are the ids of the graph the sampler ran on (for a partition: local ids
// 0..n_part-1; the trainer adds the partition's first global id). Subgraph i has root
// roots[i], nodes nodes[node_ptr[i] .. node_ptr[i+1]) with the root first, and edges
// edges[edge_ptr[i] .. edge_ptr[i+1]) as (u, v) pairs of node ids, each undirected edge
// listed once. Disjoint samplers (DRW family, node, split) put every node in at most one
// subgraph; the DP-GNN sampler bounds each node's occurrences by N(K, r) instead.
// The loss is taken at the root only, except when loss_on_all_nodes is set (graph splits:
// every node of a split is a labelled training node and contributes to its loss; the split
// is still one example for clipping and sampling).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dpgnn::sampling {

struct SubgraphSet {
  std::vector<std::int64_t> roots;                          // [M]
  std::vector<std::int64_t> node_ptr{0};                    // [M+1]
  std::vector<std::int64_t> nodes;                          // [node_ptr[M]]
  std::vector<std::int64_t> edge_ptr{0};                    // [M+1]
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;  // [edge_ptr[M]]
  bool loss_on_all_nodes = false;  // true: every node of a subgraph is a loss node (split)

  std::int64_t size() const { return static_cast<std::int64_t>(roots.size()); }
  std::int64_t subgraph_size(std::int64_t i) const { return node_ptr[i + 1] - node_ptr[i]; }
  std::int64_t max_subgraph_size() const {
    std::int64_t m = 0;
    for (std::int64_t i = 0; i < size(); ++i) m = std::max(m, subgraph_size(i));
    return m;
  }
};

}  // namespace dpgnn::sampling
