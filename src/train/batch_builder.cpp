#include "batch_builder.h"
#include "batch_pipeline.h"
#include "feature_store.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <chrono>
#include <cstring>

#include "dpgnn/util/error.h"

namespace dpgnn::train {

at::Tensor FeatureBuffers::take(std::int64_t rows, std::int64_t cols) {
  const std::int64_t need = rows * cols;
  std::lock_guard<std::mutex> lock(mu_);
  for (const at::Tensor& b : pool_) {
    // Only the pool refers to the memory: every batch that used it is gone.
    if (b.storage().use_count() == 1 && b.numel() >= need) return b.narrow(0, 0, need).view({rows, cols});
  }
  // Headroom: the next batches differ in size by a few subgraphs.
  at::Tensor fresh = at::empty({need + need / 8}, at::TensorOptions().dtype(at::kFloat).pinned_memory(pinned_));
  if (pool_.size() < max_) {
    pool_.push_back(fresh);
  } else {
    for (at::Tensor& b : pool_) {  // replace a free buffer that was too small
      if (b.storage().use_count() == 1) {
        b = fresh;
        break;
      }
    }
  }
  return fresh.narrow(0, 0, need).view({rows, cols});
}

model::Batch build_batch(const std::vector<Pick>& picks, const std::vector<PartSamples>& parts,
                         const partition::Shard& shard, c10::Device device,
                         const std::unordered_map<std::int64_t, std::vector<float>>* example_features) {
  return build_batch(picks, parts, shard, device, example_features, nullptr, nullptr);
}

model::Batch build_batch(const std::vector<Pick>& picks, const std::vector<PartSamples>& parts,
                         const partition::Shard& shard, c10::Device device,
                         const std::unordered_map<std::int64_t, std::vector<float>>* example_features,
                         FeatureBuffers* buffers, const FeatureStore* store) {
  using Clock = std::chrono::steady_clock;
  const bool timing = spdlog::should_log(spdlog::level::debug);
  const auto t0 = Clock::now();
  const auto& meta = shard.meta;
  const std::int64_t F = meta.num_features;
  std::vector<std::int64_t> node_ptr{0}, root, node_key, edge_dst, edge_src, y_single;
  std::vector<float> y_multi;
  std::vector<std::int64_t> rows;       // shard row of every batch node
  std::vector<std::int64_t> loss_rows;  // batch rows of the loss nodes (only with loss_on_all_nodes)
  bool all_nodes = false;
  for (const Pick& p : picks) all_nodes = all_nodes || parts[p.part_index].set.loss_on_all_nodes;
  for (const Pick& p : picks) {
    const PartSamples& ps = parts[p.part_index];
    const auto& set = ps.set;
    const std::int64_t base = static_cast<std::int64_t>(rows.size());
    const std::int64_t b = set.node_ptr[p.local], e = set.node_ptr[p.local + 1];
    if (e - b >= (std::int64_t{1} << 20))
      throw Error("subgraph " + std::to_string(p.gid) + " has more than 2^20 nodes", kExitInternal);
    for (std::int64_t i = b; i < e; ++i) {
      rows.push_back(ps.row_offset + set.nodes[i]);
      node_key.push_back(p.gid * (std::int64_t{1} << 20) + (i - b));
    }
    // Root first in its subgraph (SubgraphSet contract).
    root.push_back(base);
    auto push_label = [&](std::int64_t row) {
      if (meta.multilabel) {
        for (std::int64_t c = 0; c < meta.num_classes; ++c)
          y_multi.push_back(static_cast<float>(shard.label_matrix[row * meta.num_classes + c]));
      } else {
        y_single.push_back(shard.labels[row]);
      }
    };
    if (all_nodes) {
      // Graph splits (Igamberdiev & Habernal, Sec. 4.4): every node of the split is a
      // labelled training node and enters the loss; the split is still one example.
      if (!set.loss_on_all_nodes)
        throw Error("a batch mixes loss-on-all-nodes and root-loss subgraphs", kExitInternal);
      for (std::int64_t i = b; i < e; ++i) {
        loss_rows.push_back(base + (i - b));
        push_label(ps.row_offset + set.nodes[i]);
      }
    } else {
      push_label(ps.row_offset + set.roots[p.local]);
    }
    // Local position of each subgraph node: nodes are few, a linear map is enough.
    for (std::int64_t k = set.edge_ptr[p.local]; k < set.edge_ptr[p.local + 1]; ++k) {
      const auto [u, v] = set.edges[k];
      std::int64_t pu = -1, pv = -1;
      for (std::int64_t i = b; i < e; ++i) {
        if (set.nodes[i] == u) pu = base + (i - b);
        if (set.nodes[i] == v) pv = base + (i - b);
      }
      if (pu < 0 || pv < 0)
        throw Error("sampler produced an edge outside its subgraph (subgraph " + std::to_string(p.gid) + ")",
                    kExitInternal);
      edge_dst.push_back(pu);
      edge_src.push_back(pv);
      edge_dst.push_back(pv);
      edge_src.push_back(pu);
    }
    node_ptr.push_back(static_cast<std::int64_t>(rows.size()));
  }
  const auto t1 = Clock::now();
  const auto n = static_cast<std::int64_t>(rows.size());
  at::Tensor x, staging;
  if (store != nullptr && store->on_device()) {
    x = store->gather(rows, example_features);  // on the device: only the row ids travel
  } else {
    x = buffers != nullptr ? buffers->take(n, F) : torch::empty({n, F}, torch::kFloat32);
    float* xp = x.data_ptr<float>();
    for (std::int64_t i = 0; i < n; ++i) {
      const float* src = shard.features.data() + rows[i] * F;
      if (example_features != nullptr && !example_features->empty()) {
        const auto it = example_features->find(rows[i]);
        if (it != example_features->end()) src = it->second.data();
      }
      std::memcpy(xp + i * F, src, static_cast<std::size_t>(F) * sizeof(float));
    }
    if (device != c10::Device(c10::kCPU)) {
      // From a pinned buffer the copy runs asynchronously; the batch holds the buffer until it is
      // released (after its step, whose end waits for the device), so it is not reused before.
      const bool async = x.is_pinned();
      if (async) staging = x;
      x = x.to(device, /*non_blocking=*/async);
    }
  }
  const auto t2 = Clock::now();
  model::Batch batch = model::make_batch(x, node_ptr, root, node_key, edge_dst, edge_src, meta.multilabel,
                                         meta.num_classes, y_single, y_multi, loss_rows);
  batch.host_staging = staging;
  if (timing) {
    auto ms = [](Clock::time_point a, Clock::time_point b) {
      return std::chrono::duration<double, std::milli>(b - a).count();
    };
    spdlog::debug("batch: {} subgraphs, {} nodes, {} edges: structure {:.1f} ms, feature gather {:.1f} ms, "
                  "tensors and checks {:.1f} ms",
                  picks.size(), n, edge_dst.size(), ms(t0, t1), ms(t1, t2), ms(t2, Clock::now()));
  }
  return batch;
}

}  // namespace dpgnn::train
