// The training aggregation of a GraphBlock on the CPU: one threaded row kernel with its own
// backward (model/ internal; used by gnn.cpp).
//
// The block's edges are put in CSR order both ways once (rows = dst with their src sorted, and
// the transpose, rows = src with their dst sorted: four stable counting sorts, O(E + n)), so
//   out[i, :] = self[i] * z[i, :] + sum_{e into i} w[e] * z[src_e, :]      (i < num_dst)
// is one parallel loop over the rows, each row summed by one thread in CSR order, and its
// gradient with respect to z,
//   dz[j, :] = self[j] * g[j, :] [j < num_dst] + sum_{e out of j} w[e] * g[dst_e, :],
// the same loop over the transposed rows. LibTorch's sparse product, which this replaces on
// the CPU, sorted (coalesced) the entries on every product and again in its backward, in
// several small kernels. No per-entry message is ever formed (memory O(nodes x width),
// DESIGN.md 11), and the result does not depend on the number of threads.
//
// forward_train puts the batch block's CSR in a CsrScope for the duration of the forward
// pass, so that every layer's aggregation (and its backward) reuses it; elsewhere it is built
// per call.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "dpgnn/model/graph_block.h"

namespace dpgnn::model::detail {

struct BlockCsr {
  std::int64_t num_dst = 0, num_src = 0;
  at::Tensor ptr, col, edge;     // [num_dst + 1], [E] src ids, [E] edge ids: edges into dst i
  at::Tensor tptr, trow, tedge;  // [num_src + 1], [E] dst ids, [E] edge ids: edges out of src j
};

// True when the CPU kernel applies: a CPU float32 / float64 z.
bool block_kernel_applies(const at::Tensor& z);

// The CSR of a CPU block (int64 host arrays).
BlockCsr block_csr(const GraphBlock& block);

// out [num_dst, d] = self . z[:num_dst] + A_w z with A_w[dst_e, src_e] = edge_weight[e]
// (edge_weight [E] in the block's edge order, undefined = 1; self [num_dst], undefined = no
// self term). Differentiable in z, not in the weights (constants of the block).
at::Tensor block_aggregate(const at::Tensor& z, const BlockCsr& csr, const at::Tensor& edge_weight,
                           const at::Tensor& self_weight);

// While alive, csr_of(block) returns this CSR for `block` (by address) on this thread.
class CsrScope {
 public:
  explicit CsrScope(const GraphBlock& block);
  ~CsrScope();
  CsrScope(const CsrScope&) = delete;
  CsrScope& operator=(const CsrScope&) = delete;
  // The scope's CSR when `block` is its block, else one built now.
  static BlockCsr csr_of(const GraphBlock& block);

 private:
  const GraphBlock* block_;
  BlockCsr csr_;
  CsrScope* outer_;
};

}  // namespace dpgnn::model::detail
