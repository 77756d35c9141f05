// `dpgnn sample` end to end: the file layout and attribute names other tools rely on,
// ids in dataset ids (not part-local ids), partitions, refusals; and every sampler on
// Cora (imported from ../shared/data with `dpgnn import planetoid` when it is there).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include "dpgnn/util/remove_tree.h"
#include "dpgnn/graph/dataset.h"
#include "dpgnn/partition/partition_file.h"
#include "dpgnn/partition/partition_writer.h"
#include "dpgnn/sampling/sampler.h"
#include "dpgnn/util/hdf5.h"
#include "test_support.h"

namespace dpgnn {
namespace {

namespace fs = std::filesystem;

struct RunResult {
  int code;
  std::string output;
};

RunResult run(const std::string& args) {
  const fs::path log = fs::temp_directory_path() / ("dpgnn_sample_test_" + std::to_string(::getpid()) + ".log");
  const std::string cmd = std::string(DPGNN_BINARY) + " " + args + " > " + log.string() + " 2>&1";
  const int status = std::system(cmd.c_str());
  std::ifstream in(log);
  std::stringstream ss;
  ss << in.rdbuf();
  fs::remove(log);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ss.str()};
}

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() / ("dpgnn_sample_" + std::to_string(::getpid()) + "_" +
                                         std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    dpgnn::remove_tree(path_, ec);
  }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
  static inline int counter_ = 0;
};

// A random graph of n nodes with a train mask on every `train_every`-th node + 1.
graph::Dataset make_dataset(std::int64_t n, double p, graph::Setting setting, std::uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::bernoulli_distribution coin(p);
  std::vector<std::vector<graph::NodeId>> rows(n);
  for (std::int64_t u = 0; u < n; ++u)
    for (std::int64_t v = u + 1; v < n; ++v)
      if (coin(gen)) {
        rows[u].push_back(static_cast<graph::NodeId>(v));
        rows[v].push_back(static_cast<graph::NodeId>(u));
      }
  std::vector<graph::EdgeIdx> indptr{0};
  std::vector<graph::NodeId> indices;
  for (auto& r : rows) {
    std::sort(r.begin(), r.end());
    indices.insert(indices.end(), r.begin(), r.end());
    indptr.push_back(static_cast<graph::EdgeIdx>(indices.size()));
  }
  graph::Dataset d;
  d.meta.name = "test";
  d.meta.source = "test_cmd_sample";
  d.meta.setting = setting;
  d.meta.num_classes = 2;
  d.graph = graph::CsrGraph(indptr, indices);
  d.labels.assign(n, 0);
  d.train_mask.assign(n, 0);
  d.val_mask.assign(n, 0);
  d.test_mask.assign(n, 0);
  for (std::int64_t v = 0; v < n; ++v) {
    d.labels[v] = v % 2;
    if (v % 2 == 1) d.train_mask[v] = 1;  // odd nodes: local ids differ from dataset ids
    else d.test_mask[v] = 1;
  }
  return d;
}

struct SampleFile {
  std::vector<std::int64_t> roots, node_ptr, nodes, edge_ptr, edges, part_ptr;
  std::vector<std::uint64_t> edges_shape;
  std::int64_t max_subgraph_size = -1;
  std::string sampler;
};

SampleFile read_sample(const std::string& path) {
  h5::File f = h5::File::open_read(path);
  SampleFile s;
  s.roots = f.open_dataset("/roots").read_all<std::int64_t>();
  s.node_ptr = f.open_dataset("/node_ptr").read_all<std::int64_t>();
  s.nodes = f.open_dataset("/nodes").read_all<std::int64_t>();
  s.edge_ptr = f.open_dataset("/edge_ptr").read_all<std::int64_t>();
  s.edges_shape = f.open_dataset("/edges").shape();
  s.edges = f.open_dataset("/edges").read_all<std::int64_t>();
  s.part_ptr = f.open_dataset("/part_ptr").read_all<std::int64_t>();
  s.max_subgraph_size = f.attr_int("/", "max_subgraph_size");
  s.sampler = f.attr_string("/", "sampler");
  return s;
}

