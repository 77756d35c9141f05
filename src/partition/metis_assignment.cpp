// METIS k-way assignment on the symmetrised structure with DistDGL-style two-constraint
// balance (training nodes, edges). See include/dpgnn/partition/assignment.h.
//
// METIS wants an undirected graph without self-loops or repeated entries, in 32-bit idx_t
// arrays. Undirected datasets (already symmetric) are copied row by row with loops and
// repeats dropped, so the adjacency costs one E-sized idx_t array; directed ones go through
// graph::rebuild_csr (symmetrise + clean) first. The partition is deterministic for a seed:
// METIS_OPTION_SEED fixes its random tie-breaking and the code runs single-threaded.
#include <metis.h>

#include <algorithm>
#include <type_traits>

#include "dpgnn/graph/graph_builder.h"
#include "dpgnn/partition/assignment.h"
#include "dpgnn/util/error.h"

namespace dpgnn::partition {

static_assert(std::is_same<idx_t, std::int32_t>::value,
              "dpgnn expects METIS built with a 32-bit idx_t (Debian's libmetis-dev); "
              "kMetisIdxMax and the adjacency copies below assume it");

namespace {

const char* metis_status_name(int status) {
  switch (status) {
    case METIS_ERROR_INPUT: return "METIS_ERROR_INPUT (invalid input)";
    case METIS_ERROR_MEMORY: return "METIS_ERROR_MEMORY (out of memory)";
    case METIS_ERROR: return "METIS_ERROR (other error)";
    default: return "unknown METIS status";
  }
}

// The symmetrised, loop-free, duplicate-free adjacency in METIS's arrays.
struct MetisGraph {
  std::vector<idx_t> xadj, adjncy;
};

MetisGraph metis_graph(const graph::CsrGraph& g, const std::string& context) {
  const std::int64_t n = g.num_nodes();
  check_metis_limits(n, 0, context);
  MetisGraph out;
  if (g.rows_sorted() && g.is_symmetric()) {
    // Count first so that the limit is checked before anything E-sized is allocated.
    std::int64_t entries = 0;
    for (std::int64_t u = 0; u < n; ++u) {
      auto r = g.out_neigh(u);
      for (std::int64_t i = 0; i < r.size(); ++i)
        if (r[i] != u && (i == 0 || r[i] != r[i - 1])) ++entries;
    }
    check_metis_limits(n, entries, context);
    out.xadj.resize(static_cast<std::size_t>(n) + 1);
    out.adjncy.resize(static_cast<std::size_t>(entries));
    idx_t pos = 0;
    for (std::int64_t u = 0; u < n; ++u) {
      out.xadj[u] = pos;
      auto r = g.out_neigh(u);
      for (std::int64_t i = 0; i < r.size(); ++i)
        if (r[i] != u && (i == 0 || r[i] != r[i - 1])) out.adjncy[pos++] = r[i];
    }
    out.xadj[n] = pos;
    return out;
  }
  // Directed (or unsorted) input: the symmetrised graph has at most twice the entries.
  check_metis_limits(n, 2 * g.num_edges(), context);
  graph::BuildOptions opt;
  opt.symmetrize = true;
  opt.remove_self_loops = true;
  opt.remove_duplicates = true;
  const graph::CsrGraph s = graph::rebuild_csr(g, opt, nullptr);
  out.xadj.assign(s.indptr().begin(), s.indptr().end());  // fits: checked above
  out.adjncy.assign(s.indices().begin(), s.indices().end());
  return out;
}

}  // namespace

std::vector<std::int32_t> balance_weights(const graph::CsrGraph& g, const std::vector<std::uint8_t>& train_mask) {
  const std::int64_t n = g.num_nodes();
  if (static_cast<std::int64_t>(train_mask.size()) != n)
    throw std::invalid_argument("balance_weights: train mask has " + std::to_string(train_mask.size()) +
                                " entries for " + std::to_string(n) + " nodes");
  std::vector<std::int32_t> w(static_cast<std::size_t>(2 * n));
  std::int64_t train_total = 0, edge_total = 0;
  for (std::int64_t v = 0; v < n; ++v) {
    w[2 * v] = train_mask[v] != 0 ? 1 : 0;
    // A row longer than idx_t cannot occur: the adjacency length is checked against it.
    w[2 * v + 1] = static_cast<std::int32_t>(std::min<std::int64_t>(g.out_degree(v), kMetisIdxMax));
    train_total += w[2 * v];
    edge_total += w[2 * v + 1];
  }
  // METIS divides by each constraint's total; a zero total means nothing to balance, so
  // fall back to node counts for it.
  if (train_total == 0)
    for (std::int64_t v = 0; v < n; ++v) w[2 * v] = 1;
  if (edge_total == 0)
    for (std::int64_t v = 0; v < n; ++v) w[2 * v + 1] = 1;
  return w;
}

std::vector<PartId> metis_assignment(const graph::CsrGraph& g, const std::vector<std::uint8_t>& train_mask,
                                     const MetisOptions& options, const std::string& context) {
  const std::int64_t n = g.num_nodes();
  check_num_parts(options.num_parts, n, context);
  if (!(options.imbalance >= 0.001 && options.imbalance <= 10.0))
    throw UsageError(context + ": --imbalance " + std::to_string(options.imbalance) +
                     " must lie in [0.001, 10] (METIS's ufactor is in units of 0.001)");
  std::vector<PartId> part(static_cast<std::size_t>(n), 0);
  if (options.num_parts == 1) return part;  // METIS 5.1 is not meant to be called with nparts = 1

  MetisGraph mg = metis_graph(g, context);
  std::vector<idx_t> vwgt = balance_weights(g, train_mask);
  // Weight sums must also fit idx_t (edges: the sum of row lengths).
  std::int64_t edge_sum = 0;
  for (std::int64_t v = 0; v < n; ++v) edge_sum += vwgt[2 * v + 1];
  check_metis_limits(n, edge_sum, context + " (sum of edge balance weights)");

  idx_t nvtxs = static_cast<idx_t>(n);
  idx_t ncon = 2;
  idx_t nparts = options.num_parts;
  idx_t objval = 0;
  idx_t opts[METIS_NOPTIONS];
  METIS_SetDefaultOptions(opts);
  opts[METIS_OPTION_OBJTYPE] = METIS_OBJTYPE_CUT;
  opts[METIS_OPTION_NUMBERING] = 0;
  opts[METIS_OPTION_SEED] = static_cast<idx_t>(options.seed % (static_cast<std::uint64_t>(kMetisIdxMax) + 1));
  // Allowed imbalance per constraint: max part weight <= (1 + ufactor/1000) * mean.
  opts[METIS_OPTION_UFACTOR] = static_cast<idx_t>(options.imbalance * 1000.0 + 0.5);
  std::vector<idx_t> out(static_cast<std::size_t>(n));
  const int status = METIS_PartGraphKway(&nvtxs, &ncon, mg.xadj.data(), mg.adjncy.data(), vwgt.data(),
                                         /*vsize=*/nullptr, /*adjwgt=*/nullptr, &nparts,
                                         /*tpwgts=*/nullptr, /*ubvec=*/nullptr, opts, &objval, out.data());
  if (status != METIS_OK)
    throw IoError(context + ": METIS_PartGraphKway failed with status " + std::to_string(status) + " = " +
                  metis_status_name(status) + " (" + std::to_string(n) + " nodes, " +
                  std::to_string(mg.adjncy.size()) + " adjacency entries, " + std::to_string(nparts) + " parts)");
  for (std::int64_t v = 0; v < n; ++v) {
    if (out[v] < 0 || out[v] >= nparts)
      throw IoError(context + ": METIS returned part " + std::to_string(out[v]) + " for node " + std::to_string(v) +
                    ", outside [0, " + std::to_string(nparts) + ")");
    part[v] = out[v];
  }
  return part;
}

}  // namespace dpgnn::partition
