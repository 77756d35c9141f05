// Imports every complete dataset in ../shared/data with the `dpgnn import` binary and
// checks the result against the statistics the data-staging helper measured independently
// (shared/data/stats.json, numpy/scipy): nodes, undirected edges, isolated nodes, feature
// dimension and non-zeros, classes, label counts, and split sizes (the Planetoid standard
// split; elsewhere the 20/30-per-class protocol). Skipped when shared/data is absent.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "dpgnn/graph/validate.h"
#include "import_test_util.h"
#include "test_support.h"

namespace dpgnn::graph {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kData = std::string(DPGNN_SHARED_DIR) + "/data";

struct RunResult {
  int code = -1;
  std::string err;
};

// Runs `dpgnn ARGS` and returns its exit code and stderr.
RunResult run_dpgnn(const std::vector<std::string>& args, const test::TempDir& tmp) {
  std::string cmd = "'" + std::string(DPGNN_BINARY) + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  const std::string err_file = tmp.file("stderr.txt");
  cmd += " >/dev/null 2>'" + err_file + "'";
  const int status = std::system(cmd.c_str());
  RunResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(err_file);
  std::stringstream ss;
  ss << in.rdbuf();
  r.err = ss.str();
  return r;
}

const json& stats() {
  static const json j = [] {
    std::ifstream in(kData + "/stats.json");
    return json::parse(in);
  }();
  return j;
}

enum class LabelKeys { by_id, by_id_plus_one, by_name };

struct Expect {
  std::string stats_key;   // "cora/planetoid" -> stats["datasets"]["cora"]["planetoid"]
  LabelKeys label_keys;
  bool has_features;
  std::int64_t feature_dim = -1;  // -1: from stats
  bool standard_split = false;
};

const json& stats_of(const std::string& key) {
  const json* j = &stats()["datasets"];
  std::stringstream ss(key);
  std::string part;
  while (std::getline(ss, part, '/')) j = &(*j)[part];
  return *j;
}

// Feature matrix [N, F] non-zeros.
std::int64_t nonzeros(const std::vector<float>& x) {
  std::int64_t n = 0;
  for (float v : x) n += v != 0.0f;
  return n;
}

// Its callers check DPGNN_NEED_SHARED_DATA() first.
void import_and_check(const std::vector<std::string>& import_args, const Expect& e) {
  test::TempDir tmp;
  const std::string out = tmp.file("out.h5");
  std::vector<std::string> args = {"import"};
  args.insert(args.end(), import_args.begin(), import_args.end());
  args.push_back("--out");
  args.push_back(out);
  const RunResult r = run_dpgnn(args, tmp);
  ASSERT_EQ(r.code, 0) << r.err;
  DatasetStats s;
  const Dataset d = load_and_validate(out, &s);
  const json& st = stats_of(e.stats_key);

  EXPECT_EQ(s.nodes, st["nodes"].get<std::int64_t>());
  EXPECT_EQ(s.undirected_edges, st["edges"]["undirected_unique"].get<std::int64_t>());
  EXPECT_EQ(s.isolated, st["edges"]["isolated"].get<std::int64_t>());
  EXPECT_EQ(s.self_loops, 0);
  EXPECT_EQ(s.duplicate_edges, 0);
  EXPECT_EQ(d.meta.num_classes, st["classes"].get<std::int64_t>());

  // Features.
  if (!e.has_features) {
    EXPECT_EQ(d.meta.num_features, 0);
  } else {
    const json& f = st["features"];
    std::int64_t dim = e.feature_dim;
    std::int64_t nnz = 0;
    if (f.contains("shape")) {
      if (dim < 0) dim = f["shape"][1].get<std::int64_t>();
      nnz = f["nnz"].get<std::int64_t>();
    } else {  // MUSAE id lists: distinct (node, id) pairs
      if (dim < 0) dim = f["max_id"].get<std::int64_t>() + 1;
      nnz = f["entries"].get<std::int64_t>() - f["repeated_within_node"].get<std::int64_t>();
    }
    EXPECT_EQ(d.meta.num_features, dim);
    EXPECT_EQ(nonzeros(d.features), nnz);
  }

  // Label counts, keyed in stats.json by class id, by 1-based id, or by label name.
  std::map<std::string, std::int64_t> counts;
  for (std::int64_t y : d.labels) {
    ASSERT_GE(y, 0);
    std::string key = e.label_keys == LabelKeys::by_id          ? std::to_string(y)
                      : e.label_keys == LabelKeys::by_id_plus_one ? std::to_string(y + 1)
                                                                  : d.meta.label_names.at(y);
    ++counts[key];
  }
  std::map<std::string, std::int64_t> expected;
  for (const auto& [k, v] : st["label_counts"].items()) expected[k] = v.get<std::int64_t>();
  EXPECT_EQ(counts, expected);

  // Split sizes.
  if (e.standard_split) {
    EXPECT_EQ(s.train, st["split"]["train"].get<std::int64_t>());
    EXPECT_EQ(s.val, st["split"]["val"].get<std::int64_t>());
    EXPECT_EQ(s.test, st["split"]["test"].get<std::int64_t>());
    for (const auto& [k, v] : st["train_label_counts"].items()) {
      std::int64_t n = 0;
      for (std::size_t i = 0; i < d.labels.size(); ++i) n += d.train_mask[i] && std::to_string(d.labels[i]) == k;
      EXPECT_EQ(n, v.get<std::int64_t>()) << "training nodes of class " << k;
    }
  } else {  // Shchur et al. 2018: 20 train and 30 val per class, the rest test
    const std::int64_t c = d.meta.num_classes;
    EXPECT_EQ(s.train, 20 * c);
    EXPECT_EQ(s.val, 30 * c);
    EXPECT_EQ(s.test, s.nodes - 50 * c);
  }
}

std::string data(const std::string& rel) { return kData + "/" + rel; }

// ---- Planetoid ----------------------------------------------------------------------------

TEST(ImportSharedData, CoraPlanetoid) {
  DPGNN_NEED_SHARED_DATA();
  import_and_check({"planetoid", "--dir", data("cora/planetoid"), "--name", "cora"},
                   {"cora/planetoid", LabelKeys::by_id, true, stats_of("cora/planetoid")["features_dim"].get<std::int64_t>(), true});
}

TEST(ImportSharedData, PubmedPlanetoidWithoutFeatures) {
  DPGNN_NEED_SHARED_DATA();
  import_and_check({"planetoid", "--dir", data("pubmed/planetoid"), "--name", "pubmed", "--no-features"},
                   {"pubmed/planetoid", LabelKeys::by_id, false, -1, true});
}

TEST(ImportSharedData, PubmedPlanetoidFailsNamingTheMissingAllx) {
  DPGNN_NEED_SHARED_DATA();
  test::TempDir tmp;
  const RunResult r = run_dpgnn(
      {"import", "planetoid", "--dir", data("pubmed/planetoid"), "--name", "pubmed", "--out", tmp.file("p.h5")}, tmp);
  EXPECT_NE(r.code, 0);
  EXPECT_LT(r.code, 128) << "killed by a signal";
  EXPECT_NE(r.err.find("ind.pubmed.allx"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--no-features"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(tmp.file("p.h5")));
}

// ---- npz ------------------------------------------------------------------------------------

TEST(ImportSharedData, CoraGnnBenchmarkNpz) {
  DPGNN_NEED_SHARED_DATA();
  import_and_check({"npz", "--file", data("cora/gnn-benchmark/cora.npz")},
                   {"cora/gnn_benchmark", LabelKeys::by_id, true});
}
TEST(ImportSharedData, CoraMlNpz) {
  DPGNN_NEED_SHARED_DATA();
  import_and_check({"npz", "--file", data("cora-ml/cora_ml.npz")}, {"cora-ml", LabelKeys::by_id, true});
}
TEST(ImportSharedData, PolblogsNpzHasNoFeatures) {
  DPGNN_NEED_SHARED_DATA();
  import_and_check({"npz", "--file", data("polblogs/polblogs.npz")}, {"polblogs", LabelKeys::by_id, false});
}
TEST(ImportSharedData, AmazonPhotoNpz) {
  DPGNN_NEED_SHARED_DATA();
  import_and_check({"npz", "--file", data("amazon-photo/amazon_photo.npz")}, {"amazon-photo", LabelKeys::by_id, true});
}
TEST(ImportSharedData, AmazonComputersNpz) {
  DPGNN_NEED_SHARED_DATA();
  import_and_check({"npz", "--file", data("amazon-computers/amazon_cs.npz")},
                   {"amazon-computers", LabelKeys::by_id, true});
}
TEST(ImportSharedData, CoauthorCsNpz) {
  DPGNN_NEED_SHARED_DATA();
  import_and_check({"npz", "--file", data("coauthor-cs/coauthor_cs.npz")}, {"coauthor-cs", LabelKeys::by_id, true});
}
TEST(ImportSharedData, CoauthorPhysicsNpz) {
  DPGNN_NEED_SHARED_DATA();
  import_and_check({"npz", "--file", data("coauthor-physics/coauthor_phy.npz")},
                   {"coauthor-physics", LabelKeys::by_id, true});
}
TEST(ImportSharedData, BlogcatalogNpzLabelsAreShiftedToZeroBased) {
  DPGNN_NEED_SHARED_DATA();
  import_and_check({"npz", "--file", data("blogcatalog/blogcatalog.npz")},
                   {"blogcatalog", LabelKeys::by_id_plus_one, true});
}
TEST(ImportSharedData, FlickrLaneNpzLabelsAreShiftedToZeroBased) {
  DPGNN_NEED_SHARED_DATA();
  import_and_check({"npz", "--file", data("flickr-lane/flickr.npz")}, {"flickr-lane", LabelKeys::by_id_plus_one, true});
}

// ---- MUSAE / FEATHER ------------------------------------------------------------------------

TEST(ImportSharedData, FacebookPagePage) {
  DPGNN_NEED_SHARED_DATA();
  const std::string d = data("facebook-page-page/");
  import_and_check({"musae", "--edges", d + "facebook_edges.csv", "--target", d + "facebook_target.csv", "--features",
                    d + "facebook.json", "--id-column", "id", "--label-column", "page_type"},
                   {"facebook-page-page", LabelKeys::by_name, true});
}

// Twitch countries share one feature id space; stats.json gives each country's max id.
std::int64_t twitch_feature_space() {
  std::int64_t m = -1;
  for (const char* c : {"de", "es", "fr", "ptbr", "ru", "zhtw"})
    m = std::max(m, stats_of(std::string("twitch-") + c)["features"]["max_id"].get<std::int64_t>());
  return m + 1;
}

void import_twitch(const std::string& country, const std::string& upper) {
  DPGNN_NEED_SHARED_DATA();
  const std::string d = data("twitch-" + country + "/") + upper;
  const std::int64_t space = twitch_feature_space();
  import_and_check({"musae", "--edges", d + "_edges.csv", "--target", d + "_target.csv", "--features", d + ".json",
                    "--id-column", "new_id", "--label-column", "mature", "--num-features", std::to_string(space)},
                   {"twitch-" + country, LabelKeys::by_name, true, space});
}

TEST(ImportSharedData, TwitchDe) { import_twitch("de", "DE"); }
TEST(ImportSharedData, TwitchEs) { import_twitch("es", "ES"); }
TEST(ImportSharedData, TwitchFrWithDuplicateTargetRows) { import_twitch("fr", "FR"); }
TEST(ImportSharedData, TwitchPtbr) { import_twitch("ptbr", "PTBR"); }
TEST(ImportSharedData, TwitchRu) { import_twitch("ru", "RU"); }
TEST(ImportSharedData, TwitchZhtw) { import_twitch("zhtw", "ZHTW"); }

// Without --num-features, a Twitch country whose lists never use the top ids (PTBR's max id
// is 3168) still gets the shared id space.
TEST(ImportSharedData, TwitchDefaultsToTheSharedFeatureSpace) {
  DPGNN_NEED_SHARED_DATA();
  ASSERT_LT(stats_of("twitch-ptbr")["features"]["max_id"].get<std::int64_t>() + 1, twitch_feature_space());
  const std::string d = data("twitch-ptbr/") + "PTBR";
  import_and_check({"musae", "--edges", d + "_edges.csv", "--target", d + "_target.csv", "--features", d + ".json",
                    "--id-column", "new_id", "--label-column", "mature"},
                   {"twitch-ptbr", LabelKeys::by_name, true, twitch_feature_space()});
}

TEST(ImportSharedData, GithubSocialWithoutFeatures) {
  DPGNN_NEED_SHARED_DATA();
  const std::string d = data("github-social/");
  import_and_check({"musae", "--edges", d + "git_edges.csv", "--target", d + "git_target.csv", "--id-column", "id",
                    "--label-column", "ml_target"},
                   {"github-social", LabelKeys::by_name, false});
}
TEST(ImportSharedData, DeezerEuropeWithoutFeatures) {
  DPGNN_NEED_SHARED_DATA();
  const std::string d = data("deezer-europe/");
  import_and_check({"musae", "--edges", d + "deezer_gendered_edges.csv", "--target", d + "deezer_gendered_target.csv",
                    "--id-column", "id", "--label-column", "target"},
                   {"deezer-europe", LabelKeys::by_name, false});
}

// ---- the command-line contract ----------------------------------------------------------------

TEST(ImportCommand, ExistingOutputIsNotOverwrittenWithoutForce) {
  DPGNN_NEED_SHARED_DATA();
  test::TempDir tmp;
  const std::string out = test::write_text(tmp.file("taken.h5"), "keep me");
  const std::vector<std::string> args = {"import", "npz", "--file", data("polblogs/polblogs.npz"), "--out", out};
  const RunResult r = run_dpgnn(args, tmp);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("taken.h5"), std::string::npos) << r.err;
  std::ifstream in(out);
  std::string content;
  std::getline(in, content);
  EXPECT_EQ(content, "keep me");
  std::vector<std::string> forced = args;
  forced.push_back("--force");
  EXPECT_EQ(run_dpgnn(forced, tmp).code, 0);
}

TEST(ImportCommand, PrintsTheDuplicateAndSelfLoopCounts) {
  DPGNN_NEED_SHARED_DATA();
  test::TempDir tmp;
  const RunResult r = run_dpgnn({"import", "planetoid", "--dir", data("cora/planetoid"), "--name", "cora", "--out",
                                 tmp.file("c.h5")},
                                tmp);
  ASSERT_EQ(r.code, 0) << r.err;
  // 10,858 adjacency-list entries with 302 duplicates and no self-loops (README, cora).
  const auto dup = stats_of("cora/planetoid")["edges"]["duplicate_entries"].get<std::int64_t>();
  EXPECT_NE(r.err.find("removed " + std::to_string(dup) + " duplicate edge entries and 0 self-loops"),
            std::string::npos)
      << r.err;
}

TEST(ImportCommand, SameSeedSameSplitOtherSeedOtherSplit) {
  DPGNN_NEED_SHARED_DATA();
  test::TempDir tmp;
  auto import_with_seed = [&](const std::string& seed, const std::string& name) {
    const RunResult r = run_dpgnn({"import", "npz", "--file", data("polblogs/polblogs.npz"), "--seed", seed, "--out",
                                   tmp.file(name)},
                                  tmp);
    EXPECT_EQ(r.code, 0) << r.err;
    return load_and_validate(tmp.file(name), nullptr).train_mask;
  };
  const auto a = import_with_seed("1", "a.h5");
  EXPECT_EQ(a, import_with_seed("1", "b.h5"));
  EXPECT_NE(a, import_with_seed("2", "c.h5"));
}

TEST(ImportCommand, MissingInputFileIsAnErrorNamingIt) {
  test::TempDir tmp;
  const RunResult r = run_dpgnn({"import", "musae", "--edges", tmp.file("none_edges.csv"), "--target",
                                 tmp.file("t.csv"), "--label-column", "y", "--out", tmp.file("o.h5")},
                                tmp);
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.err.find("none_edges.csv"), std::string::npos) << r.err;
}

TEST(ImportCommand, MalformedCsvLineExitsWithADataError) {
  test::TempDir tmp;
  const auto edges = test::write_text(tmp.file("e.csv"), "src,dst\n0,1\n1;2\n");
  const auto labels = test::write_text(tmp.file("y.csv"), "id,label\n0,0\n1,1\n2,0\n");
  const RunResult r =
      run_dpgnn({"import", "csv", "--edges", edges, "--labels", labels, "--out", tmp.file("o.h5")}, tmp);
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("e.csv, line 3"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace dpgnn::graph
