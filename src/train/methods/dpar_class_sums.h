// DPAR's class sums (dpgnn's addition to Zhang et al.; docs/privacy.md "DPAR's class sums"):
// instead of DP-SGD, the linear model f_theta(x) = W x is learnt by ONE Gaussian release of
//   S[c] = sum over training nodes i with label c of clip(x_i+),
// the per-class sums of the non-negative part x_i+ of each training node's (l2-normalised)
// features, clipped to l2 norm 1. The weights are its post-processing: with the direction
// u = m / ||m|| of the overall sum m = sum_c S[c],
//   W[c] = (S[c] - (S[c] . u) u) / U        (U training nodes, public),
// each class's sum without its component along the features' common direction. Every class's
// mean shares that direction (non-negative features share their mean), weighted by the class's
// size, and left in it gives the larger classes every node with a large component along it
// (Amazon Photo at epsilon 1, offline: 0.54 with the plain sums, 0.85 with it projected out;
// Cora 0.67 and 0.68; docs/results.md, "Issue 37: the class sums"). The division by U is a
// public scale: argmax and the centred propagation do not depend on it. With every node in one
// noisy sum, none of DP-SGD's noise accumulates over steps, and at small budgets on small graphs
// that wins.
//
// Privacy. Replace-one node-level (DESIGN.md 2): one node's (features, label) becomes another's.
// Its contribution to S is the matrix v = e_y clip(x+)^T, of Frobenius norm <= 1 with
// non-negative entries, so two contributions v, v' have <v, v'> >= 0 and
// ||v - v'||^2 = ||v||^2 + ||v'||^2 - 2 <v, v'> <= 2: the l2 sensitivity of S is sqrt(2) (the
// argument of DP-APPR's gm release, Zhang et al. Appendix B; non-negativity is why only x+ is
// summed: with signed features the bound would be 2). The release is the Gaussian mechanism
// with sigma = z sqrt(2): one `gaussian z` event; the weights are its post-processing. It is
// drawn as DP-SGD's noise is (noise/discrete_gaussian.h): every rank rounds its partial sum to
// the grid of make_noise_grid(z sqrt(2), sqrt(2), C F), rank 0 adds the exact discrete
// Gaussian of that grid, from a key derived from the batch secret, and one all-reduce sums
// integers exactly. So a crash between the ledger record and the stored file recomputes the same bytes
// (privacy_plan.cpp), and the release is a pure function of (data, partition, secret).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "method.h"

namespace dpgnn::dist {
class Communicator;
}
namespace dpgnn::partition {
struct Shard;
}

namespace dpgnn::train::methods {

// The release's name in the ledger and its stored file (releases/class-sums.json).
inline constexpr const char* kClassSumsReleaseName = "class-sums";

// The released class sums on the noise grid: S = gamma * values, row-major [classes, features].
struct ClassSums {
  std::int64_t classes = 0;
  std::int64_t features = 0;
  std::int64_t training_nodes = 0;  // U (public: the training mask)
  double gamma = 0.0;               // the grid width
  std::vector<std::int64_t> values; // [classes * features] grid integers, noise included
};

// Whether `c` learns f_theta by the class sums on this data (dpar.learner class_sums, or auto and
// the rule of DparSection::learner holds for `total_train` training nodes). Public: it reads the
// config, the dataset's class count and the training mask's size only.
bool class_sums_chosen(const Config& c, const graph::DatasetMeta& meta, std::int64_t total_train);

// This rank's partial sums over the training nodes it owns, before rounding (row-major
// [classes, features]): the clipped non-negative parts of the feature rows. For tests.
std::vector<double> local_class_sums(const partition::Shard& shard);

// Collective: the release at noise multiplier z (sigma = z sqrt(2)); the same on every rank.
// `key`: the batch secret (the noise key is derived from it). `total_train`: U.
ClassSums release_class_sums(const partition::Shard& shard, dist::Communicator& comm, const Secret& key, double z,
                             std::int64_t total_train);

// The linear model's weights [classes * features] (row-major, as layers.0.weight):
// W[c] = (S[c] - (S[c] . u) u) / U, above.
std::vector<float> class_sum_weights(const ClassSums& r);

// The stored form (JSON, one line) and back; parse_class_sums throws DataError naming `where`.
std::string serialise_class_sums(const ClassSums& r);
ClassSums parse_class_sums(const std::string& bytes, const std::string& where);

}  // namespace dpgnn::train::methods
