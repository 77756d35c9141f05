// FeatureStore (train/feature_store.h): the device way of gathering a batch's feature rows gives
// the host way's x bit for bit, DPAR's replaced rows included, and the setting is checked.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cstring>

#include "dpgnn/util/error.h"
#include "feature_store.h"

namespace dpgnn::train {
namespace {

partition::Shard shard_with_features(std::int64_t n, std::int64_t F) {
  partition::Shard s;
  s.begin = 100;  // a rank's rows need not start at 0: the store indexes shard rows
  s.end = 100 + n;
  s.meta.num_features = F;
  s.features.resize(static_cast<std::size_t>(n * F));
  for (std::size_t i = 0; i < s.features.size(); ++i) s.features[i] = 0.001f * static_cast<float>(i * 7919 % 10007) - 3.0f;
  return s;
}

// The host way (batch_builder.cpp): row by row from the shard's array, replaced rows from the map.
std::vector<float> host_gather(const partition::Shard& s, const std::vector<std::int64_t>& rows,
                               const std::unordered_map<std::int64_t, std::vector<float>>& examples) {
  const std::int64_t F = s.meta.num_features;
  std::vector<float> x(rows.size() * static_cast<std::size_t>(F));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto it = examples.find(rows[i]);
    const float* src = it != examples.end() ? it->second.data() : s.features.data() + rows[i] * F;
    std::memcpy(x.data() + i * F, src, static_cast<std::size_t>(F) * sizeof(float));
  }
  return x;
}

TEST(FeatureStore, TheDeviceGatherIsTheHostGatherBitForBit) {
  const partition::Shard s = shard_with_features(50, 13);
  const FeatureStore store = FeatureStore::choose("always", s, c10::Device(c10::kCPU));
  ASSERT_TRUE(store.on_device());
  EXPECT_EQ(store.table().data_ptr<float>(), s.features.data()) << "on the CPU the table is the shard's array";
  const std::vector<std::int64_t> rows{7, 0, 49, 7, 23, 23, 1};  // repeats: a node in two subgraphs
  std::unordered_map<std::int64_t, std::vector<float>> none;
  std::unordered_map<std::int64_t, std::vector<float>> examples{{23, std::vector<float>(13, 0.5f)},
                                                                {48, std::vector<float>(13, -1.0f)}};
  for (const auto* ex : {&none, &examples}) {
    const at::Tensor x = store.gather(rows, ex);
    ASSERT_EQ(x.sizes(), (std::vector<std::int64_t>{7, 13}));
    const std::vector<float> want = host_gather(s, rows, *ex);
    const at::Tensor xc = x.contiguous();
    EXPECT_EQ(std::memcmp(xc.data_ptr<float>(), want.data(), want.size() * sizeof(float)), 0);
  }
  // The shard's own rows are untouched by the replaced ones.
  EXPECT_NE(s.features[23 * 13], 0.5f);
}

TEST(FeatureStore, OnTheCpuAutoAndNeverGatherOnTheHost) {
  const partition::Shard s = shard_with_features(4, 3);
  for (const char* setting : {"auto", "never"}) {
    const FeatureStore store = FeatureStore::choose(setting, s, c10::Device(c10::kCPU));
    EXPECT_FALSE(store.on_device()) << setting;
    EXPECT_NE(store.describe().find("on the host"), std::string::npos) << store.describe();
  }
}

TEST(FeatureStore, AnUnknownSettingIsAUsageError) {
  const partition::Shard s = shard_with_features(4, 3);
  EXPECT_THROW(FeatureStore::choose("sometimes", s, c10::Device(c10::kCPU)), UsageError);
}

}  // namespace
}  // namespace dpgnn::train
