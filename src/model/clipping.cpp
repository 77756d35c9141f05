// Ghost-norm + book-keeping per-subgraph clipping (see include/dpgnn/model/clipping.h).
//
// One step:
//  1. forward over the batch, recording every linear map (A, Z)            (gnn.cpp)
//  2. ONE autograd pass: G = dLoss/dZ for all maps (not dLoss/dW: the weight-gradient
//     matmuls of the backward are skipped and done once, weighted, in step 4)
//  3. per-subgraph squared norms:
//     CPU (NormKernel::kSegment, segment_norms.h): one parallel loop over the subgraphs, each
//       map's ghost norm from the subgraph's contiguous rows of A and G, in place;
//     other devices (kSizeClass): per map, per size class of subgraphs (padded, see SizeBucket):
//       size 1:      ||a||^2 ||g||^2                    (+ ||g||^2 for a bias)
//       ghost:       <A_s A_s^T (+ 1 1^T), G_s G_s^T>  via two bmm on [B_c, S, d]
//       materialise: ||A_s^T G_s||_F^2 via bmm on [chunk, d_in, d_out] (when
//                    S (d_in + d_out) > d_in d_out, i.e. tiny layers and big subgraphs)
//       bias-only map: ||sum_{i in s} g_i||^2 via a segment sum.
//  4. factors c_s = min(1, C / ||g_s||) (1 when ||g_s|| = 0), c per node, and the clipped sum
//     straight into the flat buffer: dW = (c * G)^T A, db = G^T c          (Bu et al. 2023)
#include "dpgnn/model/clipping.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>  // c10::NoGradGuard: LibTorch 2.x has no at:: alias in ATen.h
#include <torch/csrc/autograd/autograd.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <string>

#include "dpgnn/util/error.h"
#include "segment_norms.h"

