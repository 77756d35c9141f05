// OGB node-property raw-file importer (see include/dpgnn/graph/import/ogb.h).
//
// The files are plain numeric CSV without headers, gzip-compressed; ogbn-products has
// 61.9M edge lines and 2.45M x 100 features, so rows are parsed in place with the CSV
// reader's reused field buffers and only the error path builds strings.
#include "dpgnn/graph/import/ogb.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <filesystem>

#include "dpgnn/graph/import/csv.h"
#include "dpgnn/util/error.h"
#include "edge_list.h"

namespace dpgnn::graph::import {

namespace fs = std::filesystem;

namespace {

// dir/stem.csv.gz, else dir/stem.csv, else "" (absent).
std::string find_csv(const fs::path& dir, const std::string& stem) {
  std::error_code ec;
  for (const char* ext : {".csv.gz", ".csv"}) {
    const fs::path p = dir / (stem + ext);
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

std::string require_csv(const fs::path& dir, const std::string& stem) {
  std::string p = find_csv(dir, stem);
  if (p.empty())
    throw IoError("OGB folder: missing '" + (dir / (stem + ".csv.gz")).string() + "' (or the uncompressed '" + stem +
                  ".csv')");
  return p;
}

// One node id per line.
std::vector<std::int64_t> read_id_list(const std::string& path, std::int64_t n) {
  CsvReader csv(path);
  std::vector<std::string> f;
  std::vector<std::int64_t> ids;
  while (csv.next(f)) {
    if (f.size() == 1 && f[0].empty()) continue;
    if (f.size() != 1) throw DataError(csv.where(), "", "expected one node id per line, found " + std::to_string(f.size()) + " fields");
    const std::int64_t v = parse_node_id(f[0], csv.where(), "node id");
    if (v >= n)
      throw DataError(csv.where(), "", "node id " + std::to_string(v) + " out of range [0, " + std::to_string(n) + ")");
    ids.push_back(v);
  }
  return ids;
}

bool is_nan_text(const std::string& s) {
  return s.empty() || s == "nan" || s == "NaN" || s == "NAN" || s == "-nan";
}

// The number of nodes from num-node-list.csv, or -1 when the file is absent (then the labels
// decide it).
std::int64_t read_num_nodes(const fs::path& raw, const EdgeList& e, const std::string& edge_file) {
  std::int64_t n = -1;
  const std::string nn_file = find_csv(raw, "num-node-list");
  if (nn_file.empty()) return n;
  CsvReader csv(nn_file);
  std::vector<std::string> f;
  if (!csv.next(f) || f.size() != 1 || !parse_int64(f[0], &n) || n <= 0)
    throw DataError(nn_file, "line 1", "expected one positive integer (the number of nodes)");
  std::vector<std::string> more;
  while (csv.next(more))
    if (!(more.size() == 1 && more[0].empty()))
      throw DataError(csv.where(), "", "more than one graph: only single-graph node-property datasets can be imported");
  if (e.max_id >= n)
    throw DataError(edge_file, "", "node id " + std::to_string(e.max_id) + " out of range [0, " + std::to_string(n) +
                                       ") given by " + nn_file);
  return n;
}

// Labels: one column (class id, NaN = unlabelled) or C columns of 0/1 (multi-label). Returns
// the number of nodes (`n`, or when it is -1 what the labels and edges say).
std::int64_t read_labels(const std::string& label_file, std::int64_t n, std::int64_t max_id, RawGraph& g) {
  CsvReader csv(label_file);
  std::vector<std::string> f;
  std::size_t width = 0;
  std::int64_t unlabelled = 0;
  while (csv.next(f)) {
    if (f.size() == 1 && f[0].empty()) continue;
    if (width == 0) width = f.size();
    if (f.size() != width)
      throw DataError(csv.where(), "", "expected " + std::to_string(width) + " fields, found " + std::to_string(f.size()));
    if (width == 1) {
      std::int64_t y = -1;
      if (is_nan_text(f[0])) {
        ++unlabelled;
      } else if (!parse_int64(f[0], &y)) {
        float x = 0;
        if (!parse_float(f[0], &x) || x < 0 || std::floor(x) != x)
          throw DataError(csv.where(), "", "label '" + f[0] + "' is not a class id (a non-negative integer or NaN)");
        y = static_cast<std::int64_t>(x);
      } else if (y < 0) {
        throw DataError(csv.where(), "", "negative label " + f[0]);
      }
      g.labels.push_back(y);
    } else {
      for (const auto& s : f) {
        std::int64_t b = 0;
        if (!parse_int64(s, &b) || (b != 0 && b != 1))
          throw DataError(csv.where(), "", "multi-label value '" + s + "' is not 0 or 1");
        g.label_matrix.push_back(static_cast<std::uint8_t>(b));
      }
    }
  }
  if (width == 0) throw DataError(label_file, "", "empty file");
  const std::int64_t rows = width == 1 ? static_cast<std::int64_t>(g.labels.size())
                                       : static_cast<std::int64_t>(g.label_matrix.size() / width);
  if (n < 0) n = std::max(rows, max_id + 1);
  if (rows != n)
    throw DataError(label_file, "", "has " + std::to_string(rows) + " rows for " + std::to_string(n) + " nodes");
  if (width == 1) {
    g.num_classes = *std::max_element(g.labels.begin(), g.labels.end()) + 1;
    if (unlabelled > 0) spdlog::info("{}: {} of {} nodes unlabelled (NaN)", label_file, unlabelled, n);
  } else {
    g.multilabel = true;
    g.num_classes = static_cast<std::int64_t>(width);
  }
  return n;
}

// Features (optional: ogbn-proteins has none).
void read_features(const fs::path& raw, std::int64_t n, RawGraph& g) {
  const std::string feat_file = find_csv(raw, "node-feat");
  if (feat_file.empty()) {
    spdlog::warn("{}: no node-feat.csv(.gz): the dataset has no node features (F = 0)", raw.string());
    return;
  }
  CsvReader csv(feat_file);
  std::vector<std::string> f;
  std::size_t width = 0;
  std::int64_t rows = 0;
  while (csv.next(f)) {
    if (f.size() == 1 && f[0].empty()) continue;
    if (width == 0) {
      width = f.size();
      g.num_features = static_cast<std::int64_t>(width);
      g.features.reserve(static_cast<std::size_t>(n) * width);
    }
    if (f.size() != width)
      throw DataError(csv.where(), "", "expected " + std::to_string(width) + " features, found " + std::to_string(f.size()));
    if (rows == n) throw DataError(csv.where(), "", "more feature rows than the " + std::to_string(n) + " nodes");
    for (std::size_t j = 0; j < width; ++j) {
      float x = 0;
      if (!parse_float(f[j], &x))
        throw DataError(csv.where(), "", "column " + std::to_string(j + 1) + ": '" + f[j] + "' is not a number");
      g.features.push_back(x);
    }
    ++rows;
  }
  if (rows != n) throw DataError(feat_file, "", "has " + std::to_string(rows) + " rows for " + std::to_string(n) + " nodes");
}

// The split: --split-name, or the only folder under split/, or none (a random split later).
void read_split(const fs::path& dir, const OgbOptions& o, std::int64_t n, RawGraph& g) {
  std::error_code ec;
  const fs::path split_root = dir / "split";
  std::string split_name = o.split_name;
  if (split_name.empty() && fs::is_directory(split_root, ec)) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(split_root, ec))
      if (entry.is_directory()) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    if (names.size() == 1) {
      split_name = names[0];
    } else if (names.size() > 1) {
      std::string list;
      for (const auto& s : names) list += (list.empty() ? "" : ", ") + s;
      throw UsageError("'" + split_root.string() + "' holds several splits (" + list + "): choose one with --split-name");
    }
  }
  if (split_name.empty()) {
    spdlog::warn("{}: no split/ folder: a random split is drawn", o.dir);
    return;
  }
  const fs::path sd = split_root / split_name;
  if (!fs::is_directory(sd, ec)) throw IoError("OGB split folder '" + sd.string() + "' does not exist");
  g.has_split = true;
  g.train_mask.assign(n, 0);
  g.val_mask.assign(n, 0);
  g.test_mask.assign(n, 0);
  const std::pair<const char*, std::vector<std::uint8_t>*> parts[] = {
      {"train", &g.train_mask}, {"valid", &g.val_mask}, {"test", &g.test_mask}};
  for (const auto& [stem, mask] : parts) {
    const std::string file = require_csv(sd, stem);
    for (std::int64_t v : read_id_list(file, n)) (*mask)[v] = 1;
  }
  spdlog::info("split '{}' from {}", split_name, sd.string());
}

}  // namespace

RawGraph read_ogb(const OgbOptions& o) {
  if (o.dir.empty()) throw UsageError("--dir is required");
  std::error_code ec;
  const fs::path dir(o.dir);
  if (!fs::is_directory(dir, ec)) throw IoError("OGB folder '" + o.dir + "' does not exist or is not a directory");
  const fs::path raw = dir / "raw";
  RawGraph g;
  g.name = fs::path(o.dir).lexically_normal().filename().string();
  if (g.name.empty() || g.name == ".") g.name = fs::absolute(dir, ec).lexically_normal().parent_path().filename().string();
  g.source = "OGB raw files: " + o.dir;

  const std::string edge_file = require_csv(raw, "edge");
  EdgeList e = read_edge_csv(edge_file, false, "", "");
  std::int64_t n = read_num_nodes(raw, e, edge_file);
  n = read_labels(require_csv(raw, "node-label"), n, e.max_id, g);
  g.num_nodes = n;
  g.src = std::move(e.src);
  g.dst = std::move(e.dst);
  read_features(raw, n, g);
  read_split(dir, o, n, g);
  return g;
}

}  // namespace dpgnn::graph::import
