// GNN models over batches of disjoint subgraphs: GCN, GraphSAGE-mean, GIN and MLP.
//
// Every layer is written so that each weight is used by exactly ONE linear map per node,
// A [n, d_in] -> Z = A W^T (+ b) [n, d_out], and the forward pass records those maps (input A
// and output Z). That is what the clipping engine (clipping.h) needs: the per-subgraph
// gradient of W is A_s^T G_s with G = dLoss/dZ, so per-subgraph norms follow from the ghost
// norm identity and the clipped sum from one more matmul (Bu et al. 2023, "book-keeping").
//   GCN  (Kipf & Welling 2017, eq. 2):  H' = D^-1/2 (A+I) D^-1/2 (H W^T) + b
//        map H -> H W^T (no bias), then a bias-only map on the aggregated output;
//        D = degrees of the block + 1: within the subgraph in training, full graph in inference.
//   SAGE (Hamilton et al. 2017, mean aggregator): H' = H W_self^T + b + mean_N(H) W_neigh^T
//        two maps: H -> H W_self^T + b and mean_N(H) -> mean_N(H) W_neigh^T.
//   GIN  (Xu et al. 2019, eq. 4.1, eps = 0 fixed): H' = MLP((1+eps) H + sum_N(H)),
//        MLP = Linear(d_in, hidden) -> act -> Linear(hidden, d_out): two maps with bias.
//   MLP: H' = H W^T + b, ignores edges.
// Between layers: activation (relu or tanh); the last layer gives logits. Dropout (keyed by
// node, dropout.h) is applied to the input of every layer in training, never in inference.
// Loss: single-label softmax cross-entropy or multi-label sigmoid BCE, SUMMED over the roots
// (per-example losses; DP-SGD divides by the batch size after noising, optimizer.h).
//
// Parameters are leaf tensors that alias one contiguous flat buffer [P] in a fixed order
// (layer by layer, names like "layers.0.weight"), so the trainer all-reduces one buffer and
// the optimiser updates the flat buffer in place. Initialisation is deterministic: weights
// Glorot-uniform (as Kipf & Welling), biases zero, drawn on the CPU from a generator seeded
// with init_seed (the same values on every device and every rank).
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "dpgnn/model/batch.h"
#include "dpgnn/model/dropout.h"
#include "dpgnn/model/graph_block.h"
#include "dpgnn/model/spmm.h"

namespace dpgnn::model {

enum class Arch { kGcn, kSage, kGin, kMlp };
enum class Activation { kRelu, kTanh };

// "gcn", "sage", "gin", "mlp" / "relu", "tanh"; UsageError naming the key otherwise.
Arch parse_arch(const std::string& name);
std::string arch_name(Arch arch);
Activation parse_activation(const std::string& name);
std::string activation_name(Activation activation);

struct ModelConfig {
  Arch arch = Arch::kGcn;
  int layers = 2;            // 1..3 GNN layers (the last one outputs the logits)
  int hidden = 256;          // width of hidden layers (and of GIN's inner MLP)
  int in_features = 0;       // F
  int num_classes = 0;       // C
  Activation activation = Activation::kRelu;
  double dropout = 0.0;      // in [0, 1)
  bool multilabel = false;   // sigmoid BCE over C labels instead of softmax cross-entropy
  bool bias = true;          // a bias per linear map; false (mlp only): x W^T, no bias parameter
  // Throws UsageError naming "model.<key>" and the allowed range.
  void validate() const;
};

// One linear map of a training forward pass (see the top comment).
struct LinearMapRecord {
  int layer = 0;
  int weight = -1;    // index of W [d_out, d_in] in parameters(), -1 for a bias-only map
  int bias = -1;      // index of b [d_out], -1 when the map has no bias
  at::Tensor input;   // A [n, d_in] (undefined for a bias-only map)
  at::Tensor output;  // Z [n, d_out]: the tensor whose gradient G is taken
};

struct TrainForward {
  at::Tensor loss_sum;     // [] summed over the batch's roots (or loss_rows)
  at::Tensor root_logits;  // [B, C] ([K, C] with loss_rows)
  std::vector<LinearMapRecord> maps;
};

class Gnn {
 public:
  Gnn(const ModelConfig& config, std::uint64_t init_seed, c10::Device device = c10::kCPU,
      c10::ScalarType dtype = c10::ScalarType::Float);

