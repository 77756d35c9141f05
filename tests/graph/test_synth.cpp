// Tests of the synthetic DC-SBM generator (graph/synth.h) and of `dpgnn synth`.
//
// Every expectation is derived from the requested parameters (degree D, homophily H,
// split fractions, feature signal, unit noise), never from numbers the generator printed:
// the written file is read back with the strict validator and measured here.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "dpgnn/util/remove_tree.h"
#include "dpgnn/graph/dataset.h"
#include "dpgnn/graph/synth.h"
#include "dpgnn/graph/validate.h"
#include "dpgnn/util/error.h"

namespace dpgnn::graph {
namespace {

class ScratchDir {
 public:
  ScratchDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("dpgnn-synth-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    dpgnn::remove_tree(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

struct CommandRun {
  int exit_code = -1;
  bool signaled = false;
  std::string output;  // stdout + stderr
};

CommandRun run_dpgnn(const std::string& args) {
  CommandRun r;
  FILE* p = ::popen((std::string(DPGNN_BINARY) + " " + args + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int status = ::pclose(p);
  r.signaled = WIFSIGNALED(status);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  return r;
}

SynthParams small_params() {
  SynthParams p;
  p.nodes = 4000;
  p.avg_degree = 16;
  p.classes = 5;
  p.features = 32;
  p.homophily = 0.8;
  p.seed = 7;
  p.threads = 2;
  p.feature_signal = 2.0;
  return p;
}

// Fraction of CSR entries whose endpoints share a label (each undirected edge counted twice).
double measured_homophily(const Dataset& d) {
  std::int64_t same = 0;
  for (std::int64_t v = 0; v < d.graph.num_nodes(); ++v)
    for (NodeId u : d.graph.out_neigh(v)) same += d.labels[u] == d.labels[v];
  return static_cast<double>(same) / static_cast<double>(d.graph.num_edges());
}

Dataset write_and_load(const SynthParams& p, const ScratchDir& dir, DatasetStats* stats = nullptr) {
  const std::string path = dir.file("g.h5");
  write_synthetic_dataset(p, path);
  return load_and_validate(path, stats);
}

TEST(Synth, SameSeedGivesTheSameContentWhateverTheThreadCount) {
  ScratchDir dir;
  SynthParams p = small_params();
  p.threads = 1;
  const std::string a = write_synthetic_dataset(p, dir.file("a.h5")).checksum;
  p.threads = 3;
  const std::string b = write_synthetic_dataset(p, dir.file("b.h5")).checksum;
  EXPECT_EQ(a, b);
  // The stored checksums describe the content actually read back.
  EXPECT_EQ(load_and_validate(dir.file("a.h5"), nullptr).meta.checksum, a);
  EXPECT_EQ(load_and_validate(dir.file("b.h5"), nullptr).meta.checksum, a);
  p.seed = 8;
  EXPECT_NE(write_synthetic_dataset(p, dir.file("c.h5")).checksum, a);
}

TEST(Synth, OutputIsAValidUndirectedGraphWithoutSelfLoopsOrRepeatedEdges) {
  ScratchDir dir;
  DatasetStats s;
  const Dataset d = write_and_load(small_params(), dir, &s);  // throws on any invalid invariant
  EXPECT_FALSE(d.meta.directed);
  EXPECT_TRUE(d.graph.is_symmetric());
  EXPECT_TRUE(d.graph.rows_sorted());
  EXPECT_EQ(s.self_loops, 0);
  EXPECT_EQ(s.duplicate_edges, 0);
  EXPECT_EQ(2 * s.undirected_edges, s.edges);
  EXPECT_EQ(d.meta.num_nodes, 4000);
  EXPECT_EQ(d.meta.num_classes, 5);
  EXPECT_EQ(d.meta.num_features, 32);
  EXPECT_EQ(d.meta.setting, Setting::transductive);
}

TEST(Synth, RealisedAverageDegreeIsWithinTwoPercentOfTheTargetEvenWhenPairsRepeat) {
  ScratchDir dir;
  SynthParams p = small_params();
  // Dense blocks (600 nodes per class, 48 same-class neighbours each) with heavy-tailed
  // propensities: many drawn pairs repeat and must be re-drawn to reach D.
  p.nodes = 3000;
  p.avg_degree = 60;
  p.classes = 5;
  p.features = 0;
  const Dataset d = write_and_load(p, dir);
  const double realised = static_cast<double>(d.graph.num_edges()) / static_cast<double>(p.nodes);
  EXPECT_NEAR(realised, 60.0, 0.02 * 60.0);
  EXPECT_LE(realised, 60.0 + 1e-9);
}

TEST(Synth, EveryRequestedEdgeIsFoundEvenWhenFewFreePairsRemain) {
  ScratchDir dir;
  SynthParams p = small_params();
  p.features = 0;
  // Complete graph: all 190 pairs of 20 nodes must be drawn.
  p.nodes = 20;
  p.classes = 1;
  p.avg_degree = 19;
  DatasetStats s;
  write_and_load(p, dir, &s);
  EXPECT_EQ(s.undirected_edges, 190);
  // Half of all same-class pairs and half of all cross-class pairs (2 classes of 20).
  p.nodes = 40;
  p.classes = 2;
  p.avg_degree = 19.5;  // 390 edges: 195 of 380 same-class pairs, 195 of 400 cross-class
  p.homophily = 0.5;
  const Dataset d = write_and_load(p, dir, &s);
  EXPECT_EQ(s.undirected_edges, 390);
  EXPECT_NEAR(measured_homophily(d), 0.5, 1e-12);
}

TEST(Synth, HomophilyOfTheEdgesIsCloseToTheRequestedOne) {
  ScratchDir dir;
  for (double h : {0.0, 0.3, 0.8, 1.0}) {
    SynthParams p = small_params();
    p.homophily = h;
    p.features = 0;
    const Dataset d = write_and_load(p, dir);
    EXPECT_NEAR(measured_homophily(d), h, 0.03) << "homophily " << h;
  }
}

TEST(Synth, DefaultSplitIsAHalfAQuarterAndAQuarterOfTheNodes) {
  ScratchDir dir;
  SynthParams p = small_params();
  p.nodes = 4001;
  DatasetStats s;
  write_and_load(p, dir, &s);
  EXPECT_NEAR(static_cast<double>(s.train), 0.5 * 4001, 1.0);
  EXPECT_NEAR(static_cast<double>(s.val), 0.25 * 4001, 1.0);
  EXPECT_EQ(s.train + s.val + s.test, 4001);  // every node in exactly one split
}

TEST(Synth, SplitFractionsOptionsAreFollowed) {
  ScratchDir dir;
  SynthParams p = small_params();
  p.train_frac = 0.1;
  p.val_frac = 0.3;
  DatasetStats s;
  write_and_load(p, dir, &s);
  EXPECT_EQ(s.train, 400);
  EXPECT_EQ(s.val, 1200);
  EXPECT_EQ(s.test, 2400);
}

TEST(Synth, SplitsAreMixedOverNodeIdsAndClasses) {
  ScratchDir dir;
  const Dataset d = write_and_load(small_params(), dir);
  // A seeded random split: the first and second halves of the ids each hold about half of
  // the training nodes, and every class is about half training (binomial sd ~ 1.6%).
  std::int64_t first_half = 0, total = 0;
  std::vector<std::int64_t> per_class(5, 0), class_size(5, 0);
  for (std::int64_t v = 0; v < 4000; ++v) {
    total += d.train_mask[v];
    first_half += v < 2000 ? d.train_mask[v] : 0;
    per_class[d.labels[v]] += d.train_mask[v];
    ++class_size[d.labels[v]];
  }
  EXPECT_NEAR(static_cast<double>(first_half) / static_cast<double>(total), 0.5, 0.05);
  for (int c = 0; c < 5; ++c)
    EXPECT_NEAR(static_cast<double>(per_class[c]) / static_cast<double>(class_size[c]), 0.5, 0.08) << "class " << c;
}

TEST(Synth, ClassSizesDifferByAtMostOne) {
  ScratchDir dir;
  SynthParams p = small_params();
  p.nodes = 4003;
  p.classes = 7;
  const Dataset d = write_and_load(p, dir);
  std::vector<std::int64_t> size(7, 0);
  for (auto y : d.labels) {
    ASSERT_GE(y, 0);
    ASSERT_LT(y, 7);
    ++size[y];
  }
  EXPECT_LE(*std::max_element(size.begin(), size.end()) - *std::min_element(size.begin(), size.end()), 1);
  // Labels are not laid out by id: neighbouring ids rarely share a class (1/C by chance).
  std::int64_t runs = 0;
  for (std::size_t v = 1; v < d.labels.size(); ++v) runs += d.labels[v] == d.labels[v - 1];
  EXPECT_LT(static_cast<double>(runs) / 4002.0, 0.25);
}

TEST(Synth, FeaturesAreClassMeansOfTheRequestedNormPlusUnitNoise) {
  ScratchDir dir;
  SynthParams p = small_params();  // signal 2, F = 32, 800 nodes per class
  const Dataset d = write_and_load(p, dir);
  const std::int64_t f = p.features, c = p.classes;
  std::vector<double> mean(c * f, 0.0), count(c, 0.0);
  for (std::int64_t v = 0; v < p.nodes; ++v) {
    count[d.labels[v]] += 1;
    for (std::int64_t j = 0; j < f; ++j) mean[d.labels[v] * f + j] += d.features[v * f + j];
  }
  for (std::int64_t k = 0; k < c; ++k)
    for (std::int64_t j = 0; j < f; ++j) mean[k * f + j] /= count[k];
  double var = 0;
  for (std::int64_t v = 0; v < p.nodes; ++v)
    for (std::int64_t j = 0; j < f; ++j) {
      const double r = d.features[v * f + j] - mean[d.labels[v] * f + j];
      var += r * r;
    }
  var /= static_cast<double>(p.nodes * f);
  EXPECT_NEAR(var, 1.0, 0.03);  // unit noise per dimension (128k samples: sd of the estimate ~0.004)
  for (std::int64_t k = 0; k < c; ++k) {
    double norm2 = 0;
    for (std::int64_t j = 0; j < f; ++j) norm2 += mean[k * f + j] * mean[k * f + j];
    // E||mean_hat||^2 = signal^2 + F / n_c = 4 + 0.04.
    EXPECT_NEAR(std::sqrt(norm2), 2.0, 0.15) << "class " << k;
    for (std::int64_t l = 0; l < k; ++l) {
      double dist2 = 0;
      for (std::int64_t j = 0; j < f; ++j) dist2 += std::pow(mean[k * f + j] - mean[l * f + j], 2);
      // Random directions in 32 dimensions are nearly orthogonal: distance ~ 2 * sqrt(2).
      EXPECT_GT(std::sqrt(dist2), 1.4) << "classes " << k << ", " << l;
    }
  }
}

TEST(Synth, ZeroFeatureSignalMakesFeaturesIndependentOfTheClass) {
  ScratchDir dir;
  SynthParams p = small_params();
  p.feature_signal = 0;
  const Dataset d = write_and_load(p, dir);
  const std::int64_t f = p.features;
  std::vector<double> mean(p.classes * f, 0.0), count(p.classes, 0.0);
  for (std::int64_t v = 0; v < p.nodes; ++v) {
    count[d.labels[v]] += 1;
    for (std::int64_t j = 0; j < f; ++j) mean[d.labels[v] * f + j] += d.features[v * f + j];
  }
  for (std::int64_t k = 0; k < p.classes; ++k) {
    double norm2 = 0;
    for (std::int64_t j = 0; j < f; ++j) norm2 += std::pow(mean[k * f + j] / count[k], 2);
    EXPECT_LT(std::sqrt(norm2), 0.4);  // pure noise: sqrt(F / n_c) = 0.2
  }
}

TEST(Synth, PowerLawPropensitiesGiveHubsAndALargeExponentGivesNearlyEqualDegrees) {
  ScratchDir dir;
  SynthParams p = small_params();
  p.nodes = 20000;
  p.avg_degree = 10;
  p.features = 0;
  DatasetStats heavy, flat;
  write_and_load(p, dir, &heavy);
  p.degree_exponent = 60;  // Pareto(60): propensities within a few % of 1 -> Poisson(10) degrees
  write_and_load(p, dir, &flat);
  EXPECT_GT(heavy.max_degree, 8 * 10);
  EXPECT_LT(flat.max_degree, 4 * 10);  // P(Poisson(10) >= 40) * 20000 ~ 1e-7
}

TEST(Synth, NoNodeFarExceedsTheExpectedDegreeCap) {
  ScratchDir dir;
  SynthParams p = small_params();
  p.nodes = 20000;
  p.avg_degree = 10;
  p.features = 0;
  p.max_degree = 40;
  DatasetStats s;
  write_and_load(p, dir, &s);
  EXPECT_LE(s.max_degree, 40 + 6 * std::sqrt(40.0));  // Poisson(40) tail
  EXPECT_GT(s.max_degree, 30);                        // the cap is reached, not just a bound
}

TEST(Synth, InductiveFlagIsStoredAsTheSetting) {
  ScratchDir dir;
  SynthParams p = small_params();
  p.inductive = true;
  EXPECT_EQ(write_and_load(p, dir).meta.setting, Setting::inductive);
}

TEST(Synth, SourceAttributeRecordsTheParametersAndTheRealisedGraph) {
  ScratchDir dir;
  SynthParams p = small_params();
  p.name = "toy";
  const Dataset d = write_and_load(p, dir);
  EXPECT_EQ(d.meta.name, "toy");
  for (const char* part : {"nodes=4000", "avg_degree=16", "classes=5", "features=32", "homophily=0.8", "seed=7",
                           "degree_exponent=2.5", "feature_signal=2", "realised", "undirected_edges=32000"})
    EXPECT_NE(d.meta.source.find(part), std::string::npos) << part << " missing from: " << d.meta.source;
}

TEST(Synth, ZeroDegreeAndZeroFeaturesGiveAnEdgelessFeaturelessDataset) {
  ScratchDir dir;
  SynthParams p = small_params();
  p.avg_degree = 0;
  p.features = 0;
  DatasetStats s;
  const Dataset d = write_and_load(p, dir, &s);
  EXPECT_EQ(s.edges, 0);
  EXPECT_EQ(s.isolated, 4000);
  EXPECT_TRUE(d.features.empty());
}

TEST(Synth, BlocksTooSmallForTheRequestedEdgesAreRefused) {
  SynthParams p = small_params();
  p.nodes = 10;
  p.classes = 10;  // singleton classes: no same-class pair exists
  p.avg_degree = 2;
  p.homophily = 0.5;
  try {
    validate_synth_params(p);
    FAIL() << "expected a UsageError";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--homophily"), std::string::npos) << e.what();
  }
}

// ---- the command line -------------------------------------------------------------------

std::string base_args(const std::string& out, int seed = 3) {
  return "synth --nodes 500 --avg-degree 8 --classes 4 --features 6 --homophily 0.7 --seed " + std::to_string(seed) +
         " --out " + out;
}

TEST(SynthCommand, WritesAValidDatasetIndependentOfThreads) {
  ScratchDir dir;
  const CommandRun a = run_dpgnn(base_args(dir.file("a.h5")) + " --threads 1");
  ASSERT_EQ(a.exit_code, 0) << a.output;
  const CommandRun b = run_dpgnn(base_args(dir.file("b.h5")) + " --threads 2 --inductive");
  ASSERT_EQ(b.exit_code, 0) << b.output;
  const CommandRun c = run_dpgnn(base_args(dir.file("c.h5")) + " --threads 2");
  ASSERT_EQ(c.exit_code, 0) << c.output;
  const Dataset da = load_and_validate(dir.file("a.h5"), nullptr);
  const Dataset db = load_and_validate(dir.file("b.h5"), nullptr);
  const Dataset dc = load_and_validate(dir.file("c.h5"), nullptr);
  EXPECT_EQ(da.meta.checksum, dc.meta.checksum);
  EXPECT_EQ(db.meta.setting, Setting::inductive);
  EXPECT_NE(da.meta.checksum, db.meta.checksum);  // the setting is part of the content
  EXPECT_EQ(da.graph.num_edges(), 2 * 2000);
}

TEST(SynthCommand, OutOfRangeOptionsExitWithCode2AndNameTheOption) {
  ScratchDir dir;
  const std::string out = dir.file("x.h5");
  auto args = [&](const std::string& nodes, const std::string& degree, const std::string& classes,
                  const std::string& features, const std::string& homophily) {
    return "synth --nodes " + nodes + " --avg-degree " + degree + " --classes " + classes + " --features " +
           features + " --homophily " + homophily + " --out " + out;
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {args("0", "4", "2", "3", "0.5"), "--nodes"},
      {args("-5", "4", "2", "3", "0.5"), "--nodes"},
      {args("100", "4", "0", "3", "0.5"), "--classes"},
      {args("100", "4", "101", "3", "0.5"), "--classes"},
      {args("100", "4", "2", "3", "1.5"), "--homophily"},
      {args("100", "4", "2", "3", "-0.1"), "--homophily"},
      {args("100", "-1", "2", "3", "0.5"), "--avg-degree"},
      {args("100", "100", "2", "3", "0.5"), "--avg-degree"},
      {args("100", "4", "2", "-2", "0.5"), "--features"},
      {args("100", "4", "2", "3", "0.5") + " --train-frac 0.8 --val-frac 0.3", "--train-frac"},
      {args("100", "4", "2", "3", "0.5") + " --degree-exponent 1", "--degree-exponent"},
      {args("100", "4", "2", "3", "0.5") + " --threads -1", "--threads"},
      {args("100", "4", "2", "3", "0.5") + " --seed -3", "--seed"},
  };
  for (const auto& [cmd, option] : cases) {
    const CommandRun r = run_dpgnn(cmd);
    EXPECT_FALSE(r.signaled) << cmd;
    EXPECT_EQ(r.exit_code, 2) << cmd << "\n" << r.output;
    EXPECT_NE(r.output.find(option), std::string::npos) << cmd << "\n" << r.output;
  }
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(SynthCommand, MissingOutputDirectoryIsAnIoErrorNamingIt) {
  ScratchDir dir;
  const CommandRun r = run_dpgnn(base_args(dir.file("no-such-dir/g.h5")));
  EXPECT_FALSE(r.signaled);
  EXPECT_EQ(r.exit_code, 4) << r.output;
  EXPECT_NE(r.output.find("no-such-dir"), std::string::npos) << r.output;
}

TEST(SynthCommand, ExistingOutputIsKeptUnlessForced) {
  ScratchDir dir;
  const std::string out = dir.file("g.h5");
  ASSERT_EQ(run_dpgnn(base_args(out)).exit_code, 0);
  const std::string before = DatasetReader(out).meta().checksum;
  const CommandRun refused = run_dpgnn(base_args(out, 4));
  EXPECT_NE(refused.exit_code, 0);
  EXPECT_FALSE(refused.signaled);
  EXPECT_NE(refused.output.find("--force"), std::string::npos) << refused.output;
  EXPECT_EQ(DatasetReader(out).meta().checksum, before);  // untouched
  const CommandRun forced = run_dpgnn(base_args(out, 4) + " --force");
  EXPECT_EQ(forced.exit_code, 0) << forced.output;
  EXPECT_NE(DatasetReader(out).meta().checksum, before);
}

}  // namespace
}  // namespace dpgnn::graph
