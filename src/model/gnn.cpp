// GCN, GraphSAGE-mean, GIN and MLP over batches of disjoint subgraphs (see gnn.h).
//
// A batch's aggregation is one sparse-dense product (SpMM) of the block's adjacency and the
// node features, so memory is O(edges) for the matrix plus the dense inputs and outputs, never
// a gathered message per edge (O(edges x width); DESIGN.md 11). On the CPU it is one row
// kernel over the block's CSR with its own backward (block_spmm.h); on other devices
// LibTorch's sparse mm of a COO matrix [num_dst, num_src] with one value per edge (cuSPARSE
// on CUDA). Full-neighbourhood inference uses the CSR kernel of spmm.h instead.
#include "dpgnn/model/gnn.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>  // c10::NoGradGuard: LibTorch 2.x has no at:: alias in ATen.h
#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <optional>

#include "block_spmm.h"
#include "dpgnn/util/error.h"

namespace dpgnn::model {
namespace {

at::Tensor activate(const at::Tensor& h, Activation a) {
  return a == Activation::kRelu ? at::relu(h) : at::tanh(h);
}

// [E] float weights of the GCN messages src -> dst: (d_dst + 1)^-1/2 (d_src + 1)^-1/2
// (Kipf & Welling 2017, eq. 2 with A + I, so every degree counts the self loop).
at::Tensor gcn_edge_weights(const GraphBlock& b, c10::ScalarType dtype) {
  const at::Tensor inv_dst = (b.deg_dst.to(dtype) + 1.0).rsqrt();
  const at::Tensor inv_src = (b.deg_src.to(dtype) + 1.0).rsqrt();
  return inv_dst.index_select(0, b.dst) * inv_src.index_select(0, b.src);
}

// A [num_dst, num_src] with A[dst_e, src_e] = values[e]: the block's adjacency as a sparse
// matrix, so that aggregation is one SpMM. Coalesced (sorted by (dst, src)): the product
// sums each row's entries in one fixed order, whatever the device's kernel.
at::Tensor block_adjacency(const GraphBlock& b, const at::Tensor& values) {
  const at::Tensor indices = at::stack({b.dst, b.src});  // [2, E] int64
  return at::sparse_coo_tensor(indices, values, {b.num_dst, b.num_src}).coalesce();
}

// D^-1/2 (A+I) D^-1/2 z restricted to the block: z [num_src, d] -> [num_dst, d].
at::Tensor gcn_aggregate(const at::Tensor& z, const GraphBlock& b) {
  const at::Tensor self_w = (b.deg_dst.to(z.scalar_type()) + 1.0).reciprocal();  // [num_dst]
  // CPU: one row kernel over the block's CSR, self term included (block_spmm.h).
  if (detail::block_kernel_applies(z)) {
    return detail::block_aggregate(z, detail::CsrScope::csr_of(b), gcn_edge_weights(b, z.scalar_type()), self_w);
  }
  at::Tensor out = z.narrow(0, 0, b.num_dst) * self_w.unsqueeze(1);
  if (b.num_edges() == 0) return out;
  return out + at::mm(block_adjacency(b, gcn_edge_weights(b, z.scalar_type())), z);  // [num_dst, d]
}

// sum over in-neighbours: h [num_src, d] -> [num_dst, d].
at::Tensor sum_aggregate(const at::Tensor& h, const GraphBlock& b) {
  if (detail::block_kernel_applies(h)) {
    return detail::block_aggregate(h, detail::CsrScope::csr_of(b), at::Tensor(), at::Tensor());
  }
  if (b.num_edges() == 0) return at::zeros({b.num_dst, h.size(1)}, h.options());
  return at::mm(block_adjacency(b, at::ones({b.num_edges()}, h.options())), h);
}

// mean over in-neighbours (0 for a node without neighbours), divided by deg_dst.
at::Tensor mean_aggregate(const at::Tensor& h, const GraphBlock& b) {
  const at::Tensor inv = b.deg_dst.to(h.scalar_type()).clamp_min(1.0).reciprocal();
  return sum_aggregate(h, b) * inv.unsqueeze(1);
}

}  // namespace

Arch parse_arch(const std::string& name) {
  if (name == "gcn") return Arch::kGcn;
  if (name == "sage" || name == "graphsage") return Arch::kSage;
  if (name == "gin") return Arch::kGin;
  if (name == "mlp") return Arch::kMlp;
  throw UsageError("model.arch: unknown architecture '" + name + "' (expected gcn, sage, gin or mlp)");
}

std::string arch_name(Arch arch) {
  switch (arch) {
    case Arch::kGcn: return "gcn";
    case Arch::kSage: return "sage";
    case Arch::kGin: return "gin";
    case Arch::kMlp: return "mlp";
  }
  return "?";
}

Activation parse_activation(const std::string& name) {
  if (name == "relu") return Activation::kRelu;
  if (name == "tanh") return Activation::kTanh;
  throw UsageError("model.activation: unknown activation '" + name + "' (expected relu or tanh)");
}

std::string activation_name(Activation a) { return a == Activation::kRelu ? "relu" : "tanh"; }

void ModelConfig::validate() const {
  if (layers < 1 || layers > 3) {
    throw UsageError("model.layers: must be 1, 2 or 3, got " + std::to_string(layers));
  }
  if (hidden < 1) throw UsageError("model.hidden: must be >= 1, got " + std::to_string(hidden));
  if (in_features < 1) {
    throw UsageError("model.in_features: must be >= 1, got " + std::to_string(in_features));
  }
  if (num_classes < 1) {
    throw UsageError("model.num_classes: must be >= 1, got " + std::to_string(num_classes));
  }
  if (!bias && arch != Arch::kMlp) {
    throw UsageError("model.bias: false is offered for the mlp architecture only (dp-mlp, mlp, dpar), got " +
                     arch_name(arch));
  }
  if (!(dropout >= 0.0 && dropout < 1.0)) {
    throw UsageError("model.dropout: must be in [0, 1), got " + std::to_string(dropout));
  }
}

std::int64_t Gnn::layer_in_dim(int layer) const {
  return layer == 0 ? config_.in_features : config_.hidden;
}

std::int64_t Gnn::layer_out_dim(int layer) const {
  return layer == config_.layers - 1 ? config_.num_classes : config_.hidden;
}

int Gnn::add_parameter(const std::string& name, std::vector<std::int64_t> shape, int layer) {
  const std::int64_t offset = offsets_.empty() ? 0 : offsets_.back() + params_.back().numel();
  names_.push_back(name);
  offsets_.push_back(offset);
  layer_of_.push_back(layer);
  // Placeholder with the right shape; re-pointed at flat_ once all shapes are known.
  params_.push_back(at::empty(shape, at::TensorOptions().dtype(at::kDouble)));
  return static_cast<int>(params_.size()) - 1;
}

Gnn::Gnn(const ModelConfig& config, std::uint64_t init_seed, c10::Device device,
         c10::ScalarType dtype)
    : config_(config) {
  config_.validate();
  if (!at::isFloatingType(dtype)) throw UsageError("model dtype must be floating point");
  const int L = config_.layers;
  layer_params_.resize(static_cast<std::size_t>(L));
  for (int l = 0; l < L; ++l) {
    const std::int64_t din = layer_in_dim(l), dout = layer_out_dim(l);
    const std::string p = "layers." + std::to_string(l) + ".";
    LayerParams& lp = layer_params_[static_cast<std::size_t>(l)];
    switch (config_.arch) {
      case Arch::kGcn:
      case Arch::kMlp:
        lp.w = add_parameter(p + "weight", {dout, din}, l);
        if (config_.bias) lp.b = add_parameter(p + "bias", {dout}, l);  // validate(): no bias only for mlp
        break;
      case Arch::kSage:
        lp.w = add_parameter(p + "lin_self.weight", {dout, din}, l);
        lp.b = add_parameter(p + "lin_self.bias", {dout}, l);
        lp.w_neigh = add_parameter(p + "lin_neigh.weight", {dout, din}, l);
        break;
      case Arch::kGin:
        lp.w = add_parameter(p + "mlp.0.weight", {config_.hidden, din}, l);
        lp.b = add_parameter(p + "mlp.0.bias", {config_.hidden}, l);
        lp.w2 = add_parameter(p + "mlp.1.weight", {dout, config_.hidden}, l);
        lp.b2 = add_parameter(p + "mlp.1.bias", {dout}, l);
        break;
    }
  }
  const std::int64_t P = offsets_.back() + params_.back().numel();
  // Deterministic init on the CPU in float64, then cast and move: identical on every device.
  auto gen = at::detail::createCPUGenerator(init_seed);
  at::Tensor host = at::zeros({P}, at::TensorOptions().dtype(at::kDouble));
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].dim() != 2) continue;  // biases stay 0
    const double fan_out = static_cast<double>(params_[i].size(0));
    const double fan_in = static_cast<double>(params_[i].size(1));
    const double bound = std::sqrt(6.0 / (fan_in + fan_out));  // Glorot & Bengio 2010
    host.narrow(0, offsets_[i], params_[i].numel()).uniform_(-bound, bound, gen);
  }
  flat_ = host.to(device, dtype);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    // A leaf that shares flat_'s memory: in-place updates of flat_ are seen by the model.
    params_[i] = flat_.narrow(0, offsets_[i], params_[i].numel())
                     .view(params_[i].sizes())
                     .detach()
                     .requires_grad_(true);
  }
}

