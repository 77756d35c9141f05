// A bipartite message-passing block: the edges one GNN layer aggregates over.
//
// Messages flow src -> dst. The dst nodes are the first num_dst src nodes, so a layer maps
// h_src [num_src, d] to h_dst [num_dst, d']. Two uses:
//  * training: one block over a batch of disjoint subgraphs, num_dst == num_src == n, and
//    degrees counted inside the subgraph (the subgraph is the whole world of its root, as in
//    the random-walk DP-GNN paper, Ayle et al. 2022, Sec. 4);
//  * full-neighbourhood inference: rows = the rank's local nodes, columns = local + halo
//    nodes, degrees taken from the full graph (so GCN normalisation matches the full graph).
// Undirected edges are listed in both directions; self loops are never listed (each
// architecture adds its own self connection). Degrees exclude the node itself.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

namespace dpgnn::model {

struct GraphBlock {
  at::Tensor dst;      // [E] int64, in [0, num_dst)
  at::Tensor src;      // [E] int64, in [0, num_src)
  std::int64_t num_dst = 0;
  std::int64_t num_src = 0;
  at::Tensor deg_dst;  // [num_dst] float: neighbour count of each dst node (self excluded)
  at::Tensor deg_src;  // [num_src] float: neighbour count of each src node (self excluded)

  std::int64_t num_edges() const { return dst.defined() ? dst.size(0) : 0; }
  // Same block on another device / with degrees in another floating dtype.
  GraphBlock to(c10::Device device, c10::ScalarType float_dtype) const;
  // Throws DataError naming the problem (shapes, index ranges, self loops).
  void validate() const;
};

// Builds a block from host edge lists, counting degrees inside the block: deg_dst[i] = number
// of edges into i, deg_src[j] = number of edges out of j (equal for a symmetric edge list).
// This is the training-time normalisation (within the subgraph). Throws DataError when an
// index is out of range, the lists differ in length, or an edge is a self loop.
GraphBlock make_block(const std::vector<std::int64_t>& dst, const std::vector<std::int64_t>& src,
                      std::int64_t num_dst, std::int64_t num_src, c10::Device device,
                      c10::ScalarType float_dtype = c10::ScalarType::Float);

// Builds a block with the degrees given by the caller (full-graph degrees for inference).
GraphBlock make_block_with_degrees(const std::vector<std::int64_t>& dst,
                                   const std::vector<std::int64_t>& src, std::int64_t num_dst,
                                   std::int64_t num_src, const std::vector<double>& deg_dst,
                                   const std::vector<double>& deg_src, c10::Device device,
                                   c10::ScalarType float_dtype = c10::ScalarType::Float);

}  // namespace dpgnn::model
