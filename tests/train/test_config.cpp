// The config contract: the keys checks rely on, defaults for everything absent, and one
// clear error naming the file and key for every malformed config.
#include <gtest/gtest.h>

#include "dpgnn/train/config.h"
#include "dpgnn/util/error.h"

namespace dpgnn::train {
namespace {

void expect_config_error(const std::string& yaml, const std::string& key, const std::string& fragment,
                         const std::vector<std::string>& overrides = {}) {
  try {
    parse_config(yaml, "x.yaml", overrides);
    FAIL() << "expected an error for key " << key;
  } catch (const ConfigError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find(key), std::string::npos) << m;
    EXPECT_NE(m.find(fragment), std::string::npos) << m;
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
}

TEST(Config, AConfigWithOnlyTheDatasetIsValidAndGetsTheDocumentedDefaults) {
  const Config c = parse_config("data:\n  dataset: cora.h5\n", "x.yaml", {});
  EXPECT_EQ(c.method, "drw");
  EXPECT_EQ(c.model.layers, 2);
  EXPECT_EQ(c.train.batch_size, 0);
  EXPECT_DOUBLE_EQ(c.privacy.target_epsilon, 8.0);
  EXPECT_FALSE(c.privacy.noise_multiplier.has_value());
  EXPECT_FALSE(c.privacy.noise_seed.has_value());
}

TEST(Config, TheNonPrivateGcnDefaultsToWeightDecayAndTheParameterAverageWhichAFileOrSetReplaces) {
  // docs/configs.md, "Method defaults" (docs/results.md, "Issue 37: the non-private GCN's defaults").
  const Config c = parse_config("method: gcn\ndata: {dataset: d.h5}\n", "x.yaml", {});
  EXPECT_DOUBLE_EQ(c.train.weight_decay, 5e-4);
  EXPECT_DOUBLE_EQ(c.train.ema, 0.99);
  EXPECT_DOUBLE_EQ(c.train.lr, 0.005);
  EXPECT_EQ(c.train.model_selection, "best_val");
  EXPECT_EQ(c.train.max_steps, 1000);  // the rest stays the table's
  EXPECT_EQ(c.model.hidden, 256);
  const Config file =
      parse_config("method: gcn\ndata: {dataset: d.h5}\ntrain: {ema: 0, weight_decay: 0}\n", "x.yaml", {});
  EXPECT_DOUBLE_EQ(file.train.weight_decay, 0.0);
  EXPECT_DOUBLE_EQ(file.train.ema, 0.0);
  const Config set = parse_config("data: {dataset: d.h5}\n", "x.yaml", {"method=gcn", "train.ema=0.9"});
  EXPECT_DOUBLE_EQ(set.train.ema, 0.9);
  EXPECT_DOUBLE_EQ(set.train.weight_decay, 5e-4);
  // Not the other methods': the non-private MLP keeps the table's.
  const Config mlp = parse_config("method: mlp\ndata: {dataset: d.h5}\n", "x.yaml", {});
  EXPECT_DOUBLE_EQ(mlp.train.weight_decay, 0.0);
  EXPECT_DOUBLE_EQ(mlp.train.ema, 0.0);
  EXPECT_DOUBLE_EQ(mlp.train.lr, 0.01);
  EXPECT_EQ(mlp.train.model_selection, "last");
}

TEST(Config, CudaDeviceIndexIsTheNumberOfCudaNElseMinusOne) {
  const auto index = [](const std::string& device) {
    return cuda_device_index(parse_config("data:\n  dataset: cora.h5\n", "x.yaml", {"device=" + device}));
  };
  EXPECT_EQ(index("cuda:3"), 3);
  EXPECT_EQ(index("cuda:0"), 0);
  EXPECT_EQ(index("cuda"), -1);
  EXPECT_EQ(index("cpu"), -1);
}

TEST(Config, ReadsEveryKeyTheChecksRelyOn) {
  const Config c = parse_config(R"(
method: drw-r
device: cpu
data: {dataset: d.h5, partition: p.h5}
model: {arch: sage, layers: 1, hidden: 64}
train: {batch_size: 32, lr: 0.1, max_steps: 50, seed: 7}
privacy: {target_epsilon: 4, delta: 1.0e-6, noise_multiplier: 2.5, clip_norm: 0.5, noise_seed: 11}
sampler: {walk_length: 3, restarts: 2}
)",
                                "x.yaml", {});
  EXPECT_EQ(c.method_enum(), Method::kDrwR);
  EXPECT_EQ(c.data.partition, "p.h5");
  EXPECT_EQ(c.model.arch, "sage");
  EXPECT_EQ(c.train.batch_size, 32);
  EXPECT_EQ(c.train.seed, 7u);
  EXPECT_DOUBLE_EQ(*c.privacy.noise_multiplier, 2.5);
  EXPECT_EQ(*c.privacy.noise_seed, 11u);
  EXPECT_EQ(c.sampler.restarts, 2);
}

TEST(Config, OverridesApplyAfterTheFileAndCanResetOptionalKeys) {
  const Config c = parse_config("data: {dataset: d.h5}\nprivacy: {noise_multiplier: 2}\n", "x.yaml",
                                {"train.lr=0.5", "privacy.noise_multiplier=null", "method=gcn"});
  EXPECT_DOUBLE_EQ(c.train.lr, 0.5);
  EXPECT_FALSE(c.privacy.noise_multiplier.has_value());
  EXPECT_EQ(c.method, "gcn");
}

TEST(Config, RejectsUnknownKeysNamingThem) {
  expect_config_error("data: {dataset: d.h5}\ntrain: {learning_rate: 0.1}\n", "train.learning_rate", "unknown key");
  expect_config_error("data: {dataset: d.h5}\noptim: {lr: 0.1}\n", "optim", "unknown section");
  expect_config_error("data: {dataset: d.h5}\n", "train.lrr", "unknown key", {"train.lrr=1"});
}

TEST(Config, RejectsWrongTypes) {
  expect_config_error("data: {dataset: d.h5}\ntrain: {lr: fast}\n", "train.lr", "expected a number");
  expect_config_error("data: {dataset: d.h5}\nmodel: {layers: [1, 2]}\n", "model.layers", "got a list");
}

TEST(Config, RejectsOutOfRangeValues) {
  expect_config_error("data: {dataset: d.h5}\nprivacy: {target_epsilon: 0}\n", "privacy.target_epsilon", "> 0");
  expect_config_error("data: {dataset: d.h5}\nprivacy: {target_epsilon: -1}\n", "privacy.target_epsilon", "> 0");
  expect_config_error("data: {dataset: d.h5}\nprivacy: {delta: 1}\n", "privacy.delta", "(0, 1)");
  expect_config_error("data: {dataset: d.h5}\nmodel: {layers: 4}\n", "model.layers", "1, 2 or 3");
  expect_config_error("data: {dataset: d.h5}\nmethod: dp-sgd\n", "method", "unknown");
  expect_config_error("data: {dataset: d.h5}\nprivacy: {noise_multiplier: 0}\n", "privacy.noise_multiplier", "> 0");
  expect_config_error("data: {dataset: d.h5}\ndpar: {label_fraction: 1}\n", "dpar.label_fraction", "[0, 1)");
  expect_config_error("data: {dataset: d.h5}\ndpar: {label_fraction: 0.6, appr_fraction: 0.4}\n",
                      "dpar.label_fraction", "plus dpar.appr_fraction must be < 1");
  expect_config_error("data: {dataset: d.h5}\ndpar: {label_fraction: 0.4, appr_fraction: 0.1, graph_sampling_rate: 0.5}\n",
                      "dpar.label_fraction", "graph_sampling_rate");
  expect_config_error("data: {dataset: d.h5}\ndpar: {label_min_epsilon: -1}\n", "dpar.label_min_epsilon", ">= 0");
}

TEST(Config, RequiresADataset) { expect_config_error("method: drw\n", "data.dataset", "required"); }

// train.model_selection: last by default, best_val for the non-private GCN (its defaults); best_val
// reads the validation labels, so a private method that uses it is not private.
TEST(Config, ModelSelectionIsLastOrBestValAndBestValIsOutsideTheGuarantee) {
  expect_config_error("data: {dataset: d.h5}\ntrain: {model_selection: best}\n", "train.model_selection",
                      "must be last or best_val, got 'best'");
  const Config drw = parse_config("data: {dataset: d.h5}\n", "x.yaml", {});
  EXPECT_EQ(drw.train.model_selection, "last");
  EXPECT_TRUE(run_is_private(drw));
  const Config chosen = parse_config("data: {dataset: d.h5}\ntrain: {model_selection: best_val}\n", "x.yaml", {});
  EXPECT_FALSE(run_is_private(chosen));
  const std::vector<std::string> why = reasons_not_private(chosen);
  ASSERT_EQ(why.size(), 1u);
  EXPECT_NE(why[0].find("train.model_selection: best_val"), std::string::npos) << why[0];
}

// A syntax error names the file, line and column (file:line:column, counted from 1).
TEST(Config, RejectsInvalidYamlWithLineAndColumn) {
  try {
    parse_config("method: drw\ndata: {dataset: d.h5}\ntrain: [unclosed\n", "x.yaml", {});
    FAIL() << "expected a syntax error";
  } catch (const UsageError& e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("x.yaml:", 0), 0u) << m;
    EXPECT_NE(m.find("not valid YAML"), std::string::npos) << m;
    EXPECT_NE(m.find("x.yaml:4:1:"), std::string::npos) << m;  // the list is still open at the end (line 4)
    EXPECT_EQ(e.exit_code(), kExitUsage);
  }
}

