// Every method in the registry (train/methods/method.h), trained in process: a private method
// gives the same model and epsilon on 1 and 2 ranks, adds its noise exactly once per step (the
// variance of one SGD step is its sigma^2, not ranks x sigma^2), and names itself, its pairing
// and its accountant from one place.
#include <cmath>
#include <filesystem>
#include <set>

#include "../../src/train/methods/method.h"
#include "dpgnn/util/error.h"
#include "trainer_fixture.h"

namespace dpgnn::train {
namespace {

using testing::base_config;
using testing::train_in_process;


Config config_for(const std::string& method, std::vector<std::string> extra) {
  std::vector<std::string> o = {"method=" + method, "data.partition=" + testing::random_partition(4), "train.batch_size=0",
                                "train.ema=0", "dpar.appr_nodes=20"};
  o.insert(o.end(), extra.begin(), extra.end());
  return base_config(o);
}

std::vector<float> params_of(const std::string& run) {
  return testing::read_model(run + "/model.h5", testing::model_parameter_names(run + "/model.h5"));
}

TEST(MethodRegistry, EveryMethodHasOneIdentity) {
  std::set<std::string> names;
  for (const auto* m : methods::all_methods()) {
    EXPECT_TRUE(names.insert(m->name()).second) << m->name() << " registered twice";
    EXPECT_EQ(method_name(parse_method(m->name())), m->name());
    const Config c = config_for(m->name(), {});
    EXPECT_FALSE(m->pairing(c).empty());
    EXPECT_EQ(accountant_name(parse_method(m->name()), false) == "none", !m->is_private()) << m->name();
    if (!m->is_private()) {
      EXPECT_FALSE(run_is_private(c)) << m->name();
    }
  }
  EXPECT_EQ(names.size(), 9u);
  EXPECT_THROW(parse_method("nope"), UsageError);
}

TEST(MethodRegistry, EveryPrivateMethodGivesTheSameModelAndEpsilonOn1And2Ranks) {
  dpgnn::testing::TempDir tmp;
  for (const std::string& name : method_names()) {
    if (!is_private(parse_method(name))) continue;
    const Config cfg = config_for(name, {"privacy.noise_multiplier=1.5", "train.max_steps=6"});
    std::vector<std::vector<float>> params;
    std::vector<double> eps;
    for (int ranks : {1, 2}) {
      const std::string out = tmp.file(name + std::to_string(ranks));
      train_in_process(cfg, out, ranks);
      params.push_back(params_of(out));
      eps.push_back(testing::read_json(out + "/summary.json").at("epsilon").get<double>());
    }
    ASSERT_EQ(params[1].size(), params[0].size()) << name;
    double max_rel = 0;
    for (std::size_t i = 0; i < params[0].size(); ++i)
      max_rel = std::max(max_rel, std::abs(params[1][i] - params[0][i]) / std::max(1e-3, std::abs(double(params[0][i]))));
    EXPECT_LT(max_rel, 1e-3) << name;
    EXPECT_EQ(eps[1], eps[0]) << name;
    EXPECT_GT(eps[0], 0.0) << name;
  }
}

TEST(MethodRegistry, EveryPrivateMethodAddsItsNoiseExactlyOncePerStep) {
  // Plain SGD, lr 1: one step moves the parameters by -(g + noise) / m, and the clipped sum g
  // (norm <= m C) is tiny next to noise of std sigma in every coordinate: the variance of
  // m * delta estimates sigma^2 - one draw, not one per rank.
  dpgnn::testing::TempDir tmp;
  for (const std::string& name : method_names()) {
    if (!is_private(parse_method(name))) continue;
    for (int ranks : {1, 2}) {
      const std::string tag = name + std::to_string(ranks);
      // Two layers of width 64 (1,283 parameters) whatever the method's default depth: the
      // variance is estimated from the coordinates (a linear model's 51 would leave it +-0.2).
      const Config cfg = config_for(name, {"train.optimizer=sgd", "train.lr=1", "privacy.noise_multiplier=100",
                                           "privacy.clip_norm=1", "model.layers=2", "model.hidden=64",
                                           "train.max_steps=1"});
      train_in_process(cfg, tmp.file(tag + "step"), ranks);
      graph::DatasetMeta meta;
      meta.num_features = 16;
      meta.num_classes = 3;
      const model::Gnn init(methods::model_config(cfg, meta), cfg.train.seed);
      const at::Tensor flat = init.flatten();
      const std::vector<float> before(flat.data_ptr<float>(), flat.data_ptr<float>() + flat.numel());
      const auto after = testing::read_model(tmp.file(tag + "step") + "/model.h5", init.parameter_names());
      const auto s = testing::read_json(tmp.file(tag + "step") + "/summary.json");
      const double m = s.at("batch_size").get<double>();
      const double sigma = s.at("noise_std_effective").get<double>();
      ASSERT_EQ(after.size(), before.size());
      double sum = 0, sumsq = 0;
      const double n = static_cast<double>(after.size());
      for (std::size_t i = 0; i < after.size(); ++i) {
        const double x = (after[i] - before[i]) * m;
        sum += x;
        sumsq += x * x;
      }
      const double var = sumsq / n - (sum / n) * (sum / n);
      EXPECT_NEAR(var / (sigma * sigma), 1.0, 0.15) << name << " on " << ranks << " ranks";
    }
  }
}

}  // namespace
}  // namespace dpgnn::train
