// The dpgnn-raw intermediate file (see include/dpgnn/graph/import/raw_hdf5.h).
#include "dpgnn/graph/import/raw_hdf5.h"

#include <spdlog/spdlog.h>

#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"

namespace dpgnn::graph::import {

namespace {

std::int64_t checked_size(const h5::Dataset& ds, std::uint64_t expected_rows, const std::string& what) {
  const auto s = ds.shape();
  if (s.empty() || s[0] != expected_rows)
    throw DataError(ds.file(), ds.path(), what + ": expected " + std::to_string(expected_rows) + " rows, found " +
                                              (s.empty() ? std::string("a scalar") : std::to_string(s[0])));
  return static_cast<std::int64_t>(s.size() > 1 ? s[1] : 1);
}

}  // namespace

RawGraph read_raw_hdf5(const std::string& path) {
  h5::File f = h5::File::open_read(path);
  if (!f.has_attr("/", "format") || f.attr_string("/", "format") != kRawFormat)
    throw DataError(path, "attribute 'format'", std::string("not a ") + kRawFormat + " file");
  const std::int64_t version = f.attr_int("/", "format_version");
  if (version != kRawFormatVersion)
    throw DataError(path, "attribute 'format_version'", "unsupported version " + std::to_string(version));
  RawGraph g;
  g.name = f.attr_string("/", "name");
  g.source = f.attr_string("/", "source");
  const std::string setting = f.attr_string("/", "setting");
  if (setting != "transductive" && setting != "inductive")
    throw DataError(path, "attribute 'setting'", "must be transductive or inductive, found '" + setting + "'");
  g.setting = setting == "inductive" ? Setting::inductive : Setting::transductive;
  g.num_nodes = f.attr_int("/", "num_nodes");
  g.num_features = f.attr_int("/", "num_features");
  g.num_classes = f.attr_int("/", "num_classes");
  g.multilabel = f.attr_int("/", "multilabel") != 0;
  if (g.num_nodes <= 0) throw DataError(path, "attribute 'num_nodes'", "must be positive");
  const auto n = static_cast<std::uint64_t>(g.num_nodes);

  if (f.exists("/notes"))
    for (const auto& note : f.read_strings("/notes")) spdlog::info("{}", note);

  g.src = f.open_dataset("/edges/src").read_all<std::int64_t>();
  g.dst = f.open_dataset("/edges/dst").read_all<std::int64_t>();
  if (g.src.size() != g.dst.size())
    throw DataError(path, "/edges", "src and dst differ in length");

  if (g.num_features > 0) {
    const auto dim = static_cast<std::uint64_t>(g.num_features);
    if (f.exists("/features")) {
      auto ds = f.open_dataset("/features");
      if (checked_size(ds, n, "dense features") != g.num_features)
        throw DataError(path, "/features", "column count differs from attribute num_features");
      g.features = ds.read_all<float>();
    } else if (f.exists("/features_csr")) {
      const auto indptr = f.open_dataset("/features_csr/indptr").read_all<std::int64_t>();
      const auto indices = f.open_dataset("/features_csr/indices").read_all<std::int64_t>();
      const auto data = f.open_dataset("/features_csr/data").read_all<float>();
      if (indptr.size() != n + 1 || indptr[0] != 0 || static_cast<std::uint64_t>(indptr[n]) != indices.size() ||
          indices.size() != data.size())
        throw DataError(path, "/features_csr", "inconsistent CSR arrays (indptr, indices, data)");
      g.features.assign(n * dim, 0.0f);
      for (std::uint64_t v = 0; v < n; ++v) {
        if (indptr[v + 1] < indptr[v]) throw DataError(path, "/features_csr/indptr", "not monotone at row " + std::to_string(v));
        for (std::int64_t k = indptr[v]; k < indptr[v + 1]; ++k) {
          const std::int64_t j = indices[k];
          if (j < 0 || static_cast<std::uint64_t>(j) >= dim)
            throw DataError(path, "/features_csr/indices", "column " + std::to_string(j) + " out of range");
          g.features[v * dim + j] += data[k];  // repeated entries add up, as in scipy
        }
      }
    } else {
      throw DataError(path, "/features", "num_features > 0 but neither /features nor /features_csr exists");
    }
  }

  if (g.multilabel) {
    auto ds = f.open_dataset("/label_matrix");
    if (checked_size(ds, n, "label matrix") != g.num_classes)
      throw DataError(path, "/label_matrix", "column count differs from attribute num_classes");
    g.label_matrix = ds.read_all<std::uint8_t>();
  } else {
    auto ds = f.open_dataset("/labels");
    checked_size(ds, n, "labels");
    g.labels = ds.read_all<std::int64_t>();
  }
  if (f.exists("/label_names")) g.label_names = f.read_strings("/label_names");

  if (f.exists("/masks")) {
    g.has_split = true;
    const std::pair<const char*, std::vector<std::uint8_t>*> masks[] = {
        {"train", &g.train_mask}, {"val", &g.val_mask}, {"test", &g.test_mask}};
    for (const auto& [name, mask] : masks) {
      auto ds = f.open_dataset(std::string("/masks/") + name);
      checked_size(ds, n, std::string("mask ") + name);
      *mask = ds.read_all<std::uint8_t>();
    }
  }
  return g;
}

void write_raw_hdf5(const RawGraph& g, const std::string& path) {
  h5::File f = h5::File::create(path);
  f.set_attr("/", "format", std::string(kRawFormat));
  f.set_attr("/", "format_version", kRawFormatVersion);
  f.set_attr("/", "name", g.name);
  f.set_attr("/", "source", g.source);
  f.set_attr("/", "setting", std::string(to_string(g.setting)));
  f.set_attr("/", "num_nodes", g.num_nodes);
  f.set_attr("/", "num_features", g.num_features);
  f.set_attr("/", "num_classes", g.num_classes);
  f.set_attr("/", "multilabel", static_cast<std::int64_t>(g.multilabel ? 1 : 0));
  f.create_group("/edges");
  f.write_vector("/edges/src", g.src);
  f.write_vector("/edges/dst", g.dst);
  if (g.num_features > 0) {
    auto ds = f.create_dataset<float>("/features", {static_cast<std::uint64_t>(g.num_nodes),
                                                   static_cast<std::uint64_t>(g.num_features)});
    ds.write_rows(0, static_cast<std::uint64_t>(g.num_nodes), g.features.data());
  }
  if (g.multilabel) {
    auto ds = f.create_dataset<std::uint8_t>("/label_matrix", {static_cast<std::uint64_t>(g.num_nodes),
                                                              static_cast<std::uint64_t>(g.num_classes)});
    ds.write_rows(0, static_cast<std::uint64_t>(g.num_nodes), g.label_matrix.data());
  } else {
    f.write_vector("/labels", g.labels);
  }
  if (!g.label_names.empty()) f.write_strings("/label_names", g.label_names);
  if (g.has_split) {
    f.create_group("/masks");
    f.write_vector("/masks/train", g.train_mask);
    f.write_vector("/masks/val", g.val_mask);
    f.write_vector("/masks/test", g.test_mask);
  }
}

}  // namespace dpgnn::graph::import
