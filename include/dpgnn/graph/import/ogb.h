// OGB node-property-prediction raw files (Hu et al., "Open Graph Benchmark", NeurIPS
// 2020), as unzipped from the dataset archive (e.g. ogbn-arxiv/, ogbn-products/):
//   raw/edge.csv.gz            "src,dst" per line, no header
//   raw/num-node-list.csv.gz   one line: N (optional: else max id + 1 over edges/labels)
//   raw/node-feat.csv.gz       N lines of F comma-separated floats (optional)
//   raw/node-label.csv.gz      N lines: one class id (NaN = unlabelled), or C 0/1 columns
//                              (multi-label, e.g. ogbn-proteins)
//   split/<name>/{train,valid,test}.csv.gz   one node id per line
// Uncompressed .csv files are accepted in place of the .csv.gz ones.
#pragma once

#include <string>

#include "dpgnn/graph/import/raw_graph.h"

namespace dpgnn::graph::import {

struct OgbOptions {
  std::string dir;
  std::string split_name;  // empty: the only subfolder of split/
};

RawGraph read_ogb(const OgbOptions& options);

}  // namespace dpgnn::graph::import
