// Reading and writing the dpgnn dataset file (layout in include/dpgnn/graph/dataset.h and
// docs/data-format.md). The checksum is built from one hash per field, each fed in row
// order, so the streaming writer and the in-memory writer agree byte for byte.
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <unordered_set>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/util/checksum.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/hdf5.h"
#include "dpgnn/util/integrity.h"

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

// Rows per chunk (= per checksum block) of compressed features: kFeatureChunkRows, halved
// until a chunk holds at most 2 MiB. A read decodes whole chunks, so a single-row read
// (DPAR's aggregation) should not decode 50 MB (Twitch's 3170 features x 4096 rows), and
// the reader's 64 MiB block cache should hold dozens of blocks, not one. Deflate's window
// is 32 KiB, so smaller chunks compress as well. Chunks of up to 64 features (the
// ogbn-products shape: 100 features, 1.6 MB) keep 4096 rows.
std::uint64_t compressed_feature_chunk_rows(std::int64_t num_features) {
  constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{2} << 20;
  std::uint64_t rows = kFeatureChunkRows;
  while (rows > 1 && rows * static_cast<std::uint64_t>(num_features) * sizeof(float) > kMaxChunkBytes) rows /= 2;
  return rows;
}

std::string temp_path_for(const std::string& path) {
  return path + ".tmp-" + std::to_string(::getpid());
}

// The arrays that carry per-block checksum tables (util/integrity.h), in digest order.
std::vector<std::string> integrity_arrays(const DatasetMeta& m) {
  std::vector<std::string> a{"/graph/indptr", "/graph/indices"};
  if (m.num_features > 0) a.push_back("/features");
  for (const char* p : {"/labels", "/masks/train", "/masks/val", "/masks/test"}) a.push_back(p);
  return a;
}

// Digest over the attributes, the label names and the checksum tables: stored by the writer
// as /integrity's attribute header_checksum and checked by every reader on open, so that
// attributes and tables cannot change unnoticed and the tables can be trusted per block.
std::string header_digest(const DatasetMeta& m, const std::map<std::string, integrity::Table>& tables) {
  integrity::Digest d;
  d.add("format", std::string(kDatasetFormat));
  d.add("format_version", kDatasetFormatVersion);
  d.add("name", m.name);
  d.add("source", m.source);
  d.add("checksum", m.checksum);
  d.add("num_nodes", m.num_nodes);
  d.add("num_edges", m.num_edges);
  d.add("num_features", m.num_features);
  d.add("num_classes", m.num_classes);
  d.add("multilabel", static_cast<std::int64_t>(m.multilabel ? 1 : 0));
  d.add("setting", std::string(to_string(m.setting)));
  d.add("orientation", std::string(m.directed ? "directed" : "undirected"));
  d.add("label_names", static_cast<std::int64_t>(m.label_names.size()));
  for (const auto& n : m.label_names) d.add("label_name", n);
  for (const auto& a : integrity_arrays(m)) d.add(a, tables.at(a));
  return d.hex();
}

