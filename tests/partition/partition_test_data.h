// Small datasets and helpers shared by the partition tests.
//
// `clustered_dataset` draws a planted-partition graph (k dense clusters, sparse links
// between them) with std::mt19937_64, so METIS has structure to find and the graph is the
// same on every machine. `import_cora` imports the shared Planetoid Cora with the dpgnn
// binary (skipping when the data or the `import` subcommand is not available).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "dpgnn/util/remove_tree.h"
#include "dpgnn/graph/dataset.h"
#include "dpgnn/graph/graph_builder.h"

namespace dpgnn::partition::testing {

struct ClusteredSpec {
  std::int64_t nodes = 600;
  int clusters = 4;
  double p_in = 0.05, p_out = 0.002;
  std::int64_t features = 5;
  std::int64_t classes = 3;
  double train_frac = 0.3, val_frac = 0.2;
  graph::Setting setting = graph::Setting::transductive;
  std::uint64_t seed = 1;
  std::string name = "clustered";
};

inline graph::Dataset clustered_dataset(const ClusteredSpec& s) {
  std::mt19937_64 gen(s.seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<std::int64_t> src, dst;
  // Node v belongs to cluster v % clusters: clusters interleave in id order, so the METIS
  // relabelling is far from the identity.
  for (std::int64_t a = 0; a < s.nodes; ++a)
    for (std::int64_t b = a + 1; b < s.nodes; ++b) {
      const bool same = a % s.clusters == b % s.clusters;
      if (u(gen) < (same ? s.p_in : s.p_out)) {
        src.push_back(a);
        dst.push_back(b);
      }
    }
  graph::Dataset d;
  d.graph = graph::build_csr(s.nodes, src, dst, graph::BuildOptions{}, nullptr, "clustered_dataset");
  d.meta.name = s.name;
  d.meta.source = "partition test fixture";
  d.meta.setting = s.setting;
  d.meta.num_features = s.features;
  d.meta.num_classes = s.classes;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  d.features.resize(static_cast<std::size_t>(s.nodes * s.features));
  for (auto& x : d.features) x = normal(gen);
  d.labels.resize(static_cast<std::size_t>(s.nodes));
  d.train_mask.assign(s.nodes, 0);
  d.val_mask.assign(s.nodes, 0);
  d.test_mask.assign(s.nodes, 0);
  for (std::int64_t v = 0; v < s.nodes; ++v) {
    d.labels[v] = static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(s.classes));
    const double r = u(gen);
    if (r < s.train_frac)
      d.train_mask[v] = 1;
    else if (r < s.train_frac + s.val_frac)
      d.val_mask[v] = 1;
    else
      d.test_mask[v] = 1;
  }
  return d;
}

// A fresh temporary directory removed at the end of the test.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "dpgnn-partition-test-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    dpgnn::remove_tree(path_, ec);
  }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Imports Planetoid Cora into `out` with the dpgnn binary; returns false (with the reason)
// when the shared data is missing or the import fails (callers check DPGNN_NEED_SHARED_DATA()
// first, so a false here is a failure).
inline bool import_cora(const std::string& out, std::string* why) {
  const std::string dir = std::string(DPGNN_SHARED_DIR) + "/data/cora/planetoid";
  if (!std::filesystem::exists(dir + "/ind.cora.graph")) {
    *why = "no Planetoid Cora under " + dir;
    return false;
  }
  const std::string cmd = std::string(DPGNN_BINARY) + " import planetoid --dir " + dir + " --name cora --out " + out +
                          " > " + out + ".log 2>&1";
  if (std::system(cmd.c_str()) != 0 || !std::filesystem::exists(out)) {
    *why = "`dpgnn import planetoid` failed or is not available (see " + out + ".log)";
    return false;
  }
  return true;
}

}  // namespace dpgnn::partition::testing