namespace dpgnn::model {
namespace {

using detail::use_ghost;

// Subgraphs grouped into size classes {1}, {2}, {3,4}, {5..8}, {9..16}, ... and padded to the
// largest size present in their class, so that every class is one dense [B_c, S, d] block:
// few, large kernels (each kernel costs a thread-pool barrier on CPU and a launch on GPU)
// for at most 2x padding of the (cheap) Gram products. A padded slot repeats a real row of
// its subgraph in A and is zeroed in G, so it adds nothing to <A A^T, G G^T> or to A^T G.
struct SizeBucket {
  std::int64_t size = 0;         // S: padded subgraph size of the class
  std::int64_t count = 0;        // B_c
  at::Tensor subgraphs;          // [B_c] int64 subgraph ids
  at::Tensor rows;               // [B_c * S] int64 row ids, subgraph by subgraph
  at::Tensor pad_mask;           // [B_c * S, 1] 1 for real rows, 0 for padding; undefined if none
  std::int64_t first_row = -1;   // >= 0 when the rows are one contiguous range (no gather)
};

struct BatchLayout {
  at::Tensor segment;  // [n] int64: subgraph of each row
  std::vector<SizeBucket> buckets;
};

std::int64_t size_class(std::int64_t k) {
  std::int64_t c = 1;
  while (c < k) c *= 2;
  return c;
}

BatchLayout make_layout(const Batch& batch, c10::ScalarType dtype, bool with_buckets) {
  const c10::Device device = batch.device();
  const at::Tensor ptr = batch.node_ptr.cpu();
  const auto* p = ptr.data_ptr<std::int64_t>();
  const std::int64_t B = batch.num_subgraphs();
  const std::int64_t n = batch.num_nodes();
  std::vector<std::int64_t> segment(static_cast<std::size_t>(n));
  std::int64_t max_class = 1;
  for (std::int64_t s = 0; s < B; ++s) {
    for (std::int64_t r = p[s]; r < p[s + 1]; ++r) segment[static_cast<std::size_t>(r)] = s;
    max_class = std::max(max_class, size_class(p[s + 1] - p[s]));
  }
  std::vector<std::vector<std::int64_t>> subs(static_cast<std::size_t>(max_class + 1));
  for (std::int64_t s = 0; s < B; ++s) subs[static_cast<std::size_t>(size_class(p[s + 1] - p[s]))].push_back(s);

  const auto i64 = at::TensorOptions().dtype(at::kLong);
  BatchLayout layout;
  layout.segment = at::tensor(at::ArrayRef<std::int64_t>(segment), i64).to(device);
  if (!with_buckets) return layout;
  for (std::int64_t c = 1; c <= max_class; c *= 2) {
    const auto& ids = subs[static_cast<std::size_t>(c)];
    if (ids.empty()) continue;
    std::int64_t S = 0;
    bool uniform = true;
    for (std::int64_t s : ids) {
      const std::int64_t k = p[s + 1] - p[s];
      if (S != 0 && k != S) uniform = false;
      S = std::max(S, k);
    }
    std::vector<std::int64_t> rows;
    std::vector<float> mask;
    rows.reserve(ids.size() * static_cast<std::size_t>(S));
    bool contiguous = uniform;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      if (i > 0 && p[ids[i]] != p[ids[i - 1]] + S) contiguous = false;
      for (std::int64_t j = 0; j < S; ++j) {
        const bool real = p[ids[i]] + j < p[ids[i] + 1];
        rows.push_back(real ? p[ids[i]] + j : p[ids[i]]);
        mask.push_back(real ? 1.0f : 0.0f);
      }
    }
    SizeBucket b;
    b.size = S;
    b.count = static_cast<std::int64_t>(ids.size());
    b.subgraphs = at::tensor(at::ArrayRef<std::int64_t>(ids), i64).to(device);
    b.rows = at::tensor(at::ArrayRef<std::int64_t>(rows), i64).to(device);
    if (!uniform) {
      b.pad_mask = at::tensor(at::ArrayRef<float>(mask), at::TensorOptions().dtype(at::kFloat))
                       .to(device, dtype)
                       .unsqueeze(1);
    }
    b.first_row = contiguous ? p[ids.front()] : -1;
    layout.buckets.push_back(std::move(b));
  }
  return layout;
}

// Rows of one bucket as [B_c, S, d] (a view when the rows are contiguous); padded slots are
// zeroed when zero_padding is set (for G).
at::Tensor bucket_rows(const at::Tensor& t, const SizeBucket& b, bool zero_padding) {
  if (b.first_row >= 0) return t.narrow(0, b.first_row, b.count * b.size).view({b.count, b.size, t.size(1)});
  at::Tensor g = t.index_select(0, b.rows);  // [B_c * S, d]
  if (zero_padding && b.pad_mask.defined()) g.mul_(b.pad_mask);
  return g.view({b.count, b.size, t.size(1)});
}

// Adds the per-subgraph squared gradient norm of one map's parameters to norms2 [B].
void accumulate_map_norms(const LinearMapRecord& map, const at::Tensor& G, const BatchLayout& layout,
                          at::Tensor& norms2, const ClipOptions& options) {
  const std::int64_t B = norms2.size(0);
  if (!map.input.defined()) {
    // Bias-only map: the subgraph's bias gradient is the sum of its rows of G.
    const at::Tensor per_sub = at::zeros({B, G.size(1)}, G.options()).index_add_(0, layout.segment, G);
    norms2.add_(per_sub.pow(2).sum(1));
    return;
  }
  const at::Tensor& A = map.input;  // [n, din]
  const bool has_weight = map.weight >= 0;
  const bool has_bias = map.bias >= 0;
  const std::int64_t din = A.size(1), dout = G.size(1);
  for (const SizeBucket& b : layout.buckets) {
    const at::Tensor Ab = bucket_rows(A, b, false);  // [B_c, S, din]
    const at::Tensor Gb = bucket_rows(G, b, true);   // [B_c, S, dout], padding zeroed
    at::Tensor n2;                            // [B_c]
    if (b.size == 1) {
      const at::Tensor g2 = Gb.squeeze(1).pow(2).sum(1);
      n2 = has_weight ? Ab.squeeze(1).pow(2).sum(1) * g2 : at::zeros_like(g2);
      if (has_bias) n2.add_(g2);
    } else if (use_ghost(b.size, din, dout, options.strategy)) {
      at::Tensor gram_a = has_weight ? at::bmm(Ab, Ab.transpose(1, 2))  // [B_c, S, S]
                                     : at::zeros({b.count, b.size, b.size}, A.options());
      if (has_bias) gram_a.add_(1.0);  // the bias is a weight on a constant-1 input column
      const at::Tensor gram_g = at::bmm(Gb, Gb.transpose(1, 2));  // [B_c, S, S]
      // <gram_a, gram_g> per subgraph as one batched dot product [B_c, 1, S*S] x [B_c, S*S, 1]
      n2 = at::bmm(gram_a.view({b.count, 1, b.size * b.size}),
                   gram_g.view({b.count, b.size * b.size, 1}))
               .view({b.count});
    } else {
      const std::int64_t chunk =
          std::max<std::int64_t>(1, options.materialize_chunk_elements / std::max<std::int64_t>(1, din * dout));
      std::vector<at::Tensor> parts;
      for (std::int64_t c0 = 0; c0 < b.count; c0 += chunk) {
        const std::int64_t len = std::min(chunk, b.count - c0);
        const at::Tensor Ac = Ab.narrow(0, c0, len), Gc = Gb.narrow(0, c0, len);
        at::Tensor part = has_weight
                              ? at::bmm(Ac.transpose(1, 2), Gc).pow(2).sum({1, 2})  // [len]
                              : at::zeros({len}, G.options());
        if (has_bias) part.add_(Gc.sum(1).pow(2).sum(1));
        parts.push_back(part);
      }
      n2 = at::cat(parts);
    }
    norms2.index_add_(0, b.subgraphs, n2);
  }
}

// min(1, C / norm), and 1 where norm == 0 (or norm <= C).
at::Tensor clip_factors(const at::Tensor& norms, double c) {
  const at::Tensor safe = norms.clamp_min(c);  // >= C > 0: no division by zero
  return (c / safe).clamp_max(1.0);
}

void check_flat(const Gnn& model, const at::Tensor& flat_out) {
  if (!flat_out.defined() || flat_out.dim() != 1 || flat_out.numel() != model.num_parameters() ||
      !flat_out.is_contiguous() || flat_out.scalar_type() != model.dtype() ||
      flat_out.device() != model.device()) {
    throw UsageError("gradient buffer: expected a contiguous [" +
                     std::to_string(model.num_parameters()) +
                     "] tensor with the model's dtype and device");
  }
}

}  // namespace

