// Disjoint random walks: DRW and DRW-R (Ayle et al. 2022, Section 4.2 and Appendix B,
// Algorithms 2 and 3), with DESIGN.md 4's refinements: roots are root-mask (labelled
// training) nodes drawn uniformly among the unassigned ones, a walk may pass through any
// unassigned node, and sampling stops when every root-mask node is assigned.
//
// Uniform roots among the unassigned: the root-mask nodes are shuffled once and taken in
// that order, skipping those a walk has absorbed. Given the history, the next unassigned
// node of a uniformly random order is uniform among the unassigned ones, so this is the
// paper's `sample(remaining_nodes, 1)` at O(1) per root.
//
// Uniform step among the unassigned neighbours without scanning them (the paper's loop
// over Neighbors(v) costs O(degree) per step, ~490 on Reddit): draw a neighbour uniformly
// from the whole row and accept it when it is unassigned; after T = kMaxDraws rejections
// collect the unassigned neighbours and pick one of them uniformly (a dead end when there
// is none). The choice is exactly uniform over the unassigned neighbours: the probability
// of ending at a given unassigned u is sum_{t<T} (1-a/d)^t / d + (1-a/d)^T / a, the same
// for every one of the a unassigned neighbours (T does not depend on which neighbours
// are assigned). Every node is the current node of a walk at
// most once (it is assigned when reached; a DRW-R root at most R times), so a pass costs
// O(steps * kMaxDraws + sum of the degrees of dead ends) <= O(n + E), with no copy of the
// neighbour arrays.
//
// Memory latency, not arithmetic, bounds a walk: each step reads one random entry of a
// neighbour array far larger than the caches. Like ThunderRW (Sun et al., VLDB 2021) we
// advance W walkers in lock-step rounds: a round first draws every walker's candidate and
// prefetches it, then checks and moves them all, so W cache misses overlap. A walker
// whose draw is rejected draws again in the next round; a walker that finishes takes the
// next root. The checks run one walker after another, so two walkers never take the same
// node, and each step is still uniform over the neighbours unassigned at the moment it
// is taken. W = 1 is the paper's order exactly (one walk after the other); W > 1 only
// overlaps walks in time. The result is a pure function of (seed, part, epoch, W).
#include <algorithm>
#include <vector>

#include "dpgnn/sampling/sampler.h"
#include "dpgnn/util/error.h"
#include "streams.h"

namespace dpgnn::sampling {
namespace {

using graph::CsrGraph;
using graph::EdgeIdx;
using graph::NodeId;

// Rejected draws before collecting the unassigned neighbours. Draws of different walkers
// overlap (prefetched in the same round) while the collecting scan of a row is
// synchronous, so many cheap draws beat an early scan: 64 measured faster than 8 or 32
// on both benchmark graphs (docs/benchmarks.md).
constexpr int kMaxDraws = 64;

class AssignedSet {
 public:
  explicit AssignedSet(std::int64_t n) : words_((n + 63) / 64, 0) {}
  bool test(std::int64_t v) const { return (words_[v >> 6] >> (v & 63)) & 1u; }
  void set(std::int64_t v) { words_[v >> 6] |= std::uint64_t{1} << (v & 63); }

 private:
  std::vector<std::uint64_t> words_;
};

struct Walker {
  bool active = false;
  std::int64_t root = -1;
  std::int64_t v = -1;         // current node
  std::int64_t restart = 0;    // walks started from this root so far, minus one
  std::int64_t step = 0;       // steps of the current walk
  int draws = 0;               // rejected draws at the current node
  EdgeIdx pending = 0;         // index into the neighbour array drawn this round
  std::vector<std::int64_t> nodes;                           // root first
  std::vector<std::pair<std::int64_t, std::int64_t>> edges;  // walk edges
};

class DrwRun {
 public:
  DrwRun(const CsrGraph& g, const std::vector<std::uint8_t>& mask, const DrwOptions& opt,
         const SamplerKey& key)
      : g_(g), opt_(opt), assigned_(g.num_nodes()), rng_(detail::sampler_rng(detail::StreamTag::drw, key)) {
    for (std::int64_t v = 0; v < g.num_nodes(); ++v)
      if (mask[v]) order_.push_back(v);
    // Fisher-Yates shuffle of the root candidates.
    for (std::int64_t i = static_cast<std::int64_t>(order_.size()) - 1; i > 0; --i)
      std::swap(order_[i], order_[rng_.below_fast(static_cast<std::uint64_t>(i) + 1)]);
    out_.roots.reserve(order_.size());
    out_.nodes.reserve(order_.size());
    if (opt.edges == EdgeMode::induced) stamp_.assign(g.num_nodes(), -1);
  }

