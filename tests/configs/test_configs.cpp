// The experiment catalogue configs/ (written by tools/make_configs.py): every config passes the
// check of `dpgnn train --check` (one test case per file), the committed files are exactly
// what the generator writes; configs/<dataset>/<method>.yaml is the method's defaults on the
// results matrix's split (nothing else), configs/<dataset>/paper/ holds the papers' setups as
// reproductions that state every key a method default could change, and the papers' numbers
// arrive in them (deltas of Ayle et al. Table 3, batch sizes of their Table 4, Daigavane et al.
// Table 9, typed here from the papers independently of the generator); one data file name is
// one import across the catalogue; node-level configs never point at a METIS partition, a bad
// config fails naming the file and the key, and the real `dpgnn train --dry-run` runs on every
// config of a dataset in ../shared/data after `dpgnn prepare --config` has run the import and
// partition commands of its data.prepare (Cora and Twitch-PTBR by default; all with
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

#include <yaml-cpp/yaml.h>

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
  // pairing); in-process, so 280 files cost milliseconds instead of a process start each.
  Config c;
  ASSERT_NO_THROW(c = load(GetParam())) << GetParam();
  EXPECT_FALSE(c.data.dataset.empty());
}

INSTANTIATE_TEST_SUITE_P(Catalogue, EveryConfig, ::testing::ValuesIn(yaml_files(kConfigs, true)),
                         [](const auto& info) { return test_name(info.param); });

const std::vector<std::string> kAyle = {"cora", "citeseer", "ppi", "pubmed", "flickr", "ogbn-arxiv", "reddit"};
const std::vector<std::string> kMethods = {"drw", "drw-r", "drw-d", "dpgnn", "dp-mlp", "gcn", "mlp", "dpar", "split"};
// The datasets with a best setup: the random-walk paper's, ogbn-products and those of ../shared/data.
const std::vector<std::string> kDatasets = {
    "cora",         "citeseer",         "ppi",         "pubmed",      "flickr",      "ogbn-arxiv",
    "reddit",       "ogbn-products",    "cora-ml",     "amazon-photo", "amazon-computers", "coauthor-cs",
    "coauthor-physics", "blogcatalog",  "flickr-lane", "facebook-page-page", "twitch-de", "twitch-es",
    "twitch-fr",    "twitch-ptbr",      "twitch-ru",   "twitch-zhtw"};

bool is_paper(const std::string& rel) { return rel.find("/paper/") != std::string::npos; }

TEST(ConfigCatalogue, HoldsTheBestSetupOfEveryMethodAndThePapersReproductions) {
  for (const auto& ds : kDatasets)
    for (const auto& m : kMethods) {
      const std::string rel = ds + "/" + m + ".yaml";
      ASSERT_TRUE(fs::exists(kConfigs / rel)) << rel;
      EXPECT_EQ(load(rel).method, m) << rel;
    }
  // The random-walk paper's Table 1 methods ("FDP" = dpgnn); it has no DP-MLP, so no reproduction of one.
  for (const auto& ds : kAyle) {
    for (const std::string m : {"drw", "drw-r", "drw-d", "dpgnn", "gcn", "mlp"}) {
      const std::string rel = ds + "/paper/" + m + ".yaml";
      ASSERT_TRUE(fs::exists(kConfigs / rel)) << rel;
      EXPECT_EQ(load(rel).method, m) << rel;
    }
    EXPECT_FALSE(fs::exists(kConfigs / ds / "paper" / "dp-mlp.yaml")) << ds;
  }
  // The old homes of the reproductions are gone (a stale copy would be read as current).
  for (const std::string ds : {"ogbn-arxiv", "ogbn-products", "reddit"})
    EXPECT_FALSE(fs::exists(kConfigs / ds / "daigavane")) << ds;
}

