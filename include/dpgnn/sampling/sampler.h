// The samplers that turn one partition's training graph into a set of training subgraphs,
// and one entry point that runs the one a config or the command line names.
//
// Every sampler reads a graph::CsrGraph in local ids 0..n-1 (symmetric), a root mask
// (uint8 [n], 1 = labelled training node) and a SamplerKey. Every random choice is drawn
// from streams keyed by (seed, part, epoch) through util/rng.h, so the result for a part
// does not depend on how many ranks or threads run, and DRW-D re-samples by bumping the
// epoch. docs/sampling.md describes each sampler, the paper it follows and how
// ambiguities in the papers were read.
//
//   drw    Ayle et al. 2022, Appendix B.1 (Algorithm 2): one walk of length L per root.
//   drw-r  Ayle et al. 2022, Appendix B.2 (Algorithm 3): R walks of length L per root.
//          (DRW-D, Section 4.2, is drw re-run with a new epoch; the trainer re-samples.)
//   dpgnn  Daigavane et al., Algorithms 1-3: in-degree bounded edge lists, r-hop
//          neighbourhoods, every node in at most N(K, r) subgraphs (Lemma 1).
//   node   every training node alone (MLP / DP-MLP).
//   split  Igamberdiev & Habernal, Section 4.4: random disjoint splits of the training set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dpgnn/graph/csr_graph.h"
#include "dpgnn/sampling/subgraph_set.h"

