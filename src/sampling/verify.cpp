// Runtime invariant checks of a subgraph set (see verify.h). One pass over the set with
// an occurrence counter per node and a stamp array for "is this node in the current
// subgraph", so the cost is O(n + total nodes + total edges * log(degree)).
#include "dpgnn/sampling/verify.h"

#include <algorithm>
#include <sstream>

#include "dpgnn/util/error.h"

namespace dpgnn::sampling {
namespace {

constexpr std::size_t kMaxMessages = 5;

class Reporter {
 public:
  explicit Reporter(VerifyReport& r) : r_(r) {}
  template <typename... Args>
  void fail(const Args&... parts) {
    ++r_.violations;
    if (r_.messages.size() >= kMaxMessages) return;
    std::ostringstream s;
    (s << ... << parts);
    r_.messages.push_back(s.str());
  }

 private:
  VerifyReport& r_;
};

bool has_edge(const graph::CsrGraph& g, bool sorted, std::int64_t u, std::int64_t v) {
  // Search the shorter row: both directions are stored in a symmetric graph, but a
  // directed input may hold only one, so try both.
  auto in_row = [&](std::int64_t a, std::int64_t b) {
    const auto row = g.out_neigh(a);
    if (sorted) return std::binary_search(row.begin(), row.end(), static_cast<graph::NodeId>(b));
    return std::find(row.begin(), row.end(), static_cast<graph::NodeId>(b)) != row.end();
  };
  if (g.out_degree(u) <= g.out_degree(v)) return in_row(u, v) || in_row(v, u);
  return in_row(v, u) || in_row(u, v);
}

}  // namespace

SubgraphChecks checks_for(const SamplerOptions& o) {
  SubgraphChecks c;
  c.disjoint = is_disjoint(o.kind);
  c.max_size = max_subgraph_size_bound(o);
  if (o.kind == SamplerKind::dpgnn) {
    c.max_occurrence = dpgnn_occurrence_bound(o.max_degree, o.layers);
    c.every_candidate_is_root = true;
  } else if (o.kind == SamplerKind::node) {
    c.every_candidate_is_root = true;
  } else {
    c.every_candidate_covered = true;
  }
  return c;
}

VerifyReport check_subgraphs(const graph::CsrGraph& g, const std::vector<std::uint8_t>& root_mask,
                             const SubgraphSet& set, const SubgraphChecks& checks) {
  VerifyReport report;
  Reporter bad(report);
  const std::int64_t n = g.num_nodes();
  const std::int64_t m = set.size();
  if (static_cast<std::int64_t>(root_mask.size()) != n) {
    bad.fail("root mask has ", root_mask.size(), " entries for a graph of ", n, " nodes");
    return report;
  }
  // Shape of the pointer arrays.
  if (static_cast<std::int64_t>(set.node_ptr.size()) != m + 1 ||
      static_cast<std::int64_t>(set.edge_ptr.size()) != m + 1 || set.node_ptr[0] != 0 ||
      set.edge_ptr[0] != 0 || set.node_ptr[m] != static_cast<std::int64_t>(set.nodes.size()) ||
      set.edge_ptr[m] != static_cast<std::int64_t>(set.edges.size())) {
    bad.fail("pointer arrays do not match: ", m, " roots, node_ptr of ", set.node_ptr.size(),
             ", edge_ptr of ", set.edge_ptr.size(), ", ", set.nodes.size(), " nodes, ",
             set.edges.size(), " edges");
    return report;
  }
  for (std::int64_t i = 0; i < m; ++i) {
    if (set.node_ptr[i + 1] <= set.node_ptr[i] || set.edge_ptr[i + 1] < set.edge_ptr[i]) {
      bad.fail("subgraph ", i, ": node_ptr/edge_ptr not increasing (a subgraph needs its root)");
      return report;
    }
  }
  for (std::int64_t v : set.nodes) {
    if (v < 0 || v >= n) {
      bad.fail("node id ", v, " outside [0, ", n, ")");
      return report;
    }
  }
  const bool sorted = g.rows_sorted();
  std::vector<std::int64_t> occurrences(n, 0), root_of(n, 0), where(n, -1);
  std::vector<std::pair<std::int64_t, std::int64_t>> seen_edges;
  for (std::int64_t i = 0; i < m; ++i) {
    const std::int64_t root = set.roots[i];
    const std::int64_t b = set.node_ptr[i], e = set.node_ptr[i + 1];
    if (set.nodes[b] != root) bad.fail("subgraph ", i, ": root ", root, " is not its first node");
    if (root < 0 || root >= n || !root_mask[root]) {
      bad.fail("subgraph ", i, ": root ", root, " is not a root candidate (training node)");
    } else {
      ++root_of[root];
    }
    report.max_size = std::max(report.max_size, e - b);
    if (checks.max_size >= 0 && e - b > checks.max_size)
      bad.fail("subgraph ", i, " (root ", root, ") has ", e - b, " nodes, more than the bound ",
               checks.max_size);
    for (std::int64_t k = b; k < e; ++k) {
      const std::int64_t v = set.nodes[k];
      if (where[v] == i) {
        bad.fail("subgraph ", i, " (root ", root, ") lists node ", v, " twice");
        continue;
      }
      where[v] = i;
      ++occurrences[v];
    }
    seen_edges.assign(set.edges.begin() + set.edge_ptr[i], set.edges.begin() + set.edge_ptr[i + 1]);
    if (checks.check_edges) {
      for (auto [u, v] : seen_edges) {
        if (u < 0 || u >= n || v < 0 || v >= n || where[u] != i || where[v] != i) {
          bad.fail("subgraph ", i, " (root ", root, "): edge (", u, ", ", v,
                   ") has an endpoint outside the subgraph");
        } else if (u == v) {
          bad.fail("subgraph ", i, " (root ", root, "): self-loop (", u, ", ", v, ")");
        } else if (!has_edge(g, sorted, u, v)) {
          bad.fail("subgraph ", i, " (root ", root, "): edge (", u, ", ", v, ") is not in the graph");
        }
      }
    }
    for (auto& [u, v] : seen_edges)
      if (u > v) std::swap(u, v);
    std::sort(seen_edges.begin(), seen_edges.end());
    if (std::adjacent_find(seen_edges.begin(), seen_edges.end()) != seen_edges.end())
      bad.fail("subgraph ", i, " (root ", root, ") lists an undirected edge twice");
  }
  for (std::int64_t v = 0; v < n; ++v) {
    report.max_occurrence = std::max(report.max_occurrence, occurrences[v]);
    if (checks.disjoint && occurrences[v] > 1)
      bad.fail("node ", v, " is in ", occurrences[v], " subgraphs (they must be disjoint)");
    if (checks.max_occurrence >= 0 && occurrences[v] > checks.max_occurrence)
      bad.fail("node ", v, " is in ", occurrences[v], " subgraphs, more than the bound ",
               checks.max_occurrence);
    if (!root_mask[v]) continue;
    if (checks.every_candidate_covered && occurrences[v] == 0)
      bad.fail("training node ", v, " is in no subgraph");
    if (checks.every_candidate_is_root && root_of[v] != 1)
      bad.fail("training node ", v, " is the root of ", root_of[v], " subgraphs (expected exactly one)");
  }
  return report;
}

void verify_subgraphs(const graph::CsrGraph& g, const std::vector<std::uint8_t>& root_mask,
                      const SubgraphSet& set, const SubgraphChecks& checks, const std::string& what) {
  const VerifyReport r = check_subgraphs(g, root_mask, set, checks);
  if (r.ok()) return;
  std::string msg = what + ": subgraph set violates " + std::to_string(r.violations) + " invariant(s):";
  for (const auto& s : r.messages) msg += " " + s + ";";
  throw Error(msg, kExitInternal);
}

}  // namespace dpgnn::sampling
