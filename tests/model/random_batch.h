// Test/bench helper: random batches of disjoint subgraphs with chosen sizes.
//
// Each subgraph is a random spanning tree (a node attaches to an earlier one, like the
// path of a random walk) plus `extra_edge_factor * size` random chords, stored in both
// directions without self loops or duplicates. Features are N(0, 1), labels uniform.
// Deterministic in `seed`.
#pragma once

#include <ATen/ATen.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "dpgnn/model/batch.h"

namespace dpgnn::model::testing {

struct RandomBatchSpec {
  std::vector<std::int64_t> sizes;  // nodes per subgraph
  std::int64_t features = 5;
  std::int64_t classes = 3;
  bool multilabel = false;
  double extra_edge_factor = 0.5;
  std::uint64_t seed = 1;
  std::int64_t key_offset = 1000;   // node_key of row r is key_offset + 7 * r
  c10::ScalarType dtype = at::kDouble;
};

inline Batch random_batch(const RandomBatchSpec& spec) {
  std::mt19937_64 rng(spec.seed);
  std::vector<std::int64_t> node_ptr{0}, root, keys, dst, src, y_single;
  std::vector<float> y_multi;
  for (std::int64_t k : spec.sizes) {
    const std::int64_t base = node_ptr.back();
    std::set<std::pair<std::int64_t, std::int64_t>> edges;
    for (std::int64_t i = 1; i < k; ++i) {
      const std::int64_t j = std::uniform_int_distribution<std::int64_t>(0, i - 1)(rng);
      edges.insert({std::min(i, j), std::max(i, j)});
    }
    const auto chords = static_cast<std::int64_t>(spec.extra_edge_factor * static_cast<double>(k));
    for (std::int64_t c = 0; c < chords && k > 1; ++c) {
      std::uniform_int_distribution<std::int64_t> pick(0, k - 1);
      const std::int64_t a = pick(rng), b = pick(rng);
      if (a != b) edges.insert({std::min(a, b), std::max(a, b)});
    }
    for (const auto& [a, b] : edges) {
      dst.push_back(base + a); src.push_back(base + b);
      dst.push_back(base + b); src.push_back(base + a);
    }
    root.push_back(base + std::uniform_int_distribution<std::int64_t>(0, k - 1)(rng));
    if (spec.multilabel) {
      for (std::int64_t c = 0; c < spec.classes; ++c) {
        y_multi.push_back(static_cast<float>(std::uniform_int_distribution<int>(0, 1)(rng)));
      }
    } else {
      y_single.push_back(std::uniform_int_distribution<std::int64_t>(0, spec.classes - 1)(rng));
    }
    node_ptr.push_back(base + k);
  }
  const std::int64_t n = node_ptr.back();
  for (std::int64_t r = 0; r < n; ++r) keys.push_back(spec.key_offset + 7 * r);
  std::normal_distribution<double> normal;
  std::vector<double> xs(static_cast<std::size_t>(n * spec.features));
  for (auto& v : xs) v = normal(rng);
  const at::Tensor x = at::tensor(at::ArrayRef<double>(xs), at::TensorOptions().dtype(at::kDouble))
                           .view({n, spec.features})
                           .to(spec.dtype);
  return make_batch(x, node_ptr, root, keys, dst, src, spec.multilabel, spec.classes, y_single,
                    y_multi);
}

}  // namespace dpgnn::model::testing