ClipConfig ClipConfig::flat(double c) {
  ClipConfig cfg;
  cfg.mode = ClipMode::kFlat;
  cfg.clip_norm = c;
  return cfg;
}

ClipConfig ClipConfig::per_layer(std::vector<double> c_per_layer) {
  ClipConfig cfg;
  cfg.mode = ClipMode::kPerLayer;
  cfg.layer_clip_norms = std::move(c_per_layer);
  cfg.clip_norm = cfg.total_clip_norm();
  return cfg;
}

ClipConfig ClipConfig::per_layer_equal(double c_total, int layers) {
  return per_layer(std::vector<double>(static_cast<std::size_t>(std::max(layers, 0)),
                                       c_total / std::sqrt(static_cast<double>(layers))));
}

double ClipConfig::total_clip_norm() const {
  if (mode == ClipMode::kFlat) return clip_norm;
  double s = 0.0;
  for (double c : layer_clip_norms) s += c * c;
  return std::sqrt(s);
}

void ClipConfig::validate(int layers) const {
  auto check = [](double c, const std::string& what) {
    if (!(std::isfinite(c) && c > 0.0)) {
      throw UsageError("privacy.clip_norm: " + what + " must be finite and > 0, got " +
                       std::to_string(c));
    }
  };
  if (mode == ClipMode::kFlat) {
    check(clip_norm, "the threshold");
    return;
  }
  if (static_cast<int>(layer_clip_norms.size()) != layers) {
    throw UsageError("privacy.clip_norm: per-layer clipping needs " + std::to_string(layers) +
                     " thresholds (one per layer), got " + std::to_string(layer_clip_norms.size()));
  }
  for (std::size_t l = 0; l < layer_clip_norms.size(); ++l) {
    check(layer_clip_norms[l], "the threshold of layer " + std::to_string(l));
  }
}

