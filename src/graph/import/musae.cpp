// MUSAE / FEATHER importer (see include/dpgnn/graph/import/musae.h).
//
// Node ids are the integers of the id column (0..N-1); N = max id + 1 over the target
// rows, the edges and the feature keys. The target CSV needs a real CSV parser (facebook
// page names are RFC 4180-quoted); twitch target rows are unsorted and FR has duplicates.
#include "dpgnn/graph/import/musae.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "dpgnn/graph/import/csv.h"
#include "dpgnn/util/error.h"
#include "edge_list.h"
#include "labels.h"

namespace dpgnn::graph::import {

namespace {

struct TargetRow {
  std::int64_t id;
  std::string label;
  std::int64_t line;
};

std::vector<TargetRow> read_targets(const MusaeOptions& o) {
  CsvReader csv(o.target);
  std::vector<std::string> f;
  if (!csv.next(f)) throw DataError(o.target, "", "empty file (expected a header line)");
  const int id_col = find_column(f, o.id_column);
  if (id_col < 0)
    throw DataError(o.target, "", "no id column '" + o.id_column + "' (--id-column) in the header; columns: " +
                                      join_columns(f));
  if (o.label_column.empty()) throw UsageError("--label-column is required (one of " + join_columns(f) + ")");
  const int label_col = find_column(f, o.label_column);
  if (label_col < 0)
    throw DataError(o.target, "", "no label column '" + o.label_column + "' (--label-column) in the header; columns: " +
                                      join_columns(f));
  const std::size_t width = f.size();
  std::vector<TargetRow> rows;
  while (csv.next(f)) {
    if (f.size() == 1 && f[0].empty()) continue;  // blank line
    if (f.size() != width)
      throw DataError(csv.where(), "", "expected " + std::to_string(width) + " fields as in the header, found " +
                                           std::to_string(f.size()));
    rows.push_back({parse_node_id(f[id_col], csv.where(), o.id_column), f[label_col], csv.line()});
  }
  if (rows.empty()) throw DataError(o.target, "", "no data rows");
  return rows;
}

// Sorts by id and drops exact duplicates; two different labels for one id are an error.
std::vector<TargetRow> dedupe(std::vector<TargetRow> rows, const std::string& file) {
  std::stable_sort(rows.begin(), rows.end(), [](const TargetRow& a, const TargetRow& b) { return a.id < b.id; });
  std::vector<TargetRow> out;
  std::int64_t dropped = 0;
  for (auto& r : rows) {
    if (!out.empty() && out.back().id == r.id) {
      if (out.back().label != r.label)
        throw DataError(file, "", "node " + std::to_string(r.id) + " has conflicting labels: '" + out.back().label +
                                      "' on line " + std::to_string(out.back().line) + " and '" + r.label + "' on line " +
                                      std::to_string(r.line));
      ++dropped;
      continue;
    }
    out.push_back(std::move(r));
  }
  if (dropped > 0)
    spdlog::info("{}: {} duplicate target rows (same id, same label) removed; {} nodes keep one row each", file,
                 dropped, out.size());
  return out;
}

// {"<node>": [feature ids]} -> per-node id lists.
nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw IoError("cannot open feature file '" + path + "' (--features)");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw DataError(path, "", std::string("not valid JSON: ") + e.what());
  }
}

}  // namespace

