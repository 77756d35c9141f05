// The experiment catalogue configs/ (written by tools/make_configs.py): every config passes the
// check of `dpgnn train --check` (one test case per file), the committed files are exactly
// what the generator writes, the papers' numbers arrive in the files (deltas of Ayle et al.
// Table 3, batch sizes of their Table 4, Daigavane et al. Table 9, typed here from the papers
// independently of the generator), dpgnn configs never point at a METIS partition, a bad
// config fails naming the file and the key, and the real `dpgnn train --dry-run` runs on every
// config of a dataset in ../shared/data after `dpgnn prepare --config` has run the import and
// partition commands of its data.prepare (Cora and two more by default; all with
// DPGNN_CONFIG_DRY_RUNS=all).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "dpgnn/train/config.h"
#include "dpgnn/util/error.h"
#include "test_support.h"

namespace dpgnn::train {
namespace {

namespace fs = std::filesystem;
using dpgnn::testing::CommandResult;
using dpgnn::testing::run_command;
using dpgnn::testing::TempDir;

const fs::path kConfigs = fs::path(DPGNN_SOURCE_DIR) / "configs";
const std::string kEnv =
    "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "
    "DPGNN_PROGRESS=0 ";

// Every *.yaml under `root`, relative, sorted; configs/sweeps/ holds sweep specs, not configs.
std::vector<std::string> yaml_files(const fs::path& root, bool include_top_level) {
  std::vector<std::string> out;
  if (!fs::exists(root)) return out;
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.path().extension() != ".yaml") continue;
    const fs::path rel = fs::relative(e.path(), root);
    if (*rel.begin() == "sweeps") continue;
    if (rel == "recommended.yaml") continue;  // settings only: the user adds data and privacy
    if (!include_top_level && rel.parent_path().empty()) continue;
    out.push_back(rel.generic_string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Config load(const std::string& rel) { return load_config((kConfigs / rel).string(), {}); }

// A GoogleTest name: '/' -> "__" so that cora/drw.yaml and cora-drw.yaml stay distinct.
std::string test_name(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '/' ? std::string("__") : std::string(1, std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
  return out;
}

// ---- every file passes the check -----------------------------------------------------------

class EveryConfig : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryConfig, PassesTheCheckOfDpgnnTrainCheck) {
  // load_config is exactly what `dpgnn train --check` runs (keys, types, ranges, the method's
  // pairing); in-process, so 160 files cost milliseconds instead of a process start each.
  Config c;
  ASSERT_NO_THROW(c = load(GetParam())) << GetParam();
  EXPECT_FALSE(c.data.dataset.empty());
}

INSTANTIATE_TEST_SUITE_P(Catalogue, EveryConfig, ::testing::ValuesIn(yaml_files(kConfigs, true)),
                         [](const auto& info) { return test_name(info.param); });

TEST(ConfigCatalogue, HoldsEveryMethodForEveryDatasetOfTheRandomWalkPaper) {
  for (const std::string ds : {"cora", "citeseer", "ppi", "pubmed", "flickr", "ogbn-arxiv", "reddit"})
    for (const std::string m : {"drw", "drw-r", "drw-d", "dpgnn", "dp-mlp", "gcn", "mlp"}) {
      const std::string rel = ds + "/" + m + ".yaml";
      ASSERT_TRUE(fs::exists(kConfigs / rel)) << rel;
      EXPECT_EQ(load(rel).method, m) << rel;
    }
}

// ---- the papers' numbers -----------------------------------------------------------------

TEST(ConfigCatalogue, GraphSplitConfigsFollowIgamberdievAndHabernal) {
  // Igamberdiev & Habernal: Sec. 5.2 (delta 1e-5, clipping threshold 1), App. B (2-layer GCN,
  // ReLU, Adam), Table 2 (epsilon 2). Width, dropout and s are ours (the header says why).
  for (const std::string ds : {"citeseer", "cora", "pubmed"}) {
    const std::string rel = ds + "/split.yaml";
    ASSERT_TRUE(fs::exists(kConfigs / rel)) << rel;
    const Config c = load(rel);
    EXPECT_EQ(c.method, "split") << rel;
    EXPECT_EQ(c.privacy.delta, 1e-5) << rel;
    EXPECT_EQ(c.privacy.clip_norm, 1.0) << rel;
    EXPECT_EQ(c.privacy.target_epsilon, 2.0) << rel;
    EXPECT_EQ(c.model.layers, 2) << rel;
    EXPECT_EQ(c.model.activation, "relu") << rel;
    EXPECT_EQ(c.train.optimizer, "adam") << rel;
    EXPECT_FALSE(c.privacy.noise_multiplier.has_value()) << rel << ": calibrated to the target";
  }
}

TEST(ConfigCatalogue, DparConfigsFollowZhangEtAlsDataProtocol) {
  // Zhang et al. (DPAR), Sec. 4: 80% train / 20% test, inductive, K = 2, alpha 0.25, rho 1e-4,
  // gamma 1e-4, M = 70, C1 = 0.01, C2 = 0.001, P = 2, epsilon 1, delta about 1 / training
  // nodes; a structure-independent partition. The training setting is ours (the header says why).
  for (const std::string ds : {"coauthor-cs", "coauthor-physics", "cora-ml"}) {
    const std::string rel = ds + "/dpar.yaml";
    ASSERT_TRUE(fs::exists(kConfigs / rel)) << rel;
    const Config c = load(rel);
    EXPECT_EQ(c.method, "dpar") << rel;
    EXPECT_EQ(c.privacy.target_epsilon, 1.0) << rel;
    EXPECT_FALSE(c.privacy.noise_multiplier.has_value()) << rel << ": calibrated to the target";
    EXPECT_EQ(c.dpar.top_k, 2) << rel;
    EXPECT_EQ(c.dpar.appr_nodes, 70) << rel;
    EXPECT_EQ(c.dpar.alpha, 0.25) << rel;
    EXPECT_EQ(c.dpar.rho, 1e-4) << rel;
    EXPECT_EQ(c.dpar.tolerance, 1e-4) << rel;
    EXPECT_EQ(c.dpar.gm_clip, 0.01) << rel;
    EXPECT_EQ(c.dpar.em_clip, 0.001) << rel;
    EXPECT_EQ(c.dpar.propagation_steps, 2) << rel;
    EXPECT_NE(c.data.partition.find("random"), std::string::npos) << rel;
    std::ifstream in(kConfigs / rel);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("--train-fraction 0.8 --val-fraction 0 --setting inductive"), std::string::npos) << rel;
  }
  // Coauthor CS: 14,666 training nodes: delta 1e-5 (<= 1/14,666); the automatic batch (every
  // example left after the release: a full batch).
  const Config cs = load("coauthor-cs/dpar.yaml");
  EXPECT_EQ(cs.privacy.delta, 1e-5);
  EXPECT_EQ(cs.train.batch_size, 0);
}

TEST(ConfigCatalogue, PrivateRunsUseTheDeltasOfAyleTable3AndEpsilon8) {
  // Ayle et al. 2022, Appendix C, Table 3.
  const std::map<std::string, double> delta = {{"cora", 1e-5},   {"citeseer", 1e-5},   {"ppi", 1e-5},
                                               {"pubmed", 1e-6}, {"flickr", 1e-6},     {"ogbn-arxiv", 1e-7},
                                               {"reddit", 1e-7}};
  for (const auto& [ds, d] : delta)
    for (const std::string m : {"drw", "drw-r", "drw-d", "dpgnn", "dp-mlp"}) {
      const Config c = load(ds + "/" + m + ".yaml");
      EXPECT_EQ(c.privacy.delta, d) << ds << "/" << m;
      EXPECT_EQ(c.privacy.target_epsilon, 8.0) << ds << "/" << m;
      ASSERT_TRUE(c.privacy.noise_multiplier.has_value()) << ds << "/" << m;
      EXPECT_TRUE(*c.privacy.noise_multiplier == 1 || *c.privacy.noise_multiplier == 2 ||
                  *c.privacy.noise_multiplier == 4 || *c.privacy.noise_multiplier == 8)
          << "outside the grid {1, 2, 4, 8}: " << ds << "/" << m;
    }
}

TEST(ConfigCatalogue, BatchSizesAreThoseOfAyleTable4ForTheModelDepth) {
  // Ayle et al. 2022, Table 4: [depth 1, depth 2] per dataset, for the "RW, uniform, PreDRW,
  // PreDRW-D, DynDRW" row and the "PreDRW-R" row.
  const std::map<std::string, std::pair<std::array<int, 2>, std::array<int, 2>>> table4 = {
      {"cora", {{70, 46}, {46, 28}}},
      {"citeseer", {{60, 40}, {40, 24}}},
      {"ppi", {{2000, 2000}, {2000, 1800}}},
      {"pubmed", {{30, 20}, {20, 12}}},
      {"flickr", {{10000, 10000}, {10000, 8000}}},
      {"ogbn-arxiv", {{20000, 20000}, {20000, 18000}}},
      {"reddit", {{30000, 30000}, {30000, 30000}}}};
  for (const auto& [ds, rows] : table4) {
    for (const std::string m : {"drw", "drw-d", "gcn", "mlp"}) {
      const Config c = load(ds + "/" + m + ".yaml");
      EXPECT_EQ(c.train.batch_size, rows.first[c.model.layers - 1]) << ds << "/" << m;
    }
    const Config r = load(ds + "/drw-r.yaml");
    EXPECT_EQ(r.train.batch_size, rows.second[r.model.layers - 1]) << ds << "/drw-r";
    EXPECT_EQ(r.sampler.restarts, 2) << ds;
  }
}

TEST(ConfigCatalogue, ArchitecturesComeFromAyleTable1AndItsGrid) {
  // Ayle et al. 2022, Table 1: the best (layers, width) of a row. Cora DRW: 2 x 512 (24.9);
  // Reddit DRW-R: 2 x 512 (82.2); PPI DRW: 1 layer (40.2); ogbn-arxiv FDP: 1 layer (43.8);
  // Flickr GCN: 2 x 256 ties 2 x 512 at 51.3 (the smaller one).
  const std::vector<std::tuple<std::string, int, int>> expect = {
      {"cora/drw", 2, 512}, {"reddit/drw-r", 2, 512}, {"ppi/drw", 1, -1}, {"ogbn-arxiv/dpgnn", 1, -1},
      {"flickr/gcn", 2, 256}};
  for (const auto& [rel, layers, hidden] : expect) {
    const Config c = load(rel + ".yaml");
    EXPECT_EQ(c.model.layers, layers) << rel;
    if (hidden > 0) {
      EXPECT_EQ(c.model.hidden, hidden) << rel;
    }
  }
  for (const auto& rel : yaml_files(kConfigs, false)) {
    if (rel.find("daigavane") != std::string::npos) continue;
    if (rel.find("/split.yaml") != std::string::npos) continue;  // Igamberdiev & Habernal's protocol (below)
    if (rel.find("/dpar.yaml") != std::string::npos) continue;   // Zhang et al.'s protocol (below)
    const Config c = load(rel);
    EXPECT_TRUE(c.model.layers == 1 || c.model.layers == 2) << rel;
    EXPECT_TRUE(c.model.hidden == 256 || c.model.hidden == 512) << rel;
    EXPECT_EQ(c.train.optimizer, "adam") << rel;
    EXPECT_EQ(c.model.activation, "relu") << rel;
    if (is_private(c.method_enum())) {
      EXPECT_TRUE(c.train.lr == 0.01 || c.train.lr == 0.1 || c.train.lr == 0.2) << rel;
      EXPECT_TRUE(c.privacy.clip_norm == 0.001 || c.privacy.clip_norm == 0.01 || c.privacy.clip_norm == 0.1) << rel;
    } else {
      EXPECT_EQ(c.train.lr, 0.01) << rel << ": the paper fixes the non-DP learning rate to 0.01";
    }
    if (c.method == "dpgnn") {
      EXPECT_TRUE(c.sampler.max_degree == 2 || c.sampler.max_degree == 4) << rel;
    }
  }
}

TEST(ConfigCatalogue, DaigavaneSetupsFollowTheirTables9And10) {
  // Daigavane et al., Table 9 (transductive, epsilon <= 10) and Table 10 (inductive "-disjoint",
  // epsilon <= 12): lr, batch, lambda, K; DP-GCN (Adam) and (SGD), 1 and 2 layers, DP-MLP, MLP.
  struct Row {
    std::string rel, optimizer;
    double lr;
    std::int64_t batch;
    double lambda;
    int k, gcn_layers;
    double epsilon;
  };
  const std::vector<Row> rows = {
      {"ogbn-arxiv/daigavane/dpgnn", "adam", 0.003, 10000, 2, 7, 1, 10},
      {"ogbn-products/daigavane/dpgnn", "adam", 0.005, 10000, 1, 10, 1, 10},
      {"reddit/daigavane/dpgnn", "adam", 0.002, 10000, 1, 10, 1, 10},
      {"ogbn-products/daigavane/dpgnn-sgd", "sgd", 2.0, 40000, 2, 5, 1, 10},
      {"reddit/daigavane/dp-mlp", "adam", 0.001, 10000, 1, 0, 0, 10},
      {"ogbn-arxiv/daigavane/mlp", "adam", 0.001, 1000, 0, 0, 0, 0},
      {"reddit/daigavane/inductive-dpgnn-2layer", "adam", 0.002, 20000, 2, 3, 2, 12},
      {"ogbn-arxiv/daigavane/inductive-dpgnn-1layer", "adam", 0.002, 20000, 4, 7, 1, 12}};
  for (const auto& r : rows) {
    const Config c = load(r.rel + ".yaml");
    EXPECT_EQ(c.train.optimizer, r.optimizer) << r.rel;
    EXPECT_EQ(c.train.lr, r.lr) << r.rel;
    EXPECT_EQ(c.train.batch_size, r.batch) << r.rel;
    if (r.lambda > 0) {
      ASSERT_TRUE(c.privacy.noise_multiplier.has_value()) << r.rel;
      EXPECT_EQ(*c.privacy.noise_multiplier, r.lambda) << r.rel;
      EXPECT_EQ(c.privacy.target_epsilon, r.epsilon) << r.rel;
    }
    if (r.k > 0) {
      EXPECT_EQ(c.sampler.max_degree, r.k) << r.rel;
      EXPECT_EQ(c.model.layers, r.gcn_layers) << r.rel;
    }
  }
}

TEST(ConfigCatalogue, DpgnnConfigsPointAtAStructureIndependentPartition) {
  // DESIGN.md 5: node-level DP may not use a METIS partition (the trainer refuses one).
  int n = 0;
  for (const auto& rel : yaml_files(kConfigs, true)) {
    const Config c = load(rel);
    if (c.method != "dpgnn") continue;
    ++n;
    EXPECT_NE(c.data.partition.find(".random"), std::string::npos) << rel << ": " << c.data.partition;
  }
  EXPECT_GE(n, 7 + 14 + 6);
}

// ---- the generator -------------------------------------------------------------------------

TEST(ConfigCatalogue, CommittedFilesAreExactlyTheGeneratorsOutput) {
  TempDir tmp;
  const CommandResult r = run_command("/usr/bin/python3 " + std::string(DPGNN_SOURCE_DIR) +
                                      "/tools/make_configs.py --out " + tmp.file("configs"));
  ASSERT_EQ(r.exit_code, 0) << r.output << "\n(/usr/bin/python3 needs python3-yaml: scripts/install-deps.sh)";
  const auto generated = yaml_files(tmp.path() / "configs", false);
  const auto committed = yaml_files(kConfigs, false);
  EXPECT_EQ(committed, generated) << "run /usr/bin/python3 tools/make_configs.py and commit configs/";
  for (const auto& rel : generated) {
    if (fs::exists(kConfigs / rel)) {
      EXPECT_EQ(read_text(kConfigs / rel), read_text(tmp.path() / "configs" / rel))
          << rel << " differs from tools/make_configs.py's output";
    }
  }
  EXPECT_GE(generated.size(), 7u * 7u + 14u * 7u + 12u + 8u);
}

// ---- the flag and its errors --------------------------------------------------------------

TEST(TrainCheck, AcceptsEveryCoraConfigWithoutItsDataAndNamesThePairing) {
  TempDir tmp;  // an empty working directory: data/cora.h5 does not exist there
  for (const std::string m : {"drw", "drw-r", "drw-d", "dpgnn", "dp-mlp", "gcn", "mlp"}) {
    const std::string cfg = (kConfigs / "cora" / (m + ".yaml")).string();
    const CommandResult r =
        run_command("cd " + tmp.path().string() + " && " + DPGNN_BINARY + " train --check --config " + cfg);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.rfind("OK " + cfg + ": method " + m + ",", 0), 0u) << r.output;
    EXPECT_NE(r.output.find("accountant " + std::string(m == "dpgnn"                 ? "dpgnn_hypergeometric"
                                                         : m == "gcn" || m == "mlp" ? "none"
                                                                                    : "wor_replace_one")),
              std::string::npos)
        << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << "one line: " << r.output;
  }
}

TEST(TrainCheck, AnUnknownKeyFailsNamingTheFileAndTheKey) {
  TempDir tmp;
  const std::string bad = tmp.file("bad.yaml");
  std::ofstream(bad) << read_text(kConfigs / "cora" / "drw.yaml") << "  walk_lenght: 3\n";  // under sampler:
  const CommandResult r = testing::run_dpgnn("train --check --config " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(bad), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("sampler.walk_lenght"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("OK "), std::string::npos) << r.output;
}

TEST(TrainCheck, AnOutOfRangeValueFailsNamingTheFileAndTheKey) {
  TempDir tmp;
  const std::string bad = tmp.file("bad.yaml");
  std::string text = read_text(kConfigs / "cora" / "drw.yaml");
  const auto at = text.find("delta: 1.0e-05");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 14, "delta: 2");
  std::ofstream(bad) << text;
  const CommandResult r = testing::run_dpgnn("train --check --config " + bad);
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find(bad + ": key 'privacy.delta'"), std::string::npos) << r.output;
}