namespace {

// Step 3 of clipped_gradient_sum: the per-subgraph, per-layer squared norms [L, B] by the
// ghost-norm identity, with the CPU segment kernel or the bucketed tensor path.
at::Tensor squared_norms(const std::vector<LinearMapRecord>& maps_in, const std::vector<at::Tensor>& grads,
                         const Batch& batch, const BatchLayout& layout, bool segment_kernel, int L,
                         const at::TensorOptions& fopt, const ClipOptions& options) {
  const std::int64_t B = batch.num_subgraphs();
  if (segment_kernel) {
    std::vector<detail::SegmentMap> maps;
    maps.reserve(maps_in.size());
    for (std::size_t i = 0; i < maps_in.size(); ++i) {
      const LinearMapRecord& m = maps_in[i];
      maps.push_back({m.layer, m.weight >= 0, m.bias >= 0,
                      m.input.defined() ? m.input.contiguous() : at::Tensor(), grads[i].contiguous()});
    }
    const at::Tensor ptr = batch.node_ptr.cpu().contiguous();
    return detail::segment_norms_cpu(maps, ptr.data_ptr<std::int64_t>(), B, L, options.strategy).to(fopt.dtype());
  }
  at::Tensor norms2 = at::zeros({L, B}, fopt);
  for (std::size_t i = 0; i < maps_in.size(); ++i) {
    at::Tensor col = norms2[maps_in[i].layer];
    accumulate_map_norms(maps_in[i], grads[i], layout, col, options);
  }
  return norms2;
}

// Step 4 of clipped_gradient_sum: sum over nodes of (factor of its subgraph) x (its weight
// gradient), one weighted product per linear map, written straight into the flat buffer's
// views; each G is released as soon as it is used.
void weighted_sum_into(const Gnn& model, const std::vector<LinearMapRecord>& maps, std::vector<at::Tensor>& grads,
                       const at::Tensor& node_factors, ClipMode mode, at::Tensor flat_out) {
  const std::vector<at::Tensor> views = model.split_flat(flat_out);
  // Scaling G by the node factors reuses G's memory where G is not shared with another map's
  // gradient (autograd may hand out one tensor for two outputs, e.g. both operands of an add):
  // a fresh [n, d_out] buffer per map per step costs page faults, not just the multiply.
  auto shared = [&](std::size_t i) {
    for (std::size_t j = 0; j < grads.size(); ++j) {
      if (j != i && grads[j].defined() && grads[j].is_alias_of(grads[i])) return true;
    }
    return false;
  };
  for (std::size_t i = 0; i < maps.size(); ++i) {
    const LinearMapRecord& m = maps[i];
    const std::int64_t col = mode == ClipMode::kFlat ? 0 : m.layer;
    const at::Tensor c = node_factors.select(1, col);  // [n]
    if (m.weight < 0) {
      // Bias-only map: db = G^T c, one matrix-vector product, G is not touched.
      at::Tensor b = views[static_cast<std::size_t>(m.bias)];  // [dout]
      at::mv_out(b, grads[i].t(), c);
      grads[i] = at::Tensor();
      continue;
    }
    const at::Tensor Gc = grads[i].is_contiguous() && !shared(i) ? grads[i].mul_(c.unsqueeze(1))
                                                                 : grads[i] * c.unsqueeze(1);  // [n, dout]
    at::Tensor w = views[static_cast<std::size_t>(m.weight)];  // [dout, din]
    at::mm_out(w, Gc.t(), m.input);
    if (m.bias >= 0) {
      at::Tensor b = views[static_cast<std::size_t>(m.bias)];  // [dout]
      at::sum_out(b, Gc, {0});
    }
    grads[i] = at::Tensor();  // release as we go
  }
}

}  // namespace

