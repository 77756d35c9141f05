// The clipping engine against the naive per-sample oracle (naive_oracle.h): per-subgraph
// norms, clipped sums (flat and per-layer), the non-private sum, for every architecture,
// depth 1-3, single/multi-label, float64 (rel. 1e-5) and float32 (rel. 1e-3), ragged sizes,
// subgraphs of size 1, zero-gradient subgraphs, dropout, and batch splitting; both norm kernels
// (the CPU segment kernel and the size-class batched products that other devices use).
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "segment_norms.h"  // src/model: the CPU kernel tested on its own below
#include "dpgnn/model/clipping.h"
#include "dpgnn/util/error.h"
#include "model/naive_oracle.h"
#include "model/random_batch.h"

namespace dpgnn::model {
namespace {

using testing::naive_per_sample;
using testing::random_batch;
using testing::RandomBatchSpec;

const std::vector<std::int64_t> kRaggedSizes{1, 3, 5, 2, 1, 7, 4, 4, 2, 1};

ModelConfig tiny_config(Arch arch, int layers, bool multilabel, double dropout = 0.0) {
  ModelConfig c;
  c.arch = arch;
  c.layers = layers;
  c.hidden = 6;
  c.in_features = 5;
  c.num_classes = 3;
  c.multilabel = multilabel;
  c.dropout = dropout;
  c.activation = arch == Arch::kSage ? Activation::kTanh : Activation::kRelu;
  return c;
}

double tolerance(c10::ScalarType dtype) { return dtype == at::kDouble ? 1e-5 : 1e-3; }

// max |a - b| <= rel * max |b|  (vector-relative; exact zeros compare against the scale).
void expect_close(const at::Tensor& got, const at::Tensor& want, double rel, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const at::Tensor g = got.to(at::kDouble).cpu(), w = want.to(at::kDouble).cpu();
  ASSERT_FALSE(g.isnan().any().item<bool>()) << what << " has NaN";
  const double scale = std::max(w.abs().max().item<double>(), 1e-300);
  const double err = (g - w).abs().max().item<double>();
  EXPECT_LE(err, rel * scale) << what << ": max error " << err << " against scale " << scale;
}

// Per-element relative comparison of norms (each norm is one subgraph's).
void expect_norms_close(const at::Tensor& got, const at::Tensor& want, double rel,
                        const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const at::Tensor g = got.to(at::kDouble).cpu().reshape(-1), w = want.to(at::kDouble).cpu().reshape(-1);
  for (std::int64_t i = 0; i < g.numel(); ++i) {
    const double gv = g[i].item<double>(), wv = w[i].item<double>();
    EXPECT_LE(std::abs(gv - wv), rel * std::abs(wv) + 1e-12) << what << " entry " << i;
  }
}

double median_of(at::Tensor t) {
  t = std::get<0>(t.reshape(-1).to(at::kDouble).sort());
  return t[t.numel() / 2].item<double>();
}

at::Tensor run_engine(const Gnn& model, const Batch& batch, const ClipConfig& clip,
                      const DropoutKey& key, ClipResult* result, NormStrategy s = NormStrategy::kAuto,
                      NormKernel kernel = NormKernel::kAuto) {
  at::Tensor flat = at::empty({model.num_parameters()}, model.flat_parameters().options());
  ClipOptions opt;
  opt.strategy = s;
  opt.kernel = kernel;
  opt.materialize_chunk_elements = 50;  // several chunks even at tiny dims
  *result = clipped_gradient_sum(model, batch, clip, key, flat, opt);
  return flat;
}

using OracleCase = std::tuple<Arch, int, bool, c10::ScalarType>;

class ClippingMatchesOracle : public ::testing::TestWithParam<OracleCase> {};

TEST_P(ClippingMatchesOracle, NormsAndClippedSumsAgreeForEveryStrategyFlatAndPerLayer) {
  const auto [arch, layers, multilabel, dtype] = GetParam();
  const double tol = tolerance(dtype);
  Gnn model(tiny_config(arch, layers, multilabel), 11, at::kCPU, dtype);
  RandomBatchSpec spec;
  spec.sizes = kRaggedSizes;
  spec.multilabel = multilabel;
  spec.dtype = dtype;
  spec.seed = 3 + static_cast<std::uint64_t>(layers);
  const Batch batch = random_batch(spec);
  const DropoutKey key{5, 2};

  // Thresholds at the median norm, so some subgraphs are clipped and some are not.
  const auto probe = naive_per_sample(model, batch, key, ClipConfig::flat(1.0), false);
  const ClipConfig flat = ClipConfig::flat(median_of(probe.norms));
  std::vector<double> per_layer_c;
  for (int l = 0; l < layers; ++l) per_layer_c.push_back(median_of(probe.layer_norms.select(1, l)));
  const ClipConfig per_layer = ClipConfig::per_layer(per_layer_c);

  for (const ClipConfig& clip : {flat, per_layer}) {
    const auto oracle = naive_per_sample(model, batch, key, clip, false);
    for (NormKernel kernel : {NormKernel::kSegment, NormKernel::kSizeClass})
    for (NormStrategy s : {NormStrategy::kAuto, NormStrategy::kGhost, NormStrategy::kMaterialize}) {
      const std::string what = std::string(clip.mode == ClipMode::kFlat ? "flat" : "per-layer") +
                               " strategy " + std::to_string(static_cast<int>(s)) +
                               (kernel == NormKernel::kSegment ? " segment kernel" : " size-class kernel");
      ClipResult r;
      const at::Tensor sum = run_engine(model, batch, clip, key, &r, s, kernel);
      expect_norms_close(r.norms, oracle.norms, tol, what + " norms");
      expect_norms_close(r.layer_norms, oracle.layer_norms, tol, what + " layer norms");
      expect_close(sum, oracle.clipped_sum, tol, what + " clipped sum");
      EXPECT_NEAR(r.loss_sum, oracle.loss_sum, tol * std::abs(oracle.loss_sum));
      EXPECT_GT(r.num_clipped, 0) << what;
      EXPECT_LT(r.num_clipped, batch.num_subgraphs()) << what;
    }
  }
  // Non-private path against the oracle's plain sum.
  at::Tensor plain = at::empty({model.num_parameters()}, model.flat_parameters().options());
  const double loss = gradient_sum(model, batch, key, plain);
  expect_close(plain, probe.sum, tol, "non-private sum");
  EXPECT_NEAR(loss, probe.loss_sum, tol * std::abs(probe.loss_sum));
}

std::string case_name(const ::testing::TestParamInfo<OracleCase>& info) {
  const auto [arch, layers, multilabel, dtype] = info.param;
  return arch_name(arch) + "_" + std::to_string(layers) + "layers_" +
         (multilabel ? "multilabel" : "singlelabel") + "_" + (dtype == at::kDouble ? "f64" : "f32");
}

INSTANTIATE_TEST_SUITE_P(
    AllArchitectures, ClippingMatchesOracle,
    ::testing::Combine(::testing::Values(Arch::kGcn, Arch::kSage, Arch::kGin, Arch::kMlp),
                       ::testing::Values(1, 2, 3), ::testing::Bool(),
                       ::testing::Values(at::kDouble, at::kFloat)),
    case_name);

// model.bias: false (mlp only): the maps record no bias, so the norms leave out the bias
// term; the oracle differentiates the model as it is, so it sees the same parameters.
TEST(ClippingEngine, MlpWithoutBiasMatchesOracleForEveryStrategyAndDepth) {
  for (int layers : {1, 2, 3}) {
    ModelConfig c = tiny_config(Arch::kMlp, layers, false);
    c.bias = false;
    Gnn model(c, 7, at::kCPU, at::kDouble);
    RandomBatchSpec spec;
    spec.sizes = kRaggedSizes;
    const Batch batch = random_batch(spec);
    const auto probe = naive_per_sample(model, batch, {}, ClipConfig::flat(1.0), false);
    const ClipConfig clip = ClipConfig::flat(median_of(probe.norms));
    const auto oracle = naive_per_sample(model, batch, {}, clip, false);
    for (NormKernel kernel : {NormKernel::kSegment, NormKernel::kSizeClass})
    for (NormStrategy s : {NormStrategy::kAuto, NormStrategy::kGhost, NormStrategy::kMaterialize}) {
      const std::string what = std::to_string(layers) + " layers, strategy " + std::to_string(static_cast<int>(s)) +
                               (kernel == NormKernel::kSegment ? " segment" : " size-class");
      ClipResult r;
      const at::Tensor sum = run_engine(model, batch, clip, {}, &r, s, kernel);
      expect_norms_close(r.norms, oracle.norms, 1e-5, what + " norms");
      expect_close(sum, oracle.clipped_sum, 1e-5, what + " clipped sum");
      EXPECT_GT(r.num_clipped, 0) << what;
      EXPECT_LT(r.num_clipped, batch.num_subgraphs()) << what;
    }
  }
}

TEST(ClippingEngine, BatchOfSizeOneSubgraphsMatchesOracle) {
  for (Arch arch : {Arch::kGcn, Arch::kSage, Arch::kGin, Arch::kMlp}) {
    Gnn model(tiny_config(arch, 2, false), 5, at::kCPU, at::kDouble);
    RandomBatchSpec spec;
    spec.sizes = std::vector<std::int64_t>(9, 1);
    const Batch batch = random_batch(spec);
    const ClipConfig clip = ClipConfig::flat(0.5);
    const auto oracle = naive_per_sample(model, batch, {}, clip, false);
    ClipResult r;
    const at::Tensor sum = run_engine(model, batch, clip, {}, &r);
    expect_norms_close(r.norms, oracle.norms, 1e-5, arch_name(arch) + " norms");
    expect_close(sum, oracle.clipped_sum, 1e-5, arch_name(arch) + " clipped sum");
  }
}

TEST(ClippingEngine, SizeSortedBatchWithContiguousBucketsMatchesOracle) {
  Gnn model(tiny_config(Arch::kGcn, 2, false), 5, at::kCPU, at::kDouble);
  RandomBatchSpec spec;
  spec.sizes = {1, 1, 2, 2, 2, 3, 3, 6, 6};
  const Batch batch = random_batch(spec);
  const ClipConfig clip = ClipConfig::flat(0.3);
  const auto oracle = naive_per_sample(model, batch, {}, clip, false);
  for (NormKernel kernel : {NormKernel::kSegment, NormKernel::kSizeClass})
  for (NormStrategy s : {NormStrategy::kGhost, NormStrategy::kMaterialize}) {
    ClipResult r;
    const at::Tensor sum = run_engine(model, batch, clip, {}, &r, s, kernel);
    expect_norms_close(r.norms, oracle.norms, 1e-5, "norms");
    expect_close(sum, oracle.clipped_sum, 1e-5, "clipped sum");
  }
}

// Walk-sized subgraphs (1..17 nodes) at wider layers: the CPU segment kernel and the size-class
// products agree to float64 rounding for every architecture, with per-layer thresholds too, and
// the first subgraphs agree with the oracle.
TEST(ClippingEngine, SegmentKernelAgreesWithSizeClassKernelOnWalkSizedSubgraphs) {
  for (Arch arch : {Arch::kGcn, Arch::kSage, Arch::kGin, Arch::kMlp}) {
    ModelConfig cfg = tiny_config(arch, 2, false);
    cfg.in_features = 40;
    cfg.hidden = 24;
    cfg.num_classes = 7;
    Gnn model(cfg, 17, at::kCPU, at::kDouble);
    RandomBatchSpec spec;
    for (std::int64_t s = 0; s < 120; ++s) spec.sizes.push_back(1 + (s * 7 + s / 5) % 17);
    spec.features = 40;
    spec.classes = 7;
    spec.extra_edge_factor = 1.5;
    spec.seed = 29;
    const Batch batch = random_batch(spec);
    for (const ClipConfig& clip : {ClipConfig::flat(0.05), ClipConfig::per_layer({0.03, 0.04})}) {
      ClipResult seg, cls;
      const at::Tensor a = run_engine(model, batch, clip, {}, &seg, NormStrategy::kAuto, NormKernel::kSegment);
      const at::Tensor b = run_engine(model, batch, clip, {}, &cls, NormStrategy::kAuto, NormKernel::kSizeClass);
      expect_norms_close(seg.layer_norms, cls.layer_norms, 1e-10, arch_name(arch) + " layer norms");
      expect_close(a, b, 1e-10, arch_name(arch) + " clipped sum");
      EXPECT_EQ(seg.num_clipped, cls.num_clipped) << arch_name(arch);
      EXPECT_GT(seg.num_clipped, 0) << arch_name(arch);
    }
    const Batch head = select_subgraphs(batch, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16});
    const ClipConfig clip = ClipConfig::flat(0.05);
    const auto oracle = naive_per_sample(model, head, {}, clip, false);
    ClipResult r;
    const at::Tensor sum = run_engine(model, head, clip, {}, &r, NormStrategy::kAuto, NormKernel::kSegment);
    expect_norms_close(r.norms, oracle.norms, 1e-9, arch_name(arch) + " norms against the oracle");
    expect_close(sum, oracle.clipped_sum, 1e-9, arch_name(arch) + " clipped sum against the oracle");
  }
}

// One subgraph is summed by one thread in a fixed order: 1 and 2 threads give the same bits.
// The kernel is given the same A and G for both thread counts: the forward's products are
// BLAS's, and OpenBLAS's OpenMP build (the one install-deps selects) splits a GEMM by the
// thread count, so the engine's inputs themselves may differ in the last bits between 1 and 2.
TEST(ClippingEngine, SegmentKernelResultDoesNotDependOnTheThreadCount) {
  std::vector<std::int64_t> ptr{0};
  for (std::int64_t s = 0; s < 300; ++s) ptr.push_back(ptr.back() + 1 + (s * 5) % 17);
  const std::int64_t n = ptr.back();
  at::manual_seed(11);
  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  std::vector<detail::SegmentMap> maps = {
      {0, true, false, at::randn({n, 33}, f32), at::randn({n, 20}, f32)},  // a weight
      {0, false, true, at::Tensor(), at::randn({n, 20}, f32)},            // a bias-only map
      {1, true, true, at::randn({n, 20}, f32), at::randn({n, 3}, f32)},    // weight and bias
  };
  const int before = at::get_num_threads();
  std::vector<at::Tensor> norms;
  for (const int threads : {1, 2}) {
    at::set_num_threads(threads);
    for (const NormStrategy strategy : {NormStrategy::kAuto, NormStrategy::kGhost, NormStrategy::kMaterialize})
      norms.push_back(detail::segment_norms_cpu(maps, ptr.data(), 300, 2, strategy));
  }
  at::set_num_threads(before);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(norms[i].sizes(), (std::vector<std::int64_t>{2, 300}));
    EXPECT_TRUE(at::equal(norms[i], norms[i + 3])) << "strategy " << i;
  }
}

