// Generic CSV importer (see include/dpgnn/graph/import/generic_csv.h and
// docs/importing.md for the exact format).
#include "dpgnn/graph/import/generic_csv.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "dpgnn/graph/import/csv.h"
#include "dpgnn/util/error.h"
#include "edge_list.h"
#include "labels.h"

namespace dpgnn::graph::import {

namespace {

struct IdTable {
  std::vector<std::string> header;
  std::vector<std::int64_t> ids;
  std::vector<std::vector<std::string>> values;  // the non-id columns asked for
  std::vector<std::int64_t> lines;
  std::int64_t max_id = -1;
};

// Reads a CSV with a header, an id column and `columns` (empty: every other column).
IdTable read_id_table(const std::string& path, const std::string& id_column, const std::vector<std::string>& columns,
                      const std::string& option, char delim) {
  CsvReader csv(path, delim);
  IdTable t;
  if (!csv.next(t.header)) throw DataError(path, "", "empty file (expected a header line)");
  const int id_col = find_column(t.header, id_column);
  if (id_col < 0)
    throw DataError(path, "", "no id column '" + id_column + "' in the header (" + option + "); columns: " +
                                  join_columns(t.header));
  std::vector<int> cols;
  if (columns.empty()) {
    for (int i = 0; i < static_cast<int>(t.header.size()); ++i)
      if (i != id_col) cols.push_back(i);
  } else {
    for (const auto& c : columns) {
      const int i = find_column(t.header, c);
      if (i < 0) throw DataError(path, "", "no column '" + c + "' in the header; columns: " + join_columns(t.header));
      cols.push_back(i);
    }
  }
  std::vector<std::string> f;
  std::vector<std::uint8_t> seen;
  while (csv.next(f)) {
    if (f.size() == 1 && f[0].empty()) continue;
    if (f.size() != t.header.size())
      throw DataError(csv.where(), "", "expected " + std::to_string(t.header.size()) + " fields as in the header, found " +
                                           std::to_string(f.size()));
    const std::int64_t id = parse_node_id(f[id_col], csv.where(), id_column);
    if (static_cast<std::size_t>(id) >= seen.size()) seen.resize(std::max<std::size_t>(id + 1, seen.size() * 2), 0);
    if (seen[id]) throw DataError(csv.where(), "", "node " + std::to_string(id) + " appears a second time");
    seen[id] = 1;
    t.ids.push_back(id);
    t.lines.push_back(csv.line());
    std::vector<std::string> row;
    row.reserve(cols.size());
    for (int c : cols) row.push_back(f[c]);
    t.values.push_back(std::move(row));
    t.max_id = std::max(t.max_id, id);
  }
  std::vector<std::string> names;
  for (int c : cols) names.push_back(t.header[c]);
  t.header = std::move(names);
  return t;
}

}  // namespace

RawGraph read_generic_csv(const GenericCsvOptions& o) {
  if (o.edges.empty()) throw UsageError("--edges is required");
  if (o.labels.empty())
    throw UsageError("--labels is required: a node-classification dataset needs labels for its training split");
  RawGraph g;
  g.source = "CSV: " + o.edges;
  EdgeList e = read_edge_csv(o.edges, true, o.src_column, o.dst_column, o.delimiter);
  IdTable lab = read_id_table(o.labels, o.id_column, {o.label_column}, "--labels", o.delimiter);
  g.source += ", " + o.labels;
  IdTable feat, split;
  if (!o.features.empty()) {
    feat = read_id_table(o.features, o.id_column, {}, "--features", o.delimiter);
    g.source += ", " + o.features;
  }
  if (!o.split.empty()) {
    split = read_id_table(o.split, o.id_column, {o.split_column}, "--split", o.delimiter);
    g.source += ", " + o.split;
  }
  const std::int64_t max_id = std::max({e.max_id, lab.max_id, feat.max_id, split.max_id});
  std::int64_t n = max_id + 1;
  if (o.num_nodes >= 0) {
    if (max_id >= o.num_nodes)
      throw DataError(o.edges, "", "node id " + std::to_string(max_id) + " is out of range for --num-nodes " +
                                       std::to_string(o.num_nodes));
    n = o.num_nodes;
  }
  g.num_nodes = n;
  g.src = std::move(e.src);
  g.dst = std::move(e.dst);

  std::vector<std::string> values;
  for (auto& v : lab.values) values.push_back(v[0]);
  LabelMapping lm = map_labels(values, o.labels + ": column '" + o.label_column + "'");
  g.labels.assign(n, -1);
  for (std::size_t i = 0; i < lab.ids.size(); ++i) g.labels[lab.ids[i]] = lm.ids[i];
  g.num_classes = lm.num_classes;
  g.label_names = std::move(lm.names);
  const auto unlabelled = std::count(g.labels.begin(), g.labels.end(), -1);
  if (unlabelled > 0) spdlog::info("{}: {} of {} nodes are unlabelled (-1)", o.labels, unlabelled, n);

  if (!o.features.empty()) {
    const auto dim = static_cast<std::int64_t>(feat.header.size());
    if (dim == 0) throw DataError(o.features, "", "no feature columns besides the id column '" + o.id_column + "'");
    g.num_features = dim;
    g.features.assign(static_cast<std::size_t>(n) * dim, 0.0f);
    for (std::size_t i = 0; i < feat.ids.size(); ++i)
      for (std::int64_t j = 0; j < dim; ++j) {
        float x = 0;
        if (!parse_float(feat.values[i][j], &x))
          throw DataError(o.features + ", line " + std::to_string(feat.lines[i]), "",
                          "column '" + feat.header[j] + "': '" + feat.values[i][j] + "' is not a number");
        g.features[feat.ids[i] * dim + j] = x;
      }
    if (static_cast<std::int64_t>(feat.ids.size()) < n)
      spdlog::warn("{}: {} of {} nodes have no feature row: their features are all zero", o.features,
                   n - static_cast<std::int64_t>(feat.ids.size()), n);
  }

  if (!o.split.empty()) {
    g.has_split = true;
    g.train_mask.assign(n, 0);
    g.val_mask.assign(n, 0);
    g.test_mask.assign(n, 0);
    for (std::size_t i = 0; i < split.ids.size(); ++i) {
      const std::string& s = split.values[i][0];
      auto& mask = s == "train" ? g.train_mask : s == "val" ? g.val_mask : g.test_mask;
      if (s != "train" && s != "val" && s != "test")
        throw DataError(o.split + ", line " + std::to_string(split.lines[i]), "",
                        "column '" + o.split_column + "': '" + s + "' is not one of train, val, test");
      mask[split.ids[i]] = 1;
    }
  }
  return g;
}

}  // namespace dpgnn::graph::import