at::Tensor Gnn::flatten() const { return flat_.clone(); }

void Gnn::unflatten(const at::Tensor& flat) {
  if (flat.dim() != 1 || flat.numel() != flat_.numel()) {
    throw DataError("model parameters", "", "expected a flat buffer of " +
                                                std::to_string(flat_.numel()) + " values, got " +
                                                std::to_string(flat.numel()));
  }
  c10::NoGradGuard no_grad;
  flat_.copy_(flat);
}

std::vector<at::Tensor> Gnn::split_flat(const at::Tensor& flat) const {
  std::vector<at::Tensor> out;
  out.reserve(params_.size());
  for (std::size_t i = 0; i < params_.size(); ++i) {
    out.push_back(flat.narrow(0, offsets_[i], params_[i].numel()).view(params_[i].sizes()));
  }
  return out;
}

at::Tensor Gnn::apply_layer(int l, const at::Tensor& h_src, const GraphBlock& block,
                            std::vector<LinearMapRecord>* maps) const {
  const LayerParams& lp = layer_params_[static_cast<std::size_t>(l)];
  const at::Tensor h_dst = h_src.narrow(0, 0, block.num_dst);  // [num_dst, d_in]
  auto record = [&](int w, int b, const at::Tensor& a, const at::Tensor& z) {
    if (maps != nullptr) maps->push_back(LinearMapRecord{l, w, b, a, z});
  };
  auto W = [&](int i) { return params_[static_cast<std::size_t>(i)]; };
  at::Tensor out;
  switch (config_.arch) {
    case Arch::kGcn: {
      // Transform first (one map per node: H -> H W^T), then aggregate; the bias is added
      // after aggregation, so it is its own (bias-only) map.
      const at::Tensor z = at::mm(h_src, W(lp.w).t());  // [num_src, d_out]
      record(lp.w, -1, h_src, z);
      out = gcn_aggregate(z, block) + W(lp.b);          // [num_dst, d_out]
      record(-1, lp.b, at::Tensor(), out);
      break;
    }
    case Arch::kSage: {
      const at::Tensor z_self = at::addmm(W(lp.b), h_dst, W(lp.w).t());  // [num_dst, d_out]
      record(lp.w, lp.b, h_dst, z_self);
      const at::Tensor m = mean_aggregate(h_src, block);                  // [num_dst, d_in]
      const at::Tensor z_neigh = at::mm(m, W(lp.w_neigh).t());            // [num_dst, d_out]
      record(lp.w_neigh, -1, m, z_neigh);
      out = z_self + z_neigh;
      break;
    }
    case Arch::kGin: {
      const at::Tensor s = h_dst + sum_aggregate(h_src, block);  // (1 + eps) h + sum, eps = 0
      const at::Tensor z1 = at::addmm(W(lp.b), s, W(lp.w).t());  // [num_dst, hidden]
      record(lp.w, lp.b, s, z1);
      const at::Tensor a1 = activate(z1, config_.activation);
      const at::Tensor z2 = at::addmm(W(lp.b2), a1, W(lp.w2).t());  // [num_dst, d_out]
      record(lp.w2, lp.b2, a1, z2);
      out = z2;
      break;
    }
    case Arch::kMlp: {
      // lp.b is -1 without a bias (model.bias: false): the map records no bias.
      out = lp.b >= 0 ? at::addmm(W(lp.b), h_dst, W(lp.w).t()) : at::mm(h_dst, W(lp.w).t());  // [num_dst, d_out]
      record(lp.w, lp.b, h_dst, out);
      break;
    }
  }
  if (l < config_.layers - 1) out = activate(out, config_.activation);
  return out;
}