// `rel` minus what the trainer's defaults would give anyway: a config holding only `method`,
// the data, the seed, the device and the privacy budget, as a user would start.
Config minimal_like(const Config& c, const std::vector<std::string>& extra) {
  std::vector<std::string> o = {"data.dataset=" + c.data.dataset, "data.partition=" + c.data.partition,
                                "train.seed=" + std::to_string(c.train.seed), "device=" + c.device};
  if (is_private(c.method_enum())) {
    std::ostringstream eps, delta;
    eps << c.privacy.target_epsilon;
    delta << c.privacy.delta;
    o.push_back("privacy.target_epsilon=" + eps.str());
    o.push_back("privacy.delta=" + delta.str());
  }
  o.insert(o.end(), extra.begin(), extra.end());
  return parse_config("method: " + c.method + "\n", "minimal", o);
}

std::string dump_without_prepare(Config c) {
  c.data.prepare.clear();
  return dump_config(c);
}

// configs/recommended.yaml's settings as --set overrides ("dpar.top_k=2", ...), its seed left out:
// the catalogue's dpar.yaml holds them (the best DPAR setup we know, docs/configs.md). Multi-label
// datasets without the label release, which dpgnn refuses there.
std::vector<std::string> recommended_settings(bool multilabel) {
  const YAML::Node rec = YAML::LoadFile((kConfigs / "recommended.yaml").string());
  std::vector<std::string> out;
  for (const auto& section : rec) {
    const std::string name = section.first.as<std::string>();
    if (name == "method") continue;
    for (const auto& kv : section.second) {
      const std::string key = name + "." + kv.first.as<std::string>();
      if (key == "train.seed") continue;
      if (multilabel && key.rfind("dpar.label_", 0) == 0) continue;
      out.push_back(key + "=" + kv.second.as<std::string>());
    }
  }
  return out;
}

TEST(ConfigCatalogue, BestSetupsAreTheMethodDefaultsOnTheResultsMatrixSplit) {
  // docs/configs.md, "The configs/ catalogue": the method's defaults (split: the Cora-ML search's
  // setting and dpgnn's, typed here from docs/results.md; dpar: configs/recommended.yaml's), epsilon 8, seed 1, the matrix's split
  // (bench/utility.sh): citation/co-author/co-purchase 55/15/30, social 50/10/40, import seed 1;
  // a fixed public split kept; random 2 parts for node-level DP, METIS for the rest.
  const std::set<std::string> social = {"blogcatalog", "flickr-lane", "facebook-page-page", "twitch-de",
                                        "twitch-es",   "twitch-fr",   "twitch-ptbr",        "twitch-ru",
                                        "twitch-zhtw"};
  const std::set<std::string> fixed = {"ppi", "flickr", "ogbn-arxiv", "ogbn-products", "reddit"};
  for (const auto& ds : kDatasets)
    for (const auto& m : kMethods) {
      const std::string rel = ds + "/" + m + ".yaml";
      const Config c = load(rel);
      std::vector<std::string> setting;
      if (m == "split")
        setting = {"model.hidden=128", "train.lr=0.1", "train.max_steps=40", "train.ema=0.9", "sampler.splits=1600"};
      if (m == "dpgnn")  // docs/results.md, "Results matrix": DP-GNN's best setting on the matrix's graphs
        setting = {"model.layers=1", "model.input_norm=l2", "train.lr=0.1", "train.max_steps=100", "sampler.max_degree=1"};
      if (m == "dpar") setting = recommended_settings(/*multilabel=*/ds == "ppi");
      EXPECT_EQ(dump_without_prepare(c), dump_without_prepare(minimal_like(c, setting)))
          << rel << " sets more than the data, the seed, the device, the privacy budget"
          << (m == "dpar" ? " and configs/recommended.yaml's settings" : "");
      if (m == "dpar") {
        EXPECT_EQ(c.dpar.label_fraction > 0, ds != "ppi") << rel << ": the label release";
      }
      EXPECT_EQ(c.train.seed, 1) << rel;
      if (is_private(c.method_enum())) {
        EXPECT_EQ(c.privacy.target_epsilon, 8.0) << rel;
        EXPECT_LE(c.privacy.delta, 1e-5) << rel;
      } else {
        EXPECT_TRUE(m == "gcn" || m == "mlp") << rel;
      }
      const bool node_level = m == "dpar" || m == "dpgnn";
      EXPECT_NE(c.data.partition.find(node_level ? ".random" : ".metis"), std::string::npos) << rel;
      ASSERT_FALSE(c.data.prepare.empty()) << rel;
      const std::string& imp = c.data.prepare.front();
      if (fixed.count(ds) > 0) {
        EXPECT_EQ(imp.find("--train-fraction"), std::string::npos) << rel << ": " << imp;
      } else {
        EXPECT_EQ(c.data.dataset, "data/" + ds + ".h5") << rel;
        EXPECT_NE(imp.find(social.count(ds) > 0 ? "--train-fraction 0.5 --val-fraction 0.1 --seed 1"
                                                : "--train-fraction 0.55 --val-fraction 0.15 --seed 1"),
                  std::string::npos)
            << rel << ": " << imp;
        EXPECT_EQ(c.data.partition.substr(c.data.partition.size() - 4), "2.h5") << rel << ": 2 parts";
      }
      EXPECT_NE(read_text(kConfigs / rel).find("The best setup we know for " + m + " on " + ds), std::string::npos)
          << rel;
    }
}

