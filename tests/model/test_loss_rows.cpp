// Batches whose loss is over listed rows (Batch::loss_rows: every node of a graph split,
// Igamberdiev & Habernal Sec. 4.4) rather than one root per subgraph. References are
// computed without the loss_rows path: per-row losses from the full-graph forward
// (forward_full, which never looks at roots or loss rows), summed by hand.
#include <gtest/gtest.h>

#include <random>

#include "dpgnn/util/error.h"
#include "model/naive_oracle.h"
#include "model/random_batch.h"

namespace dpgnn::model {
namespace {

using testing::RandomBatchSpec;

// The random batch with every row as a loss row and a random label per row.
Batch all_rows_batch(const Batch& b, std::int64_t classes, std::uint64_t seed, std::vector<std::int64_t>* labels) {
  std::mt19937_64 rng(seed);
  const std::int64_t n = b.num_nodes();
  std::vector<std::int64_t> rows(static_cast<std::size_t>(n));
  labels->assign(static_cast<std::size_t>(n), 0);
  for (std::int64_t r = 0; r < n; ++r) {
    rows[r] = r;
    (*labels)[r] = std::uniform_int_distribution<std::int64_t>(0, classes - 1)(rng);
  }
  Batch out = b;
  out.loss_rows = at::tensor(at::ArrayRef<std::int64_t>(rows), at::TensorOptions().dtype(at::kLong));
  out.y = at::tensor(at::ArrayRef<std::int64_t>(*labels), at::TensorOptions().dtype(at::kLong));
  out.validate(false, classes);
  return out;
}

ModelConfig small_model(Arch arch) {
  ModelConfig mc;
  mc.arch = arch;
  mc.layers = 2;
  mc.hidden = 6;
  mc.in_features = 5;
  mc.num_classes = 3;
  return mc;
}

// -log softmax(logits[r])[y[r]] for every row, from the full forward.
std::vector<double> per_row_losses(const Gnn& net, const Batch& b, const std::vector<std::int64_t>& labels) {
  const at::Tensor logits = net.forward_full(b.x, b.block).to(at::kDouble);
  const at::Tensor lsm = at::log_softmax(logits, 1);
  std::vector<double> out;
  for (std::size_t r = 0; r < labels.size(); ++r)
    out.push_back(-lsm[static_cast<std::int64_t>(r)][labels[r]].item<double>());
  return out;
}

TEST(LossRows, LossIsTheSumOverEveryListedRow) {
  for (Arch arch : {Arch::kGcn, Arch::kSage, Arch::kMlp}) {
    Gnn net(small_model(arch), 3, at::kCPU, at::kDouble);
    RandomBatchSpec spec;
    spec.sizes = {4, 1, 7, 3};
    std::vector<std::int64_t> labels;
    const Batch b = all_rows_batch(testing::random_batch(spec), 3, 11, &labels);
    const auto losses = per_row_losses(net, b, labels);
    double expected = 0.0;
    for (double l : losses) expected += l;
    const double got = net.forward_train(b, {}, false).loss_sum.item<double>();
    EXPECT_NEAR(got, expected, 1e-9 * std::abs(expected));
  }
}

TEST(LossRows, SelectingSubgraphsKeepsTheirLossRowsAndLabels) {
  Gnn net(small_model(Arch::kGcn), 3, at::kCPU, at::kDouble);
  RandomBatchSpec spec;
  spec.sizes = {4, 2, 5};
  std::vector<std::int64_t> labels;
  const Batch b = all_rows_batch(testing::random_batch(spec), 3, 5, &labels);
  const auto losses = per_row_losses(net, b, labels);
  // Subgraph 2 (rows 6..10) then subgraph 0 (rows 0..3): edges never cross subgraphs, so the
  // full forward's per-row losses are the subgraphs' own.
  double expected = 0.0;
  for (int r : {6, 7, 8, 9, 10, 0, 1, 2, 3}) expected += losses[static_cast<std::size_t>(r)];
  const Batch sel = select_subgraphs(b, {2, 0});
  ASSERT_TRUE(sel.loss_rows.defined());
  EXPECT_EQ(sel.loss_rows.size(0), 9);
  EXPECT_NEAR(net.forward_train(sel, {}, false).loss_sum.item<double>(), expected, 1e-9 * expected);
}

TEST(LossRows, ClippedSumMatchesThePerSubgraphOracle) {
  for (Arch arch : {Arch::kGcn, Arch::kSage}) {
    Gnn net(small_model(arch), 7, at::kCPU, at::kDouble);
    RandomBatchSpec spec;
    spec.sizes = {3, 6, 1, 9, 2};
    std::vector<std::int64_t> labels;
    const Batch b = all_rows_batch(testing::random_batch(spec), 3, 2, &labels);
    const ClipConfig clip = ClipConfig::flat(0.5);
    const auto oracle = testing::naive_per_sample(net, b, {}, clip, false);
    at::Tensor sum = at::zeros({net.num_parameters()}, net.flat_parameters().options());
    const ClipResult r = clipped_gradient_sum(net, b, clip, {}, sum);
    EXPECT_TRUE(at::allclose(r.norms.to(at::kDouble), oracle.norms, 1e-6, 1e-9));
    EXPECT_TRUE(at::allclose(sum, oracle.clipped_sum, 1e-6, 1e-9));
    EXPECT_GT(r.num_clipped, 0);  // the threshold binds: a test of the clipping, not of a no-op
  }
}

TEST(LossRows, ValidateRefusesALossRowOutsideTheBatchAndMislengthLabels) {
  RandomBatchSpec spec;
  spec.sizes = {2, 3};
  std::vector<std::int64_t> labels;
  Batch b = all_rows_batch(testing::random_batch(spec), 3, 1, &labels);
  Batch bad = b;
  bad.loss_rows = at::tensor(at::ArrayRef<std::int64_t>({0, 5}), at::TensorOptions().dtype(at::kLong));
  bad.y = bad.y.narrow(0, 0, 2);
  EXPECT_THROW(bad.validate(false, 3), DataError);
  Batch short_y = b;
  short_y.y = short_y.y.narrow(0, 0, 2);  // 5 loss rows, 2 labels
  EXPECT_THROW(short_y.validate(false, 3), DataError);
}

}  // namespace
}  // namespace dpgnn::model
