// An immutable graph in compressed sparse row form (gapbs' CSRGraph shape).
//
// Offsets are int64 (graphs with more than 2^31 edges), node ids int32: every graph this
// trainer targets has fewer than 2^31 nodes, METIS's idx_t is 32-bit, and halving the
// neighbour array makes random walks faster. Larger node counts are refused with a clear
// error when the graph is read. Built once (GraphBuilder or a reader), then only read.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace dpgnn::graph {

using NodeId = std::int32_t;   // a node id within one graph or shard
using EdgeIdx = std::int64_t;  // an offset into the neighbour array

constexpr std::int64_t kMaxNodes = std::numeric_limits<NodeId>::max();

// A contiguous, read-only range of neighbours.
class NeighborRange {
 public:
  NeighborRange(const NodeId* b, const NodeId* e) : b_(b), e_(e) {}
  const NodeId* begin() const { return b_; }
  const NodeId* end() const { return e_; }
  std::int64_t size() const { return e_ - b_; }
  bool empty() const { return b_ == e_; }
  NodeId operator[](std::int64_t i) const { return b_[i]; }

 private:
  const NodeId* b_;
  const NodeId* e_;
};

class CsrGraph {
 public:
  CsrGraph() : indptr_{0} {}
  // Takes ownership; checks that indptr is a valid offset array for `indices` and that
  // every index is in [0, num_cols) (num_cols defaults to the number of rows).
  CsrGraph(std::vector<EdgeIdx> indptr, std::vector<NodeId> indices, std::int64_t num_cols = -1);

  std::int64_t num_nodes() const { return static_cast<std::int64_t>(indptr_.size()) - 1; }
  std::int64_t num_cols() const { return num_cols_; }
  std::int64_t num_edges() const { return static_cast<std::int64_t>(indices_.size()); }
  std::int64_t out_degree(std::int64_t v) const { return indptr_[v + 1] - indptr_[v]; }
  NeighborRange out_neigh(std::int64_t v) const {
    return {indices_.data() + indptr_[v], indices_.data() + indptr_[v + 1]};
  }
  const std::vector<EdgeIdx>& indptr() const { return indptr_; }
  const std::vector<NodeId>& indices() const { return indices_; }

  // True when (u, v) is stored for every stored (v, u). O(E log d) with sorted rows.
  bool is_symmetric() const;
  // True when every row is sorted ascending.
  bool rows_sorted() const;

 private:
  std::vector<EdgeIdx> indptr_;
  std::vector<NodeId> indices_;
  std::int64_t num_cols_ = 0;
};

}  // namespace dpgnn::graph
