// SGD and Adam over flat buffers against updates computed by hand (Adam's reference values
// from a separate float64 Python evaluation of Kingma & Ba's Alg. 1), state round trips.
#include <gtest/gtest.h>

#include <ATen/ATen.h>

#include "dpgnn/model/optimizer.h"
#include "dpgnn/util/error.h"

namespace dpgnn::model {
namespace {

at::Tensor vec(std::vector<double> v) { return at::tensor(v, at::kDouble); }

std::unique_ptr<Optimizer> make(OptimizerConfig c, std::int64_t P) {
  return make_optimizer(c, P, at::kCPU, at::kDouble);
}

TEST(Sgd, StepSubtractsLrTimesTheSumDividedByTheBatchSize) {
  OptimizerConfig c;
  c.lr = 0.1;
  auto opt = make(c, 2);
  at::Tensor p = vec({1.0, 2.0});
  opt->step(p, vec({4.0, -2.0}), 2);  // g = (2, -1)
  EXPECT_NEAR(p[0].item<double>(), 0.8, 1e-15);
  EXPECT_NEAR(p[1].item<double>(), 2.1, 1e-15);
  EXPECT_EQ(opt->steps_taken(), 1);
}

TEST(Sgd, MomentumAndWeightDecayFollowTorchSemantics) {
  OptimizerConfig c;
  c.lr = 0.1;
  c.momentum = 0.9;
  c.weight_decay = 0.1;
  auto opt = make(c, 1);
  at::Tensor p = vec({1.0});
  opt->step(p, vec({2.0}), 1);  // g = 2 + 0.1 = 2.1; buf = 2.1; p = 1 - 0.21
  EXPECT_NEAR(p.item<double>(), 0.79, 1e-14);
  opt->step(p, vec({2.0}), 1);  // g = 2.079; buf = 1.89 + 2.079 = 3.969; p = 0.79 - 0.3969
  EXPECT_NEAR(p.item<double>(), 0.3931, 1e-14);
  c.nesterov = true;
  auto nes = make(c, 1);
  at::Tensor q = vec({1.0});
  nes->step(q, vec({2.0}), 1);  // g + mu * buf = 2.1 + 1.89
  EXPECT_NEAR(q.item<double>(), 1.0 - 0.399, 1e-14);
}

TEST(Adam, FirstTwoStepsMatchReferenceValues) {
  OptimizerConfig c;
  c.type = OptimizerType::kAdam;
  c.lr = 0.1;
  auto opt = make(c, 1);
  at::Tensor p = vec({1.0});
  opt->step(p, vec({1.0}), 2);  // g = 0.5
  EXPECT_NEAR(p.item<double>(), 0.900000002, 1e-12);
  opt->step(p, vec({-2.0}), 2);  // g = -1
  EXPECT_NEAR(p.item<double>(), 0.9366103542405654, 1e-12);
  c.weight_decay = 0.1;
  auto wd = make(c, 1);
  at::Tensor q = vec({2.0});
  wd->step(q, vec({0.5}), 1);  // g = 0.5 + 0.1 * 2
  EXPECT_NEAR(q.item<double>(), 1.9000000014285714, 1e-12);
}

TEST(Optimizer, StateRoundTripsThroughNamedTensors) {
  for (OptimizerType type : {OptimizerType::kSgd, OptimizerType::kAdam}) {
    OptimizerConfig c;
    c.type = type;
    c.momentum = type == OptimizerType::kSgd ? 0.9 : 0.0;
    auto a = make(c, 3);
    at::Tensor pa = vec({1.0, -1.0, 0.5});
    a->step(pa, vec({0.3, 0.2, -0.1}), 1);
    a->step(pa, vec({0.1, -0.4, 0.2}), 1);
    auto b = make(c, 3);
    b->load_state(a->state());
    EXPECT_EQ(b->steps_taken(), 2);
    at::Tensor pb = pa.clone();
    a->step(pa, vec({0.5, 0.5, 0.5}), 4);
    b->step(pb, vec({0.5, 0.5, 0.5}), 4);
    EXPECT_TRUE(pa.equal(pb));
  }
}

TEST(Optimizer, LoadStateRejectsMissingOrMisShapedEntries) {
  OptimizerConfig c;
  c.type = OptimizerType::kAdam;
  auto a = make(c, 3);
  NamedTensors st = a->state();
  st.pop_back();
  EXPECT_THROW(a->load_state(st), DataError);
  NamedTensors wrong = make(c, 4)->state();
  EXPECT_THROW(a->load_state(wrong), DataError);
}

TEST(Optimizer, RejectsBadSettingsAndAnEmptyBatch) {
  OptimizerConfig c;
  c.lr = 0.0;
  EXPECT_THROW(make(c, 2), UsageError);
  c.lr = 0.1;
  c.momentum = 1.0;
  EXPECT_THROW(make(c, 2), UsageError);
  EXPECT_THROW(parse_optimizer("rmsprop"), UsageError);
  EXPECT_EQ(parse_optimizer("adam"), OptimizerType::kAdam);
  auto opt = make(OptimizerConfig{}, 2);
  at::Tensor p = vec({1.0, 2.0});
  EXPECT_THROW(opt->step(p, vec({1.0, 1.0}), 0), UsageError);
  EXPECT_THROW(opt->step(p, vec({1.0}), 1), UsageError);
}

}  // namespace
}  // namespace dpgnn::model