TEST(ConfigCatalogue, ReproductionsNameTheirPaperAndStateEveryKeyAMethodDefaultSets) {
  // A paper/ file must not change when the method's defaults do (docs/configs.md, "Method
  // defaults": the trainer applies them where the file is silent).
  int n = 0;
  for (const auto& rel : yaml_files(kConfigs, false)) {
    if (!is_paper(rel)) continue;
    ++n;
    const std::string text = read_text(kConfigs / rel);
    const auto second = text.find('\n') + 1;
    EXPECT_EQ(text.compare(second, 17, "# Reproduction of"), 0) << rel << ":\n" << text.substr(0, 300);
    EXPECT_NE(text.find("Deviations from the paper"), std::string::npos) << rel;
    const YAML::Node root = YAML::LoadFile((kConfigs / rel).string());
    const std::string method = root["method"].as<std::string>();
    for (const auto& [key, value] : method_defaults_of(method)) {
      const auto dot = key.find('.');
      ASSERT_NE(dot, std::string::npos) << key;
      const YAML::Node section = root[key.substr(0, dot)];
      EXPECT_TRUE(section && section[key.substr(dot + 1)]) << rel << " leaves " << key << " to the method default "
                                                           << value;
    }
  }
  EXPECT_EQ(n, 7 * 6 + 3 + 14 + 20);
  // The defaults this protects against exist (else the loop above checks nothing).
  EXPECT_FALSE(method_defaults_of("drw").empty());
  EXPECT_FALSE(method_defaults_of("dpar").empty());
}

TEST(ConfigCatalogue, OneDataFileNameIsOneImportAcrossTheCatalogue) {
  // data/cora.h5 is the results matrix's split, data/cora-planetoid.h5 the paper's: a name that two
  // configs make differently would let `dpgnn prepare` keep a file with the wrong split.
  std::map<std::string, std::pair<std::string, std::string>> made_by;  // file -> (command, config)
  int checked = 0;
  for (const auto& rel : yaml_files(kConfigs, true)) {
    for (const auto& cmd : load(rel).data.prepare) {
      const auto out = cmd.rfind("--out ");
      ASSERT_NE(out, std::string::npos) << rel << ": " << cmd;
      const std::string file = cmd.substr(out + 6);
      const auto [it, fresh] = made_by.emplace(file, std::make_pair(cmd, rel));
      if (!fresh) {
        ++checked;
        EXPECT_EQ(it->second.first, cmd) << file << " is made differently by " << it->second.second << " and " << rel;
      }
    }
  }
  EXPECT_GT(checked, 100);
  ASSERT_TRUE(made_by.count("data/cora.h5"));
  EXPECT_NE(made_by["data/cora.h5"].first.find("--train-fraction 0.55"), std::string::npos);
  ASSERT_TRUE(made_by.count("data/cora-planetoid.h5"));
  EXPECT_NE(made_by["data/cora-planetoid.h5"].first.find("import planetoid"), std::string::npos);
}

// ---- the papers' numbers -----------------------------------------------------------------