// Messages that point at the cause (issue 25 item 4).
TEST(Config, MessagesPointAtTheCause) {
  // The closest known key, in this section or the same name in another.
  expect_config_error("data: {dataset: d.h5}\ntrain: {lrr: 0.1}\n", "train.lrr", "did you mean 'train.lr'?");
  expect_config_error("data: {dataset: d.h5}\ntrain: {clip_norm: 0.1}\n", "train.clip_norm",
                      "did you mean 'privacy.clip_norm'?");
  expect_config_error("data: {dataset: d.h5}\nmethd: drw\n", "methd", "did you mean 'method'?");
  expect_config_error("data: {dataset: d.h5}\ntrian: {lr: 0.1}\n", "trian", "did you mean 'train'?");
  // A scalar where a section belongs.
  expect_config_error("data: data/cora.h5\n", "data", "is a section, not a value");
  expect_config_error("data: data/cora.h5\n", "data", "data: {dataset: ...}");
  // A bad --set value is blamed on the --set, also when only validation finds it.
  try {
    parse_config("data: {dataset: d.h5}\n", "x.yaml", {"train.lr=-1"});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--set train.lr=-1: key 'train.lr': must be > 0", 0), 0u) << e.what();
  }
  try {
    parse_config("data: {dataset: d.h5}\n", "x.yaml", {"train.lr=fast"});
    FAIL();
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--set train.lr=fast: key 'train.lr': expected a number", 0), 0u) << e.what();
  }
  // The same value in the file is the file's.
  expect_config_error("data: {dataset: d.h5}\ntrain: {lr: -1}\n", "x.yaml: key 'train.lr'", "must be > 0");
}

