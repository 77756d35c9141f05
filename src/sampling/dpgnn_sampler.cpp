// DP-GNN's training subgraphs (Daigavane et al., "Node-level differentially private graph
// neural networks"; line numbers below are those of ../shared/papers/node-level-dp-gnn_daigavane.txt).
//
// SAMPLE-EDGELISTS (Algorithm 1, lines 166-177), read as written:
//   for every node v: RE_v = {u : (u, v) in E, u in V_tr} (the incoming edges from
//   training nodes); keep each independently with probability p = K / (2 |RE_v|)
//   (p capped at 1 when |RE_v| < K/2); if more than K survive, v is "dropped from all
//   edgelists" (line 174): RE_v becomes empty. Then E_v = {u : v in RE_u} (line 176).
//   Since u is in E_v exactly when v is in RE_u, "dropped from all edge lists" and
//   "RE_v emptied" are the same thing, and every node is in at most K lists E_v -- the
//   guarantee Lemma 1's proof uses (lines 676-677). As written, E_v is empty unless v is
//   a training node, so neighbourhoods grow only through training nodes.
//   On a symmetric graph (u, v) in E iff u is in row v, so RE_v = training nodes of row v.
// RECURSIVE-NEIGHBORHOOD (Algorithm 2, lines 183-190): S_v = {v} union the depth-(r-1)
//   neighbourhoods of u in E_v, a set union. Its nodes are exactly those reachable from v
//   by at most r edge-list steps, so we compute it by a breadth-first search to depth r.
//   Its edges (EdgeMode::walk) are the edge-list edges the recursion follows: (w, u) with
//   u in E_w and w at distance < r from v, each undirected edge once.
// Degree bounding (issue 13, item 6; docs/privacy.md "DP-GNN degree bounding").
//   Lemma 2 (lines 685-695) bounds the sensitivity for "any graph such that the maximum
//   in-degree of G is bounded by K": its proof compares the subgraphs of G and of G minus
//   one node v and counts only the subgraphs that contain v. SAMPLE-EDGELISTS does not
//   preserve that: p = K / (2 |RE_u|) depends on all of u's in-neighbours, so removing v
//   (an in-neighbour of u) changes the coin for u's other in-edges, hence E_w for other w,
//   hence subgraphs that do not contain v; here, moreover, one sequential stream draws every
//   coin, so removing v shifts all later draws. DegreeBound::paper keeps the algorithm as
//   written (for reproductions) and is not covered by the guarantee.
//   DegreeBound::require is covered: no edge is sampled (RE_u is kept whole) and the input
//   must satisfy Lemma 2's hypothesis, |RE_u| <= K for every u (otherwise DataError). Then
//   E_w = {u : w in RE_u} is a deterministic function of the graph that, when v is removed,
//   only loses v and the entries of v's own list, so S_x changes only if v in S_x; every u
//   is in at most |RE_u| <= K lists, so Lemma 1's count N(K, r) (lines 658-683) holds and
//   the accountant's bound is unchanged. Removing a node never raises an in-degree, so the
//   graphs with in-degree <= K are closed under the neighbouring relation. No rule that
//   caps every kept in-set at K can be local in general: if f_u(S) \ {v} = f_u(S \ {v}) for
//   all v, then by induction f_u(S) = {w in S : w in f_u({w})}, an independent per-edge rule
//   whose kept set is unbounded unless at most K ids can ever pass; so the bound has to
//   hold in the input (bounding it beforehand is a preprocessing step outside the guarantee).
//   Nor is the number of changed subgraphs bounded for the natural capped rules (issue 36):
//   on the affine-plane graphs G_{q,K} one node's removal changes >= q K / (K+1) subgraphs
//   that do not contain it under every rule that keeps all in-edges of nodes within the cap
//   (keyed top-K included), >= q / (K+1) under keyed slots; and every keyed rule that reads
//   only u's own in-list (this file's coins made keyed included) changes unboundedly many on
//   a star of receivers (docs/privacy.md, "No capped degree bound has a bounded node-level
//   count", Theorems A-C; tests/sampling/test_dpgnn_degree_bound.cpp).
// SAMPLE-SUBGRAPHS (Algorithm 3, lines 191-199): one S_v per training node v.
// Lemma 1 (lines 180-182, 197-202; proof lines 658-683): every node is in at most
//   N(K, r) = sum_{i=0}^{r} K^i subgraphs. We count occurrences while building and throw
//   an internal error if the bound is ever exceeded (it cannot be, if this code is right).
#include <algorithm>
#include <vector>

#include "dpgnn/sampling/sampler.h"
#include "dpgnn/util/error.h"
#include "streams.h"

