// The dpgnn dataset file (one HDF5 file per dataset; docs/data-format.md is the spec).
//
//   /                 attributes: format="dpgnn-dataset", format_version=1, name, source,
//                     num_nodes, num_features, num_classes, multilabel (0|1),
//                     setting ("transductive"|"inductive"), orientation ("undirected"|
//                     "directed"), checksum (XXH3-128 of the content, hex)
//   /graph/indptr     int64 [N+1]
//   /graph/indices    int32 or int64 [E]           (CSR, row v = out-neighbours of v)
//   /features         float32 [N, F], chunked by rows (absent when F = 0); written with
//                     the filters [shuffle, deflate], each chunk stored compressed only
//                     when that at least halves it (older files: no filters)
//   /labels           int64 [N] class ids, -1 = unlabelled        (single-label)
//                     uint8 [N, C] multi-hot                       (multi-label)
//   /masks/train, /masks/val, /masks/test   uint8 [N] (0|1)
//   /label_names      strings [C]   (optional: what each class id means)
//
// Readers read row ranges by hyperslab (a rank reads only its rows, never the whole
// feature matrix). `validate_dataset` reads everything and checks every invariant; the
// trainer checks what it reads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dpgnn/graph/csr_graph.h"

namespace dpgnn::graph {

constexpr const char* kDatasetFormat = "dpgnn-dataset";
constexpr std::int64_t kDatasetFormatVersion = 1;
constexpr std::uint64_t kFeatureChunkRows = 4096;
// The feature block cache of a DatasetReader (below).
constexpr std::uint64_t kFeatureCacheBytes = std::uint64_t{64} << 20;

// How the writers store /features (docs/data-format.md, "Feature storage").
struct DatasetStorage {
  // false: no filters, the layout of files written before compression (tests, comparisons).
  bool compress_features = true;
  // zlib level: 1 decodes fastest and, on the sparse bag-of-words features of the shared
  // datasets, is within a factor 2 of level 9's size (both about 1% of the raw bytes).
  int deflate_level = 1;
  // A chunk is stored compressed only when that makes it at most this fraction of its raw
  // size; otherwise raw (dense real-valued features shrink by 10-15% at most, and decoding
  // them would cost more read time than the saved bytes). 1.0 compresses every chunk.
  double max_compressed_ratio = 0.5;
};

enum class Setting { transductive, inductive };
const char* to_string(Setting s);

struct DatasetMeta {
  std::string file;  // where it was read from
  std::string name;
  std::string source;  // free text: where the data came from
  std::string checksum;
  Setting setting = Setting::transductive;
  bool directed = false;
  bool multilabel = false;
  std::int64_t num_nodes = 0;
  std::int64_t num_edges = 0;  // CSR entries
  std::int64_t num_features = 0;
  std::int64_t num_classes = 0;
  std::vector<std::string> label_names;  // empty when the file has none
};

// A whole dataset in memory (import, synth of small graphs, tests).
struct Dataset {
  DatasetMeta meta;
  CsrGraph graph;
  std::vector<float> features;              // [N, F] row-major
  std::vector<std::int64_t> labels;         // [N] (single-label)
  std::vector<std::uint8_t> label_matrix;   // [N, C] (multi-label)
  std::vector<std::uint8_t> train_mask, val_mask, test_mask;  // [N]
};

// Writes `d` to `path` (via a temporary file renamed at the end) and returns the content
// checksum it stored. Fills meta.num_nodes/num_edges from the arrays; checks shapes first.
std::string write_dataset(const Dataset& d, const std::string& path, const DatasetStorage& storage = {});

// Reads and fully validates a dataset file.
Dataset read_dataset(const std::string& path);

// Streaming writer for graphs too large to hold twice (synth at ogbn-products scale).
// Order: construct, write the graph (indptr then indices, each in row order, any chunking),
// features (rows in order), labels, masks, then finish(). The checksum equals the one
// write_dataset computes for the same content.
class DatasetWriter {
 public:
  DatasetWriter(const std::string& path, const DatasetMeta& meta, const DatasetStorage& storage = {});
  ~DatasetWriter();
  void write_indptr(const std::vector<EdgeIdx>& indptr);  // all N+1 offsets at once
  void append_indices(const NodeId* data, std::int64_t count);
  void append_feature_rows(const float* data, std::int64_t rows);
  void write_labels(const std::vector<std::int64_t>& labels);
  void write_label_matrix(const std::vector<std::uint8_t>& matrix);
  void write_masks(const std::vector<std::uint8_t>& train, const std::vector<std::uint8_t>& val,
                   const std::vector<std::uint8_t>& test);
  void write_label_names(const std::vector<std::string>& names);
  // Row-streaming variants, for writers that never hold a whole per-node array (the
  // distributed partition writer receives rows from other ranks in pieces). Rows go in
  // order; indptr must be complete (all N+1 offsets) before the first index. Do not mix
  // them with the whole-array call of the same field.
  void append_indptr(const EdgeIdx* data, std::int64_t count);
  void append_labels(const std::int64_t* data, std::int64_t rows);        // single-label
  void append_label_rows(const std::uint8_t* data, std::int64_t rows);    // multi-label, [rows, C]
  void append_mask(const std::string& name, const std::uint8_t* data, std::int64_t rows);  // train|val|test
  // Checks that every part was written completely, stores the checksum, renames the
  // temporary file to `path` and returns the checksum.
  std::string finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Row-range reader: a rank reads only the rows it owns.
class DatasetReader {
 public:
  // Opens the file and checks the attributes, dataset shapes and the digest over them and
  // the checksum tables (cheap). Every read is checked against the tables block by block;
  // content checks (index ranges, NaN) are done on what is read. A file without tables (from
  // an older dpgnn) has its whole content checksum verified instead, once per process, after
  // the first read's own checks.
  explicit DatasetReader(const std::string& path);
  ~DatasetReader();
  const DatasetMeta& meta() const;
  // Reads every array and checks it against its checksum table (DataError naming the file,
  // the array and the rows on a mismatch). Opening already checks the attributes and the
  // tables, and every read_* checks the blocks it reads; this is for commands that use only
  // part of the file but answer for all of it (`dpgnn sample`).
  void verify_all() const;
  std::vector<EdgeIdx> read_indptr(std::int64_t row_begin, std::int64_t row_end) const;  // rows+1 offsets
  std::vector<NodeId> read_indices(EdgeIdx begin, EdgeIdx end) const;
  // The CSR rows [row_begin, row_end) with their global neighbour ids (indptr rebased to 0).
  CsrGraph read_rows(std::int64_t row_begin, std::int64_t row_end) const;
  CsrGraph read_graph() const;
  // Reads of at most two checksum blocks (single rows: DPAR's aggregation) go through a
  // cache of verified blocks (least recently used first out, kFeatureCacheBytes by
  // default), since every read decodes and checks whole blocks (a compressed chunk cannot be
  // read in part); larger reads (a rank's shard) go straight to the file.
  std::vector<float> read_features(std::int64_t row_begin, std::int64_t row_end) const;
  // The cache's capacity in bytes (0 = no cache). The last block read always stays, so a
  // block larger than the capacity is still reused by the next read of the same block.
  void set_feature_cache_bytes(std::uint64_t bytes);
  std::vector<std::int64_t> read_labels(std::int64_t row_begin, std::int64_t row_end) const;
  std::vector<std::uint8_t> read_label_matrix(std::int64_t row_begin, std::int64_t row_end) const;
  // name is "train", "val" or "test".
  std::vector<std::uint8_t> read_mask(const std::string& name, std::int64_t row_begin,
                                      std::int64_t row_end) const;

 private:
  std::vector<NodeId> indices_unchecked(EdgeIdx begin, EdgeIdx end) const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Content checksum of an in-memory dataset, as stored by the writers.
std::string content_checksum(const Dataset& d);

}  // namespace dpgnn::graph
