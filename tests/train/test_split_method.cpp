// method: split (graph-split DP-GCN, Igamberdiev & Habernal Sec. 4.4) through the trainer, in
// process on 1, 2 and 4 ranks: the same model and epsilon whatever the number of ranks, M = s
// splits (shared among the 4 parts of the fixture) accounted by the replace-one WOR subsampled Gaussian, the loss over
// every node of a split, and a model that learns on a small homophilous graph.
#include <cmath>

#include "dpgnn/model/gnn.h"
#include "dpgnn/privacy/accountant.h"
#include "dpgnn/train/ledger.h"
#include "trainer_fixture.h"

namespace dpgnn::train {
namespace {

using testing::base_config;
using testing::train_in_process;

std::vector<std::string> parameter_names(const Config& cfg) {
  model::ModelConfig mc;
  mc.arch = model::parse_arch(cfg.model.arch);
  mc.layers = cfg.model.layers;
  mc.hidden = cfg.model.hidden;
  mc.in_features = 16;
  mc.num_classes = 3;
  return model::Gnn(mc, cfg.train.seed).parameter_names();
}

TEST(SplitMethod, GivesTheSameModelAndEpsilonOn1_2And4Ranks) {
  dpgnn::testing::TempDir tmp;
  const Config cfg = base_config({"method=split", "sampler.splits=40", "train.batch_size=4",
                                  "privacy.noise_multiplier=1.5", "privacy.target_epsilon=100", "train.max_steps=10"});
  const auto names = parameter_names(cfg);
  std::vector<std::vector<float>> params;
  std::vector<double> eps;
  for (int ranks : {1, 2, 4}) {
    const std::string out = tmp.file("r" + std::to_string(ranks));
    const TrainSummary s = train_in_process(cfg, out, ranks);
    EXPECT_EQ(s.steps, 10);
    params.push_back(testing::read_model(out + "/model.h5", names));
    eps.push_back(s.epsilon);
  }
  for (std::size_t k = 1; k < params.size(); ++k) {
    ASSERT_EQ(params[k].size(), params[0].size());
    double max_rel = 0;
    for (std::size_t i = 0; i < params[0].size(); ++i)
      max_rel = std::max(max_rel, std::abs(params[k][i] - params[0][i]) / std::max(1e-3, std::abs(double(params[0][i]))));
    EXPECT_LT(max_rel, 1e-4) << "ranks run " << k;
    EXPECT_EQ(eps[k], eps[0]);
  }
  EXPECT_GT(eps[0], 0.0);
}

TEST(SplitMethod, AccountsEverySplitOfEveryPartAsOneReplaceOneExample) {
  // The fixture: 800 nodes, 50% training nodes over 4 parts; s = 40 splits shared among the
  // parts (largest remainder) give M = 40 examples, and a step is WOR(M = 40, m = 4, z).
  dpgnn::testing::TempDir tmp;
  const Config cfg = base_config({"method=split", "sampler.splits=40", "train.batch_size=4",
                                  "privacy.noise_multiplier=2", "train.max_steps=6"});
  const std::string out = tmp.file("acc");
  const TrainSummary s = train_in_process(cfg, out, 2);
  EXPECT_EQ(s.subgraphs, 40);
  EXPECT_EQ(s.accountant, "wor_replace_one");
  const auto entries = read_ledger(out + "/ledger.jsonl");
  ASSERT_EQ(entries.size(), 6u);
  for (const auto& e : entries) {
    EXPECT_EQ(e.mechanism.dataset_size, 40);
    EXPECT_EQ(e.mechanism.batch_size, 4);
    EXPECT_EQ(e.mechanism.noise_multiplier, 2.0);
  }
  // sigma = z * 2C (replace-one, DESIGN.md 2).
  EXPECT_DOUBLE_EQ(s.sigma, 2.0 * 2.0 * cfg.privacy.clip_norm);
}

TEST(SplitMethod, LearnsOnASmallHomophilousGraph) {
  // 3 classes (chance ~ 0.33); weak noise, enough steps: a learner, not a constant predictor.
  dpgnn::testing::TempDir tmp;
  const Config cfg = base_config({"method=split", "sampler.splits=50", "train.batch_size=10",
                                  "privacy.noise_multiplier=0.5", "privacy.target_epsilon=1e6",
                                  "privacy.clip_norm=1", "train.lr=0.02", "train.max_steps=150",
                                  "model.hidden=16"});
  const TrainSummary s = train_in_process(cfg, tmp.file("learn"), 2);
  EXPECT_EQ(s.steps, 150);
  EXPECT_GT(s.test_metric, 0.6);
}

TEST(SplitMethod, RefusesZeroSplitsNamingTheKey) {
  try {
    base_config({"method=split", "sampler.splits=0"});
    FAIL() << "sampler.splits=0 was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("sampler.splits"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dpgnn::train
