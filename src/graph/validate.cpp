// Strict dataset validation (see include/dpgnn/graph/validate.h).
#include "dpgnn/graph/validate.h"

#include <algorithm>
#include <cmath>

#include "dpgnn/graph/graph_builder.h"
#include "dpgnn/util/error.h"

namespace dpgnn::graph {

std::optional<MajorityBaseline> majority_baseline(const Dataset& d) {
  if (d.meta.multilabel || d.meta.num_classes < 1) return std::nullopt;
  const auto n = d.labels.size();
  std::vector<std::int64_t> counts(static_cast<std::size_t>(d.meta.num_classes), 0);
  std::int64_t train = 0;
  for (std::size_t v = 0; v < n; ++v)
    if (d.train_mask[v] != 0) ++counts[static_cast<std::size_t>(d.labels[v])], ++train;
  MajorityBaseline b;
  b.label = std::max_element(counts.begin(), counts.end()) - counts.begin();  // the first maximum
  b.train_share = train > 0 ? static_cast<double>(counts[static_cast<std::size_t>(b.label)]) / train : 0.0;
  auto accuracy = [&](const std::vector<std::uint8_t>& mask) {
    std::int64_t in = 0, hit = 0;
    for (std::size_t v = 0; v < n; ++v)
      if (mask[v] != 0) ++in, hit += d.labels[v] == b.label;
    return in > 0 ? static_cast<double>(hit) / static_cast<double>(in) : 0.0;
  };
  b.val_accuracy = accuracy(d.val_mask);
  b.test_accuracy = accuracy(d.test_mask);
  return b;
}

DatasetStats compute_stats(const CsrGraph& g, const std::vector<std::uint8_t>& train,
                           const std::vector<std::uint8_t>& val, const std::vector<std::uint8_t>& test) {
  DatasetStats s;
  s.nodes = g.num_nodes();
  s.edges = g.num_edges();
  std::vector<NodeId> row;
  for (std::int64_t v = 0; v < g.num_nodes(); ++v) {
    auto r = g.out_neigh(v);
    s.max_degree = std::max(s.max_degree, r.size());
    row.assign(r.begin(), r.end());
    std::sort(row.begin(), row.end());
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (row[i] == v) ++s.self_loops;
      if (i > 0 && row[i] == row[i - 1]) ++s.duplicate_edges;
    }
  }
  BuildOptions opt;  // symmetrise, drop self-loops and duplicates
  const CsrGraph sym = rebuild_csr(g, opt, nullptr);
  s.undirected_edges = sym.num_edges() / 2;
  for (std::int64_t v = 0; v < sym.num_nodes(); ++v)
    if (sym.out_degree(v) == 0) ++s.isolated;
  for (std::size_t i = 0; i < train.size(); ++i) {
    s.train += train[i];
    s.val += val[i];
    s.test += test[i];
  }
  return s;
}

void validate_content(const Dataset& d, const std::string& file) {
  const auto& m = d.meta;
  const std::int64_t n = d.graph.num_nodes();
  if (!m.directed && !d.graph.is_symmetric())
    throw DataError(file, "/graph/indices",
                    "adjacency is not symmetric but the dataset declares orientation 'undirected' "
                    "(symmetrise it, e.g. re-import, or declare it 'directed')");
  for (std::size_t i = 0; i < d.features.size(); ++i)
    if (!std::isfinite(d.features[i]))
      throw DataError(file, "/features",
                      std::string("non-finite value (") + (std::isnan(d.features[i]) ? "NaN" : "Inf") + ") at row " +
                          std::to_string(static_cast<std::int64_t>(i) / m.num_features) + ", column " +
                          std::to_string(static_cast<std::int64_t>(i) % m.num_features));
  std::int64_t train = 0;
  for (std::int64_t v = 0; v < n; ++v) {
    const int in = d.train_mask[v] + d.val_mask[v] + d.test_mask[v];
    if (d.train_mask[v] > 1 || d.val_mask[v] > 1 || d.test_mask[v] > 1)
      throw DataError(file, "/masks", "mask values must be 0 or 1 (node " + std::to_string(v) + ")");
    if (in > 1)
      throw DataError(file, "/masks",
                      "splits overlap: node " + std::to_string(v) + " is in more than one of train/val/test");
    train += d.train_mask[v];
    if (!m.multilabel) {
      const std::int64_t y = d.labels[v];
      if (y >= m.num_classes || y < -1 || (y == -1 && in == 1))
        throw DataError(file, "/labels",
                        "label " + std::to_string(y) + " of node " + std::to_string(v) + " is out of range [0, " +
                            std::to_string(m.num_classes) + ")" + (y == -1 ? " (unlabelled node in a split)" : ""));
    } else {
      for (std::int64_t c = 0; c < m.num_classes; ++c)
        if (d.label_matrix[v * m.num_classes + c] > 1)
          throw DataError(file, "/labels",
                          "multi-hot value at node " + std::to_string(v) + ", class " + std::to_string(c) +
                              " must be 0 or 1");
    }
  }
  if (train == 0) throw DataError(file, "/masks/train", "the training split is empty");
  if (!m.label_names.empty() && static_cast<std::int64_t>(m.label_names.size()) != m.num_classes)
    throw DataError(file, "/label_names",
                    "has " + std::to_string(m.label_names.size()) + " names for " + std::to_string(m.num_classes) +
                        " classes");
}

Dataset load_and_validate(const std::string& path, DatasetStats* stats) {
  DatasetReader r(path);  // checks attributes and shapes
  Dataset d;
  d.meta = r.meta();
  const std::int64_t n = d.meta.num_nodes;
  d.graph = r.read_graph();  // monotone indptr, index ranges
  d.features = r.read_features(0, n);
  if (d.meta.multilabel)
    d.label_matrix = r.read_label_matrix(0, n);
  else
    d.labels = r.read_labels(0, n);
  d.train_mask = r.read_mask("train", 0, n);
  d.val_mask = r.read_mask("val", 0, n);
  d.test_mask = r.read_mask("test", 0, n);
  validate_content(d, path);
  const std::string sum = content_checksum(d);
  if (sum != d.meta.checksum)
    throw DataError(path, "attribute 'checksum'",
                    "content checksum mismatch (stored " + d.meta.checksum + ", computed " + sum +
                        "): the file was modified after it was written, or is corrupt");
  if (stats) *stats = compute_stats(d.graph, d.train_mask, d.val_mask, d.test_mask);
  return d;
}

}  // namespace dpgnn::graph

namespace dpgnn::graph {
Dataset read_dataset(const std::string& path) { return load_and_validate(path, nullptr); }
}  // namespace dpgnn::graph