  const ModelConfig& config() const { return config_; }
  c10::Device device() const { return flat_.device(); }
  c10::ScalarType dtype() const { return flat_.scalar_type(); }
  int num_layers() const { return config_.layers; }
  std::int64_t layer_in_dim(int layer) const;   // d_l
  std::int64_t layer_out_dim(int layer) const;  // d_{l+1}

  // ---- parameters -------------------------------------------------------------------------
  std::int64_t num_parameters() const { return flat_.numel(); }  // P scalars
  const std::vector<std::string>& parameter_names() const { return names_; }
  const std::vector<at::Tensor>& parameters() const { return params_; }
  const std::vector<std::int64_t>& parameter_offsets() const { return offsets_; }
  const std::vector<int>& parameter_layers() const { return layer_of_; }
  // [P] contiguous storage aliased by parameters(); update it under NoGradGuard.
  const at::Tensor& flat_parameters() const { return flat_; }
  at::Tensor flatten() const;                 // copy of the flat parameters [P]
  void unflatten(const at::Tensor& flat);     // copies [P] into the parameters
  // Views of a flat [P] buffer, shaped like the parameters (same order).
  std::vector<at::Tensor> split_flat(const at::Tensor& flat) const;

  // ---- training -----------------------------------------------------------------------------
  // Forward over a batch with dropout (when config.dropout > 0) keyed by (key, layer,
  // node_key, feature). Records the linear maps when record_maps is true.
  TrainForward forward_train(const Batch& batch, const DropoutKey& key, bool record_maps) const;
  // Summed loss of root logits [B, C] against y ([B] int64 or [B, C] float).
  at::Tensor loss(const at::Tensor& root_logits, const at::Tensor& y) const;

  // ---- inference ----------------------------------------------------------------------------
  // One layer without dropout or autograd: h_in [num_src, d_l] -> [num_dst, d_{l+1}];
  // activation applied except after the last layer, which returns logits.
  at::Tensor layer_forward(int layer, const at::Tensor& h_in, const GraphBlock& block) const;
  // The same layer over a rank's CSR rows (full-neighbourhood inference at scale):
  // h_local [n_rows, d_l] -> [n_rows, d_{l+1}]. `degrees` [num_cols] are the full-graph
  // degrees of the columns (local rows first, then the halo). `halo(t)` returns the halo
  // rows [num_cols - n_rows, t.size(1)] of a per-node matrix t [n_rows, *] (a collective
  // exchange: called the same number of times, at most once, on every rank). The layer
  // aggregates in the cheaper order: A (H W) when the layer narrows (d_{l+1} <= d_l: the
  // exchange and the product run at the output width), else (A H) W. No per-entry message
  // is ever built (spmm.h), so memory is O(nodes x width), never O(entries x width).
  using HaloExchange = std::function<at::Tensor(const at::Tensor&)>;
  at::Tensor layer_forward_csr(int layer, const at::Tensor& h_local, const CsrAdjacency& adj,
                               const at::Tensor& degrees, const HaloExchange& halo) const;
  // All layers on one block with num_dst == num_src (single-shard inference): logits [n, C].
  at::Tensor forward_full(const at::Tensor& x, const GraphBlock& block) const;
  // Predictions from logits: [N] int64 argmax (single-label) or [N, C] int64 0/1 (logit > 0).
  at::Tensor predict(const at::Tensor& logits) const;

 private:
  at::Tensor apply_layer(int layer, const at::Tensor& h_src, const GraphBlock& block,
                         std::vector<LinearMapRecord>* maps) const;
  int add_parameter(const std::string& name, std::vector<std::int64_t> shape, int layer);

  ModelConfig config_;
  at::Tensor flat_;
  std::vector<std::string> names_;
  std::vector<at::Tensor> params_;
  std::vector<std::int64_t> offsets_;
  std::vector<int> layer_of_;
  // Per layer: parameter indices in the order the layer uses them (-1 = absent).
  struct LayerParams {
    int w = -1, b = -1;            // GCN, MLP, SAGE self weight + bias, GIN first linear
    int w_neigh = -1;              // SAGE neighbour weight
    int w2 = -1, b2 = -1;          // GIN second linear
  };
  std::vector<LayerParams> layer_params_;
};

}  // namespace dpgnn::model