// A subgraph whose loss gradient is exactly zero: its root's logits are saturated by a huge
// output bias (softmax / sigmoid exactly equal to the target in float64).
TEST(ClippingEngine, ZeroGradientSubgraphsGetFactorOneAndNoNaN) {
  for (bool multilabel : {false, true}) {
    for (Arch arch : {Arch::kGcn, Arch::kSage, Arch::kGin, Arch::kMlp}) {
      ModelConfig cfg = tiny_config(arch, 2, multilabel);
      cfg.num_classes = 2;
      Gnn model(cfg, 9, at::kCPU, at::kDouble);
      // The last bias of the last layer is the output bias (see gnn.h parameter order).
      int out_bias = -1;
      for (std::size_t i = 0; i < model.parameters().size(); ++i) {
        const auto& name = model.parameter_names()[i];
        if (model.parameter_layers()[i] == 1 && name.size() >= 4 && name.substr(name.size() - 4) == "bias") {
          out_bias = static_cast<int>(i);
        }
      }
      ASSERT_GE(out_bias, 0);
      at::Tensor flat = model.flatten();
      at::Tensor bias = model.split_flat(flat)[static_cast<std::size_t>(out_bias)];
      RandomBatchSpec spec;
      spec.sizes = {3, 1, 4, 2};
      spec.classes = 2;
      spec.multilabel = multilabel;
      Batch batch = random_batch(spec);
      if (multilabel) {
        bias.fill_(50.0);  // sigmoid(~50) == 1.0 exactly in float64
        batch.y = at::tensor({1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0}, at::kDouble).view({4, 2});
      } else {
        bias[0] = 1e4;  // softmax == (1, 0) exactly
        bias[1] = 0.0;
        batch.y = at::tensor({0, 1, 0, 1}, at::kLong);
      }
      model.unflatten(flat);
      const ClipConfig clip = ClipConfig::flat(0.1);
      const auto oracle = naive_per_sample(model, batch, {}, clip, false);
      ASSERT_EQ(oracle.norms[0].item<double>(), 0.0);
      ASSERT_EQ(oracle.norms[2].item<double>(), 0.0);
      ASSERT_GT(oracle.norms[1].item<double>(), 0.1);
      ClipResult r;
      const at::Tensor sum = run_engine(model, batch, clip, {}, &r);
      const std::string what = arch_name(arch) + (multilabel ? " multi" : " single");
      EXPECT_EQ(r.norms[0].item<double>(), 0.0) << what;
      EXPECT_EQ(r.norms[2].item<double>(), 0.0) << what;
      EXPECT_EQ(r.factors[0][0].item<double>(), 1.0) << what;
      EXPECT_EQ(r.factors[2][0].item<double>(), 1.0) << what;
      EXPECT_EQ(r.num_clipped, 2) << what;
      expect_close(sum, oracle.clipped_sum, 1e-5, what + " clipped sum");
      ClipResult rl;
      const at::Tensor sum_l = run_engine(model, batch, ClipConfig::per_layer({0.1, 0.1}), {}, &rl);
      EXPECT_FALSE(sum_l.isnan().any().item<bool>()) << what;
      EXPECT_FALSE(rl.factors.isnan().any().item<bool>()) << what;
    }
  }
}

