// Reading and writing the dpgnn dataset file (layout in include/dpgnn/graph/dataset.h and
// docs/data-format.md). The checksum is built from one hash per field, each fed in row
// order, so the streaming writer and the in-memory writer agree byte for byte.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/util/checksum.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"

namespace dpgnn::graph {

const char* to_string(Setting s) { return s == Setting::inductive ? "inductive" : "transductive"; }

namespace {

constexpr std::uint64_t kIndexChunk = 1 << 20;

// Field hashes combined into the content checksum (fixed order, tagged).
struct ContentHasher {
  Checksum meta, indptr, indices, features, labels, train, val, test;
  void hash_meta(const DatasetMeta& m) {
    const std::int64_t v[] = {m.num_nodes, m.num_features, m.num_classes, m.multilabel ? 1 : 0,
                              m.directed ? 1 : 0, m.setting == Setting::inductive ? 1 : 0};
    meta.update(v, sizeof v);
  }
  std::string combine() const {
    Checksum all;
    const std::pair<const char*, const Checksum*> parts[] = {
        {"meta", &meta},         {"indptr", &indptr}, {"indices", &indices}, {"features", &features},
        {"labels", &labels},     {"train", &train},   {"val", &val},         {"test", &test}};
    for (const auto& [tag, c] : parts) {
      all.update_tag(tag);
      all.update_tag(c->hex());
    }
    return all.hex();
  }
};

std::string temp_path_for(const std::string& path) {
  return path + ".tmp-" + std::to_string(::getpid());
}

Setting parse_setting(const std::string& file, const std::string& s) {
  if (s == "transductive") return Setting::transductive;
  if (s == "inductive") return Setting::inductive;
  throw DataError(file, "attribute 'setting'", "must be 'transductive' or 'inductive', found '" + s + "'");
}

}  // namespace

// ---- in-memory -------------------------------------------------------------------------

std::string content_checksum(const Dataset& d) {
  ContentHasher h;
  DatasetMeta m = d.meta;
  m.num_nodes = d.graph.num_nodes();
  h.hash_meta(m);
  h.indptr.update(d.graph.indptr());
  h.indices.update(d.graph.indices());
  h.features.update(d.features);
  if (m.multilabel)
    h.labels.update(d.label_matrix);
  else
    h.labels.update(d.labels);
  h.train.update(d.train_mask);
  h.val.update(d.val_mask);
  h.test.update(d.test_mask);
  return h.combine();
}

std::string write_dataset(const Dataset& d, const std::string& path) {
  DatasetMeta m = d.meta;
  m.num_nodes = d.graph.num_nodes();
  m.num_edges = d.graph.num_edges();
  const std::uint64_t n = static_cast<std::uint64_t>(m.num_nodes);
  auto check = [&](bool ok, const std::string& what) {
    if (!ok) throw DataError(path, what, "shape mismatch while writing the dataset");
  };
  check(d.features.size() == n * static_cast<std::uint64_t>(m.num_features), "/features");
  if (m.multilabel)
    check(d.label_matrix.size() == n * static_cast<std::uint64_t>(m.num_classes), "/labels");
  else
    check(d.labels.size() == n, "/labels");
  check(d.train_mask.size() == n && d.val_mask.size() == n && d.test_mask.size() == n, "/masks");
  DatasetWriter w(path, m);
  w.write_indptr(d.graph.indptr());
  w.append_indices(d.graph.indices().data(), d.graph.num_edges());
  if (m.num_features > 0) w.append_feature_rows(d.features.data(), m.num_nodes);
  if (m.multilabel)
    w.write_label_matrix(d.label_matrix);
  else
    w.write_labels(d.labels);
  w.write_masks(d.train_mask, d.val_mask, d.test_mask);
  if (!m.label_names.empty()) w.write_label_names(m.label_names);
  return w.finish();
}

// ---- streaming writer ------------------------------------------------------------------

struct DatasetWriter::Impl {
  std::string path, tmp;
  DatasetMeta meta;
  h5::File file;
  ContentHasher hash;
  std::unique_ptr<h5::Dataset> indices_ds, features_ds;
  std::int64_t num_edges = -1, indices_written = 0, feature_rows_written = 0;
  bool labels_done = false, masks_done = false, finished = false;
  Impl(const std::string& p, const DatasetMeta& m)
      : path(p), tmp(temp_path_for(p)), meta(m), file(h5::File::create(tmp)) {}
};

DatasetWriter::DatasetWriter(const std::string& path, const DatasetMeta& meta)
    : impl_(std::make_unique<Impl>(path, meta)) {
  if (meta.num_nodes < 0 || meta.num_nodes > kMaxNodes)
    throw UsageError(path + ": number of nodes " + std::to_string(meta.num_nodes) +
                     " outside [0, 2^31-1] (dpgnn's node id limit)");
  impl_->hash.hash_meta(meta);
}

DatasetWriter::~DatasetWriter() {
  if (impl_ && !impl_->finished) {
    impl_->file.close();
    std::remove(impl_->tmp.c_str());
  }
}

void DatasetWriter::write_indptr(const std::vector<EdgeIdx>& indptr) {
  auto& I = *impl_;
  if (static_cast<std::int64_t>(indptr.size()) != I.meta.num_nodes + 1)
    throw UsageError(I.path + ": indptr must have num_nodes + 1 entries");
  I.file.write_vector<std::int64_t>("/graph/indptr", indptr, kIndexChunk);
  I.hash.indptr.update(indptr);
  I.num_edges = indptr.back();
  I.indices_ds = std::make_unique<h5::Dataset>(I.file.create_dataset<std::int32_t>(
      "/graph/indices", {static_cast<std::uint64_t>(I.num_edges)}, kIndexChunk));
}

void DatasetWriter::append_indices(const NodeId* data, std::int64_t count) {
  auto& I = *impl_;
  if (!I.indices_ds) throw std::logic_error("DatasetWriter: write_indptr before append_indices");
  if (I.indices_written + count > I.num_edges)
    throw std::logic_error("DatasetWriter: more indices than indptr declares");
  I.indices_ds->write_rows(static_cast<std::uint64_t>(I.indices_written), static_cast<std::uint64_t>(count), data);
  I.hash.indices.update(data, static_cast<std::size_t>(count) * sizeof(NodeId));
  I.indices_written += count;
}

void DatasetWriter::append_feature_rows(const float* data, std::int64_t rows) {
  auto& I = *impl_;
  const std::int64_t f = I.meta.num_features;
  if (f == 0) throw std::logic_error("DatasetWriter: the dataset declares no features");
  if (!I.features_ds)
    I.features_ds = std::make_unique<h5::Dataset>(I.file.create_dataset<float>(
        "/features", {static_cast<std::uint64_t>(I.meta.num_nodes), static_cast<std::uint64_t>(f)},
        kFeatureChunkRows));
  if (I.feature_rows_written + rows > I.meta.num_nodes)
    throw std::logic_error("DatasetWriter: more feature rows than nodes");
  I.features_ds->write_rows(static_cast<std::uint64_t>(I.feature_rows_written), static_cast<std::uint64_t>(rows), data);
  I.hash.features.update(data, static_cast<std::size_t>(rows * f) * sizeof(float));
  I.feature_rows_written += rows;
}

void DatasetWriter::write_labels(const std::vector<std::int64_t>& labels) {
  auto& I = *impl_;
  if (I.meta.multilabel) throw std::logic_error("DatasetWriter: multi-label datasets use write_label_matrix");
  if (static_cast<std::int64_t>(labels.size()) != I.meta.num_nodes)
    throw UsageError(I.path + ": labels must have one entry per node");
  I.file.write_vector<std::int64_t>("/labels", labels, kIndexChunk);
  I.hash.labels.update(labels);
  I.labels_done = true;
}

void DatasetWriter::write_label_matrix(const std::vector<std::uint8_t>& matrix) {
  auto& I = *impl_;
  if (!I.meta.multilabel) throw std::logic_error("DatasetWriter: single-label datasets use write_labels");
  const auto n = static_cast<std::uint64_t>(I.meta.num_nodes), c = static_cast<std::uint64_t>(I.meta.num_classes);
  if (matrix.size() != n * c) throw UsageError(I.path + ": label matrix must be [num_nodes, num_classes]");
  auto ds = I.file.create_dataset<std::uint8_t>("/labels", {n, c}, kFeatureChunkRows);
  ds.write_rows(0, n, matrix.data());
  I.hash.labels.update(matrix);
  I.labels_done = true;
}

void DatasetWriter::write_masks(const std::vector<std::uint8_t>& train, const std::vector<std::uint8_t>& val,
                                const std::vector<std::uint8_t>& test) {
  auto& I = *impl_;
  const auto n = static_cast<std::size_t>(I.meta.num_nodes);
  if (train.size() != n || val.size() != n || test.size() != n)
    throw UsageError(I.path + ": masks must have one entry per node");
  I.file.write_vector<std::uint8_t>("/masks/train", train, kIndexChunk);
  I.file.write_vector<std::uint8_t>("/masks/val", val, kIndexChunk);
  I.file.write_vector<std::uint8_t>("/masks/test", test, kIndexChunk);
  I.hash.train.update(train);
  I.hash.val.update(val);
  I.hash.test.update(test);
  I.masks_done = true;
}

void DatasetWriter::write_label_names(const std::vector<std::string>& names) {
  impl_->file.write_strings("/label_names", names);
}

std::string DatasetWriter::finish() {
  auto& I = *impl_;
  auto require = [&](bool ok, const char* what) {
    if (!ok) throw std::logic_error(std::string("DatasetWriter::finish: ") + what + " not written completely");
  };
  require(I.num_edges >= 0 && I.indices_written == I.num_edges, "graph");
  require(I.meta.num_features == 0 || I.feature_rows_written == I.meta.num_nodes, "features");
  require(I.labels_done, "labels");
  require(I.masks_done, "masks");
  const std::string sum = I.hash.combine();
  auto& f = I.file;
  f.set_attr("/", "format", std::string(kDatasetFormat));
  f.set_attr("/", "format_version", kDatasetFormatVersion);
  f.set_attr("/", "name", I.meta.name);
  f.set_attr("/", "source", I.meta.source);
  f.set_attr("/", "num_nodes", I.meta.num_nodes);
  f.set_attr("/", "num_features", I.meta.num_features);
  f.set_attr("/", "num_classes", I.meta.num_classes);
  f.set_attr("/", "multilabel", static_cast<std::int64_t>(I.meta.multilabel ? 1 : 0));
  f.set_attr("/", "setting", std::string(to_string(I.meta.setting)));
  f.set_attr("/", "orientation", std::string(I.meta.directed ? "directed" : "undirected"));
  f.set_attr("/", "checksum", sum);
  I.indices_ds.reset();
  I.features_ds.reset();
  f.close();
  std::error_code ec;
  std::filesystem::rename(I.tmp, I.path, ec);
  if (ec) throw IoError(I.path + ": cannot move the finished file into place: " + ec.message());
  I.finished = true;
  return sum;
}

// ---- reader ------------------------------------------------------------------------------

struct DatasetReader::Impl {
  h5::File file;
  DatasetMeta meta;
  explicit Impl(const std::string& path) : file(h5::File::open_read(path)) {}
};

DatasetReader::DatasetReader(const std::string& path) : impl_(std::make_unique<Impl>(path)) {
  auto& f = impl_->file;
  auto& m = impl_->meta;
  m.file = path;
  if (!f.has_attr("/", "format") || f.attr_string("/", "format") != kDatasetFormat)
    throw DataError(path, "attribute 'format'",
                    "missing or not 'dpgnn-dataset': this HDF5 file is not a dpgnn dataset "
                    "(create one with `dpgnn import` or `dpgnn synth`)");
  const std::int64_t version = f.attr_int("/", "format_version");
  if (version != kDatasetFormatVersion)
    throw DataError(path, "attribute 'format_version'",
                    "version " + std::to_string(version) + " is not supported (this dpgnn reads version " +
                        std::to_string(kDatasetFormatVersion) + ")");
  m.name = f.attr_string("/", "name");
  m.source = f.has_attr("/", "source") ? f.attr_string("/", "source") : "";
  m.checksum = f.attr_string("/", "checksum");
  m.num_nodes = f.attr_int("/", "num_nodes");
  m.num_features = f.attr_int("/", "num_features");
  m.num_classes = f.attr_int("/", "num_classes");
  const std::int64_t ml = f.attr_int("/", "multilabel");
  if (ml != 0 && ml != 1) throw DataError(path, "attribute 'multilabel'", "must be 0 or 1");
  m.multilabel = ml == 1;
  m.setting = parse_setting(path, f.attr_string("/", "setting"));
  const std::string orient = f.attr_string("/", "orientation");
  if (orient != "undirected" && orient != "directed")
    throw DataError(path, "attribute 'orientation'", "must be 'undirected' or 'directed', found '" + orient + "'");
  m.directed = orient == "directed";
  if (m.num_nodes < 0 || m.num_nodes > kMaxNodes)
    throw DataError(path, "attribute 'num_nodes'",
                    std::to_string(m.num_nodes) + " outside [0, 2^31-1] (dpgnn's node id limit)");
  if (m.num_features < 0) throw DataError(path, "attribute 'num_features'", "must be >= 0");
  if (m.num_classes < 1) throw DataError(path, "attribute 'num_classes'", "must be >= 1");

  const auto n = static_cast<std::uint64_t>(m.num_nodes);
  auto expect_shape = [&](const std::string& ds_path, const std::vector<std::uint64_t>& want) {
    const auto got = f.open_dataset(ds_path).shape();
    if (got != want) {
      auto fmt = [](const std::vector<std::uint64_t>& s) {
        std::string r = "[";
        for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
        return r + "]";
      };
      throw DataError(path, ds_path, "shape " + fmt(got) + " does not match the expected " + fmt(want) +
                                         " (num_nodes = " + std::to_string(m.num_nodes) + ")");
    }
  };
  expect_shape("/graph/indptr", {n + 1});
  auto indices = f.open_dataset("/graph/indices");
  if (indices.shape().size() != 1) throw DataError(path, "/graph/indices", "must be one-dimensional");
  if (!indices.is_integer()) throw DataError(path, "/graph/indices", "must hold integers");
  m.num_edges = static_cast<std::int64_t>(indices.shape()[0]);
  if (m.num_features > 0) {
    expect_shape("/features", {n, static_cast<std::uint64_t>(m.num_features)});
    if (!f.open_dataset("/features").is_float()) throw DataError(path, "/features", "must hold float32 values");
  } else if (f.exists("/features")) {
    throw DataError(path, "/features", "present but attribute num_features is 0");
  }
  if (m.multilabel)
    expect_shape("/labels", {n, static_cast<std::uint64_t>(m.num_classes)});
  else
    expect_shape("/labels", {n});
  for (const char* mask : {"/masks/train", "/masks/val", "/masks/test"}) expect_shape(mask, {n});
  if (f.exists("/label_names")) m.label_names = f.read_strings("/label_names");
}

DatasetReader::~DatasetReader() = default;

const DatasetMeta& DatasetReader::meta() const { return impl_->meta; }

std::vector<EdgeIdx> DatasetReader::read_indptr(std::int64_t row_begin, std::int64_t row_end) const {
  return impl_->file.open_dataset("/graph/indptr")
      .read_rows<std::int64_t>(static_cast<std::uint64_t>(row_begin), static_cast<std::uint64_t>(row_end + 1));
}

std::vector<NodeId> DatasetReader::read_indices(EdgeIdx begin, EdgeIdx end) const {
  auto ds = impl_->file.open_dataset("/graph/indices");
  const auto& m = impl_->meta;
  if (ds.element_size() <= 4)
    return ds.read_rows<std::int32_t>(static_cast<std::uint64_t>(begin), static_cast<std::uint64_t>(end));
  // int64 on disk: narrow with a range check (ids must be < num_nodes <= 2^31-1).
  auto wide = ds.read_rows<std::int64_t>(static_cast<std::uint64_t>(begin), static_cast<std::uint64_t>(end));
  std::vector<NodeId> out(wide.size());
  for (std::size_t i = 0; i < wide.size(); ++i) {
    if (wide[i] < 0 || wide[i] >= m.num_nodes)
      throw DataError(m.file, "/graph/indices",
                      "entry " + std::to_string(begin + static_cast<EdgeIdx>(i)) + " = " + std::to_string(wide[i]) +
                          " is out of range [0, " + std::to_string(m.num_nodes) + ")");
    out[i] = static_cast<NodeId>(wide[i]);
  }
  return out;
}

CsrGraph DatasetReader::read_rows(std::int64_t row_begin, std::int64_t row_end) const {
  const auto& m = impl_->meta;
  auto indptr = read_indptr(row_begin, row_end);
  const EdgeIdx base = indptr.front();
  for (std::size_t i = 1; i < indptr.size(); ++i)
    if (indptr[i] < indptr[i - 1])
      throw DataError(m.file, "/graph/indptr",
                      "not monotone: entry " + std::to_string(row_begin + static_cast<std::int64_t>(i)) +
                          " is smaller than the one before it");
  if (base < 0 || indptr.back() > m.num_edges)
    throw DataError(m.file, "/graph/indptr", "offsets outside [0, " + std::to_string(m.num_edges) + "]");
  auto indices = read_indices(base, indptr.back());
  for (auto& x : indptr) x -= base;
  for (std::size_t i = 0; i < indices.size(); ++i)
    if (indices[i] < 0 || indices[i] >= m.num_nodes)
      throw DataError(m.file, "/graph/indices",
                      "entry " + std::to_string(base + static_cast<EdgeIdx>(i)) + " = " + std::to_string(indices[i]) +
                          " is out of range [0, " + std::to_string(m.num_nodes) + ")");
  return CsrGraph(std::move(indptr), std::move(indices), m.num_nodes);
}

CsrGraph DatasetReader::read_graph() const {
  const auto& m = impl_->meta;
  auto indptr = read_indptr(0, m.num_nodes);
  if (indptr.front() != 0) throw DataError(m.file, "/graph/indptr", "must start at 0");
  if (indptr.back() != m.num_edges)
    throw DataError(m.file, "/graph/indptr",
                    "last entry " + std::to_string(indptr.back()) + " must equal the number of indices (" +
                        std::to_string(m.num_edges) + ")");
  return read_rows(0, m.num_nodes);
}

std::vector<float> DatasetReader::read_features(std::int64_t row_begin, std::int64_t row_end) const {
  const auto& m = impl_->meta;
  if (m.num_features == 0) return {};
  auto x = impl_->file.open_dataset("/features")
               .read_rows<float>(static_cast<std::uint64_t>(row_begin), static_cast<std::uint64_t>(row_end));
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i])) {
      const std::int64_t row = row_begin + static_cast<std::int64_t>(i) / m.num_features;
      const std::int64_t col = static_cast<std::int64_t>(i) % m.num_features;
      throw DataError(m.file, "/features",
                      "non-finite value (" + std::string(std::isnan(x[i]) ? "NaN" : "Inf") + ") at row " +
                          std::to_string(row) + ", column " + std::to_string(col));
    }
  return x;
}

