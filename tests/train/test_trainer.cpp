// The trainer's distributed-correctness contract (DESIGN.md decisions 6-8), in-process on
// 1, 2 and 4 ranks (LocalGroup): the same model whatever the number of ranks, noise added
// exactly once per step, stopping before the step that would exceed the target epsilon,
// and an epsilon that matches an independent recomputation from the ledger's schedule.
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <set>

#include "dpgnn/model/gnn.h"
#include "dpgnn/privacy/accountant.h"
#include "dpgnn/train/ledger.h"
#include "dpgnn/util/error.h"
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

TEST(Trainer, GivesTheSameModelAndEpsilonOn1_2And4Ranks) {
  dpgnn::testing::TempDir tmp;
  const Config cfg = base_config({"method=drw", "privacy.noise_multiplier=1.5"});
  const auto names = parameter_names(cfg);
  std::vector<std::vector<float>> params;
  std::vector<double> eps;
  for (int ranks : {1, 2, 4}) {
    const std::string out = tmp.file("r" + std::to_string(ranks));
    const TrainSummary s = train_in_process(cfg, out, ranks);
    EXPECT_EQ(s.ranks, ranks);
    EXPECT_EQ(s.steps, 12);
    params.push_back(testing::read_model(out + "/model.h5", names));
    eps.push_back(testing::read_json(out + "/summary.json").at("epsilon").get<double>());
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

// The batch pipeline (train/batch_pipeline.h) builds step t + 1's batch while step t computes:
// the same batches, so the same model bit for bit, with and without it, also across DRW-D's
// re-sampling (a prefetched batch of the old set is dropped) and on 2 ranks.
TEST(Trainer, PrefetchingTheNextBatchChangesNoBit) {
  dpgnn::testing::TempDir tmp;
  for (const std::string method : {"drw", "drw-d"}) {
    const Config cfg = base_config({"method=" + method, "sampler.resample_every=4", "privacy.noise_multiplier=1.5",
                                    "model.hidden=8"});
    const auto names = parameter_names(cfg);
    std::vector<std::vector<float>> params;
    for (const char* prefetch : {"1", "0"}) {
      ASSERT_EQ(setenv("DPGNN_BATCH_PREFETCH", prefetch, 1), 0);
      const std::string out = tmp.file(method + "-" + prefetch);
      const TrainSummary s = train_in_process(cfg, out, 2);
      EXPECT_EQ(s.steps, 12);
      params.push_back(testing::read_model(out + "/model.h5", names));
    }
    unsetenv("DPGNN_BATCH_PREFETCH");
    ASSERT_EQ(params[0].size(), params[1].size());
    EXPECT_TRUE(params[0] == params[1]) << method;
  }
}

// Gathering each batch's rows from a feature table kept on the model's device (the GPU way,
// train/feature_store.h; "always" on the CPU runs its code over the shard's array) trains the
// same model bit for bit as the host gather, with and without the prefetching thread.
TEST(Trainer, GatheringTheFeaturesOnTheDeviceChangesNoBit) {
  dpgnn::testing::TempDir tmp;
  for (const std::string method : {"drw", "drw-d"}) {
    std::vector<std::vector<float>> params;
    for (const char* where : {"never", "always"}) {
      for (const char* prefetch : {"1", "0"}) {
        const Config cfg = base_config({"method=" + method, "sampler.resample_every=4", "privacy.noise_multiplier=1.5",
                                        "model.hidden=8",
                                        std::string("train.features_on_device=") + where});
        ASSERT_EQ(setenv("DPGNN_BATCH_PREFETCH", prefetch, 1), 0);
        const std::string out = tmp.file(method + "-" + where + prefetch);
        const TrainSummary s = train_in_process(cfg, out, 2);
        EXPECT_EQ(s.steps, 12);
        params.push_back(testing::read_model(out + "/model.h5", parameter_names(cfg)));
      }
    }
    unsetenv("DPGNN_BATCH_PREFETCH");
    for (std::size_t i = 1; i < params.size(); ++i) EXPECT_TRUE(params[0] == params[i]) << method << " run " << i;
  }
}

TEST(Trainer, AddsTheNoiseExactlyOncePerStepWhateverTheNumberOfRanks) {
  // With plain SGD (lr 1, no momentum) one step moves the parameters by -(g + noise) / m.
  // The clipped sum g has norm <= m C, tiny next to noise of std sigma = z * 2C with z = 100
  // in every coordinate, so the variance of m * delta estimates sigma^2: one draw, not one
  // per rank (4 ranks each adding noise would give 4 sigma^2).
  dpgnn::testing::TempDir tmp;
  const Config cfg = base_config({"method=drw", "train.optimizer=sgd", "train.lr=1", "train.max_steps=1", "train.ema=0",
                                  "privacy.noise_multiplier=100", "privacy.clip_norm=1", "model.hidden=64"});
  const auto names = parameter_names(cfg);
  model::ModelConfig mc;
  mc.layers = cfg.model.layers;
  mc.hidden = cfg.model.hidden;
  mc.in_features = 16;
  mc.num_classes = 3;
  const at::Tensor init = model::Gnn(mc, cfg.train.seed).flatten();
  const double sigma = 100.0 * 2.0 * 1.0;
  for (int ranks : {1, 4}) {
    const std::string out = tmp.file("n" + std::to_string(ranks));
    train_in_process(cfg, out, ranks);
    const auto after = testing::read_model(out + "/model.h5", names);
    ASSERT_EQ(static_cast<std::int64_t>(after.size()), init.numel());
    const float* p0 = init.data_ptr<float>();
    double sum = 0, sumsq = 0;
    const double n = static_cast<double>(after.size());
    for (std::size_t i = 0; i < after.size(); ++i) {
      const double x = (after[i] - p0[i]) * 16.0;  // m * delta
      sum += x;
      sumsq += x * x;
    }
    const double var = sumsq / n - (sum / n) * (sum / n);
    EXPECT_NEAR(var / (sigma * sigma), 1.0, 0.15) << ranks << " ranks";
  }
}

TEST(Trainer, StopsBeforeTheStepThatWouldExceedTheTargetEpsilon) {
  dpgnn::testing::TempDir tmp;
  const Config cfg = base_config({"method=drw", "privacy.noise_multiplier=1.5", "privacy.target_epsilon=2.5",
                                  "train.max_steps=100000", "model.hidden=8"});
  const std::string out = tmp.file("budget");
  const TrainSummary s = train_in_process(cfg, out, 2);
  ASSERT_GT(s.steps, 0);
  ASSERT_LT(s.steps, 100000);
  const auto entries = read_ledger(out + "/ledger.jsonl");
  EXPECT_EQ(static_cast<std::int64_t>(entries.size()), s.steps);
  // Recompute from the ledger's schedule with a fresh accountant of the run's kind (pld).
  privacy::Accountant acc(privacy::AccountantKind::kPld);
  for (const auto& e : entries) acc.step(e.mechanism);
  const double eps = acc.epsilon(cfg.privacy.delta).epsilon;
  EXPECT_NEAR(eps, s.epsilon, 1e-12 * eps);
  EXPECT_LE(eps, cfg.privacy.target_epsilon);
  acc.step(entries.back().mechanism);
  EXPECT_GT(acc.epsilon(cfg.privacy.delta).epsilon, cfg.privacy.target_epsilon);
  const auto summary = testing::read_json(out + "/summary.json");
  EXPECT_EQ(summary.at("steps").get<std::int64_t>(), s.steps);
  EXPECT_EQ(summary.at("subgraphs").get<std::int64_t>(), entries.back().mechanism.dataset_size);
  EXPECT_EQ(summary.at("accountant").get<std::string>(), "wor_replace_one");
}

TEST(Trainer, CalibratesTheNoiseToTheTargetWhenNoMultiplierIsGiven) {
  dpgnn::testing::TempDir tmp;
  const Config cfg = base_config({"method=drw-r", "privacy.target_epsilon=3", "train.max_steps=20", "model.hidden=8"});
  const std::string out = tmp.file("calib");
  const TrainSummary s = train_in_process(cfg, out, 1);
  EXPECT_EQ(s.steps, 20);
  EXPECT_LE(s.epsilon, 3.0);
  EXPECT_GT(s.epsilon, 2.9);  // the smallest noise reaching the target uses nearly all of it
  EXPECT_GT(s.noise_multiplier, 0.0);
}

TEST(Trainer, NonPrivateBaselinesRecordNoLedgerAndNoEpsilon) {
  dpgnn::testing::TempDir tmp;
  const Config cfg = base_config({"method=gcn", "model.hidden=8"});
  const std::string out = tmp.file("gcn");
  const TrainSummary s = train_in_process(cfg, out, 2);
  EXPECT_EQ(s.steps, 12);
  EXPECT_FALSE(std::filesystem::exists(out + "/ledger.jsonl"));
  EXPECT_TRUE(testing::read_json(out + "/summary.json").at("epsilon").is_null());
}

TEST(Trainer, RefusesANonEmptyRunDirectoryWithoutResume) {
  dpgnn::testing::TempDir tmp;
  const Config cfg = base_config({"method=mlp", "train.max_steps=2"});
  const std::string out = tmp.file("twice");
  train_in_process(cfg, out, 1);
  EXPECT_THROW(train_in_process(cfg, out, 1), CollectiveError);
}

TEST(Trainer, RefusesABatchLargerThanTheNumberOfSubgraphs) {
  dpgnn::testing::TempDir tmp;
  const Config cfg = base_config({"method=drw", "train.batch_size=100000"});
  try {
    train_in_process(cfg, tmp.file("big"), 2);
    FAIL();
  } catch (const CollectiveError& e) {
    EXPECT_NE(std::string(e.what()).find("train.batch_size"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace dpgnn::train

namespace dpgnn::train {
namespace {

TEST(Trainer, DrwDResamplesAndTheLedgerComposesTheChangingPopulations) {
  dpgnn::testing::TempDir tmp;
  const Config cfg = base_config({"method=drw-d", "sampler.resample_every=4", "privacy.noise_multiplier=2",
                                  "model.hidden=8"});
  const std::string out = tmp.file("drwd");
  const TrainSummary s = train_in_process(cfg, out, 2);
  EXPECT_EQ(s.steps, 12);
  const auto entries = read_ledger(out + "/ledger.jsonl");
  ASSERT_EQ(entries.size(), 12u);
  std::set<std::int64_t> populations;
  for (const auto& e : entries) populations.insert(e.mechanism.dataset_size);
  EXPECT_GT(populations.size(), 1u) << "each re-sampling epoch has its own M";
  for (int i = 0; i < 12; ++i)  // constant within an epoch of 4 steps
    EXPECT_EQ(entries[i].mechanism.dataset_size, entries[i - i % 4].mechanism.dataset_size);
  privacy::Accountant acc(privacy::AccountantKind::kPld);
  for (const auto& e : entries) acc.step(e.mechanism);
  EXPECT_NEAR(acc.epsilon(cfg.privacy.delta).epsilon, s.epsilon, 1e-12 * s.epsilon);
}

// train.batch_size 0 (methods/method.h, full_batch_while_small): a full batch for drw, drw-r,
// drw-d and split while M <= 4096, the population M_min with privacy.worst_case; the other
// methods keep min(256, M / 2).
TEST(Trainer, TheAutomaticBatchIsAFullBatchForTheFixedReplaceOneSets) {
  dpgnn::testing::TempDir tmp;
  auto run = [&](const std::vector<std::string>& o, const std::string& name) {
    std::vector<std::string> all = {"train.batch_size=0", "train.max_steps=2", "privacy.noise_multiplier=2",
                                    "model.hidden=8"};
    all.insert(all.end(), o.begin(), o.end());
    return train_in_process(base_config(all), tmp.file(name), 2);
  };
  for (const std::string method : {"drw", "drw-r"}) {
    const TrainSummary s = run({"method=" + method}, method);
    EXPECT_GT(s.subgraphs, 2) << method;
    EXPECT_EQ(s.batch_size, s.subgraphs) << method;
    const auto entries = read_ledger(tmp.file(method) + "/ledger.jsonl");
    ASSERT_FALSE(entries.empty());
    EXPECT_EQ(entries[0].mechanism.sampling_rate, 1.0) << method;
  }
  const TrainSummary split = run({"method=split", "sampler.splits=50"}, "split");
  EXPECT_EQ(split.batch_size, split.subgraphs);
  const TrainSummary worst = run({"method=drw", "privacy.worst_case=true"}, "worst");
  EXPECT_EQ(worst.batch_size, worst.subgraphs) << "M_min, the population the accountant uses";
  // drw-d: a full batch of each re-sampling epoch's own M (a plain Gaussian step every time,
  // so the same per-step epsilon whatever M is).
  run({"method=drw-d", "sampler.resample_every=1", "train.max_steps=4"}, "drwd");
  std::set<std::int64_t> populations;
  for (const auto& e : read_ledger(tmp.file("drwd") + "/ledger.jsonl")) {
    populations.insert(e.mechanism.dataset_size);
    EXPECT_EQ(e.mechanism.batch_size, e.mechanism.dataset_size);
    EXPECT_EQ(e.mechanism.sampling_rate, 1.0);
  }
  EXPECT_GT(populations.size(), 1u) << "the epochs' M differ, and so do their batches";
  const TrainSummary mlp = run({"method=dp-mlp"}, "dpmlp");
  EXPECT_EQ(mlp.batch_size, mlp.subgraphs) << "DP-MLP: every training node in every step";
  const TrainSummary plain = run({"method=mlp"}, "mlp");
  EXPECT_EQ(plain.batch_size, std::min<std::int64_t>(256, plain.subgraphs / 2));
}

TEST(Trainer, DpGnnUsesTheHypergeometricAccountantAndRefusesAMetisPartition) {
  dpgnn::testing::TempDir tmp;
  Config cfg = base_config({"method=dpgnn", "privacy.noise_multiplier=2", "model.hidden=8", "sampler.max_degree=2",
                            "model.layers=1"});
  EXPECT_THROW(train_in_process(cfg, tmp.file("metis"), 1), CollectiveError);
  cfg.data.partition.clear();  // the dataset as one part: no structure-dependent assignment
  const TrainSummary s = train_in_process(cfg, tmp.file("single"), 1);
  EXPECT_EQ(s.accountant, "dpgnn_hypergeometric");
  const auto entries = read_ledger(tmp.file("single") + "/ledger.jsonl");
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(entries[0].mechanism.scheme, privacy::Scheme::kDpGnn);
  EXPECT_EQ(entries[0].mechanism.group_size(), 3);  // N(K=2, r=1) = 1 + 2
  // sigma = z * 2C * N(K, r)
  EXPECT_DOUBLE_EQ(s.sigma, 2.0 * 2.0 * 1.0 * 3.0);
}

TEST(Trainer, DpMlpTrainsOnSingleNodesWithTheTrainingSetAsPopulation) {
  dpgnn::testing::TempDir tmp;
  const Config cfg = base_config({"method=dp-mlp", "privacy.noise_multiplier=2", "model.hidden=8"});
  const TrainSummary s = train_in_process(cfg, tmp.file("dpmlp"), 2);
  EXPECT_EQ(s.subgraphs, 400);  // the 50% training split of 800 nodes, one node per example
  EXPECT_EQ(s.accountant, "wor_replace_one");
}

}  // namespace
}  // namespace dpgnn::train
