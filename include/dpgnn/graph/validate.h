// Full validation of a dataset file and the statistics `dpgnn info` prints.
//
// Validation is strict: each problem is a DataError naming the file, the dataset path
// inside it and what is wrong (non-monotone indptr, out-of-range indices, asymmetric
// adjacency declared undirected, NaN/Inf features, labels out of range, an empty training
// split, overlapping splits, shape mismatches, a truncated or non-HDF5 file, a content
// checksum that does not match). Self-loops and duplicate edges are not errors: they are
// counted here and removed by `dpgnn import`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "dpgnn/graph/dataset.h"

namespace dpgnn::graph {

struct DatasetStats {
  std::int64_t nodes = 0;
  std::int64_t edges = 0;             // CSR entries
  std::int64_t undirected_edges = 0;  // unique unordered pairs {u, v}, u != v
  std::int64_t self_loops = 0;        // CSR entries (v, v)
  std::int64_t duplicate_edges = 0;   // CSR entries repeating an earlier (u, v)
  std::int64_t isolated = 0;          // nodes without a neighbour other than themselves
  std::int64_t max_degree = 0;        // out-degree
  std::int64_t train = 0, val = 0, test = 0;
  std::int64_t labelled = 0;
};

// Statistics of an in-memory graph and its masks.
DatasetStats compute_stats(const CsrGraph& g, const std::vector<std::uint8_t>& train,
                           const std::vector<std::uint8_t>& val, const std::vector<std::uint8_t>& test);

// The majority-class baseline: the class most frequent among the training nodes (the
// smallest index on a tie) and the accuracy of predicting it for every validation and test
// node (0 for an empty split). Single-label datasets only (nullopt for multi-label).
struct MajorityBaseline {
  std::int64_t label = 0;
  double train_share = 0, val_accuracy = 0, test_accuracy = 0;
};
std::optional<MajorityBaseline> majority_baseline(const Dataset& d);

// Checks the in-memory content (everything but the file's own structure). `file` names
// the source in error messages.
void validate_content(const Dataset& d, const std::string& file);

// Reads the whole file, checks every invariant (including the checksum) and returns the
// dataset together with its statistics.
Dataset load_and_validate(const std::string& path, DatasetStats* stats);

}  // namespace dpgnn::graph