namespace dpgnn::sampling {
namespace {

// The sampled edge lists E_v as a CSR: list_ptr [n+1], list [sum |E_v|].
struct EdgeLists {
  std::vector<std::int64_t> ptr, list;
};

EdgeLists sample_edge_lists(const graph::CsrGraph& g, const std::vector<std::uint8_t>& train,
                            std::int64_t k, DegreeBound bound, const SamplerKey& key) {
  const std::int64_t n = g.num_nodes();
  Xoshiro256 rng = detail::sampler_rng(detail::StreamTag::dpgnn, key);
  // Pairs (v, u) meaning u in E_v, produced for v = RE_u's members in increasing u.
  std::vector<std::int64_t> count(n + 1, 0);
  std::vector<std::pair<std::int64_t, std::int64_t>> pairs;
  std::vector<std::int64_t> kept;
  for (std::int64_t u = 0; u < n; ++u) {
    std::int64_t re_size = 0;
    for (graph::NodeId w : g.out_neigh(u)) re_size += train[w] ? 1 : 0;
    if (re_size == 0) continue;
    if (bound == DegreeBound::require) {
      if (re_size > k)
        throw DataError("DP-GNN sampler (sampler.degree_bound: require): node " + std::to_string(u) + " has " +
                        std::to_string(re_size) + " training in-neighbours, more than K = " + std::to_string(k) +
                        ": the covered variant needs an input whose training in-degree is at most K (Lemma 2); "
                        "raise sampler.max_degree, bound the degree before training (outside the guarantee), or "
                        "set sampler.degree_bound: paper (SAMPLE-EDGELISTS, not covered: docs/privacy.md)");
      for (graph::NodeId w : g.out_neigh(u))
        if (train[w]) {
          pairs.emplace_back(w, u);
          ++count[w + 1];
        }
      continue;
    }
    const double p = std::min(1.0, static_cast<double>(k) / (2.0 * static_cast<double>(re_size)));
    kept.clear();
    for (graph::NodeId w : g.out_neigh(u))
      if (train[w] && rng.uniform() < p) kept.push_back(w);
    if (static_cast<std::int64_t>(kept.size()) > k) continue;  // u dropped from all edge lists
    for (std::int64_t w : kept) {
      pairs.emplace_back(w, u);
      ++count[w + 1];
    }
  }
  EdgeLists e;
  e.ptr.assign(n + 1, 0);
  for (std::int64_t v = 0; v < n; ++v) e.ptr[v + 1] = e.ptr[v] + count[v + 1];
  e.list.resize(pairs.size());
  std::vector<std::int64_t> fill(e.ptr.begin(), e.ptr.end() - 1);
  for (const auto& [v, u] : pairs) e.list[fill[v]++] = u;  // stable: u ascending within E_v
  return e;
}

}  // namespace

SubgraphSet sample_dpgnn(const graph::CsrGraph& g, const std::vector<std::uint8_t>& root_mask,
                         const DpgnnOptions& options, const SamplerKey& key) {
  const std::int64_t bound = dpgnn_occurrence_bound(options.max_degree, options.layers);
  const std::int64_t n = g.num_nodes();
  if (static_cast<std::int64_t>(root_mask.size()) != n)
    throw UsageError("DP-GNN sampler: root mask has " + std::to_string(root_mask.size()) +
                     " entries for a graph of " + std::to_string(n) + " nodes");
  const EdgeLists e = sample_edge_lists(g, root_mask, options.max_degree, options.degree_bound, key);

  SubgraphSet out;
  std::vector<std::int64_t> depth(n, -1);       // BFS distance from the current root
  std::vector<std::int64_t> occurrences(n, 0);  // Lemma 1's counter
  std::vector<std::int64_t> stamp;
  if (options.edges == EdgeMode::induced) stamp.assign(n, -1);
  std::vector<std::pair<std::int64_t, std::int64_t>> sub_edges;
  for (std::int64_t v = 0; v < n; ++v) {
    if (!root_mask[v]) continue;
    const std::size_t first = out.nodes.size();
    out.roots.push_back(v);
    out.nodes.push_back(v);
    depth[v] = 0;
    sub_edges.clear();
    // Breadth-first over the edge lists; out.nodes[first..] is the queue.
    for (std::size_t head = first; head < out.nodes.size(); ++head) {
      const std::int64_t w = out.nodes[head];
      if (depth[w] >= options.layers) continue;
      for (std::int64_t i = e.ptr[w]; i < e.ptr[w + 1]; ++i) {
        const std::int64_t u = e.list[i];
        if (options.edges == EdgeMode::walk && u != w)
          sub_edges.emplace_back(std::min(w, u), std::max(w, u));
        if (depth[u] >= 0) continue;
        depth[u] = depth[w] + 1;
        out.nodes.push_back(u);
      }
    }
    for (std::size_t i = first; i < out.nodes.size(); ++i) {
      const std::int64_t u = out.nodes[i];
      depth[u] = -1;
      if (++occurrences[u] > bound)
        throw Error("DP-GNN sampler: node " + std::to_string(u) + " is in more than N(K, r) = " +
                        std::to_string(bound) + " subgraphs (Lemma 1 violated: a bug)",
                    kExitInternal);
    }
    out.node_ptr.push_back(static_cast<std::int64_t>(out.nodes.size()));
    if (options.edges == EdgeMode::walk) {
      std::sort(sub_edges.begin(), sub_edges.end());
      sub_edges.erase(std::unique(sub_edges.begin(), sub_edges.end()), sub_edges.end());
      out.edges.insert(out.edges.end(), sub_edges.begin(), sub_edges.end());
    } else {
      append_induced_edges(g, out.nodes.data() + first,
                           static_cast<std::int64_t>(out.nodes.size() - first), stamp, out.edges);
    }
    out.edge_ptr.push_back(static_cast<std::int64_t>(out.edges.size()));
  }
  return out;
}

}  // namespace dpgnn::sampling
