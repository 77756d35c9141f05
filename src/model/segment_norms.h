// Per-subgraph squared gradient norms of linear maps on the CPU, straight from the rows of a
// batch (model/ internal; used by clipping.cpp).
//
// A batch's subgraphs own contiguous row ranges node_ptr[s] .. node_ptr[s+1] (batch.h), so the
// rows of one subgraph in A [n, d_in] and G [n, d_out] are already one contiguous block: the
// ghost norm (Goodfellow 2015; Li et al. 2022, "ghost clipping")
//   ||A_s^T G_s||_F^2 (+ ||1^T G_s||^2 with a bias) = sum_{i,j in s} (a_i.a_j + [bias]) (g_i.g_j)
// is computed per subgraph from those rows in place: no gather into size classes, no padding,
// no per-sample gradient, and the whole batch (every map, every subgraph) in ONE parallel
// region (each kernel launch is a thread-pool barrier on CPU; under load a barrier waits for a
// time slice, which is what made the batched-product path slow on a busy 2-core machine,
// docs/benchmarks.md "Per-subgraph clipping"). The sum runs over the symmetric half (i <= j,
// off-diagonal terms doubled) and skips rows whose g_i is exactly zero (their terms are exactly
// zero): in a GCN the output gradient of the last layers is non-zero only near the root.
// Where S (d_in + d_out) > d_in d_out (tiny layers, big subgraphs) the subgraph's gradient
// A_s^T G_s is formed in a [d_in, d_out] scratch instead (same rule as the batched path).
// One subgraph is summed by one thread in a fixed order: the result does not depend on the
// number of threads.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "dpgnn/model/clipping.h"

namespace dpgnn::model::detail {

// One recorded linear map of the forward pass (gnn.h, LinearMapRecord) with its output gradient.
struct SegmentMap {
  int layer = 0;
  bool has_weight = false;
  bool has_bias = false;
  at::Tensor input;  // A [n, d_in], contiguous CPU; undefined for a bias-only map
  at::Tensor grad;   // G [n, d_out], contiguous CPU, same dtype as input
};

// True when the ghost norm is cheaper than materialising A_s^T G_s for a subgraph of k rows
// (flop counts; kGhost / kMaterialize force the choice).
bool use_ghost(std::int64_t k, std::int64_t din, std::int64_t dout, NormStrategy s);

// [L, B] float64: per layer l and subgraph s, the sum over the maps of layer l of the squared
// norm of subgraph s's gradient of the map's parameters. node_ptr: host [B+1].
at::Tensor segment_norms_cpu(const std::vector<SegmentMap>& maps, const std::int64_t* node_ptr,
                             std::int64_t num_subgraphs, int num_layers, NormStrategy strategy);

}  // namespace dpgnn::model::detail