std::vector<std::int64_t> DatasetReader::read_labels(std::int64_t row_begin, std::int64_t row_end) const {
  const auto& m = impl_->meta;
  if (m.multilabel) throw std::logic_error("read_labels on a multi-label dataset");
  auto y = impl_->file.open_dataset("/labels")
               .read_rows<std::int64_t>(static_cast<std::uint64_t>(row_begin), static_cast<std::uint64_t>(row_end));
  for (std::size_t i = 0; i < y.size(); ++i)
    if (y[i] < -1 || y[i] >= m.num_classes)
      throw DataError(m.file, "/labels",
                      "label " + std::to_string(y[i]) + " of node " + std::to_string(row_begin + static_cast<std::int64_t>(i)) +
                          " is out of range [0, " + std::to_string(m.num_classes) + ") (-1 = unlabelled)");
  return y;
}

std::vector<std::uint8_t> DatasetReader::read_label_matrix(std::int64_t row_begin, std::int64_t row_end) const {
  const auto& m = impl_->meta;
  if (!m.multilabel) throw std::logic_error("read_label_matrix on a single-label dataset");
  auto y = impl_->file.open_dataset("/labels")
               .read_rows<std::uint8_t>(static_cast<std::uint64_t>(row_begin), static_cast<std::uint64_t>(row_end));
  for (std::size_t i = 0; i < y.size(); ++i)
    if (y[i] > 1)
      throw DataError(m.file, "/labels",
                      "multi-hot value " + std::to_string(y[i]) + " at node " +
                          std::to_string(row_begin + static_cast<std::int64_t>(i) / m.num_classes) + " must be 0 or 1");
  return y;
}

std::vector<std::uint8_t> DatasetReader::read_mask(const std::string& name, std::int64_t row_begin,
                                                   std::int64_t row_end) const {
  const std::string p = "/masks/" + name;
  auto v = impl_->file.open_dataset(p).read_rows<std::uint8_t>(static_cast<std::uint64_t>(row_begin),
                                                                static_cast<std::uint64_t>(row_end));
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] > 1)
      throw DataError(impl_->meta.file, p,
                      "value " + std::to_string(v[i]) + " at node " + std::to_string(row_begin + static_cast<std::int64_t>(i)) +
                          " must be 0 or 1");
  return v;
}

}  // namespace dpgnn::graph