TEST(ClippingEngine, DropoutWithTheSameNodeKeysMatchesOracle) {
  for (Arch arch : {Arch::kGcn, Arch::kSage, Arch::kGin, Arch::kMlp}) {
    Gnn model(tiny_config(arch, 2, false, 0.4), 13, at::kCPU, at::kDouble);
    RandomBatchSpec spec;
    spec.sizes = kRaggedSizes;
    const Batch batch = random_batch(spec);
    const DropoutKey key{77, 9};
    const ClipConfig clip = ClipConfig::flat(0.4);
    const auto oracle = naive_per_sample(model, batch, key, clip, false);
    ClipResult r;
    const at::Tensor sum = run_engine(model, batch, clip, key, &r);
    expect_norms_close(r.norms, oracle.norms, 1e-5, arch_name(arch) + " norms");
    expect_close(sum, oracle.clipped_sum, 1e-5, arch_name(arch) + " clipped sum");
    // ... and the dropout really changed something: another step gives another sum.
    ClipResult r2;
    const at::Tensor other = run_engine(model, batch, clip, DropoutKey{77, 10}, &r2);
    EXPECT_GT((other - sum).abs().max().item<double>(), 1e-6) << arch_name(arch);
  }
}

TEST(ClippingEngine, TwoHalvesOfABatchSumToTheWholeBatch) {
  for (Arch arch : {Arch::kGcn, Arch::kSage, Arch::kGin, Arch::kMlp}) {
    Gnn model(tiny_config(arch, 2, false, 0.3), 21, at::kCPU, at::kDouble);
    RandomBatchSpec spec;
    spec.sizes = kRaggedSizes;
    const Batch batch = random_batch(spec);
    const DropoutKey key{3, 4};
    const ClipConfig clip = ClipConfig::flat(0.4);
    ClipResult whole, first, second;
    const at::Tensor s_all = run_engine(model, batch, clip, key, &whole);
    const at::Tensor s_1 = run_engine(model, select_subgraphs(batch, {0, 2, 4, 6, 8}), clip, key, &first);
    const at::Tensor s_2 = run_engine(model, select_subgraphs(batch, {1, 3, 5, 7, 9}), clip, key, &second);
    expect_close(s_1 + s_2, s_all, 1e-10, arch_name(arch) + " sum of halves");
    EXPECT_NEAR(first.loss_sum + second.loss_sum, whole.loss_sum, 1e-10 * std::abs(whole.loss_sum));
    EXPECT_EQ(first.num_clipped + second.num_clipped, whole.num_clipped);
  }
}