RawGraph read_musae(const MusaeOptions& o) {
  if (o.edges.empty()) throw UsageError("--edges is required");
  if (o.target.empty()) throw UsageError("--target is required");
  RawGraph g;
  g.source = "MUSAE/FEATHER CSV: " + o.edges + ", " + o.target + (o.features.empty() ? "" : ", " + o.features);

  EdgeList e = read_edge_csv(o.edges, true, "", "");
  auto rows = dedupe(read_targets(o), o.target);

  nlohmann::json feats;
  std::int64_t max_key = -1, max_feature = -1;
  if (!o.features.empty()) {
    feats = read_json(o.features);
    if (!feats.is_object())
      throw DataError(o.features, "", "expected a JSON object {\"<node id>\": [feature ids ...]}");
    for (const auto& [key, list] : feats.items()) {
      std::int64_t id = 0;
      if (!parse_int64(key, &id) || id < 0)
        throw DataError(o.features, "key '" + key + "'", "is not a non-negative integer node id");
      max_key = std::max(max_key, id);
      if (!list.is_array()) throw DataError(o.features, "key '" + key + "'", "value is not a list of feature ids");
      for (const auto& x : list) {
        if (!x.is_number_integer() || x.get<std::int64_t>() < 0)
          throw DataError(o.features, "key '" + key + "'", "feature id " + x.dump() + " is not a non-negative integer");
        max_feature = std::max(max_feature, x.get<std::int64_t>());
      }
    }
  }

  const std::int64_t n = std::max({e.max_id, rows.back().id, max_key}) + 1;
  g.num_nodes = n;
  g.src = std::move(e.src);
  g.dst = std::move(e.dst);

  // Labels.
  std::vector<std::string> values;
  values.reserve(rows.size());
  for (const auto& r : rows) values.push_back(r.label);
  LabelMapping lm = map_labels(values, o.target + ": column '" + o.label_column + "'");
  g.labels.assign(n, -1);
  for (std::size_t i = 0; i < rows.size(); ++i) g.labels[rows[i].id] = lm.ids[i];
  g.num_classes = lm.num_classes;
  g.label_names = std::move(lm.names);
  if (static_cast<std::int64_t>(rows.size()) < n)
    spdlog::warn("{}: {} of {} nodes have no target row: they are unlabelled (-1) and in no split", o.target,
                 n - static_cast<std::int64_t>(rows.size()), n);

  // Features: the binary indicator of each node's id list (repeated ids count once).
  if (o.features.empty()) {
    spdlog::warn("no --features file: the dataset has no node features (F = 0)");
  } else {
    std::int64_t dim = max_feature + 1;
    // The MUSAE Twitch release (node ids in `new_id`) gives every country one shared feature
    // id space of 3,170 ids (Rozemberczki et al. 2021) so that models transfer between
    // countries; some countries never use the top ids, so max id + 1 would differ.
    constexpr std::int64_t kTwitchFeatureSpace = 3170;
    const bool twitch_default = o.num_features < 0 && o.id_column == "new_id" && max_feature < kTwitchFeatureSpace;
    if (twitch_default) {
      dim = kTwitchFeatureSpace;
      spdlog::info("{}: Twitch layout (id column new_id): feature dimension {} = the id space shared by every "
                   "MUSAE Twitch country (use --num-features to choose another)",
                   o.features, kTwitchFeatureSpace);
    }
    if (o.num_features >= 0) {
      if (max_feature >= o.num_features)
        throw DataError(o.features, "", "feature id " + std::to_string(max_feature) + " is outside --num-features " +
                                            std::to_string(o.num_features) + " (ids must be < " +
                                            std::to_string(o.num_features) + ")");
      dim = o.num_features;
    }
    if (dim <= 0) throw DataError(o.features, "", "no feature ids in any list (use no --features for F = 0)");
    g.num_features = dim;
    g.features.assign(static_cast<std::size_t>(n) * dim, 0.0f);
    std::int64_t repeats = 0, entries = 0;
    for (const auto& [key, list] : feats.items()) {
      std::int64_t id = 0;
      parse_int64(key, &id);
      float* row = g.features.data() + id * dim;
      for (const auto& x : list) {
        const auto j = x.get<std::int64_t>();
        if (row[j] != 0.0f) ++repeats;
        row[j] = 1.0f;
        ++entries;
      }
    }
    const auto keys = static_cast<std::int64_t>(feats.size());
    spdlog::info("{}: {} nodes with feature lists, {} entries, feature dimension {}{}", o.features, keys, entries, dim,
                 o.num_features >= 0 ? " (--num-features)" : twitch_default ? " (Twitch id space)" : " (max id + 1)");
    if (repeats > 0)
      spdlog::info("{}: {} repeated feature ids within a node's list counted once (binary features)", o.features,
                   repeats);
    if (keys < n) spdlog::warn("{}: {} of {} nodes have no feature list: their features are all zero", o.features, n - keys, n);
  }
  return g;
}

}  // namespace dpgnn::graph::import
