#include "dpgnn/graph/graph_builder.h"

#include <algorithm>

#include "dpgnn/util/error.h"

namespace dpgnn::graph {
namespace {

// Counting sort of (src -> dst) records into rows, then per-row sort and clean-up.
template <typename ForEachEdge>
CsrGraph build(std::int64_t n, std::int64_t num_records, ForEachEdge for_each_edge,
               const BuildOptions& opt, BuildReport* report) {
  BuildReport rep;
  rep.input_edges = num_records;
  std::vector<EdgeIdx> indptr(n + 1, 0);
  for_each_edge([&](std::int64_t u, std::int64_t v) {
    if (u == v && opt.remove_self_loops) return;
    ++indptr[u + 1];
    if (opt.symmetrize && u != v) ++indptr[v + 1];
  });
  for (std::int64_t i = 0; i < n; ++i) indptr[i + 1] += indptr[i];
  std::vector<NodeId> indices(indptr[n]);
  std::vector<EdgeIdx> fill(indptr.begin(), indptr.end() - 1);
  for_each_edge([&](std::int64_t u, std::int64_t v) {
    if (u == v) {
      if (opt.remove_self_loops) {
        ++rep.self_loops_removed;
        return;
      }
      indices[fill[u]++] = static_cast<NodeId>(v);
      return;
    }
    indices[fill[u]++] = static_cast<NodeId>(v);
    if (opt.symmetrize) indices[fill[v]++] = static_cast<NodeId>(u);
  });
  // Sort each row; drop repeats in place.
  EdgeIdx out = 0;
  for (std::int64_t v = 0; v < n; ++v) {
    const EdgeIdx b = indptr[v], e = indptr[v + 1];
    std::sort(indices.begin() + b, indices.begin() + e);
    indptr[v] = out;
    for (EdgeIdx i = b; i < e; ++i) {
      if (opt.remove_duplicates && i > b && indices[i] == indices[i - 1]) {
        ++rep.duplicates_removed;
        continue;
      }
      indices[out++] = indices[i];
    }
  }
  indptr[n] = out;
  indices.resize(out);
  indices.shrink_to_fit();
  rep.output_entries = out;
  if (report) *report = rep;
  return CsrGraph(std::move(indptr), std::move(indices));
}

}  // namespace

CsrGraph build_csr(std::int64_t num_nodes, const std::vector<std::int64_t>& src,
                   const std::vector<std::int64_t>& dst, const BuildOptions& options,
                   BuildReport* report, const std::string& context) {
  if (num_nodes < 0 || num_nodes > kMaxNodes)
    throw DataError(context, "", "number of nodes " + std::to_string(num_nodes) +
                                     " outside [0, 2^31-1] (dpgnn's node id limit)");
  if (src.size() != dst.size())
    throw DataError(context, "", "edge source and target lists differ in length (" +
                                     std::to_string(src.size()) + " vs " + std::to_string(dst.size()) + ")");
  for (std::size_t i = 0; i < src.size(); ++i) {
    if (src[i] < 0 || src[i] >= num_nodes || dst[i] < 0 || dst[i] >= num_nodes)
      throw DataError(context, "edge " + std::to_string(i),
                      "node id (" + std::to_string(src[i]) + ", " + std::to_string(dst[i]) +
                          ") out of range [0, " + std::to_string(num_nodes) + ")");
  }
  return build(
      num_nodes, static_cast<std::int64_t>(src.size()),
      [&](auto&& f) {
        for (std::size_t i = 0; i < src.size(); ++i) f(src[i], dst[i]);
      },
      options, report);
}

CsrGraph rebuild_csr(const CsrGraph& g, const BuildOptions& options, BuildReport* report) {
  return build(
      g.num_nodes(), g.num_edges(),
      [&](auto&& f) {
        for (std::int64_t u = 0; u < g.num_nodes(); ++u)
          for (NodeId v : g.out_neigh(u)) f(u, v);
      },
      options, report);
}

}  // namespace dpgnn::graph
