#include "feature_store.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include "dpgnn/dist/device.h"
#include "dpgnn/util/error.h"

namespace dpgnn::train {
namespace {

at::Tensor host_table(const partition::Shard& shard) {
  // A view of the shard's array: the shard outlives every batch (the trainer owns both).
  auto* data = const_cast<float*>(shard.features.data());
  return at::from_blob(data, {shard.num_local(), shard.meta.num_features}, at::TensorOptions().dtype(at::kFloat));
}

std::string gib(double bytes) { return fmt::format("{:.2f} GiB", bytes / double(1 << 30)); }

}  // namespace

FeatureStore FeatureStore::choose(const std::string& setting, const partition::Shard& shard, c10::Device device) {
  FeatureStore s;
  const double bytes = static_cast<double>(shard.features.size()) * sizeof(float);
  if (setting == "never" || (setting == "auto" && !device.is_cuda())) {
    s.why_ = "feature rows gathered on the host" +
             std::string(device.is_cuda() ? " into pinned buffers (train.features_on_device: never)" : "");
    return s;
  }
  if (setting == "auto") {
    const dist::DeviceMemory m = dist::cuda_memory_info();
    if (bytes > 0.5 * static_cast<double>(m.free)) {
      s.why_ = "feature rows gathered on the host into pinned buffers: the shard's features (" + gib(bytes) +
               ") take more than half of the GPU's free memory (" + gib(static_cast<double>(m.free)) + ")";
      return s;
    }
  } else if (setting != "always") {
    throw UsageError("train.features_on_device: must be auto, always or never, got '" + setting + "'");
  }
  try {
    s.table_ = device.is_cpu() ? host_table(shard) : host_table(shard).to(device);
  } catch (const c10::Error& e) {
    throw UsageError("train.features_on_device: cannot keep the shard's features (" + gib(bytes) + ") on " +
                     device.str() + ": " + e.what_without_backtrace() + "; set it to auto or never");
  }
  s.why_ = "feature rows gathered on " + device.str() + " from the shard's features kept there (" + gib(bytes) + ")";
  return s;
}

at::Tensor FeatureStore::gather(const std::vector<std::int64_t>& rows,
                                const std::unordered_map<std::int64_t, std::vector<float>>* example_features) const {
  const auto i64 = at::TensorOptions().dtype(at::kLong);
  const auto n = static_cast<std::int64_t>(rows.size());
  // from_blob over the caller's vector: copied (to the device, or by index_select) before return.
  const at::Tensor ids = at::from_blob(const_cast<std::int64_t*>(rows.data()), {n}, i64).to(table_.device());
  at::Tensor x = table_.index_select(0, ids);
  if (example_features == nullptr || example_features->empty()) return x;
  std::vector<std::int64_t> at_rows;
  std::vector<float> values;
  const std::int64_t F = table_.size(1);
  for (std::int64_t i = 0; i < n; ++i) {
    const auto it = example_features->find(rows[static_cast<std::size_t>(i)]);
    if (it == example_features->end()) continue;
    at_rows.push_back(i);
    values.insert(values.end(), it->second.begin(), it->second.end());
  }
  if (at_rows.empty()) return x;
  const auto k = static_cast<std::int64_t>(at_rows.size());
  const at::Tensor idx = at::from_blob(at_rows.data(), {k}, i64).to(table_.device());
  const at::Tensor val = at::from_blob(values.data(), {k, F}, at::TensorOptions().dtype(at::kFloat)).to(table_.device());
  return x.index_copy_(0, idx, val);
}

}  // namespace dpgnn::train
