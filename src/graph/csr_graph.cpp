#include "dpgnn/graph/csr_graph.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace dpgnn::graph {

CsrGraph::CsrGraph(std::vector<EdgeIdx> indptr, std::vector<NodeId> indices, std::int64_t num_cols)
    : indptr_(std::move(indptr)), indices_(std::move(indices)) {
  if (indptr_.empty()) throw std::invalid_argument("CsrGraph: indptr must have at least one entry");
  num_cols_ = num_cols < 0 ? num_nodes() : num_cols;
  if (indptr_.front() != 0 || indptr_.back() != static_cast<EdgeIdx>(indices_.size()))
    throw std::invalid_argument("CsrGraph: indptr must start at 0 and end at the number of indices");
  for (std::size_t i = 1; i < indptr_.size(); ++i)
    if (indptr_[i] < indptr_[i - 1])
      throw std::invalid_argument("CsrGraph: indptr decreases at row " + std::to_string(i - 1));
  for (NodeId v : indices_)
    if (v < 0 || v >= num_cols_)
      throw std::invalid_argument("CsrGraph: neighbour id " + std::to_string(v) + " out of range [0, " +
                                  std::to_string(num_cols_) + ")");
}

bool CsrGraph::rows_sorted() const {
  for (std::int64_t v = 0; v < num_nodes(); ++v) {
    auto r = out_neigh(v);
    if (!std::is_sorted(r.begin(), r.end())) return false;
  }
  return true;
}

bool CsrGraph::is_symmetric() const {
  if (num_cols_ != num_nodes()) return false;
  const bool sorted = rows_sorted();
  for (std::int64_t v = 0; v < num_nodes(); ++v) {
    for (NodeId u : out_neigh(v)) {
      auto r = out_neigh(u);
      const bool found = sorted ? std::binary_search(r.begin(), r.end(), static_cast<NodeId>(v))
                                : std::find(r.begin(), r.end(), static_cast<NodeId>(v)) != r.end();
      if (!found) return false;
    }
  }
  return true;
}

}  // namespace dpgnn::graph