TrainForward Gnn::forward_train(const Batch& batch, const DropoutKey& key, bool record_maps) const {
  TrainForward out;
  if (batch.x.size(1) != config_.in_features) {
    throw DataError("batch", "x", "has " + std::to_string(batch.x.size(1)) +
                                      " features, the model expects " +
                                      std::to_string(config_.in_features));
  }
  // The block's CSR once for every layer's aggregation (CPU; block_spmm.h).
  std::optional<detail::CsrScope> csr;
  if (detail::block_kernel_applies(batch.x)) csr.emplace(batch.block);
  at::Tensor h = batch.x;  // [n, F]
  for (int l = 0; l < config_.layers; ++l) {
    h = keyed_dropout(h, batch.node_key, config_.dropout, key, l);
    h = apply_layer(l, h, batch.block, record_maps ? &out.maps : nullptr);  // [n, d_{l+1}]
  }
  out.root_logits = h.index_select(0, batch.loss_rows.defined() ? batch.loss_rows : batch.root);  // [B or K, C]
  out.loss_sum = loss(out.root_logits, batch.y);
  return out;
}

at::Tensor Gnn::loss(const at::Tensor& root_logits, const at::Tensor& y) const {
  if (config_.multilabel) {
    return at::binary_cross_entropy_with_logits(root_logits, y.to(root_logits.scalar_type()), {},
                                                {}, at::Reduction::Sum);
  }
  return at::nll_loss(at::log_softmax(root_logits, 1), y, {}, at::Reduction::Sum);
}