namespace dpgnn::sampling {

enum class SamplerKind { drw, drw_r, dpgnn, node, split };

// "drw", "drw-r", "drw-d" (= drw; the trainer re-samples it), "dpgnn", "node", "split";
// anything else throws UsageError naming the accepted values.
SamplerKind parse_sampler_kind(const std::string& name);
const char* to_string(SamplerKind kind);

// Which edges a subgraph carries.
//   walk:    the edges the sampler traversed (walk steps for the DRW family, the sampled
//            edge lists E_v for dpgnn), each undirected edge once.
//   induced: every graph edge between two nodes of the subgraph, each undirected edge once.
// `split` always uses induced edges (the paper masks the adjacency matrix); `node` has none.
enum class EdgeMode { walk, induced };
EdgeMode parse_edge_mode(const std::string& name);
const char* to_string(EdgeMode mode);

// Where a sampler's randomness comes from: every choice is a pure function of these.
struct SamplerKey {
  std::uint64_t seed = 0;
  std::uint64_t part = 0;   // the partition the graph is (0 without a partition)
  std::uint64_t epoch = 0;  // DRW-D: the re-sampling round
};

struct DrwOptions {
  std::int64_t walk_length = 4;  // L >= 1: steps per walk, so a walk has at most L+1 nodes
  std::int64_t restarts = 1;     // R >= 1: walks per root (1 = DRW, > 1 = DRW-R)
  EdgeMode edges = EdgeMode::walk;
  // W >= 1 walkers advanced in lock-step to overlap memory latency (ThunderRW). 1 is the
  // paper's order (one walk after another); the result depends on W, so it is part of
  // the sampler's parameters (recorded in sample files).
  std::int64_t walkers = 64;
};

// How the dpgnn sampler bounds in-degrees (docs/privacy.md, "DP-GNN degree bounding").
//   require: no edge sampling; every node's training in-degree must already be <= K (the
//            hypothesis of Lemma 2), else DataError. Removing a node v changes only the
//            subgraphs that contain v, so the guarantee covers the whole pipeline.
//   paper:   SAMPLE-EDGELISTS (Algorithm 1): each in-edge of u kept with probability
//            K / (2 |RE_u|), which depends on u's other in-neighbours; removing v changes
//            subgraphs that do not contain v, which Lemma 2 does not cover.
enum class DegreeBound { require, paper };
DegreeBound parse_degree_bound(const std::string& name);
const char* to_string(DegreeBound b);

struct DpgnnOptions {
  std::int64_t max_degree = 2;  // K >= 1: the in-degree bound of Algorithm 1
  DegreeBound degree_bound = DegreeBound::paper;
  std::int64_t layers = 2;      // r >= 0: neighbourhood depth (GNN layers), Algorithm 2
  EdgeMode edges = EdgeMode::walk;
};

struct SplitOptions {
  std::int64_t splits = 10;  // s >= 1 groups of the training set (the paper's first setup: 10)
};

// Disjoint random walks (DRW, DRW-R). Every root-mask node ends up in exactly one subgraph
// (as a root or absorbed by another root's walk), every node in at most one, each subgraph
// has at most 1 + R * L nodes. Throws UsageError for L < 1, R < 1, or a mask whose size is
// not the node count.
SubgraphSet sample_drw(const graph::CsrGraph& g, const std::vector<std::uint8_t>& root_mask,
                       const DrwOptions& options, const SamplerKey& key);

// DP-GNN SAMPLE-SUBGRAPHS (Daigavane et al., Algorithm 3): one subgraph per root-mask node
// (root = that node), in increasing node order.
SubgraphSet sample_dpgnn(const graph::CsrGraph& g, const std::vector<std::uint8_t>& root_mask,
                         const DpgnnOptions& options, const SamplerKey& key);

// Every root-mask node as its own one-node subgraph, in increasing node order.
SubgraphSet sample_nodes(const std::vector<std::uint8_t>& root_mask);

// Random disjoint graph splits: the root-mask nodes in a random order, cut into
// min(s, #roots) groups whose sizes differ by at most one; each group is one subgraph with
// its induced edges, its first node is the root and every node of it is a loss node
// (SubgraphSet::loss_on_all_nodes is set).
SubgraphSet sample_splits(const graph::CsrGraph& g, const std::vector<std::uint8_t>& root_mask,
                          const SplitOptions& options, const SamplerKey& key);

// Splits per part when the training set is spread over parts: the total s shared in
// proportion to the parts' training nodes (largest remainder), at least one for every part
// that has training nodes. `dpgnn sample --partition` and the trainer use it, so a split set
// depends on the partition, never on the number of ranks.
std::vector<std::int64_t> splits_per_part(std::int64_t total, const std::vector<std::int64_t>& train_counts);

// One record for every sampler, as a config section or the command line gives it.
struct SamplerOptions {
  SamplerKind kind = SamplerKind::drw;
  std::int64_t walk_length = 4;
  std::int64_t restarts = 2;      // used by drw-r only (drw has R = 1)
  std::int64_t max_degree = 2;
  DegreeBound degree_bound = DegreeBound::paper;  // dpgnn only
  std::int64_t layers = 2;
  std::int64_t splits = 10;
  EdgeMode edges = EdgeMode::walk;
  std::int64_t walkers = 64;      // drw, drw-r: DrwOptions::walkers
};

// Runs the sampler `options.kind` names.
SubgraphSet run_sampler(const graph::CsrGraph& g, const std::vector<std::uint8_t>& root_mask,
                        const SamplerOptions& options, const SamplerKey& key);

// The largest subgraph the sampler can produce on any graph: L + 1 (drw), 1 + R * L
// (drw-r), 1 (node), -1 when there is no size bound independent of the graph (dpgnn,
// split).
std::int64_t max_subgraph_size_bound(const SamplerOptions& options);

// Whether each node is in at most one subgraph (drw, drw-r, node, split), as opposed to
// the bounded overlap of dpgnn.
bool is_disjoint(SamplerKind kind);

// N(K, r) = sum_{i=0}^{r} K^i: Daigavane et al., Lemma 1 (the most subgraphs any node is
// in). Throws UsageError when it does not fit in int64.
std::int64_t dpgnn_occurrence_bound(std::int64_t max_degree, std::int64_t layers);

// The edges of `g` between nodes of subgraph `nodes`, each undirected edge once as
// (smaller, larger) in the order of `nodes` then of the rows. `stamp` is scratch of size
// n, initialised to -1 by the caller and left as it was on return.
void append_induced_edges(const graph::CsrGraph& g, const std::int64_t* nodes, std::int64_t count,
                          std::vector<std::int64_t>& stamp,
                          std::vector<std::pair<std::int64_t, std::int64_t>>& out);

}  // namespace dpgnn::sampling
