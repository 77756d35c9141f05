// A training batch: disjoint subgraphs stacked into one graph with one block of edges.
//
// Rows of x are grouped by subgraph (rows node_ptr[s] .. node_ptr[s+1] belong to subgraph s),
// the loss is taken on each subgraph's root (or on loss_rows), and the block is block-diagonal (no edge
// crosses subgraphs). Disjointness is what lets one subgraph be one DP example (Ayle et al.
// 2022, Sec. 4): its gradient depends on its own nodes only, so per-subgraph clipping bounds
// the sensitivity. node_key gives each node slot a stable id across ranks, so that dropout
// masks do not depend on how the global batch was split (see dropout.h).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

#include "dpgnn/model/graph_block.h"

namespace dpgnn::model {

struct Batch {
  at::Tensor x;         // [n, F] floating: features of all nodes, grouped by subgraph
  at::Tensor node_ptr;  // [B+1] int64: subgraph s owns rows node_ptr[s] .. node_ptr[s+1]
  at::Tensor root;      // [B] int64: row of subgraph s's root (inside its own rows)
  at::Tensor y;         // [B] int64 class (single-label) or [B, C] float multi-hot; [K] / [K, C]
                        // with loss_rows
  // Optional [K] int64: the rows whose logits enter the loss, y aligned with them, each row
  // inside the rows of one subgraph (graph splits, Igamberdiev & Habernal Sec. 4.4: the loss
  // of a split is over all its nodes). Undefined: the loss is at the roots.
  at::Tensor loss_rows;
  at::Tensor node_key;  // [n] int64: stable id of each node slot (unique in the global batch)
  GraphBlock block;     // num_dst == num_src == n, edges only inside subgraphs
  // Host memory x was copied from asynchronously (a pinned buffer), or undefined: held until the
  // batch is released, so that the buffer is not reused while the copy may still read it.
  at::Tensor host_staging;

  std::int64_t num_subgraphs() const { return root.defined() ? root.size(0) : 0; }
  std::int64_t num_nodes() const { return x.defined() ? x.size(0) : 0; }
  c10::Device device() const { return x.device(); }

  // Throws DataError naming the problem: shapes, a root outside its subgraph, an edge that
  // crosses subgraphs, labels of the wrong kind for `multilabel`.
  void validate(bool multilabel, std::int64_t num_classes) const;
};

// Assembles a batch from host data: x is given as a tensor (any device; the result lives on
// x's device), everything else as host vectors. Degrees are counted inside the block
// (training normalisation). y_single is used when multilabel is false, y_multi ([B*C], row
// major) when true. Validates the result.
Batch make_batch(const at::Tensor& x, const std::vector<std::int64_t>& node_ptr,
                 const std::vector<std::int64_t>& root, const std::vector<std::int64_t>& node_key,
                 const std::vector<std::int64_t>& edge_dst, const std::vector<std::int64_t>& edge_src,
                 bool multilabel, std::int64_t num_classes,
                 const std::vector<std::int64_t>& y_single, const std::vector<float>& y_multi,
                 const std::vector<std::int64_t>& loss_rows = {});  // empty: loss at the roots

// The batch holding only the listed subgraphs (in the given order), re-indexed. Used to split
// a global batch across ranks and by the tests' per-sample oracle.
Batch select_subgraphs(const Batch& batch, const std::vector<std::int64_t>& subgraphs);

}  // namespace dpgnn::model
