// The naive per-sample oracle: one forward + backward per subgraph, then norms and the
// clipped sum by hand. It shares nothing with the clipping engine but the model's forward:
// per-sample gradients come from autograd w.r.t. the PARAMETERS of a batch that holds one
// subgraph only. Used by tests/model and by bench/bench_clipping.cpp (--mode naive); never by
// the library (DESIGN.md decision 10).
#pragma once

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>  // c10::NoGradGuard: LibTorch 2.x has no at:: alias in ATen.h
#include <torch/csrc/autograd/autograd.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "dpgnn/model/batch.h"
#include "dpgnn/model/clipping.h"
#include "dpgnn/model/gnn.h"

namespace dpgnn::model::testing {

struct OracleResult {
  std::vector<at::Tensor> per_sample;  // [P] gradient of each subgraph (when kept)
  at::Tensor norms;                    // [B]
  at::Tensor layer_norms;              // [B, L]
  at::Tensor clipped_sum;              // [P]
  at::Tensor sum;                      // [P] unclipped
  double loss_sum = 0.0;
};

inline OracleResult naive_per_sample(const Gnn& model, const Batch& batch, const DropoutKey& key,
                                     const ClipConfig& clip, bool keep_per_sample = true) {
  const std::int64_t B = batch.num_subgraphs();
  const int L = model.num_layers();
  const auto& params = model.parameters();
  const auto& layer_of = model.parameter_layers();
  OracleResult r;
  const auto opt = model.flat_parameters().options();
  r.clipped_sum = at::zeros({model.num_parameters()}, opt);
  r.sum = at::zeros({model.num_parameters()}, opt);
  r.norms = at::zeros({B}, at::TensorOptions().dtype(at::kDouble));
  r.layer_norms = at::zeros({B, L}, at::TensorOptions().dtype(at::kDouble));
  for (std::int64_t s = 0; s < B; ++s) {
    const Batch one = select_subgraphs(batch, {s});
    c10::AutoGradMode grad_on(true);
    const TrainForward fw = model.forward_train(one, key, false);
    const std::vector<at::Tensor> g = torch::autograd::grad({fw.loss_sum}, params, {}, false, false, true);
    r.loss_sum += fw.loss_sum.item<double>();
    c10::NoGradGuard no_grad;
    std::vector<at::Tensor> flat_parts;
    std::vector<double> layer_sq(static_cast<std::size_t>(L), 0.0);
    for (std::size_t i = 0; i < g.size(); ++i) {
      const at::Tensor gi = g[i].defined() ? g[i].reshape(-1) : at::zeros({params[i].numel()}, opt);
      flat_parts.push_back(gi);
      layer_sq[static_cast<std::size_t>(layer_of[i])] += gi.to(at::kDouble).pow(2).sum().item<double>();
    }
    const at::Tensor gs = at::cat(flat_parts);  // [P]
    double total = 0.0;
    for (int l = 0; l < L; ++l) {
      r.layer_norms[s][l] = std::sqrt(layer_sq[static_cast<std::size_t>(l)]);
      total += layer_sq[static_cast<std::size_t>(l)];
    }
    r.norms[s] = std::sqrt(total);
    r.sum += gs;
    // clip(g_s): scale the whole vector (flat) or each layer's block (per-layer).
    at::Tensor clipped = gs.clone();
    if (clip.mode == ClipMode::kFlat) {
      const double norm = std::sqrt(total);
      if (norm > clip.clip_norm) clipped *= clip.clip_norm / norm;
    } else {
      std::int64_t off = 0;
      for (std::size_t i = 0; i < params.size(); ++i) {
        const int l = layer_of[i];
        const double norm = std::sqrt(layer_sq[static_cast<std::size_t>(l)]);
        const double c = clip.layer_clip_norms[static_cast<std::size_t>(l)];
        if (norm > c) clipped.narrow(0, off, params[i].numel()).mul_(c / norm);
        off += params[i].numel();
      }
    }
    r.clipped_sum += clipped;
    if (keep_per_sample) r.per_sample.push_back(gs);
  }
  return r;
}

}  // namespace dpgnn::model::testing
