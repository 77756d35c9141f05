// The two samplers that ignore walks: single training nodes (the MLP / DP-MLP baselines of
// Ayle et al. 2022 and Daigavane et al.) and random disjoint graph splits (Igamberdiev &
// Habernal, "Privacy-preserving graph convolutional networks for text classification",
// Section 4.4: "a random index tensor for all nodes in the training set, which is then
// split into s groups ... used to mask the original graph during training").
//
// A split keeps only its own training nodes and the graph edges among them: everything
// outside the split is masked out, so a split is one independent example and the splits
// are disjoint. The loss of a split is over all its nodes (all labelled), so the set is
// marked loss_on_all_nodes; the root is just the split's first node. Group sizes follow
// numpy.array_split: the first (#roots mod s) groups have one node more.
#include <algorithm>
#include <vector>

#include "dpgnn/sampling/sampler.h"
#include "dpgnn/util/error.h"
#include "streams.h"

namespace dpgnn::sampling {

SubgraphSet sample_nodes(const std::vector<std::uint8_t>& root_mask) {
  SubgraphSet out;
  for (std::size_t v = 0; v < root_mask.size(); ++v) {
    if (!root_mask[v]) continue;
    out.roots.push_back(static_cast<std::int64_t>(v));
    out.nodes.push_back(static_cast<std::int64_t>(v));
    out.node_ptr.push_back(static_cast<std::int64_t>(out.nodes.size()));
    out.edge_ptr.push_back(0);
  }
  return out;
}

SubgraphSet sample_splits(const graph::CsrGraph& g, const std::vector<std::uint8_t>& root_mask,
                          const SplitOptions& options, const SamplerKey& key) {
  if (options.splits < 1)
    throw UsageError("split sampler: number of splits must be >= 1, got " + std::to_string(options.splits));
  const std::int64_t n = g.num_nodes();
  if (static_cast<std::int64_t>(root_mask.size()) != n)
    throw UsageError("split sampler: root mask has " + std::to_string(root_mask.size()) +
                     " entries for a graph of " + std::to_string(n) + " nodes");
  std::vector<std::int64_t> order;
  for (std::int64_t v = 0; v < n; ++v)
    if (root_mask[v]) order.push_back(v);
  Xoshiro256 rng = detail::sampler_rng(detail::StreamTag::split, key);
  for (std::int64_t i = static_cast<std::int64_t>(order.size()) - 1; i > 0; --i)
    std::swap(order[i], order[rng.below_fast(static_cast<std::uint64_t>(i) + 1)]);

  SubgraphSet out;
  out.loss_on_all_nodes = true;
  const std::int64_t t = static_cast<std::int64_t>(order.size());
  const std::int64_t s = std::min(options.splits, t);
  std::vector<std::int64_t> stamp(n, -1);
  std::int64_t pos = 0;
  for (std::int64_t i = 0; i < s; ++i) {
    const std::int64_t size = t / s + (i < t % s ? 1 : 0);
    out.roots.push_back(order[pos]);
    out.nodes.insert(out.nodes.end(), order.begin() + pos, order.begin() + pos + size);
    out.node_ptr.push_back(static_cast<std::int64_t>(out.nodes.size()));
    append_induced_edges(g, order.data() + pos, size, stamp, out.edges);
    out.edge_ptr.push_back(static_cast<std::int64_t>(out.edges.size()));
    pos += size;
  }
  return out;
}

std::vector<std::int64_t> splits_per_part(std::int64_t total, const std::vector<std::int64_t>& train_counts) {
  std::int64_t t = 0;
  for (auto c : train_counts) t += c;
  std::vector<std::int64_t> s(train_counts.size(), 0);
  if (t == 0) return s;
  std::vector<std::pair<double, std::size_t>> rest;
  std::int64_t given = 0;
  for (std::size_t p = 0; p < train_counts.size(); ++p) {
    const double share = static_cast<double>(total) * static_cast<double>(train_counts[p]) / static_cast<double>(t);
    s[p] = static_cast<std::int64_t>(share);
    given += s[p];
    rest.push_back({-(share - static_cast<double>(s[p])), p});
  }
  std::sort(rest.begin(), rest.end());
  for (std::size_t i = 0; given < total && i < rest.size(); ++i, ++given) s[rest[i].second]++;
  for (std::size_t p = 0; p < s.size(); ++p)
    if (train_counts[p] > 0) s[p] = std::max<std::int64_t>(s[p], 1);
  return s;
}

}  // namespace dpgnn::sampling