TEST(TrainCheck, RefusesTheWorstCaseBoundForMethodsItDoesNotCover) {
  const CommandResult r = testing::run_dpgnn("train --check --config " + (kConfigs / "cora" / "dpgnn.yaml").string() +
                                             " --set privacy.worst_case=true");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("privacy.worst_case"), std::string::npos) << r.output;
  const CommandResult ok = testing::run_dpgnn(
      "train --check --config " + (kConfigs / "cora" / "drw-r.yaml").string() + " --set privacy.worst_case=true");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_NE(ok.output.find("wor_replace_one_worst_case"), std::string::npos) << ok.output;
}

TEST(TrainDryRun, MissingDataPointsAtTheCheckFlag) {
  TempDir tmp;
  const CommandResult r = run_command("cd " + tmp.path().string() + " && " + kEnv + DPGNN_BINARY +
                                      " train --dry-run --config " + (kConfigs / "cora" / "drw.yaml").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("data/cora.h5' does not exist"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("dpgnn train --check"), std::string::npos) << r.output;
}

// ---- the real dry run on the datasets of ../shared/data -------------------------------------

// A config's data.prepare commands (run by `dpgnn prepare --config`).
std::vector<std::string> data_commands(const fs::path& config) { return load_config(config.string(), {}).data.prepare; }

// Dataset folders whose data come from ../shared/data alone (no SRC placeholder).
std::vector<std::string> shared_datasets() {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& rel : yaml_files(kConfigs, false)) {
    const std::string ds = fs::path(rel).parent_path().generic_string();
    if (seen.count(ds) > 0) continue;
    seen.insert(ds);
    bool shared = true;
    for (const auto& c : data_commands(kConfigs / rel)) shared = shared && c.find(" SRC/") == std::string::npos;
    if (shared) out.push_back(ds);
  }
  return out;
}

