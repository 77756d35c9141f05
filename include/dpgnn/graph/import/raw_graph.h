// RawGraph: what every importer produces, and the one function that turns it into a
// dpgnn dataset file.
//
// Every format (Planetoid, npz, MUSAE, OGB, GraphSAINT, generic CSV) is first read into a
// RawGraph that keeps the edges exactly as stored (duplicates, self-loops, one direction
// only). `finalize` is the single canonical path to a graph::Dataset: it symmetrises
// (unless the graph is kept directed), drops self-loops and duplicate edges with
// graph::build_csr and prints what it dropped, draws a split when the source has none,
// validates (graph::validate_content) and hands the result to graph::write_dataset.
// Nothing is changed silently: every change is logged at info level.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dpgnn/graph/dataset.h"
#include "dpgnn/graph/import/split.h"

namespace dpgnn::graph::import {

struct RawGraph {
  std::string name;
  std::string source;  // free text: the files it was read from
  Setting setting = Setting::transductive;
  std::int64_t num_nodes = 0;
  std::vector<std::int64_t> src, dst;  // [E] edge records as stored
  std::int64_t num_features = 0;       // F (0: no features)
  std::vector<float> features;         // [N, F] row-major
  bool multilabel = false;
  std::int64_t num_classes = 0;
  std::vector<std::int64_t> labels;         // [N] class ids, -1 = unlabelled (single-label)
  std::vector<std::uint8_t> label_matrix;   // [N, C] multi-hot (multi-label)
  std::vector<std::string> label_names;     // [C] or empty: original label of each class id
  bool has_split = false;                   // masks below come from the source
  std::vector<std::uint8_t> train_mask, val_mask, test_mask;  // [N] when has_split
};

struct FinalizeOptions {
  bool keep_directed = false;  // store the edges as given, orientation=directed
  SplitOptions split;          // used only when the RawGraph has no split
};

// Checks the shapes of `raw` (DataError naming `context` on a mismatch), builds the CSR,
// draws a split if needed, and validates. Moves the feature matrix out of `raw`.
Dataset finalize(RawGraph&& raw, const FinalizeOptions& options, const std::string& context);

// finalize + graph::write_dataset. Refuses to overwrite an existing `out` unless `force`
// (UsageError naming the file). Returns the content checksum.
std::string write_imported(RawGraph&& raw, const FinalizeOptions& options, const std::string& out,
                           bool force);

// UsageError when `out` exists and `force` is false. Called before any work is done.
void check_output_path(const std::string& out, bool force);

}  // namespace dpgnn::graph::import
