// Edge-list CSV reading (see edge_list.h).
#include "edge_list.h"

#include <algorithm>

#include "dpgnn/graph/import/csv.h"
#include "dpgnn/util/error.h"

namespace dpgnn::graph::import {

std::int64_t parse_node_id(const std::string& field, const std::string& where, const std::string& column) {
  std::int64_t v = 0;
  if (!parse_int64(field, &v))
    throw DataError(where, "", "column '" + column + "': '" + field + "' is not an integer node id");
  if (v < 0) throw DataError(where, "", "column '" + column + "': negative node id " + field);
  return v;
}

EdgeList read_edge_csv(const std::string& path, bool has_header, const std::string& src_column,
                       const std::string& dst_column, char delimiter) {
  CsvReader csv(path, delimiter);
  std::vector<std::string> f;
  int si = 0, di = 1;
  std::size_t width = 0;
  std::string src_name = "1", dst_name = "2";
  if (has_header) {
    if (!csv.next(f)) throw DataError(path, "", "empty file (expected a header line and edges)");
    width = f.size();
    if (!src_column.empty()) si = find_column(f, src_column);
    if (!dst_column.empty()) di = find_column(f, dst_column);
    if (si < 0) throw DataError(path, "", "no column '" + src_column + "' in the header (columns: " + join_columns(f) + ")");
    if (di < 0) throw DataError(path, "", "no column '" + dst_column + "' in the header (columns: " + join_columns(f) + ")");
    if (width < 2) throw DataError(csv.where(), "", "header has " + std::to_string(width) + " column, expected at least 2 (source, target)");
    src_name = f[si];
    dst_name = f[di];
  }
  EdgeList e;
  while (csv.next(f)) {
    if (f.size() == 1 && f[0].empty()) continue;  // blank line
    if (width == 0) {
      width = f.size();
      if (width < 2) throw DataError(csv.where(), "", "expected at least 2 columns (source, target), found 1");
    }
    if (f.size() != width)
      throw DataError(csv.where(), "", "expected " + std::to_string(width) + " fields, found " + std::to_string(f.size()));
    std::int64_t u = 0, v = 0;
    // Fast path; the error message (with its string building) only when a field is bad.
    if (!parse_int64(f[si], &u) || u < 0) parse_node_id(f[si], csv.where(), src_name);
    if (!parse_int64(f[di], &v) || v < 0) parse_node_id(f[di], csv.where(), dst_name);
    e.src.push_back(u);
    e.dst.push_back(v);
    e.max_id = std::max(e.max_id, std::max(u, v));
  }
  return e;
}

}  // namespace dpgnn::graph::import