// configs/recommended.yaml holds a method and its settings only; completed with data and a
// privacy budget by --set (as its header says), it plans a private DPAR run.
TEST(RecommendedConfig, CompletedWithDataAndPrivacyPlansAPrivateRun) {
  TempDir tmp;
  const std::string cd = "cd " + tmp.path().string() + " && " + kEnv;
  ASSERT_EQ(run_command(cd + DPGNN_BINARY +
                        " synth --nodes 600 --avg-degree 6 --classes 3 --features 8 --homophily 0.8 --seed 1 --out g.h5")
                .exit_code,
            0);
  ASSERT_EQ(run_command(cd + DPGNN_BINARY +
                        " partition --dataset g.h5 --parts 2 --method random --seed 1 --out g.random2.h5")
                .exit_code,
            0);
  const std::string cfg = (kConfigs / "recommended.yaml").string();
  EXPECT_THROW(load_config(cfg, {}), UsageError) << "the user adds the data";
  const Config c = load_config(cfg, {"data.dataset=g.h5"});
  EXPECT_EQ(c.method, "dpar");
  const CommandResult r = run_command(cd + DPGNN_BINARY + " train --dry-run --config " + cfg +
                                      " --set data.dataset=g.h5 --set data.partition=g.random2.h5"
                                      " --set privacy.target_epsilon=8 --set privacy.delta=1e-5");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("dry run: method dpar,"), std::string::npos) << r.output;
}