// Files written before the checksum tables existed: the whole content checksum is verified
// once per process and file (path, inode, size, modification time), streaming every array.
void verify_legacy_content(const h5::File& f, const DatasetMeta& m) {
  static std::mutex mu;
  static std::set<std::string> verified;
  struct stat st {};
  if (::stat(f.path().c_str(), &st) != 0) throw IoError(f.path() + ": cannot stat");
  const std::string key = f.path() + "|" + std::to_string(st.st_ino) + "|" + std::to_string(st.st_size) + "|" +
                          std::to_string(st.st_mtim.tv_sec) + "." + std::to_string(st.st_mtim.tv_nsec);
  {
    std::lock_guard<std::mutex> lock(mu);
    if (verified.count(key)) return;
  }
  spdlog::warn("{}: written by an older dpgnn without per-block checksums: verifying the whole content checksum "
               "(re-create the file with this dpgnn to verify only the rows read)",
               f.path());
  ContentHasher h;
  h.hash_meta(m);
  const auto n = static_cast<std::uint64_t>(m.num_nodes);
  constexpr std::uint64_t kStep = std::uint64_t{1} << 22;
  auto stream = [&](const std::string& p, std::uint64_t rows, auto tag, Checksum& c) {
    using T = decltype(tag);
    const auto ds = f.open_dataset(p);
    for (std::uint64_t lo = 0; lo < rows; lo += kStep) c.update(ds.read_rows<T>(lo, std::min(rows, lo + kStep)));
  };
  stream("/graph/indptr", n + 1, std::int64_t{}, h.indptr);
  stream("/graph/indices", static_cast<std::uint64_t>(m.num_edges), std::int32_t{}, h.indices);
  if (m.num_features > 0) {
    const auto ds = f.open_dataset("/features");
    const std::uint64_t step = std::max<std::uint64_t>(1, kStep / static_cast<std::uint64_t>(m.num_features));
    for (std::uint64_t lo = 0; lo < n; lo += step) h.features.update(ds.read_rows<float>(lo, std::min(n, lo + step)));
  }
  if (m.multilabel)
    h.labels.update(f.open_dataset("/labels").read_all<std::uint8_t>());
  else
    stream("/labels", n, std::int64_t{}, h.labels);
  stream("/masks/train", n, std::uint8_t{}, h.train);
  stream("/masks/val", n, std::uint8_t{}, h.val);
  stream("/masks/test", n, std::uint8_t{}, h.test);
  const std::string sum = h.combine();
  if (sum != m.checksum)
    throw DataError(f.path(), "attribute 'checksum'",
                    "content checksum mismatch (stored " + m.checksum + ", computed " + sum +
                        "): the file was modified after it was written, or is corrupt");
  std::lock_guard<std::mutex> lock(mu);
  verified.insert(key);
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

std::string write_dataset(const Dataset& d, const std::string& path, const DatasetStorage& storage) {
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
  DatasetWriter w(path, m, storage);
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
  DatasetStorage storage;
  h5::File file;
  ContentHasher hash;
  std::unique_ptr<h5::Dataset> indices_ds, features_ds;
  std::map<std::string, integrity::Table> tables;
  integrity::BlockHasher indices_blocks{sizeof(NodeId), integrity::kBlockRows1d};
  std::unique_ptr<integrity::BlockHasher> feature_blocks;
  std::vector<std::string> label_names;
  // Row-streamed per-node arrays (append_*): dataset, checksum table and rows written so far.
  struct Stream {
    std::unique_ptr<h5::Dataset> ds;
    std::unique_ptr<integrity::BlockHasher> blocks;
    std::uint64_t rows = 0;
  };
  std::map<std::string, Stream> streams;
  std::int64_t num_edges = -1, indices_written = 0, feature_rows_written = 0;
  std::int64_t indptr_last = 0;  // the last offset appended (append_indptr)
  bool labels_done = false, masks_done = false, finished = false;
  // Appends `rows` rows of width `width` to the streamed array `path` of `total` rows; true
  // when it is complete (its table is then stored).
  template <typename T>
  bool append_stream(const std::string& path, const T* data, std::uint64_t rows, std::uint64_t width,
                     std::uint64_t total, std::uint64_t chunk_rows, Checksum& hash) {
    Stream& s = streams[path];
    if (!s.ds) {
      if (tables.count(path)) throw std::logic_error("DatasetWriter: " + path + " was already written whole");
      std::vector<std::uint64_t> dims{total};
      if (width != 1) dims.push_back(width);
      s.ds = std::make_unique<h5::Dataset>(file.create_dataset<T>(path, dims, chunk_rows));
      s.blocks = std::make_unique<integrity::BlockHasher>(width * sizeof(T),
                                                          width == 1 ? integrity::kBlockRows1d : kFeatureChunkRows);
    }
    if (s.rows + rows > total) throw std::logic_error("DatasetWriter: more rows than " + path + " has");
    if (rows > 0) s.ds->write_rows(s.rows, rows, data);
    hash.update(data, static_cast<std::size_t>(rows * width) * sizeof(T));
    s.blocks->update(data, rows);
    s.rows += rows;
    if (s.rows < total) return false;
    tables[path] = s.blocks->finish();
    s.ds.reset();
    return true;
  }
  // Compressed features: rows wait here until a whole chunk is complete, which is then
  // encoded and stored with one direct chunk write (writing part of a compressed chunk
  // would make HDF5 decode, patch and re-encode it, and leave the old copy's space behind).
  std::vector<float> pending;
  std::uint64_t chunk_rows = 0, chunks_written = 0;
  Impl(const std::string& p, const DatasetMeta& m, const DatasetStorage& s)
      : path(p), tmp(temp_path_for(p)), meta(m), storage(s), file(h5::File::create(tmp)) {}
  // Encodes and stores the pending rows as the next chunk; a short last chunk is padded with
  // zeros to the chunk's shape (HDF5 stores edge chunks whole; readers never see the padding).
  void flush_feature_chunk() {
    if (pending.empty()) return;
    const std::size_t full = static_cast<std::size_t>(chunk_rows * static_cast<std::uint64_t>(meta.num_features));
    pending.resize(full, 0.0f);
    const h5::EncodedChunk c = h5::encode_chunk(pending.data(), full * sizeof(float), sizeof(float),
                                                storage.deflate_level, storage.max_compressed_ratio);
    features_ds->write_chunk(chunks_written * chunk_rows, c.filter_mask, c.bytes.data(), c.bytes.size());
    ++chunks_written;
    pending.clear();
  }
};

DatasetWriter::DatasetWriter(const std::string& path, const DatasetMeta& meta, const DatasetStorage& storage)
    : impl_(std::make_unique<Impl>(path, meta, storage)) {
  if (storage.compress_features && (storage.deflate_level < 1 || storage.deflate_level > 9))
    throw UsageError(path + ": deflate level " + std::to_string(storage.deflate_level) + " outside [1, 9]");
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
  I.tables["/graph/indptr"] = integrity::table_of(indptr, 1, integrity::kBlockRows1d);
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
  I.indices_blocks.update(data, static_cast<std::uint64_t>(count));
  I.indices_written += count;
}

void DatasetWriter::append_feature_rows(const float* data, std::int64_t rows) {
  auto& I = *impl_;
  const std::int64_t f = I.meta.num_features;
  if (f == 0) throw std::logic_error("DatasetWriter: the dataset declares no features");
  const bool compress = I.storage.compress_features;
  // Uncompressed: 4096-row chunks, as files were before compression.
  const std::uint64_t block_rows = compress ? compressed_feature_chunk_rows(f) : kFeatureChunkRows;
  if (!I.feature_blocks)
    I.feature_blocks =
        std::make_unique<integrity::BlockHasher>(static_cast<std::uint64_t>(f) * sizeof(float), block_rows);
  if (!I.features_ds) {
    // Chunks = the checksum blocks: a block read decodes exactly its own chunk.
    I.features_ds = std::make_unique<h5::Dataset>(I.file.create_dataset<float>(
        "/features", {static_cast<std::uint64_t>(I.meta.num_nodes), static_cast<std::uint64_t>(f)}, block_rows,
        compress ? I.storage.deflate_level : 0, compress));
    I.chunk_rows = I.features_ds->chunk_rows();
    I.pending.reserve(static_cast<std::size_t>(I.chunk_rows) * static_cast<std::size_t>(f));
  }
  if (I.feature_rows_written + rows > I.meta.num_nodes)
    throw std::logic_error("DatasetWriter: more feature rows than nodes");
  if (!compress || I.chunk_rows == 0) {
    I.features_ds->write_rows(static_cast<std::uint64_t>(I.feature_rows_written), static_cast<std::uint64_t>(rows),
                              data);
  } else {
    const std::size_t row_floats = static_cast<std::size_t>(f);
    const std::size_t chunk_floats = static_cast<std::size_t>(I.chunk_rows) * row_floats;
    for (std::int64_t r = 0; r < rows;) {
      const std::size_t take = std::min<std::size_t>(static_cast<std::size_t>(rows - r),
                                                     (chunk_floats - I.pending.size()) / row_floats);
      I.pending.insert(I.pending.end(), data + static_cast<std::size_t>(r) * row_floats,
                       data + (static_cast<std::size_t>(r) + take) * row_floats);
      r += static_cast<std::int64_t>(take);
      if (I.pending.size() == chunk_floats) I.flush_feature_chunk();
    }
  }
  I.hash.features.update(data, static_cast<std::size_t>(rows * f) * sizeof(float));
  I.feature_blocks->update(data, static_cast<std::uint64_t>(rows));
  I.feature_rows_written += rows;
}

void DatasetWriter::write_labels(const std::vector<std::int64_t>& labels) {
  auto& I = *impl_;
  if (I.meta.multilabel) throw std::logic_error("DatasetWriter: multi-label datasets use write_label_matrix");
  if (static_cast<std::int64_t>(labels.size()) != I.meta.num_nodes)
    throw UsageError(I.path + ": labels must have one entry per node");
  I.file.write_vector<std::int64_t>("/labels", labels, kIndexChunk);
  I.hash.labels.update(labels);
  I.tables["/labels"] = integrity::table_of(labels, 1, integrity::kBlockRows1d);
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
  I.tables["/labels"] = integrity::table_of(matrix, c, kFeatureChunkRows);
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
  I.tables["/masks/train"] = integrity::table_of(train, 1, integrity::kBlockRows1d);
  I.tables["/masks/val"] = integrity::table_of(val, 1, integrity::kBlockRows1d);
  I.tables["/masks/test"] = integrity::table_of(test, 1, integrity::kBlockRows1d);
  I.masks_done = true;
}

void DatasetWriter::append_indptr(const EdgeIdx* data, std::int64_t count) {
  auto& I = *impl_;
  const auto total = static_cast<std::uint64_t>(I.meta.num_nodes) + 1;
  if (count > 0) I.indptr_last = data[count - 1];
  if (!I.append_stream<std::int64_t>("/graph/indptr", data, static_cast<std::uint64_t>(count), 1, total, kIndexChunk,
                                     I.hash.indptr))
    return;
  // Complete: the last offset is the number of entries; the index array can be created.
  I.num_edges = I.indptr_last;
  I.indices_ds = std::make_unique<h5::Dataset>(I.file.create_dataset<std::int32_t>(
      "/graph/indices", {static_cast<std::uint64_t>(I.num_edges)}, kIndexChunk));
}

void DatasetWriter::append_labels(const std::int64_t* data, std::int64_t rows) {
  auto& I = *impl_;
  if (I.meta.multilabel) throw std::logic_error("DatasetWriter: multi-label datasets use append_label_rows");
  I.labels_done = I.append_stream<std::int64_t>("/labels", data, static_cast<std::uint64_t>(rows), 1,
                                                static_cast<std::uint64_t>(I.meta.num_nodes), kIndexChunk, I.hash.labels);
}

void DatasetWriter::append_label_rows(const std::uint8_t* data, std::int64_t rows) {
  auto& I = *impl_;
  if (!I.meta.multilabel) throw std::logic_error("DatasetWriter: single-label datasets use append_labels");
  I.labels_done = I.append_stream<std::uint8_t>("/labels", data, static_cast<std::uint64_t>(rows),
                                                static_cast<std::uint64_t>(I.meta.num_classes),
                                                static_cast<std::uint64_t>(I.meta.num_nodes), kFeatureChunkRows,
                                                I.hash.labels);
}

void DatasetWriter::append_mask(const std::string& name, const std::uint8_t* data, std::int64_t rows) {
  auto& I = *impl_;
  Checksum* hash = name == "train" ? &I.hash.train : name == "val" ? &I.hash.val : name == "test" ? &I.hash.test : nullptr;
  if (hash == nullptr) throw std::logic_error("DatasetWriter::append_mask: no mask '" + name + "'");
  I.append_stream<std::uint8_t>("/masks/" + name, data, static_cast<std::uint64_t>(rows), 1,
                                static_cast<std::uint64_t>(I.meta.num_nodes), kIndexChunk, *hash);
  I.masks_done = I.tables.count("/masks/train") && I.tables.count("/masks/val") && I.tables.count("/masks/test");
}

void DatasetWriter::write_label_names(const std::vector<std::string>& names) {
  impl_->file.write_strings("/label_names", names);
  impl_->label_names = names;
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
  if (I.features_ds) I.flush_feature_chunk();
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
  I.tables["/graph/indices"] = I.indices_blocks.finish();
  if (I.feature_blocks) I.tables["/features"] = I.feature_blocks->finish();
  DatasetMeta hm = I.meta;
  hm.checksum = sum;
  hm.num_edges = I.num_edges;
  hm.label_names = I.label_names;
  for (const auto& a : integrity_arrays(hm)) integrity::write_table(f, a, I.tables.at(a));
  f.set_attr(integrity::kGroup, "header_checksum", header_digest(hm, I.tables));
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
  std::map<std::string, integrity::Table> tables;  // empty for a file written before them
  // Verified feature blocks by block index, most recently used first (read_features).
  struct FeatureCache {
    std::mutex mu;  // the reader's methods are const and may be called from several threads
    std::uint64_t capacity = kFeatureCacheBytes, bytes = 0;
    std::list<std::pair<std::uint64_t, std::vector<float>>> blocks;
    // Blocks are cached from their second read on; a first read goes through `scratch`.
    // Random reads over many more blocks than fit (ogbn-products: 600 blocks of 1.6 MB, 40
    // fit) rarely hit, and cycling them through 40 cached buffers made each miss 25% slower
    // than one reused buffer that stays in the processor's cache.
    std::unordered_set<std::uint64_t> seen;
    std::vector<float> scratch;
    // Drops least recently used blocks until at most `limit` bytes are cached (keeps one).
    void evict_to(std::uint64_t limit) {
      while (bytes > limit && blocks.size() > 1) {
        bytes -= blocks.back().second.size() * sizeof(float);
        blocks.pop_back();
      }
    }
  };
  mutable FeatureCache cache;
  explicit Impl(const std::string& path) : file(h5::File::open_read(path)) {}

  // Feature block b (rows [lo, hi)) into dst, checked against its checksum.
  void read_verified_block(std::uint64_t b, std::uint64_t lo, std::uint64_t hi, float* dst) const {
    const auto width = static_cast<std::uint64_t>(meta.num_features);
    file.open_dataset("/features").read_rows<float>(lo, hi, dst);
    integrity::check_blocks(file.path(), "/features", tables.at("/features"), b, dst, hi - lo, width * sizeof(float));
  }

  // Rows [r0, r1) of /features from verified whole blocks, kept for the next reads.
  std::vector<float> cached_feature_rows(std::uint64_t r0, std::uint64_t r1) const {
    const integrity::Table& t = tables.at("/features");
    const auto width = static_cast<std::uint64_t>(meta.num_features), n = static_cast<std::uint64_t>(meta.num_nodes);
    std::vector<float> out((r1 - r0) * width);
    std::lock_guard<std::mutex> lock(cache.mu);
    for (std::uint64_t b = r0 / t.block_rows; b * t.block_rows < r1; ++b) {
      const std::uint64_t lo = b * t.block_rows, hi = std::min(n, lo + t.block_rows);
      auto it = std::find_if(cache.blocks.begin(), cache.blocks.end(), [&](const auto& e) { return e.first == b; });
      const std::vector<float>* block = nullptr;
      if (it != cache.blocks.end()) {
        cache.blocks.splice(cache.blocks.begin(), cache.blocks, it);
        block = &cache.blocks.front().second;
      } else if (cache.seen.insert(b).second) {
        cache.scratch.resize((hi - lo) * width);
        read_verified_block(b, lo, hi, cache.scratch.data());
        block = &cache.scratch;
      } else {
        const std::uint64_t need = (hi - lo) * width * sizeof(float);
        std::vector<float> buf;
        // Reuse the memory of the least recently used block when it has to go anyway: a fresh
        // allocation of 1-2 MB per miss costs page faults, which made random single-row reads
        // that rarely hit (ogbn-products shape: 600 blocks, 40 cached) slower than uncached
        // ones.
        if (!cache.blocks.empty() && cache.bytes + need > cache.capacity) {
          buf = std::move(cache.blocks.back().second);
          cache.bytes -= buf.size() * sizeof(float);
          cache.blocks.pop_back();
        }
        buf.resize((hi - lo) * width);
        read_verified_block(b, lo, hi, buf.data());
        cache.blocks.emplace_front(b, std::move(buf));
        cache.bytes += need;
        block = &cache.blocks.front().second;
      }
      const std::uint64_t from = std::max(r0, lo), to = std::min(r1, hi);
      std::copy(block->begin() + static_cast<std::ptrdiff_t>((from - lo) * width),
                block->begin() + static_cast<std::ptrdiff_t>((to - lo) * width),
                out.begin() + static_cast<std::ptrdiff_t>((from - r0) * width));
      cache.evict_to(cache.capacity);
    }
    return out;
  }
  // A file without tables: the whole content checksum, checked after the first read's own
  // checks (so a malformed array is reported as such, not as a checksum mismatch).
  void legacy_check() const {
    if (tables.empty()) verify_legacy_content(file, meta);
  }
  // Rows [r0, r1) of an array, checked block by block against its table.
  template <typename T>
  std::vector<T> rows(const std::string& p, std::int64_t r0, std::int64_t r1) const {
    if (tables.empty()) return file.open_dataset(p).read_rows<T>(static_cast<std::uint64_t>(r0), static_cast<std::uint64_t>(r1));
    return integrity::read_rows_verified<T>(file, p, tables.at(p), static_cast<std::uint64_t>(r0),
                                            static_cast<std::uint64_t>(r1));
  }
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

  if (integrity::has_tables(f)) {
    auto& tables = impl_->tables;
    for (const auto& a : integrity_arrays(m)) {
      const std::uint64_t rows = a == "/graph/indptr" ? n + 1 : a == "/graph/indices" ? static_cast<std::uint64_t>(m.num_edges) : n;
      tables[a] = integrity::read_table(f, a, rows);
    }
    if (!f.has_attr(integrity::kGroup, "header_checksum"))
      throw DataError(path, std::string(integrity::kGroup) + " attribute 'header_checksum'", "is missing");
    if (f.attr_string(integrity::kGroup, "header_checksum") != header_digest(m, tables))
      throw DataError(path, std::string(integrity::kGroup) + " attribute 'header_checksum'",
                      "does not match the file's attributes and checksum tables: the file is corrupt or was "
                      "modified after it was written");
  }
}

void DatasetReader::verify_all() const {
  const auto& I = *impl_;
  if (I.tables.empty()) return I.legacy_check();
  const auto& m = I.meta;
  integrity::verify_array<std::int64_t>(I.file, "/graph/indptr", I.tables.at("/graph/indptr"));
  integrity::verify_array<NodeId>(I.file, "/graph/indices", I.tables.at("/graph/indices"));
  if (m.num_features > 0) integrity::verify_array<float>(I.file, "/features", I.tables.at("/features"));
  if (m.multilabel)
    integrity::verify_array<std::uint8_t>(I.file, "/labels", I.tables.at("/labels"));
  else
    integrity::verify_array<std::int64_t>(I.file, "/labels", I.tables.at("/labels"));
  for (const char* p : {"/masks/train", "/masks/val", "/masks/test"})
    integrity::verify_array<std::uint8_t>(I.file, p, I.tables.at(p));
}

DatasetReader::~DatasetReader() = default;

const DatasetMeta& DatasetReader::meta() const { return impl_->meta; }

std::vector<EdgeIdx> DatasetReader::read_indptr(std::int64_t row_begin, std::int64_t row_end) const {
  auto v = impl_->rows<std::int64_t>("/graph/indptr", row_begin, row_end + 1);
  impl_->legacy_check();
  return v;
}

std::vector<NodeId> DatasetReader::read_indices(EdgeIdx begin, EdgeIdx end) const {
  auto v = indices_unchecked(begin, end);
  impl_->legacy_check();
  return v;
}

std::vector<NodeId> DatasetReader::indices_unchecked(EdgeIdx begin, EdgeIdx end) const {
  if (!impl_->tables.empty()) return impl_->rows<NodeId>("/graph/indices", begin, end);
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
  auto indptr = impl_->rows<std::int64_t>("/graph/indptr", row_begin, row_end + 1);
  const EdgeIdx base = indptr.front();
  for (std::size_t i = 1; i < indptr.size(); ++i)
    if (indptr[i] < indptr[i - 1])
      throw DataError(m.file, "/graph/indptr",
                      "not monotone: entry " + std::to_string(row_begin + static_cast<std::int64_t>(i)) +
                          " is smaller than the one before it");
  if (base < 0 || indptr.back() > m.num_edges)
    throw DataError(m.file, "/graph/indptr", "offsets outside [0, " + std::to_string(m.num_edges) + "]");
  auto indices = indices_unchecked(base, indptr.back());
  for (auto& x : indptr) x -= base;
  for (std::size_t i = 0; i < indices.size(); ++i)
    if (indices[i] < 0 || indices[i] >= m.num_nodes)
      throw DataError(m.file, "/graph/indices",
                      "entry " + std::to_string(base + static_cast<EdgeIdx>(i)) + " = " + std::to_string(indices[i]) +
                          " is out of range [0, " + std::to_string(m.num_nodes) + ")");
  impl_->legacy_check();
  return CsrGraph(std::move(indptr), std::move(indices), m.num_nodes);
}

CsrGraph DatasetReader::read_graph() const {
  const auto& m = impl_->meta;
  auto indptr = impl_->rows<std::int64_t>("/graph/indptr", 0, m.num_nodes + 1);
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
  const auto& I = *impl_;
  std::uint64_t cache_capacity = 0;
  {
    std::lock_guard<std::mutex> lock(I.cache.mu);
    cache_capacity = I.cache.capacity;
  }
  // Two blocks: a single row, or a short range across one block boundary.
  const bool small = !I.tables.empty() && row_begin >= 0 && row_begin <= row_end && row_end <= m.num_nodes &&
                     static_cast<std::uint64_t>(row_end - row_begin) <= I.tables.at("/features").block_rows;
  auto x = small && cache_capacity > 0 && row_begin < row_end
               ? I.cached_feature_rows(static_cast<std::uint64_t>(row_begin), static_cast<std::uint64_t>(row_end))
               : I.rows<float>("/features", row_begin, row_end);
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i])) {
      const std::int64_t row = row_begin + static_cast<std::int64_t>(i) / m.num_features;
      const std::int64_t col = static_cast<std::int64_t>(i) % m.num_features;
      throw DataError(m.file, "/features",
                      "non-finite value (" + std::string(std::isnan(x[i]) ? "NaN" : "Inf") + ") at row " +
                          std::to_string(row) + ", column " + std::to_string(col));
    }
  impl_->legacy_check();
  return x;
}