TEST(ClippingEngine, EachClippedSubgraphGradientHasNormAtMostItsThreshold) {
  Gnn model(tiny_config(Arch::kGcn, 3, false), 4, at::kCPU, at::kDouble);
  RandomBatchSpec spec;
  spec.sizes = kRaggedSizes;
  const Batch batch = random_batch(spec);
  const ClipConfig per_layer = ClipConfig::per_layer({0.05, 0.1, 0.2});
  for (std::int64_t s = 0; s < batch.num_subgraphs(); ++s) {
    const Batch one = select_subgraphs(batch, {s});
    ClipResult r;
    const at::Tensor g = run_engine(model, one, ClipConfig::flat(0.1), {}, &r);
    EXPECT_LE(g.norm().item<double>(), 0.1 * (1 + 1e-12));
    const at::Tensor gl = run_engine(model, one, per_layer, {}, &r);
    const auto views = model.split_flat(gl);
    std::vector<double> sq(3, 0.0);
    for (std::size_t i = 0; i < views.size(); ++i) {
      sq[static_cast<std::size_t>(model.parameter_layers()[i])] += views[i].pow(2).sum().item<double>();
    }
    for (int l = 0; l < 3; ++l) {
      EXPECT_LE(std::sqrt(sq[static_cast<std::size_t>(l)]),
                per_layer.layer_clip_norms[static_cast<std::size_t>(l)] * (1 + 1e-12));
    }
    EXPECT_LE(gl.norm().item<double>(), per_layer.total_clip_norm() * (1 + 1e-12));
  }
}

