// DPAR's DP-APPR release, distributed (Zhang et al., "DPAR: Decoupled Graph Neural Networks
// with Node-Level Differential Privacy", Sec. 3.1, Algorithm 1 and Appendix B, Algorithm 3).
//
//   1. M = dpar.appr_nodes source nodes, uniform without replacement over the U training
//      nodes (a key derived from the batch secret: hidden, the same on every rank).
//   2. Each rank computes the APPR vector (ISTA, sampling/appr.h) of the sources it owns, on
//      the training graph (edges between training nodes). The push reaches rows outside the
//      shard: they are read from the partition file by hyperslab, in cached blocks, not
//      exchanged — no rank waits for another, and the vector is the same whatever the number
//      of ranks (DESIGN.md 6).
//   3. The vector is clipped and released as its noisy top-K over all U training nodes
//      (sampling/dp_topk.h), the noise keyed by (derived key, source id): drawn once per
//      vector, by its owner, identical on 1, 2 or 4 ranks.
//   4. The M released rows (M x K ids and weights: small) are all-gathered.
//
// Privacy (replace-one node-level: one node's features, label and edges replaced; the node
// set and training mask are public inputs, docs/privacy.md):
//   gm : every vector is clipped to l2 norm C1 and non-negative, so a replacement moves it
//        by at most sqrt(2) C1 in l2; Gaussian noise sigma = z sqrt(2) C1 per entry is one
//        Gaussian mechanism with noise multiplier z per vector (Mironov 2017, Cor. 3):
//        M events "gaussian z".
//   em0: entries clipped to [0, C2] (utility sensitivity C2), Gumbel scale beta = z C2, top-K
//        = K exponential-mechanism selections per vector (Durfee & Rogers 2019): M K events
//        "exponential z".
//   em1: em0 plus each reported entry's clipped value with Laplace noise b = K beta (the
//        paper's b = K C2 / eps2 with eps2 = eps1): M K more events "laplace K z".
// Every vector may change under a replacement, so the M vectors compose (the paper uses the
// optimal composition theorem of Kairouz et al.; RDP composition here, Mironov 2017 Prop. 1).
//
// Graph sampling (dpar.graph_sampling_rate q' < 1, Sec. 3.2): everything above runs on the
// subgraph of a hidden uniform sample of m' = round(q' U) training nodes (hidden_sample.h):
// the sources are the sample's first M nodes in hash order, the pushes see only edges between
// sampled nodes, the top-K universe is the m' sampled nodes, the rows are folded in hash
// order, and only sampled nodes are DP-SGD examples. Nothing depends on a node's id except
// through its hash, so exchanging one sampled node for another is a replace-one change of
// the sampled graph, which the release and the steps are private under: the amplification
// by sampling without replacement applies (privacy/subsample.h; docs/privacy.md).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "dpgnn/privacy/accountant.h"
#include "dpgnn/train/config.h"
#include "dpgnn/util/secure_rng.h"

namespace dpgnn::dist {
class Communicator;
}
namespace dpgnn::partition {
class PartitionFile;
struct Shard;
}  // namespace dpgnn::partition

namespace dpgnn::train {

// The privacy events of one DP-APPR release of `sources` vectors at scale z (see above).
std::vector<privacy::AccountantEvent> dp_appr_events(const DparSection& d, std::int64_t sources, double z);

// One released row: the source node and its top-K (node ids in the partition file's
// numbering, weights >= 0 summing to 1: post-processing of the released values).
struct ApprRow {
  std::int64_t source = 0;
  std::vector<std::int64_t> nodes;
  std::vector<double> weights;
};

// m' = round(q' U), at least 1: the size of the hidden sample of U training nodes.
std::int64_t graph_sample_size(const DparSection& d, std::int64_t training_nodes);

struct ApprRelease {
  std::vector<ApprRow> rows;          // all M rows, by source id (every rank), after fold_rows
  std::vector<std::int64_t> folded;   // nodes whose own example is folded into a row (sorted)
  std::int64_t occurrence_bound = 1;  // the most examples one node enters (1 after folding)
  std::int64_t universe = 0;          // U training nodes (m' with graph sampling)
  // With graph sampling: the sample's training-node indices (0..U-1 in id order) test
  // membership; empty without (every training node is in).
  std::function<bool(std::int64_t)> in_sample;
  double seconds = 0.0;               // wall time of this rank's share
  std::int64_t rows_read = 0;         // CSR rows this rank read from the partition file
};

// Collective. Throws UsageError when dpar.appr_nodes exceeds the training nodes (or the graph
// sample): public sizes only. Each row holds min(dpar.top_k, universe) entries.
ApprRelease release_dp_appr(const DparSection& d, const partition::PartitionFile& pf, const partition::Shard& shard,
                            dist::Communicator& comm, const Secret& key, double z);

// The stored form of a release (rows, folded nodes, occurrence bound, universe; JSON with
// doubles that read back bit for bit), as the run directory keeps it (run_directory.h), and
// back (DataError naming `where` when malformed). in_sample, seconds and rows_read are not
// stored: the membership is rebuilt from the batch secret (graph_sample_membership).
std::string serialise_release(const ApprRelease& release);
ApprRelease parse_release(const std::string& bytes, const std::string& where);

// Collective. Membership of the hidden graph sample (dpar.graph_sampling_rate < 1), by
// training-node index; empty without graph sampling. The same as release_dp_appr's.
std::function<bool(std::int64_t)> graph_sample_membership(const DparSection& d, const partition::PartitionFile& pf,
                                                          dist::Communicator& comm, const Secret& key);

// Makes every node enter exactly one example (post-processing of the released rows, so it
// costs no privacy): rows are taken in source order (`before`: by id when empty), then
// sorted back by source id; a row keeps its own source and each
// entry that is neither a source nor already kept by an earlier row; a kept entry's own
// example is folded into that row (its id goes to `folded`), the dropped entries' weights
// are re-normalised away, and a row left empty holds its source alone. Without it a node in
// another's row would enter two examples (its own and that row), doubling the sensitivity
// of a step (g = 2 in the group accountant: about twice the noise for the same epsilon).
void fold_rows(std::vector<ApprRow>& rows, std::vector<std::int64_t>& folded,
               const std::function<bool(std::int64_t, std::int64_t)>& before = {});

// The most examples one node's data enters, when every training node not in `folded` is
// an example of its own and each row is its source's example: max over nodes v of
// [v has its own example] + #(rows of other sources holding v).
std::int64_t occurrence_bound(const std::vector<ApprRow>& rows, const std::vector<std::int64_t>& folded = {});

// Shard row -> sum_k w_k x_{node_k} for the rows whose source this rank owns (features read
// from the partition file: the top-K nodes may live on any rank), each x row normalised by
// `input_norm` first (model.input_norm, as the shard's rows are).
std::unordered_map<std::int64_t, std::vector<float>> aggregated_features(const std::vector<ApprRow>& rows,
                                                                         const partition::PartitionFile& pf,
                                                                         const partition::Shard& shard,
                                                                         const std::string& input_norm);

}  // namespace dpgnn::train
