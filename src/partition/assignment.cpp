// Method names, limits, the structure-independent random assignment and partition quality
// (edge cut, per-constraint balance). See include/dpgnn/partition/assignment.h.
#include <algorithm>
#include <numeric>

#include "dpgnn/partition/assignment.h"
#include "dpgnn/util/error.h"
#include "dpgnn/util/rng.h"

namespace dpgnn::partition {

namespace {
// Stream id of the random assignment's keys (distinct from other users of the seed).
constexpr std::uint64_t kRandomAssignmentStream = 0x7061727469746e31ULL;  // "partitn1"
}  // namespace

const char* to_string(Method m) { return m == Method::random ? "random" : "metis"; }

Method parse_method(const std::string& s) {
  if (s == "metis") return Method::metis;
  if (s == "random") return Method::random;
  throw UsageError("--method: '" + s + "' is not a partitioning method (expected 'metis' or 'random')");
}

void check_metis_limits(std::int64_t num_nodes, std::int64_t adjacency_entries, const std::string& context) {
  const std::string hint =
      " METIS 5.1 here uses a 32-bit idx_t (limit 2^31-1 = " + std::to_string(kMetisIdxMax) +
      "); use `--method random`, which has no such limit, or a METIS built with IDXTYPEWIDTH=64.";
  if (num_nodes > kMetisIdxMax)
    throw UsageError(context + ": " + std::to_string(num_nodes) + " nodes exceed METIS's idx_t limit." + hint);
  if (adjacency_entries > kMetisIdxMax)
    throw UsageError(context + ": the symmetrised adjacency has " + std::to_string(adjacency_entries) +
                     " entries (2 x undirected edges), beyond METIS's idx_t limit." + hint);
}

void check_num_parts(std::int64_t num_parts, std::int64_t num_nodes, const std::string& context) {
  if (num_parts < 1 || num_parts > num_nodes)
    throw UsageError(context + ": --parts " + std::to_string(num_parts) + " must lie in [1, " +
                     std::to_string(num_nodes) + "] (the number of nodes)");
}

std::vector<PartId> random_assignment(std::int64_t num_nodes, int num_parts, std::uint64_t seed) {
  check_num_parts(num_parts, num_nodes, "random assignment");
  // Key of node v = first 64 bits of the Philox stream (seed, stream, v): a pure function
  // of (seed, v). Ties (probability ~N^2/2^65) are broken by the node id.
  std::vector<std::pair<std::uint64_t, std::int64_t>> keyed(static_cast<std::size_t>(num_nodes));
  for (std::int64_t v = 0; v < num_nodes; ++v) {
    CounterRng rng(seed, kRandomAssignmentStream, static_cast<std::uint64_t>(v));
    keyed[v] = {rng.next_u64(), v};
  }
  std::sort(keyed.begin(), keyed.end());
  // Position i of the permutation goes to part floor(i * P / N): P ranges whose sizes differ
  // by at most one.
  std::vector<PartId> part(static_cast<std::size_t>(num_nodes));
  for (std::int64_t i = 0; i < num_nodes; ++i) {
    const auto p = static_cast<__int128>(i) * num_parts / num_nodes;
    part[keyed[i].second] = static_cast<PartId>(p);
  }
  return part;
}

double balance_of(const std::vector<std::int64_t>& w) {
  if (w.empty()) return 1.0;
  const std::int64_t total = std::accumulate(w.begin(), w.end(), std::int64_t{0});
  if (total == 0) return 1.0;
  const std::int64_t mx = *std::max_element(w.begin(), w.end());
  return static_cast<double>(mx) * static_cast<double>(w.size()) / static_cast<double>(total);
}

PartitionQuality evaluate_partition(const graph::CsrGraph& g, const std::vector<std::uint8_t>& train_mask,
                                    const std::vector<PartId>& part_of, int num_parts) {
  const std::int64_t n = g.num_nodes();
  if (static_cast<std::int64_t>(part_of.size()) != n || static_cast<std::int64_t>(train_mask.size()) != n)
    throw std::invalid_argument("evaluate_partition: part_of and train_mask need one entry per node");
  PartitionQuality q;
  q.part_nodes.assign(num_parts, 0);
  q.part_edges.assign(num_parts, 0);
  q.part_train_nodes.assign(num_parts, 0);
  for (std::int64_t v = 0; v < n; ++v) {
    const PartId p = part_of[v];
    if (p < 0 || p >= num_parts)
      throw std::invalid_argument("evaluate_partition: node " + std::to_string(v) + " has part " + std::to_string(p));
    ++q.part_nodes[p];
    q.part_edges[p] += g.out_degree(v);
    q.part_train_nodes[p] += train_mask[v] != 0 ? 1 : 0;
  }
  // Each unordered pair {u, v}, u != v, counts once: from the row of min(u, v) when stored
  // there, else from the row of max(u, v). Needs sorted rows to skip repeats and look up
  // the reverse entry.
  const bool sorted = g.rows_sorted();
  auto has_entry = [&](std::int64_t row, graph::NodeId x) {
    auto r = g.out_neigh(row);
    return sorted ? std::binary_search(r.begin(), r.end(), x) : std::find(r.begin(), r.end(), x) != r.end();
  };
  for (std::int64_t u = 0; u < n; ++u) {
    auto r = g.out_neigh(u);
    for (std::int64_t i = 0; i < r.size(); ++i) {
      const graph::NodeId v = r[i];
      if (v == u) continue;
      // A repeat of the entry just before (sorted rows) or earlier in the row (unsorted).
      const bool repeat = sorted ? (i > 0 && r[i - 1] == v) : std::find(r.begin(), r.begin() + i, v) != r.begin() + i;
      if (repeat) continue;
      const bool counted_here = v > u || !has_entry(v, static_cast<graph::NodeId>(u));
      if (!counted_here) continue;
      ++q.undirected_edges;
      if (part_of[u] != part_of[v]) ++q.edge_cut;
    }
  }
  q.balance_nodes = balance_of(q.part_nodes);
  q.balance_train_nodes = balance_of(q.part_train_nodes);
  q.balance_edges = balance_of(q.part_edges);
  return q;
}

}  // namespace dpgnn::partition
