// Full-neighbourhood evaluation (CSR SpMM, halo exchange): the same logits and the same
// val/test metrics on 1, 2 and 4 ranks of one 4-part partition, and on 1 rank the logits of
// the edge-list forward over the whole graph (the inference before the SpMM); the centred
// outputs (dpar.center_outputs) are the outputs minus their mean over every rank's nodes; kept
// class shares (dpar.keep_class_shares) are the model's shares before the propagation.
#include <gtest/gtest.h>

#include <torch/torch.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "dpgnn/dist/collectives.h"
#include "dpgnn/dist/local_group.h"
#include "dpgnn/model/gnn.h"
#include "dpgnn/partition/shard.h"
#include "evaluator.h"
#include "trainer_fixture.h"

namespace dpgnn::train {
namespace {

model::ModelConfig config_for(const graph::DatasetMeta& meta, model::Arch arch) {
  model::ModelConfig c;
  c.arch = arch;
  c.layers = 2;
  c.hidden = 24;  // widens layer 0 (F = 16): aggregate first; layer 1 narrows: transform first
  c.in_features = static_cast<int>(meta.num_features);
  c.num_classes = static_cast<int>(meta.num_classes);
  return c;
}

struct Evaluated {
  at::Tensor logits;  // [N, C] in partition order
  EvalResult metrics;
};

Evaluated evaluate_on(int ranks, model::Arch arch, const std::function<void(Evaluator&)>& setup = {},
                      const std::string& partition = testing::TrainerData::get().partition) {
  dist::LocalGroup group(ranks);
  std::vector<at::Tensor> parts(ranks);
  std::vector<std::int64_t> begins(ranks);
  std::vector<EvalResult> results(ranks);
  group.run([&](dist::Communicator& comm) {
    const partition::Shard shard = partition::load_shard(partition, comm.rank(), ranks);
    const model::Gnn net(config_for(shard.meta, arch), 7);
    const auto comms = dist::Collectives::over(comm);
    Evaluator ev(shard, comms, c10::kCPU);
    if (setup) setup(ev);
    parts[comm.rank()] = ev.logits(net);
    begins[comm.rank()] = shard.begin;
    results[comm.rank()] = ev.evaluate(net);
  });
  for (int r = 1; r < ranks; ++r) {
    EXPECT_EQ(results[r].val, results[0].val);
    EXPECT_EQ(results[r].test, results[0].test);
  }
  for (int r = 1; r < ranks; ++r) EXPECT_LT(begins[r - 1], begins[r]);
  return {torch::cat(parts, 0), results[0]};
}

TEST(Evaluator, GivesTheSameLogitsAndMetricsOn1_2And4Ranks) {
  for (model::Arch arch : {model::Arch::kGcn, model::Arch::kSage, model::Arch::kGin}) {
    const Evaluated one = evaluate_on(1, arch);
    EXPECT_GT(one.metrics.val_nodes, 0);
    EXPECT_GT(one.metrics.test_nodes, 0);
    for (int ranks : {2, 4}) {
      const Evaluated many = evaluate_on(ranks, arch);
      ASSERT_EQ(many.logits.sizes(), one.logits.sizes());
      EXPECT_LE((many.logits - one.logits).abs().max().item<double>(),
                1e-5 * std::max(1.0, one.logits.abs().max().item<double>()))
          << model::arch_name(arch) << " on " << ranks << " ranks";
      EXPECT_EQ(many.metrics.val, one.metrics.val) << model::arch_name(arch) << " on " << ranks << " ranks";
      EXPECT_EQ(many.metrics.test, one.metrics.test) << model::arch_name(arch) << " on " << ranks << " ranks";
      EXPECT_EQ(many.metrics.val_nodes, one.metrics.val_nodes);
      EXPECT_EQ(many.metrics.test_nodes, one.metrics.test_nodes);
    }
  }
}

TEST(Evaluator, EqualsTheEdgeListForwardOverTheWholeGraph) {
  const auto& d = testing::TrainerData::get();
  const partition::Shard s = partition::load_shard(d.partition, 0, 1);
  std::vector<std::int64_t> dst, src;
  for (std::int64_t i = 0; i < s.num_local(); ++i)
    for (graph::NodeId u : s.rows.out_neigh(i)) {
      dst.push_back(i);
      src.push_back(u);
    }
  const std::vector<double> deg(s.degrees.begin(), s.degrees.end());
  const model::GraphBlock block =
      model::make_block_with_degrees(dst, src, s.num_local(), s.num_local(), deg, deg, c10::kCPU);
  const at::Tensor x = torch::from_blob(const_cast<float*>(s.features.data()), {s.num_local(), s.meta.num_features},
                                        torch::kFloat32);
  for (model::Arch arch : {model::Arch::kGcn, model::Arch::kSage, model::Arch::kGin, model::Arch::kMlp}) {
    const model::Gnn net(config_for(s.meta, arch), 7);
    const at::Tensor want = net.forward_full(x, block);
    const Evaluated got = evaluate_on(1, arch);
    // float32 sums in another order: relative to the logits' scale (GIN sums are large).
    const double scale = std::max(1.0, want.abs().max().item<double>());
    EXPECT_LE((got.logits - want).abs().max().item<double>(), 1e-5 * scale) << model::arch_name(arch);
  }
}

TEST(Evaluator, CentredOutputsAreTheOutputsMinusTheirMeanOverEveryRanksNodes) {
  const Evaluated plain = evaluate_on(1, model::Arch::kGcn);
  const at::Tensor mean = plain.logits.to(torch::kFloat64).mean(0, true);
  ASSERT_GT(mean.abs().max().item<double>(), 1e-3) << "the untrained model's outputs have a mean to remove";
  const at::Tensor want = (plain.logits.to(torch::kFloat64) - mean).to(torch::kFloat32);
  const auto centre_only = [](Evaluator& ev) { ev.set_propagation(0, 0.5, true); };
  for (int ranks : {1, 2, 4}) {
    const Evaluated got = evaluate_on(ranks, model::Arch::kGcn, centre_only);
    ASSERT_EQ(got.logits.sizes(), want.sizes());
    EXPECT_LE((got.logits - want).abs().max().item<double>(), 1e-5 * std::max(1.0, want.abs().max().item<double>()))
        << ranks << " ranks";
    EXPECT_LE(got.logits.to(torch::kFloat64).mean(0).abs().max().item<double>(), 1e-5) << ranks << " ranks";
  }
  // Centred, then propagated: the same on every rank count, and not the uncentred propagation.
  const auto centre_and_propagate = [](Evaluator& ev) { ev.set_propagation(3, 0.1, true); };
  const auto propagate_only = [](Evaluator& ev) { ev.set_propagation(3, 0.1, false); };
  const Evaluated one = evaluate_on(1, model::Arch::kGcn, centre_and_propagate);
  const Evaluated uncentred = evaluate_on(1, model::Arch::kGcn, propagate_only);
  EXPECT_GT((one.logits - uncentred.logits).abs().max().item<double>(), 1e-3);
  for (int ranks : {2, 4}) {
    const Evaluated many = evaluate_on(ranks, model::Arch::kGcn, centre_and_propagate);
    EXPECT_LE((many.logits - one.logits).abs().max().item<double>(),
              1e-5 * std::max(1.0, one.logits.abs().max().item<double>()))
        << ranks << " ranks";
    EXPECT_EQ(many.metrics.test, one.metrics.test) << ranks << " ranks";
  }
}

// Released labels (DPAR's label release): every node gets the model's softmax at temperature
// 2, and a node with a released label y that times the k-RR likelihood (q at y, (1 - q)/(k - 1)
// elsewhere), renormalised; with 0 propagation steps logits() returns their logarithm.
TEST(Evaluator, ReleasedLabelsMeetTheModelsSoftenedPredictionsByBayesRule) {
  const Evaluated plain = evaluate_on(1, model::Arch::kGcn);
  const partition::Shard shard = partition::load_shard(testing::TrainerData::get().partition, 0, 1);
  const std::vector<std::int64_t> nodes = {0, 5, 10, 11}, labels = {0, 1, 2, 2};
  const double q = 0.8;
  const auto with_labels = [&](Evaluator& ev) {
    ev.set_propagation(0, 0.5);
    ev.set_label_evidence(3, q, nodes, labels, false);
  };
  const Evaluated got = evaluate_on(1, model::Arch::kGcn, with_labels);
  at::Tensor want = torch::softmax(plain.logits.to(torch::kFloat64) / 2.0, 1);
  int labelled = 0;
  for (std::int64_t i = 0; i < shard.num_local(); ++i) {
    const auto it = std::find(nodes.begin(), nodes.end(), shard.new_to_old[i]);
    if (it == nodes.end()) continue;
    ++labelled;
    at::Tensor like = torch::full({3}, (1.0 - q) / 2.0, torch::kFloat64);
    like[labels[static_cast<std::size_t>(it - nodes.begin())]] = q;
    at::Tensor post = want[i] * like;
    want[i] = post / post.sum();
  }
  ASSERT_EQ(labelled, 4);
  EXPECT_LE((got.logits.to(torch::kFloat64).exp() - want).abs().max().item<double>(), 1e-5);
  // Not the model's softmax at temperature 1.
  EXPECT_GT((got.logits.to(torch::kFloat64).exp() - torch::softmax(plain.logits.to(torch::kFloat64), 1))
                .abs()
                .max()
                .item<double>(),
            1e-3);
}

// A two-class synthetic graph with a 4-part partition, made once.
const std::string& two_class_partition() {
  static dpgnn::testing::TempDir dir;
  static const std::string p = [] {
    const std::string g = dir.file("two.h5"), part = dir.file("two.p4.h5");
    auto r = dpgnn::testing::run_dpgnn("synth --nodes 600 --avg-degree 6 --classes 2 --features 16 --homophily 0.7 "
                                       "--seed 5 --out " + g);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    r = dpgnn::testing::run_dpgnn("partition --dataset " + g + " --parts 4 --method random --seed 1 --out " + part);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    return part;
  }();
  return p;
}

double class1_share(const at::Tensor& logits) {
  return torch::softmax(logits.to(torch::kFloat64), 1).select(1, 1).mean().item<double>();
}

TEST(Evaluator, KeptClassSharesAreTheModelsSharesBeforeThePropagation) {
  const std::string& two = two_class_partition();
  const Evaluated model_outputs = evaluate_on(1, model::Arch::kGcn, {}, two);
  const double want = class1_share(model_outputs.logits);
  const auto propagate_only = [](Evaluator& ev) { ev.set_propagation(3, 0.1, false, false); };
  const auto keep_shares = [](Evaluator& ev) { ev.set_propagation(3, 0.1, false, true); };
  const Evaluated propagated = evaluate_on(1, model::Arch::kGcn, propagate_only, two);
  ASSERT_GT(std::abs(class1_share(propagated.logits) - want), 1e-3) << "the propagation moved the shares";
  for (int ranks : {1, 2, 4}) {
    const Evaluated kept = evaluate_on(ranks, model::Arch::kGcn, keep_shares, two);
    EXPECT_NEAR(class1_share(kept.logits), want, 1e-6) << ranks << " ranks";
    // The propagated outputs with one offset on class 1, the same for every node.
    const at::Tensor diff = (kept.logits - propagated.logits).to(torch::kFloat64);
    EXPECT_LE(diff.select(1, 0).abs().max().item<double>(), 1e-5) << ranks << " ranks";
    const at::Tensor offset = diff.select(1, 1);
    EXPECT_LE((offset - offset.mean()).abs().max().item<double>(), 1e-5) << ranks << " ranks";
  }
  // Only two-class single-label data: the 3-class fixture is refused.
  dist::LocalGroup group(1);
  group.run([&](dist::Communicator& comm) {
    const partition::Shard shard = partition::load_shard(testing::TrainerData::get().partition, 0, 1);
    const auto comms = dist::Collectives::over(comm);
    Evaluator ev(shard, comms, c10::kCPU);
    EXPECT_THROW(ev.set_propagation(3, 0.1, false, true), Error);
  });
}

}  // namespace
}  // namespace dpgnn::train
