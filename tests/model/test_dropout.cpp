// Keyed dropout: the mask of a node depends only on (seed, step, layer, node key, feature),
// so any split of a batch across ranks sees the same masks; statistics of the keep rate;
// the int64 hash against an independent uint32 reference.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include <cstdint>
#include <vector>

#include "dpgnn/model/dropout.h"
#include "dpgnn/util/error.h"

namespace dpgnn::model {
namespace {

// Reference: the same mixer in native uint32 arithmetic (wrapping multiply).
std::uint32_t hash32_reference(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x21f0aaadu;
  x ^= x >> 15;
  x *= 0x735a2d97u;
  x ^= x >> 15;
  return x;
}

TEST(KeyedDropout, TensorHashEqualsTheUint32Reference) {
  std::vector<std::int64_t> inputs{0, 1, 2, 12345, 0x7fffffff, 0x80000000LL, 0xfffffffeLL, 0xffffffffLL,
                                   0xdeadbeefLL};
  const at::Tensor got = hash32(at::tensor(inputs, at::kLong));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    EXPECT_EQ(got[static_cast<std::int64_t>(i)].item<std::int64_t>(),
              static_cast<std::int64_t>(hash32_reference(static_cast<std::uint32_t>(inputs[i]))))
        << inputs[i];
  }
}

TEST(KeyedDropout, MaskOfANodeDependsOnItsKeyNotOnItsRow) {
  const at::Tensor keys =
      at::tensor(std::vector<std::int64_t>{10, 20, 30, 40, -5, (std::int64_t{1} << 40) + 3}, at::kLong);
  const at::Tensor perm = at::tensor({3, 0, 5, 1, 4, 2}, at::kLong);
  const DropoutKey key{99, 7};
  const at::Tensor m = dropout_mask(keys, 16, 0.5, key, 1, at::kFloat);
  const at::Tensor mp = dropout_mask(keys.index_select(0, perm), 16, 0.5, key, 1, at::kFloat);
  EXPECT_TRUE(mp.equal(m.index_select(0, perm)));
  // A subset (another rank's share of the batch) sees the same rows.
  const at::Tensor sub = dropout_mask(keys.narrow(0, 2, 3), 16, 0.5, key, 1, at::kFloat);
  EXPECT_TRUE(sub.equal(m.narrow(0, 2, 3)));
}

TEST(KeyedDropout, MaskBuiltInRowChunksEqualsTheMaskOfEachChunkAlone) {
  // 70000 x 64 entries exceed one chunk of 2^22: rows from both chunks must match the
  // masks computed for those keys alone.
  const at::Tensor keys = at::arange(70000, at::kLong).mul_(3);
  const DropoutKey key{4, 1};
  const at::Tensor m = dropout_mask(keys, 64, 0.5, key, 0, at::kFloat);
  EXPECT_TRUE(m.narrow(0, 65530, 20).equal(dropout_mask(keys.narrow(0, 65530, 20), 64, 0.5, key, 0, at::kFloat)));
  EXPECT_TRUE(m.narrow(0, 0, 5).equal(dropout_mask(keys.narrow(0, 0, 5), 64, 0.5, key, 0, at::kFloat)));
}

TEST(KeyedDropout, KeepRateIsOneMinusPAndKeptValuesAreRescaled) {
  const at::Tensor keys = at::arange(4000, at::kLong);
  const double p = 0.3;
  const at::Tensor m = dropout_mask(keys, 64, p, DropoutKey{1, 0}, 0, at::kDouble);
  const double kept = m.gt(0).to(at::kDouble).mean().item<double>();
  EXPECT_NEAR(kept, 1.0 - p, 0.005);  // 5 sigma of a binomial over 256000 draws is 0.0045
  EXPECT_NEAR(m.max().item<double>(), 1.0 / (1.0 - p), 1e-12);
  EXPECT_TRUE(m.eq(0).logical_or(m.eq(1.0 / (1.0 - p))).all().item<bool>());
  // Features of one node are not all dropped together (per-feature masks).
  const at::Tensor per_node = m.gt(0).to(at::kDouble).mean(1);
  EXPECT_GT(per_node.std().item<double>(), 0.01);
  EXPECT_LT(per_node.std().item<double>(), 0.1);
}

TEST(KeyedDropout, StepLayerAndSeedEachChangeTheMask) {
  const at::Tensor keys = at::arange(500, at::kLong);
  const at::Tensor base = dropout_mask(keys, 32, 0.5, DropoutKey{1, 0}, 0, at::kFloat);
  for (const auto& [key, layer] : std::vector<std::pair<DropoutKey, int>>{
           {DropoutKey{1, 1}, 0}, {DropoutKey{1, 0}, 1}, {DropoutKey{2, 0}, 0}}) {
    const at::Tensor other = dropout_mask(keys, 32, 0.5, key, layer, at::kFloat);
    const double agree = other.eq(base).to(at::kDouble).mean().item<double>();
    EXPECT_NEAR(agree, 0.5, 0.02);  // independent masks agree on half of the entries
  }
}

TEST(KeyedDropout, ZeroRateIsTheIdentityAndRateOneIsRejected) {
  const at::Tensor h = at::randn({4, 3});
  const at::Tensor keys = at::arange(4, at::kLong);
  EXPECT_TRUE(keyed_dropout(h, keys, 0.0, {}, 0).equal(h));
  EXPECT_THROW(dropout_mask(keys, 3, 1.0, {}, 0, at::kFloat), UsageError);
}

}  // namespace
}  // namespace dpgnn::model
