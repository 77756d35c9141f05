// MUSAE / FEATHER social graphs (Rozemberczki, Allen & Sarkar, "Multi-scale attributed
// node embedding", J. Complex Networks 2021; Rozemberczki & Sarkar, FEATHER, CIKM 2020):
// an edge CSV (header + two integer columns, each undirected edge once), a target CSV
// with one row per node (RFC 4180 quoting) and an optional JSON object
// {"<node id>": [feature ids ...]} whose lists become binary indicator features.
#pragma once

#include <cstdint>
#include <string>

#include "dpgnn/graph/import/raw_graph.h"

namespace dpgnn::graph::import {

struct MusaeOptions {
  std::string edges;     // *_edges.csv
  std::string target;    // *_target.csv
  std::string features;  // *.json, empty: no features (F = 0, with a warning)
  std::string id_column = "id";
  std::string label_column;
  std::int64_t num_features = -1;  // feature id space; -1: max id + 1
};

// Labels: all True/False -> False=0, True=1; all non-negative integers -> used as they
// are; otherwise strings -> class ids in sorted (byte) order. The mapping goes to
// label_names. Duplicate target rows for one id are dropped with a printed count; two rows
// with different labels for one id are a DataError.
RawGraph read_musae(const MusaeOptions& options);

}  // namespace dpgnn::graph::import