TEST(ClippingEngine, HugeThresholdGivesTheNonPrivateGradientSum) {
  Gnn model(tiny_config(Arch::kSage, 2, true), 4, at::kCPU, at::kDouble);
  RandomBatchSpec spec;
  spec.sizes = kRaggedSizes;
  spec.multilabel = true;
  const Batch batch = random_batch(spec);
  ClipResult r;
  const at::Tensor clipped = run_engine(model, batch, ClipConfig::flat(1e30), {}, &r);
  at::Tensor plain = at::empty_like(clipped);
  gradient_sum(model, batch, {}, plain);
  expect_close(clipped, plain, 1e-10, "clipped with C = 1e30");
  EXPECT_EQ(r.num_clipped, 0);
}

TEST(ClippingEngine, EmptyBatchGivesZeros) {
  Gnn model(tiny_config(Arch::kGcn, 2, false), 4, at::kCPU, at::kDouble);
  RandomBatchSpec spec;
  spec.sizes = {2, 3};
  const Batch empty = select_subgraphs(random_batch(spec), {});
  at::Tensor flat = at::ones({model.num_parameters()}, at::kDouble);
  const ClipResult r = clipped_gradient_sum(model, empty, ClipConfig::flat(1.0), {}, flat);
  EXPECT_EQ(flat.abs().sum().item<double>(), 0.0);
  EXPECT_EQ(r.loss_sum, 0.0);
  EXPECT_EQ(r.norms.numel(), 0);
}