ClipResult clipped_gradient_sum(const Gnn& model, const Batch& batch, const ClipConfig& clip,
                                const DropoutKey& key, at::Tensor flat_out,
                                const ClipOptions& options) {
  check_flat(model, flat_out);
  const int L = model.num_layers();
  clip.validate(L);
  const std::int64_t B = batch.num_subgraphs();
  const auto fopt = flat_out.options();
  ClipResult result;
  const std::int64_t ncol = clip.mode == ClipMode::kFlat ? 1 : L;
  if (B == 0) {
    flat_out.zero_();
    result.norms = at::zeros({0}, fopt);
    result.layer_norms = at::zeros({0, L}, fopt);
    result.factors = at::ones({0, ncol}, fopt);
    return result;
  }
  // Stage timings at debug level (DPGNN_LOG_LEVEL=debug): where a DP step spends its time.
  using Clock = std::chrono::steady_clock;
  const bool timing = spdlog::should_log(spdlog::level::debug);
  auto t_last = Clock::now();
  auto lap = [&]() {
    const auto now = Clock::now();
    const double ms = std::chrono::duration<double, std::milli>(now - t_last).count();
    t_last = now;
    return ms;
  };
  double ms_layout = 0, ms_forward = 0, ms_backward = 0, ms_norms = 0, ms_sum = 0;
  const bool cpu_float = model.device().is_cpu() &&
                         (model.dtype() == at::kFloat || model.dtype() == at::kDouble);
  if (options.kernel == NormKernel::kSegment && !cpu_float) {
    throw UsageError("clipping: the segment norm kernel needs float32 or float64 CPU tensors");
  }
  const bool segment_kernel = options.kernel == NormKernel::kSegment ||
                              (options.kernel == NormKernel::kAuto && cpu_float);
  const BatchLayout layout = make_layout(batch, model.dtype(), /*with_buckets=*/!segment_kernel);
  if (timing) ms_layout = lap();

  // 1-2. forward, then G = dLoss/dZ for every recorded map in one autograd pass.
  c10::AutoGradMode grad_on(true);
  TrainForward fw = model.forward_train(batch, key, /*record_maps=*/true);
  if (timing) ms_forward = lap();
  std::vector<at::Tensor> outputs;
  outputs.reserve(fw.maps.size());
  for (const auto& m : fw.maps) outputs.push_back(m.output);
  std::vector<at::Tensor> grads = torch::autograd::grad({fw.loss_sum}, outputs, {},
                                                        /*retain_graph=*/false,
                                                        /*create_graph=*/false,
                                                        /*allow_unused=*/true);
  result.loss_sum = fw.loss_sum.item<double>();
  c10::NoGradGuard no_grad;
  for (std::size_t i = 0; i < grads.size(); ++i) {
    if (!grads[i].defined()) grads[i] = at::zeros_like(outputs[i]);
    fw.maps[i].input = fw.maps[i].input.defined() ? fw.maps[i].input.detach() : at::Tensor();
  }
  outputs.clear();
  fw.loss_sum = at::Tensor();
  if (timing) ms_backward = lap();

  // 3. per-subgraph, per-layer squared norms [L, B].
  const at::Tensor norms2 = squared_norms(fw.maps, grads, batch, layout, segment_kernel, L, fopt, options);
  result.layer_norms = norms2.t().sqrt();      // [B, L]
  result.norms = norms2.sum(0).sqrt();         // [B]
  if (timing) ms_norms = lap();

  // 4. factors and the clipped sum, written straight into the flat buffer.
  if (clip.mode == ClipMode::kFlat) {
    result.factors = clip_factors(result.norms, clip.clip_norm).unsqueeze(1);  // [B, 1]
  } else {
    std::vector<at::Tensor> cols;
    for (int l = 0; l < L; ++l) {
      cols.push_back(clip_factors(result.layer_norms.select(1, l),
                                  clip.layer_clip_norms[static_cast<std::size_t>(l)]));
    }
    result.factors = at::stack(cols, 1);  // [B, L]
  }
  result.num_clipped = result.factors.lt(1.0).any(1).sum().item<std::int64_t>();
  const at::Tensor node_factors = result.factors.index_select(0, layout.segment);  // [n, ncol]
  weighted_sum_into(model, fw.maps, grads, node_factors, clip.mode, flat_out);
  if (timing) {
    ms_sum = lap();
    spdlog::debug("clipping: layout {:.1f} ms, forward {:.1f} ms, output gradients {:.1f} ms, "
                  "per-subgraph norms {:.1f} ms, clipped sum {:.1f} ms",
                  ms_layout, ms_forward, ms_backward, ms_norms, ms_sum);
  }
  return result;
}

double gradient_sum(const Gnn& model, const Batch& batch, const DropoutKey& key,
                    at::Tensor flat_out) {
  check_flat(model, flat_out);
  if (batch.num_subgraphs() == 0) {
    flat_out.zero_();
    return 0.0;
  }
  using Clock = std::chrono::steady_clock;
  const bool timing = spdlog::should_log(spdlog::level::debug);
  const auto t0 = Clock::now();
  c10::AutoGradMode grad_on(true);
  TrainForward fw = model.forward_train(batch, key, /*record_maps=*/false);
  const auto t1 = Clock::now();
  const std::vector<at::Tensor> grads =
      torch::autograd::grad({fw.loss_sum}, model.parameters(), {}, false, false, true);
  const double loss = fw.loss_sum.item<double>();
  if (timing) {
    spdlog::debug("gradient sum: forward {:.1f} ms, backward {:.1f} ms",
                  std::chrono::duration<double, std::milli>(t1 - t0).count(),
                  std::chrono::duration<double, std::milli>(Clock::now() - t1).count());
  }
  c10::NoGradGuard no_grad;
  const std::vector<at::Tensor> views = model.split_flat(flat_out);
  for (std::size_t i = 0; i < grads.size(); ++i) {
    if (grads[i].defined()) {
      views[i].copy_(grads[i]);
    } else {
      views[i].zero_();
    }
  }
  return loss;
}

}  // namespace dpgnn::model