class DryRun : public ::testing::TestWithParam<std::string> {};

TEST_P(DryRun, EveryConfigOfTheDatasetPlansARunAfterDpgnnPrepare) {
  const std::string ds = GetParam();
  const char* all = std::getenv("DPGNN_CONFIG_DRY_RUNS");
  if (ds != "cora" && ds != "twitch-ptbr" && (all == nullptr || std::string(all) != "all"))
    GTEST_SKIP() << "set DPGNN_CONFIG_DRY_RUNS=all to dry-run " << ds << " too (about 15 s per dataset)";
  if (!testing::shared_data_available()) GTEST_SKIP() << "no " << DPGNN_SHARED_DIR << "/data";
  // The configs' paths are relative to the repository root, with ../shared beside it: a root
  // folder in tmp with tmp/shared a link to this build's shared folder.
  TempDir tmp;
  fs::create_directories(tmp.path() / "root");
  fs::create_directory_symlink(fs::absolute(DPGNN_SHARED_DIR), tmp.path() / "shared");
  const std::string cd = "cd " + (tmp.path() / "root").string() + " && " + kEnv;
  int planned = 0;
  for (const auto& e : fs::directory_iterator(kConfigs / ds)) {
    if (e.path().extension() != ".yaml") continue;
    // Makes what data.prepare says, skipping the files an earlier config of the dataset made.
    const CommandResult prep = run_command(cd + DPGNN_BINARY + " prepare --config " + e.path().string());
    ASSERT_EQ(prep.exit_code, 0) << "dpgnn prepare failed for " << e.path() << "\n" << prep.output;
    const CommandResult r = run_command(cd + DPGNN_BINARY + " train --dry-run --config " + e.path().string());
    ASSERT_EQ(r.exit_code, 0) << e.path() << "\n" << r.output;
    const Config c = load_config(e.path().string(), {});
    EXPECT_NE(r.output.find("dry run: method " + c.method + ","), std::string::npos) << r.output;
    // The accountant --check names is the one the trainer builds.
    const CommandResult chk = testing::run_dpgnn("train --check --config " + e.path().string());
    ASSERT_EQ(chk.exit_code, 0) << chk.output;
    const auto acc = r.output.find("accountant ");
    ASSERT_NE(acc, std::string::npos) << r.output;
    const std::string name = r.output.substr(acc + 11, r.output.find(',', acc) - acc - 11);
    EXPECT_NE(chk.output.find("accountant " + name + (name == "none" ? "" : " ")), std::string::npos)
        << "dry run: " << name << "; check: " << chk.output;
    ++planned;
  }
  // The 7 methods of the random-walk catalogue, plus split.yaml where the graph-split paper has the dataset
  // and dpar.yaml where the importer can make DPAR's 80/20 split.
  EXPECT_EQ(planned, 7 + (fs::exists(kConfigs / ds / "split.yaml") ? 1 : 0) +
                         (fs::exists(kConfigs / ds / "dpar.yaml") ? 1 : 0))
      << ds;
}

INSTANTIATE_TEST_SUITE_P(SharedData, DryRun, ::testing::ValuesIn(shared_datasets()),
                         [](const auto& info) { return test_name(info.param); });

}  // namespace
}  // namespace dpgnn::train
