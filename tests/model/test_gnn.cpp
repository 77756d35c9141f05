// GNN layers against hand-computed values on a 3-node path, layer-wise (halo) inference
// against the training forward, parameter naming/aliasing/initialisation, losses.
#include <gtest/gtest.h>

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>  // c10::NoGradGuard: LibTorch 2.x has no at:: alias in ATen.h

#include <cmath>
#include <string>
#include <vector>

#include "dpgnn/model/gnn.h"
#include "dpgnn/util/error.h"
#include "model/random_batch.h"

namespace dpgnn::model {
namespace {

// Path 0 - 1 - 2, both directions.
GraphBlock path_block() {
  return make_block({0, 1, 1, 2}, {1, 0, 2, 1}, 3, 3, at::kCPU, at::kDouble);
}

ModelConfig scalar_config(Arch arch) {
  ModelConfig c;
  c.arch = arch;
  c.layers = 1;
  c.hidden = 1;
  c.in_features = 1;
  c.num_classes = 1;
  return c;
}

void set_params(Gnn& model, const std::vector<double>& values) {
  ASSERT_EQ(static_cast<std::int64_t>(values.size()), model.num_parameters());
  model.unflatten(at::tensor(values, at::kDouble).to(model.dtype()));
}

const at::Tensor kPathX = at::tensor({1.0, 2.0, 3.0}, at::kDouble).view({3, 1});

void expect_values(const at::Tensor& got, const std::vector<double>& want) {
  ASSERT_EQ(got.numel(), static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(got.reshape(-1)[static_cast<std::int64_t>(i)].item<double>(), want[i], 1e-12) << i;
  }
}

TEST(Gnn, GcnLayerIsSymmetricallyNormalisedWithSelfLoops) {
  Gnn model(scalar_config(Arch::kGcn), 1, at::kCPU, at::kDouble);
  set_params(model, {2.0, 0.5});  // weight, bias
  // degrees + 1 = (2, 3, 2); out_i = w * sum_j x_j / sqrt((d_i+1)(d_j+1)) + b over j in N(i) + i
  const double s6 = std::sqrt(6.0);
  expect_values(model.forward_full(kPathX, path_block()),
                {2.0 * (1.0 / 2.0 + 2.0 / s6) + 0.5, 2.0 * (2.0 / 3.0 + 1.0 / s6 + 3.0 / s6) + 0.5,
                 2.0 * (3.0 / 2.0 + 2.0 / s6) + 0.5});
}

TEST(Gnn, SageLayerAddsSelfAndMeanOfNeighbours) {
  Gnn model(scalar_config(Arch::kSage), 1, at::kCPU, at::kDouble);
  set_params(model, {1.0, 0.25, 3.0});  // lin_self.weight, lin_self.bias, lin_neigh.weight
  expect_values(model.forward_full(kPathX, path_block()),
                {1.0 + 0.25 + 3.0 * 2.0, 2.0 + 0.25 + 3.0 * 2.0, 3.0 + 0.25 + 3.0 * 2.0});
}

TEST(Gnn, GinLayerAppliesItsMlpToSelfPlusNeighbourSum) {
  Gnn model(scalar_config(Arch::kGin), 1, at::kCPU, at::kDouble);
  set_params(model, {-1.0, 4.0, 2.0, 1.0});  // mlp.0 (w, b), mlp.1 (w, b)
  // s = (3, 6, 5); relu(-s + 4) = (1, 0, 0); 2 * . + 1
  expect_values(model.forward_full(kPathX, path_block()), {3.0, 1.0, 1.0});
}

TEST(Gnn, MlpIgnoresEdges) {
  Gnn model(scalar_config(Arch::kMlp), 1, at::kCPU, at::kDouble);
  set_params(model, {-2.0, 1.0});
  expect_values(model.forward_full(kPathX, path_block()), {-1.0, -3.0, -5.0});
}

TEST(Gnn, GcnInferenceBlockUsesTheFullGraphDegreesGiven) {
  Gnn model(scalar_config(Arch::kGcn), 1, at::kCPU, at::kDouble);
  set_params(model, {2.0, 0.5});
  // Rank owns node 0 of the path; node 1 is its halo (full-graph degree 2).
  const GraphBlock halo = make_block_with_degrees({0}, {1}, 1, 2, {1.0}, {1.0, 2.0}, at::kCPU, at::kDouble);
  const at::Tensor h = at::tensor({1.0, 2.0}, at::kDouble).view({2, 1});
  expect_values(model.layer_forward(0, h, halo), {2.0 * (1.0 / 2.0 + 2.0 / std::sqrt(6.0)) + 0.5});
  // ... while in-block degrees (node 1 has one neighbour here) give another value.
  const GraphBlock in_block = make_block({0}, {1}, 1, 2, at::kCPU, at::kDouble);
  EXPECT_GT(std::abs(model.layer_forward(0, h, in_block).item<double>() -
                     (2.0 * (1.0 / 2.0 + 2.0 / std::sqrt(6.0)) + 0.5)),
            1e-3);
}

ModelConfig small_config(Arch arch, int layers) {
  ModelConfig c;
  c.arch = arch;
  c.layers = layers;
  c.hidden = 6;
  c.in_features = 5;
  c.num_classes = 3;
  return c;
}

// model.bias: false (mlp only): one weight per layer, no bias parameter, logits x W^T by hand,
// in the training forward and in layer-wise inference alike.
TEST(Gnn, MlpWithoutBiasHasOnlyWeightsAndComputesXWTransposed) {
  ModelConfig c = scalar_config(Arch::kMlp);
  c.bias = false;
  Gnn model(c, 1, at::kCPU, at::kDouble);
  ASSERT_EQ(model.parameter_names(), std::vector<std::string>{"layers.0.weight"});
  set_params(model, {-2.0});
  expect_values(model.forward_full(kPathX, path_block()), {-2.0, -4.0, -6.0});
  // Two layers: names, count and the layer-wise inference equal to the training forward.
  ModelConfig two = small_config(Arch::kMlp, 2);
  two.bias = false;
  Gnn deep(two, 3, at::kCPU, at::kDouble);
  EXPECT_EQ(deep.parameter_names(), (std::vector<std::string>{"layers.0.weight", "layers.1.weight"}));
  EXPECT_EQ(deep.num_parameters(), 6 * 5 + 3 * 6);
  testing::RandomBatchSpec spec;
  spec.sizes = {1, 4, 6};
  const Batch batch = testing::random_batch(spec);
  const TrainForward fw = deep.forward_train(batch, {}, false);
  for (const auto& m : fw.maps) EXPECT_EQ(m.bias, -1) << "a map of layer " << m.layer << " records a bias";
  at::Tensor h = batch.x;
  for (int l = 0; l < 2; ++l) h = deep.layer_forward(l, h, batch.block);
  EXPECT_LE((h.index_select(0, batch.root) - fw.root_logits.detach()).abs().max().item<double>(), 1e-12);
  const at::Tensor w0 = deep.parameters()[0], w1 = deep.parameters()[1];
  const at::Tensor by_hand = at::mm(at::relu(at::mm(batch.x, w0.t())), w1.t()).index_select(0, batch.root);
  EXPECT_LE((by_hand - fw.root_logits.detach()).abs().max().item<double>(), 1e-12);
}

TEST(Gnn, LayerwiseInferenceOnTheTrainingGraphEqualsTheTrainingForward) {
  testing::RandomBatchSpec spec;
  spec.sizes = {1, 4, 6, 3, 2};
  const Batch batch = testing::random_batch(spec);
  for (Arch arch : {Arch::kGcn, Arch::kSage, Arch::kGin, Arch::kMlp}) {
    for (int layers : {1, 2, 3}) {
      Gnn model(small_config(arch, layers), 3, at::kCPU, at::kDouble);
      const TrainForward fw = model.forward_train(batch, {}, false);
      at::Tensor h = batch.x;
      for (int l = 0; l < layers; ++l) h = model.layer_forward(l, h, batch.block);
      const at::Tensor inf = h.index_select(0, batch.root);
      EXPECT_LE((inf - fw.root_logits.detach()).abs().max().item<double>(), 1e-12)
          << arch_name(arch) << " " << layers;
    }
  }
}

TEST(Gnn, HaloBlockInferenceEqualsFullGraphInferenceOnTheLocalRows) {
  // One 12-node random graph; this "rank" owns nodes 0..4 and sees the rest as halo.
  testing::RandomBatchSpec spec;
  spec.sizes = {12};
  spec.extra_edge_factor = 1.0;
  const Batch g = testing::random_batch(spec);
  const std::int64_t local = 5;
  const at::Tensor keep = g.block.dst < local;
  const at::Tensor dst = g.block.dst.masked_select(keep), src = g.block.src.masked_select(keep);
  std::vector<std::int64_t> d(dst.data_ptr<std::int64_t>(), dst.data_ptr<std::int64_t>() + dst.numel());
  std::vector<std::int64_t> s(src.data_ptr<std::int64_t>(), src.data_ptr<std::int64_t>() + src.numel());
  const at::Tensor deg = g.block.deg_src;
  std::vector<double> deg_all(deg.data_ptr<double>(), deg.data_ptr<double>() + deg.numel());
  std::vector<double> deg_local(deg_all.begin(), deg_all.begin() + local);
  const GraphBlock halo = make_block_with_degrees(d, s, local, 12, deg_local, deg_all, at::kCPU, at::kDouble);
  for (Arch arch : {Arch::kGcn, Arch::kSage, Arch::kGin, Arch::kMlp}) {
    Gnn model(small_config(arch, 3), 8, at::kCPU, at::kDouble);
    at::Tensor h = g.x;
    for (int l = 0; l < 3; ++l) {
      const at::Tensor full = model.layer_forward(l, h, g.block);  // [12, d]
      const at::Tensor part = model.layer_forward(l, h, halo);     // [5, d]
      EXPECT_LE((part - full.narrow(0, 0, local)).abs().max().item<double>(), 1e-12)
          << arch_name(arch) << " layer " << l;
      h = full;  // the "halo exchange": every node's next input
    }
  }
}

TEST(Gnn, ParametersAreNamedByModulePathInAFixedOrder) {
  const Gnn gcn(small_config(Arch::kGcn, 2), 1);
  EXPECT_EQ(gcn.parameter_names(),
            (std::vector<std::string>{"layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias"}));
  EXPECT_EQ(gcn.num_parameters(), 6 * 5 + 6 + 3 * 6 + 3);
  EXPECT_EQ(gcn.parameters()[0].sizes(), (std::vector<std::int64_t>{6, 5}));
  const Gnn sage(small_config(Arch::kSage, 1), 1);
  EXPECT_EQ(sage.parameter_names(),
            (std::vector<std::string>{"layers.0.lin_self.weight", "layers.0.lin_self.bias",
                                      "layers.0.lin_neigh.weight"}));
  const Gnn gin(small_config(Arch::kGin, 1), 1);
  EXPECT_EQ(gin.parameter_names(),
            (std::vector<std::string>{"layers.0.mlp.0.weight", "layers.0.mlp.0.bias",
                                      "layers.0.mlp.1.weight", "layers.0.mlp.1.bias"}));
  EXPECT_EQ(gin.num_parameters(), 6 * 5 + 6 + 3 * 6 + 3);
  EXPECT_EQ(gin.parameter_layers(), (std::vector<int>{0, 0, 0, 0}));
}

TEST(Gnn, InitialisationIsDeterministicInTheSeedAndGlorotBounded) {
  const Gnn a(small_config(Arch::kGcn, 2), 42), b(small_config(Arch::kGcn, 2), 42),
      c(small_config(Arch::kGcn, 2), 43);
  EXPECT_TRUE(a.flatten().equal(b.flatten()));
  EXPECT_FALSE(a.flatten().equal(c.flatten()));
  const Gnn d(small_config(Arch::kGcn, 2), 42, at::kCPU, at::kDouble);
  EXPECT_LE((d.flatten() - a.flatten().to(at::kDouble)).abs().max().item<double>(), 1e-7);
  const double bound = std::sqrt(6.0 / (5 + 6));
  EXPECT_LE(a.parameters()[0].abs().max().item<double>(), bound);
  EXPECT_GT(a.parameters()[0].abs().max().item<double>(), 0.5 * bound);
  EXPECT_EQ(a.parameters()[1].abs().sum().item<double>(), 0.0);
}

TEST(Gnn, ParametersAliasTheFlatBuffer) {
  Gnn m(small_config(Arch::kSage, 2), 1, at::kCPU, at::kDouble);
  const at::Tensor before = m.flatten();
  {
    c10::NoGradGuard no_grad;
    m.flat_parameters().add_(1.0);
  }
  EXPECT_NEAR((m.parameters()[0] - before.narrow(0, 0, 30).view({6, 5})).mean().item<double>(), 1.0, 1e-12);
  m.unflatten(before);
  EXPECT_TRUE(m.parameters()[2].equal(m.split_flat(before)[2]));
  EXPECT_TRUE(m.parameters()[0].requires_grad());
  EXPECT_TRUE(m.parameters()[0].is_leaf());
  EXPECT_THROW(m.unflatten(at::zeros({3}, at::kDouble)), DataError);
}

TEST(Gnn, LossIsSummedOverRoots) {
  Gnn single(small_config(Arch::kMlp, 1), 1, at::kCPU, at::kDouble);
  const at::Tensor logits = at::tensor({0.0, 0.0, 0.0, std::log(2.0), 0.0, 0.0}, at::kDouble).view({2, 3});
  // -log(1/3) - log(1/4)
  EXPECT_NEAR(single.loss(logits, at::tensor({1, 1}, at::kLong)).item<double>(),
              std::log(3.0) + std::log(4.0), 1e-12);
  ModelConfig mc = small_config(Arch::kMlp, 1);
  mc.multilabel = true;
  Gnn multi(mc, 1, at::kCPU, at::kDouble);
  // BCE(0, y) = log 2 for every label, 6 labels
  EXPECT_NEAR(multi.loss(at::zeros({2, 3}, at::kDouble), at::ones({2, 3}, at::kDouble)).item<double>(),
              6.0 * std::log(2.0), 1e-12);
}

TEST(Gnn, PredictIsArgmaxOrPositiveLogit) {
  Gnn single(small_config(Arch::kMlp, 1), 1);
  const at::Tensor logits = at::tensor({0.1, 2.0, -1.0, 3.0, 0.0, -2.0}, at::kFloat).view({2, 3});
  EXPECT_TRUE(single.predict(logits).equal(at::tensor({1, 0}, at::kLong)));
  ModelConfig mc = small_config(Arch::kMlp, 1);
  mc.multilabel = true;
  Gnn multi(mc, 1);
  EXPECT_TRUE(multi.predict(logits).equal(at::tensor({1, 1, 0, 1, 0, 0}, at::kLong).view({2, 3})));
}

TEST(ModelConfig, RejectsOutOfRangeValuesNamingTheKey) {
  ModelConfig c = small_config(Arch::kGcn, 2);
  c.layers = 4;
  EXPECT_THROW(c.validate(), UsageError);
  c.layers = 0;
  EXPECT_THROW(c.validate(), UsageError);
  c = small_config(Arch::kGcn, 2);
  c.dropout = 1.0;
  try {
    c.validate();
    FAIL() << "dropout 1.0 accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("model.dropout"), std::string::npos);
  }
  for (Arch arch : {Arch::kGcn, Arch::kSage, Arch::kGin}) {
    c = small_config(arch, 2);
    c.bias = false;
    try {
      c.validate();
      FAIL() << "bias false accepted for " << arch_name(arch);
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("model.bias"), std::string::npos);
    }
  }
  c = small_config(Arch::kMlp, 2);
  c.bias = false;
  EXPECT_NO_THROW(c.validate());
  EXPECT_THROW(parse_arch("gat"), UsageError);
  EXPECT_EQ(parse_arch("sage"), Arch::kSage);
  EXPECT_THROW(parse_activation("gelu"), UsageError);
}

TEST(Gnn, LayerForwardRejectsInputOfTheWrongShape) {
  Gnn model(small_config(Arch::kGcn, 2), 1, at::kCPU, at::kDouble);
  EXPECT_THROW(model.layer_forward(0, at::zeros({3, 4}, at::kDouble), path_block()), DataError);
  EXPECT_THROW(model.layer_forward(2, at::zeros({3, 6}, at::kDouble), path_block()), UsageError);
}

}  // namespace
}  // namespace dpgnn::model
