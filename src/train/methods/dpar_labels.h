// DPAR's label release (dpgnn's addition to Zhang et al.; docs/privacy.md "DPAR"): the label
// of every training node through k-ary randomized response (Warner 1965; Kairouz, Oh &
// Viswanath 2016), made once before training with its own share of the budget
// (dpar.label_fraction), and used at inference as evidence beside the model's prediction:
// a training node's class probabilities are the model's, times the likelihood of its released
// label (Bayes' rule), before the power iteration spreads them over the graph.
//
// Privacy. Under the replace-one node relation (DESIGN.md 2) two neighbouring datasets differ
// in one node; its label is one value of the release and every other value is drawn
// independently of it, so the whole release is ONE k-RR event at eps = 1 / z
// (privacy::Mechanism::randomized_response; the split into training and other nodes is public,
// as for every method). The keep probability is rounded DOWN to a multiple of 2^-53 and drawn
// exactly (53 uniform bits from the secure generator; the other k - 1 values by an exact
// uniform draw), so the realised mechanism is k-RR at some eps' <= eps: the accountant's
// figure holds without a floating-point caveat. The draws come from a key derived from the
// batch secret, one substream per node (its dataset id): a crash between the ledger record and
// the stored file recomputes the same bytes (privacy_plan.cpp), on any number of ranks.
#pragma once

#include <cstdint>
#include <string>

#include "method.h"

namespace dpgnn::dist {
class Communicator;
}
namespace dpgnn::partition {
struct Shard;
}

namespace dpgnn::train::methods {

// The release's name in the ledger and its stored file (releases/labels-rr.json).
inline constexpr const char* kLabelReleaseName = "labels-rr";

// Whether `c` makes the label release: a positive dpar.label_fraction whose share of the
// target epsilon reaches dpar.label_min_epsilon (a public decision: it reads the config only).
bool label_release_on(const Config& c);

// floor(p 2^53) for p = e^eps / (e^eps + k - 1), eps = 1 / z: the keep threshold on 53 bits.
std::uint64_t rr_keep_threshold(std::int64_t categories, double z);
// The exact probability that a released label is the true one: rr_keep_threshold / 2^53.
double rr_keep_probability(std::int64_t categories, double z);

// The released label of a node with true label `label` (0 <= label < categories), from the
// node's own substream of `key` (deterministic given key, node and z).
std::int64_t respond(const Secret& key, std::int64_t node, std::int64_t label, std::int64_t categories, double z);

// Collective: every training node of every rank through k-RR over the dataset's classes; the
// same (sorted) release on every rank. `key`: the batch secret.
ReleasedLabels release_labels(const partition::Shard& shard, dist::Communicator& comm, const Secret& key, double z);

// The stored form (JSON, one line) and back; parse_labels throws DataError naming `where`.
std::string serialise_labels(const ReleasedLabels& r);
ReleasedLabels parse_labels(const std::string& bytes, const std::string& where);

}  // namespace dpgnn::train::methods
