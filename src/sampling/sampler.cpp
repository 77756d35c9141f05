// Sampler names, the dispatcher over the samplers, their size and occurrence bounds, and
// the induced-edge helper they share.
#include "dpgnn/sampling/sampler.h"

#include <algorithm>
#include <limits>

#include "dpgnn/util/error.h"

namespace dpgnn::sampling {

SamplerKind parse_sampler_kind(const std::string& name) {
  if (name == "drw" || name == "drw-d") return SamplerKind::drw;
  if (name == "drw-r") return SamplerKind::drw_r;
  if (name == "dpgnn") return SamplerKind::dpgnn;
  if (name == "node") return SamplerKind::node;
  if (name == "split") return SamplerKind::split;
  throw UsageError("unknown sampler '" + name + "': expected drw, drw-r, drw-d, dpgnn, node or split");
}

const char* to_string(SamplerKind kind) {
  switch (kind) {
    case SamplerKind::drw: return "drw";
    case SamplerKind::drw_r: return "drw-r";
    case SamplerKind::dpgnn: return "dpgnn";
    case SamplerKind::node: return "node";
    case SamplerKind::split: return "split";
  }
  return "?";
}

EdgeMode parse_edge_mode(const std::string& name) {
  if (name == "walk") return EdgeMode::walk;
  if (name == "induced") return EdgeMode::induced;
  throw UsageError("unknown subgraph edge mode '" + name + "': expected walk or induced");
}

const char* to_string(EdgeMode mode) { return mode == EdgeMode::walk ? "walk" : "induced"; }

DegreeBound parse_degree_bound(const std::string& name) {
  if (name == "require") return DegreeBound::require;
  if (name == "paper") return DegreeBound::paper;
  throw UsageError("unknown degree bound '" + name + "': expected require or paper");
}

const char* to_string(DegreeBound b) { return b == DegreeBound::require ? "require" : "paper"; }

SubgraphSet run_sampler(const graph::CsrGraph& g, const std::vector<std::uint8_t>& root_mask,
                        const SamplerOptions& o, const SamplerKey& key) {
  switch (o.kind) {
    case SamplerKind::drw:
    case SamplerKind::drw_r: {
      DrwOptions d;
      d.walk_length = o.walk_length;
      d.restarts = o.kind == SamplerKind::drw ? 1 : o.restarts;
      d.edges = o.edges;
      d.walkers = o.walkers;
      return sample_drw(g, root_mask, d, key);
    }
    case SamplerKind::dpgnn: {
      DpgnnOptions d;
      d.max_degree = o.max_degree;
      d.degree_bound = o.degree_bound;
      d.layers = o.layers;
      d.edges = o.edges;
      return sample_dpgnn(g, root_mask, d, key);
    }
    case SamplerKind::node:
      if (static_cast<std::int64_t>(root_mask.size()) != g.num_nodes())
        throw UsageError("node sampler: root mask has " + std::to_string(root_mask.size()) +
                         " entries for a graph of " + std::to_string(g.num_nodes()) + " nodes");
      return sample_nodes(root_mask);
    case SamplerKind::split: {
      SplitOptions s;
      s.splits = o.splits;
      return sample_splits(g, root_mask, s, key);
    }
  }
  throw UsageError("unknown sampler kind");
}

std::int64_t max_subgraph_size_bound(const SamplerOptions& o) {
  switch (o.kind) {
    case SamplerKind::drw: return o.walk_length + 1;            // Ayle et al., Section 4.2 (DRW)
    case SamplerKind::drw_r: return 1 + o.restarts * o.walk_length;  // Section 4.2 (DRW-R)
    case SamplerKind::node: return 1;
    case SamplerKind::dpgnn:
    case SamplerKind::split: return -1;
  }
  return -1;
}

bool is_disjoint(SamplerKind kind) { return kind != SamplerKind::dpgnn; }

std::int64_t dpgnn_occurrence_bound(std::int64_t k, std::int64_t r) {
  if (k < 1) throw UsageError("DP-GNN: max degree K must be >= 1, got " + std::to_string(k));
  if (r < 0) throw UsageError("DP-GNN: layers r must be >= 0, got " + std::to_string(r));
  // N(K, r) = sum_{i=0}^{r} K^i (Daigavane et al., Lemma 1), summed exactly in integers.
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  std::int64_t sum = 0, power = 1;
  for (std::int64_t i = 0; i <= r; ++i) {
    if (sum > kMax - power)
      throw UsageError("DP-GNN: N(K, r) overflows int64 for K = " + std::to_string(k) +
                       ", r = " + std::to_string(r));
    sum += power;
    if (i < r) {
      if (power > kMax / k)
        throw UsageError("DP-GNN: N(K, r) overflows int64 for K = " + std::to_string(k) +
                         ", r = " + std::to_string(r));
      power *= k;
    }
  }
  return sum;
}

void append_induced_edges(const graph::CsrGraph& g, const std::int64_t* nodes, std::int64_t count,
                          std::vector<std::int64_t>& stamp,
                          std::vector<std::pair<std::int64_t, std::int64_t>>& out) {
  for (std::int64_t i = 0; i < count; ++i) stamp[nodes[i]] = i;
  for (std::int64_t i = 0; i < count; ++i) {
    const std::int64_t v = nodes[i];
    const std::size_t first = out.size();
    for (graph::NodeId u : g.out_neigh(v)) {
      // Each undirected edge once, from its smaller endpoint; duplicates in the row skipped.
      if (u <= v || stamp[u] < 0) continue;
      out.emplace_back(v, u);
    }
    // Rows may hold repeated entries (unchecked input): keep one copy.
    if (out.size() - first > 1) {
      std::sort(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
      out.erase(std::unique(out.begin() + static_cast<std::ptrdiff_t>(first), out.end()), out.end());
    }
  }
  for (std::int64_t i = 0; i < count; ++i) stamp[nodes[i]] = -1;
}

}  // namespace dpgnn::sampling