TEST(ConfigCatalogue, GraphSplitReproductionsFollowIgamberdievAndHabernal) {
  // Igamberdiev & Habernal: Sec. 5.2 (delta 1e-5, clipping threshold 1), App. B (2-layer GCN,
  // ReLU, hidden 32, dropout 0.5, Adam, 500 epochs), Sec. 6.3 (s = 10 splits, one per step),
  // Table 2 (epsilon 2).
  for (const std::string ds : {"citeseer", "cora", "pubmed"}) {
    const std::string rel = ds + "/paper/split.yaml";
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
    EXPECT_EQ(c.model.hidden, 32) << rel;
    EXPECT_EQ(c.model.dropout, 0.5) << rel;
    EXPECT_EQ(c.sampler.splits, 10) << rel;
    EXPECT_EQ(c.train.batch_size, 1) << rel;
    EXPECT_EQ(c.train.max_steps, 500 * 10) << rel << ": 500 epochs of 10 one-split steps";
    EXPECT_EQ(c.train.ema, 0.0) << rel;
  }
}

TEST(ConfigCatalogue, DparReproductionsFollowZhangEtAlsSetup) {
  // Zhang et al. (DPAR), Sec. 4: 80% train / 20% test, inductive, K = 2, alpha 0.25, rho 1e-4,
  // gamma 1e-4, M = 70, C1 = 0.01, C2 = 0.001, P = 2, epsilon 1, delta about 1 / training
  // nodes; a 2-layer MLP of width 32, 200 epochs, lr 0.005, batch 60, q' = 0.09, the budget
  // halved; a structure-independent partition.
  for (const std::string ds : {"coauthor-cs", "coauthor-physics", "cora-ml"}) {
    const std::string rel = ds + "/paper/dpar.yaml";
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
    EXPECT_EQ(c.dpar.appr_fraction, 0.5) << rel;
    EXPECT_EQ(c.dpar.graph_sampling_rate, 0.09) << rel;
    EXPECT_EQ(c.model.layers, 2) << rel;
    EXPECT_EQ(c.model.hidden, 32) << rel;
    EXPECT_EQ(c.model.input_norm, "none") << rel;
    EXPECT_EQ(c.train.lr, 0.005) << rel;
    EXPECT_EQ(c.train.batch_size, 60) << rel;
    EXPECT_NE(c.data.partition.find("random"), std::string::npos) << rel;
    std::ifstream in(kConfigs / rel);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("--train-fraction 0.8 --val-fraction 0 --setting inductive"), std::string::npos) << rel;
  }
  // Coauthor CS: 14,666 training nodes: delta 1e-5 (<= 1/14,666); q' leaves 1,320 of them, so
  // 200 epochs of batch 60 are 4,400 steps.
  const Config cs = load("coauthor-cs/paper/dpar.yaml");
  EXPECT_EQ(cs.privacy.delta, 1e-5);
  EXPECT_EQ(cs.train.max_steps, 4400);
}

TEST(ConfigCatalogue, PrivateRunsUseTheDeltasOfAyleTable3AndEpsilon8) {
  // Ayle et al. 2022, Appendix C, Table 3.
  const std::map<std::string, double> delta = {{"cora", 1e-5},   {"citeseer", 1e-5},   {"ppi", 1e-5},
                                               {"pubmed", 1e-6}, {"flickr", 1e-6},     {"ogbn-arxiv", 1e-7},
                                               {"reddit", 1e-7}};
  for (const auto& [ds, d] : delta)
    for (const std::string m : {"drw", "drw-r", "drw-d", "dpgnn"}) {
      const Config c = load(ds + "/paper/" + m + ".yaml");
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
      const Config c = load(ds + "/paper/" + m + ".yaml");
      EXPECT_EQ(c.train.batch_size, rows.first[c.model.layers - 1]) << ds << "/" << m;
    }
    const Config r = load(ds + "/paper/drw-r.yaml");
    EXPECT_EQ(r.train.batch_size, rows.second[r.model.layers - 1]) << ds << "/drw-r";
    EXPECT_EQ(r.sampler.restarts, 2) << ds;
  }
}

