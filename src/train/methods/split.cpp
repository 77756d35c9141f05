// Graph-split DP-GCN (Igamberdiev & Habernal, Sec. 4.4): the training nodes are cut into s
// random disjoint groups ("a random index tensor for all nodes in the training set, which is
// then split into s groups"); each group, with the edges among its nodes (the rest of the
// graph is masked out), is one example. The loss of a split is over all its nodes
// (SubgraphSet::loss_on_all_nodes, set by the split sampler), its gradient is clipped once,
// and the batch is a uniform sample without replacement of m of the M splits, so the
// accountant is the replace-one subsampled Gaussian without replacement over the splits
// (DESIGN.md 3; the group assignment depends only on the public training mask and sampler
// randomness, so M is the same on neighbouring datasets). SGD-DP (Sec. 4.2) and Adam-DP
// (Sec. 4.3: noise added before Adam's moment estimates) are train.optimizer sgd and adam:
// the trainer adds the noise to the summed gradient before the optimiser sees it.
//
// The groups are drawn per partition part (keyed by (seed, part)), so the set does not
// depend on the number of ranks: the s splits are shared among the parts in proportion to
// their training nodes (at least one per part with training nodes), so M = s up to that
// rounding. With one part this is the paper's procedure exactly.
#include <algorithm>

#include "method.h"

namespace dpgnn::train::methods {
namespace {

class Split : public MethodSpec {
 public:
  std::string name() const override { return "split"; }
  std::string pairing(const Config& c) const override {
    return "sampler random disjoint graph splits (s " + std::to_string(c.sampler.splits) +
           ", loss on every node), accountant " + accountant(c) + " (sensitivity 2C)";
  }
  sampling::SamplerOptions sampler_options(const Config& c) const override {
    sampling::SamplerOptions o;
    o.kind = sampling::SamplerKind::split;
    o.splits = c.sampler.splits;
    o.walk_length = c.sampler.walk_length;
    o.edges = sampling::EdgeMode::induced;  // the paper masks the adjacency matrix: all edges in a split
    return o;
  }

  std::int64_t auto_batch_size(std::int64_t realised) const override { return full_batch_while_small(realised); }

  // The paper's s splits of the whole training set, shared among the parts in proportion to
  // their training nodes (sampling::splits_per_part, as `dpgnn sample` does).
  sampling::SamplerOptions part_sampler_options(const Config& c, int part,
                                                const std::vector<std::int64_t>& part_train_nodes) const override {
    sampling::SamplerOptions o = sampler_options(c);
    const auto shares = sampling::splits_per_part(c.sampler.splits, part_train_nodes);
    o.splits = std::max<std::int64_t>(1, shares.at(static_cast<std::size_t>(part)));
    return o;
  }
};

}  // namespace

namespace detail {
const MethodSpec& split_spec() {
  static const Split s;
  return s;
}
}  // namespace detail

}  // namespace dpgnn::train::methods
