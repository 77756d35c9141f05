// Counter-based dropout: the mask of one feature of one node is a hash of
// (dropout seed, step, layer, node key, feature index), computed with vectorised integer
// tensor ops on the tensor's device.
//
// Why not torch's dropout: its mask depends on the generator state and on the row order, so
// splitting one global batch across 1, 2 or 4 ranks would give different masks and the
// "same model on any number of ranks" invariant (DESIGN.md decision 6) would break. With a
// counter-based hash the mask of a node depends only on its key.
//
// The hash is a 32-bit integer mixer (xorshift-multiply rounds in the style of Chris
// Wellons' "lowbias32") evaluated in int64 lanes with every multiplier below 2^31 and every
// operand below 2^32, so no product exceeds 2^63: no signed overflow, identical results on
// every backend.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace dpgnn::model {

// Which draw of the dropout stream a forward pass uses.
struct DropoutKey {
  std::uint64_t seed = 0;
  std::int64_t step = 0;
};

// 32-bit mixer on an int64 tensor whose values lie in [0, 2^32); returns values in [0, 2^32).
at::Tensor hash32(const at::Tensor& x);

// Keep mask for h [n, d] rows keyed by node_key [n]: a [n, d] tensor (h's dtype) holding
// 1/(1-p) where kept and 0 where dropped. p in [0, 1).
at::Tensor dropout_mask(const at::Tensor& node_key, std::int64_t num_features, double p,
                        const DropoutKey& key, std::int64_t layer, c10::ScalarType dtype);

// h * mask (identity when p == 0).
at::Tensor keyed_dropout(const at::Tensor& h, const at::Tensor& node_key, double p,
                         const DropoutKey& key, std::int64_t layer);

}  // namespace dpgnn::model