// The invariants of a disjoint sampler's file, checked in dataset ids against the dataset.
void expect_disjoint_cover(const graph::Dataset& d, const SampleFile& s, std::int64_t max_size, bool inductive) {
  const std::int64_t n = d.graph.num_nodes(), m = static_cast<std::int64_t>(s.roots.size());
  ASSERT_EQ(static_cast<std::int64_t>(s.node_ptr.size()), m + 1);
  ASSERT_EQ(static_cast<std::int64_t>(s.edge_ptr.size()), m + 1);
  ASSERT_EQ(s.edges_shape.size(), 2u);
  EXPECT_EQ(s.edges_shape[1], 2u);
  EXPECT_EQ(static_cast<std::int64_t>(s.edges_shape[0]), s.edge_ptr.back());
  EXPECT_EQ(s.node_ptr.back(), static_cast<std::int64_t>(s.nodes.size()));
  std::vector<int> occ(n, 0);
  std::int64_t largest = 0;
  for (std::int64_t i = 0; i < m; ++i) {
    EXPECT_EQ(s.nodes[s.node_ptr[i]], s.roots[i]);
    EXPECT_EQ(d.train_mask[s.roots[i]], 1);
    largest = std::max(largest, s.node_ptr[i + 1] - s.node_ptr[i]);
    std::set<std::int64_t> members;
    for (std::int64_t k = s.node_ptr[i]; k < s.node_ptr[i + 1]; ++k) {
      occ.at(s.nodes[k])++;
      members.insert(s.nodes[k]);
      if (inductive) {
        EXPECT_EQ(d.train_mask[s.nodes[k]], 1) << "inductive: only training nodes";
      }
    }
    for (std::int64_t e = s.edge_ptr[i]; e < s.edge_ptr[i + 1]; ++e) {
      const std::int64_t u = s.edges[2 * e], v = s.edges[2 * e + 1];
      EXPECT_TRUE(members.count(u) && members.count(v));
      const auto row = d.graph.out_neigh(u);
      EXPECT_TRUE(std::find(row.begin(), row.end(), v) != row.end()) << u << "-" << v << " not in the dataset";
    }
  }
  for (std::int64_t v = 0; v < n; ++v) {
    EXPECT_LE(occ[v], 1);
    if (d.train_mask[v]) {
      EXPECT_EQ(occ[v], 1) << "training node " << v;
    }
  }
  EXPECT_EQ(s.max_subgraph_size, largest);
  EXPECT_LE(largest, max_size);
}

TEST(SampleCommand, WritesTheDocumentedLayoutInDatasetIds) {
  TempDir dir;
  const auto d = make_dataset(120, 0.05, graph::Setting::transductive, 1);
  graph::write_dataset(d, dir.file("d.h5"));
  const auto r = run("sample --dataset " + dir.file("d.h5") + " --sampler drw --walk-length 3 --seed 5 --out " +
                     dir.file("s.h5"));
  ASSERT_EQ(r.code, 0) << r.output;
  const SampleFile s = read_sample(dir.file("s.h5"));
  EXPECT_EQ(s.sampler, "drw");
  expect_disjoint_cover(d, s, 4, false);
  h5::File f = h5::File::open_read(dir.file("s.h5"));
  EXPECT_EQ(f.attr_int("/", "walk_length"), 3);
  EXPECT_EQ(f.attr_int("/", "restarts"), 1);
  EXPECT_EQ(f.attr_int("/", "seed"), 5);
  EXPECT_EQ(s.part_ptr, (std::vector<std::int64_t>{0, static_cast<std::int64_t>(s.roots.size())}));
}