TEST(ConfigCatalogue, ArchitecturesComeFromAyleTable1AndItsGrid) {
  // Ayle et al. 2022, Table 1: the best (layers, width) of a row. Cora DRW: 2 x 512 (24.9);
  // Reddit DRW-R: 2 x 512 (82.2); PPI DRW: 1 layer (40.2); ogbn-arxiv FDP: 1 layer (43.8);
  // Flickr GCN: 2 x 256 ties 2 x 512 at 51.3 (the smaller one).
  const std::vector<std::tuple<std::string, int, int>> expect = {
      {"cora/paper/drw", 2, 512}, {"reddit/paper/drw-r", 2, 512}, {"ppi/paper/drw", 1, -1},
      {"ogbn-arxiv/paper/dpgnn", 1, -1}, {"flickr/paper/gcn", 2, 256}};
  for (const auto& [rel, layers, hidden] : expect) {
    const Config c = load(rel + ".yaml");
    EXPECT_EQ(c.model.layers, layers) << rel;
    if (hidden > 0) {
      EXPECT_EQ(c.model.hidden, hidden) << rel;
    }
  }
  int n = 0;
  for (const auto& rel : yaml_files(kConfigs, false)) {
    if (!is_paper(rel) || rel.find("daigavane") != std::string::npos) continue;
    if (rel.find("/split.yaml") != std::string::npos) continue;  // Igamberdiev & Habernal's protocol (above)
    if (rel.find("/dpar.yaml") != std::string::npos) continue;   // Zhang et al.'s protocol (above)
    ++n;
    const Config c = load(rel);
    EXPECT_EQ(c.train.ema, 0.0) << rel << ": the paper averages no parameters";
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
  EXPECT_EQ(n, 7 * 6);
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
      {"ogbn-arxiv/paper/daigavane/dpgnn", "adam", 0.003, 10000, 2, 7, 1, 10},
      {"ogbn-products/paper/daigavane/dpgnn", "adam", 0.005, 10000, 1, 10, 1, 10},
      {"reddit/paper/daigavane/dpgnn", "adam", 0.002, 10000, 1, 10, 1, 10},
      {"ogbn-products/paper/daigavane/dpgnn-sgd", "sgd", 2.0, 40000, 2, 5, 1, 10},
      {"reddit/paper/daigavane/dp-mlp", "adam", 0.001, 10000, 1, 0, 0, 10},
      {"ogbn-arxiv/paper/daigavane/mlp", "adam", 0.001, 1000, 0, 0, 0, 0},
      {"reddit/paper/daigavane/inductive-dpgnn-2layer", "adam", 0.002, 20000, 2, 3, 2, 12},
      {"ogbn-arxiv/paper/daigavane/inductive-dpgnn-1layer", "adam", 0.002, 20000, 4, 7, 1, 12}};
  for (const auto& r : rows) {
    const Config c = load(r.rel + ".yaml");
    EXPECT_EQ(c.train.optimizer, r.optimizer) << r.rel;
    EXPECT_EQ(c.train.lr, r.lr) << r.rel;
    EXPECT_EQ(c.train.batch_size, r.batch) << r.rel;
    EXPECT_EQ(c.model.hidden, 256) << r.rel << ": latent size 256 (App. E)";
    EXPECT_EQ(c.model.input_norm, "none") << r.rel << ": the paper normalises no features";
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

TEST(ConfigCatalogue, NodeLevelConfigsPointAtAStructureIndependentPartition) {
  // DESIGN.md 5: node-level DP (dpgnn, dpar) may not use a METIS partition (the trainer refuses one).
  int n = 0;
  for (const auto& rel : yaml_files(kConfigs, true)) {
    const Config c = load(rel);
    if (c.method != "dpgnn" && c.method != "dpar") continue;
    ++n;
    EXPECT_NE(c.data.partition.find(".random"), std::string::npos) << rel << ": " << c.data.partition;
  }
  // dpgnn: 22 best setups, 7 of the random-walk paper, 10 of Daigavane et al.; dpar: 22 and 14.
  EXPECT_GE(n, 22 + 7 + 10 + 22 + 14);
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
  EXPECT_GE(generated.size(), 22u * 9u + 7u * 6u + 3u + 14u + 20u);
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
  const std::string text = read_text(kConfigs / "cora" / "drw.yaml");
  ASSERT_EQ(text.find("\nsampler:"), std::string::npos) << "the misspelt key below would join an existing section";
  std::ofstream(bad) << text << "sampler:\n  walk_lenght: 3\n";
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

// Dataset folders whose data come from ../shared/data alone (no SRC placeholder in any of
// their configs, paper/ included).
std::vector<std::string> shared_datasets() {
  std::map<std::string, bool> shared;
  for (const auto& rel : yaml_files(kConfigs, false)) {
    const std::string ds = (*fs::path(rel).begin()).generic_string();  // cora/paper/drw.yaml -> cora
    bool& all = shared.emplace(ds, true).first->second;
    for (const auto& c : data_commands(kConfigs / rel)) all = all && c.find(" SRC/") == std::string::npos;
  }
  std::vector<std::string> out;
  for (const auto& [ds, all] : shared)
    if (all) out.push_back(ds);
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
  // DPAR's history (exponential and randomized-response releases) has no PLD pair: the dry run
  // says its epsilon comes from RDP although privacy.accountant is pld.
  EXPECT_NE(r.output.find("privacy.accountant pld (epsilon by rdp: a mechanism of this history has no PLD pair)"),
            std::string::npos)
      << r.output;
  // Below epsilon 6 there is no release at all (dpar.appr_nodes 0, no label release): the
  // steps alone, full-batch Gaussians, which the PLD accountant takes.
  const CommandResult low = run_command(cd + DPGNN_BINARY + " train --dry-run --config " + cfg +
                                        " --set data.dataset=g.h5 --set data.partition=g.random2.h5"
                                        " --set privacy.target_epsilon=1 --set privacy.delta=1e-5");
  ASSERT_EQ(low.exit_code, 0) << low.output;
  EXPECT_NE(low.output.find("privacy.accountant pld"), std::string::npos) << low.output;
  EXPECT_EQ(low.output.find("epsilon by rdp"), std::string::npos) << low.output;
}

class DryRun : public ::testing::TestWithParam<std::string> {};

TEST_P(DryRun, EveryConfigOfTheDatasetPlansARunAfterDpgnnPrepare) {
  const std::string ds = GetParam();
  const char* all = std::getenv("DPGNN_CONFIG_DRY_RUNS");
  if (ds != "cora" && ds != "twitch-ptbr" && (all == nullptr || std::string(all) != "all"))
    GTEST_SKIP() << "set DPGNN_CONFIG_DRY_RUNS=all to dry-run " << ds << " too (about a minute per dataset)";
  DPGNN_NEED_SHARED_DATA();
  // The configs' paths are relative to the repository root, with ../shared beside it: a root
  // folder in tmp with tmp/shared a link to this build's shared folder.
  TempDir tmp;
  fs::create_directories(tmp.path() / "root");
  fs::create_directory_symlink(fs::absolute(DPGNN_SHARED_DIR), tmp.path() / "shared");
  const std::string cd = "cd " + (tmp.path() / "root").string() + " && " + kEnv;
  int planned = 0, files = 0;
  for (const auto& e : fs::recursive_directory_iterator(kConfigs / ds)) {  // paper/ too
    if (e.path().extension() != ".yaml") continue;
    ++files;
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
  // Every file planned: the 9 best setups and the reproductions of paper/.
  EXPECT_EQ(planned, files) << ds;
  EXPECT_GE(planned, 9) << ds;
  if (ds == "cora") {
    EXPECT_EQ(planned, 9 + 6 + 1) << "cora: the random-walk paper's 6 and the graph-split paper's";
  }
  if (ds == "twitch-ptbr") {
    EXPECT_EQ(planned, 9 + 1) << "twitch-ptbr: DPAR's protocol";
  }
}

INSTANTIATE_TEST_SUITE_P(SharedData, DryRun, ::testing::ValuesIn(shared_datasets()),
                         [](const auto& info) { return test_name(info.param); });

}  // namespace
}  // namespace dpgnn::train