TEST(ClippingEngine, RejectsAGradientBufferOfTheWrongSize) {
  Gnn model(tiny_config(Arch::kGcn, 1, false), 4, at::kCPU, at::kDouble);
  RandomBatchSpec spec;
  spec.sizes = {2};
  const Batch batch = random_batch(spec);
  at::Tensor wrong = at::zeros({model.num_parameters() + 1}, at::kDouble);
  EXPECT_THROW(clipped_gradient_sum(model, batch, ClipConfig::flat(1.0), {}, wrong), UsageError);
}

TEST(ClippingEngine, SegmentKernelRefusesTensorsItDoesNotHandle) {
  Gnn model(tiny_config(Arch::kGcn, 1, false), 4, at::kCPU, at::kBFloat16);
  RandomBatchSpec spec;
  spec.sizes = {2, 3};
  spec.dtype = at::kBFloat16;
  const Batch batch = random_batch(spec);
  at::Tensor flat = at::zeros({model.num_parameters()}, at::kBFloat16);
  ClipOptions opt;
  opt.kernel = NormKernel::kSegment;
  EXPECT_THROW(clipped_gradient_sum(model, batch, ClipConfig::flat(1.0), {}, flat, opt), UsageError);
}

TEST(ClipConfig, PerLayerBoundIsTheRootSumOfSquaresOfTheThresholds) {
  EXPECT_DOUBLE_EQ(ClipConfig::per_layer({3.0, 4.0}).total_clip_norm(), 5.0);
  const ClipConfig eq = ClipConfig::per_layer_equal(2.0, 4);
  ASSERT_EQ(eq.layer_clip_norms.size(), 4u);
  EXPECT_DOUBLE_EQ(eq.layer_clip_norms[0], 1.0);
  EXPECT_NEAR(eq.total_clip_norm(), 2.0, 1e-15);
  EXPECT_DOUBLE_EQ(ClipConfig::flat(1.5).total_clip_norm(), 1.5);
}

TEST(ClipConfig, RejectsNonPositiveThresholdsAndAWrongLayerCount) {
  EXPECT_THROW(ClipConfig::flat(0.0).validate(2), UsageError);
  EXPECT_THROW(ClipConfig::flat(std::nan("")).validate(2), UsageError);
  EXPECT_THROW(ClipConfig::per_layer({1.0}).validate(2), UsageError);
  EXPECT_THROW(ClipConfig::per_layer({1.0, -1.0}).validate(2), UsageError);
  EXPECT_NO_THROW(ClipConfig::per_layer({1.0, 2.0}).validate(2));
}

}  // namespace
}  // namespace dpgnn::model