at::Tensor Gnn::layer_forward(int layer, const at::Tensor& h_in, const GraphBlock& block) const {
  if (layer < 0 || layer >= config_.layers) {
    throw UsageError("layer_forward: layer " + std::to_string(layer) + " outside [0, " +
                     std::to_string(config_.layers) + ")");
  }
  if (h_in.dim() != 2 || h_in.size(0) != block.num_src || h_in.size(1) != layer_in_dim(layer)) {
    throw DataError("layer_forward", "h_in",
                    "expected [" + std::to_string(block.num_src) + ", " +
                        std::to_string(layer_in_dim(layer)) + "], got [" +
                        std::to_string(h_in.size(0)) + ", " +
                        std::to_string(h_in.dim() > 1 ? h_in.size(1) : 0) + "]");
  }
  c10::NoGradGuard no_grad;
  return apply_layer(layer, h_in, block, nullptr);
}

at::Tensor Gnn::layer_forward_csr(int layer, const at::Tensor& h, const CsrAdjacency& adj,
                                  const at::Tensor& degrees, const HaloExchange& halo) const {
  if (layer < 0 || layer >= config_.layers) {
    throw UsageError("layer_forward_csr: layer " + std::to_string(layer) + " outside [0, " +
                     std::to_string(config_.layers) + ")");
  }
  if (h.dim() != 2 || h.size(0) != adj.num_rows || h.size(1) != layer_in_dim(layer)) {
    throw DataError("layer_forward_csr", "h_local",
                    "expected [" + std::to_string(adj.num_rows) + ", " +
                        std::to_string(layer_in_dim(layer)) + "]");
  }
  if (degrees.dim() != 1 || degrees.size(0) != adj.num_cols) {
    throw DataError("layer_forward_csr", "degrees", "expected one degree per column");
  }
  c10::NoGradGuard no_grad;
  const LayerParams& lp = layer_params_[static_cast<std::size_t>(layer)];
  auto W = [&](int i) { return params_[static_cast<std::size_t>(i)]; };
  const at::Tensor deg = degrees.to(h.options());
  const at::Tensor deg_rows = deg.narrow(0, 0, adj.num_rows);
  // Transform first when the layer does not widen: A (H W^T) == (A H) W^T, and the halo
  // exchange and the SpMM then run at the narrower width.
  auto aggregate_then_map = [&](const std::function<at::Tensor(const at::Tensor&)>& agg,
                                const at::Tensor& w) {
    if (w.size(0) <= w.size(1)) return agg(at::mm(h, w.t()));
    return at::mm(agg(h), w.t());
  };
  at::Tensor out;
  switch (config_.arch) {
    case Arch::kGcn: {
      // D^-1/2 (A+I) D^-1/2 with full-graph degrees (Kipf & Welling 2017, eq. 2), as gcn_aggregate.
      const at::Tensor inv_sqrt = (deg + 1.0).rsqrt();
      const at::Tensor self_w = (deg_rows + 1.0).reciprocal().unsqueeze(1);
      auto agg = [&](const at::Tensor& t) {
        at::Tensor a = csr_spmm(adj, t, halo(t), inv_sqrt, inv_sqrt.narrow(0, 0, adj.num_rows));
        return a.add_(t * self_w);
      };
      out = aggregate_then_map(agg, W(lp.w)).add_(W(lp.b));
      break;
    }
    case Arch::kSage: {
      const at::Tensor inv = deg_rows.clamp_min(1.0).reciprocal();
      auto agg = [&](const at::Tensor& t) { return csr_spmm(adj, t, halo(t), at::Tensor(), inv); };
      out = at::addmm(W(lp.b), h, W(lp.w).t()).add_(aggregate_then_map(agg, W(lp.w_neigh)));
      break;
    }
    case Arch::kGin: {
      // (h + sum_N h) W1^T == h W1^T + sum_N (h W1^T).
      auto agg = [&](const at::Tensor& t) {
        return csr_spmm(adj, t, halo(t), at::Tensor(), at::Tensor()).add_(t);
      };
      const at::Tensor z1 = aggregate_then_map(agg, W(lp.w)).add_(W(lp.b));
      out = at::addmm(W(lp.b2), activate(z1, config_.activation), W(lp.w2).t());
      break;
    }
    case Arch::kMlp:
      out = lp.b >= 0 ? at::addmm(W(lp.b), h, W(lp.w).t()) : at::mm(h, W(lp.w).t());
      break;
  }
  // In place: `out` is this layer's own buffer, [n_rows, d_{l+1}] is the largest one.
  if (layer < config_.layers - 1) config_.activation == Activation::kRelu ? out.relu_() : out.tanh_();
  return out;
}

at::Tensor Gnn::forward_full(const at::Tensor& x, const GraphBlock& block) const {
  if (block.num_dst != block.num_src) {
    throw DataError("forward_full", "block", "needs num_dst == num_src (use layer_forward with halos)");
  }
  at::Tensor h = x;
  for (int l = 0; l < config_.layers; ++l) h = layer_forward(l, h, block);
  return h;
}

at::Tensor Gnn::predict(const at::Tensor& logits) const {
  if (config_.multilabel) return logits.gt(0).to(at::kLong);
  return logits.argmax(1);
}

}  // namespace dpgnn::model