// Without options, `dpgnn sample` draws what training draws with its defaults (docs/configs.md):
// drw-r with R = 4 walks of L = 4, induced edges; dpgnn with K = 3.
TEST(SampleCommand, DefaultsAreTrainingsDefaults) {
  TempDir dir;
  const auto d = make_dataset(120, 0.05, graph::Setting::transductive, 1);
  graph::write_dataset(d, dir.file("d.h5"));
  const auto r = run("sample --dataset " + dir.file("d.h5") + " --sampler drw-r --out " + dir.file("s.h5"));
  ASSERT_EQ(r.code, 0) << r.output;
  h5::File f = h5::File::open_read(dir.file("s.h5"));
  EXPECT_EQ(f.attr_int("/", "walk_length"), 4);
  EXPECT_EQ(f.attr_int("/", "restarts"), 4);
  EXPECT_EQ(f.attr_string("/", "edge_mode"), "induced");
  const auto g = run("sample --dataset " + dir.file("d.h5") + " --sampler dpgnn --out " + dir.file("g.h5"));
  ASSERT_EQ(g.code, 0) << g.output;
  EXPECT_EQ(h5::File::open_read(dir.file("g.h5")).attr_int("/", "max_degree"), 3);
}

TEST(SampleCommand, InductiveDatasetsSampleTheTrainingGraphInDatasetIds) {
  TempDir dir;
  const auto d = make_dataset(150, 0.08, graph::Setting::inductive, 2);
  graph::write_dataset(d, dir.file("d.h5"));
  const auto r = run("sample --dataset " + dir.file("d.h5") +
                     " --sampler drw-r --walk-length 2 --restarts 3 --edges induced --out " + dir.file("s.h5"));
  ASSERT_EQ(r.code, 0) << r.output;
  expect_disjoint_cover(d, read_sample(dir.file("s.h5")), 7, true);
}

TEST(SampleCommand, DpgnnRecordsItsParametersAndKeepsTheOccurrenceBound) {
  TempDir dir;
  const auto d = make_dataset(100, 0.2, graph::Setting::transductive, 3);
  graph::write_dataset(d, dir.file("d.h5"));
  const auto r = run("sample --dataset " + dir.file("d.h5") + " --sampler dpgnn --max-degree 2 --layers 2 --out " +
                     dir.file("s.h5"));
  ASSERT_EQ(r.code, 0) << r.output;
  const SampleFile s = read_sample(dir.file("s.h5"));
  h5::File f = h5::File::open_read(dir.file("s.h5"));
  EXPECT_EQ(f.attr_int("/", "max_degree"), 2);
  EXPECT_EQ(f.attr_int("/", "layers"), 2);
  std::vector<int> occ(100, 0);
  for (auto v : s.nodes) occ[v]++;
  EXPECT_LE(*std::max_element(occ.begin(), occ.end()), 7);  // N(2, 2) = 1 + 2 + 4
  EXPECT_EQ(s.roots.size(), 50u);                           // one per training node
}