  SubgraphSet run(std::int64_t num_walkers) {
    std::vector<Walker> walkers(static_cast<std::size_t>(num_walkers));
    std::int64_t active = 0;
    for (auto& w : walkers) active += start_root(w) ? 1 : 0;
    const EdgeIdx* indptr = g_.indptr().data();
    const NodeId* indices = g_.indices().data();
    while (active > 0) {
      // Round, first half: draw a candidate for every walker and prefetch it.
      for (auto& w : walkers) {
        if (!w.active) continue;
        const EdgeIdx begin = indptr[w.v];
        const std::uint64_t d = static_cast<std::uint64_t>(indptr[w.v + 1] - begin);
        if (d == 0) {  // a node without neighbours: the walk ends here
          w.pending = -1;
          continue;
        }
        w.pending = begin + static_cast<EdgeIdx>(rng_.below_fast(d));
        __builtin_prefetch(indices + w.pending);
      }
      // Second half: accept or reject, one walker after the other.
      for (auto& w : walkers) {
        if (!w.active) continue;
        std::int64_t next = w.pending < 0 ? -1 : indices[w.pending];
        if (next >= 0 && assigned_.test(next)) {
          if (++w.draws < kMaxDraws) continue;
          next = pick_by_counting(w.v);
        }
        if (next >= 0) {
          assigned_.set(next);
          w.nodes.push_back(next);
          if (opt_.edges == EdgeMode::walk) w.edges.emplace_back(w.v, next);
          w.v = next;
          w.draws = 0;
          ++w.step;
          ++steps_;
          __builtin_prefetch(indptr + next);
          if (w.step < opt_.walk_length) continue;
        }
        // The walk is complete, or stopped at a dead end: restart from the root or finish
        // the subgraph.
        if (!next_walk(w)) --active;
      }
    }
    return std::move(out_);
  }

  std::int64_t steps() const { return steps_; }

 private:
  // Picks uniformly among v's unassigned neighbours by collecting them in one branch-free
  // pass over the row; -1 at a dead end.
  std::int64_t pick_by_counting(std::int64_t v) {
    const auto row = g_.out_neigh(v);
    scratch_.resize(static_cast<std::size_t>(row.size()));
    std::size_t free = 0;
    for (NodeId u : row) {
      scratch_[free] = u;
      free += assigned_.test(u) ? 0 : 1;
    }
    if (free == 0) return -1;
    return scratch_[rng_.below_fast(free)];
  }

  // Takes the next unassigned root candidate; false (walker inactive) when none is left.
  bool start_root(Walker& w) {
    while (next_root_ < order_.size() && assigned_.test(order_[next_root_])) ++next_root_;
    if (next_root_ == order_.size()) {
      w.active = false;
      return false;
    }
    const std::int64_t root = order_[next_root_++];
    assigned_.set(root);
    w.active = true;
    w.root = root;
    w.nodes.assign(1, root);
    w.edges.clear();
    w.restart = 0;
    begin_walk(w);
    // A root without neighbours is found in the next round (a dead end at once);
    // checking its degree here would wait for a cache miss.
    __builtin_prefetch(g_.indptr().data() + root);
    return true;
  }

  void begin_walk(Walker& w) {
    w.v = w.root;
    w.step = 0;
    w.draws = 0;
  }

  // After a walk: the next of R walks from the same root, or the subgraph is finished
  // and the walker takes a new root. Returns whether the walker is still active.
  bool next_walk(Walker& w) {
    if (++w.restart < opt_.restarts) {
      begin_walk(w);
      return true;
    }
    emit(w);
    return start_root(w);
  }

  void emit(Walker& w) {
    out_.roots.push_back(w.root);
    out_.nodes.insert(out_.nodes.end(), w.nodes.begin(), w.nodes.end());
    out_.node_ptr.push_back(static_cast<std::int64_t>(out_.nodes.size()));
    if (opt_.edges == EdgeMode::walk) {
      out_.edges.insert(out_.edges.end(), w.edges.begin(), w.edges.end());
    } else {
      append_induced_edges(g_, w.nodes.data(), static_cast<std::int64_t>(w.nodes.size()), stamp_,
                           out_.edges);
    }
    out_.edge_ptr.push_back(static_cast<std::int64_t>(out_.edges.size()));
  }

  const CsrGraph& g_;
  const DrwOptions& opt_;
  AssignedSet assigned_;
  Xoshiro256 rng_;
  std::vector<std::int64_t> order_;  // root candidates in random order
  std::size_t next_root_ = 0;
  std::vector<std::int64_t> stamp_;  // scratch for induced edges
  std::vector<NodeId> scratch_;      // unassigned neighbours of the current node
  std::int64_t steps_ = 0;
  SubgraphSet out_;
};

}  // namespace

SubgraphSet sample_drw(const graph::CsrGraph& g, const std::vector<std::uint8_t>& root_mask,
                       const DrwOptions& options, const SamplerKey& key) {
  if (options.walk_length < 1)
    throw UsageError("DRW sampler: walk length L must be >= 1, got " + std::to_string(options.walk_length));
  if (options.restarts < 1)
    throw UsageError("DRW sampler: restarts R must be >= 1, got " + std::to_string(options.restarts));
  if (options.walkers < 1)
    throw UsageError("DRW sampler: walkers per thread must be >= 1, got " + std::to_string(options.walkers));
  if (static_cast<std::int64_t>(root_mask.size()) != g.num_nodes())
    throw UsageError("DRW sampler: root mask has " + std::to_string(root_mask.size()) +
                     " entries for a graph of " + std::to_string(g.num_nodes()) + " nodes");
  DrwRun run(g, root_mask, options, key);
  return run.run(options.walkers);
}

}  // namespace dpgnn::sampling
