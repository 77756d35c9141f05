// Reading an edge list from CSV (plain or gzip), shared by the MUSAE, OGB and generic CSV
// importers. Internal to src/graph/import.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dpgnn::graph::import {

struct EdgeList {
  std::vector<std::int64_t> src, dst;  // [E] as stored
  std::int64_t max_id = -1;
};

// With a header: the columns named src_column / dst_column (empty: the first / second
// column). Without: the first two columns. Every record must have as many fields as the
// first one; ids are non-negative integers. Blank lines are skipped. DataError naming the
// file and line otherwise.
EdgeList read_edge_csv(const std::string& path, bool has_header, const std::string& src_column,
                       const std::string& dst_column, char delimiter = ',');

// The non-negative integer in `field`, or a DataError "FILE, line N: column 'c': ...".
std::int64_t parse_node_id(const std::string& field, const std::string& where, const std::string& column);

}  // namespace dpgnn::graph::import