TEST(SampleCommand, DpgnnDegreeBoundRequireRefusesHighInDegreesAndIsRecorded) {
  TempDir dir;
  const auto d = make_dataset(100, 0.2, graph::Setting::transductive, 3);  // degrees ~20 > K
  graph::write_dataset(d, dir.file("d.h5"));
  const std::string base = "sample --dataset " + dir.file("d.h5") + " --sampler dpgnn --max-degree 2 --layers 2 ";
  const auto refused = run(base + "--degree-bound require --out " + dir.file("r.h5"));
  EXPECT_EQ(refused.code, 3) << refused.output;
  EXPECT_NE(refused.output.find("training in-neighbours, more than K = 2"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(dir.file("r.h5")));
  const auto paper = run(base + "--degree-bound paper --out " + dir.file("p.h5"));
  ASSERT_EQ(paper.code, 0) << paper.output;
  EXPECT_EQ(h5::File::open_read(dir.file("p.h5")).attr_string("/", "degree_bound"), "paper");
  const auto big_k = run("sample --dataset " + dir.file("d.h5") +
                         " --sampler dpgnn --max-degree 100 --layers 1 --degree-bound require --out " + dir.file("k.h5"));
  ASSERT_EQ(big_k.code, 0) << big_k.output;
  EXPECT_EQ(h5::File::open_read(dir.file("k.h5")).attr_string("/", "degree_bound"), "require");
  EXPECT_EQ(run(base + "--degree-bound covered --out " + dir.file("x.h5")).code, 2);
}

TEST(SampleCommand, SamplesEachPartOfAPartitionOnItsOwn) {
  TempDir dir;
  const auto d = make_dataset(90, 0.1, graph::Setting::transductive, 4);
  graph::write_dataset(d, dir.file("d.h5"));
  // A real 3-part partition file (sample checks it against its checksums).
  partition::PartitionOptions po;
  po.method = partition::Method::random;
  po.num_parts = 3;
  partition::partition_dataset(dir.file("d.h5"), dir.file("p.h5"), po);
  const auto pf = partition::PartitionFile::open(dir.file("p.h5"));
  const std::vector<std::int64_t> new_to_old = pf.new_to_old(), b = pf.part_offsets();
  const auto r = run("sample --dataset " + dir.file("d.h5") + " --partition " + dir.file("p.h5") +
                     " --sampler drw --walk-length 4 --out " + dir.file("s.h5"));
  ASSERT_EQ(r.code, 0) << r.output;
  const SampleFile s = read_sample(dir.file("s.h5"));
  expect_disjoint_cover(d, s, 5, false);
  ASSERT_EQ(s.part_ptr.size(), 4u);
  std::vector<int> part_of(90);
  for (int p = 0; p < 3; ++p)
    for (std::int64_t i = b[p]; i < b[p + 1]; ++i) part_of[new_to_old[i]] = p;
  for (int p = 0; p < 3; ++p)
    for (std::int64_t i = s.part_ptr[p]; i < s.part_ptr[p + 1]; ++i)
      for (std::int64_t k = s.node_ptr[i]; k < s.node_ptr[i + 1]; ++k)
        EXPECT_EQ(part_of[s.nodes[k]], p) << "subgraph " << i << " leaves part " << p;
}

TEST(SampleCommand, RefusesAPartitionOfAnotherDataset) {
  TempDir dir;
  graph::write_dataset(make_dataset(30, 0.1, graph::Setting::transductive, 5), dir.file("d.h5"));
  graph::write_dataset(make_dataset(30, 0.1, graph::Setting::transductive, 6), dir.file("other.h5"));
  partition::PartitionOptions po;
  po.method = partition::Method::random;
  po.num_parts = 1;
  partition::partition_dataset(dir.file("other.h5"), dir.file("p.h5"), po);
  const auto r = run("sample --dataset " + dir.file("d.h5") + " --partition " + dir.file("p.h5") +
                     " --sampler drw --out " + dir.file("s.h5"));
  EXPECT_EQ(r.code, 3) << r.output;
  EXPECT_NE(r.output.find(dir.file("d.h5")), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(dir.file("p.h5")), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.file("s.h5")));
}

TEST(SampleCommand, RefusesToOverwriteWithoutForceAndBadParameters) {
  TempDir dir;
  graph::write_dataset(make_dataset(30, 0.1, graph::Setting::transductive, 6), dir.file("d.h5"));
  const std::string base = "sample --dataset " + dir.file("d.h5") + " --out " + dir.file("s.h5");
  ASSERT_EQ(run(base + " --sampler node").code, 0);
  EXPECT_EQ(run(base + " --sampler node").code, 2);
  EXPECT_EQ(run(base + " --sampler split --splits 4 --force").code, 0);
  EXPECT_EQ(read_sample(dir.file("s.h5")).roots.size(), 4u);
  EXPECT_EQ(run(base + " --sampler walk --force").code, 2);
  EXPECT_EQ(run(base + " --sampler drw --walk-length 0 --force").code, 2);
  EXPECT_EQ(run(base + " --sampler dpgnn --max-degree 0 --force").code, 2);
}

// ---- Cora ------------------------------------------------------------------------------

