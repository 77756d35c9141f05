// Per-subgraph gradient clipping without per-sample gradients: ghost norm + book-keeping.
//
// DP-SGD (Abadi et al. 2016, Alg. 1) needs sum_s min(1, C/||g_s||) g_s over the batch's
// subgraphs s (one subgraph = one example, Ayle et al. 2022, Alg. 1). Every model weight is
// used by one linear map per node (gnn.h), Z = A W^T, so with G = dLoss/dZ (from ONE
// autograd pass w.r.t. the maps' outputs, not the parameters) the gradient of subgraph s is
// A_s^T G_s and
//   ||A_s^T G_s||_F^2 = <A_s A_s^T, G_s G_s^T>       (ghost norm, Goodfellow 2015;
//                                                      Li et al. 2022, "ghost clipping")
//   ||bias grad_s||^2 = ||1^T G_s||^2 ;  with a bias on the map: <A_s A_s^T + 1 1^T, G_s G_s^T>
// The clipped sum is then formed from the same stored A and G (book-keeping, Bu et al. 2023,
// "Differentially private optimization on large model at small cost", Alg. 1):
//   sum_s c_s A_s^T G_s = A^T (c_node * G),   c_s = min(1, C / ||g_s||)
// No second backward, no per-sample copy. The ghost norm costs O(n_s^2 (d_in + d_out)) per
// subgraph against O(n_s d_in d_out) for materialising A_s^T G_s; the engine chooses per map
// and per subgraph size. Two kernels (NormKernel): on the CPU, every subgraph's rows are one
// contiguous block of A and G, read in place by one parallel loop over the batch
// (segment_norms.h); on other devices subgraphs are grouped into size classes {1}, {2},
// {3,4}, {5..8}, ..., padded within the class, so the Gram matrices are one bmm per class.
//
// Clipping modes:
//   flat:      one threshold C over all parameters; per-example norm <= C.
//   per-layer: threshold C_l for the parameters of GNN layer l (DP-GNN, Daigavane et al.
//              2022, Sec. 6 "Gradient Clipping"); the concatenated per-example gradient then
//              has norm <= sqrt(sum_l C_l^2) = ClipConfig::total_clip_norm(), which is the C
//              the trainer must put into the sensitivity (2C for replace-one).
// A subgraph with zero gradient gets factor 1 (never 0/0).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "dpgnn/model/batch.h"
#include "dpgnn/model/dropout.h"
#include "dpgnn/model/gnn.h"

namespace dpgnn::model {

enum class ClipMode { kFlat, kPerLayer };

struct ClipConfig {
  ClipMode mode = ClipMode::kFlat;
  double clip_norm = 1.0;                // flat threshold C
  std::vector<double> layer_clip_norms;  // per-layer thresholds C_l, one per GNN layer

  static ClipConfig flat(double c);
  static ClipConfig per_layer(std::vector<double> c_per_layer);
  // C_l = C / sqrt(L): per-layer clipping whose total bound equals C.
  static ClipConfig per_layer_equal(double c_total, int layers);
  // The L2 bound of one example's clipped gradient: C (flat) or sqrt(sum_l C_l^2).
  double total_clip_norm() const;
  // UsageError naming privacy.clip_norm when a threshold is not finite and > 0 or the number
  // of per-layer thresholds differs from the model's layers.
  void validate(int layers) const;
};

// How per-subgraph norms are computed for each (map, subgraph size) bucket.
enum class NormStrategy { kAuto, kGhost, kMaterialize };

// How the per-subgraph norms are computed.
enum class NormKernel {
  kAuto,      // kSegment for float32/float64 CPU tensors, kSizeClass otherwise (e.g. CUDA)
  kSegment,   // CPU: every map and subgraph from its contiguous rows, in place, one parallel
              // region for the batch (src/model/segment_norms.h)
  kSizeClass, // any device: subgraphs gathered into padded size classes, a few batched
              // products (bmm) per map and class: few, large kernels for a GPU
};

struct ClipOptions {
  NormStrategy strategy = NormStrategy::kAuto;
  NormKernel kernel = NormKernel::kAuto;
  // kSizeClass: largest per-sample gradient block [chunk, d_in, d_out] materialised at once.
  std::int64_t materialize_chunk_elements = std::int64_t{1} << 22;
};

struct ClipResult {
  double loss_sum = 0.0;
  at::Tensor norms;        // [B] per-subgraph gradient norm over all parameters, before clipping
  at::Tensor layer_norms;  // [B, L] per-subgraph, per-layer norms before clipping
  at::Tensor factors;      // [B, 1] (flat) or [B, L] (per-layer) clipping factors in (0, 1]
  std::int64_t num_clipped = 0;  // subgraphs with at least one factor < 1
};

// Writes sum_s clip(g_s) into flat_out ([P], model dtype and device, contiguous; it may be a
// view into a larger buffer), in the order of Gnn::parameters(). Empty batch: zeros.
ClipResult clipped_gradient_sum(const Gnn& model, const Batch& batch, const ClipConfig& clip,
                                const DropoutKey& key, at::Tensor flat_out,
                                const ClipOptions& options = {});

// Non-private path: writes sum_s g_s (plain autograd gradient of the summed loss) into
// flat_out with the same layout. Returns the loss sum.
double gradient_sum(const Gnn& model, const Batch& batch, const DropoutKey& key,
                    at::Tensor flat_out);

}  // namespace dpgnn::model
