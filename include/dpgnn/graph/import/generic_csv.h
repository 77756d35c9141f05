// The generic CSV import (docs/importing.md, "csv"): an edge list plus optional feature,
// label and split files, every file with a header line, node ids 0..N-1.
//   edges:    columns src,dst (names configurable; default the first two columns)
//   features: an id column, then one column per feature (float)
//   labels:   an id column and a label column (integers used as they are; anything else
//             mapped to class ids in sorted order, as for MUSAE)
//   split:    an id column and a split column with values train|val|test
#pragma once

#include <cstdint>
#include <string>

#include "dpgnn/graph/import/raw_graph.h"

namespace dpgnn::graph::import {

struct GenericCsvOptions {
  std::string edges, features, labels, split;  // all but edges optional
  std::string src_column, dst_column;          // empty: first / second column
  std::string id_column = "id";                // in features, labels and split
  std::string label_column = "label";
  std::string split_column = "split";
  std::int64_t num_nodes = -1;                 // -1: max id + 1 over all files
  char delimiter = ',';
};

RawGraph read_generic_csv(const GenericCsvOptions& options);

}  // namespace dpgnn::graph::import