class CoraSampling : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const fs::path planetoid = fs::path(DPGNN_SHARED_DIR) / "data" / "cora" / "planetoid";
    if (!fs::exists(planetoid)) return;
    dir_ = new TempDir();
    const auto r = run("import planetoid --dir " + planetoid.string() + " --name cora --out " + dir_->file("cora.h5"));
    if (r.code != 0) {
      import_error_ = r.output;
      return;
    }
    cora_ = new graph::Dataset(graph::read_dataset(dir_->file("cora.h5")));
  }
  static void TearDownTestSuite() {
    delete cora_;
    delete dir_;
    cora_ = nullptr;
    dir_ = nullptr;
  }
  void SetUp() override {
    DPGNN_NEED_SHARED_DATA();
    ASSERT_NE(cora_, nullptr) << "the import of Planetoid Cora failed: " << import_error_;
  }
  static inline graph::Dataset* cora_ = nullptr;
  static inline TempDir* dir_ = nullptr;
  static inline std::string import_error_ = "no " DPGNN_SHARED_DIR "/data/cora/planetoid";
};

TEST_F(CoraSampling, DrwFamilyHoldsItsInvariants) {
  ASSERT_EQ(cora_->graph.num_nodes(), 2708);
  for (const char* args : {"--sampler drw --walk-length 6 --walkers 1 --epoch 3",
                           "--sampler drw-r --walk-length 3 --restarts 4 --edges induced"}) {
    SCOPED_TRACE(args);
    const auto r = run("sample --dataset " + dir_->file("cora.h5") + " " + args + " --force --out " + dir_->file("s.h5"));
    ASSERT_EQ(r.code, 0) << r.output;
    const std::int64_t bound = std::string(args).find("drw-r") != std::string::npos ? 13 : 7;
    expect_disjoint_cover(*cora_, read_sample(dir_->file("s.h5")), bound, false);
  }
}

TEST_F(CoraSampling, SamplersAreDeterministicForASeed) {
  sampling::SamplerOptions o;
  for (auto kind : {sampling::SamplerKind::drw, sampling::SamplerKind::drw_r, sampling::SamplerKind::dpgnn,
                    sampling::SamplerKind::split}) {
    o.kind = kind;
    const auto a = sampling::run_sampler(cora_->graph, cora_->train_mask, o, {7, 0, 0});
    const auto b = sampling::run_sampler(cora_->graph, cora_->train_mask, o, {7, 0, 0});
    const auto c = sampling::run_sampler(cora_->graph, cora_->train_mask, o, {8, 0, 0});
    EXPECT_EQ(a.nodes, b.nodes) << sampling::to_string(kind);
    EXPECT_EQ(a.edges, b.edges) << sampling::to_string(kind);
    EXPECT_NE(a.nodes, c.nodes) << sampling::to_string(kind);
  }
}

TEST_F(CoraSampling, DpgnnOccurrenceBoundHolds) {
  // The K x r grid in process (fast), one run through the command.
  for (std::int64_t k : {1, 2, 3}) {
    for (std::int64_t r : {1, 2}) {
      sampling::SamplerOptions o;
      o.kind = sampling::SamplerKind::dpgnn;
      o.max_degree = k;
      o.layers = r;
      for (std::uint64_t seed = 0; seed < 5; ++seed) {
        const auto s = sampling::run_sampler(cora_->graph, cora_->train_mask, o, {seed, 0, 0});
        std::vector<int> occ(2708, 0);
        for (auto v : s.nodes) occ[v]++;
        const int bound = r == 1 ? 1 + k : 1 + k + k * k;  // Lemma 1 by hand
        EXPECT_LE(*std::max_element(occ.begin(), occ.end()), bound) << "K=" << k << " r=" << r;
        EXPECT_EQ(s.size(), 140);  // Planetoid: 140 training nodes
      }
    }
  }
  const auto cli = run("sample --dataset " + dir_->file("cora.h5") +
                       " --sampler dpgnn --max-degree 3 --layers 2 --force --out " + dir_->file("s.h5"));
  ASSERT_EQ(cli.code, 0) << cli.output;
  const SampleFile s = read_sample(dir_->file("s.h5"));
  std::vector<int> occ(2708, 0);
  for (auto v : s.nodes) occ[v]++;
  EXPECT_LE(*std::max_element(occ.begin(), occ.end()), 13);  // N(3, 2)
  EXPECT_EQ(s.roots.size(), 140u);
}

}  // namespace
}  // namespace dpgnn
