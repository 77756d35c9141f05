// Where a step's feature rows are gathered (issue 38; docs/configs.md, train.features_on_device).
//
// A batch's x is its largest input: at the Reddit shape 30,000 rows of 602 features, 72 MB a
// step. Two ways to make it:
//  - on the host (the CPU's way, and a GPU's fallback): the batch thread copies the rows from the
//    shard's host array into reused buffers (batch_pipeline.h); for a GPU those buffers are
//    pinned and copied to the device asynchronously, behind the previous step's compute;
//  - on the device: the shard's feature array is uploaded to the model's device once (a Reddit
//    or products shard of 4 ranks takes 0.1-0.3 GB there), a batch carries only its row ids, and
//    the rows are gathered there by one index_select. Rows that DPAR replaces by released example
//    features are written over afterwards.
// Both give the same x bit for bit (a gather copies values), so the choice changes speed, never
// results: tests/train/test_feature_store.cpp checks it on the CPU, where "always" gathers from
// a tensor over the shard's array with the device path's code.
#pragma once

#include <ATen/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "dpgnn/partition/shard.h"

namespace dpgnn::train {

class FeatureStore {
 public:
  // setting: train.features_on_device. "never": gather on the host. "always": the device way on
  // any device (on the CPU a tensor over the shard's array, no copy). "auto": the device way on a
  // CUDA device when the features take at most half of its free memory, else on the host.
  static FeatureStore choose(const std::string& setting, const partition::Shard& shard, c10::Device device);

  bool on_device() const { return table_.defined(); }
  // [n_local, F] float32 on the model's device (defined when on_device()).
  const at::Tensor& table() const { return table_; }
  // One line for the log: which way and why.
  const std::string& describe() const { return why_; }

  // x = the rows `rows` (shard rows) of the table, on its device; rows listed in
  // `example_features` (DPAR's released example features) take those values instead.
  at::Tensor gather(const std::vector<std::int64_t>& rows,
                    const std::unordered_map<std::int64_t, std::vector<float>>* example_features) const;

 private:
  at::Tensor table_;
  std::string why_;
};

}  // namespace dpgnn::train
