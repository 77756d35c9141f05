// Row normalisation of node features (`model.input_norm`), applied wherever the model reads
// features: the shard before training, evaluation and prediction, and the rows a DPAR
// example aggregates. A function of one node's own features, so it changes no example's
// dependence on other nodes: no privacy cost (as PyG's NormalizeFeatures, with the l2 norm).
#pragma once

#include <cstdint>
#include <string>

namespace dpgnn::train {

// Divides each of the `rows` rows of `x` ([rows, F], row major) by its norm under `mode`
// ("none": nothing; "l2": the Euclidean norm). An all-zero row is left as it is.
void normalize_feature_rows(float* x, std::int64_t rows, std::int64_t F, const std::string& mode);

}  // namespace dpgnn::train