void DatasetReader::set_feature_cache_bytes(std::uint64_t bytes) {
  std::lock_guard<std::mutex> lock(impl_->cache.mu);
  impl_->cache.capacity = bytes;
  if (bytes == 0) {
    impl_->cache.blocks.clear();
    impl_->cache.bytes = 0;
    impl_->cache.seen.clear();
    impl_->cache.scratch = {};
  }
  impl_->cache.evict_to(bytes);
}

std::vector<std::int64_t> DatasetReader::read_labels(std::int64_t row_begin, std::int64_t row_end) const {
  const auto& m = impl_->meta;
  if (m.multilabel) throw std::logic_error("read_labels on a multi-label dataset");
  auto y = impl_->rows<std::int64_t>("/labels", row_begin, row_end);
  for (std::size_t i = 0; i < y.size(); ++i)
    if (y[i] < -1 || y[i] >= m.num_classes)
      throw DataError(m.file, "/labels",
                      "label " + std::to_string(y[i]) + " of node " + std::to_string(row_begin + static_cast<std::int64_t>(i)) +
                          " is out of range [0, " + std::to_string(m.num_classes) + ") (-1 = unlabelled)");
  impl_->legacy_check();
  return y;
}

std::vector<std::uint8_t> DatasetReader::read_label_matrix(std::int64_t row_begin, std::int64_t row_end) const {
  const auto& m = impl_->meta;
  if (!m.multilabel) throw std::logic_error("read_label_matrix on a single-label dataset");
  auto y = impl_->rows<std::uint8_t>("/labels", row_begin, row_end);
  for (std::size_t i = 0; i < y.size(); ++i)
    if (y[i] > 1)
      throw DataError(m.file, "/labels",
                      "multi-hot value " + std::to_string(y[i]) + " at node " +
                          std::to_string(row_begin + static_cast<std::int64_t>(i) / m.num_classes) + " must be 0 or 1");
  impl_->legacy_check();
  return y;
}

std::vector<std::uint8_t> DatasetReader::read_mask(const std::string& name, std::int64_t row_begin,
                                                   std::int64_t row_end) const {
  const std::string p = "/masks/" + name;
  auto v = impl_->rows<std::uint8_t>(p, row_begin, row_end);
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] > 1)
      throw DataError(impl_->meta.file, p,
                      "value " + std::to_string(v[i]) + " at node " + std::to_string(row_begin + static_cast<std::int64_t>(i)) +
                          " must be 0 or 1");
  impl_->legacy_check();
  return v;
}

}  // namespace dpgnn::graph