TEST(Config, DumpsEveryKeyAndReadsBackTheSameConfig) {
  const Config a = parse_config("data: {dataset: d.h5}\ntrain: {lr: 0.25}\nprivacy: {noise_seed: 3}\n", "x.yaml", {});
  const std::string text = dump_config(a);
  const Config b = parse_config(text, "dump.yaml", {});
  EXPECT_EQ(dump_config(b), text);
  EXPECT_DOUBLE_EQ(b.train.lr, 0.25);
  EXPECT_EQ(*b.privacy.noise_seed, 3u);
  EXPECT_NE(text.find("walk_length"), std::string::npos);
}

// Written numbers are the shortest text that reads back as the same double: `lr: 0.1`, not
// 0.10000000000000001; exponents keep a ".0" so YAML 1.1 readers see a number.
TEST(Config, DumpWritesShortestRoundTripNumbers) {
  const Config a = parse_config(
      "data: {dataset: d.h5}\ntrain: {lr: 0.1}\nprivacy: {delta: 1.0e-5, clip_norm: 0.3, noise_multiplier: 1.1}\n",
      "x.yaml", {});
  const std::string text = dump_config(a);
  EXPECT_NE(text.find("lr: 0.1\n"), std::string::npos) << text;
  EXPECT_NE(text.find("delta: 1.0e-05\n"), std::string::npos) << text;
  EXPECT_NE(text.find("clip_norm: 0.3\n"), std::string::npos) << text;
  EXPECT_NE(text.find("noise_multiplier: 1.1\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("0000000"), std::string::npos) << text;
  const Config b = parse_config(text, "dump.yaml", {});
  EXPECT_EQ(b.train.lr, 0.1);
  EXPECT_EQ(b.privacy.delta, 1e-5);
  EXPECT_EQ(*b.privacy.noise_multiplier, 1.1);
  // --help-config: plain text by default (booleans as true/false), Markdown on request.
  const std::string plain = describe_config_keys();
  EXPECT_NE(plain.find("train.lr (number, default "), std::string::npos) << plain.substr(0, 400);
  EXPECT_NE(plain.find("train.keep_checkpoint (boolean, default false)"), std::string::npos);
  EXPECT_EQ(plain.find("|---"), std::string::npos);
  EXPECT_NE(describe_config_keys(true).find("| `train.lr` | number |"), std::string::npos);
}

TEST(Config, DegreeBoundAndClippingTakeTheirDocumentedValues) {
  const Config d = parse_config("data: {dataset: d.h5}\n", "x.yaml", {});
  EXPECT_EQ(d.sampler.degree_bound, "paper");
  EXPECT_EQ(d.privacy.clipping, "flat");
  const Config c = parse_config(
      "data: {dataset: d.h5}\nsampler: {degree_bound: require}\nprivacy: {clipping: per-layer}\n", "x.yaml", {});
  EXPECT_EQ(c.sampler.degree_bound, "require");
  EXPECT_EQ(c.privacy.clipping, "per-layer");
  expect_config_error("data: {dataset: d.h5}\nsampler: {degree_bound: covered}\n", "sampler.degree_bound",
                      "paper or require");
  expect_config_error("data: {dataset: d.h5}\nprivacy: {clipping: layer}\n", "privacy.clipping", "flat or per-layer");
}

}  // namespace
}  // namespace dpgnn::train
